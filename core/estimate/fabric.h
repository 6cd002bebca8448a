// SPDX-License-Identifier: MIT
#pragma once

#include "config/config.h"

#include <cstdint>
#include <vector>

namespace stagecraft {

/// The highest level of the fabric a transfer crosses: within an NVLink domain, through the NICs and one leaf (a
/// rail of a scalable unit, or a top-of-rack switch), through the spines of a pod, or between pods.
enum class FabricLevel : uint8_t
{
    NvLink,
    Leaf,
    Spine,
    Core
};
inline constexpr int kFabricLevelCount = 4;
/// "nvlink", "leaf", "spine", "core".
const char* toString(FabricLevel level);

/// Where the members of one communicator group sit, seen from one member: how many share its NVLink domain, its
/// leaf group and its pod, how many NVLink domains the group spans, and the highest level it crosses.
struct GroupSpan
{
    int64_t size = 1;
    int64_t perDomain = 1; ///< members in this member's NVLink domain (itself included)
    int64_t perLeaf = 1; ///< members under this member's leaves (its scalable unit or rack)
    int64_t perPod = 1; ///< members in this member's pod
    int64_t domains = 1; ///< NVLink domains the group spans (NCCL's nNodes)
    FabricLevel level = FabricLevel::NvLink;
};

/// `cluster.topology` resolved into per-GPU capacities and a placement of GPUs (rank r on GPU r). Immutable;
/// thread-safe. Bandwidths in bytes/s per GPU and direction, as a large transfer reaches them.
class Fabric
{
public:
    /// Null-like (enabled() false) when the cluster has no topology.
    explicit Fabric(const ClusterConfig& cluster);

    bool enabled() const
    {
        return m_enabled;
    }
    const TopologyConfig& topology() const
    {
        return m_topology;
    }

    int64_t domainOf(int64_t gpu) const
    {
        return gpu / m_domainGpus;
    }
    int64_t nodeOf(int64_t gpu) const
    {
        return gpu / m_nodeGpus;
    }
    /// The leaf group (scalable unit of a rail-optimized fabric, or the nodes of one top-of-rack leaf).
    int64_t leafGroupOf(int64_t gpu) const
    {
        return nodeOf(gpu) / m_leafNodes;
    }
    int64_t podOf(int64_t gpu) const
    {
        return nodeOf(gpu) / m_podNodes;
    }
    /// Nodes per leaf group and per pod (at least 1).
    int64_t leafNodes() const
    {
        return m_leafNodes;
    }
    int64_t podNodes() const
    {
        return m_podNodes;
    }
    /// The highest level a transfer between GPUs a and b crosses.
    FabricLevel levelBetween(int64_t a, int64_t b) const;
    /// The span of `members` (GPU indices, any order) seen from member `self`.
    GroupSpan span(const std::vector<int64_t>& members, int64_t self) const;

    /// NVLink bytes/s per GPU and direction (NCCL's figure).
    double nvlinkBytesPerS() const
    {
        return m_nvlinkBytesPerS;
    }
    double nvlsEfficiency() const
    {
        return m_topology.nvlsEfficiency;
    }
    /// NCCL's compute-capability index of cluster.gpu for its tuning tables: 1 Ampere (a100*), 2 Hopper (h*, the
    /// default), 3 Blackwell (b*, gb*).
    int generation() const
    {
        return m_generation;
    }
    /// Bytes/s per GPU and direction of traffic that leaves the NVLink domain and goes up to `level` (Leaf: its
    /// NIC share; Spine: divided by the leaf's oversubscription; Core: also by the spine's). NvLink: the NVLink rate.
    double capacityPerGpu(FabricLevel level) const
    {
        return m_capacity[static_cast<size_t>(level)];
    }

private:
    TopologyConfig m_topology;
    bool m_enabled = false;
    int m_generation = 2;
    int64_t m_nodeGpus = 1;
    int64_t m_domainGpus = 1;
    int64_t m_leafNodes = 1;
    int64_t m_podNodes = 1;
    double m_nvlinkBytesPerS = 0;
    double m_capacity[kFabricLevelCount] {};
};

} // namespace stagecraft
