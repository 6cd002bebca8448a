// SPDX-License-Identifier: MIT
#include "estimate/kernelcalibration.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

namespace stagecraft {

namespace {

    enum class OpClass
    {
        None,
        Gemm,
        Attention
    };

    OpClass classOf(std::string_view name)
    {
        static constexpr std::string_view gemm[] = { "aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm",
            "aten::linear", "aten::_scaled_mm" };
        if (std::find(std::begin(gemm), std::end(gemm), name) != std::end(gemm))
            return OpClass::Gemm;
        if (name.rfind("aten::_scaled_dot_product_", 0) == 0 || name == "aten::scaled_dot_product_attention"
            || name.rfind("aten::_flash_attention_", 0) == 0 || name.rfind("aten::_efficient_attention_", 0) == 0)
            return OpClass::Attention;
        return OpClass::None;
    }

    bool contains(std::string_view text, std::string_view part)
    {
        return text.find(part) != std::string_view::npos;
    }

    bool containsNoCase(std::string_view text, std::string_view part)
    {
        std::string t(text);
        for (char& c : t)
            c = char(std::tolower(static_cast<unsigned char>(c)));
        return contains(t, part);
    }

    double median(std::vector<double> v)
    {
        std::sort(v.begin(), v.end());
        const size_t n = v.size();
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    }

    /// GEMM (dtype, batch, m, n, k) of an op's recorded inputs; false when they do not make one.
    bool gemmKey(
        const std::string& name, const KinetoShape& s, std::tuple<std::string, int64_t, int64_t, int64_t, int64_t>& key)
    {
        const auto& d = s.dims;
        const auto type = [&](size_t i) { return i < s.types.size() ? normalizedDtype(s.types[i]) : std::string(); };
        size_t a = 0;
        if (name == "aten::addmm" || name == "aten::baddbmm")
            a = 1; // after the bias
        if (name == "aten::linear") {
            // input [..., K], weight [N, K]
            if (d.size() < 2 || d[0].empty() || d[1].size() != 2 || d[0].back() != d[1][1])
                return false;
            int64_t m = 1;
            for (size_t i = 0; i + 1 < d[0].size(); ++i)
                m *= d[0][i];
            key = { type(0), 1, m, d[1][0], d[1][1] };
            return m > 0 && !std::get<0>(key).empty();
        }
        if (d.size() < a + 2)
            return false;
        const std::vector<int64_t>& x = d[a];
        const std::vector<int64_t>& y = d[a + 1];
        std::string dtype = name == "aten::_scaled_mm" ? "fp8" : type(a);
        if (x.size() == 2 && y.size() == 2 && x[1] == y[0])
            key = { dtype, 1, x[0], y[1], x[1] };
        else if (x.size() == 3 && y.size() == 3 && x[0] == y[0] && x[2] == y[1])
            key = { dtype, x[0], x[1], y[2], x[2] };
        else
            return false;
        return !dtype.empty() && std::get<2>(key) > 0 && std::get<3>(key) > 0 && std::get<4>(key) > 0;
    }

    /// Attention (dtype, backward, batch, seq, heads, head_dim) of an op's first input (the query, or the output
    /// gradient of a backward): [B, H, S, D] for scaled_dot_product_*, [B, S, H, D] for _flash/_efficient_*.
    bool attentionKey(const std::string& name, const KinetoShape& s,
        std::tuple<std::string, bool, int64_t, int64_t, int64_t, int64_t>& key)
    {
        if (s.dims.empty() || s.dims[0].size() != 4 || s.types.empty())
            return false;
        const std::vector<int64_t>& q = s.dims[0];
        const bool bshd =
            name.rfind("aten::_flash_attention_", 0) == 0 || name.rfind("aten::_efficient_attention_", 0) == 0;
        const bool backward = contains(name, "backward");
        const std::string dtype = normalizedDtype(s.types[0]);
        key = { dtype, backward, q[0], bshd ? q[1] : q[2], bshd ? q[2] : q[1], q[3] };
        return !dtype.empty() && q[0] > 0 && q[1] > 0 && q[2] > 0 && q[3] > 0;
    }

} // namespace

KernelTable calibrateKernelTable(
    const std::vector<const KinetoTrace*>& traces, const std::string& gpu, CalibrationSummary& summary)
{
    summary = CalibrationSummary {};
    std::map<std::tuple<std::string, int64_t, int64_t, int64_t, int64_t>, std::vector<double>> gemm;
    std::map<std::tuple<std::string, bool, int64_t, int64_t, int64_t, int64_t>, std::vector<double>> attention;
    std::map<int64_t, std::vector<double>> elementwise;
    std::map<std::tuple<std::string, int64_t, int64_t>, std::vector<double>> collectives;
    KernelTable table;
    table.gpu = gpu;
    for (const KinetoTrace* trace : traces) {
        const KinetoTrace& t = *trace;
        ++summary.traces;
        table.sources.push_back(t.source);
        if (table.device.empty())
            table.device = t.deviceName;
        std::unordered_map<int32_t, double> opTimeUs; // GEMM / attention op executions
        std::vector<int32_t> opOrder;
        for (const KinetoEvent& e : t.events) {
            if (e.kind != KinetoEventKind::Kernel)
                continue;
            ++summary.kernels;
            const std::string& name = t.nameOf(e);
            if (containsNoCase(name, "nccl")) {
                ++summary.collectiveKernels;
                int32_t c = e.collective;
                for (int32_t op = e.op, depth = 0; c < 0 && op >= 0 && depth < 8; ++depth) {
                    c = t.events[size_t(op)].collective;
                    op = t.events[size_t(op)].op;
                }
                const KinetoCollective* k = c >= 0 ? &t.collectives[size_t(c)] : nullptr;
                const std::string collective = k ? normalizedCollective(k->name) : std::string();
                const int64_t element = k ? dtypeBytes(k->dtype) : 0;
                const int64_t group = !k ? 0 : k->groupSize > 0 ? k->groupSize : int64_t(k->groupRanks.size());
                if (k && collective.empty() && !k->name.empty()) {
                    ++summary.otherCollectives; // broadcast, send/recv, barrier: no estimate node times them
                    continue;
                }
                if (collective.empty() || element == 0 || k->inNelems <= 0 || group <= 0) {
                    ++summary.collectivesWithoutArgs;
                    continue;
                }
                collectives[{ collective, k->inNelems * element, group }].push_back(e.durUs);
                continue;
            }
            if (e.op < 0) {
                ++summary.unlinkedKernels;
                continue;
            }
            int32_t owner = -1;
            for (int32_t op = e.op, depth = 0; op >= 0 && depth < 4; ++depth, op = t.events[size_t(op)].op)
                if (classOf(t.nameOf(t.events[size_t(op)])) != OpClass::None && t.events[size_t(op)].shape >= 0) {
                    owner = op;
                    break;
                }
            if (owner >= 0) {
                if (!opTimeUs.count(owner))
                    opOrder.push_back(owner);
                opTimeUs[owner] += e.durUs;
                continue;
            }
            const KinetoEvent& op = t.events[size_t(e.op)];
            if (containsNoCase(name, "elementwise") && op.bytes > 0) {
                ++summary.elementwiseKernels;
                elementwise[op.bytes].push_back(e.durUs);
            } else
                ++summary.otherKernels;
        }
        for (int32_t op : opOrder) {
            const KinetoEvent& e = t.events[size_t(op)];
            const std::string& name = t.nameOf(e);
            const KinetoShape& shape = t.shapes[size_t(e.shape)];
            if (classOf(name) == OpClass::Gemm) {
                std::tuple<std::string, int64_t, int64_t, int64_t, int64_t> key;
                if (gemmKey(name, shape, key)) {
                    gemm[key].push_back(opTimeUs[op]);
                    ++summary.gemmOps;
                } else
                    ++summary.otherKernels;
            } else {
                std::tuple<std::string, bool, int64_t, int64_t, int64_t, int64_t> key;
                if (attentionKey(name, shape, key)) {
                    attention[key].push_back(opTimeUs[op]);
                    ++summary.attentionOps;
                } else
                    ++summary.otherKernels;
            }
        }
    }
    for (const auto& [k, v] : gemm)
        table.gemm.push_back({ std::get<0>(k), std::get<1>(k), std::get<2>(k), std::get<3>(k), std::get<4>(k),
            median(v), int64_t(v.size()) });
    for (const auto& [k, v] : attention)
        table.attention.push_back({ std::get<0>(k), std::get<1>(k), std::get<2>(k), std::get<3>(k), std::get<4>(k),
            std::get<5>(k), median(v), int64_t(v.size()) });
    for (const auto& [k, v] : elementwise)
        table.elementwise.push_back({ k, median(v), int64_t(v.size()) });
    for (const auto& [k, v] : collectives)
        table.collectives.push_back({ std::get<0>(k), std::get<1>(k), std::get<2>(k), median(v), int64_t(v.size()) });
    return table;
}

std::string calibrationSummaryText(const CalibrationSummary& s, const KernelTable& t)
{
    std::string out;
    out += "read " + std::to_string(s.traces) + " trace(s), " + std::to_string(s.kernels) + " GPU kernels";
    out += t.device.empty() ? "\n" : " on " + t.device + "\n";
    out += "  GEMM:        " + std::to_string(s.gemmOps) + " op executions -> " + std::to_string(t.gemm.size())
        + " shapes\n";
    out += "  attention:   " + std::to_string(s.attentionOps) + " op executions -> "
        + std::to_string(t.attention.size()) + " shapes\n";
    out += "  elementwise: " + std::to_string(s.elementwiseKernels) + " kernels -> "
        + std::to_string(t.elementwise.size()) + " sizes\n";
    out += "  NCCL:        " + std::to_string(s.collectiveKernels - s.collectivesWithoutArgs - s.otherCollectives)
        + " kernels -> " + std::to_string(t.collectives.size()) + " (collective, size, group)";
    if (s.collectivesWithoutArgs > 0)
        out += "; " + std::to_string(s.collectivesWithoutArgs)
            + " without collective arguments (older profilers do not record them)";
    if (s.otherCollectives > 0)
        out += "; " + std::to_string(s.otherCollectives) + " of other collectives (broadcast, send/recv)";
    out += "\n  not in the table: " + std::to_string(s.otherKernels) + " kernels of other ops, "
        + std::to_string(s.unlinkedKernels) + " whose launching op is not in the trace\n";
    return out;
}

} // namespace stagecraft
