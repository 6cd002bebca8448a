// SPDX-License-Identifier: MIT
#pragma once

#include "config/config.h"
#include "mesh/mesh.h"
#include "model/modelgraph.h"
#include "program/program.h"
#include "program/stageplan.h"
#include "sharding/shardingstrategy.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace stagecraft {

/// Everything about a plan that every rank class shares, evaluated once: local layouts and byte sizes of all
/// tensors, local FLOPs and bytes of all ops, the layout each op expects of each input, and where (which chunk)
/// every op runs. Building it is O(graph); building a class program from it is O(nodes of that class).
/// Immutable after planDistribution(); thread-safe to read.
struct DistributionPlan
{
    Config config;
    std::shared_ptr<const ModelGraph> graph;
    Mesh mesh;
    ShardingStrategy strategy;
    ExtentTable extents;
    StagePlan stages;
    int32_t microBatches = 1;

    std::vector<Layout> tensorLayout; ///< as produced (activations), home (weights)
    std::vector<int64_t> tensorBytes; ///< local bytes in tensorLayout
    std::vector<int32_t> producerOp; ///< first op writing each tensor, -1 for weights and inputs
    std::vector<std::vector<int32_t>> remoteStages; ///< per tensor: stages other than the producer's reading it
    std::vector<int64_t> opFlops; ///< local FLOPs of one execution
    std::vector<int64_t> opBytes; ///< local bytes read and written by one execution
    /// How many ranks compute the same values: the product of the degrees of the spatial axes that split none
    /// of the op's iteration indices (norms under tensor parallelism without sequence parallelism: tp).
    std::vector<int64_t> opReplication;
    std::vector<std::vector<Layout>> inputLayouts; ///< per op, per input: the layout the op expects
    std::vector<int32_t> opChunk; ///< global pipeline chunk of each op

    /// Local bytes of `tensor` in `layout` (split dims divided, flat shards divided rounding up), at
    /// elementBytes(tensor) per element.
    int64_t localBytes(TensorId tensor, const Layout& layout) const;
    /// Bytes per element of `tensor` as a rank stores it. A weight gradient lives in the main-gradient buffer that
    /// the backward weight-gradient kernel accumulates into (`training.main_grad_dtype`, Megatron-LM's
    /// `main_grad`), whatever its graph dtype; every other tensor has its graph dtype.
    int elementBytes(TensorId tensor) const;
    /// Bytes per element of the data-parallel gradient all-reduce / reduce-scatter (`training.grad_reduce_dtype`).
    int gradReduceElementBytes() const
    {
        return bytesPerElement(config.training.gradReduceDtype);
    }
    /// Bytes the data-parallel reduction of weight gradient `grad` moves when `storedBytes` of it (at
    /// elementBytes(grad) per element) take part: the same elements at gradReduceElementBytes() each.
    int64_t gradReduceBytes(TensorId grad, int64_t storedBytes) const
    {
        return storedBytes / elementBytes(grad) * gradReduceElementBytes();
    }
};

/// Tokens each routed expert of the hottest rank receives, as a multiple of the uniform mean
/// Batch*Seq*KExperts/Experts. All ranks of a pipeline stage share one program, so the program models the rank
/// that receives the most: planDistribution() scales the Capacity extent by this factor, and that rank's expert
/// GEMMs, expert activations and dispatch/combine all-to-alls follow it, while ModelCost (parameters, the model
/// FLOPs of MFU) stays uniform. The factor is model.moe_routing_imbalance f, capped by the capacity factor c when
/// c > 0 (Megatron-LM drops the tokens over capacity; padding every expert to capacity,
/// moe_pad_expert_input_to_capacity, is not modelled) and by what the experts of one rank can receive at all:
/// min(ep, experts/top_k) times the mean (a token reaches an expert at most once, and the other ep - 1 ranks may
/// receive none). So min(f, c, min(ep, experts/top_k)); 1 for dense models. Thread-safe.
double hottestExpertLoad(const Config& config);

/// Evaluates the plan. Returns nullopt and sets `error` when an extent is not an integer or overflows.
std::optional<DistributionPlan> planDistribution(
    const Config& config, std::shared_ptr<const ModelGraph> graph, std::string& error);

/// Builds the program of pipeline stage `stage`: the stage's chunks for every micro-batch in schedule order,
/// collectives inferred on every edge whose layouts differ, send/recv at the stage cuts, gradient reduction
/// and the optimizer step. Deterministic.
/// With `names` false the nodes have empty names (everything else identical): for estimates that read no names,
/// since composing them is a tenth of the build time.
/// `order`, when given, replaces the stage's schedule order (scheduleOrder() of the plan): the units to emit, in
/// that order. The quick estimate passes a subset of the real order (the units it profiles); a weight layer's
/// gradients count as complete once every micro-batch of `order` that runs its chunk has written them.
/// `unitStarts`, when given, receives per unit of the order the index of the first node its emission added (units
/// are emitted one after the other: unit k's nodes are [unitStarts[k], unitStarts[k + 1]), the last unit's up to
/// the gradient reductions deferred to the iteration's end and the optimizer).
ClassProgram buildClassProgram(const DistributionPlan& plan, int32_t stage, bool names = true,
    const std::vector<ScheduleUnit>* order = nullptr, std::vector<uint32_t>* unitStarts = nullptr);

/// Deterministic send/recv tag of a tensor instance: the same on both ends, unique per (tensor, micro-batch).
int32_t p2pTag(const DistributionPlan& plan, int32_t tensor, int32_t microBatch);

} // namespace stagecraft
