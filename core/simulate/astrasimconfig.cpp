// SPDX-License-Identifier: MIT
// What ASTRA-sim is told, and how that compares with our step-time estimate (core/estimate/stepestimate.cpp):
//
// Same in both:
// - Compute: roofline. ASTRA-sim times a compute node as num_ops / min(peak-perf, local-mem-bw * num_ops /
//   tensor_size) = max(num_ops / peak-perf, tensor_size / local-mem-bw), exactly computeTimeS() when peak-perf is
//   the dense peak times the compute efficiency and local-mem-bw the HBM bandwidth (both decimal units, as
//   ASTRA-sim's Sys::initialize_sys multiplies by 1e12 and 1e9).
// - Two streams per rank: ASTRA-sim runs at most one compute node and one collective or send at a time
//   (workload/HardwareResource.cc), as our compute and communication streams do; recvs occupy neither.
// - Bandwidth: a ring collective moves the volumes of collectiveTimeS() (2(n-1)/n S for all-reduce, (n-1) S for
//   all-gather of a shard S, (n-1)/n S for reduce-scatter) over links of the bandwidth of its level.
// - Point-to-point: bytes / B + one latency (two switch hops of half the latency each).
//
// Where they differ (ASTRA-sim's communication times are mostly somewhat higher):
// - Latency: the estimate pays one latency per collective; ASTRA-sim pays it on every ring step (2(n-1) steps for
//   an all-reduce, n-1 for the others) and per chunk (we use one chunk per collective to keep that small).
// - Placement: the estimate times a whole collective at the inter-node bandwidth as soon as one member is in
//   another node; ASTRA-sim runs a ring over the group's members in the group file's order and times each message
//   on the dimension where its two ends differ. A group that spans the whole world of a two-level network runs
//   hierarchically (reduce-scatter inside the node, all-reduce across, all-gather inside: "localBWAware"), which
//   is faster than the flat ring the estimate assumes; smaller groups always run as one flat ring.
// - All-to-all: "direct" in every dimension, but ASTRA-sim replaces it by a ring for groups smaller than the
//   world when the network has two dimensions (system/CommunicatorGroup.cc).
// - Order: ASTRA-sim issues a node as soon as its dependencies are met (lowest id first among the ready ones);
//   the estimate keeps each stream in program order. The traces chain compute nodes, so only communication may
//   be reordered.
// - Rounding: ASTRA-sim rounds each compute and transfer time down to whole nanoseconds.
#include "simulate/astrasimconfig.h"

#include "config/configwriter.h"

#include <nlohmann/json.hpp>

namespace stagecraft {

namespace {

    /// ASTRA-sim's analytical network reads "GB/s" as 2^30 bytes per second.
    constexpr double kBytesPerAstraGB = 1024.0 * 1024.0 * 1024.0;
    /// A message through a switch takes two hops: source -> switch -> destination.
    constexpr double kSwitchHops = 2;

    AstraSimNetworkDim switchDim(int64_t npus, double bytesPerS, double latencyS)
    {
        AstraSimNetworkDim d;
        d.topology = "Switch";
        d.npus = npus;
        d.bandwidthGiBps = bytesPerS / kBytesPerAstraGB;
        d.latencyNsPerHop = latencyS * 1e9 / kSwitchHops;
        return d;
    }

    template <typename T, typename F> std::string yamlList(const std::vector<T>& items, F&& value)
    {
        std::string out = "[ ";
        for (size_t i = 0; i < items.size(); ++i)
            out += (i > 0 ? ", " : "") + value(items[i]);
        return out + " ]";
    }

} // namespace

std::optional<AstraSimSetup> astraSimSetup(
    const Config& config, const HardwareRates& rates, bool trackLocalMem, std::string& error)
{
    const int64_t world = config.parallelism.worldSize();
    const int64_t perNode = config.cluster.gpusPerNode;
    if (world < 2) {
        error = "the plan has " + std::to_string(world)
            + " rank; ASTRA-sim's analytical network needs at least 2 NPUs (raise dp, tp, pp or cp)";
        return std::nullopt;
    }
    if (perNode < 1) {
        error = "cluster.gpus_per_node must be at least 1, found " + std::to_string(perNode);
        return std::nullopt;
    }
    if (world > perNode && world % perNode != 0) {
        error = "world size " + std::to_string(world) + " is not a multiple of cluster.gpus_per_node "
            + std::to_string(perNode) + ": ASTRA-sim's network dimensions must multiply to the world size";
        return std::nullopt;
    }
    if (!(rates.peakFlops > 0) || !(rates.computeEfficiency > 0)) {
        error = "the GPU has no peak FLOP/s for precision " + std::string(toString(config.training.precision));
        return std::nullopt;
    }
    if (!(rates.hbmBytesPerS > 0) || !(rates.intraNodeBytesPerS > 0) || !(rates.interNodeBytesPerS > 0)) {
        error = "HBM, intra-node and inter-node bandwidths must be positive";
        return std::nullopt;
    }
    if (rates.intraNodeLatencyS < 0 || rates.interNodeLatencyS < 0) {
        error = "latencies must not be negative";
        return std::nullopt;
    }

    AstraSimSetup s;
    s.npus = world;
    s.peakPerfTflops = rates.peakFlops * rates.computeEfficiency / 1e12;
    s.localMemBwGBps = rates.hbmBytesPerS / 1e9;
    s.trackLocalMem = trackLocalMem;
    if (world <= perNode) {
        s.dims.push_back(switchDim(world, rates.intraNodeBytesPerS, rates.intraNodeLatencyS));
    } else if (perNode == 1) {
        s.dims.push_back(switchDim(world, rates.interNodeBytesPerS, rates.interNodeLatencyS));
    } else {
        s.dims.push_back(switchDim(perNode, rates.intraNodeBytesPerS, rates.intraNodeLatencyS));
        s.dims.push_back(switchDim(world / perNode, rates.interNodeBytesPerS, rates.interNodeLatencyS));
    }
    return s;
}

std::optional<AstraSimSetup> astraSimSetup(
    const Config& config, const GpuSpec& gpu, const EstimateOptions& options, bool trackLocalMem, std::string& error)
{
    return astraSimSetup(config, hardwareRates(config, gpu, options), trackLocalMem, error);
}

std::string astraSimSystemJson(const AstraSimSetup& setup)
{
    const size_t dims = setup.dims.size();
    nlohmann::ordered_json j;
    // FIFO: collectives leave the ready list in issue order, like the estimate's in-order communication stream.
    j["scheduling-policy"] = "FIFO";
    j["collective-optimization"] = "localBWAware";
    j["endpoint-delay"] = setup.endpointDelayNs;
    j["active-chunks-per-dimension"] = 1;
    j["preferred-dataset-splits"] = setup.datasetSplits;
    j["all-reduce-implementation"] = std::vector<std::string>(dims, "ring");
    j["reduce-scatter-implementation"] = std::vector<std::string>(dims, "ring");
    j["all-gather-implementation"] = std::vector<std::string>(dims, "ring");
    j["all-to-all-implementation"] = std::vector<std::string>(dims, "direct");
    j["roofline-enabled"] = 1;
    j["peak-perf"] = setup.peakPerfTflops;
    j["local-mem-bw"] = setup.localMemBwGBps;
    if (setup.trackLocalMem) {
        j["track-local-mem"] = 1;
        j["local-mem-trace-filename"] = "local_mem_trace";
    }
    return j.dump(2) + "\n";
}

std::string astraSimNetworkYaml(const AstraSimSetup& setup)
{
    const auto& d = setup.dims;
    std::string out = "# ASTRA-sim analytical network: one dimension per level (inside a node, across nodes)\n";
    out += "topology: " + yamlList(d, [](const AstraSimNetworkDim& x) { return x.topology; }) + "\n";
    out += "npus_count: " + yamlList(d, [](const AstraSimNetworkDim& x) { return std::to_string(x.npus); }) + "\n";
    out += "bandwidth: " + yamlList(d, [](const AstraSimNetworkDim& x) { return formatNumber(x.bandwidthGiBps); })
        + "  # GB/s as ASTRA-sim reads it: 2^30 bytes/s\n";
    out += "latency: " + yamlList(d, [](const AstraSimNetworkDim& x) { return formatNumber(x.latencyNsPerHop); })
        + "  # ns per hop\n";
    return out;
}

std::string astraSimMemoryJson()
{
    return "{\n  \"memory-type\": \"NO_MEMORY_EXPANSION\"\n}\n";
}

} // namespace stagecraft
