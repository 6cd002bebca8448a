// SPDX-License-Identifier: MIT
#include "command.h"

#include "config/configvalidator.h"
#include "config/configwriter.h"

#include <charconv>
#include <iostream>

namespace stagecraft::cli {

CLI::Validator integerIn(int64_t minimum, int64_t maximum, std::string help)
{
    const std::string range = std::to_string(minimum) + " \u2026 " + std::to_string(maximum);
    return CLI::Validator(
        [=](std::string& text) -> std::string {
            std::string_view digits = text;
            const bool negative = !digits.empty() && digits.front() == '-';
            if (!digits.empty() && (digits.front() == '+' || negative))
                digits.remove_prefix(1);
            const bool decimal = !digits.empty() && digits.find_first_not_of("0123456789") == std::string_view::npos;
            if (!decimal)
                return "expected an integer " + range + ", found \"" + text + "\"";
            uint64_t magnitude = 0;
            const auto parsed = std::from_chars(digits.data(), digits.data() + digits.size(), magnitude);
            const bool fits = parsed.ec == std::errc() && magnitude <= uint64_t(std::numeric_limits<int64_t>::max());
            const int64_t value = fits ? (negative ? -int64_t(magnitude) : int64_t(magnitude)) : 0;
            if (!fits || value < minimum || value > maximum)
                return text + " is out of range: expected " + range;
            text = std::to_string(value); // canonical: "010" is ten, not CLI11's octal eight
            return {};
        },
        std::move(help), "INTEGER");
}

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
    const CLI::Validator positive = integerIn(1, kMaxConfigInteger);
    cmd->add_option("--dp", dp, "Data-parallel degree (parallelism.dp)")->transform(positive);
    cmd->add_option("--tp", tp, "Tensor-parallel degree (parallelism.tp)")->transform(positive);
    cmd->add_option("--pp", pp, "Pipeline-parallel degree (parallelism.pp)")->transform(positive);
    cmd->add_option("--cp", cp, "Context-parallel degree (parallelism.cp)")->transform(positive);
    cmd->add_option("--ep", ep, "Expert-parallel degree, divides dp (parallelism.ep)")->transform(positive);
    cmd->add_option("--zero", zero, "ZeRO stage 0-3 (parallelism.zero)")->transform(integerIn(0, 3));
    cmd->add_option(
        "--schedule", schedule, "gpipe | 1f1b | interleaved | zb1p | dualpipe | dualpipev (parallelism.schedule)");
    cmd->add_option("--virtual-stages", virtualStages, "Virtual stages per rank (parallelism.virtual_stages)")
        ->transform(positive);
    cmd->add_option("--sequence-parallel", sequenceParallel, "true | false (parallelism.sequence_parallel)");
    cmd->add_option("--layers", layers, "Decoder layers (model.layers)")->transform(positive);
    cmd->add_option("--micro-batch", microBatch, "Sequences per micro-batch (training.micro_batch)")
        ->transform(positive);
    cmd->add_option("--global-batch", globalBatch, "Sequences per iteration (training.global_batch)")
        ->transform(positive);
    cmd->add_option("--recompute", recompute, "none | selective | full (training.recompute)");
    cmd->add_option("--precision", precision, "fp32 | fp16 | bf16 | fp8 (training.precision)");
    if (withName)
        cmd->add_option("--name", name, "Workload name, used for output files (name)");
    cmd->add_option("--max-nodes", maxNodes,
           "Largest plan accepted, in estimated program nodes (default 1000000: report peaks under 200 MB)")
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
    // A name on the command line is a string, never YAML: "a #b", "!tag x", "~" and "null" stay as typed.
    if (name)
        out.push_back("name=" + yamlQuoted(*name));
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

std::shared_ptr<const SynthesisResult> loadAndSynthesize(const ConfigFlags& flags, int& exitCode, bool compressed)
{
    // Validation then limits what a compressed synthesis builds (config/programsize.h); process-wide, but a
    // command runs once per process.
    setValidateCompressedProgramSize(compressed);
    std::optional<Config> config = loadConfig(flags, exitCode);
    if (!config)
        return nullptr;
    SynthesisOptions options;
    options.memorySeries = false; // no command draws the memory series: its peaks are in the summaries
    options.compressMicroBatches = compressed;
    SynthesisOutcome outcome = synthesize(*config, nullptr, nullptr, options); // anchors problems at the keys
    if (!outcome.result) {
        // Errors that still have no position (a config without an origin) are reported against the config.
        // Warnings were printed with the config already; the synthesis repeats its validation.
        bool internal = false;
        std::vector<Diagnostic> errors;
        for (Diagnostic& d : outcome.diagnostics) {
            if (d.file.empty())
                d.file = flags.config;
            internal = internal || d.message.rfind("internal error", 0) == 0;
            if (d.severity == Severity::Error)
                errors.push_back(d);
        }
        printDiagnostics(errors);
        exitCode = internal ? ExitInternal : ExitBadInput;
        return nullptr;
    }
    return outcome.result;
}

} // namespace stagecraft::cli
