// SPDX-License-Identifier: MIT
#include "estimate/chrometrace.h"

#include "output/outputfile.h"
#include "version.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <stdexcept>
#include <unistd.h>

namespace stagecraft {

namespace {

    constexpr int kComputeTid = 0;
    constexpr int kCommunicationTid = 1;

    nlohmann::ordered_json metadata(const char* name, int pid, int tid, nlohmann::ordered_json args)
    {
        nlohmann::ordered_json e;
        e["name"] = name;
        e["ph"] = "M";
        e["pid"] = pid;
        e["tid"] = tid;
        e["args"] = std::move(args);
        return e;
    }

    nlohmann::ordered_json nodeArgs(
        const SynthesisResult& result, const ClassProgram& program, const ProgramNode& n, uint32_t index, bool chunks)
    {
        nlohmann::ordered_json a;
        a["node"] = index;
        if (n.kind != NodeKind::Send)
            a["pass"] = toString(n.pass);
        if (n.layer >= 0)
            a["layer"] = n.layer;
        if (n.microBatch >= 0)
            a["micro_batch"] = n.microBatch;
        if (chunks)
            a["chunk"] = n.chunk;
        switch (n.kind) {
        case NodeKind::Compute:
            if (n.recompute)
                a["recompute"] = true;
            a["flops"] = n.flops;
            a["bytes"] = n.bytes;
            break;
        case NodeKind::Collective:
            a["collective"] = toString(n.collective);
            a["axes"] = axisMaskName(n.mask);
            a["group_size"] = result.mesh().groupSize(n.mask);
            a["group"] = result.groupIdOf(n, program.exampleRank);
            a["comm_bytes"] = n.bytes;
            break;
        case NodeKind::Send:
            a["peer_stage"] = n.peerStage;
            a["peer_rank"] = result.peerOf(n, program.exampleRank).value;
            a["tag"] = n.tag;
            a["bytes"] = n.bytes;
            break;
        case NodeKind::Recv:
            break;
        }
        return a;
    }

} // namespace

std::string rankRangeText(const std::vector<int64_t>& ranks, size_t maxRanges)
{
    if (ranks.empty())
        return "no ranks";
    if (ranks.size() == 1)
        return "rank " + std::to_string(ranks.front());
    std::string text = "ranks ";
    size_t listed = 0;
    bool truncated = false;
    for (size_t i = 0; i < ranks.size();) {
        size_t j = i;
        while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1)
            ++j;
        if (listed == maxRanges) {
            truncated = true;
            break;
        }
        if (listed > 0)
            text += ", ";
        text += std::to_string(ranks[i]);
        if (j > i)
            text += "-" + std::to_string(ranks[j]);
        ++listed;
        i = j + 1;
    }
    if (truncated)
        text += ", \u2026, " + std::to_string(ranks.size()) + " ranks";
    return text;
}

nlohmann::ordered_json chromeTraceJson(const SynthesisResult& result, const StepEstimate& estimate,
    const EstimateSchedule& schedule, std::optional<int> stage)
{
    const size_t classCount = std::min(result.classes.size(), schedule.classes.size());
    auto included = [&](size_t c) { return !stage || static_cast<size_t>(*stage) == c; };

    // The ranks of each included class (ascending), for the process names.
    std::vector<std::vector<int64_t>> ranks(classCount);
    for (int64_t r = 0; r < result.worldSize(); ++r) {
        const auto c = static_cast<size_t>(result.classOf(RankId { r }));
        if (c < classCount && included(c))
            ranks[c].push_back(r);
    }

    const bool chunks = result.config.parallelism.virtualStages > 1;
    nlohmann::ordered_json events = nlohmann::ordered_json::array();
    size_t nodeEvents = 0;
    for (size_t c = 0; c < classCount; ++c) {
        if (!included(c))
            continue;
        const ClassProgram& program = result.classes[c];
        const int pid = program.stage;
        events.push_back(metadata("process_name", pid, 0,
            { { "name", "stage " + std::to_string(pid) + " (" + rankRangeText(ranks[c]) + ")" } }));
        events.push_back(metadata("process_sort_index", pid, 0, { { "sort_index", pid } }));
        events.push_back(metadata("thread_name", pid, kComputeTid, { { "name", "compute" } }));
        events.push_back(metadata("thread_sort_index", pid, kComputeTid, { { "sort_index", kComputeTid } }));
        events.push_back(metadata("thread_name", pid, kCommunicationTid, { { "name", "communication" } }));
        events.push_back(
            metadata("thread_sort_index", pid, kCommunicationTid, { { "sort_index", kCommunicationTid } }));
        for (const ScheduledNode& s : schedule.classes[c]) {
            if (s.stream == ScheduleStream::None || s.node >= program.nodes.size())
                continue;
            const ProgramNode& n = program.nodes[s.node];
            nlohmann::ordered_json e;
            e["name"] = n.name;
            e["cat"] = toString(n.kind);
            e["ph"] = "X";
            e["ts"] = s.startS * 1e6;
            e["dur"] = std::max(0.0, s.endS - s.startS) * 1e6;
            e["pid"] = pid;
            e["tid"] = s.stream == ScheduleStream::Compute ? kComputeTid : kCommunicationTid;
            e["args"] = nodeArgs(result, program, n, s.node, chunks);
            events.push_back(std::move(e));
            ++nodeEvents;
        }
    }

    nlohmann::ordered_json j;
    j["traceEvents"] = std::move(events);
    j["displayTimeUnit"] = "ms";
    nlohmann::ordered_json other;
    other["generator"] = std::string("stagecraft ") + versionString();
    other["config"] = result.config.name;
    other["gpu"] = estimate.gpu;
    other["iteration_time_s"] = estimate.iterationTimeS;
    other["pipeline_time_s"] = estimate.pipelineTimeS;
    other["mfu"] = estimate.mfu;
    other["world_size"] = result.worldSize();
    other["node_events"] = nodeEvents;
    other["note"] = "estimated schedule of one iteration; every rank of a stage runs the same schedule";
    j["otherData"] = std::move(other);
    return j;
}

void writeChromeTrace(const std::string& path, const nlohmann::ordered_json& json)
{
    try {
        writeOutputFile(path, json.dump());
    } catch (const OutputError& e) {
        throw std::runtime_error(std::string("cannot write the Chrome trace: ") + e.what());
    }
}

} // namespace stagecraft
