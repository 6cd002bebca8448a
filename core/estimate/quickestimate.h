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
///     nodes, buffers and resident state), so programs with k = 1 and k = 2 layers per chunk are built and every
///     per-unit figure is extrapolated linearly to the chunk's real layer count (uneven splits included).
///  2. Stages: only three stage types differ (the first holds the embedding, the last the head and loss, the
///     others only layers): the reduced plan has min(pp, 3) stages, and its middle stage stands for stages
///     1..pp-2 (communication placement of the real rank; pipeline peers re-placed per real stage).
///  3. Micro-batches: the reduced programs run min(m, 2) micro-batches (pp for interleaved, which needs m % pp
///     == 0), enough to see each kind of schedule unit: a forward, a backward, the last backward (which carries
///     the data-parallel gradient reduction of ZeRO 0/1) and the iteration tail (optimizer, parameter gathers).
/// Each unit of the reduced programs is simulated alone (estimateStep's two-stream model) giving its compute end,
/// communication end and busy time, output time (its send), and its memory effect (net bytes it leaves allocated,
/// peak above the bytes live at its start). The real schedules (scheduleOrder for pp, v, m) are then replayed
/// unit by unit: a unit starts when its stage's compute stream is free and its input arrived from the
/// neighbouring stage; memory is the resident state plus the running sum of units' net bytes and their peaks.
/// Agreement with the full synthesis + estimateStep is tested on small plans (tst_sweep). Returns false with
/// `error` when the reduced plan cannot be built. Thread-safe when each thread passes the same `graphs`.
bool quickEstimate(const Config& config, const GpuSpec& gpu, const EstimateOptions& options, ModelGraphCache& graphs,
    QuickEstimate& out, std::string& error);

} // namespace stagecraft
