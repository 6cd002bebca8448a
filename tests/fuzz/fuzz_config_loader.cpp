// SPDX-License-Identifier: MIT
// libFuzzer target: YAML text and a few --set overrides -> config loader -> validation -> synthesis of the
// configs small enough to synthesize in milliseconds. The input's first lines of the form "--set KEY=VALUE" (at
// most kMaxOverrides) are the overrides; the rest is the YAML text.
// Any crash, sanitizer report, leak, timeout or abort() below is a bug: every input must become either a config
// or errors that explain themselves, and synthesis must never fail with an internal error.
#include "config/configloader.h"
#include "config/configwriter.h"
#include "synthesis/synthesis.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr size_t kMaxOverrides = 4;
// Bounds on what is synthesized (program size grows with ranks, layers, micro-batches and chunks).
constexpr int64_t kMaxWorld = 16;
constexpr int64_t kMaxLayers = 8;
constexpr int64_t kMaxMicroBatches = 8;
constexpr int64_t kMaxVirtualStages = 4;
constexpr int64_t kMaxExperts = 16;

void check(bool condition)
{
    if (!condition)
        std::abort();
}

void checkDiagnostics(const std::vector<stagecraft::Diagnostic>& diagnostics)
{
    for (const stagecraft::Diagnostic& d : diagnostics) {
        check(!d.message.empty());
        check(d.line >= 0 && d.column >= 0);
        check(!d.toString().empty());
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace stagecraft;
    std::string_view input(reinterpret_cast<const char*>(data), size);
    std::vector<std::string> overrides;
    constexpr std::string_view kSet = "--set ";
    while (overrides.size() < kMaxOverrides && input.substr(0, kSet.size()) == kSet) {
        const size_t end = input.find('\n');
        overrides.emplace_back(input.substr(kSet.size(), end == std::string_view::npos ? end : end - kSet.size()));
        input = end == std::string_view::npos ? std::string_view() : input.substr(end + 1);
    }

    const ConfigResult result = loadConfigText(input, "fuzz.yaml", overrides);
    checkDiagnostics(result.diagnostics);
    check(result.config.has_value() != hasErrors(result.diagnostics));
    if (!result.config)
        return 0;
    const Config& config = *result.config;

    // What was read writes out as YAML that reads back to the same config (configwriter.h's contract).
    const ConfigResult reread = loadConfigText(toYaml(config), "fuzz-reread.yaml");
    check(reread.config && *reread.config == config);

    const ParallelismConfig& p = config.parallelism;
    const int64_t microBatches = config.training.globalBatch / (config.training.microBatch * p.dp);
    if (p.worldSize() > kMaxWorld || config.model.layers > kMaxLayers || microBatches > kMaxMicroBatches
        || p.virtualStages > kMaxVirtualStages || config.model.experts > kMaxExperts)
        return 0;
    const SynthesisOutcome outcome = synthesize(config);
    checkDiagnostics(outcome.diagnostics);
    check(outcome.result || hasErrors(outcome.diagnostics));
    for (const Diagnostic& d : outcome.diagnostics) {
        check(d.message.rfind("internal error", 0) != 0);
        check(!d.file.empty()); // every problem is anchored at the config's keys
    }
    return 0;
}
