// SPDX-License-Identifier: MIT
#pragma once

#include "estimate/gpuspec.h"
#include "mesh/mesh.h"
#include "program/program.h"

#include <array>
#include <cstdint>

namespace stagecraft {

/// Knobs of the step-time estimate that the config does not hold. Plain value type.
struct EstimateOptions
{
    /// Fraction of the dense peak FLOP/s that compute kernels reach. An assumption, not a measurement: large
    /// transformer GEMMs reach well over half of peak, whole iterations 40-55 % MFU (Narayanan et al. 2021,
    /// Table 1: 44-52 % of peak on A100s), and this factor is applied to every compute node.
    double computeEfficiency = 0.5;
    /// Fixed cost added to every collective and point-to-point transfer (seconds): kernel launch plus
    /// synchronization. Assumed values of the order NCCL shows for small messages (a few microseconds over
    /// NVLink, about ten across an InfiniBand hop); not measured here.
    double intraNodeLatencyS = 5e-6;
    double interNodeLatencyS = 10e-6;
};

/// The resolved hardware rates one estimate uses. Bandwidths in bytes/s; FLOP/s dense.
struct HardwareRates
{
    double peakFlops = 0; ///< dense peak of the training precision
    double computeEfficiency = 0.5;
    double hbmBytesPerS = 0;
    double intraNodeBytesPerS = 0; ///< cluster.intra_node_bandwidth_gbps * 1e9
    double interNodeBytesPerS = 0; ///< cluster.inter_node_bandwidth_gbps * 1e9
    double intraNodeLatencyS = 0;
    double interNodeLatencyS = 0;
};

/// Rates for `config` (its precision and cluster section) on `gpu` with `options`.
HardwareRates hardwareRates(const Config& config, const GpuSpec& gpu, const EstimateOptions& options);

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
    /// True when the rank of pipeline stage `peerStage` with `rank`'s other coordinates is in `rank`'s node.
    bool peerIntraNode(int32_t peerStage) const;

private:
    const Mesh* m_mesh;
    RankId m_rank;
    int64_t m_gpusPerNode;
    mutable std::array<int8_t, 32> m_intra; ///< -1 unknown, 0 inter, 1 intra
};

/// Duration of one program node on the rank of `placement` (seconds). Recv nodes take 0: the matching send
/// carries the transfer. `peerStage` overrides node.peerStage for placement (used when a reduced program stands
/// for another stage); pass node.peerStage otherwise.
double nodeTimeS(
    const ProgramNode& node, const HardwareRates& rates, const CommPlacement& placement, int32_t peerStage);

} // namespace stagecraft
