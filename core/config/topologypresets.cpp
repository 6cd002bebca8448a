// SPDX-License-Identifier: MIT
#include "config/topologypresets.h"

#include "config/suggestion.h"

#include <array>

namespace stagecraft {

namespace {

    // NVLink as NCCL reaches it: NCCL models one NVLink 4 (Hopper) link at 20.6 GB/s per direction and one NVLink 5
    // (Blackwell) link at 40.1 (NVIDIA/nccl src/graph/topo.h, SM90_NVLINK_BW and SM100_NVLINK_BW, at commit
    // 5067397c2676d5aed50042fc39e5c8ee96eb0027), against a line rate of 25 and 50: H100 and B200 have 18 links each
    // (H100 datasheet, https://www.nvidia.com/en-us/data-center/h100/: 900 GB/s bidirectional; GB200 NVL72,
    // https://www.nvidia.com/en-us/data-center/gb200-nvl72/: 1.8 TB/s per GPU). NCCL's maintainers quote the same
    // figure: "NCCL can get an effective NVLink bandwidth of 370GB/s" on H100 (NVIDIA/nccl-tests issue #212).
    constexpr double kHopperNvlink = 18 * 20.6;
    constexpr double kBlackwellNvlink = 18 * 40.1;
    // NVLink SHARP efficiency per generation: NVIDIA/nccl src/graph/tuning.cc `nvlsEfficiency` (same commit).
    constexpr double kHopperNvls = 0.85;
    constexpr double kBlackwellNvls = 0.74;
    // A NIC's large-transfer efficiency: the project's inter-node efficiency since before topologies
    // (clusterpresets.cpp: 96 GB/s peak of 100 on 4 HDR NICs, NVIDIA/nccl-tests issue #119, rounded down to 0.9).
    constexpr double kNicEfficiency = 0.9;

    TopologyConfig make(const char* name, int64_t domain, double nvlink, double nvls, int64_t nics, double nic,
        int64_t rails, int64_t leafRadix, double leafOver, int64_t spineRadix, double spineOver, int64_t planes)
    {
        TopologyConfig t;
        t.preset = name;
        t.nvlinkDomain = domain;
        t.nvlinkBandwidthGbps = nvlink;
        t.nvlsEfficiency = nvls;
        t.nicsPerNode = nics;
        t.nicBandwidthGbps = nic;
        t.nicEfficiency = kNicEfficiency;
        t.rails = rails;
        t.leafRadix = leafRadix;
        t.leafOversubscription = leafOver;
        t.spineRadix = spineRadix;
        t.spineOversubscription = spineOver;
        t.planes = planes;
        return t;
    }

    const std::array<TopologyConfig, 5>& presets()
    {
        static const std::array<TopologyConfig, 5> table {
            // NVIDIA DGX SuperPOD with DGX H100, reference architecture "Network Fabrics"
            // (https://docs.nvidia.com/dgx-superpod/reference-architecture-scalable-infrastructure-h100/latest/
            // network-fabrics.html): 8 H100 per node on NVLink 4; eight 400 Gb/s NDR ConnectX-7 ports per node, one
            // per GPU; "each group of 32 nodes is rail-aligned. Traffic per rail ... is always one hop away from the
            // other 31 nodes in a SU. Traffic between nodes, or between rails, traverses the spine layer"; Table 4:
            // 4 SUs = 32 leaf and 16 spine switches, 1,020 node and 1,024 leaf-spine cables, so the leaves are not
            // oversubscribed (1:1). The switches are 64-port NDR Quantum-2 QM9700
            // (https://www.nvidia.com/en-us/networking/infiniband/qm9700/): 32 ports down per leaf = one SU of
            // 32 nodes on each of the 8 rails, and 64 leaves per spine.
            make("dgx-h100-superpod", 8, kHopperNvlink, kHopperNvls, 8, 50, 8, 64, 1, 64, 1, 1),
            // The same DGX H100 nodes in a fat tree that is neither rail-optimized nor non-blocking: each 64-port
            // leaf serves whole nodes with 2 ports down per port up (2:1), 42 down = 5 nodes of 8 NICs per leaf.
            make("fat-tree-2to1", 8, kHopperNvlink, kHopperNvls, 8, 50, 0, 64, 2, 64, 1, 1),
            // NVIDIA GB200 NVL72 (https://www.nvidia.com/en-us/data-center/gb200-nvl72/): 72 Blackwell GPUs in one
            // NVLink 5 domain, taken as one node of 72 GPUs (cluster preset gb200-nvl72, gpus_per_node 72). Scale-out:
            // four 400 Gb/s ConnectX-7 per 4-GPU compute tray (MLCommons inference v6.1, Crusoe GB200-NVL72 system
            // description: "for each 4-GPU node: 4x ... ConnectX-7"), 72 NICs per rack on 4 rails (one per GPU of a
            // tray) into the DGX GB200 SuperPOD's InfiniBand fabric (https://docs.nvidia.com/dgx-superpod/
            // reference-architecture-scalable-infrastructure-gb200/latest/dgx-superpod-components.html) of the same
            // 64-port NDR switches, non-blocking.
            make("gb200-nvl72", 72, kBlackwellNvlink, kBlackwellNvls, 72, 50, 4, 64, 1, 64, 1, 1),
            // DeepSeek-V3's cluster (DeepSeek-V3 technical report, arXiv 2412.19437, §3.1-3.2): H800 nodes of 8 GPUs on
            // NVLink and NVSwitch, InfiniBand across nodes, "IB (50 GB/s)" and "NVLink (160 GB/s)" as achieved (so
            // taken as NCCL's NVLink figure); the H800 is a Hopper (NVLink SHARP 0.85). The fabric is a multi-plane
            // two-layer fat tree: eight planes, one per GPU-NIC pair, of 64-port 400 Gb/s switches (Zhao et al.,
            // "Insights into DeepSeek-V3", ISCA 2025, arXiv 2505.09343, §5: up to 16,384 GPUs).
            make("deepseek-v3-h800", 8, 160, kHopperNvls, 8, 50, 8, 64, 1, 64, 1, 8),
            // Llama 3's cluster (Llama Team, "The Llama 3 Herd of Models", arXiv 2407.21783, §3.3.1 "Network"): H100 on
            // Grand Teton servers of 8 GPUs, RoCE at 400 Gb/s per GPU; "a three-layer Clos network. At the bottom
            // layer, each rack hosts 16 GPUs split between two servers and connected by a single ... top-of-the-rack
            // (ToR) switch. In the middle layer, 192 such racks are connected by Cluster Switches to form a pod of
            // 3,072 GPUs with full bisection bandwidth ... eight such pods ... to form a cluster of 24K GPUs ...
            // oversubscription ratio of 1:7" at the aggregation layer. A ToR of 16 ports down and 16 up (1:1).
            make("llama3-24k", 8, kHopperNvlink, kHopperNvls, 8, 50, 0, 32, 1, 192, 7, 1),
        };
        return table;
    }

} // namespace

const TopologyConfig* topologyPreset(std::string_view name)
{
    for (const TopologyConfig& t : presets())
        if (t.preset == name)
            return &t;
    return nullptr;
}

std::vector<std::string> topologyPresetNames()
{
    std::vector<std::string> names;
    for (const TopologyConfig& t : presets())
        names.push_back(t.preset);
    return names;
}

std::string unknownTopologyPresetText(std::string_view name)
{
    const std::vector<std::string> names = topologyPresetNames();
    std::string text = "unknown topology preset \"" + std::string(name) + "\"; known presets:";
    for (size_t i = 0; i < names.size(); ++i)
        text += (i ? ", " : " ") + names[i];
    const std::vector<std::string_view> candidates(names.begin(), names.end());
    return text + didYouMean(name, candidates);
}

} // namespace stagecraft
