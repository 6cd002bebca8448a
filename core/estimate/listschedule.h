// SPDX-License-Identifier: MIT
#pragma once

#include "estimate/costmodel.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace stagecraft {

struct SynthesisResult;

/// The stream a scheduled node occupies. Recv nodes occupy none: the matching send carries the transfer.
enum class ScheduleStream : uint8_t
{
    Compute,
    Communication, ///< tensor, context and expert parallel collectives
    None,
    DataParallel, ///< data-parallel gradient reductions and parameter gathers
    PointToPoint, ///< pipeline sends
};
/// "compute", "communication", "none", "data-parallel", "point-to-point".
const char* toString(ScheduleStream s);

/// When one program node runs in the estimate, seconds from the start of the iteration (every rank starts at 0).
/// On a stream, a node starts once its dependencies and the stream's previous node have finished, and
/// endS - startS is its modelled time (nodeTimeS). A recv has stream None and startS == endS == the time its
/// data has arrived (the matching send finished and its own dependencies are done).
struct ScheduledNode
{
    uint32_t node = 0; ///< index into ClassProgram::nodes
    double startS = 0;
    double endS = 0;
    ScheduleStream stream = ScheduleStream::None;
};

/// The schedule of every node of every class, as estimateStep() computed it. `classes[c][i]` is node i of
/// result.classes[c] (every node, recvs included, in node order), so `classes[c][i].node == i`. The nodes of one
/// stream, taken in node order, have non-decreasing, non-overlapping [startS, endS) intervals. Plain value type.
struct EstimateSchedule
{
    std::vector<std::vector<ScheduledNode>> classes; ///< index = class (pipeline stage)
};

/// Every node of every class of one synthesis result on one flat index, with its modelled time and when it
/// runs: node i of result.classes[c] is entry offset[c] + i. Seconds from the start (every rank starts at 0).
/// Plain value type.
struct ListSchedule
{
    std::vector<size_t> offset; ///< classes + 1 entries; offset.back() is the node count
    std::vector<double> duration; ///< nodeTimeS() plus an unfused gradient accumulation (costmodel.h)
    std::vector<double> finish;
    std::vector<double> start; ///< empty unless listSchedule() was asked to keep it

    /// Entry of node `node` of class `cls`.
    size_t at(size_t cls, size_t node) const
    {
        return offset[cls] + node;
    }
};

/// List-schedules every class of `result` together, each represented by its example rank, on four streams per
/// class: compute, collectives (tensor, context, expert parallel), data-parallel collectives (their own
/// communicator, as in Megatron-LM) and pipeline sends, as ASTRA-sim's system layer does it for its streams: a node
/// starts when all its data and control dependencies and the previous node of its stream have finished; a recv
/// occupies no stream and completes when the matching send (same tag, on the peer stage) has completed, which
/// couples the pipeline stages. Blocking sends (no overlap_p2p_comm) hold the compute stream. O(total nodes).
/// Node times: nodeTimeS() with `rates`, plus unfusedAccumulationTimeS(). `keepStarts` fills `out.start`.
/// Returns false and sets `error` when a recv has no matching send, the stages deadlock, or the programs are too
/// large (65,535 stages, 2^32 - 1 nodes). Never throws anything but std::bad_alloc. Thread-safe (reads only).
bool listSchedule(
    const SynthesisResult& result, const HardwareRates& rates, bool keepStarts, ListSchedule& out, std::string& error);

/// The stream a node occupies in listSchedule() (a blocking send: Compute; every send: PointToPoint when
/// `sendsAsPointToPoint`, as the views draw them).
ScheduleStream scheduleStreamOf(const ProgramNode& node, bool overlapP2pComm, bool sendsAsPointToPoint = false);

/// `schedule` (which must keep its starts) as the views' per-class EstimateSchedule, sends on PointToPoint.
EstimateSchedule estimateScheduleOf(const SynthesisResult& result, const ListSchedule& schedule, bool overlapP2pComm);

} // namespace stagecraft
