// SPDX-License-Identifier: MIT
#include "estimate/costmodel.h"

#include <algorithm>

namespace stagecraft {

HardwareRates hardwareRates(const Config& config, const GpuSpec& gpu, const EstimateOptions& options)
{
    HardwareRates r;
    r.peakFlops = gpu.peakFlops(config.training.precision);
    r.computeEfficiency = options.computeEfficiency;
    r.hbmBytesPerS = gpu.hbmBytesPerS;
    r.intraNodeBytesPerS = config.cluster.intraNodeBandwidthGbps * 1e9;
    r.interNodeBytesPerS = config.cluster.interNodeBandwidthGbps * 1e9;
    r.intraNodeLatencyS = options.intraNodeLatencyS;
    r.interNodeLatencyS = options.interNodeLatencyS;
    return r;
}

double computeTimeS(int64_t flops, int64_t bytes, const HardwareRates& rates)
{
    const double math = rates.peakFlops > 0 && rates.computeEfficiency > 0
        ? static_cast<double>(flops) / (rates.peakFlops * rates.computeEfficiency)
        : 0.0;
    const double memory = rates.hbmBytesPerS > 0 ? static_cast<double>(bytes) / rates.hbmBytesPerS : 0.0;
    return std::max(math, memory);
}

double collectiveTimeS(CollectiveType type, int64_t commSizeBytes, int64_t groupSize, double bytesPerS, double latencyS)
{
    if (groupSize <= 1)
        return 0;
    const double n = static_cast<double>(groupSize);
    const double s = static_cast<double>(commSizeBytes);
    double volume = 0; // bytes each GPU sends over its link
    switch (type) {
    case CollectiveType::AllReduce:
        volume = 2 * (n - 1) / n * s;
        break;
    case CollectiveType::AllGather:
        volume = (n - 1) * s;
        break;
    case CollectiveType::ReduceScatter:
    case CollectiveType::AllToAll:
        volume = (n - 1) / n * s;
        break;
    }
    return volume / bytesPerS + latencyS;
}

double p2pTimeS(int64_t bytes, double bytesPerS, double latencyS)
{
    return static_cast<double>(bytes) / bytesPerS + latencyS;
}

CommPlacement::CommPlacement(const Mesh& mesh, RankId rank, int64_t gpusPerNode)
    : m_mesh(&mesh)
    , m_rank(rank)
    , m_gpusPerNode(std::max<int64_t>(1, gpusPerNode))
{
    m_intra.fill(-1);
}

bool CommPlacement::intraNode(AxisMask mask) const
{
    int8_t& cached = m_intra[mask & 31u];
    if (cached < 0) {
        const int64_t node = m_rank.value / m_gpusPerNode;
        bool intra = true;
        for (int64_t member : m_mesh->groupMembers(mask, m_mesh->groupIndex(mask, m_rank)))
            intra = intra && member / m_gpusPerNode == node;
        cached = intra ? 1 : 0;
    }
    return cached == 1;
}

bool CommPlacement::peerIntraNode(int32_t peerStage) const
{
    const RankId peer = m_mesh->withCoordinate(m_rank, Axis::Pp, peerStage);
    return peer.value / m_gpusPerNode == m_rank.value / m_gpusPerNode;
}

double nodeTimeS(const ProgramNode& node, const HardwareRates& rates, const CommPlacement& placement, int32_t peerStage)
{
    switch (node.kind) {
    case NodeKind::Compute:
        return computeTimeS(node.flops, node.bytes, rates);
    case NodeKind::Collective: {
        const bool intra = placement.intraNode(node.mask);
        return collectiveTimeS(node.collective, node.bytes, placement.groupSize(node.mask),
            intra ? rates.intraNodeBytesPerS : rates.interNodeBytesPerS,
            intra ? rates.intraNodeLatencyS : rates.interNodeLatencyS);
    }
    case NodeKind::Send: {
        const bool intra = placement.peerIntraNode(peerStage);
        return p2pTimeS(node.bytes, intra ? rates.intraNodeBytesPerS : rates.interNodeBytesPerS,
            intra ? rates.intraNodeLatencyS : rates.interNodeLatencyS);
    }
    case NodeKind::Recv:
        return 0;
    }
    return 0;
}

} // namespace stagecraft
