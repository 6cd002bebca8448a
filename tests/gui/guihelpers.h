// SPDX-License-Identifier: MIT
// Shared by the GUI tests that need real results: a preset with QStringList overrides, synthesized, failing loudly.
#pragma once

#include "../core/synthhelpers.h"

#include <QStringList>

namespace stagecraft::test {

/// The synthesis of `preset` with `overrides` ("parallelism.tp=4"); errors print their diagnostics and abort.
inline std::shared_ptr<const SynthesisResult> synth(const char* preset, const QStringList& overrides)
{
    std::vector<std::string> sets;
    sets.reserve(static_cast<size_t>(overrides.size()));
    for (const QString& s : overrides)
        sets.push_back(s.toStdString());
    return synth(std::string(preset), sets);
}

/// A copy of `result` whose config names `gpu`, e.g. one that is no GPU preset (which the config loader refuses),
/// for the views' handling of an estimate that cannot run.
inline std::shared_ptr<const SynthesisResult> withGpu(std::shared_ptr<const SynthesisResult> result, const char* gpu)
{
    auto copy = std::make_shared<SynthesisResult>(*result);
    copy->config.cluster.gpu = gpu;
    return copy;
}

} // namespace stagecraft::test
