// SPDX-License-Identifier: MIT
#include "estimate/kernelsources.h"

#include "program/distributionplan.h"
#include "synthesis/synthesis.h"

namespace stagecraft {

const char* toString(OpTimeClass c)
{
    switch (c) {
    case OpTimeClass::Gemm:
        return "GEMM";
    case OpTimeClass::Attention:
        return "attention";
    case OpTimeClass::Elementwise:
        return "elementwise";
    case OpTimeClass::OtherCompute:
        return "other compute";
    case OpTimeClass::Collective:
        return "collectives";
    case OpTimeClass::Count:
        break;
    }
    return "?";
}

OpTimeClass timeClassOf(OpKind kind)
{
    switch (kind) {
    case OpKind::MatMul:
    case OpKind::AttentionScores:
    case OpKind::AttentionContext:
        return OpTimeClass::Gemm;
    case OpKind::FlashAttention:
        return OpTimeClass::Attention;
    case OpKind::Add:
    case OpKind::Activation:
    case OpKind::Dropout:
        return OpTimeClass::Elementwise;
    default:
        return OpTimeClass::OtherCompute;
    }
}

const char* tableCollectiveName(CollectiveType type)
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

std::string kernelDtype(const Op& op, Precision precision)
{
    switch (precision) {
    case Precision::Fp32:
        return "fp32";
    case Precision::Fp16:
        return "fp16";
    case Precision::Bf16:
        return "bf16";
    case Precision::Fp8:
        return fp8Gemm(op) ? "fp8" : "bf16";
    }
    return "";
}

std::vector<double> measuredOpTimes(
    const DistributionPlan& plan, const KernelTable& table, Precision precision, std::vector<TableMatch>& match)
{
    const ModelGraph& g = *plan.graph;
    std::vector<double> times(g.ops.size(), -1.0);
    match.assign(g.ops.size(), TableMatch::None);
    for (size_t i = 0; i < g.ops.size(); ++i) {
        const Op& op = g.ops[i];
        const std::string dtype = kernelDtype(op, precision);
        TableLookup found;
        switch (timeClassOf(op.kind)) {
        case OpTimeClass::Gemm:
            found = lookupGemm(table, dtype, gemmShapeOf(op, plan));
            break;
        case OpTimeClass::Attention: {
            const auto local = [&](Index index) { return std::max<int64_t>(1, plan.extents.local(op.region, index)); };
            found = lookupAttention(table, dtype, op.pass == Pass::Backward, local(Index::Batch), local(Index::Seq),
                local(Index::Heads), local(Index::HeadDim));
            break;
        }
        case OpTimeClass::Elementwise:
            if (i < plan.opBytes.size())
                found = lookupElementwise(table, plan.opBytes[i]);
            break;
        default:
            break;
        }
        match[i] = found.match;
        if (found.match != TableMatch::None)
            times[i] = found.timeS;
    }
    return times;
}

HardwareRates withKernelTable(
    HardwareRates rates, const DistributionPlan& plan, std::shared_ptr<const KernelTable> table, Precision precision)
{
    if (!table || !plan.graph)
        return rates;
    std::vector<TableMatch> match;
    rates.opMeasuredS = std::make_shared<const std::vector<double>>(measuredOpTimes(plan, *table, precision, match));
    rates.opMeasuredMatch = std::make_shared<const std::vector<TableMatch>>(std::move(match));
    rates.kernelTable = std::move(table);
    return rates;
}

KernelSourceCounts countKernelSources(const SynthesisResult& result, const HardwareRates& rates)
{
    KernelSourceCounts counts;
    counts.table = result.config.cluster.kernelTable;
    const ModelGraph* graph = result.plan ? result.plan->graph.get() : nullptr;
    for (const ClassProgram& program : result.classes) {
        const CommPlacement placement(result.mesh(), program.exampleRank, result.config.cluster.gpusPerNode);
        for (const ProgramNode& n : program.nodes) {
            OpTimeClass c = OpTimeClass::OtherCompute;
            TableMatch m = TableMatch::None;
            if (n.kind == NodeKind::Compute) {
                if (graph && n.op >= 0 && size_t(n.op) < graph->ops.size())
                    c = timeClassOf(graph->ops[size_t(n.op)].kind);
                if (rates.opMeasuredMatch && n.op >= 0 && size_t(n.op) < rates.opMeasuredMatch->size())
                    m = (*rates.opMeasuredMatch)[size_t(n.op)];
            } else if (n.kind == NodeKind::Collective) {
                c = OpTimeClass::Collective;
                if (rates.kernelTable)
                    m = lookupCollective(
                        *rates.kernelTable, tableCollectiveName(n.collective), n.bytes, placement.groupSize(n.mask))
                            .match;
            } else
                continue; // pipeline sends and receives: always the link model
            (m == TableMatch::Exact                 ? counts.measured
                    : m == TableMatch::Interpolated ? counts.interpolated
                                                    : counts.modelled)[size_t(c)] += 1;
        }
    }
    return counts;
}

std::string kernelSourcesText(const KernelSourceCounts& k)
{
    if (!k.used())
        return "op times: all modelled (no cluster.kernel_table)\n";
    std::string out =
        "op times from kernel table " + k.table + " (program nodes measured / interpolated / modelled):\n";
    for (size_t c = 0; c < size_t(OpTimeClass::Count); ++c) {
        const auto cls = OpTimeClass(c);
        if (k.total(cls) == 0)
            continue;
        out += std::string("  ") + toString(cls) + ": " + std::to_string(k.measured[c]) + " / "
            + std::to_string(k.interpolated[c]) + " / " + std::to_string(k.modelled[c]) + "\n";
    }
    return out;
}

nlohmann::ordered_json kernelSourcesJson(const KernelSourceCounts& k)
{
    nlohmann::ordered_json j;
    j["table"] = k.used() ? nlohmann::ordered_json(k.table) : nlohmann::ordered_json();
    nlohmann::ordered_json classes = nlohmann::ordered_json::array();
    for (size_t c = 0; c < size_t(OpTimeClass::Count); ++c)
        classes.push_back({ { "class", toString(OpTimeClass(c)) }, { "measured", k.measured[c] },
            { "interpolated", k.interpolated[c] }, { "modelled", k.modelled[c] } });
    j["classes"] = std::move(classes);
    return j;
}

} // namespace stagecraft
