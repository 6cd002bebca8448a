// SPDX-License-Identifier: MIT
#pragma once

#include "config/config.h"
#include "config/diagnostic.h"
#include "config/programsize.h"
#include "memory/memorytimeline.h"
#include "mesh/mesh.h"
#include "model/modelcost.h"
#include "model/modelgraph.h"
#include "program/distributionplan.h"
#include "program/program.h"
#include "synthesis/progress.h"

#include <array>
#include <memory>
#include <string>
#include <vector>

namespace stagecraft {

/// Per-rank-class figures for one iteration (the report's `classes` rows). Bytes per rank.
struct ClassSummary
{
    int32_t stage = 0;
    int64_t ranks = 0;
    RankId exampleRank {};
    int64_t flops = 0; ///< all compute nodes of one rank, one iteration
    int64_t matmulFlops = 0; ///< the matmul / attention-contraction part of `flops`
    /// The part of `flops` that other ranks compute too (identical values): flops * (1 - 1/replication) summed
    /// over nodes. Sum over ranks of (flops - replicatedFlops) is the single-device work.
    int64_t replicatedFlops = 0;
    int64_t replicatedMatmulFlops = 0;
    int64_t nodes = 0;
    std::array<int64_t, kCollectiveTypeCount> collectiveBytes {}; ///< sum of comm_size per collective type
    std::array<int64_t, kCollectiveTypeCount> collectiveCount {};
    int64_t sendBytes = 0;
    int64_t recvBytes = 0;
    int64_t sendCount = 0;
    int64_t recvCount = 0;
    // Memory per rank (bytes), from the class's memory timeline.
    int64_t weightBytes = 0; ///< resident weights (compute copy; a ZeRO-3 shard)
    int64_t gradientBytes = 0; ///< resident gradients
    int64_t optimizerBytes = 0; ///< fp32 master weights and Adam moments (sharded by ZeRO >= 1)
    int64_t activationPeakBytes = 0; ///< peak of non-resident memory (activations, their gradients, buffers)
    /// Inference: the KV cache a rank holds at the end of its programs (prompt + decode_steps positions of each of
    /// its sequences, in whole blocks; every pipeline micro-batch); 0 for training.
    int64_t kvCacheBytes = 0;
    int64_t peakBytes = 0; ///< peak of the total
    int64_t peakStep = 0; ///< program node at which the peak first occurs
};

struct SynthesisResult;

/// How a compressed result (SynthesisOptions::compressMicroBatches) stands for the full iteration. Its programs
/// hold only the first `keptMicroBatches` of the iteration's `microBatches` micro-batches: enough for the pipeline
/// schedule to fill, run its steady state and drain. Past that count every further `period` micro-batches add the
/// same nodes (one more pass of the steady state), so every additive figure of the full iteration is
/// kept + repeats() * (probe - kept), where `probe` is the same plan synthesized with one period more.
/// Immutable; thread-safe to read.
struct MicroBatchCompression
{
    int64_t microBatches = 0; ///< m: micro-batches per rank of the iteration the result describes
    int64_t keptMicroBatches = 0; ///< m1 < m: micro-batches 0 .. m1-1 are in the programs
    int64_t period = 1; ///< the steady state repeats every `period` micro-batches (pp for interleaved, else 1)
    /// The plan with keptMicroBatches + period micro-batches (its config's global_batch says so), uncompressed,
    /// without memory series. Used to extend the step-time estimate and per-pair bytes.
    std::shared_ptr<const SynthesisResult> probe;

    /// (m - m1) / period: how many periods the kept programs leave out. Exact: m - m1 is a multiple of period.
    int64_t repeats() const
    {
        return (microBatches - keptMicroBatches) / period;
    }
    /// kept + repeats() * (probe - kept), the full iteration's value of a figure affine in the micro-batch count.
    double extend(double kept, double probed) const
    {
        return kept + static_cast<double>(repeats()) * (probed - kept);
    }
};

/// The immutable outcome of one synthesis. Shared as std::shared_ptr<const SynthesisResult> between the worker
/// and every view; never modified after synthesize() returns.
struct SynthesisResult
{
    Config config;
    std::shared_ptr<const ModelGraph> graph;
    ModelCost cost; ///< unsharded totals (params, FLOPs per iteration)
    std::shared_ptr<const DistributionPlan> plan;
    std::vector<ClassProgram> classes; ///< one per pipeline stage, index = stage
    /// Parallel to `classes`. Always the full iteration's figures, also when `compression` is set (then FLOPs,
    /// nodes and bytes are extended exactly, and the memory figures are the kept programs', which equal the full
    /// ones: 1F1B and interleaved schedules bound the micro-batches in flight).
    std::vector<ClassSummary> summaries;
    std::vector<MemoryTimeline> memory; ///< parallel to `classes` (of the kept programs when compressed)
    GroupTable groups; ///< communicator groups used by the programs
    std::vector<Diagnostic> warnings; ///< e.g. vocabulary padded for tp
    /// Set when `classes` hold fewer micro-batches than the iteration (SynthesisOptions::compressMicroBatches);
    /// null for a full result. Anything that needs every node (export, a full dump) must synthesize `config`
    /// without compression first.
    std::shared_ptr<const MicroBatchCompression> compression;

    bool compressed() const
    {
        return compression != nullptr;
    }
    const Mesh& mesh() const
    {
        return plan->mesh;
    }
    int64_t worldSize() const
    {
        return plan->mesh.worldSize();
    }
    /// The class (index into `classes`) of a rank: its pipeline stage.
    int32_t classOf(RankId rank) const
    {
        return static_cast<int32_t>(plan->mesh.coords(rank)[4]);
    }
    /// Communicator group id of a collective node on `rank`.
    int64_t groupIdOf(const ProgramNode& node, RankId rank) const
    {
        return groups.groupId(node.mask, rank);
    }
    /// Peer rank of a send/recv node on `rank`.
    RankId peerOf(const ProgramNode& node, RankId rank) const
    {
        return plan->mesh.withCoordinate(rank, Axis::Pp, node.peerStage);
    }
};

struct SynthesisOutcome
{
    std::shared_ptr<const SynthesisResult> result; ///< null on failure or cancel
    std::vector<Diagnostic> diagnostics; ///< errors (failure) and warnings
    bool cancelled = false;
};

/// How synthesize() works, not what it computes.
struct SynthesisOptions
{
    /// Keep each class's memory series (live bytes per node and category, 40 bytes a node), which the memory
    /// views draw. Without it MemoryTimeline::series is empty and only its peaks and totals are set: enough for
    /// reports and exports, and a sixth less memory.
    bool memorySeries = true;
    /// Threads that build stage programs at once: 0 for one per hardware thread, 1 to build them in the calling
    /// thread only (a sweep already runs one synthesis per thread).
    int threads = 0;
    /// The interactive path: with the 1F1B and interleaved schedules, build only as many micro-batches as the
    /// schedule needs to reach and leave its steady state (config/programsize.h compressedMicroBatches()), plus a probe
    /// one period longer, and extend the summaries exactly to the iteration (see MicroBatchCompression). Such a plan is
    /// then limited by the nodes actually built, not by its micro-batch count. GPipe (whose memory grows with the
    /// micro-batches) and plans with few micro-batches are synthesized in full. Exports need a full result.
    bool compressMicroBatches = false;
};

/// The single entry point: config -> model graph -> distribution -> class programs -> summaries.
/// Validates the config first (all problems reported). Never throws; an internal failure becomes an error
/// diagnostic. `progress` may be null. Thread-safe: concurrent calls share nothing mutable.
/// `graphCache`, when given and built for the same model and precision, is reused instead of rebuilding the
/// symbolic graph (a new tp re-evaluates the graph, it does not rebuild it).
/// Stage programs are built in parallel (options.threads) when the plan is large enough to gain from it; the
/// result is the same either way.
SynthesisOutcome synthesize(const Config& config, ProgressSink* progress = nullptr,
    std::shared_ptr<const ModelGraph> graphCache = nullptr, const SynthesisOptions& options = {});

} // namespace stagecraft
