// SPDX-License-Identifier: MIT
#include "command.h"

#include <iostream>

namespace stagecraft::cli {

void ConfigFlags::add(CLI::App* cmd, bool configRequired)
{
    auto* opt = cmd->add_option("CONFIG", config, "YAML config file or preset name (see `stagecraft presets`)");
    if (configRequired)
        opt->required();
    addOverrides(cmd);
}

void ConfigFlags::addOverrides(CLI::App* cmd, bool withName)
{
    cmd->add_option("--set", sets, "Override a config field by its dotted YAML path, e.g. training.recompute=full")
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
    if (withName)
        cmd->add_option("--name", name, "Workload name, used for output files (name)");
    cmd->add_option("--max-nodes", maxNodes,
           "Largest plan accepted, in estimated program nodes (default 20000000: about 11 GB to synthesize)")
        ->check(CLI::Range(int64_t(1), int64_t(1) << 40));
}

std::vector<std::string> ConfigFlags::overrides() const
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

void printDiagnostics(const std::vector<Diagnostic>& diagnostics)
{
    for (const Diagnostic& d : diagnostics)
        std::cerr << d.toString() << "\n";
}

void ConfigFlags::applyOptions() const
{
    if (maxNodes)
        setDefaultMaxProgramNodes(*maxNodes);
}

std::optional<Config> loadConfig(const ConfigFlags& flags, int& exitCode)
{
    flags.applyOptions();
    ConfigResult loaded = loadConfigOrPreset(flags.config, flags.overrides());
    printDiagnostics(loaded.diagnostics);
    if (!loaded.config)
        exitCode = ExitBadInput;
    return loaded.config;
}

std::shared_ptr<const SynthesisResult> loadAndSynthesize(const ConfigFlags& flags, int& exitCode)
{
    std::optional<Config> config = loadConfig(flags, exitCode);
    if (!config)
        return nullptr;
    SynthesisOutcome outcome = synthesize(*config);
    if (!outcome.result) {
        // Errors without a position (found during synthesis) are reported against the config.
        bool internal = false;
        for (Diagnostic& d : outcome.diagnostics) {
            if (d.file.empty())
                d.file = flags.config;
            internal = internal || d.message.rfind("internal error", 0) == 0;
        }
        printDiagnostics(outcome.diagnostics);
        exitCode = internal ? ExitInternal : ExitBadInput;
        return nullptr;
    }
    return outcome.result;
}

} // namespace stagecraft::cli
