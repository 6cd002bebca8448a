// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <string>

namespace stagecraft {

/// The fabric from the GPU up (YAML `cluster.topology:`), read by the step-time estimate, the sweep and the
/// ASTRA-sim network writer. Ranks sit on GPUs in the mesh's rank order (rank r is GPU r; GPU g is in node
/// g / cluster.gpus_per_node and NVLink domain g / nvlink_domain). Levels, from the GPU up:
///   1. the NVLink domain (NVSwitch): nvlink_domain GPUs at nvlink_bandwidth_gbps each;
///   2. the leaf: each node's nics_per_node NICs at nic_bandwidth_gbps; a leaf switch of leaf_radix ports has
///      leaf_radix * o / (o + 1) of them facing NICs at leaf_oversubscription o:1. With `rails` > 0 the fabric is
///      rail-optimized: NIC i of a node is on rail i % rails, and one leaf per rail serves a scalable unit of
///      nodes (NVIDIA DGX SuperPOD); with 0, one leaf serves whole nodes (a top-of-rack switch);
///   3. the spine: spine_radix leaves per pod and plane (a two-tier fat tree); `planes` independent planes (each
///      NIC in one) multiply the nodes a pod holds;
///   4. the core: pods joined at spine_oversubscription o:1.
/// Plain value type. A default TopologyConfig (nvlink_domain 0) is "no topology": the estimate then uses the two
/// bandwidths cluster.intra/inter_node_bandwidth_gbps exactly as without this section.
struct TopologyConfig
{
    std::string preset; ///< a topology preset whose figures the keys not given take (config/topologypresets.h)
    int64_t nvlinkDomain = 0; ///< GPUs sharing one NVLink/NVSwitch domain; 0 = no topology
    /// GB/s per GPU and direction that NCCL reaches over NVLink (links x NCCL's per-link figure).
    double nvlinkBandwidthGbps = 0;
    /// NCCL's NVLink SHARP (NVLS) efficiency for this GPU generation; 0 = no NVLink SHARP.
    double nvlsEfficiency = 0;
    int64_t nicsPerNode = 8;
    double nicBandwidthGbps = 50; ///< GB/s per NIC and direction (400 Gb/s = 50)
    double nicEfficiency = 0.9; ///< fraction of a NIC's line rate a large transfer reaches
    int64_t rails = 8; ///< 0 = not rail-optimized (one leaf per node group)
    int64_t leafRadix = 64; ///< ports of a leaf switch
    double leafOversubscription = 1; ///< down:up ports of a leaf (2 = 2:1)
    int64_t spineRadix = 64; ///< leaves of one pod and plane (ports of a spine switch)
    double spineOversubscription = 1; ///< pod:core bandwidth above the spines (7 = 1:7 in Llama 3's fabric)
    int64_t planes = 1; ///< independent network planes

    bool enabled() const
    {
        return nvlinkDomain > 0;
    }

    friend bool operator==(const TopologyConfig&, const TopologyConfig&) = default;
};

} // namespace stagecraft
