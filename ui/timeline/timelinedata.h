// SPDX-License-Identifier: MIT
#pragma once

#include "estimate/servingestimate.h"
#include "estimate/stepestimate.h"

#include <QString>
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

namespace stagecraft {

struct SynthesisResult;
class ModelGraph;

/// How a bar of the timeline is drawn: the pass of a compute node, the type of a collective, or a send. The
/// colours are those of the Graph view (TimelineStyle).
enum class TimelineBarStyle : uint8_t
{
    Forward,
    Backward,
    /// The weight-gradient part of a split backward (zero-bubble's W, DualPipe's weight chunks): the ops that
    /// write only weight gradients, under zb1p, dualpipe and dualpipev.
    WeightGradient,
    Recompute,
    Optimizer,
    AllReduce,
    AllGather,
    ReduceScatter,
    AllToAll,
    Send
};
inline constexpr int kTimelineBarStyleCount = 10;

/// One bar: a program node on a stream, seconds from the start of the iteration.
struct TimelineSpan
{
    double startS = 0;
    double endS = 0;
    uint32_t node = 0; ///< index into ClassProgram::nodes
    TimelineBarStyle style = TimelineBarStyle::Forward;
    /// Communication only: the compute stream is busy for the whole span, so it costs no time (drawn pale).
    bool hidden = false;
};

/// The two streams of one rank class. Each lane is sorted by start and its spans never overlap (one stream runs
/// one node at a time), so the visible part is found with std::lower_bound on either end.
struct TimelineLanes
{
    std::vector<TimelineSpan> compute;
    std::vector<TimelineSpan> communication;
};

/// What the Timeline view shows: the step-time estimate of a result with its schedule, split into lanes. Built
/// in a worker by buildTimelineData(); immutable afterwards and shared with the GUI thread.
struct TimelineData
{
    bool ok = false;
    QString error; ///< why there is no estimate (unknown GPU, no peak for the precision, deadlock...)
    StepEstimate estimate; ///< a training result's; for a serving result only `gpu` is set
    /// A serving result's estimate (time to first token, time per output token); the lanes are its programs' prefill
    /// and decode steps.
    std::optional<ServingEstimate> serving;
    EstimateSchedule schedule;
    std::vector<TimelineLanes> classes; ///< index = class (pipeline stage)
    double totalS = 0; ///< the latest end of any node: the iteration time (of the kept micro-batches when compressed)
    /// A compressed result's kept micro-batches and the iteration's (both 0 for a full result): the lanes then draw
    /// only the kept ones, while `estimate` is the whole iteration's.
    qint64 keptMicroBatches = 0;
    qint64 microBatches = 0;
    std::vector<QString> classRanks; ///< per class: "ranks 0-3, 8-11" (rankRangeText)
    std::array<bool, kTimelineBarStyleCount> stylesUsed {}; ///< which bar styles occur (the legend shows those)
    bool anyHidden = false; ///< some communication span is hidden under compute
};

/// Runs estimateStep() with its schedule on the preset GPU of result.config.cluster.gpu (default options) and
/// fills the lanes. Recv nodes take no stream and are left out of the lanes. Pure (no QObject); any thread.
TimelineData buildTimelineData(const SynthesisResult& result);

/// The bar style of a node that occupies a stream (compute, collective or send). With `graph` and a schedule that
/// splits the backward, a backward compute node whose op writes only weight gradients is WeightGradient.
TimelineBarStyle timelineBarStyle(
    const ProgramNode& node, const ModelGraph* graph = nullptr, bool splitBackward = false);

/// Marks the communication spans that the compute spans cover from start to end (both lanes sorted by start).
void markHiddenCommunication(TimelineLanes& lanes);

} // namespace stagecraft
