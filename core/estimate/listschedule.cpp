// SPDX-License-Identifier: MIT
#include "estimate/listschedule.h"

#include "synthesis/synthesis.h"

#include <algorithm>
#include <unordered_map>

namespace stagecraft {

namespace {

    constexpr uint32_t kNone = UINT32_MAX;
    enum Stream : uint8_t
    {
        ComputeStream,
        CommStream, ///< tensor, context and expert parallel collectives
        DpStream, ///< data-parallel gradient reductions and parameter gathers (their own communicator and stream)
        P2pStream, ///< pipeline sends (Megatron-LM's batched isend/irecv)
        NoStream
    };
    constexpr int kStreams = 4;

    /// The stream `n` occupies. Blocking pipeline sends (no overlap_p2p_comm) hold the compute stream, as
    /// Megatron-LM's schedule waits for send/recv before its next compute.
    Stream streamOf(const ProgramNode& n, bool overlapP2p)
    {
        switch (n.kind) {
        case NodeKind::Compute:
            return ComputeStream;
        case NodeKind::Collective:
            return isDataParallelCollective(n) ? DpStream : CommStream;
        case NodeKind::Send:
            return overlapP2p ? P2pStream : ComputeStream;
        case NodeKind::Recv:
            return NoStream;
        }
        return NoStream;
    }

    uint64_t p2pKey(int32_t srcStage, int32_t dstStage, int32_t tag)
    {
        return (static_cast<uint64_t>(static_cast<uint16_t>(srcStage)) << 48)
            | (static_cast<uint64_t>(static_cast<uint16_t>(dstStage)) << 32) | static_cast<uint32_t>(tag);
    }

} // namespace

const char* toString(ScheduleStream s)
{
    switch (s) {
    case ScheduleStream::Compute:
        return "compute";
    case ScheduleStream::Communication:
        return "communication";
    case ScheduleStream::DataParallel:
        return "data-parallel";
    case ScheduleStream::PointToPoint:
        return "point-to-point";
    case ScheduleStream::None:
        return "none";
    }
    return "?";
}

ScheduleStream scheduleStreamOf(const ProgramNode& node, bool overlapP2pComm, bool sendsAsPointToPoint)
{
    if (sendsAsPointToPoint && node.kind == NodeKind::Send)
        return ScheduleStream::PointToPoint;
    switch (streamOf(node, overlapP2pComm)) {
    case ComputeStream:
        return ScheduleStream::Compute;
    case CommStream:
        return ScheduleStream::Communication;
    case DpStream:
        return ScheduleStream::DataParallel;
    case P2pStream:
        return ScheduleStream::PointToPoint;
    case NoStream:
        break;
    }
    return ScheduleStream::None;
}

bool listSchedule(
    const SynthesisResult& result, const HardwareRates& rates, bool keepStarts, ListSchedule& out, std::string& error)
{
    const size_t classCount = result.classes.size();
    if (classCount >= 65536) {
        error = "too many pipeline stages for the estimate (at most 65535)";
        return false;
    }
    std::vector<size_t> offset(classCount + 1, 0);
    for (size_t c = 0; c < classCount; ++c)
        offset[c + 1] = offset[c] + result.classes[c].nodes.size();
    const size_t total = offset[classCount];
    if (total >= kNone) {
        error = "program too large for the estimate";
        return false;
    }

    // Node times, streams, stream predecessors and the send feeding each recv.
    std::vector<double> duration(total, 0.0);
    std::vector<uint32_t> streamPrev(total, kNone), matchedSend(total, kNone);
    std::unordered_map<uint64_t, uint32_t> sends;
    for (size_t c = 0; c < classCount; ++c) {
        const ClassProgram& program = result.classes[c];
        const CommPlacement placement(result.mesh(), program.exampleRank, result.config.cluster.gpusPerNode);
        uint32_t last[kStreams] = { kNone, kNone, kNone, kNone };
        for (size_t i = 0; i < program.nodes.size(); ++i) {
            const ProgramNode& n = program.nodes[i];
            const uint32_t g = static_cast<uint32_t>(offset[c] + i);
            duration[g] =
                nodeTimeS(n, rates, placement, n.peerStage) + unfusedAccumulationTimeS(n, program.buffers, rates);
            const Stream s = streamOf(n, rates.overlapP2pComm);
            if (s != NoStream) {
                streamPrev[g] = last[s];
                last[s] = g;
            }
            if (n.kind == NodeKind::Send)
                sends.emplace(p2pKey(program.stage, n.peerStage, n.tag), g);
        }
    }
    for (size_t c = 0; c < classCount; ++c) {
        const ClassProgram& program = result.classes[c];
        for (size_t i = 0; i < program.nodes.size(); ++i) {
            const ProgramNode& n = program.nodes[i];
            if (n.kind != NodeKind::Recv)
                continue;
            auto it = sends.find(p2pKey(n.peerStage, program.stage, n.tag));
            if (it == sends.end()) {
                error = "stage " + std::to_string(program.stage) + " node " + std::to_string(i) + " (" + n.name
                    + ") receives from stage " + std::to_string(n.peerStage) + " but no matching send exists";
                return false;
            }
            matchedSend[offset[c] + i] = it->second;
        }
    }

    // Successor lists (CSR) over dependencies, stream order and send -> recv.
    std::vector<uint32_t> indegree(total, 0), succStart(total + 1, 0);
    auto forEachPred = [&](auto&& fn) {
        for (size_t c = 0; c < classCount; ++c) {
            const ClassProgram& program = result.classes[c];
            for (size_t i = 0; i < program.nodes.size(); ++i) {
                const uint32_t g = static_cast<uint32_t>(offset[c] + i);
                const ProgramNode& n = program.nodes[i];
                for (NodeId d : n.dataDeps)
                    fn(static_cast<uint32_t>(offset[c] + d.value), g);
                for (NodeId d : n.ctrlDeps)
                    fn(static_cast<uint32_t>(offset[c] + d.value), g);
                if (streamPrev[g] != kNone)
                    fn(streamPrev[g], g);
                if (matchedSend[g] != kNone)
                    fn(matchedSend[g], g);
            }
        }
    };
    forEachPred([&](uint32_t from, uint32_t to) {
        ++succStart[from + 1];
        ++indegree[to];
    });
    // Inclusive prefix sums: succStart[v + 1] is where v's successors end; filling each list from its end
    // leaves succStart[v] at its start, with no second cursor array. (The order of a node's successors does
    // not change a longest path.)
    for (size_t i = 0; i < total; ++i)
        succStart[i + 1] += succStart[i];
    std::vector<uint32_t> succ(succStart[total]);
    forEachPred([&](uint32_t from, uint32_t to) { succ[--succStart[from + 1]] = to; });
    // Now succStart[v + 1] is v's start: shift the array down by one so that succStart[v] is.
    std::copy(succStart.begin() + 1, succStart.end(), succStart.begin());
    succStart[total] = static_cast<uint32_t>(succ.size());

    // Longest path in topological order: finish = max(predecessor finishes) + own time. finish[j] holds j's
    // ready time (the latest finish of its predecessors) until j runs.
    std::vector<double> finish(total, 0.0);
    std::vector<double> start(keepStarts ? total : 0, 0.0);
    std::vector<uint32_t> stack;
    for (size_t i = total; i-- > 0;)
        if (indegree[i] == 0)
            stack.push_back(static_cast<uint32_t>(i));
    size_t done = 0;
    while (!stack.empty()) {
        const uint32_t i = stack.back();
        stack.pop_back();
        ++done;
        if (keepStarts)
            start[i] = finish[i];
        finish[i] += duration[i];
        for (uint32_t k = succStart[i]; k < succStart[i + 1]; ++k) {
            const uint32_t j = succ[k];
            finish[j] = std::max(finish[j], finish[i]);
            if (--indegree[j] == 0)
                stack.push_back(j);
        }
    }
    if (done != total) {
        error =
            "the pipeline stages deadlock: " + std::to_string(total - done) + " nodes wait on each other across stages";
        return false;
    }
    out.offset = std::move(offset);
    out.duration = std::move(duration);
    out.finish = std::move(finish);
    out.start = std::move(start);
    return true;
}

EstimateSchedule estimateScheduleOf(const SynthesisResult& result, const ListSchedule& schedule, bool overlapP2pComm)
{
    EstimateSchedule filled;
    filled.classes.resize(result.classes.size());
    for (size_t c = 0; c < result.classes.size(); ++c) {
        const ClassProgram& program = result.classes[c];
        std::vector<ScheduledNode>& nodes = filled.classes[c];
        nodes.resize(program.nodes.size());
        for (size_t i = 0; i < program.nodes.size(); ++i) {
            const size_t g = schedule.at(c, i);
            nodes[i] = { static_cast<uint32_t>(i), schedule.start[g], schedule.finish[g],
                scheduleStreamOf(program.nodes[i], overlapP2pComm, true) };
        }
    }
    return filled;
}

} // namespace stagecraft
