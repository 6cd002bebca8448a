// SPDX-License-Identifier: MIT
#include "estimate/fabric.h"

#include <algorithm>

namespace stagecraft {

const char* toString(FabricLevel level)
{
    switch (level) {
    case FabricLevel::NvLink:
        return "nvlink";
    case FabricLevel::Leaf:
        return "leaf";
    case FabricLevel::Spine:
        return "spine";
    case FabricLevel::Core:
        return "core";
    }
    return "nvlink";
}

Fabric::Fabric(const ClusterConfig& cluster)
    : m_topology(cluster.topology)
    , m_enabled(cluster.topology.enabled())
{
    if (!m_enabled)
        return;
    const TopologyConfig& t = m_topology;
    const std::string& gpu = cluster.gpu;
    m_generation = gpu.rfind("a", 0) == 0 ? 1 : (gpu.rfind("b", 0) == 0 || gpu.rfind("gb", 0) == 0) ? 3 : 2;
    m_nodeGpus = std::max<int64_t>(1, cluster.gpusPerNode);
    m_domainGpus = std::max<int64_t>(1, t.nvlinkDomain);
    const int64_t nics = std::max<int64_t>(1, t.nicsPerNode);
    // A leaf of radix R at o:1 has R * o / (o + 1) ports facing NICs. Rail-optimized, one leaf per rail takes one
    // NIC port of each node of its scalable unit per plane-rail; otherwise a leaf takes all of a node's NICs.
    const double over = std::max(1.0, t.leafOversubscription);
    const int64_t down =
        std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(t.leafRadix) * over / (over + 1)));
    const int64_t nicsPerLeafNode = t.rails > 0 ? std::max<int64_t>(1, nics / t.rails) : nics;
    m_leafNodes = std::max<int64_t>(1, down / nicsPerLeafNode);
    // Two tiers: a spine of radix S joins S leaves of one plane. A leaf group takes rails / planes leaves of each
    // plane when rail-optimized (one per rail), one otherwise; so a pod holds S / that leaf groups.
    const int64_t planes = std::max<int64_t>(1, t.planes);
    const int64_t leavesPerGroup = t.rails > 0 ? std::max<int64_t>(1, t.rails / planes) : 1;
    const int64_t groups = std::max<int64_t>(1, std::max<int64_t>(1, t.spineRadix) / leavesPerGroup);
    constexpr int64_t kMaxNodes = int64_t(1) << 50; // saturate: no world comes near, and nothing overflows
    m_podNodes = m_leafNodes > kMaxNodes / groups ? kMaxNodes : m_leafNodes * groups;

    m_nvlinkBytesPerS = t.nvlinkBandwidthGbps * 1e9;
    const double nicPerGpu =
        static_cast<double>(nics) / static_cast<double>(m_nodeGpus) * t.nicBandwidthGbps * 1e9 * t.nicEfficiency;
    m_capacity[static_cast<size_t>(FabricLevel::NvLink)] = m_nvlinkBytesPerS;
    m_capacity[static_cast<size_t>(FabricLevel::Leaf)] = nicPerGpu;
    m_capacity[static_cast<size_t>(FabricLevel::Spine)] = nicPerGpu / over;
    m_capacity[static_cast<size_t>(FabricLevel::Core)] = nicPerGpu / over / std::max(1.0, t.spineOversubscription);
}

FabricLevel Fabric::levelBetween(int64_t a, int64_t b) const
{
    if (domainOf(a) == domainOf(b))
        return FabricLevel::NvLink;
    if (leafGroupOf(a) == leafGroupOf(b))
        return FabricLevel::Leaf;
    if (podOf(a) == podOf(b))
        return FabricLevel::Spine;
    return FabricLevel::Core;
}

GroupSpan Fabric::span(const std::vector<int64_t>& members, int64_t self) const
{
    GroupSpan s;
    s.size = std::max<int64_t>(1, static_cast<int64_t>(members.size()));
    s.perDomain = s.perLeaf = s.perPod = 0;
    int64_t lastDomain = -1;
    s.domains = 0;
    std::vector<int64_t> domains;
    domains.reserve(members.size());
    for (int64_t m : members) {
        const FabricLevel l = levelBetween(self, m);
        s.level = std::max(s.level, l);
        s.perDomain += l == FabricLevel::NvLink ? 1 : 0;
        s.perLeaf += l <= FabricLevel::Leaf ? 1 : 0;
        s.perPod += l <= FabricLevel::Spine ? 1 : 0;
        const int64_t d = domainOf(m);
        if (d != lastDomain)
            domains.push_back(d);
        lastDomain = d;
    }
    std::sort(domains.begin(), domains.end());
    s.domains = std::max<int64_t>(1, std::unique(domains.begin(), domains.end()) - domains.begin());
    s.perDomain = std::max<int64_t>(1, s.perDomain);
    s.perLeaf = std::max(s.perDomain, s.perLeaf);
    s.perPod = std::max(s.perLeaf, s.perPod);
    return s;
}

} // namespace stagecraft
