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
#include "estimate/ncclmodel.h"

#include <algorithm>
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

const char* toString(AstraSimBackend backend)
{
    return backend == AstraSimBackend::CongestionAware ? "congestion-aware" : "congestion-unaware";
}

namespace {

    /// ASTRA-sim's implementation closest to NCCL's algorithm: NVLink SHARP's one pass through the switch is
    /// "direct"; the rest run as rings. ASTRA-sim 518bd51's "doubleBinaryTree" crashed (SIGSEGV) on a 256-NPU
    /// switch dimension (tests/astrasim/matrix, l8b-256-dp32tp8), and it has no PAT: tree and PAT stay rings.
    const char* astraAlgorithm(NcclAlgorithm a)
    {
        switch (a) {
        case NcclAlgorithm::Nvls:
        case NcclAlgorithm::NvlsTree:
        case NcclAlgorithm::Direct:
            return "direct";
        case NcclAlgorithm::Ring:
        case NcclAlgorithm::Tree:
        case NcclAlgorithm::Pat:
            break;
        }
        return "ring";
    }

    /// The dimensions of cluster.topology for a world of `world` GPUs (see astraSimSetup()).
    bool topologyDims(const Config& config, const Fabric& f, AstraSimSetup& s, std::string& error)
    {
        const int64_t world = config.parallelism.worldSize();
        const int64_t domain = std::min(world, std::max<int64_t>(1, f.topology().nvlinkDomain));
        const int64_t gpn = std::max<int64_t>(1, config.cluster.gpusPerNode);
        // Units of each level, in GPUs: the domain, the leaf group, the pod, the world.
        const int64_t leafGpus = std::max(domain, f.leafNodes() * gpn);
        const int64_t podGpus = std::max(leafGpus, f.podNodes() * gpn);
        const int64_t sizes[4] = { domain, leafGpus, podGpus, world };
        int64_t below = 1;
        for (int level = 0; level < 4 && below < world; ++level) {
            const int64_t unit = std::min(world, sizes[level]);
            if (unit % below != 0 || (level == 3 && world % below != 0)) {
                error = "world size " + std::to_string(world) + " does not tile the topology's "
                    + toString(FabricLevel(level)) + " level of " + std::to_string(unit)
                    + " GPUs: ASTRA-sim's dimensions must multiply to the world";
                return false;
            }
            const int64_t npus = unit / below;
            if (npus < 2)
                continue;
            const FabricLevel l = FabricLevel(level);
            AstraSimNetworkDim d;
            d.topology = "Switch";
            d.npus = npus;
            d.bandwidthGiBps = f.capacityPerGpu(l) / kBytesPerAstraGB;
            // Half of NCCL's per-step latency per hop: Simple ring over NVLink 3.4 us, over the network 14 us.
            d.latencyNsPerHop = (l == FabricLevel::NvLink ? 3400.0 : 14000.0) / kSwitchHops;
            s.dims.push_back(d);
            s.levels.push_back(toString(l));
            // NCCL's choice for a 64 MiB operation over a group of this dimension alone.
            GroupSpan span;
            span.size = npus;
            span.level = l;
            span.perDomain = l == FabricLevel::NvLink ? npus : 1;
            span.perLeaf = l <= FabricLevel::Leaf ? npus : 1;
            span.perPod = l <= FabricLevel::Spine ? npus : 1;
            span.domains = l == FabricLevel::NvLink ? 1 : npus;
            const int64_t bytes = int64_t(64) << 20;
            s.allReduce.push_back(astraAlgorithm(priceCollective(CollectiveType::AllReduce, bytes, span, f).algorithm));
            s.reduceScatter.push_back(
                astraAlgorithm(priceCollective(CollectiveType::ReduceScatter, bytes, span, f).algorithm));
            s.allGather.push_back(
                astraAlgorithm(priceCollective(CollectiveType::AllGather, bytes / npus, span, f).algorithm));
            s.allToAll.push_back("direct");
            below = unit;
        }
        if (s.dims.empty()) {
            error = "the topology puts the whole world in one GPU";
            return false;
        }
        if (s.backend == AstraSimBackend::CongestionAware && s.dims.size() > 1) {
            const AstraSimNetworkDim top = s.dims.back();
            const std::string level = s.levels.back();
            s.notes.push_back(
                "the congestion-aware backend (astra-network-analytical 599a047) models one dimension: the "
                + std::to_string(s.dims.size()) + " levels of the topology (" +
                [&] {
                    std::string l;
                    for (const std::string& x : s.levels)
                        l += (l.empty() ? "" : ", ") + x;
                    return l;
                }()
                + ") run as one switch of " + std::to_string(world) + " NPUs at the " + level
                + " bandwidth, so traffic inside an NVLink domain is simulated at that bandwidth too");
            AstraSimNetworkDim one = top;
            one.npus = world;
            s.dims = { one };
            s.levels = { level };
            s.allReduce = { s.allReduce.back() };
            s.reduceScatter = { s.reduceScatter.back() };
            s.allGather = { s.allGather.back() };
            s.allToAll = { "direct" };
        }
        return true;
    }

} // namespace

std::optional<AstraSimSetup> astraSimSetup(
    const Config& config, const HardwareRates& rates, bool trackLocalMem, std::string& error, AstraSimBackend backend)
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
    s.backend = backend;
    if (backend == AstraSimBackend::CongestionAware) {
        // The congestion-aware backend sends a chunk over each link of its route in turn (store and forward,
        // astra-network-analytical congestion_aware/network/Link.cpp): one chunk through a switch takes twice its
        // serialization. Four chunks in flight per dimension pipeline the two hops, as NCCL's slices do.
        s.datasetSplits = 4;
        s.activeChunks = 4;
    }
    if (rates.fabric) {
        if (!topologyDims(config, *rates.fabric, s, error))
            return std::nullopt;
        return s;
    }
    if (world <= perNode) {
        s.dims.push_back(switchDim(world, rates.intraNodeBytesPerS, rates.intraNodeLatencyS));
    } else if (perNode == 1) {
        s.dims.push_back(switchDim(world, rates.interNodeBytesPerS, rates.interNodeLatencyS));
    } else if (backend == AstraSimBackend::CongestionAware) {
        s.dims.push_back(switchDim(world, rates.interNodeBytesPerS, rates.interNodeLatencyS));
        s.notes.push_back("the congestion-aware backend (astra-network-analytical 599a047) models one dimension: all "
            + std::to_string(world) + " NPUs on one switch at the inter-node bandwidth");
    } else {
        s.dims.push_back(switchDim(perNode, rates.intraNodeBytesPerS, rates.intraNodeLatencyS));
        s.dims.push_back(switchDim(world / perNode, rates.interNodeBytesPerS, rates.interNodeLatencyS));
    }
    return s;
}

std::optional<AstraSimSetup> astraSimSetup(const Config& config, const GpuSpec& gpu, const EstimateOptions& options,
    bool trackLocalMem, std::string& error, AstraSimBackend backend)
{
    return astraSimSetup(config, hardwareRates(config, gpu, options), trackLocalMem, error, backend);
}

std::string astraSimSystemJson(const AstraSimSetup& setup)
{
    const size_t dims = setup.dims.size();
    nlohmann::ordered_json j;
    // FIFO: collectives leave the ready list in issue order, like the estimate's in-order communication stream.
    j["scheduling-policy"] = "FIFO";
    j["collective-optimization"] = "localBWAware";
    j["endpoint-delay"] = setup.endpointDelayNs;
    j["active-chunks-per-dimension"] = setup.activeChunks;
    j["preferred-dataset-splits"] = setup.datasetSplits;
    auto impl = [&](const std::vector<std::string>& chosen, const char* otherwise) {
        return chosen.size() == dims ? chosen : std::vector<std::string>(dims, otherwise);
    };
    j["all-reduce-implementation"] = impl(setup.allReduce, "ring");
    j["reduce-scatter-implementation"] = impl(setup.reduceScatter, "ring");
    j["all-gather-implementation"] = impl(setup.allGather, "ring");
    j["all-to-all-implementation"] = impl(setup.allToAll, "direct");
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
    std::string out = "# ASTRA-sim analytical network (" + std::string(toString(setup.backend)) + "): one dimension per level ("
        + (setup.levels.empty() ? std::string("inside a node, across nodes") : [&] {
              std::string l;
              for (const std::string& x : setup.levels)
                  l += (l.empty() ? "" : ", ") + x;
              return l;
          }())
        + ")\n";
    for (const std::string& note : setup.notes)
        out += "# " + note + "\n";
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
