// SPDX-License-Identifier: MIT
#pragma once

#include "estimate/costmodel.h"
#include "estimate/gpuspec.h"
#include "estimate/listschedule.h"
#include "estimate/stepestimate.h"
#include "synthesis/synthesis.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace stagecraft {

/// One decode step on one rank: the step's kernels over every pipeline micro-batch the rank serves (each reads the
/// rank's weights again), what they move through HBM and the time bounds that follows. Bytes per rank, seconds.
/// Plain value type.
struct DecodeStepCost
{
    int64_t contextTokens = 0; ///< positions each sequence attends over: prompt + k in decode step k
    int64_t weightBytes = 0; ///< weights the kernels read (an embedding lookup counts the rows it reads)
    int64_t kvCacheBytes = 0; ///< KV cache the attention kernels read, plus the new position the step writes
    int64_t activationBytes = 0; ///< every other byte the kernels read or write
    int64_t bytes = 0; ///< weightBytes + kvCacheBytes + activationBytes: the sum of the kernels' bytes
    /// bytes / (HBM bandwidth * hbm efficiency): the step's time if it only moved its bytes (memory-bound floor).
    double hbmTimeS = 0;
    /// Sum over the kernels of FLOPs / the kernel model's FLOP rate: its time if it only computed.
    double computeTimeS = 0;
    /// Sum over the kernels of max(compute, memory time) plus the gap after each: the compute stream's busy time.
    double kernelTimeS = 0;
    double kernelGapS = 0; ///< the gaps in kernelTimeS (kernels * cluster.kernel_launch_us)
    int64_t kernels = 0; ///< compute nodes of the step on the rank
};

/// The serving figures of one rank class (pipeline stage). Bytes per rank. Plain value type.
struct ServingClassEstimate
{
    int32_t stage = 0;
    DecodeStepCost firstStep; ///< the generation's first decode step (context prompt + 1)
    DecodeStepCost lastStep; ///< its last (context prompt + output_tokens - 1)
    int64_t weightBytes = 0; ///< resident weights
    /// Peak of the transient memory (activations and communication buffers, not the cache) over the programs:
    /// the prefill's, usually.
    int64_t activationPeakBytes = 0;
    /// KV cache of one sequence at the end of the generation: prompt + output_tokens - 1 positions in whole blocks
    /// (the prompt's only without decode; the rank's share of them under cp).
    int64_t kvCacheBytesPerSequence = 0;
    int64_t generationKvCacheBytes = 0; ///< kvCacheBytesPerSequence * the batch / dp sequences of the replica
    /// weightBytes + activationPeakBytes + generationKvCacheBytes: what the rank must hold when a prefill runs
    /// while every sequence's cache is full (a continuously batching engine admits prompts beside long caches).
    /// At least the programs' own peak.
    int64_t generationPeakBytes = 0;
    /// Sequences of one replica whose generation cache fits beside the weights and the transient peak:
    /// floor((HBM - weightBytes - activationPeakBytes) / kvCacheBytesPerSequence), 0 when nothing fits.
    int64_t maxSequencesPerReplica = 0;
};

/// The serving estimate of one synthesized inference plan: time to first token, time per output token,
/// throughput, what a decode step reads, and how many sequences fit. Seconds, bytes, tokens. Plain value type.
struct ServingEstimate
{
    std::string gpu;
    double peakFlops = 0; ///< dense peak of the precision, per GPU
    double computeEfficiency = 0; ///< of a large GEMM
    double hbmBytesPerS = 0; ///< the datasheet's HBM bandwidth
    int64_t hbmBytes = 0;
    EstimateAssumptions assumptions;
    int64_t batch = 0; ///< inference.batch: concurrent sequences over all replicas
    int64_t replicas = 0; ///< dp
    int64_t worldSize = 0;
    /// Time to first token: from the start (every prompt present at 0) until the last stage has sampled the first
    /// token of every sequence of the batch (the prefill's last sample node ends). 0 without a prefill phase.
    double ttftS = 0;
    /// Time per output token: the mean over the generation's output_tokens - 1 decode steps of the time between two
    /// tokens of one sequence, (tpotFirstS + tpotLastS) / 2 (exact when the step's time is linear in the context,
    /// as its cache reads and attention FLOPs are). 0 without a decode phase.
    double tpotS = 0;
    double tpotFirstS = 0; ///< the step at context prompt + 1
    double tpotLastS = 0; ///< the step at context prompt + output_tokens - 1
    /// ttftS + (output_tokens - 1) * tpotS: the whole generation of the batch (only the phases the plan runs).
    double generationTimeS = 0;
    /// Output tokens per second over the generation, all replicas: batch * output_tokens / generationTimeS (a
    /// prefill-only plan: batch first tokens over ttftS; decode-only: batch * (output_tokens - 1) over its decode).
    double tokensPerS = 0;
    double tokensPerSPerReplica = 0; ///< tokensPerS / dp
    double tokensPerSPerGpu = 0; ///< tokensPerS / world size
    /// batch / tpotS / world size: the decode alone, the rate a continuously batching engine approaches.
    double decodeTokensPerSPerGpu = 0;
    double programsTimeS = 0; ///< when the synthesized programs' last node ends (the schedule's span)
    int32_t decodeStage = 0; ///< the class whose last decode step takes longest at HBM speed (the summary's)
    /// The largest inference.batch (a multiple of inferenceBatchStep()) whose every class fits: dp times the
    /// smallest maxSequencesPerReplica, rounded down to the step; 0 when not even one step fits.
    int64_t maxSequences = 0;
    int64_t generationPeakBytes = 0; ///< the largest ServingClassEstimate::generationPeakBytes
    std::vector<ServingClassEstimate> classes; ///< index = stage
};

/// The decode step at the generation's mean context: each figure the mean of `c.firstStep` and `c.lastStep` (a
/// step's bytes and times grow linearly with its context, see ServingEstimate::tpotS). Pure.
DecodeStepCost meanDecodeStep(const ServingClassEstimate& c);

/// KV cache per rank of class `cls` when every sequence has sampled its last token: the programs' cache
/// (ClassSummary::kvCacheBytes) per position, times prompt + output_tokens - 1 positions (the prompt's only without
/// a decode phase; this rank's share under cp) in whole blocks of inference.block_size. 0 for a training result or
/// a class out of range. Pure; thread-safe.
int64_t generationKvCacheBytes(const SynthesisResult& result, size_t cls);

/// Estimates serving `result` (an inference config's synthesis) on `gpu` with the list scheduler and kernel and
/// collective models of estimateStep() (listSchedule(), nodeTimeS()).
///
/// TTFT comes from the schedule of `result`'s own programs. The decode steps of the programs are the first few of
/// the generation, so each TPOT end point comes from a decode-only probe synthesis at that context: decode steps
/// 1..3 against a resident prompt of context - 3 positions (at least 1: a prompt under 3 tokens is probed at
/// context 4); its step 3, whose micro-batches have each passed every stage and sent their token back to stage 0
/// twice (the pipeline's steady state), is measured as the time between the sampling of steps 2 and 3, averaged
/// over the micro-batches. With pp micro-batches in flight that is the
/// larger of pp times the slowest stage and one round trip of a micro-batch through every stage and back.
/// Memory: see ServingClassEstimate. Returns false and sets `error` for a training config, an unknown precision
/// peak, or a failed probe. Never throws. Thread-safe (reads `result`; the probes are its own).
/// `schedule`, when not null, receives the schedule of `result`'s programs (as estimateStep() gives it).
bool estimateServing(const SynthesisResult& result, const GpuSpec& gpu, const EstimateOptions& options,
    ServingEstimate& out, std::string& error, EstimateSchedule* schedule = nullptr);

/// estimateServing()'s time to first token of `result`'s own programs alone (no decode probe). Returns false and
/// sets `error` for a training result or an unknown precision peak. Thread-safe.
bool timeToFirstTokenS(const SynthesisResult& result, const GpuSpec& gpu, const EstimateOptions& options, double& ttftS,
    std::string& error);

/// Resident weight bytes of a rank of class `cls` as served: ClassSummary::weightBytes, less half of the share of
/// them that FP8 GEMMs read (fp8Gemm(): every projection but the LM head and the router) when
/// inference.weight_dtype is fp8, the share taken over the whole model's weight tensors. Pure.
int64_t servedWeightBytes(const SynthesisResult& result, size_t cls);

/// The time between two tokens of a sequence in a decode step at `context` positions of `config`'s plan and batch,
/// measured as estimateServing() measures its TPOT end points (a decode-only probe synthesis). `graph` caches the
/// probe's model graph between calls of one model. Returns false and sets `error` when the probe fails. Thread-safe.
bool probeDecodeStepTime(const Config& config, int64_t context, const GpuSpec& gpu, const EstimateOptions& options,
    std::shared_ptr<const ModelGraph>& graph, double& stepTimeS, std::string& error);

/// The estimate as JSON, for the report's `estimate` object: {"gpu", "peak_flops", "compute_efficiency",
/// "hbm_bandwidth_gbps", "assumptions": {as estimateJson()}, "ttft_s", "tpot_s", "tpot_first_s", "tpot_last_s",
/// "generation_time_s", "tokens_per_s", "tokens_per_s_per_replica", "tokens_per_s_per_gpu",
/// "decode_tokens_per_s_per_gpu", "max_sequences", "generation_peak_bytes", "decode": {"stage", "first_step",
/// "last_step"}} with each step {"context_tokens", "bytes", "weight_bytes", "kv_cache_bytes", "activation_bytes",
/// "hbm_time_s", "compute_time_s", "kernel_time_s", "kernel_gap_s", "kernels"}, and "classes": [{"stage",
/// "kv_cache_bytes_per_sequence", "generation_kv_cache_bytes", "generation_peak_bytes",
/// "max_sequences_per_replica", "decode_bytes_per_step", "decode_hbm_time_s"}] (the last two at the mean context).
nlohmann::ordered_json servingEstimateJson(const ServingEstimate& estimate);

/// Whether the plan can run as configured: its inference.batch fits (maxSequences >= batch) and its generation peak
/// is within the GPU's HBM. A plan that does not still has times (those of a GPU with enough memory), which the
/// text and JSON mark ("fits": false). Pure.
bool servingPlanFits(const ServingEstimate& e);
/// Why the plan does not fit, one clause: "inference.batch 2147483647 needs 1.2 TiB per rank ..., more than the 80.0
/// GiB of HBM (at most 0 concurrent sequences fit)". Pure.
std::string servingMisfitText(const ServingEstimate& e);

/// Lines of text for `stagecraft report`: TTFT, TPOT, throughput, the decode step's bytes and time bounds, the
/// memory bound on sequences; each ends in a newline.
std::string servingEstimateText(const ServingEstimate& estimate);

} // namespace stagecraft
