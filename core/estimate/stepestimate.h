// SPDX-License-Identifier: MIT
#pragma once

#include "estimate/costmodel.h"
#include "estimate/gpuspec.h"
#include "estimate/kernelsources.h"
#include "estimate/listschedule.h"
#include "synthesis/synthesis.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace stagecraft {

/// Timing of one rank class (pipeline stage) over one iteration, seconds unless noted.
struct ClassEstimate
{
    int32_t stage = 0;
    double stepTimeS = 0; ///< when the class's last node finishes (the iteration starts at 0 on every rank)
    double computeTimeS = 0; ///< busy time of the compute stream (sum of compute node times)
    double communicationTimeS = 0; ///< busy time of the communication stream (collectives and sends)
    /// Time the communication stream is busy while the compute stream is idle: the communication on the
    /// critical path of this rank, not hidden behind compute.
    double exposedCommunicationS = 0;
    /// Pipeline bubble: the share of the pipeline period [0, pipelineTimeS] during which this rank neither
    /// computes nor communicates (it waits for a pipeline neighbour). With negligible communication and equal
    /// stages this is Narayanan et al. 2021 §2.2's (p-1)/(m+p-1) for GPipe and 1F1B, (p-1)/(v*m+p-1) interleaved.
    double bubbleFraction = 0;
    double flops = 0; ///< FLOPs of one rank of the class (incl. recompute), for HFU
};

/// What an estimate assumed: the rates and switches in force, for the report and the Overview to state.
struct EstimateAssumptions
{
    double gemmEfficiency = 0; ///< of a large GEMM; tile, wave and K-depth losses come on top
    double flashForwardEfficiency = 0;
    double flashBackwardEfficiency = 0;
    double hbmEfficiency = 0;
    double intraNodeGBps = 0; ///< achieved: link * efficiency
    double interNodeGBps = 0;
    double intraNodeLatencyUs = 0;
    double interNodeLatencyUs = 0;
    bool overlapGradReduce = false;
    bool overlapParamGather = false;
    bool tpCommOverlap = false;
    /// Of a serving estimate: assumptionsText() then names only what serving runs (no backward, no gradient
    /// reduction, no parameter gather).
    bool serving = false;
};

/// The assumptions of `rates`.
EstimateAssumptions assumptionsOf(const HardwareRates& rates);

/// Two lines of text: "kernels: GEMM 0.86 of peak (less tile/wave/K losses), FlashAttention fwd 0.60 / bwd 0.50,
/// memory-bound 0.85 of HBM" and "links: 207 GB/s in a node, 22.5 GB/s across (5 / 10 us a step); overlap: ...".
std::string assumptionsText(const EstimateAssumptions& a);

/// The step-time estimate of one synthesized plan.
struct StepEstimate
{
    std::string gpu;
    double peakFlops = 0; ///< dense peak of the training precision, per GPU
    double computeEfficiency = 0; ///< of a large GEMM
    EstimateAssumptions assumptions;
    double iterationTimeS = 0; ///< the slowest class's step time
    /// End of the iteration's last forward/backward computation on any rank (the pipeline flush); the period
    /// over which bubbles are measured. The gradient reduction tail and the optimizer step come after it.
    double pipelineTimeS = 0;
    /// Model FLOPs utilization (PaLM, Chowdhery et al. 2022, appendix B): model FLOPs of one iteration (forward
    /// and backward of every micro-batch, no recompute, no optimizer) / (world * peak * iteration time).
    double mfu = 0;
    /// Hardware FLOPs utilization: every FLOP the ranks execute (recompute, replicated work and the optimizer
    /// included) / (world * peak * iteration time).
    double hfu = 0;
    double modelFlops = 0; ///< numerator of the MFU
    double tokensPerS = 0; ///< global_batch * seq_len / iteration time
    std::vector<ClassEstimate> classes; ///< index = stage
    /// Which source timed the program's nodes per op class (cluster.kernel_table or the model).
    KernelSourceCounts kernelSources;
};

/// Simulates one iteration of `result` on `gpu` and returns per-class timings.
///
/// Method: every class is represented by its example rank. Its program is list-scheduled in node order on four
/// streams: compute, collectives (tensor, context, expert parallel), data-parallel collectives (their own
/// communicator, as in Megatron-LM) and pipeline sends; as ASTRA-sim's system layer does it for its streams:
/// a node starts when all its data and control dependencies have finished and the previous node of its stream has
/// finished; a recv occupies no stream and completes when the matching send (same tag, on the peer stage) has
/// completed, which couples the pipeline stages and yields the bubbles. All classes are simulated together
/// (O(total nodes)). Node times (nodeTimeS): compute = roofline with the op's kernel rate (kernelmodel.h),
/// collectives = NCCL-like ring or hierarchical cost (hierarchicalCollectiveTimeS), send = bytes / bandwidth +
/// latency with the bandwidth of the peer's placement. Overlaps (parallelism.overlap_*): without
/// overlap_grad_reduce the once-per-iteration gradient reduction starts after the stage's last backward kernel;
/// with overlap_param_gather the parameter all-gathers after the optimizer do not end the iteration.
/// Returns false and sets `error` when a recv has no matching send, the stages deadlock, or the GPU has no peak
/// for the precision. Never throws. Thread-safe (reads `result` only).
/// When `schedule` is not null it receives the start and end of every node (see EstimateSchedule); it is left
/// untouched on failure. A null `schedule` costs nothing.
/// A compressed result (SynthesisResult::compression) is estimated on its kept programs and on its probe, and
/// every time is extended to the full iteration (MicroBatchCompression::extend); `schedule` is the kept programs'.
bool estimateStep(const SynthesisResult& result, const GpuSpec& gpu, const EstimateOptions& options, StepEstimate& out,
    std::string& error, EstimateSchedule* schedule = nullptr);

/// The rates the estimates time `result`'s programs with on `gpu`: hardwareRates() with the plan's per-op FLOP rates
/// (withOpRates()) and, with cluster.kernel_table, the measured times (withKernelTable(); a table that cannot be read
/// is an error). Returns false and sets `error` when the GPU has no peak for the precision or a rate is not
/// positive. Never throws but std::bad_alloc.
bool planRates(const SynthesisResult& result, const GpuSpec& gpu, const EstimateOptions& options, HardwareRates& rates,
    std::string& error);

/// The GPU preset named by config.cluster.gpu, or nullopt with `error` = unknownGpuMessage().
std::optional<GpuSpec> gpuForConfig(const Config& config, std::string& error);

/// `a` as JSON: {"gemm_efficiency", "flash_forward_efficiency", "flash_backward_efficiency", "hbm_efficiency",
/// "intra_node_gbps", "inter_node_gbps", "intra_node_latency_us", "inter_node_latency_us", "overlap_grad_reduce",
/// "overlap_param_gather", "tp_comm_overlap"} (the report's `estimate.assumptions`).
nlohmann::ordered_json assumptionsJson(const EstimateAssumptions& a);

/// The estimate as JSON: {"gpu", "peak_flops", "compute_efficiency", "iteration_time_s", "pipeline_time_s",
/// "mfu", "hfu", "tokens_per_s", "assumptions": {"gemm_efficiency", "flash_forward_efficiency",
/// "flash_backward_efficiency", "hbm_efficiency", "intra_node_gbps", "inter_node_gbps", "intra_node_latency_us",
/// "inter_node_latency_us", "overlap_grad_reduce", "overlap_param_gather", "tp_comm_overlap"}, "kernel_sources":
/// kernelSourcesJson(), "classes": [{"stage",
/// "step_time_s", "compute_time_s", "communication_time_s", "exposed_communication_s", "bubble_fraction"}]}. The class
/// keys are meant to be merged into the report's `classes` rows (DESIGN.md §4 "step_time_s").
nlohmann::ordered_json estimateJson(const StepEstimate& estimate);

/// Measure of the union of `a` minus `b`, for sorted, disjoint interval lists [start, end). Exposed for tests.
double uncoveredTime(const std::vector<std::pair<double, double>>& a, const std::vector<std::pair<double, double>>& b);

} // namespace stagecraft
