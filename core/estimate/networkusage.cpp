// SPDX-License-Identifier: MIT
#include "estimate/networkusage.h"

#include "estimate/costmodel.h"
#include "synthesis/synthesis.h"

#include <algorithm>

namespace stagecraft {

NetworkUsage networkUsage(const SynthesisResult& result, size_t classIndex, const Fabric& fabric)
{
    NetworkUsage out;
    if (classIndex >= result.classes.size() || !fabric.enabled())
        return out;
    const ClassProgram& program = result.classes[classIndex];
    const CommPlacement placement(result.mesh(), program.exampleRank, result.config.cluster.gpusPerNode);
    int64_t largest[64] {};
    for (const ProgramNode& node : program.nodes) {
        if (node.kind != NodeKind::Collective && node.kind != NodeKind::Send)
            continue;
        std::string what;
        CollectivePrice price;
        if (node.kind == NodeKind::Collective) {
            what = std::string(toString(node.collective)) + " " + axisMaskName(node.mask);
            price = priceCollective(node.collective, node.bytes, placement.span(node.mask, fabric), fabric);
        } else {
            what = "send pp";
            price = priceTransfer(node.bytes, placement.peerLevel(node.peerStage, fabric), fabric);
        }
        auto it = std::find_if(out.uses.begin(), out.uses.end(), [&](const NetworkUse& u) { return u.what == what; });
        if (it == out.uses.end()) {
            out.uses.push_back({ what, price.level, price.algorithm, price.protocol, 0, 0, 0 });
            it = out.uses.end() - 1;
        }
        const size_t index = static_cast<size_t>(it - out.uses.begin());
        it->level = std::max(it->level, price.level);
        if (index < 64 && node.bytes >= largest[index]) {
            largest[index] = node.bytes;
            it->algorithm = price.algorithm;
            it->protocol = price.protocol;
        }
        it->count += 1;
        it->bytes += node.bytes;
        it->timeS += price.timeS;
        out.bytesPerLevel[static_cast<size_t>(price.level)] += node.bytes;
    }
    return out;
}

Fabric fabricOrStandIn(const ClusterConfig& cluster)
{
    if (cluster.topology.enabled())
        return Fabric(cluster);
    ClusterConfig c = cluster;
    TopologyConfig& t = c.topology;
    t.nvlinkDomain = std::max<int64_t>(1, cluster.gpusPerNode);
    t.nvlinkBandwidthGbps = cluster.intraNodeBandwidthGbps * cluster.intraNodeEfficiency;
    t.nvlsEfficiency = 0;
    t.nicsPerNode = t.nvlinkDomain;
    t.nicBandwidthGbps = cluster.interNodeBandwidthGbps;
    t.nicEfficiency = cluster.interNodeEfficiency;
    t.rails = 0;
    // One leaf group and one pod for any world: "outside the node" is a single level.
    t.leafRadix = int64_t(1) << 40;
    t.leafOversubscription = 1;
    t.spineRadix = 1;
    return Fabric(c);
}

} // namespace stagecraft
