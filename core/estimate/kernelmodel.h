// SPDX-License-Identifier: MIT
#pragma once

#include "estimate/gpuspec.h"
#include "model/op.h"

#include <cstdint>
#include <vector>

namespace stagecraft {

struct DistributionPlan;

/// A (batched) GEMM C[batch, m, n] = A[batch, m, k] B[batch, k, n] on one rank, in local extents.
struct GemmShape
{
    int64_t m = 1;
    int64_t n = 1;
    int64_t k = 1;
    int64_t batch = 1;
};

/// The GEMM an op of kind MatMul, AttentionScores or AttentionContext runs, read from its operands' index labels:
/// indices of both inputs and the output are batch, of both inputs only are contracted (k), of the first input
/// and the output m, of the second input and the output n; each at its local extent in the op's region.
GemmShape gemmShapeOf(const Op& op, const DistributionPlan& plan);

/// Fraction of dense peak a GEMM of `shape` reaches on `gpu` when the best large GEMM reaches `maxEfficiency`:
///   maxEfficiency * tile * wave * depth, where (NVIDIA, "Matrix Multiplication Background User's Guide")
///   tile  = m n / (ceil(m/T) T * ceil(n/T) T)              the partly empty output tiles of side T = gemm_tile,
///   wave  = tiles / (ceil(tiles / SMs) * SMs)              the partly full last wave (tiles = the m, n tiles
///                                                          times batch, times a split of k when tiles < SMs, as
///                                                          cuBLAS splits a short, deep GEMM),
///   depth = min(1, (k/(k+K0)) / (2048/(2048+K0)))          a short k (K0 = gemm_k_overhead) relative to the
///                                                          k = 2048 at which the best GEMM was measured.
double gemmEfficiency(const GemmShape& shape, const GpuSpec& gpu, double maxEfficiency);

/// Kernel rates of one estimate, resolved from the GPU preset and the config's overrides (cluster.*_efficiency).
struct KernelEfficiency
{
    double gemm = 0; ///< of a large GEMM
    double flashForward = 0;
    double flashBackward = 0;
    double hbm = 0; ///< fraction of HBM bandwidth of a memory-bound kernel
    /// FP8 training: the FP8 GEMMs (model/op.h, fp8Gemm) run at this peak times gemmFp8 x their shape's factor;
    /// 0 = no FP8 GEMMs.
    double fp8PeakFlops = 0;
    double gemmFp8 = 0;
    friend bool operator==(const KernelEfficiency&, const KernelEfficiency&) = default;
};

/// The FLOP/s each op of `plan`'s graph computes at on one rank (index = op): GEMMs at
/// peak * gemmEfficiency(shape), FlashAttention at peak * the forward or backward efficiency, every other op at
/// peak * efficiency.gemm (their time is their bytes over the HBM bandwidth: see computeTimeS()).
std::vector<double> opFlopRates(
    const DistributionPlan& plan, const GpuSpec& gpu, double peakFlops, const KernelEfficiency& efficiency);

} // namespace stagecraft
