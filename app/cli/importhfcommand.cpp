// SPDX-License-Identifier: MIT
// stagecraft import-hf FILE [--name N] [--seq-len N] [--out FILE]
#include "command.h"
#include "config/configwriter.h"
#include "config/hfimport.h"
#include "export/atomictextfile.h"
#include "model/modelcost.h"
#include "model/modelgraph.h"
#include "output/messagetext.h"

#include <iostream>
#include <sys/stat.h>

namespace stagecraft::cli {

Command addImportHfCommand(CLI::App& app)
{
    struct Options
    {
        std::string file;
        std::optional<std::string> name;
        std::optional<int64_t> seqLen;
        std::optional<std::string> out;
        bool force = false;
    };
    auto o = std::make_shared<Options>();
    std::string architectures;
    for (std::string_view a : hfArchitectures())
        architectures += (architectures.empty() ? "" : ", ") + std::string(a);
    CLI::App* cmd = app.add_subcommand("import-hf", "Print a config whose model is a Hugging Face config.json");
    cmd->add_option("FILE", o->file, "Hugging Face config.json")->required();
    cmd->add_option("--name", o->name,
        "Workload name (default: the folder's name for a config.json, else the file name without .json)");
    cmd->add_option(
           "--seq-len", o->seqLen, "model.seq_len (default: min(max_position_embeddings, 4096); GPT-2: n_positions)")
        ->transform(integerIn(1, kMaxConfigInteger));
    cmd->add_option("--out", o->out, "Write the YAML to this file instead of standard output")->type_name("FILE");
    cmd->add_flag("--force", o->force, "With --out: replace an existing file (never the input itself)");
    cmd->footer("Architectures: " + architectures
        + ". The model keys come from the JSON; training, parallelism and cluster are the defaults (one GPU, "
          "training.global_batch "
        + std::to_string(kHfImportGlobalBatch)
        + "). A field whose value we cannot represent (a Llama attention_bias or mlp_bias, sliding-window "
          "attention shorter than seq_len, MoE layers that are not every layer) or an unknown architecture is an "
          "error at its file:line:col; fields that are neither mapped nor known to be informational are ignored "
          "with a warning. A config can also name the JSON as model.hf_config.");
    return { cmd,
        [o]() -> int {
            const std::string name = o->name.value_or(hfDefaultName(o->file));
            if (o->out) {
                // --out never names the input (through a link, another spelling of the path) and replaces an
                // existing file only when told.
                struct stat in
                {
                }, out {};
                const bool exists = ::stat(o->out->c_str(), &out) == 0;
                if (exists && ::stat(o->file.c_str(), &in) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino) {
                    std::cerr << "stagecraft: --out " << escapedText(*o->out)
                              << " is the input file itself; choose another file for the YAML\n";
                    return ExitBadInput;
                }
                if (exists && S_ISREG(out.st_mode) && !o->force) {
                    std::cerr << "stagecraft: --out " << escapedText(*o->out)
                              << " already exists; use --force to replace it\n";
                    return ExitBadInput;
                }
            }
            const ConfigResult result = loadHfConfig(o->file, name, o->seqLen.value_or(0));
            printDiagnostics(result.diagnostics);
            if (!result.config)
                return ExitBadInput;
            // What `report` would refuse (a count of the model past 64 bits, e.g. num_local_experts 10^9) is refused
            // here already, at the key that drives it: a config is written only if it can be used.
            try {
                ModelCost cost;
                std::string error, keyPath;
                const auto graph = buildModelGraph(result.config->model, result.config->training.precision);
                if (!computeModelCost(*graph, *result.config, cost, error, &keyPath)) {
                    std::cerr << escapedText(o->file) << ": error: " << escapedText(keyPath) << ": "
                              << escapedText(error) << "\n";
                    return ExitBadInput;
                }
            } catch (const std::exception& e) {
                std::cerr << escapedText(o->file) << ": error: " << escapedText(e.what()) << "\n";
                return ExitBadInput;
            }
            const std::string yaml = "# Model mapped from the Hugging Face config " + escapedText(o->file)
                + " by stagecraft import-hf.\n# Training, parallelism and cluster are defaults: edit them.\n"
                + toYaml(*result.config);
            if (!o->out) {
                std::cout << yaml;
                return ExitOk;
            }
            std::string error;
            if (!writeTextFileAtomically(*o->out, yaml, error)) {
                std::cerr << "stagecraft: --out: " << escapedText(error) << "\n";
                return ExitBadInput;
            }
            return ExitOk;
        } };
}

} // namespace stagecraft::cli
