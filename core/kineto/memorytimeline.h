// SPDX-License-Identifier: MIT
// PyTorch's measured memory timeline: the raw JSON of torch.profiler's
// profile.export_memory_timeline(path) for a ".raw.json" name (MemoryProfileTimeline.export_memory_timeline_raw in
// pytorch/pytorch torch/profiler/_memory_profiler.py): a list of [time_ns, action, bytes, category] events, time -1
// for tensors that existed before profiling, bytes negative when memory is released, action 1 preexisting,
// 2 create, 3 increment version, 4 destroy, category an index into (parameter, optimizer state, input, temporary,
// activation, gradient, autograd detail, unknown). Read with the Kineto reader's bounds (plain or .gz).
#pragma once

#include "kineto/boundedjsoninput.h"

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stagecraft {

/// The categories of _memory_profiler.py's _CATEGORY_TO_COLORS, in the order that gives their raw index.
enum class MeasuredMemoryCategory : uint8_t
{
    Parameter,
    OptimizerState,
    Input,
    Temporary,
    Activation,
    Gradient,
    AutogradDetail,
    Unknown
};
inline constexpr size_t kMeasuredMemoryCategories = 8;
const char* toString(MeasuredMemoryCategory c);

/// Live bytes after all events of one time stamp.
struct MeasuredMemoryPoint
{
    double timeUs = 0; ///< from the first event's time (preexisting tensors at 0)
    int64_t totalBytes = 0;
    std::array<int64_t, kMeasuredMemoryCategories> bytes {};
};

struct MeasuredMemoryTimeline
{
    std::string source;
    std::vector<MeasuredMemoryPoint> points; ///< in time order
    int64_t events = 0;
    int64_t peakBytes = 0;
    double peakTimeUs = 0;
    double startNs = 0; ///< absolute time of the first timed event (the profiler's clock), for alignment
};

struct MemoryTimelineReadResult
{
    std::optional<MeasuredMemoryTimeline> timeline;
    std::string error; ///< "source:line:col: message"

    bool ok() const
    {
        return timeline.has_value();
    }
};

/// Keeps at most `maxPoints` distinct time stamps (each 80 bytes).
MemoryTimelineReadResult readMemoryTimelineFile(
    const std::filesystem::path& path, const JsonInputLimits& limits = {}, int64_t maxPoints = 2'000'000);
MemoryTimelineReadResult readMemoryTimelineBytes(std::string_view bytes, std::string_view sourceName = "<memory>",
    const JsonInputLimits& limits = {}, int64_t maxPoints = 2'000'000);

} // namespace stagecraft
