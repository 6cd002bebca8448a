// SPDX-License-Identifier: MIT
#pragma once

#include "estimate/costmodel.h"
#include "estimate/gpuspec.h"
#include "synthesis/progress.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace stagecraft {

/// What a sweep enumerates beyond the parallel degrees, and how it evaluates. Plain value type.
struct SweepOptions
{
    /// Micro-batch sizes tried (those dividing global_batch / dp). Powers of two up to 8 by default: larger
    /// micro-batches of LLM-length sequences rarely fit and multiply the candidates.
    std::vector<int64_t> microBatches { 1, 2, 4, 8 };
    /// false: quickEstimate() (reduced programs, milliseconds per plan). true: the full synthesis and
    /// estimateStep() per plan (exact, but seconds per plan for large models).
    bool exact = false;
    /// Worker threads; 0 = the hardware concurrency (at most 8).
    int threads = 0;
    /// With tp > 1 every candidate uses sequence parallelism (Megatron-LM's recommended setting alongside tp);
    /// false keeps the base config's setting.
    bool sequenceParallelWithTp = true;
    /// Pipeline schedules tried for pp > 1, with their virtual stages per rank (plans with pp = 1 have no
    /// schedule: 1F1B). Empty: 1F1B and, when it is another, the base config's own schedule (an interleaved base
    /// with its virtual_stages).
    std::vector<std::pair<Schedule, int64_t>> schedules;
    /// Serving sweeps (an inference base config): plans whose time per output token exceeds this many seconds are
    /// rejected (SweepRejection::OverTpotLimit); 0 sets no limit. Training sweeps ignore it.
    double tpotLimitS = 0;
    /// A quick sweep synthesizes in full the plans its reduced programs do not model (quickEstimateModels():
    /// zb1p, dualpipe, dualpipev, a layout, the overlapped all-to-all), at most this many valid ones in enumeration
    /// order; the rest are SweepRejection::NotEstimated. A full synthesis takes up to seconds per plan.
    int64_t fullSynthesisLimit = 64;
    /// Training precisions tried for every plan (training.precision), those the GPU has a dense peak for; empty:
    /// the base config's alone.
    std::vector<Precision> precisions;
    /// MoE: also try every plan with the other setting of the overlapped expert all-to-all
    /// (parallelism.overlap_moe_expert_parallel_comm), where the plan allows it (expert parallelism, virtual stages
    /// or DualPipe when pipelined, no full recompute). Such plans are synthesized in full (fullSynthesisLimit).
    bool tryA2aOverlap = false;
    /// Pipelined plans: also try the other pipeline split, the embedding and the loss counted as layers
    /// (parallelism.account_for_embedding_in_pipeline_split and ..._loss_...: Llama 3's balanced 7 + 14 x 8 + 7)
    /// against the plain split, where the chunks then hold equal layer counts. Where neither split is even (1F1B,
    /// GPipe and interleaved plans of a base without a layout), or the base's uneven first and last stages are
    /// for another pp (they fit no other: DeepSeek-V3's 3 + 14 x 4 + 2), the balanced layout instead
    /// (balancedLayout(): chunks that differ by at most one slot), which an interleaved plan needs to exist at all;
    /// with ZeRO 0-2 only (quickEstimateModels() leaves out layouts under ZeRO 3), and for an MoE model with
    /// dense first layers, in a quick sweep, only a layout whose chunk 0 holds them all.
    bool tryBalancedSplit = false;
};

/// Why a candidate plan was dropped.
enum class SweepRejection : uint8_t
{
    None, ///< the plan fits: it is ranked
    Invalid, ///< the config validator (or the schedule) refuses the combination
    OutOfMemory, ///< the peak memory of some rank exceeds the GPU's HBM
    EstimateFailed, ///< the synthesis or the estimate failed (an internal problem)
    OverTpotLimit, ///< serving: the time per output token exceeds SweepOptions::tpotLimitS
    NotEstimated, ///< a quick sweep past SweepOptions::fullSynthesisLimit plans that need a full synthesis
};

/// One (dp, tp, pp, cp, ep, micro_batch, recompute, zero) combination and its outcome.
struct SweepCandidate
{
    int64_t dp = 1, tp = 1, pp = 1, cp = 1, ep = 1, microBatch = 1;
    Schedule schedule = Schedule::OneFOneB;
    int64_t virtualStages = 1; ///< chunks per rank of the interleaved schedule (1 otherwise)
    Recompute recompute = Recompute::None;
    int zero = 0;
    bool sequenceParallel = false;
    /// Set when the sweep varies it (SweepOptions precisions, tryA2aOverlap, tryBalancedSplit); unset: the base
    /// config's setting.
    std::optional<Precision> precision;
    std::optional<bool> a2aOverlap;
    std::optional<bool> balancedSplit; ///< true: the embedding and the loss counted as layers; false: neither
    /// tryBalancedSplit where neither shorthand split is even: the balanced layout (balancedLayout()) as
    /// parallelism.pipeline_layout; empty otherwise.
    std::string pipelineLayout;
    /// A quick sweep's plan that the quick estimate does not model (quickEstimateModels()): synthesized in full.
    bool fullSynthesis = false;
    SweepRejection rejection = SweepRejection::None;
    std::string reason; ///< e.g. "peak 93.1 GiB > 80.0 GiB HBM", "parallelism.tp: tp=16 does not divide kv_heads=8"
    std::string reasonKey; ///< grouping key of the reason: "memory", the config key path, or "estimate"
    /// Iteration time (fitting and out-of-memory plans); serving: the time per output token, tpotS.
    double stepTimeS = 0;
    double mfu = 0; ///< model FLOPs utilization (PaLM appendix B), fitting plans; serving: 0
    /// Peak memory of the fullest rank (fitting and out-of-memory plans); serving: at the end of the generation
    /// (ServingEstimate::generationPeakBytes).
    int64_t peakBytes = 0;
    // Serving plans (estimateServing()), with a time: ranked, out of memory and over the TPOT limit.
    double ttftS = 0; ///< time to first token
    double tpotS = 0; ///< time per output token, the mean over the generation
    double tokensPerSPerGpu = 0; ///< output tokens per second per GPU over the generation: the ranking key
    double decodeTokensPerSPerGpu = 0; ///< the decode alone
    int64_t maxSequences = 0; ///< the largest inference.batch that fits this plan
    int64_t index = 0; ///< position in the enumeration order
};

/// The rejected plans of one reason key ("memory", a config key path, "estimate", "tpot", "full-synthesis").
struct SweepRejectionGroup
{
    std::string key;
    int64_t count = 0;
    std::string example; ///< the reason of the first such plan in enumeration order
};

/// At most this many fitting plans (the best) and rejected plans (the first) are kept in a SweepResult: a sweep
/// over any number of plans holds a fixed amount of memory (a plan is ~250 bytes: ~25 MB for both lists).
inline constexpr size_t kMaxKeptPlans = 50'000;
/// Plans made and evaluated at a time (the batch is extended to the end of its recompute group).
inline constexpr size_t kSweepBatch = 4096;

/// The outcome of a sweep. `ranked` holds the fitting plans by ascending step time (serving: by descending
/// tokensPerSPerGpu; ties by enumeration order), at most the best kMaxKeptPlans; `rejected` the other plans in
/// enumeration order, at most the first kMaxKeptPlans. `fitting`, `rejectedCount` and `rejections` count them all.
/// Deterministic for a given input, whatever the thread count.
struct SweepResult
{
    bool serving = false; ///< an inference base config: serving plans ranked by throughput
    double tpotLimitS = 0; ///< serving: the limit in force (SweepOptions::tpotLimitS), 0 for none
    std::string gpu;
    int64_t gpus = 0;
    int64_t hbmBytes = 0;
    double peakFlops = 0; ///< dense peak of the training precision
    double computeEfficiency = 0;
    std::string method; ///< "quick" or "exact"
    /// A quick sweep's candidates (not refused by the validator) that it synthesized in full because the quick
    /// estimate does not model them (quickEstimateModels()).
    int64_t synthesizedInFull = 0;
    int64_t candidates = 0; ///< the plans enumerated (countSweepCandidates()); fewer were evaluated when cancelled
    int64_t fitting = 0; ///< fitting plans evaluated, also those beyond `ranked`
    int64_t rejectedCount = 0; ///< rejected plans evaluated, also those beyond `rejected`
    std::vector<SweepRejectionGroup> rejections; ///< by reason key, in order of first appearance
    bool truncated = false; ///< `ranked` or `rejected` holds fewer plans than were evaluated
    std::vector<SweepCandidate> ranked;
    std::vector<SweepCandidate> rejected;
    bool cancelled = false; ///< progress->cancelled() stopped the sweep; the lists are then incomplete
    std::string error; ///< set when the sweep could not run at all (e.g. gpus < 1); lists empty
};

/// `base` with the plan's fields set: parallelism dp, tp, pp, cp, ep, zero, sequence_parallel, schedule,
/// virtual_stages and training micro_batch, recompute, and those the sweep varied (precision, the overlapped
/// all-to-all, the balanced split). Everything else (model, batch, rank order, cluster) stays as
/// in `base`. The config a candidate is evaluated with, and the one the GUI loads when a plan is chosen.
Config sweepPlanConfig(const Config& base, const SweepCandidate& plan);

/// Enumerates every plan for `gpus` GPUs.
///
/// Serving (an inference `base`): every (dp, tp, pp) with dp*tp*pp = gpus (and cp when the plan runs only the
/// prefill, the one phase that splits the prompt), ep dividing dp for MoE models (ep = dp is DeepSeek-style
/// data-parallel attention with expert parallelism); ZeRO 0, no recompute, sequence parallelism and the rest as in
/// `base`. Each plan is validated, synthesized in full and estimated with estimateServing(), rejected when its
/// generation peak (ServingEstimate::generationPeakBytes) exceeds the HBM or its TPOT exceeds
/// sweepOptions.tpotLimitS, and the rest ranked by output tokens per second per GPU, highest first.
///
/// Training: every plan for `gpus` GPUs: all (dp, tp, pp, cp) with dp*tp*pp*cp = gpus, ep dividing dp (MoE
/// models; 1 otherwise), the micro-batch sizes of `sweepOptions`, recompute none/selective/full and ZeRO 0-3
/// (ZeRO > 0 only when dp*cp > 1: it shards over nothing otherwise). Everything else comes from `base` (model,
/// training, schedule, virtual stages, rank order, cluster). Each plan is validated (validateConfig), estimated
/// (quickEstimate(), or synthesize() + estimateStep() with `sweepOptions.exact`), and dropped with a reason when
/// invalid or when its peak memory exceeds the GPU's HBM. Runs on a small thread pool; `progress` (may be null)
/// is called from the calling thread only. Never throws.
SweepResult sweep(const Config& base, int64_t gpus, const GpuSpec& gpu, const EstimateOptions& options,
    ProgressSink* progress = nullptr, const SweepOptions& sweepOptions = {});

/// How many plans sweep() enumerates for these arguments, counted without holding them (the training count grows
/// with the number of ordered factorizations of `gpus` into dp x tp x pp x cp). No estimate is made. 0 for a GPU
/// count out of range.
int64_t countSweepCandidates(const Config& base, int64_t gpus, const SweepOptions& sweepOptions = {});

/// All candidates as JSON: {"gpu", "gpus", "hbm_bytes", "peak_flops", "compute_efficiency", "method",
/// "candidates", "fitting", "rejected_count", "truncated" (only when true), "ranked": [{"rank", "dp", "tp", "pp", "cp",
/// "ep", "micro_batch", "schedule", "virtual_stages", "recompute", "zero", "sequence_parallel", and "precision",
/// "a2a_overlap", "balanced_split", "pipeline_layout" where the sweep varied them, "step_time_s", "mfu",
/// "peak_bytes"}], "rejected":
/// [{..., "reason", "reason_key"}]}. A serving sweep adds "workload": "inference" and "tpot_limit_s" (null for
/// none), and its timed rows hold "ttft_s", "tpot_s", "tokens_per_s_per_gpu", "decode_tokens_per_s_per_gpu",
/// "max_sequences" and "peak_bytes" instead of "step_time_s" and "mfu".
nlohmann::ordered_json sweepJson(const SweepResult& result);

/// The plan's pipeline schedule as the tables show it: "1f1b", "gpipe", "interl. 5" (5 virtual stages per rank),
/// "-" for a plan without pipeline stages.
std::string scheduleText(const SweepCandidate& plan);

/// What the sweep varied of the plan beyond its degrees, for the tables: e.g. "fp8, a2a overlapped, E+L split",
/// "balanced layout" (the layout itself is SweepCandidate::pipelineLayout);
/// empty when nothing was.
std::string variantText(const SweepCandidate& plan);
/// The ranked table (at most `top` rows; all when top <= 0) and a summary of the rejections by reason.
std::string sweepText(const SweepResult& result, int64_t top);

} // namespace stagecraft
