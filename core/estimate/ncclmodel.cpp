// SPDX-License-Identifier: MIT
#include "estimate/ncclmodel.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace stagecraft {

namespace {

    constexpr double kInf = std::numeric_limits<double>::infinity();

    // NCCL's latency model, microseconds, from NVIDIA/nccl src/graph/tuning.cc at
    // 5067397c2676d5aed50042fc39e5c8ee96eb0027 (`ncclTunerConstantsDefaults`): the base latency of each algorithm and
    // the latency of one step over NVLink or the network, per protocol. Our order: Simple, LL128, LL.
    struct Latencies
    {
        double base[3];
        double nvlink[3];
        double net[3];
    };
    constexpr Latencies kLatency[kNcclAlgorithmCount] = {
        { { 8.4, 14.0, 6.6 }, { 3.4, 1.9, 0.6 }, { 14.0, 4.0, 2.7 } }, // ring
        { { 8.4, 14.0, 6.8 }, { 4.0, 1.25, 0.6 }, { 14.0, 8.5, 5.0 } }, // tree
        { { 0, 0, 0 }, { 25, 0, 0 }, { 18, 0, 0 } }, // NVLS
        { { 0, 0, 0 }, { 25, 0, 0 }, { 20.9, 0, 0 } }, // NVLS tree
        { { 8, 8, 8 }, { 4.0, 0, 0 }, { 14, 0, 0 } }, // PAT
        { { 8.4, 14.0, 6.6 }, { 3.4, 1.9, 0.6 }, { 14.0, 4.0, 2.7 } }, // direct: a ring step
    };
    /// tuning.cc's network post overhead of an Intel host (1 us, 3x for Simple), a floor on inter-node ring steps.
    constexpr double kNetOverheadUs = 1.0;

    /// tuning.cc `llMaxBws`, GB/s: a single node by GPU generation (Ampere, Hopper, Blackwell), several nodes by
    /// node count (an Intel host: 2 nodes, more).
    double llMaxBytesPerS(const Fabric& fabric, int64_t domains)
    {
        if (domains > 1)
            return (domains <= 2 ? 39.0 : 20.4) * 1e9;
        switch (fabric.generation()) {
        case 1:
            return 87.7e9;
        case 3:
            return 282.0e9;
        default:
            return 141.0e9;
        }
    }

    double log2i(int64_t n)
    {
        double l = 0;
        while (n > 1) {
            n >>= 1;
            l += 1;
        }
        return l;
    }

    /// The least bandwidth the traffic leaving each unit (NVLink domain, leaf group, pod) of the group gets: the
    /// members of the unit times their per-GPU capacity at the level above it. Infinite within one domain.
    double networkBytesPerS(const GroupSpan& s, const Fabric& f)
    {
        double b = kInf;
        if (s.level >= FabricLevel::Leaf)
            b = std::min(b, double(s.perDomain) * f.capacityPerGpu(FabricLevel::Leaf));
        if (s.level >= FabricLevel::Spine)
            b = std::min(b, double(s.perLeaf) * f.capacityPerGpu(FabricLevel::Spine));
        if (s.level >= FabricLevel::Core)
            b = std::min(b, double(s.perPod) * f.capacityPerGpu(FabricLevel::Core));
        return b;
    }

    struct Candidate
    {
        CollectivePrice best;
        bool any = false;

        void offer(double timeS, NcclAlgorithm a, NcclProtocol p)
        {
            if (!(timeS >= 0) || !std::isfinite(timeS))
                return;
            if (!any || timeS < best.timeS) {
                best.timeS = timeS;
                best.algorithm = a;
                best.protocol = p;
                any = true;
            }
        }
    };

    bool allowed(int forced, NcclAlgorithm a)
    {
        return forced < 0 || forced == static_cast<int>(a);
    }

} // namespace

const char* toString(NcclAlgorithm a)
{
    switch (a) {
    case NcclAlgorithm::Ring:
        return "ring";
    case NcclAlgorithm::Tree:
        return "tree";
    case NcclAlgorithm::Nvls:
        return "nvls";
    case NcclAlgorithm::NvlsTree:
        return "nvls_tree";
    case NcclAlgorithm::Pat:
        return "pat";
    case NcclAlgorithm::Direct:
        return "direct";
    }
    return "ring";
}

const char* toString(NcclProtocol p)
{
    switch (p) {
    case NcclProtocol::Simple:
        return "simple";
    case NcclProtocol::Ll128:
        return "ll128";
    case NcclProtocol::Ll:
        return "ll";
    }
    return "simple";
}

CollectivePrice priceCollective(
    CollectiveType type, int64_t commSizeBytes, const GroupSpan& span, const Fabric& fabric, int forced)
{
    CollectivePrice none;
    none.level = span.level;
    const int64_t n = span.size;
    if (n <= 1)
        return none;
    const double nd = double(n), k = double(span.perDomain), domains = double(span.domains);
    const double s = double(std::max<int64_t>(0, commSizeBytes));
    const double nvlink = fabric.nvlinkBytesPerS() > 0 ? fabric.nvlinkBytesPerS() : kInf;
    const double net = networkBytesPerS(span, fabric);
    const bool multi = span.domains > 1;
    const double ring = std::min(span.perDomain > 1 ? nvlink : kInf, net);
    const double llMax = llMaxBytesPerS(fabric, span.domains);
    const double nvls = fabric.nvlsEfficiency() > 0 ? nvlink * fabric.nvlsEfficiency() : 0;

    auto lat = [](NcclAlgorithm a, int p, bool network) {
        const Latencies& l = kLatency[static_cast<int>(a)];
        return network ? l.net[p] : l.nvlink[p];
    };
    Candidate c;

    if (type == CollectiveType::AllToAll) {
        double t = 0;
        if (span.perDomain > 1)
            t = std::max(t, (k - 1) / nd * s / nvlink);
        if (span.level >= FabricLevel::Leaf)
            t = std::max(t, (nd - k) / nd * s / fabric.capacityPerGpu(FabricLevel::Leaf));
        if (span.level >= FabricLevel::Spine)
            t = std::max(t, (nd - double(span.perLeaf)) / nd * s / fabric.capacityPerGpu(FabricLevel::Spine));
        if (span.level >= FabricLevel::Core)
            t = std::max(t, (nd - double(span.perPod)) / nd * s / fabric.capacityPerGpu(FabricLevel::Core));
        const double latency =
            kLatency[static_cast<int>(NcclAlgorithm::Direct)].base[0] + lat(NcclAlgorithm::Direct, 0, multi);
        CollectivePrice out { t + latency * 1e-6, NcclAlgorithm::Direct, NcclProtocol::Simple, span.level };
        return out;
    }

    // Ring: all three.
    if (allowed(forced, NcclAlgorithm::Ring) && std::isfinite(ring)) {
        const bool ar = type == CollectiveType::AllReduce;
        const double volume = ar                ? 2 * (nd - 1) / nd * s
            : type == CollectiveType::AllGather ? (nd - 1) * s
                                                : (nd - 1) / nd * s;
        const double steps = ar ? 2 * (nd - 1) : nd - 1;
        const double interSteps = !multi ? 0 : ar ? 2 * (domains - 1) : domains - 1;
        for (int p = 0; p < 3; ++p) {
            double intra = lat(NcclAlgorithm::Ring, p, false);
            if (multi)
                intra = std::max(intra, kNetOverheadUs * (p == 0 ? 3 : 1));
            const double inter =
                span.perDomain == 1 ? lat(NcclAlgorithm::Tree, p, true) : lat(NcclAlgorithm::Ring, p, true);
            const double latency = kLatency[0].base[p] + (steps - interSteps) * intra + interSteps * inter;
            const double bw = p == 0 ? ring : p == 1 ? ring * 0.92 : std::min(llMax, ring * 0.5);
            c.offer(volume / bw + latency * 1e-6, NcclAlgorithm::Ring, NcclProtocol(p));
        }
    }

    if (type == CollectiveType::AllReduce) {
        // Tree: 2 S through the tree at 0.92 of the bandwidth (tuning.cc: busBw * .92, then algorithm bandwidth =
        // bus bandwidth * .5).
        if (allowed(forced, NcclAlgorithm::Tree) && std::isfinite(ring)) {
            const double ppn = nd / domains;
            for (int p = 0; p < 3; ++p) {
                const double intra = lat(NcclAlgorithm::Tree, p, false);
                const double inter = lat(NcclAlgorithm::Tree, p, true);
                const double latency = kLatency[1].base[p] + 2 * ((ppn - 1) * intra + log2i(span.domains) * inter);
                double bus = ring * 0.92;
                if (p == 1)
                    bus *= multi ? 120.0 / 128.0 : 7.0 / 9.0;
                if (p == 2)
                    bus = std::min(bus / 3.8, llMax);
                c.offer(2 * s / bus + latency * 1e-6, NcclAlgorithm::Tree, NcclProtocol(p));
            }
        }
        // NVLS within one domain; NVLS tree across domains (each GPU's S/k slice through the network).
        if (nvls > 0 && span.perDomain > 1) {
            if (!multi && allowed(forced, NcclAlgorithm::Nvls))
                c.offer(s * (1 + 1 / nd) / nvls + lat(NcclAlgorithm::Nvls, 0, false) * 1e-6, NcclAlgorithm::Nvls,
                    NcclProtocol::Simple);
            if (multi && allowed(forced, NcclAlgorithm::NvlsTree) && std::isfinite(net)) {
                const double intra = s * (1 + 1 / k) / nvls;
                const double inter = (span.domains <= 2 ? 1.0 : 2.0) * s / net;
                const double latency = lat(NcclAlgorithm::NvlsTree, 0, false)
                    + 2 * log2i(span.domains) * lat(NcclAlgorithm::NvlsTree, 0, true);
                c.offer(std::max(intra, inter) + latency * 1e-6, NcclAlgorithm::NvlsTree, NcclProtocol::Simple);
            }
        }
    } else {
        const double full = type == CollectiveType::AllGather ? s * nd : s;
        if (nvls > 0 && !multi && span.perDomain > 1 && allowed(forced, NcclAlgorithm::Nvls))
            c.offer((nd - 1) / nd * full / nvls + lat(NcclAlgorithm::Nvls, 0, false) * 1e-6, NcclAlgorithm::Nvls,
                NcclProtocol::Simple);
        // PAT: one GPU per node only (tuning.cc ncclPatEnable), Simple, 0.75 of the bandwidth over the whole buffer.
        if (multi && span.perDomain == 1 && allowed(forced, NcclAlgorithm::Pat) && std::isfinite(net)) {
            const double latency =
                kLatency[4].base[0] + log2i(span.domains) * (lat(NcclAlgorithm::Tree, 0, true) / 3.5) + nd * 2.8;
            c.offer(full / (0.75 * net) + latency * 1e-6, NcclAlgorithm::Pat, NcclProtocol::Simple);
        }
    }
    if (!c.any)
        return none;
    c.best.level = span.level;
    return c.best;
}

CollectivePrice priceTransfer(int64_t bytes, FabricLevel level, const Fabric& fabric)
{
    const double capacity = fabric.capacityPerGpu(level);
    const bool network = level != FabricLevel::NvLink;
    const Latencies& l = kLatency[static_cast<int>(NcclAlgorithm::Direct)];
    const double latency = l.base[0] + (network ? l.net[0] : l.nvlink[0]);
    const double t = (capacity > 0 ? double(std::max<int64_t>(0, bytes)) / capacity : 0.0) + latency * 1e-6;
    return { t, NcclAlgorithm::Direct, NcclProtocol::Simple, level };
}

double ncclTestsBusBandwidth(CollectiveType type, double sizeBytes, int64_t n, double timeS)
{
    if (!(timeS > 0) || n < 1)
        return 0;
    const double nd = double(n);
    const double factor = type == CollectiveType::AllReduce ? 2 * (nd - 1) / nd : (nd - 1) / nd;
    return sizeBytes / timeS * factor;
}

} // namespace stagecraft
