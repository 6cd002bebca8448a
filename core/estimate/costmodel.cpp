// SPDX-License-Identifier: MIT
#include "estimate/costmodel.h"

#include "program/distributionplan.h"
#include "program/inputbytes.h"

#include <algorithm>
#include <cmath>

namespace stagecraft {

namespace {

    double orPreset(double configured, double preset)
    {
        return configured > 0 ? configured : preset;
    }

    /// ceil(log2 n) communication steps of latency for a group of n > 1 (NCCL's tree depth for small messages).
    double latencySteps(int64_t n)
    {
        return n <= 1 ? 0.0 : std::ceil(std::log2(static_cast<double>(n)));
    }

    /// A kernel table's name of a collective type (kernelsources.h tableCollectiveName, which needs the plan).
    const char* collectiveTableName(CollectiveType type)
    {
        switch (type) {
        case CollectiveType::AllReduce:
            return "all_reduce";
        case CollectiveType::AllGather:
            return "all_gather";
        case CollectiveType::ReduceScatter:
            return "reduce_scatter";
        case CollectiveType::AllToAll:
            return "all_to_all";
        }
        return "";
    }

    /// Bytes each GPU sends over its link in a ring collective among n (the nccl-tests bus-bandwidth factors).
    double ringVolume(CollectiveType type, double s, double n)
    {
        switch (type) {
        case CollectiveType::AllReduce:
            return 2 * (n - 1) / n * s;
        case CollectiveType::AllGather:
            return (n - 1) * s;
        case CollectiveType::ReduceScatter:
        case CollectiveType::AllToAll:
            return (n - 1) / n * s;
        }
        return 0;
    }

} // namespace

HardwareRates hardwareRates(const Config& config, const GpuSpec& gpu, const EstimateOptions& options)
{
    const ClusterConfig& cl = config.cluster;
    HardwareRates r;
    r.peakFlops = gpu.peakFlops(config.training.precision);
    r.kernels.gemm = orPreset(cl.gemmEfficiency, gpu.gemmEfficiency);
    // An attention override scales the backward with it, keeping the preset's backward / forward ratio.
    const double flashScale = cl.attentionEfficiency > 0 && gpu.flashForwardEfficiency > 0
        ? cl.attentionEfficiency / gpu.flashForwardEfficiency
        : 1.0;
    r.kernels.flashForward = gpu.flashForwardEfficiency * flashScale;
    r.kernels.flashBackward = std::min(1.0, gpu.flashBackwardEfficiency * flashScale);
    r.kernels.hbm = orPreset(cl.hbmEfficiency, gpu.hbmEfficiency);
    // FP8 training, or serving with FP8 weights (whose GEMMs run at the FP8 peak, as TensorRT-LLM's FP8 checkpoints).
    if ((config.training.precision == Precision::Fp8 && !isInference(config))
        || (isInference(config) && config.inference.fp8Weights)) {
        // FP8 GEMMs need an fp8 peak and a measured FP8 GEMM efficiency: without them no rate (the callers report
        // "no peak FLOP/s for precision fp8").
        r.kernels.fp8PeakFlops = gpu.fp8Flops;
        r.kernels.gemmFp8 = gpu.gemmFp8Efficiency;
        if (!(gpu.fp8Flops > 0) || !(gpu.gemmFp8Efficiency > 0))
            r.peakFlops = 0;
    }
    if (options.flatComputeEfficiency > 0) {
        r.kernels.gemm = r.kernels.flashForward = r.kernels.flashBackward = options.flatComputeEfficiency;
        r.kernels.hbm = 1;
    }
    r.computeEfficiency = r.kernels.gemm;
    r.hbmBytesPerS = gpu.hbmBytesPerS * r.kernels.hbm;
    if (cl.topology.enabled())
        r.fabric = std::make_shared<const Fabric>(cl);
    r.intraNodeBytesPerS = cl.intraNodeBandwidthGbps * 1e9 * cl.intraNodeEfficiency;
    r.interNodeBytesPerS = cl.interNodeBandwidthGbps * 1e9 * cl.interNodeEfficiency;
    r.intraNodeLatencyS = cl.intraNodeLatencyUs * 1e-6;
    r.interNodeLatencyS = cl.interNodeLatencyUs * 1e-6;
    r.overlapGradReduce = config.parallelism.overlapGradReduce;
    r.overlapParamGather = config.parallelism.overlapParamGather;
    r.tpCommOverlap = config.parallelism.tpCommOverlap;
    r.gradientAccumulationFusion = config.training.gradientAccumulationFusion;
    r.overlapP2pComm = config.parallelism.overlapP2pComm;
    r.kernelLaunchS = options.flatComputeEfficiency > 0 ? 0.0 : cl.kernelLaunchUs * 1e-6;
    return r;
}

HardwareRates withOpRates(
    HardwareRates rates, const DistributionPlan& plan, const GpuSpec& gpu, const EstimateOptions& options)
{
    if (options.flatComputeEfficiency > 0 || !plan.graph)
        return rates;
    rates.opFlopRate =
        std::make_shared<const std::vector<double>>(opFlopRates(plan, gpu, rates.peakFlops, rates.kernels));
    if (isInference(plan.config) && plan.config.inference.fp8Weights) {
        const ModelGraph& g = *plan.graph;
        std::vector<double> scale(g.ops.size(), 1.0);
        for (size_t i = 0; i < g.ops.size(); ++i) {
            const Op& op = g.ops[i];
            if (!fp8Gemm(op))
                continue;
            double total = 0, weights = 0;
            for (size_t k = 0; k < op.inputs.size(); ++k) {
                const double b = static_cast<double>(inputBytes(plan, i, k));
                total += b;
                if (g.tensor(op.inputs[k].tensor).role == TensorRole::Weight)
                    weights += b;
            }
            for (const Operand& out : op.outputs)
                total += static_cast<double>(plan.tensorBytes[static_cast<size_t>(out.tensor.value)]);
            if (total > 0)
                scale[i] = (total - weights / 2) / total;
        }
        rates.opByteScale = std::make_shared<const std::vector<double>>(std::move(scale));
    }
    return rates;
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
    return ringVolume(type, static_cast<double>(commSizeBytes), static_cast<double>(groupSize)) / bytesPerS + latencyS;
}

double hierarchicalCollectiveTimeS(
    CollectiveType type, int64_t commSizeBytes, int64_t groupSize, int64_t perNode, const HardwareRates& r)
{
    if (groupSize <= 1)
        return 0;
    const int64_t k = std::clamp<int64_t>(perNode, 1, groupSize);
    const int64_t a = std::max<int64_t>(1, groupSize / k);
    const double s = static_cast<double>(commSizeBytes);
    const double bi = r.intraNodeBytesPerS, be = r.interNodeBytesPerS;
    if (a == 1)
        return ringVolume(type, s, static_cast<double>(k)) / bi + latencySteps(k) * r.intraNodeLatencyS;
    const double latency = latencySteps(k) * r.intraNodeLatencyS + latencySteps(a) * r.interNodeLatencyS;
    if (k == 1)
        return ringVolume(type, s, static_cast<double>(a)) / be + latency;
    const double kd = static_cast<double>(k), ad = static_cast<double>(a), n = static_cast<double>(groupSize);
    switch (type) {
    case CollectiveType::AllReduce:
        return 2 * (kd - 1) / kd * s / bi + 2 * (ad - 1) / ad * (s / kd) / be + latency;
    case CollectiveType::ReduceScatter: // S = the full input
        return (kd - 1) / kd * s / bi + (ad - 1) / ad * (s / kd) / be + latency;
    case CollectiveType::AllGather: // S = the input shard: across nodes first, then a * S within the node
        return (ad - 1) * s / be + (kd - 1) * ad * s / bi + latency;
    case CollectiveType::AllToAll:
        return std::max((n - kd) / n * s / be, (kd - 1) / n * s / bi) + latency;
    }
    return 0;
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
    m_perNode.fill(0);
    m_span.fill(GroupSpan { 0 });
}

const GroupSpan& CommPlacement::span(AxisMask mask, const Fabric& fabric) const
{
    GroupSpan& cached = m_span[mask & 31u];
    if (cached.size == 0)
        cached = fabric.span(m_mesh->groupMembers(mask, m_mesh->groupIndex(mask, m_rank)), m_rank.value);
    return cached;
}

FabricLevel CommPlacement::peerLevel(int32_t peerStage, const Fabric& fabric) const
{
    return fabric.levelBetween(m_rank.value, m_mesh->withCoordinate(m_rank, Axis::Pp, peerStage).value);
}

CollectivePrice commPrice(
    const ProgramNode& node, const HardwareRates& rates, const CommPlacement& placement, int32_t peerStage)
{
    if (!rates.fabric)
        return {};
    if (node.kind == NodeKind::Collective)
        return priceCollective(node.collective, node.bytes, placement.span(node.mask, *rates.fabric), *rates.fabric);
    if (node.kind == NodeKind::Send)
        return priceTransfer(node.bytes, placement.peerLevel(peerStage, *rates.fabric), *rates.fabric);
    return {};
}

int64_t CommPlacement::membersPerNode(AxisMask mask) const
{
    int64_t& cached = m_perNode[mask & 31u];
    if (cached == 0) {
        const int64_t node = m_rank.value / m_gpusPerNode;
        int64_t same = 0;
        for (int64_t member : m_mesh->groupMembers(mask, m_mesh->groupIndex(mask, m_rank)))
            same += member / m_gpusPerNode == node ? 1 : 0;
        cached = std::max<int64_t>(1, same);
    }
    return cached;
}

bool CommPlacement::intraNode(AxisMask mask) const
{
    return membersPerNode(mask) >= groupSize(mask);
}

bool CommPlacement::peerIntraNode(int32_t peerStage) const
{
    const RankId peer = m_mesh->withCoordinate(m_rank, Axis::Pp, peerStage);
    return peer.value / m_gpusPerNode == m_rank.value / m_gpusPerNode;
}

bool isDataParallelCollective(const ProgramNode& node)
{
    return node.kind == NodeKind::Collective && (node.mask & kDpMask) != 0
        && node.collective != CollectiveType::AllToAll;
}

bool hiddenBehindNextForward(const ProgramNode& node, const HardwareRates& rates)
{
    return rates.overlapParamGather && node.pass == Pass::Optimizer && node.kind == NodeKind::Collective;
}

double unfusedAccumulationTimeS(const ProgramNode& node, const std::vector<Buffer>& buffers, const HardwareRates& rates)
{
    if (rates.gradientAccumulationFusion || node.kind != NodeKind::Compute || node.pass != Pass::Backward
        || !(rates.hbmBytesPerS > 0))
        return 0;
    double bytes = 0;
    for (int32_t w : node.writes)
        if (w >= 0 && static_cast<size_t>(w) < buffers.size()
            && buffers[static_cast<size_t>(w)].category == MemoryCategory::Gradients)
            bytes += 3.0 * static_cast<double>(buffers[static_cast<size_t>(w)].bytes);
    return bytes / rates.hbmBytesPerS;
}

double nodeTimeS(const ProgramNode& node, const HardwareRates& rates, const CommPlacement& placement, int32_t peerStage)
{
    switch (node.kind) {
    case NodeKind::Compute: {
        if (const std::vector<double>* measured = rates.opMeasuredS.get(); measured && node.op >= 0
            && static_cast<size_t>(node.op) < measured->size() && (*measured)[static_cast<size_t>(node.op)] >= 0)
            return (*measured)[static_cast<size_t>(node.op)] + rates.kernelLaunchS;
        const std::vector<double>* table = rates.opFlopRate.get();
        if (!table || node.op < 0 || static_cast<size_t>(node.op) >= table->size())
            return computeTimeS(node.flops, node.bytes, rates) + rates.kernelLaunchS;
        const double math = static_cast<double>(node.flops) / (*table)[static_cast<size_t>(node.op)];
        const std::vector<double>* scale = rates.opByteScale.get();
        const double bytes = static_cast<double>(node.bytes)
            * (scale && static_cast<size_t>(node.op) < scale->size() ? (*scale)[static_cast<size_t>(node.op)] : 1.0);
        const double memory = rates.hbmBytesPerS > 0 ? bytes / rates.hbmBytesPerS : 0.0;
        return std::max(math, memory) + rates.kernelLaunchS;
    }
    case NodeKind::Collective: {
        const int64_t n = placement.groupSize(node.mask);
        const TableLookup measured = rates.kernelTable
            ? lookupCollective(*rates.kernelTable, collectiveTableName(node.collective), node.bytes, n)
            : TableLookup {};
        double t = measured.match != TableMatch::None ? measured.timeS
            : rates.fabric
            ? commPrice(node, rates, placement, peerStage).timeS
            : hierarchicalCollectiveTimeS(node.collective, node.bytes, n, placement.membersPerNode(node.mask), rates);
        // Transformer Engine's overlap splits a TP collective into n chunks pipelined with the GEMM it feeds: one
        // chunk stays exposed.
        if (rates.tpCommOverlap && node.microBatch >= 0 && (node.mask & kDpMask) == 0
            && node.collective != CollectiveType::AllToAll)
            t /= static_cast<double>(std::max<int64_t>(1, n));
        return t;
    }
    case NodeKind::Send: {
        if (rates.fabric)
            return commPrice(node, rates, placement, peerStage).timeS;
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
