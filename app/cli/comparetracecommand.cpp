// SPDX-License-Identifier: MIT
// stagecraft compare-trace TRACE CONFIG [--rank R] [--iteration N] [--json]
#include "command.h"
#include "config/configvalidator.h"
#include "estimate/tracecompare.h"
#include "kineto/kinetoreader.h"

#include <iostream>

namespace stagecraft::cli {

Command addCompareTraceCommand(CLI::App& app)
{
    struct State
    {
        std::string trace;
        ConfigFlags flags;
        std::optional<int64_t> rank;
        std::optional<int64_t> iteration;
        bool json = false;
    };
    auto st = std::make_shared<State>();
    CLI::App* cmd = app.add_subcommand("compare-trace",
        "Compare a measured step (one rank's PyTorch profiler trace) with the synthesized one: GPU time per op kind, "
        "the largest differences first, and the exposed communication of both");
    cmd->add_option("TRACE", st->trace, "Chrome-trace JSON of torch.profiler (.json or .json.gz), one rank")
        ->required();
    st->flags.add(cmd);
    cmd->add_option("--rank", st->rank,
           "The rank the trace is of, to pick our pipeline stage (default: its distributedInfo rank, else 0)")
        ->transform(integerIn(0, kMaxWorldSize - 1));
    cmd->add_option("--iteration", st->iteration,
           "Which profiled step (0-based, in the order of its ProfilerStep annotations; default: the last)")
        ->transform(integerIn(0, int64_t { 1 } << 30));
    cmd->add_flag("--json", st->json, "Print the comparison as JSON");
    return { cmd, [st]() -> int {
                KinetoReadResult read = readKinetoFile(st->trace);
                if (!read.ok()) {
                    std::cerr << "stagecraft: " << read.error << "\n";
                    return ExitBadInput;
                }
                int exitCode = ExitOk;
                auto result = loadAndSynthesize(st->flags, exitCode);
                if (!result)
                    return exitCode;
                std::string error;
                const std::optional<GpuSpec> gpu = gpuForConfig(result->config, error);
                StepEstimate estimate;
                EstimateSchedule schedule;
                if (!gpu || !estimateStep(*result, *gpu, EstimateOptions {}, estimate, error, &schedule)) {
                    std::cerr << "stagecraft: no step-time estimate: " << error << "\n";
                    return ExitBadInput;
                }
                TraceComparison comparison;
                if (!compareTrace(*read.trace, *result, estimate, schedule, st->rank.value_or(-1),
                        st->iteration.value_or(-1), comparison, error)) {
                    std::cerr << "stagecraft: " << error << "\n";
                    return ExitBadInput;
                }
                if (st->json)
                    std::cout << comparisonJson(comparison).dump(2) << "\n";
                else
                    std::cout << comparisonText(comparison) << "\n" << kernelSourcesText(estimate.kernelSources);
                return ExitOk;
            } };
}

} // namespace stagecraft::cli
