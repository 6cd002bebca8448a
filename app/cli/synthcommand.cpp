// SPDX-License-Identifier: MIT
// stagecraft synth CONFIG --out DIR [--format chakra|json] [--ranks A:B] [--force] [flags]
// Also accepts STAGE's main.py flags (--output_dir, --output_name, --dmodel, ...) with STAGE's meanings, so a
// script written for STAGE runs unchanged.
#include "command.h"
#include "estimate/stepestimate.h"
#include "export/traceexporter.h"
#include "interruptguard.h"
#include "output/messagetext.h"
#include "report/report.h"
#include "serving/iterationexport.h"

#include <charconv>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <thread>
#include <unistd.h>

namespace stagecraft::cli {

namespace {

    /// STAGE's main.py command line, with its defaults (README.md, STAGE-compatible command line).
    struct StageFlags
    {
        std::optional<std::string> outputDir, outputName, modelType, chakraSchemaVersion;
        std::optional<int64_t> sp, dvocal, dmodel, dff, batch, microBatch, seq, head, kvhead, numStacks, experts,
            kexperts;
        std::optional<std::string> weightSharded, activationRecompute, tpsp, mixedPrecision, printGpuVram;

        void add(CLI::App* cmd)
        {
            const char* group = "STAGE-compatible flags (main.py)";
            cmd->add_option("--output_dir", outputDir, "STAGE: output directory (same as --out)")->group(group);
            cmd->add_option(
                   "--output_name", outputName, "STAGE: rank file pattern NAME.%d.et or NAME.%d.json (both protobuf)")
                ->group(group);
            cmd->add_option("--sp", sp, "STAGE: context-parallel degree (our cp)")->group(group);
            cmd->add_option("--dvocal", dvocal, "STAGE: vocabulary (default 32000)")->group(group);
            cmd->add_option("--dmodel", dmodel, "STAGE: hidden size (default 8192)")->group(group);
            cmd->add_option("--dff", dff, "STAGE: FFN size (default 28672)")->group(group);
            cmd->add_option("--batch", batch, "STAGE: global batch (default 64)")->group(group);
            cmd->add_option("--micro_batch", microBatch, "STAGE: micro-batch over all dp ranks (default -1 = batch)")
                ->group(group);
            cmd->add_option("--seq", seq, "STAGE: sequence length (default 1024)")->group(group);
            cmd->add_option("--head", head, "STAGE: attention heads (default 64)")->group(group);
            cmd->add_option("--kvhead", kvhead, "STAGE: key/value heads (default 8)")->group(group);
            cmd->add_option("--num_stacks", numStacks, "STAGE: decoder layers (default 80)")->group(group);
            cmd->add_option("--experts", experts, "STAGE: experts (default 8)")->group(group);
            cmd->add_option("--kexperts", kexperts, "STAGE: top-k (default 2)")->group(group);
            cmd->add_option("--model_type", modelType, "STAGE: dense | llama | gpt | moe (default dense)")
                ->group(group);
            cmd->add_option("--weight_sharded", weightSharded, "STAGE: FSDP over dp (our zero 3)")->group(group);
            cmd->add_option(
                   "--activation_recompute", activationRecompute, "STAGE: recompute (our training.recompute=full)")
                ->group(group);
            cmd->add_option("--tpsp", tpsp, "STAGE: sequence parallelism with tp (default true)")->group(group);
            cmd->add_option("--mixed_precision", mixedPrecision, "STAGE: bf16 mixed precision (default false = fp32)")
                ->group(group);
            cmd->add_option("--print_gpu_vram", printGpuVram, "STAGE: print the per-rank memory report")->group(group);
            cmd->add_option("--chakra_schema_version", chakraSchemaVersion, "STAGE: ignored (always Chakra 0.0.4)")
                ->group(group);
        }

        bool any() const
        {
            return outputDir || outputName || modelType || chakraSchemaVersion || sp || dvocal || dmodel || dff || batch
                || microBatch || seq || head || kvhead || numStacks || experts || kexperts || weightSharded
                || activationRecompute || tpsp || mixedPrecision || printGpuVram;
        }
    };

    /// STAGE's booleans accept true/t/1/yes/y (case-insensitive); everything else is false.
    bool stageBool(const std::optional<std::string>& v, bool fallback)
    {
        if (!v)
            return fallback;
        std::string s = *v;
        for (char& c : s)
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        return s == "true" || s == "t" || s == "1" || s == "yes" || s == "y";
    }

    class TerminalProgress : public ProgressSink
    {
    public:
        void report(double fraction, const char* stage) override
        {
            if (std::string_view(stage).rfind("waiting", 0) == 0) {
                // Said once, terminal or not: an export that waits for another must not look hung.
                if (!m_toldWaiting)
                    std::fprintf(stderr, "stagecraft: %s\n", escapedText(stage).c_str());
                m_toldWaiting = true;
                return;
            }
            if (!m_tty)
                return;
            const int permille = static_cast<int>(fraction * 1000);
            if (permille == m_last)
                return;
            m_last = permille;
            std::fprintf(stderr, "\r%s: %5.1f%%", stage, fraction * 100.0);
            if (fraction >= 1.0)
                std::fprintf(stderr, "\n");
            std::fflush(stderr);
        }
        bool cancelled() const override
        {
            return InterruptGuard::signal() != 0;
        }

    private:
        bool m_tty = isatty(STDERR_FILENO) != 0;
        bool m_toldWaiting = false;
        int m_last = -1;
    };

} // namespace

Command addSynthCommand(CLI::App& app)
{
    struct State
    {
        ConfigFlags flags;
        StageFlags stage;
        std::string out;
        std::string format = "chakra";
        std::string ranks;
        bool force = false;
        bool tensorLists = false;
        bool ctrlAsData = false;
        int threads = 0;
        bool quiet = false;
        std::string servingIteration;
        int64_t window = 1;
    };
    auto st = std::make_shared<State>();
    CLI::App* cmd = app.add_subcommand("synth",
        "Write Chakra execution traces: one file per rank plus the "
        "communicator-group JSON that ASTRA-sim reads");
    st->flags.add(cmd, false);
    cmd->add_option("--out", st->out, "Output directory (created if missing; only our own files are replaced)");
    cmd->add_option("--format", st->format, "chakra (protobuf .et, default) | json")
        ->check(CLI::IsMember({ "chakra", "json" }));
    cmd->add_option("--ranks", st->ranks, "Write only ranks A..B-1 (A:B), to split a large export across machines");
    cmd->add_flag("--force", st->force, "Replace the files of a previous export with the same name");
    cmd->add_flag(
        "--tensor-lists", st->tensorLists, "Add inputs/outputs tensor lists to every node (ASTRA-sim track-local-mem)");
    cmd->add_flag("--ctrl-as-data", st->ctrlAsData,
        "Write the schedule's ordering edges into data_deps (for readers that ignore ctrl_deps)");
    cmd->add_option("--threads", st->threads, "Files written in parallel (default: all cores)");
    cmd->add_flag("-q,--quiet", st->quiet, "Print nothing on success");
    cmd->add_option("--serving-iteration", st->servingIteration,
        "Serving: simulate the requests and write the traces of iteration N (or `longest`) of replica 0 instead: "
        "<name>-iterN-prefill for its prompt chunks, <name>-iterN-decode for its decoding batch");
    cmd->add_option("--window", st->window,
        "With --serving-iteration: decode steps of the iteration's batch in the decode set (default 1)");
    st->stage.add(cmd);

    return { cmd,
        [st]() -> int {
            State& s = *st;
            std::vector<std::string> overrides;
            const bool stageMode = s.stage.any() || s.flags.config.empty();
            std::string name, rankExtension;
            if (stageMode) {
                // STAGE semantics. Base: its defaults (a Llama-3-70B-like model, vocab 32000, seq 1024, batch 64).
                const StageFlags& g = s.stage;
                const std::string type = g.modelType.value_or("dense");
                if (type == "debug") {
                    std::cerr << "stagecraft: --model_type debug is STAGE's embedding-only test model; not supported\n";
                    return ExitBadInput;
                }
                if (type != "dense" && type != "llama" && type != "gpt" && type != "moe") {
                    std::cerr << "stagecraft: --model_type must be dense, llama, gpt or moe, found '" << type << "'\n";
                    return ExitBadInput;
                }
                const bool moe = type == "moe";
                const int64_t dp = s.flags.dp.value_or(1), tp = s.flags.tp.value_or(1), ep = s.flags.ep.value_or(1);
                const int64_t batch = g.batch.value_or(64);
                const int64_t micro = g.microBatch.value_or(-1) < 0 ? batch : *g.microBatch;
                if (micro <= 0 || batch % micro != 0 || micro % dp != 0) {
                    std::cerr << "stagecraft: --micro_batch " << micro << " must divide --batch " << batch
                              << " and be divisible by --dp " << dp << "\n";
                    return ExitBadInput;
                }
                // STAGE multiplies the world by ep: MoE replicas become our data parallelism (ep carved out of
                // it), dense models fold ep into tp (README.md, STAGE-compatible command line).
                const int64_t ourDp = moe ? dp * ep : dp;
                const int64_t ourTp = moe ? tp : tp * ep;
                const bool sp = stageBool(g.tpsp, true) && ourTp > 1;
                const std::string family = type == "gpt" ? "gpt" : moe ? "moe" : "llama";
                const int64_t heads = g.head.value_or(64);
                overrides = { "model.family=" + family, "model.vocab=" + std::to_string(g.dvocal.value_or(32000)),
                    "model.hidden=" + std::to_string(g.dmodel.value_or(8192)),
                    "model.ffn_hidden=" + std::to_string(g.dff.value_or(28672)), "model.heads=" + std::to_string(heads),
                    "model.kv_heads=" + std::to_string(family == "gpt" ? heads : g.kvhead.value_or(8)),
                    "model.seq_len=" + std::to_string(g.seq.value_or(1024)),
                    "model.layers=" + std::to_string(g.numStacks.value_or(80)),
                    "model.experts=" + std::to_string(moe ? g.experts.value_or(8) : 0),
                    "model.top_k=" + std::to_string(moe ? g.kexperts.value_or(2) : 0),
                    "model.expert_ffn_hidden=" + std::to_string(moe ? g.dff.value_or(28672) : 0),
                    "model.tied_embeddings=false", "training.global_batch=" + std::to_string(moe ? batch * ep : batch),
                    "training.micro_batch=" + std::to_string(micro / dp),
                    std::string("training.precision=") + (stageBool(g.mixedPrecision, false) ? "bf16" : "fp32"),
                    std::string("training.recompute=") + (stageBool(g.activationRecompute, false) ? "full" : "none"),
                    "parallelism.dp=" + std::to_string(ourDp), "parallelism.tp=" + std::to_string(ourTp),
                    "parallelism.pp=" + std::to_string(s.flags.pp.value_or(1)),
                    "parallelism.cp=" + std::to_string(g.sp.value_or(1)),
                    "parallelism.ep=" + std::to_string(moe ? ep : 1),
                    std::string("parallelism.sequence_parallel=") + (sp ? "true" : "false"),
                    std::string("parallelism.zero=") + (stageBool(g.weightSharded, false) ? "3" : "0"),
                    // STAGE's rank numbering, dp fastest (resources/docs/chakra-traces.md, "Rank numbering"):
                    // dense d + dp*(t + tp*(c + cp*s)), MoE d + dp*(t + tp*(c + cp*(e + ep*s))); its dp index d is
                    // our edp (config "dp").
                    "parallelism.rank_order=[dp,tp,cp,ep,pp]" };
                if (s.flags.config.empty()) {
                    s.flags.config = "llama3-70b";
                    // STAGE orders no pipeline schedule of its own: the default base keeps the 1F1B and fp32
                    // gradients this mode has always used, not the preset's own plan.
                    for (const char* key : { "parallelism.schedule=1f1b", "parallelism.virtual_stages=1",
                             "training.main_grad_dtype=fp32", "training.grad_reduce_dtype=fp32" })
                        overrides.emplace_back(key);
                }
                // Our own flags for the same fields were consumed above; the rest apply on top.
                ConfigFlags rest = s.flags;
                rest.dp.reset();
                rest.tp.reset();
                rest.pp.reset();
                rest.ep.reset();
                for (const std::string& o : rest.overrides())
                    overrides.push_back(o);
                const std::string pattern = g.outputName.value_or("workload.%d.et");
                auto endsWith = [&](const std::string& suffix) {
                    return pattern.size() > suffix.size()
                        && pattern.compare(pattern.size() - suffix.size(), suffix.size(), suffix) == 0;
                };
                if (endsWith(".%d.et"))
                    name = pattern.substr(0, pattern.size() - 6);
                else if (endsWith(".%d.json")) {
                    // STAGE writes protobuf whatever the ending, and its groups file is NAME.json.
                    name = pattern.substr(0, pattern.size() - 8);
                    rankExtension = ".json";
                } else if (pattern.find("%d") == std::string::npos)
                    name = pattern.size() > 3 && pattern.compare(pattern.size() - 3, 3, ".et") == 0
                        ? pattern.substr(0, pattern.size() - 3)
                        : pattern; // STAGE appends .%d.et
                else {
                    std::cerr << "stagecraft: --output_name '" << pattern
                              << "': only patterns of the form NAME.%d.et or NAME.%d.json are supported\n";
                    return ExitBadInput;
                }
                if (s.out.empty())
                    s.out = g.outputDir.value_or("");
            } else {
                overrides = s.flags.overrides();
            }
            if (s.out.empty()) {
                std::cerr << "stagecraft: synth needs an output directory: --out DIR\n";
                return ExitBadInput;
            }
            s.flags.applyOptions();
            ConfigResult loaded = loadConfigOrPreset(s.flags.config, overrides);
            printDiagnostics(loaded.diagnostics);
            if (!loaded.config)
                return ExitBadInput;
            // SIGINT, SIGTERM and SIGHUP stop the work cleanly: an export keeps the folder as it was.
            InterruptGuard interrupts;
            auto interrupted = [] {
                const int sig = InterruptGuard::signal();
                std::cerr << "stagecraft: stopped by signal " << sig << " (" << strsignal(sig)
                          << "): nothing was written; the output folder is as it was\n";
                return InterruptGuard::exitCodeFor(sig);
            };
            TerminalProgress progress;
            auto writeSet = [&](const Config& config, const std::string& setName) -> int {
                SynthesisOptions synthesisOptions;
                synthesisOptions.memorySeries = false; // the export needs each class's peak, not its series
                SynthesisOutcome outcome = synthesize(config, &progress, nullptr, synthesisOptions);
                if (InterruptGuard::signal() != 0)
                    return interrupted();
                if (!outcome.result) {
                    printDiagnostics(outcome.diagnostics);
                    return ExitBadInput;
                }
                const SynthesisResult& result = *outcome.result;
                ExportOptions options;
                options.directory = s.out;
                options.name = setName.empty() ? result.config.name : setName;
                options.format = s.format == "json" ? ChakraFileFormat::Json : ChakraFileFormat::Protobuf;
                options.force = s.force;
                // A STAGE script reruns into the same folder; STAGE overwrites there, so our own files are replaced.
                options.replaceOwn = stageMode;
                options.rankExtension = rankExtension;
                options.tensorLists = s.tensorLists;
                options.ctrlDepsAsData = s.ctrlAsData;
                options.threads =
                    s.threads > 0 ? s.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
                if (!s.ranks.empty()) {
                    // Exactly A:B with decimal integers, 0 <= A < B <= world.
                    const std::string& text = s.ranks;
                    const size_t colon = text.find(':');
                    int64_t a = -1, b = -1;
                    auto number = [](std::string_view v, int64_t& out) {
                        if (v.empty() || v.front() == '+' || v.front() == '-')
                            return false;
                        const auto [ptr, err] = std::from_chars(v.data(), v.data() + v.size(), out);
                        return err == std::errc() && ptr == v.data() + v.size();
                    };
                    const int64_t world = result.worldSize();
                    if (colon == std::string::npos || !number(std::string_view(text).substr(0, colon), a)
                        || !number(std::string_view(text).substr(colon + 1), b)) {
                        std::cerr << "stagecraft: --ranks '" << text
                                  << "': expected A:B with decimal integers 0 <= A < B <= " << world
                                  << " (e.g. 0:" << std::min<int64_t>(world, 512) << ")\n";
                        return ExitBadInput;
                    }
                    if (!(a < b && b <= world)) {
                        std::cerr << "stagecraft: --ranks " << a << ":" << b << ": expected 0 <= A < B <= " << world
                                  << " (the world size of this plan)\n";
                        return ExitBadInput;
                    }
                    options.firstRank = a;
                    options.endRank = b;
                }
                try {
                    const ExportSummary sum = exportTrace(result, options, &progress);
                    if (sum.cancelled)
                        return interrupted();
                    if (!s.quiet) {
                        char line[8192];
                        std::snprintf(line, sizeof line,
                            "wrote %lld rank files (%s, %llu nodes) to %s in %.2f s (%.0f MB/s)\n",
                            static_cast<long long>(sum.files), formatBytes(static_cast<double>(sum.bytes)).c_str(),
                            static_cast<unsigned long long>(sum.nodes), options.directory.string().c_str(), sum.seconds,
                            sum.seconds > 0 ? static_cast<double>(sum.bytes) / 1e6 / sum.seconds : 0.0);
                        std::cout << line;
                        if (sum.wroteGroups)
                            std::cout << "communicator groups: " << sum.groupsPath.string() << " ("
                                      << result.groups.groupCount() << " groups)\n";
                    }
                    if (!rankExtension.empty() && options.format == ChakraFileFormat::Protobuf && !s.quiet)
                        std::cerr << "stagecraft: note: the rank files " << options.name << ".<rank>" << rankExtension
                                  << " are Chakra protobuf despite the " << rankExtension
                                  << " ending, as STAGE writes them; the communicator groups are " << options.name
                                  << ".json\n";
                    if (stageMode && sum.replaced > 0 && !s.quiet)
                        std::cerr << "stagecraft: note: replaced " << sum.replaced
                                  << " file(s) of an earlier Stagecraft export named '" << options.name << "' in "
                                  << options.directory.string() << "\n";
                    if (stageMode && stageBool(s.stage.printGpuVram, false))
                        std::cout << reportText(result);
                } catch (const ExportError& e) {
                    std::cerr << "stagecraft: " << escapedText(e.what()) << "\n";
                    return ExitBadInput;
                } catch (const ChakraWriteError& e) {
                    std::cerr << "stagecraft: " << escapedText(e.what())
                              << " (nothing of this export was kept; the output folder is as it was)\n";
                    return ExitBadInput;
                }
                return ExitOk;
            };
            if (s.servingIteration.empty()) {
                if (s.window != 1) {
                    std::cerr << "stagecraft: --window needs --serving-iteration\n";
                    return ExitBadInput;
                }
                return writeSet(*loaded.config, name);
            }
            if (stageMode || !isInference(*loaded.config)) {
                std::cerr << "stagecraft: --serving-iteration needs a serving config (workload: inference)\n";
                return ExitBadInput;
            }
            int64_t iteration = 0;
            if (!parseServingIteration(s.servingIteration, iteration)) {
                std::cerr << "stagecraft: --serving-iteration '" << escapedText(s.servingIteration)
                          << "': expected an iteration number from 0 or `longest`\n";
                return ExitBadInput;
            }
            std::string error;
            const std::optional<GpuSpec> gpu = gpuForConfig(*loaded.config, error);
            ServingIterationPick pick;
            if (!gpu
                || !pickServingIteration(
                    *loaded.config, *gpu, EstimateOptions {}, iteration, s.window, pick, error, &progress)) {
                if (InterruptGuard::signal() != 0)
                    return interrupted();
                std::cerr << "stagecraft: --serving-iteration " << escapedText(s.servingIteration) << ": "
                          << escapedText(error) << "\n";
                return ExitBadInput;
            }
            if (!s.quiet)
                std::cout << servingIterationText(pick);
            for (const std::optional<Config>* part : { &pick.prefill, &pick.decode }) {
                if (!part->has_value())
                    continue;
                const Config& c = **part;
                const int64_t counted = part == &pick.prefill ? pick.prefillChunks : pick.decodeSequences;
                if (!s.quiet)
                    std::cout << c.name << ": " << c.inference.batch << " sequence(s)"
                              << (c.inference.batch != counted ? " (the iteration's " + std::to_string(counted)
                                             + " rounded up to the plan's batch step)"
                                                               : std::string())
                              << ", "
                              << (c.inference.phases == InferencePhases::Prefill
                                         ? "prompts of " + std::to_string(c.inference.promptTokens) + " tokens"
                                         : std::to_string(c.inference.decodeSteps) + " decode step(s) after "
                                             + std::to_string(c.inference.promptTokens) + " cached positions")
                              << "\n";
                const int code = writeSet(c, c.name);
                if (code != ExitOk)
                    return code;
            }
            return ExitOk;
        } };
}

} // namespace stagecraft::cli
