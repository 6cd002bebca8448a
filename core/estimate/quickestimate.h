// SPDX-License-Identifier: MIT
#pragma once

#include "estimate/costmodel.h"
#include "estimate/gpuspec.h"
#include "model/modelgraph.h"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace stagecraft {

/// The most forward and backward units (micro-batches x pipeline chunks x 2) the quick estimate replays: at most
/// about 42 MB of schedule per call (12 bytes of order and 8 of output a unit), e.g. 13,107 micro-batches through
/// 80 chunks (pp 16 x 5 virtual stages). Past it, quickEstimate() refuses the plan with a reason.
inline constexpr int64_t kMaxQuickScheduleUnits = int64_t { 1 } << 21;

/// Model graphs by model config and precision, shared between threads (the sweep's reduced programs need graphs
/// with few layers; building one costs milliseconds). Thread-safe.
class ModelGraphCache
{
public:
    /// The graph of `model` in `precision`, built on first use.
    std::shared_ptr<const ModelGraph> get(const ModelConfig& model, Precision precision);

private:
    struct Entry
    {
        ModelConfig model;
        Precision precision;
        std::shared_ptr<const ModelGraph> graph;
    };
    std::mutex m_mutex;
    std::vector<Entry> m_entries;
};

struct DistributionPlan;

/// Reduced plans kept between quickEstimate() calls of one thread. Planning does not depend on the recompute
/// policy or on ZeRO stages 0-2 (only the program builder reads them), so plans that differ only in these are
/// planned once. Holds the last few plans. Not thread-safe: one per thread.
class ReducedPlanCache
{
public:
    ReducedPlanCache();
    ~ReducedPlanCache();
    ReducedPlanCache(const ReducedPlanCache&) = delete;
    ReducedPlanCache& operator=(const ReducedPlanCache&) = delete;

    /// The plan of `config` (recompute aside), its config's recompute set to `config`'s; null when not held.
    DistributionPlan* find(const Config& config);
    /// Keeps `plan` for `config` and returns it.
    DistributionPlan* store(const Config& config, DistributionPlan plan);
    /// withOpRates(rates, *plan, gpu, options) for a plan this cache holds: the per-op rates are computed once per
    /// plan (the recompute variants share them: they depend on the ops' local shapes, the GPU and the precision).
    HardwareRates planRates(
        const DistributionPlan* plan, const HardwareRates& rates, const GpuSpec& gpu, const EstimateOptions& options);

private:
    static bool samePlan(const Config& a, const Config& b);
    struct Entry
    {
        Config config;
        std::unique_ptr<DistributionPlan> plan;
        /// planRates(): what the per-op rates were computed from, and them (null until asked).
        const GpuSpec* gpu = nullptr;
        double peakFlops = 0;
        KernelEfficiency kernels {};
        double flatComputeEfficiency = 0;
        std::shared_ptr<const std::vector<double>> opFlopRate {}, opByteScale {};
    };
    std::vector<Entry> m_entries;
};

/// Step time and peak memory of a plan, estimated from reduced programs instead of the full synthesis.
struct QuickEstimate
{
    double iterationTimeS = 0;
    int64_t peakBytes = 0; ///< max over stages
    std::vector<int64_t> stagePeakBytes; ///< per pipeline stage
    int64_t reducedNodes = 0; ///< nodes synthesized for the estimate (cost indicator)
};

/// The sweep's shortcut: estimates `config` without synthesizing its full programs (whose size is
/// micro-batches x layers, up to millions of nodes), in three reductions, each exact for the model's structure:
///  1. Layers: a program is affine in the number of decoder layers per pipeline chunk (every layer adds the same
///     nodes, buffers and resident state), so programs with k = 1 and k = 2 layers per chunk (2 to 4 where a
///     layer's change differs from the first one on: ZeRO 2/3, MoE, the embedding or loss counted as a layer) are
///     built and every per-unit figure is extrapolated linearly to the chunk's real layer count (uneven splits
///     included). Interleaved ZeRO 2/3 plans of more than three chunks per stage are reduced to three: the first,
///     one for every chunk between, the last.
///  2. Stages: only three stage types differ (the first holds the embedding, the last the head and loss, the
///     others only layers): the reduced plan has min(pp, 3) stages, and its middle stage stands for stages
///     1..pp-2 (communication placement of the real rank; pipeline peers re-placed per real stage).
///  3. Micro-batches: the reduced programs run one micro-batch (an interleaved one holds the units of the last of
///     its pp): a forward unit, the last backward (which carries the data-parallel gradient reduction of ZeRO 0/1)
///     and the iteration tail (optimizer, parameter gathers); a regular backward is the last one without the nodes
///     of that once-per-iteration reduction.
/// Each unit of the reduced programs is simulated alone with estimateStep's stream model. A unit is a max-plus
/// system of four inputs (its stage's compute stream free, its communication stream free, its input's arrival,
/// and the end of the last compute kernel before it, which a collective at its head waits for while a blocking
/// send still holds the compute stream), so one run gives each of its end times (compute, last kernel,
/// communication, output sent) exactly as a max of the inputs plus constants; the memory effect is its net bytes
/// left allocated and its peak above the bytes live at its start. The real schedules (scheduleOrder for pp, v, m)
/// are then replayed unit by unit across all stages in O(pp * m * v), under ZeRO 2/3 with the program's reduction
/// barrier (the first compute of another micro-batch waits for the gradient reductions of the backwards before
/// it); memory is the resident state plus the running sum of units' net bytes and their peaks.
/// What this does not reproduce: overlap across unit boundaries beyond those inputs, figures that are not linear
/// in a chunk's layers beyond the reduced plans' two to four (a backward whose gradient reductions outlast its
/// compute there but not in the real plan: its extrapolated communication end is only kept its trailing
/// reductions behind its last kernel), and the per-rank placement of collectives of middle stages other than
/// stage 1.
/// Agreement with the full synthesis + estimateStep is tested on small plans (tst_sweep). Returns false with
/// `error` when the reduced plan cannot be built. Never throws. Thread-safe when threads share `graphs` and each
/// passes its own `plans` (optional: reuses the reduced plans of the previous calls).
/// Whether quickEstimate() models the plan: not the split-backward schedules (zb1p, dualpipe, dualpipev), the
/// overlapped expert all-to-all, or a pipeline_layout other than of the shorthand splits' form (the embedding
/// opening chunk 0, the MTP modules and the loss closing the last chunk, no empty chunk; any layer counts), whose
/// reduced programs it cannot extrapolate. A layout's stage types are extrapolated each by its own layer change.
/// Nor a pipelined MoE model whose dense first layers (model.first_dense_layers, DeepSeek-V3's 3) do not all fit in
/// pipeline chunk 0, from which the reduced plans measure that chunk.
bool quickEstimateModels(const Config& config);

bool quickEstimate(const Config& config, const GpuSpec& gpu, const EstimateOptions& options, ModelGraphCache& graphs,
    QuickEstimate& out, std::string& error, ReducedPlanCache* plans = nullptr);

} // namespace stagecraft
