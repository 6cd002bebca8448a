// SPDX-License-Identifier: MIT
#include "config/clusterpresets.h"

#include "config/suggestion.h"

#include <array>
#include <utility>

namespace stagecraft {

namespace {

    // Bandwidths are per GPU and per direction, the convention of nccl-tests' bus bandwidth: a datasheet's
    // bidirectional NVLink figure is halved, a NIC's Gb/s divided by 8. Efficiencies are the bus bandwidth a
    // large collective reaches over that link; latencies are per communication step.
    ClusterConfig make(std::string name, std::string gpu, int64_t gpusPerNode, double intra, double inter,
        double intraEfficiency, double interEfficiency)
    {
        ClusterConfig c;
        c.preset = std::move(name);
        c.gpu = std::move(gpu);
        c.gpusPerNode = gpusPerNode;
        c.intraNodeBandwidthGbps = intra;
        c.interNodeBandwidthGbps = inter;
        c.intraNodeEfficiency = intraEfficiency;
        c.interNodeEfficiency = interEfficiency;
        c.intraNodeLatencyUs = 5; // NCCL's small-message all-reduce among 8 NVLink GPUs: ~15 us = 3 steps of 5
        c.interNodeLatencyUs = 10; // one InfiniBand hop plus NCCL's proxy: of the order of 10 us
        return c;
    }

    const std::array<ClusterConfig, 4>& presets()
    {
        static const std::array<ClusterConfig, 4> table {
            // NVIDIA DGX A100 (Selene's nodes; Narayanan et al. 2021, section 5): 8x A100 80GB SXM; NVLink 3 600 GB/s
            // bidirectional per GPU (A100 datasheet) = 300 per direction; 8x ConnectX-6 HDR 200 Gb/s, one per GPU
            // (DGX A100 datasheet) = 25 GB/s. Efficiencies: all_reduce_perf on 8 NVLink A100s reports a bus
            // bandwidth of 200-208 GB/s (NVIDIA/nccl-tests issues #149 and #178): 0.69 of 300; across nodes,
            // 96 GB/s peak of 100 on 4 HDR NICs (nccl-tests issue #119): 0.9 taken for large messages.
            make("dgx-a100", "a100-80gb", 8, 300, 25, 0.69, 0.9),
            // NVIDIA DGX H100: 8x H100 SXM; NVLink 4 900 GB/s bidirectional per GPU (H100 datasheet) = 450;
            // 8x ConnectX-7 NDR 400 Gb/s, one per GPU (DGX H100 datasheet) = 50 GB/s. Intra-node efficiency 0.8:
            // an assumption between A100's measured 0.69 and NVLink-SHARP all-reduce, which exceeds the link.
            make("dgx-h100", "h100-sxm", 8, 450, 50, 0.8, 0.9),
            // NVIDIA DGX H200: the DGX H100's NVLink 4 and 8x 400 Gb/s fabric with H200 GPUs (DGX H200 datasheet).
            make("dgx-h200", "h200", 8, 450, 50, 0.8, 0.9),
            // NVIDIA GB200 NVL72: 72 Blackwell GPUs in one NVLink 5 domain, 1.8 TB/s bidirectional per GPU
            // (GB200 NVL72 datasheet) = 900; one 400 Gb/s NIC per GPU for the scale-out network = 50 GB/s. The
            // GPU is modelled by the b200 preset (GB200's GPU is specified slightly faster: the estimate is low).
            make("gb200-nvl72", "b200", 72, 900, 50, 0.8, 0.9),
        };
        return table;
    }

} // namespace

const ClusterConfig* clusterPreset(std::string_view name)
{
    for (const ClusterConfig& c : presets())
        if (c.preset == name)
            return &c;
    return nullptr;
}

std::vector<std::string> clusterPresetNames()
{
    std::vector<std::string> names;
    for (const ClusterConfig& c : presets())
        names.push_back(c.preset);
    return names;
}

std::string unknownClusterPresetText(std::string_view name)
{
    const std::vector<std::string> names = clusterPresetNames();
    std::string text = "unknown cluster preset \"" + std::string(name) + "\"; known presets:";
    for (size_t i = 0; i < names.size(); ++i)
        text += (i ? ", " : " ") + names[i];
    const std::vector<std::string_view> candidates(names.begin(), names.end());
    return text + didYouMean(name, candidates);
}

} // namespace stagecraft
