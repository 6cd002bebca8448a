// SPDX-License-Identifier: MIT
#pragma once

#include "estimate/fabric.h"
#include "estimate/gpuspec.h"
#include "estimate/kernelmodel.h"
#include "estimate/kerneltable.h"
#include "estimate/ncclmodel.h"
#include "mesh/mesh.h"
#include "program/program.h"

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

namespace stagecraft {

struct DistributionPlan;
class CommPlacement;

/// Knobs of the step-time estimate that the config does not hold. Plain value type. (The kernel efficiencies,
/// bandwidths, efficiencies of the links, latencies and overlaps are config keys: cluster.*, parallelism.overlap_*.)
struct EstimateOptions
{
    /// When > 0, every compute kernel runs at this fraction of peak instead of the per-kernel model (a flat
    /// roofline, as ASTRA-sim's analytical backend computes): for comparisons with such simulators.
    double flatComputeEfficiency = 0;
};

/// The resolved hardware rates one estimate uses. Bandwidths in bytes/s as achieved (the link times its
/// efficiency); FLOP/s dense.
struct HardwareRates
{
    double peakFlops = 0; ///< dense peak of the training precision
    double computeEfficiency = 0.5; ///< of a large GEMM (the per-op rates refine it)
    KernelEfficiency kernels;
    double hbmBytesPerS = 0; ///< HBM bandwidth as a memory-bound kernel reaches it (datasheet * kernels.hbm)
    double intraNodeBytesPerS = 0; ///< cluster.intra_node_bandwidth_gbps * 1e9 * intra_node_efficiency
    double interNodeBytesPerS = 0; ///< cluster.inter_node_bandwidth_gbps * 1e9 * inter_node_efficiency
    double intraNodeLatencyS = 0; ///< per communication step
    double interNodeLatencyS = 0;
    bool overlapGradReduce = false;
    bool overlapParamGather = false;
    bool tpCommOverlap = false;
    bool gradientAccumulationFusion = true;
    bool overlapP2pComm = false;
    double kernelLaunchS = 0; ///< added to every compute node
    /// FLOP/s of each op of the plan's graph (opFlopRates()); empty = every compute kernel at
    /// peakFlops * computeEfficiency. Shared: a sweep's threads read one table per plan.
    std::shared_ptr<const std::vector<double>> opFlopRate;
    /// Measured kernel times (cluster.kernel_table; estimate/kernelsources.h withKernelTable()): seconds of one
    /// execution of each op of the plan's graph, < 0 = modelled, and how each was found; the table itself times
    /// the collectives it holds. All null without a table.
    std::shared_ptr<const std::vector<double>> opMeasuredS;
    std::shared_ptr<const std::vector<TableMatch>> opMeasuredMatch;
    std::shared_ptr<const KernelTable> kernelTable;
    /// Serving with FP8 weights (inference.weight_dtype fp8): per op, the fraction of its bytes left when the weights
    /// of its FP8 GEMMs (fp8Gemm()) are read at 1 byte instead of 2; null otherwise (every byte counts).
    std::shared_ptr<const std::vector<double>> opByteScale;
    /// cluster.topology when it has one: collectives and sends are then priced on it (estimate/ncclmodel.h) and the
    /// intra/inter-node fields above are not used for communication. Null = the two-bandwidth model. Shared.
    std::shared_ptr<const Fabric> fabric;
};

/// Rates for `config` (its precision, cluster and overlap keys) on `gpu` with `options`; without per-op rates
/// (see withOpRates()).
HardwareRates hardwareRates(const Config& config, const GpuSpec& gpu, const EstimateOptions& options);

/// `rates` with the per-op FLOP/s of `plan` (opFlopRates()), unless options asked for a flat efficiency.
HardwareRates withOpRates(
    HardwareRates rates, const DistributionPlan& plan, const GpuSpec& gpu, const EstimateOptions& options);

/// Roofline time of a compute kernel: max(flops / (peak * efficiency), bytes / HBM bandwidth), seconds.
double computeTimeS(int64_t flops, int64_t bytes, const HardwareRates& rates);

/// Ring-algorithm time of a collective among `groupSize` GPUs at per-GPU bandwidth `bytesPerS` (the bus
/// bandwidth convention of nccl-tests), seconds, with `commSizeBytes` in Chakra's meaning (DESIGN.md §5):
///   all-reduce of a buffer S:          2 (n-1)/n * S / B + latency
///   all-gather, S = the input shard:   (n-1) * S / B + latency      (= (n-1)/n * full / B)
///   reduce-scatter, S = the full input: (n-1)/n * S / B + latency
///   all-to-all of a buffer S:          (n-1)/n * S / B + latency
/// A group of one member costs nothing.
double collectiveTimeS(
    CollectiveType type, int64_t commSizeBytes, int64_t groupSize, double bytesPerS, double latencyS);

/// A collective as NCCL runs it over a group of `groupSize` GPUs, `perNode` of them in each node:
/// - within one node (perNode == groupSize) or one GPU per node (perNode == 1): the ring above over NVLink or
///   the network (one NIC per GPU, rail-optimized), plus ceil(log2 n) latency steps (NCCL's tree for small
///   messages);
/// - spanning a nodes with k > 1 GPUs each: hierarchically, the k GPUs of a node on NVLink and the k rails in
///   parallel across nodes. All-reduce: reduce-scatter in the node (S), all-reduce across nodes (S / k per rail),
///   all-gather in the node; reduce-scatter and all-gather: the halves of that; all-to-all: the (n - k) / n of S
///   bound for other nodes over the NIC while the (k - 1) / n stay on NVLink, whichever takes longer.
double hierarchicalCollectiveTimeS(
    CollectiveType type, int64_t commSizeBytes, int64_t groupSize, int64_t perNode, const HardwareRates& rates);

/// The price of `node` (a collective or a send) on rates.fabric as NCCL runs it, with the level it crosses; the
/// zero price for other nodes or without a fabric. `peerStage` as for nodeTimeS().
CollectivePrice commPrice(
    const ProgramNode& node, const HardwareRates& rates, const CommPlacement& placement, int32_t peerStage);

/// A point-to-point transfer of `bytes`: bytes / B + latency, seconds.
double p2pTimeS(int64_t bytes, double bytesPerS, double latencyS);

/// Where one rank's communication runs: the size of each of its communicator groups and whether all members of
/// a group (or a pipeline peer) sit in the same node (rank / gpus_per_node equal). Answers are cached per axis
/// mask; not thread-safe (one instance per thread).
class CommPlacement
{
public:
    CommPlacement(const Mesh& mesh, RankId rank, int64_t gpusPerNode);

    int64_t groupSize(AxisMask mask) const
    {
        return m_mesh->groupSize(mask);
    }
    /// True when every member of `rank`'s group of `mask` is in `rank`'s node.
    bool intraNode(AxisMask mask) const;
    /// Members of `rank`'s group of `mask` that share `rank`'s node.
    int64_t membersPerNode(AxisMask mask) const;
    /// True when the rank of pipeline stage `peerStage` with `rank`'s other coordinates is in `rank`'s node.
    bool peerIntraNode(int32_t peerStage) const;
    /// Where `rank`'s group of `mask` sits on `fabric` (cached per mask; the fabric must stay the same).
    const GroupSpan& span(AxisMask mask, const Fabric& fabric) const;
    /// The highest fabric level between `rank` and its pipeline peer of stage `peerStage`.
    FabricLevel peerLevel(int32_t peerStage, const Fabric& fabric) const;

private:
    const Mesh* m_mesh;
    RankId m_rank;
    int64_t m_gpusPerNode;
    mutable std::array<int64_t, 32> m_perNode; ///< 0 unknown
    mutable std::array<GroupSpan, 32> m_span; ///< size 0 unknown
};

/// A data-parallel collective: its group spans ep or edp and it is no expert all-to-all (gradient reductions,
/// parameter gathers). The estimates run these on a stream of their own.
bool isDataParallelCollective(const ProgramNode& node);

/// A parameter all-gather after the optimizer that, with overlap_param_gather, runs behind the next iteration's
/// forward and so does not end this one.
bool hiddenBehindNextForward(const ProgramNode& node, const HardwareRates& rates);

/// Without gradient-accumulation fusion, the kernel that adds a backward node's weight gradients into the main
/// gradient after it: it reads the new gradient and the main gradient and writes the main gradient back (3x the
/// gradient buffers the node writes, at HBM speed; Megatron-LM 2021's `param.main_grad.add_(param.grad)`).
/// 0 with fusion, for nodes that write no gradient, and outside the backward.
double unfusedAccumulationTimeS(
    const ProgramNode& node, const std::vector<Buffer>& buffers, const HardwareRates& rates);

/// Duration of one program node on the rank of `placement` (seconds). Recv nodes take 0: the matching send
/// carries the transfer. `peerStage` overrides node.peerStage for placement (used when a reduced program stands
/// for another stage); pass node.peerStage otherwise.
double nodeTimeS(
    const ProgramNode& node, const HardwareRates& rates, const CommPlacement& placement, int32_t peerStage);

} // namespace stagecraft
