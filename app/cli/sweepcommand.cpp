// SPDX-License-Identifier: MIT
// stagecraft sweep CONFIG --gpus N [--json] [--top K] [--gpu NAME] [--efficiency E] [--gpus-per-node G] [--exact]
//                 [--tpot-ms MS] [--rate R [--ttft-ms MS] [--attainment F]]
#include "command.h"
#include "config/configvalidator.h"
#include "config/configwriter.h"
#include "estimate/stepestimate.h"
#include "estimate/sweep.h"
#include "interruptguard.h"
#include "serving/slosweep.h"

#include <charconv>
#include <cstdio>
#include <iostream>
#include <limits>
#include <optional>
#include <unistd.h>

namespace stagecraft::cli {

namespace {

    /// Progress on stderr: on a terminal one line rewritten in place, else a line per tenth of the plans, so that a
    /// long sweep in a log or under a job scheduler shows it is alive. Ctrl+C, SIGTERM or SIGHUP cancel: the plans
    /// evaluated so far are printed.
    class SweepProgress : public ProgressSink
    {
    public:
        void report(double fraction, const char* stage) override
        {
            if (std::string_view(stage).rfind("evaluating ", 0) == 0 && fraction == 0) {
                std::fprintf(stderr, "sweep: %s\n", stage);
                std::fflush(stderr);
                return;
            }
            if (!m_tty) {
                const int tenth = static_cast<int>(fraction * 10);
                if (tenth == m_lastTenth || tenth >= 10)
                    return;
                m_lastTenth = tenth;
                if (tenth > 0)
                    std::fprintf(stderr, "sweep: %d%% of the plans evaluated\n", tenth * 10);
                std::fflush(stderr);
                return;
            }
            const int percent = static_cast<int>(fraction * 100);
            if (percent == m_lastPercent)
                return;
            m_lastPercent = percent;
            std::fprintf(stderr, "\rsweep: %s %3d%%", stage, percent);
            std::fflush(stderr);
        }
        bool cancelled() const override
        {
            return InterruptGuard::signal() != 0;
        }
        void finish()
        {
            if (m_lastPercent >= 0)
                std::fprintf(stderr, "\r\033[K");
        }

    private:
        bool m_tty = isatty(STDERR_FILENO) == 1;
        int m_lastPercent = -1;
        int m_lastTenth = 0;
    };

    /// A time in milliseconds: a plain decimal number above 0 and at most 10^6 (no "inf", "nan" or hex).
    CLI::Validator positiveMilliseconds()
    {
        return CLI::Validator(
            [](std::string& text) -> std::string {
                double value = 0;
                const char* end = text.data() + text.size();
                const auto parsed = std::from_chars(text.data(), end, value, std::chars_format::fixed);
                const bool plain = !text.empty() && text.find_first_not_of("0123456789.") == std::string::npos;
                if (!plain || parsed.ec != std::errc() || parsed.ptr != end)
                    return "expected a time in milliseconds, a number such as 50 or 12.5, found \"" + text + "\"";
                if (!(value > 0) || value > 1e6)
                    return text + " is out of range: expected more than 0 and at most 1000000 milliseconds";
                return {};
            },
            "", "MS");
    }

} // namespace

Command addSweepCommand(CLI::App& app)
{
    struct State
    {
        ConfigFlags flags;
        int64_t gpus = 0;
        bool json = false;
        int64_t top = 20;
        std::optional<std::string> gpu;
        std::optional<int64_t> gpusPerNode;
        std::optional<double> efficiency;
        bool exact = false;
        int64_t fullPlans = 64;
        int threads = 0;
        std::vector<int64_t> microBatches = SweepOptions {}.microBatches;
        std::vector<std::pair<Schedule, int64_t>> schedules;
        std::vector<Precision> precisions;
        bool a2aOverlap = false;
        bool balancedSplit = false;
        std::optional<double> tpotMs;
        std::optional<double> rate;
        std::optional<double> ttftMs;
        double attainment = 0.9;
    };
    auto state = std::make_shared<State>();
    CLI::App* cmd = app.add_subcommand("sweep",
        "Rank every valid (dp, tp, pp, schedule, cp, ep, micro-batch, recompute, ZeRO) plan for N GPUs by estimated "
        "step time; for a serving config, every (dp, tp, pp, ep) plan by output tokens/s per GPU");
    state->flags.add(cmd);
    cmd->add_option("--gpus", state->gpus, "Number of GPUs to plan for (dp*tp*pp*cp)")
        ->required()
        ->transform(integerIn(1, kMaxWorldSize, "POSITIVE"));
    cmd->add_flag("--json", state->json, "Print every candidate, rejected ones with their reason, as JSON");
    cmd->add_option("--top", state->top, "Rows of the ranked table (0: all)")
        ->capture_default_str()
        ->transform(integerIn(0, kMaxConfigInteger));
    cmd->add_option("--gpu", state->gpu, "GPU preset (cluster.gpu): a100-80gb, b200, h100-sxm, h200");
    cmd->add_option("--gpus-per-node", state->gpusPerNode, "GPUs per node (cluster.gpus_per_node)")
        ->transform(integerIn(1, kMaxConfigInteger, "POSITIVE"));
    cmd->add_option("--efficiency", state->efficiency,
           "Fraction of dense peak a large GEMM reaches (cluster.gemm_efficiency; default: the GPU preset's "
           "measured figure)")
        ->check(CLI::Range(1e-6, 1.0));
    cmd->add_flag("--exact", state->exact, "Synthesize every plan in full instead of the reduced-program estimate");
    cmd->add_option("--full-plans", state->fullPlans,
           "Quick sweeps: plans the reduced programs do not model (zb1p, dualpipe, dualpipev, the overlapped "
           "all-to-all, a layout with an empty chunk, an MoE model's dense first layers beyond "
           "pipeline chunk 0) are synthesized in full, at most this many; the rest are not estimated")
        ->capture_default_str()
        ->transform(integerIn(0, kMaxConfigInteger, "NONNEGATIVE"));
    cmd->add_option("--threads", state->threads, "Worker threads (0: one per core)")
        ->capture_default_str()
        ->transform(integerIn(0, 4096, "NONNEGATIVE"));
    cmd->add_option("--micro-batches", state->microBatches, "Micro-batch sizes to try, e.g. 1,2,4")
        ->capture_default_str()
        ->delimiter(',')
        ->transform(integerIn(1, kMaxConfigInteger));
    cmd->add_option_function<std::vector<std::string>>(
           "--schedules",
           [state](const std::vector<std::string>& names) {
               state->schedules.clear();
               for (const std::string& name : names) {
                   // "1f1b", "gpipe", "interleaved:V" (V virtual stages per rank, at least 2), "zb1p", "dualpipe",
                   // "dualpipev", spelled as in the
                   // config (toString(Schedule)).
                   const size_t colon = name.find(':');
                   const std::string kind = name.substr(0, colon);
                   std::optional<Schedule> schedule;
                   for (Schedule s : { Schedule::GPipe, Schedule::OneFOneB, Schedule::Interleaved,
                            Schedule::ZeroBubbleH1, Schedule::DualPipe, Schedule::DualPipeV })
                       if (kind == toString(s))
                           schedule = s;
                   const bool interleaved = schedule == Schedule::Interleaved;
                   if (!schedule || interleaved != (colon != std::string::npos))
                       throw CLI::ValidationError("--schedules",
                           "expected 1f1b, gpipe, interleaved:V (V virtual stages per rank), zb1p, dualpipe or "
                           "dualpipev, found \""
                               + name + "\"");
                   int64_t v = 1;
                   if (interleaved) {
                       const std::string digits = name.substr(colon + 1);
                       const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
                       if (ec != std::errc() || end != digits.data() + digits.size() || v < 2 || v > 1024)
                           throw CLI::ValidationError("--schedules",
                               "interleaved needs its virtual stages per rank, 2 to 1024 (interleaved:4), found \""
                                   + name + "\"");
                   }
                   state->schedules.emplace_back(*schedule, v);
               }
           },
           "Pipeline schedules tried for plans with pp > 1, e.g. 1f1b,interleaved:4,zb1p,dualpipe (default: 1f1b and "
           "the config's own schedule; zb1p, dualpipe and dualpipev plans are synthesized in full)")
        ->delimiter(',');
    cmd->add_option_function<std::vector<std::string>>(
           "--precisions",
           [state](const std::vector<std::string>& names) {
               state->precisions.clear();
               for (const std::string& name : names) {
                   std::optional<Precision> precision;
                   for (Precision p : { Precision::Fp32, Precision::Fp16, Precision::Bf16, Precision::Fp8 })
                       if (name == toString(p))
                           precision = p;
                   if (!precision)
                       throw CLI::ValidationError(
                           "--precisions", "expected fp32, fp16, bf16 or fp8, found \"" + name + "\"");
                   state->precisions.push_back(*precision);
               }
           },
           "Training precisions tried for every plan, e.g. bf16,fp8 (default: the config's; one the GPU has no peak "
           "for is skipped; an FP8 plan's MFU is against the BF16 peak, as report counts it)")
        ->delimiter(',');
    cmd->add_flag("--a2a-overlap", state->a2aOverlap,
        "MoE: also try every plan with the expert all-to-all overlapped or not (the other of the config's setting), "
        "where the plan allows it; synthesized in full (--full-plans)");
    cmd->add_flag("--balanced-split", state->balancedSplit,
        "Pipelined plans: also try the other split, the embedding and the loss counted as layers or not, where the "
        "chunks then hold equal layer counts; where neither split is even (1F1B, GPipe, interleaved), a balanced "
        "pipeline_layout instead, the embedding, the loss and MTP modules counted as layers and chunks differing "
        "by at most one");
    cmd->add_option("--tpot-ms", state->tpotMs,
           "Serving configs: reject plans whose time per output token exceeds this many milliseconds (default: no "
           "limit)")
        ->type_name("MS")
        ->transform(positiveMilliseconds());
    cmd->add_option("--rate", state->rate,
           "Serving configs: rank replica plans (colocated, and prefill/decode disaggregated pairs) by the GPUs they "
           "need to serve this many requests per second within --ttft-ms and --tpot-ms (default: the config's "
           "inference.slo_ttft_ms and slo_tpot_ms), simulating the config's request lengths; --gpus is then the "
           "largest replica (tp * pp)")
        ->check(CLI::Range(1e-6, 1e9));
    cmd->add_option("--ttft-ms", state->ttftMs, "With --rate: the time-to-first-token bound")
        ->type_name("MS")
        ->transform(positiveMilliseconds());
    cmd->add_option(
           "--attainment", state->attainment, "With --rate: the fraction of requests that must meet both bounds")
        ->capture_default_str()
        ->check(CLI::Range(0.01, 1.0));
    return { cmd, [state]() -> int {
                ConfigFlags flags = state->flags;
                if (state->gpu)
                    flags.sets.push_back("cluster.gpu=" + *state->gpu);
                if (state->gpusPerNode)
                    flags.sets.push_back("cluster.gpus_per_node=" + std::to_string(*state->gpusPerNode));
                if (state->efficiency)
                    flags.sets.push_back("cluster.gemm_efficiency=" + formatNumber(*state->efficiency));
                // The base plan is never synthesized by the quick estimate: its size is no reason to refuse the
                // sweep (a given --max-nodes still applies; --exact keeps the default limit for every plan).
                if (!state->exact && !flags.maxNodes)
                    setDefaultMaxProgramNodes(std::numeric_limits<int64_t>::max());
                int exitCode = ExitOk;
                std::optional<Config> config = loadConfig(flags, exitCode);
                if (!config)
                    return exitCode;
                std::string error;
                std::optional<GpuSpec> gpu = gpuForConfig(*config, error);
                if (!gpu) { // loadConfig checked cluster.gpu, so only a preset that does not parse gets here
                    std::cerr << "stagecraft: internal error: " << error << "\n";
                    return ExitInternal;
                }
                if (state->tpotMs && !isInference(*config)) {
                    std::cerr << "stagecraft: --tpot-ms limits serving plans; " << config->name
                              << " is a training config (workload: training)\n";
                    return ExitBadInput;
                }
                if (state->tpotMs && !runsDecode(config->inference)) {
                    std::cerr << "stagecraft: --tpot-ms limits the time per output token, and " << config->name
                              << " has no decode phase (inference.phases: " << toString(config->inference.phases)
                              << "): every plan would pass it\n";
                    return ExitBadInput;
                }
                const EstimateOptions options;
                if (state->rate || state->ttftMs) {
                    if (!isInference(*config) || !state->rate) {
                        std::cerr << "stagecraft: --rate and --ttft-ms size serving deployments: "
                                  << (state->rate ? config->name + " is a training config (workload: training)"
                                                  : std::string("--ttft-ms needs --rate"))
                                  << "\n";
                        return ExitBadInput;
                    }
                    SloSweepOptions slo;
                    slo.requestRate = *state->rate;
                    slo.sloTtftS = (state->ttftMs ? *state->ttftMs : config->inference.sloTtftMs) / 1e3;
                    slo.sloTpotS = (state->tpotMs ? *state->tpotMs : config->inference.sloTpotMs) / 1e3;
                    slo.attainment = state->attainment;
                    slo.maxGpusPerReplica = state->gpus;
                    InterruptGuard interrupts;
                    SweepProgress progress;
                    const SloSweepResult result = sloSweep(*config, *gpu, options, slo, &progress);
                    progress.finish();
                    if (!result.error.empty()) {
                        std::cerr << "stagecraft: " << result.error << "\n";
                        return ExitBadInput;
                    }
                    if (state->json) {
                        nlohmann::ordered_json j { { "name", config->name } };
                        j.update(sloSweepJson(result));
                        std::cout << j.dump(2) << "\n";
                    } else {
                        std::cout << sloSweepText(result, state->top);
                    }
                    return ExitOk;
                }
                SweepOptions sweepOptions;
                sweepOptions.exact = state->exact;
                sweepOptions.fullSynthesisLimit = state->fullPlans;
                sweepOptions.threads = state->threads;
                sweepOptions.microBatches = state->microBatches;
                sweepOptions.schedules = state->schedules;
                sweepOptions.precisions = state->precisions;
                sweepOptions.tryA2aOverlap = state->a2aOverlap;
                sweepOptions.tryBalancedSplit = state->balancedSplit;
                if (state->tpotMs)
                    sweepOptions.tpotLimitS = *state->tpotMs / 1e3;
                InterruptGuard interrupts;
                SweepProgress progress;
                const SweepResult result = sweep(*config, state->gpus, *gpu, options, &progress, sweepOptions);
                progress.finish();
                if (result.cancelled)
                    std::cerr << "stagecraft: sweep stopped by signal " << InterruptGuard::signal() << " after "
                              << result.fitting + result.rejectedCount << " of " << result.candidates
                              << " plans; the plans evaluated so far follow\n";
                if (!result.error.empty()) {
                    std::cerr << "stagecraft: " << result.error << "\n";
                    return ExitBadInput;
                }
                if (state->json) {
                    nlohmann::ordered_json j { { "name", config->name } };
                    j.update(sweepJson(result));
                    std::cout << j.dump(2) << "\n";
                } else {
                    std::cout << "Sweep of " << config->name << " on ";
                    std::cout << sweepText(result, state->top);
                }
                return result.cancelled ? InterruptGuard::exitCodeFor(InterruptGuard::signal()) : ExitOk;
            } };
}

} // namespace stagecraft::cli
