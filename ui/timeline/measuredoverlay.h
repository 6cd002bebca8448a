// SPDX-License-Identifier: MIT
#pragma once

#include "estimate/tracecompare.h"
#include "kineto/kinetotrace.h"
#include "timeline/timelinedata.h"

#include <QString>
#include <memory>

namespace stagecraft {

/// A measured PyTorch profiler trace laid over the Timeline: one rank's iteration (estimate/tracecompare.h) as two
/// lanes beside the synthesized class's. Built in a worker by buildMeasuredOverlay(); immutable afterwards.
struct MeasuredOverlay
{
    QString fileName; ///< the file's name (no folder), for captions
    std::shared_ptr<const KinetoTrace> trace;
    TraceComparison comparison;
    /// The measured kernels as bars: `node` indexes comparison.spans. Compute kernels draw in the forward colour,
    /// NCCL kernels in their collective's, copies and point-to-point kernels as sends.
    TimelineLanes lanes;
};

/// Reads `path` (kineto/kinetoreader.h) and compares it with `data`'s estimate of `result` for `rank` (< 0: the
/// trace's own rank). Null with `error` set on failure. Pure; any thread.
std::shared_ptr<const MeasuredOverlay> buildMeasuredOverlay(
    const QString& path, const SynthesisResult& result, const TimelineData& data, qint64 rank, QString* error);

} // namespace stagecraft
