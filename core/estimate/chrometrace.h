// SPDX-License-Identifier: MIT
#pragma once

#include "estimate/stepestimate.h"
#include "synthesis/synthesis.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace stagecraft {

/// The estimate's schedule in the Chrome Trace Event Format (JSON object form), which Perfetto and
/// chrome://tracing open: {"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}.
///
/// One process per rank class, pid = stage, named by a "process_name" metadata event "stage N (ranks ...)" and
/// ordered by "process_sort_index"; two threads per process, tid 0 "compute" and tid 1 "communication"
/// ("thread_name" metadata). Every node that occupies a stream is one complete event ("ph": "X") with ts and dur
/// in microseconds from the start of the iteration, name = the node's name, cat = its kind ("compute",
/// "collective", "send"), and args: pass, layer and micro_batch (when the node has them), recompute, and
/// flops and bytes (memory traffic) for compute; collective type, axes, group_size, group (the id on the class's
/// example rank) and comm_bytes for collectives; peer_stage, peer_rank (of the example rank), tag and bytes for
/// sends. Recv nodes occupy no stream and take no time (the matching send carries the transfer), so they are not
/// events. All ranks of a class share its schedule.
///
/// `stage`, when given, limits the trace to that class (an index into result.classes; out of range gives an
/// empty traceEvents array). `schedule` must come from estimateStep() on the same `result`. otherData holds the
/// config name, GPU, iteration time, MFU and the node counts. Pure; thread-safe.
nlohmann::ordered_json chromeTraceJson(const SynthesisResult& result, const StepEstimate& estimate,
    const EstimateSchedule& schedule, std::optional<int> stage = std::nullopt);

/// "ranks 0-3, 8-11, …, 512 ranks" for sorted rank ids (at most `maxRanges` ranges listed); "rank 5" for one.
std::string rankRangeText(const std::vector<int64_t>& sortedRanks, size_t maxRanges = 4);

/// Writes `json` (compact) to `path`: into a temporary file in the same directory, renamed onto `path` when
/// complete, so no half-written file is ever left at `path`. Throws std::runtime_error whose what() names the
/// file and the system's reason (e.g. "cannot create temporary file for /x/t.json: Permission denied").
void writeChromeTrace(const std::string& path, const nlohmann::ordered_json& json);

} // namespace stagecraft
