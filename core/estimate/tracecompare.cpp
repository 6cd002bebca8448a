// SPDX-License-Identifier: MIT
#include "estimate/tracecompare.h"

#include "estimate/kernelsources.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace stagecraft {

namespace {

    enum Kind : int32_t
    {
        Gemm,
        Attention,
        Elementwise,
        OtherCompute,
        AllReduce,
        AllGather,
        ReduceScatter,
        AllToAll,
        SendRecv,
        Broadcast,
        Copy,
        KindCount
    };

    std::string lower(std::string_view s)
    {
        std::string out(s);
        for (char& c : out)
            c = char(std::tolower(static_cast<unsigned char>(c)));
        return out;
    }

    bool has(const std::string& text, std::string_view part)
    {
        return text.find(part) != std::string::npos;
    }

    Kind collectiveKind(const std::string& normalized)
    {
        if (normalized == "all_reduce")
            return AllReduce;
        if (normalized == "all_gather")
            return AllGather;
        if (normalized == "reduce_scatter")
            return ReduceScatter;
        if (normalized == "all_to_all")
            return AllToAll;
        return KindCount;
    }

    /// The kind of a kernel: by the op that launched it (and its parents), else by its name.
    Kind kernelKind(const KinetoTrace& t, const KinetoEvent& e)
    {
        if (e.kind == KinetoEventKind::Memcpy || e.kind == KinetoEventKind::Memset)
            return Copy;
        const std::string name = lower(t.nameOf(e));
        if (has(name, "nccl")) {
            int32_t c = e.collective;
            for (int32_t op = e.op, depth = 0; c < 0 && op >= 0 && depth < 8; ++depth) {
                c = t.events[size_t(op)].collective;
                op = t.events[size_t(op)].op;
            }
            if (c >= 0)
                if (const Kind k = collectiveKind(normalizedCollective(t.collectives[size_t(c)].name)); k != KindCount)
                    return k;
            if (has(name, "allreduce"))
                return AllReduce;
            if (has(name, "allgather"))
                return AllGather;
            if (has(name, "reducescatter"))
                return ReduceScatter;
            if (has(name, "broadcast"))
                return Broadcast;
            return SendRecv; // SendRecv kernels also carry NCCL's all-to-all
        }
        for (int32_t op = e.op, depth = 0; op >= 0 && depth < 4; ++depth, op = t.events[size_t(op)].op) {
            const std::string& o = t.nameOf(t.events[size_t(op)]);
            if (o == "aten::mm" || o == "aten::addmm" || o == "aten::bmm" || o == "aten::baddbmm" || o == "aten::linear"
                || o == "aten::_scaled_mm" || o == "aten::matmul")
                return Gemm;
            if (o.find("attention") != std::string::npos)
                return Attention;
        }
        if (has(name, "flash") || has(name, "fmha") || has(name, "attention"))
            return Attention;
        if (has(name, "gemm") || has(name, "cutlass") || has(name, "cublas") || has(name, "xmma"))
            return Gemm;
        if (has(name, "elementwise"))
            return Elementwise;
        return OtherCompute;
    }

    Kind nodeKind(const ProgramNode& n, const ModelGraph* graph)
    {
        switch (n.kind) {
        case NodeKind::Compute: {
            const OpTimeClass c = graph && n.op >= 0 && size_t(n.op) < graph->ops.size()
                ? timeClassOf(graph->ops[size_t(n.op)].kind)
                : OpTimeClass::OtherCompute;
            return c == OpTimeClass::Gemm       ? Gemm
                : c == OpTimeClass::Attention   ? Attention
                : c == OpTimeClass::Elementwise ? Elementwise
                                                : OtherCompute;
        }
        case NodeKind::Collective:
            return collectiveKind(tableCollectiveName(n.collective));
        case NodeKind::Send:
        case NodeKind::Recv:
            return SendRecv;
        }
        return OtherCompute;
    }

    /// Sorted, disjoint union of intervals.
    std::vector<std::pair<double, double>> unite(std::vector<std::pair<double, double>> v)
    {
        std::sort(v.begin(), v.end());
        std::vector<std::pair<double, double>> out;
        for (const auto& s : v) {
            if (!out.empty() && s.first <= out.back().second)
                out.back().second = std::max(out.back().second, s.second);
            else
                out.push_back(s);
        }
        return out;
    }

    double measure(const std::vector<std::pair<double, double>>& disjoint)
    {
        double total = 0;
        for (const auto& [a, b] : disjoint)
            total += b - a;
        return total;
    }

} // namespace

const std::vector<std::string>& comparisonKindNames()
{
    static const std::vector<std::string> names { "GEMM", "attention", "elementwise", "other compute", "all_reduce",
        "all_gather", "reduce_scatter", "all_to_all", "send/recv", "broadcast", "memcpy/memset" };
    return names;
}

bool compareTrace(const KinetoTrace& trace, const SynthesisResult& result, const StepEstimate& estimate,
    const EstimateSchedule& schedule, int64_t rank, int64_t iteration, TraceComparison& out, std::string& error)
{
    TraceComparison c;
    c.source = trace.source;
    c.spanKinds = comparisonKindNames();
    c.rank = rank >= 0 ? rank : std::max<int64_t>(0, trace.rank());
    if (c.rank >= result.worldSize()) {
        error = "rank " + std::to_string(c.rank) + " is outside the config's " + std::to_string(result.worldSize())
            + " GPUs (give --rank)";
        return false;
    }
    c.stage = result.classOf(RankId { c.rank });
    // The iteration: a ProfilerStep annotation on the CPU; its GPU work is what the ops inside it launched.
    std::vector<const KinetoEvent*> steps;
    for (const KinetoEvent& e : trace.events)
        if (e.kind == KinetoEventKind::Annotation && trace.nameOf(e).rfind("ProfilerStep#", 0) == 0)
            steps.push_back(&e);
    std::sort(steps.begin(), steps.end(), [](const KinetoEvent* a, const KinetoEvent* b) { return a->tsUs < b->tsUs; });
    c.iterations = int64_t(steps.size());
    const KinetoEvent* step = nullptr;
    if (!steps.empty()) {
        if (iteration >= int64_t(steps.size())) {
            error = "iteration " + std::to_string(iteration) + " does not exist: the trace has "
                + std::to_string(steps.size()) + " (ProfilerStep annotations)";
            return false;
        }
        step = steps[size_t(iteration < 0 ? int64_t(steps.size()) - 1 : iteration)];
        c.iteration = trace.nameOf(*step);
    } else
        c.iteration = "whole trace";
    std::vector<std::pair<double, double>> compute, comm, copies;
    std::vector<std::pair<int32_t, Kind>> picked;
    double first = INFINITY, last = -INFINITY;
    for (size_t i = 0; i < trace.events.size(); ++i) {
        const KinetoEvent& e = trace.events[i];
        if (e.kind != KinetoEventKind::Kernel && e.kind != KinetoEventKind::Memcpy && e.kind != KinetoEventKind::Memset)
            continue;
        if (step) {
            // The op that launched it started inside the step; an unlinked kernel counts by its own start.
            const double launched = e.op >= 0 ? trace.events[size_t(e.op)].tsUs : e.tsUs;
            if (launched < step->tsUs || launched > step->tsUs + step->durUs)
                continue;
        }
        picked.emplace_back(int32_t(i), kernelKind(trace, e));
        first = std::min(first, e.tsUs);
        last = std::max(last, e.tsUs + e.durUs);
    }
    if (picked.empty()) {
        error = "no GPU kernel in " + c.iteration + " of " + trace.source;
        return false;
    }
    std::vector<KindComparison> kinds(KindCount);
    for (int32_t k = 0; k < KindCount; ++k)
        kinds[size_t(k)].kind = c.spanKinds[size_t(k)];
    for (const auto& [index, kind] : picked) {
        const KinetoEvent& e = trace.events[size_t(index)];
        MeasuredSpan s;
        s.startS = (e.tsUs - first) * 1e-6;
        s.endS = (e.tsUs + e.durUs - first) * 1e-6;
        s.event = index;
        s.kind = kind;
        s.communication = kind >= AllReduce;
        c.spans.push_back(s);
        if (kind == Copy)
            copies.emplace_back(s.startS, s.endS); // the copy engines: neither compute nor NCCL
        else
            (s.communication ? comm : compute).emplace_back(s.startS, s.endS);
        kinds[size_t(kind)].measuredS += e.durUs * 1e-6;
        ++kinds[size_t(kind)].measuredCount;
    }
    std::sort(c.spans.begin(), c.spans.end(),
        [](const MeasuredSpan& a, const MeasuredSpan& b) { return a.startS < b.startS; });
    c.measuredStepS = (last - first) * 1e-6;
    const auto computeUnion = unite(compute), commUnion = unite(comm);
    std::vector<std::pair<double, double>> all = compute;
    all.insert(all.end(), comm.begin(), comm.end());
    all.insert(all.end(), copies.begin(), copies.end());
    c.measuredBusyS = measure(unite(all));
    c.measuredExposedCommunicationS = uncoveredTime(commUnion, computeUnion);
    // Ours: the class's nodes as the estimate scheduled them.
    const ModelGraph* graph = result.plan ? result.plan->graph.get() : nullptr;
    if (size_t(c.stage) < schedule.classes.size() && size_t(c.stage) < result.classes.size()) {
        const ClassProgram& program = result.classes[size_t(c.stage)];
        for (const ScheduledNode& s : schedule.classes[size_t(c.stage)]) {
            if (s.node >= program.nodes.size() || s.stream == ScheduleStream::None || !(s.endS > s.startS))
                continue;
            const Kind k = nodeKind(program.nodes[s.node], graph);
            if (k == KindCount)
                continue;
            kinds[size_t(k)].syntheticS += s.endS - s.startS;
            ++kinds[size_t(k)].syntheticCount;
        }
    }
    if (size_t(c.stage) < estimate.classes.size()) {
        c.syntheticStepS = estimate.classes[size_t(c.stage)].stepTimeS;
        c.syntheticExposedCommunicationS = estimate.classes[size_t(c.stage)].exposedCommunicationS;
    }
    for (KindComparison& k : kinds)
        if (k.measuredCount > 0 || k.syntheticCount > 0)
            c.kinds.push_back(k);
    std::stable_sort(c.kinds.begin(), c.kinds.end(), [](const KindComparison& a, const KindComparison& b) {
        return std::fabs(a.differenceS()) > std::fabs(b.differenceS());
    });
    out = std::move(c);
    return true;
}

std::string comparisonText(const TraceComparison& c)
{
    std::string out;
    char line[256];
    const auto ms = [](double s) { return s * 1e3; };
    out += "measured: " + c.source + " (rank " + std::to_string(c.rank) + ", " + c.iteration + " of "
        + std::to_string(c.iterations) + " profiled steps)\nours: stage " + std::to_string(c.stage)
        + " of the config\n\n";
    std::snprintf(line, sizeof line, "%-26s %12s %12s %12s\n", "", "measured ms", "ours ms", "ours - meas.");
    out += line;
    std::snprintf(line, sizeof line, "%-26s %12.3f %12.3f %+12.3f\n", "step (GPU span)", ms(c.measuredStepS),
        ms(c.syntheticStepS), ms(c.syntheticStepS - c.measuredStepS));
    out += line;
    std::snprintf(line, sizeof line, "%-26s %12.3f %12.3f %+12.3f\n", "exposed communication",
        ms(c.measuredExposedCommunicationS), ms(c.syntheticExposedCommunicationS),
        ms(c.syntheticExposedCommunicationS - c.measuredExposedCommunicationS));
    out += line;
    out += "\nGPU time per kind, largest difference first (kernels / nodes):\n";
    for (const KindComparison& k : c.kinds) {
        std::snprintf(line, sizeof line, "%-26s %12.3f %12.3f %+12.3f   (%lld / %lld)\n", k.kind.c_str(),
            ms(k.measuredS), ms(k.syntheticS), ms(k.differenceS()), static_cast<long long>(k.measuredCount),
            static_cast<long long>(k.syntheticCount));
        out += line;
    }
    return out;
}

nlohmann::ordered_json comparisonJson(const TraceComparison& c)
{
    nlohmann::ordered_json j;
    j["source"] = c.source;
    j["rank"] = c.rank;
    j["stage"] = c.stage;
    j["iteration"] = c.iteration;
    j["profiled_steps"] = c.iterations;
    j["measured_step_s"] = c.measuredStepS;
    j["synthetic_step_s"] = c.syntheticStepS;
    j["measured_exposed_communication_s"] = c.measuredExposedCommunicationS;
    j["synthetic_exposed_communication_s"] = c.syntheticExposedCommunicationS;
    nlohmann::ordered_json kinds = nlohmann::ordered_json::array();
    for (const KindComparison& k : c.kinds)
        kinds.push_back({ { "kind", k.kind }, { "measured_s", k.measuredS }, { "synthetic_s", k.syntheticS },
            { "difference_s", k.differenceS() }, { "measured_kernels", k.measuredCount },
            { "synthetic_nodes", k.syntheticCount } });
    j["kinds"] = std::move(kinds);
    return j;
}

} // namespace stagecraft
