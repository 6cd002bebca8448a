// SPDX-License-Identifier: MIT
// A kernel table (estimate/kerneltable.h) from PyTorch profiler traces: `stagecraft calibrate`.
//
// Each GPU kernel is attributed through its launch to the CPU op that launched it (kineto/kinetoreader.h
// linkKinetoEvents), and up that op's parents to the first GEMM (aten::mm, addmm, bmm, baddbmm, linear, _scaled_mm)
// or attention op (scaled_dot_product_*, _flash_attention_*, _efficient_attention_*) with recorded shapes; the
// kernels of one op execution are summed (a GEMM may run a split-K reduction after its main kernel). NCCL kernels
// take their collective, element count, dtype and group from their own args or their record_param_comms op. Other
// kernels named "*elementwise*" are keyed by the bytes their op reads and writes. An entry's time is the median over
// the executions of its key.
#pragma once

#include "estimate/kerneltable.h"
#include "kineto/kinetotrace.h"

#include <string>
#include <vector>

namespace stagecraft {

struct CalibrationSummary
{
    int64_t traces = 0;
    int64_t kernels = 0;
    int64_t gemmOps = 0; ///< op executions timed into gemm entries
    int64_t attentionOps = 0;
    int64_t elementwiseKernels = 0;
    int64_t collectiveKernels = 0;
    int64_t otherCollectives = 0; ///< NCCL kernels of broadcasts, sends, receives (the estimate has no such node)
    int64_t collectivesWithoutArgs = 0; ///< NCCL kernels whose collective, size or group the trace does not record
    int64_t unlinkedKernels = 0; ///< kernels whose launching op is not in the trace
    int64_t otherKernels = 0; ///< linked kernels of ops the table has no kind for (norms, reductions, copies, ...)
};

/// The table of `traces` (one or more ranks of one job). `gpu` is recorded as the table's GPU name.
KernelTable calibrateKernelTable(
    const std::vector<const KinetoTrace*>& traces, const std::string& gpu, CalibrationSummary& summary);

/// Lines for the terminal: what was read and what went into the table.
std::string calibrationSummaryText(const CalibrationSummary& summary, const KernelTable& table);

} // namespace stagecraft
