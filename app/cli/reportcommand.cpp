// SPDX-License-Identifier: MIT
// stagecraft report CONFIG [--json] [--rank R [--dump]] [--chrome-trace FILE]
#include "command.h"
#include "config/configvalidator.h"
#include "config/presets.h"
#include "estimate/chrometrace.h"
#include "estimate/servingestimate.h"
#include "program/programdump.h"
#include "report/report.h"

#include <algorithm>
#include <iostream>
#include <sys/stat.h>
#include <unistd.h>

namespace stagecraft::cli {

namespace {

    /// Writes the estimate's schedule (all classes, or the class of `rank`) as Chrome trace JSON. An exit code.
    int writeTrace(const SynthesisResult& result, const std::string& path, std::optional<int64_t> rank)
    {
        std::string error;
        const std::optional<GpuSpec> gpu = gpuForConfig(result.config, error);
        StepEstimate estimate;
        EstimateSchedule schedule;
        if (gpu && isInference(result.config)) {
            // The serving programs' schedule; the trace's header names the GPU and the programs' span.
            ServingEstimate serving;
            if (!estimateServing(result, *gpu, EstimateOptions {}, serving, error, &schedule)) {
                std::cerr << "stagecraft: --chrome-trace: no serving estimate: " << error << "\n";
                return ExitBadInput;
            }
            estimate.gpu = serving.gpu;
            estimate.iterationTimeS = estimate.pipelineTimeS = serving.programsTimeS;
        } else if (!gpu || !estimateStep(result, *gpu, EstimateOptions {}, estimate, error, &schedule)) {
            std::cerr << "stagecraft: --chrome-trace: no step-time estimate: " << error << "\n";
            return ExitBadInput;
        }
        std::optional<int> stage;
        if (rank)
            stage = result.classOf(RankId { *rank });
        try {
            writeChromeTrace(path, chromeTraceJson(result, estimate, schedule, stage));
        } catch (const std::exception& e) {
            std::cerr << "stagecraft: --chrome-trace: " << e.what() << "\n";
            return ExitBadInput;
        }
        return ExitOk;
    }

    bool isStandardOutput(const std::string& path)
    {
        if (path == "-")
            return true;
        struct stat a
        {
        }, b {};
        return ::stat(path.c_str(), &a) == 0 && ::fstat(STDOUT_FILENO, &b) == 0 && a.st_dev == b.st_dev
            && a.st_ino == b.st_ino;
    }

} // namespace

Command addReportCommand(CLI::App& app)
{
    struct State
    {
        ConfigFlags flags;
        bool json = false;
        std::optional<int64_t> rank;
        bool dump = false;
        std::optional<std::string> chromeTrace;
    };
    auto state = std::make_shared<State>();
    CLI::App* cmd = app.add_subcommand("report", "Summarize a workload: parameters, FLOPs, per-class programs, memory");
    state->flags.add(cmd);
    cmd->add_flag("--json", state->json, "Print the report as JSON instead of text");
    cmd->add_option("--rank", state->rank, "Print one rank's program summary (groups, peers, bytes)")
        ->transform(integerIn(0, kMaxWorldSize - 1));
    cmd->add_flag("--dump", state->dump,
        "With --rank: print every node of the rank's class program (with --json: as its \"program\" array)");
    cmd->add_option("--chrome-trace", state->chromeTrace,
           "Write the estimate's schedule of every stage (only the stage of --rank when given) as Chrome trace "
           "JSON, for Perfetto or chrome://tracing; - for standard output (then no report is printed)")
        ->type_name("FILE");
    return { cmd, [state]() -> int {
                int exitCode = ExitOk;
                // Folded micro-batches unless every node is printed (--dump): the figures are the same.
                auto result = loadAndSynthesize(state->flags, exitCode, !state->dump);
                if (!result)
                    return exitCode;
                if (state->rank) {
                    const int64_t r = *state->rank;
                    if (r < 0 || r >= result->worldSize()) {
                        std::cerr << "stagecraft: --rank " << r << " is outside 0.." << result->worldSize() - 1 << "\n";
                        return ExitBadInput;
                    }
                }
                if (state->chromeTrace) {
                    // Written before the report so that a failure leaves no half-done output behind.
                    if (const int code = writeTrace(*result, *state->chromeTrace, state->rank); code != ExitOk)
                        return code;
                    // The trace went to standard output ("-", /dev/stdout): the report would corrupt its JSON.
                    if (isStandardOutput(*state->chromeTrace))
                        return ExitOk;
                }
                if (state->rank && state->json) {
                    std::cout << rankReportJson(*result, RankId { *state->rank }, state->dump).dump(2) << "\n";
                } else if (state->rank) {
                    const int64_t r = *state->rank;
                    std::cout << rankReportText(*result, RankId { r });
                    if (state->dump)
                        std::cout << dumpProgram(result->classes[static_cast<size_t>(result->classOf(RankId { r }))]);
                } else if (state->json) {
                    std::cout << reportJson(*result).dump(2) << "\n";
                } else {
                    std::cout << reportText(*result);
                }
                return ExitOk;
            } };
}

Command addPresetsCommand(CLI::App& app)
{
    auto json = std::make_shared<bool>(false);
    CLI::App* cmd = app.add_subcommand("presets", "List the built-in presets");
    cmd->add_flag("--json", *json, "Print the list as JSON");
    return { cmd, [json]() -> int {
                if (*json) {
                    nlohmann::ordered_json j = nlohmann::ordered_json::array();
                    for (const std::string& name : presetNames())
                        j.push_back({ { "name", name }, { "summary", presetSummary(name) } });
                    std::cout << j.dump(2) << "\n";
                } else {
                    size_t width = 0;
                    for (const std::string& name : presetNames())
                        width = std::max(width, name.size());
                    for (const std::string& name : presetNames())
                        std::cout << name << std::string(width - name.size() + 1, ' ') << presetSummary(name) << "\n";
                }
                return ExitOk;
            } };
}

} // namespace stagecraft::cli
