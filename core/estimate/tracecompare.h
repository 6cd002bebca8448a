// SPDX-License-Identifier: MIT
// A measured training step (one rank's PyTorch profiler trace) beside the synthesized one (`stagecraft
// compare-trace`, the Timeline tab's "Overlay measured trace..."): per op kind the GPU time of each, the largest
// differences first, and the exposed communication of both.
//
// The measured iteration is the GPU work launched inside one "ProfilerStep#N" annotation (torch.profiler's
// schedule writes one per step; without any, the whole trace). Its kernels are classed by the op that launched them
// (kernelcalibration.h) or, without one, by their name: GEMM, attention, elementwise, other compute, each NCCL
// collective, memcpy/memset. Ours are the nodes of the rank's class in the step-time estimate (stepestimate.h),
// classed by op kind (kernelsources.h) and collective type. Matching is by kind only: a trace names ATen ops, not
// the model's layers.
#pragma once

#include "estimate/stepestimate.h"
#include "kineto/kinetotrace.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace stagecraft {

/// One GPU activity of the measured iteration, seconds from its first kernel's start.
struct MeasuredSpan
{
    double startS = 0;
    double endS = 0;
    int32_t event = -1; ///< index into the trace's events
    int32_t kind = 0; ///< index into TraceComparison::kinds' names (kindNames())
    bool communication = false; ///< NCCL kernels and copies: the communication lane
};

struct KindComparison
{
    std::string kind; ///< "GEMM", "attention", "elementwise", "other compute", "all_reduce", ..., "memcpy/memset"
    double measuredS = 0;
    double syntheticS = 0;
    int64_t measuredCount = 0;
    int64_t syntheticCount = 0;

    double differenceS() const
    {
        return syntheticS - measuredS;
    }
};

struct TraceComparison
{
    std::string source;
    int64_t rank = 0; ///< the trace's rank (distributedInfo), or the one asked for
    int32_t stage = 0; ///< the class of ours it is compared with
    std::string iteration; ///< "ProfilerStep#552", or "whole trace"
    int64_t iterations = 0; ///< ProfilerStep annotations in the trace
    double measuredStepS = 0; ///< first kernel start to last kernel end of the iteration
    double syntheticStepS = 0; ///< the class's step time
    double measuredBusyS = 0; ///< union of the GPU's activity
    double measuredExposedCommunicationS = 0; ///< NCCL kernels not under any compute kernel
    double syntheticExposedCommunicationS = 0;
    std::vector<KindComparison> kinds; ///< largest |difference| first
    std::vector<MeasuredSpan> spans; ///< by start
    std::vector<std::string> spanKinds; ///< kind names MeasuredSpan::kind indexes
};

/// All kind names, in a fixed order (MeasuredSpan::kind indexes TraceComparison::spanKinds, which is this list).
const std::vector<std::string>& comparisonKindNames();

/// Compares `trace` with `estimate` / `schedule` of `result` (estimateStep with a schedule). `rank` < 0 takes the
/// trace's rank (0 when it has none); `iteration` < 0 the last ProfilerStep, else the iteration-th (0-based).
/// False with `error` set when the rank is outside the world or the iteration does not exist or holds no kernel.
bool compareTrace(const KinetoTrace& trace, const SynthesisResult& result, const StepEstimate& estimate,
    const EstimateSchedule& schedule, int64_t rank, int64_t iteration, TraceComparison& out, std::string& error);

/// A table for the terminal: the step, the exposed communication, then the kinds.
std::string comparisonText(const TraceComparison& c);
nlohmann::ordered_json comparisonJson(const TraceComparison& c);

} // namespace stagecraft
