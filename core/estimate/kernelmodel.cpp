// SPDX-License-Identifier: MIT
#include "estimate/kernelmodel.h"

#include "program/distributionplan.h"

#include <algorithm>
#include <cmath>

namespace stagecraft {

namespace {

    bool has(const std::vector<Index>& labels, Index i)
    {
        return std::find(labels.begin(), labels.end(), i) != labels.end();
    }

    int64_t ceilDiv(int64_t a, int64_t b)
    {
        return (a + b - 1) / b;
    }

} // namespace

GemmShape gemmShapeOf(const Op& op, const DistributionPlan& plan)
{
    GemmShape s;
    if (op.inputs.size() < 2 || op.outputs.empty())
        return s;
    const std::vector<Index>& a = op.inputs[0].labels;
    const std::vector<Index>& b = op.inputs[1].labels;
    const std::vector<Index>& c = op.outputs[0].labels;
    for (Index i : op.space) {
        const int64_t extent = std::max<int64_t>(1, plan.extents.local(op.region, i));
        const bool inA = has(a, i), inB = has(b, i), inC = has(c, i);
        if (inA && inB && inC)
            s.batch *= extent;
        else if (inC && inA)
            s.m *= extent;
        else if (inC && inB)
            s.n *= extent;
        else
            s.k *= extent; // contracted (in both inputs, or a reduction over one)
    }
    return s;
}

double gemmEfficiency(const GemmShape& shape, const GpuSpec& gpu, double maxEfficiency)
{
    const int64_t tile = std::max<int64_t>(1, gpu.gemmTile);
    const int64_t sms = std::max<int64_t>(1, gpu.smCount);
    const int64_t m = std::max<int64_t>(1, shape.m), n = std::max<int64_t>(1, shape.n);
    const int64_t k = std::max<int64_t>(1, shape.k), batch = std::max<int64_t>(1, shape.batch);
    const int64_t tm = ceilDiv(m, tile), tn = ceilDiv(n, tile);
    const double tileUse = static_cast<double>(m) * static_cast<double>(n)
        / (static_cast<double>(tm * tile) * static_cast<double>(tn * tile));
    // Tiles beyond 2^40 are all full waves; clamp before multiplying so nothing overflows.
    const double tiles = std::min(1e12, static_cast<double>(tm) * static_cast<double>(tn) * static_cast<double>(batch));
    double work = tiles;
    if (tiles < static_cast<double>(sms)) {
        // Split-K: each split keeps at least 4 K-steps of the main loop.
        const double maxSplit =
            std::max(1.0, std::floor(static_cast<double>(k) / (4.0 * double(gpu.gemmKOverhead + 1))));
        work = tiles * std::min(maxSplit, std::floor(static_cast<double>(sms) / tiles));
    }
    const double waves = std::ceil(work / static_cast<double>(sms));
    const double waveUse = work / (waves * static_cast<double>(sms));
    const double k0 = static_cast<double>(gpu.gemmKOverhead);
    const double depth =
        std::min(1.0, (static_cast<double>(k) / (static_cast<double>(k) + k0)) / (2048.0 / (2048.0 + k0)));
    return maxEfficiency * tileUse * waveUse * depth;
}

std::vector<double> opFlopRates(
    const DistributionPlan& plan, const GpuSpec& gpu, double peakFlops, const KernelEfficiency& efficiency)
{
    const ModelGraph& g = *plan.graph;
    std::vector<double> rates(g.ops.size(), peakFlops * efficiency.gemm);
    for (size_t i = 0; i < g.ops.size(); ++i) {
        const Op& op = g.ops[i];
        switch (op.kind) {
        case OpKind::MatMul:
        case OpKind::AttentionScores:
        case OpKind::AttentionContext:
            if (efficiency.fp8PeakFlops > 0 && fp8Gemm(op))
                rates[i] = efficiency.fp8PeakFlops * gemmEfficiency(gemmShapeOf(op, plan), gpu, efficiency.gemmFp8);
            else
                rates[i] = peakFlops * gemmEfficiency(gemmShapeOf(op, plan), gpu, efficiency.gemm);
            break;
        case OpKind::FlashAttention:
            rates[i] = peakFlops * (op.pass == Pass::Backward ? efficiency.flashBackward : efficiency.flashForward);
            break;
        default:
            break;
        }
        rates[i] = std::max(rates[i], 1.0);
    }
    return rates;
}

} // namespace stagecraft
