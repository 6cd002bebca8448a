// SPDX-License-Identifier: MIT
#include "cliapp.h"

#include "config/configloader.h"
#include "config/presets.h"
#include "program/programdump.h"
#include "report/report.h"
#include "synthesis/synthesis.h"
#include "version.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

namespace stagecraft::cli {

namespace {

    /// Flags shared by every command that takes a CONFIG: each is a config override (DESIGN.md §3).
    struct ConfigFlags
    {
        std::string config;
        std::vector<std::string> sets;
        std::optional<int64_t> dp, tp, pp, cp, ep, layers, microBatch, globalBatch, zero, virtualStages;
        std::optional<std::string> schedule, recompute, precision, name;
        std::optional<bool> sequenceParallel;

        void add(CLI::App* cmd)
        {
            cmd->add_option("CONFIG", config, "YAML config file or preset name (see `stagecraft presets`)")->required();
            cmd->add_option(
                   "--set", sets, "Override a config field by its dotted YAML path, e.g. training.recompute=full")
                ->type_name("KEY=VALUE");
            cmd->add_option("--dp", dp, "Data-parallel degree (parallelism.dp)");
            cmd->add_option("--tp", tp, "Tensor-parallel degree (parallelism.tp)");
            cmd->add_option("--pp", pp, "Pipeline-parallel degree (parallelism.pp)");
            cmd->add_option("--cp", cp, "Context-parallel degree (parallelism.cp)");
            cmd->add_option("--ep", ep, "Expert-parallel degree, divides dp (parallelism.ep)");
            cmd->add_option("--zero", zero, "ZeRO stage 0-3 (parallelism.zero)");
            cmd->add_option("--schedule", schedule, "gpipe | 1f1b | interleaved (parallelism.schedule)");
            cmd->add_option("--virtual-stages", virtualStages, "Virtual stages per rank (parallelism.virtual_stages)");
            cmd->add_option("--sequence-parallel", sequenceParallel, "true | false (parallelism.sequence_parallel)");
            cmd->add_option("--layers", layers, "Decoder layers (model.layers)");
            cmd->add_option("--micro-batch", microBatch, "Sequences per micro-batch (training.micro_batch)");
            cmd->add_option("--global-batch", globalBatch, "Sequences per iteration (training.global_batch)");
            cmd->add_option("--recompute", recompute, "none | selective | full (training.recompute)");
            cmd->add_option("--precision", precision, "fp32 | fp16 | bf16 (training.precision)");
            cmd->add_option("--name", name, "Workload name, used for output files (name)");
        }

        std::vector<std::string> overrides() const
        {
            std::vector<std::string> out;
            auto num = [&](const char* key, const std::optional<int64_t>& v) {
                if (v)
                    out.push_back(std::string(key) + "=" + std::to_string(*v));
            };
            auto str = [&](const char* key, const std::optional<std::string>& v) {
                if (v)
                    out.push_back(std::string(key) + "=" + *v);
            };
            num("parallelism.dp", dp);
            num("parallelism.tp", tp);
            num("parallelism.pp", pp);
            num("parallelism.cp", cp);
            num("parallelism.ep", ep);
            num("parallelism.zero", zero);
            str("parallelism.schedule", schedule);
            num("parallelism.virtual_stages", virtualStages);
            if (sequenceParallel)
                out.push_back(std::string("parallelism.sequence_parallel=") + (*sequenceParallel ? "true" : "false"));
            num("model.layers", layers);
            num("training.micro_batch", microBatch);
            num("training.global_batch", globalBatch);
            str("training.recompute", recompute);
            str("training.precision", precision);
            str("name", name);
            out.insert(out.end(), sets.begin(), sets.end());
            return out;
        }
    };

    void printDiagnostics(const std::vector<Diagnostic>& diagnostics)
    {
        for (const Diagnostic& d : diagnostics)
            std::cerr << d.toString() << "\n";
    }

    /// Loads the config and synthesizes; prints diagnostics. Returns nullopt and sets `exitCode` on failure.
    std::shared_ptr<const SynthesisResult> loadAndSynthesize(const ConfigFlags& flags, int& exitCode)
    {
        ConfigResult loaded = loadConfigOrPreset(flags.config, flags.overrides());
        if (!loaded.config) {
            printDiagnostics(loaded.diagnostics);
            exitCode = ExitBadInput;
            return nullptr;
        }
        SynthesisOutcome outcome = synthesize(*loaded.config);
        if (!outcome.result) {
            // Errors without a position (found during synthesis) are reported against the config file.
            for (Diagnostic& d : outcome.diagnostics)
                if (d.file.empty())
                    d.file = flags.config;
            printDiagnostics(outcome.diagnostics);
            bool internal = false;
            for (const Diagnostic& d : outcome.diagnostics)
                internal = internal || d.message.rfind("internal error", 0) == 0;
            exitCode = internal ? ExitInternal : ExitBadInput;
            return nullptr;
        }
        printDiagnostics(loaded.diagnostics); // warnings only
        return outcome.result;
    }

} // namespace

int run(int argc, char** argv)
{
    CLI::App app { "Stagecraft: synthesize per-GPU execution traces of distributed LLM training", "stagecraft" };
    app.set_version_flag("--version", versionString());
    app.require_subcommand(1);
    app.fallthrough(false);

    // report
    ConfigFlags reportFlags;
    bool reportAsJson = false;
    std::optional<int64_t> reportRank;
    bool reportDump = false;
    CLI::App* report = app.add_subcommand("report", "Summarize a workload: parameters, FLOPs, per-class programs");
    reportFlags.add(report);
    report->add_flag("--json", reportAsJson, "Print the report JSON (DESIGN.md §4) instead of text");
    report->add_option("--rank", reportRank, "Print one rank's program summary (groups, peers, bytes)");
    report->add_flag("--dump", reportDump, "With --rank: print every node of the rank's class program");

    // presets
    CLI::App* presets = app.add_subcommand("presets", "List the built-in presets");
    bool presetsAsJson = false;
    presets->add_flag("--json", presetsAsJson, "Print the list as JSON");

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? ExitOk : ExitBadInput;
    }

    try {
        if (presets->parsed()) {
            if (presetsAsJson) {
                nlohmann::ordered_json j = nlohmann::ordered_json::array();
                for (const std::string& name : presetNames())
                    j.push_back({ { "name", name }, { "summary", presetSummary(name) } });
                std::cout << j.dump(2) << "\n";
            } else {
                for (const std::string& name : presetNames())
                    std::printf("%-14s %s\n", name.c_str(), presetSummary(name).c_str());
            }
            return ExitOk;
        }
        if (report->parsed()) {
            int exitCode = ExitOk;
            auto result = loadAndSynthesize(reportFlags, exitCode);
            if (!result)
                return exitCode;
            if (reportRank) {
                if (*reportRank < 0 || *reportRank >= result->worldSize()) {
                    std::cerr << "stagecraft: --rank " << *reportRank << " is outside 0.." << result->worldSize() - 1
                              << "\n";
                    return ExitBadInput;
                }
                std::cout << rankReportText(*result, RankId { *reportRank });
                if (reportDump)
                    std::cout << dumpProgram(
                        result->classes[static_cast<size_t>(result->classOf(RankId { *reportRank }))]);
            } else if (reportAsJson) {
                std::cout << reportJson(*result).dump(2) << "\n";
            } else {
                std::cout << reportText(*result);
            }
            return ExitOk;
        }
    } catch (const std::exception& e) {
        std::cerr << "stagecraft: internal error: " << e.what() << "\n";
        return ExitInternal;
    }
    return ExitOk;
}

} // namespace stagecraft::cli
