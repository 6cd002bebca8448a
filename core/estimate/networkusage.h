// SPDX-License-Identifier: MIT
#pragma once

#include "estimate/fabric.h"
#include "estimate/ncclmodel.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace stagecraft {

struct SynthesisResult;

/// One kind of communication of a rank class on the fabric: a collective type over the groups of one mask, or the
/// pipeline sends towards one side; the level it crosses and how NCCL runs its largest instance.
struct NetworkUse
{
    std::string what; ///< "all_reduce dp", "all_to_all ep", "send pp"
    FabricLevel level = FabricLevel::NvLink;
    NcclAlgorithm algorithm = NcclAlgorithm::Ring;
    NcclProtocol protocol = NcclProtocol::Simple;
    int64_t count = 0; ///< nodes of the class program
    int64_t bytes = 0; ///< their comm sizes, summed
    double timeS = 0; ///< their prices, summed
};

/// The communication of one rank class (its example rank) on `fabric`, by kind, in program order of first use,
/// and its bytes per fabric level (index = FabricLevel). Counts the nodes of the class program as synthesized (a
/// compressed result's kept micro-batches). Pure; thread-safe.
struct NetworkUsage
{
    std::vector<NetworkUse> uses;
    std::array<int64_t, kFabricLevelCount> bytesPerLevel {};
};
NetworkUsage networkUsage(const SynthesisResult& result, size_t classIndex, const Fabric& fabric);

/// The fabric a result's estimate uses: its cluster.topology, or, without one, a two-level stand-in (a domain of
/// cluster.gpus_per_node GPUs at the intra-node bandwidth, the rest one leaf at the inter-node bandwidth) so that
/// views can still split bytes by "inside / outside a node".
Fabric fabricOrStandIn(const ClusterConfig& cluster);

} // namespace stagecraft
