// SPDX-License-Identifier: MIT
// Shared by the Sweep tab's tests (tst_sweepview, tst_servingsweep): configs without a synthesis and the core's own
// sweep of them, to compare the view against.
#pragma once

#include "config/configloader.h"
#include "estimate/stepestimate.h"
#include "estimate/sweep.h"
#include "synthesis/synthesis.h"

#include <QStringList>
#include <QtTest>
#include <memory>

namespace stagecraft::test {

/// `preset` with `overrides` ("parallelism.tp=4"); a config error prints its diagnostics and aborts.
inline Config loadPreset(const char* preset, const QStringList& overrides = {})
{
    std::vector<std::string> sets;
    for (const QString& s : overrides)
        sets.push_back(s.toStdString());
    ConfigResult loaded = loadConfigOrPreset(preset, sets);
    if (!loaded.config) {
        for (const Diagnostic& d : loaded.diagnostics)
            qWarning("%s", d.toString().c_str());
        qFatal("config %s does not load", preset);
    }
    return *loaded.config;
}

/// A result that carries only its config: the Sweep tab reads nothing else, and synthesizing a large model in full
/// just to hand its config over would only slow the test down.
inline std::shared_ptr<const SynthesisResult> configOnly(const Config& config)
{
    auto result = std::make_shared<SynthesisResult>();
    result->config = config;
    return result;
}

inline std::shared_ptr<const SynthesisResult> configOnly(const char* preset, const QStringList& overrides)
{
    return configOnly(loadPreset(preset, overrides));
}

/// The core's own sweep of `base` on `gpus` GPUs (2 threads; serving plans over `tpotLimitS` rejected, 0: no limit).
inline std::shared_ptr<const SweepResult> coreSweep(const Config& base, int64_t gpus, double tpotLimitS = 0)
{
    std::string error;
    const std::optional<GpuSpec> gpu = gpuForConfig(base, error);
    if (!gpu)
        qFatal("%s", error.c_str());
    SweepOptions options;
    options.threads = 2;
    options.tpotLimitS = tpotLimitS;
    return std::make_shared<const SweepResult>(sweep(base, gpus, *gpu, EstimateOptions {}, nullptr, options));
}

} // namespace stagecraft::test
