// SPDX-License-Identifier: MIT
// Reading PyTorch profiler (Kineto) traces: the Chrome-trace JSON of torch.profiler's export_chrome_trace /
// tensorboard_trace_handler, plain or gzip-compressed (.json.gz), one file per rank.
//
// The reader never trusts the input: the JSON is parsed by nlohmann-json's SAX interface from a chunked, bounded
// input (kineto/boundedjsoninput.h), and only the events a calibration needs are kept, compactly, up to a count
// limit. Whatever the file holds (truncated JSON, a gigabyte of '[', deep nesting, wrong types, huge numbers,
// corrupt gzip), the result is a trace or one message "file:line:col: what was expected", in bounded memory and
// time. Never throws but std::bad_alloc.
#pragma once

#include "kineto/boundedjsoninput.h"
#include "kineto/kinetotrace.h"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace stagecraft {

struct KinetoReadOptions
{
    JsonInputLimits limits;
    /// Events kept (CPU ops, launches, GPU activity, annotations): about 72 bytes each, so the default keeps a
    /// trace under about 110 MB whatever its size on disk. Traces of several profiled iterations of a large job
    /// can exceed it: profile fewer steps.
    int64_t maxEvents = 1'500'000;
    /// Bytes of distinct event names kept.
    int64_t maxNameBytes = int64_t { 64 } << 20;
};

/// A trace, or an error message "source:line:col: ..." (exactly one of the two is set).
struct KinetoReadResult
{
    std::optional<KinetoTrace> trace;
    std::string error;

    bool ok() const
    {
        return trace.has_value();
    }
};

/// Reads one rank's trace file (.json or .json.gz; gzip is recognized by content).
KinetoReadResult readKinetoFile(const std::filesystem::path& path, const KinetoReadOptions& options = {});
/// Same over JSON text in memory (not gzip); `sourceName` prefixes messages.
KinetoReadResult readKinetoBytes(
    std::string_view bytes, std::string_view sourceName = "<memory>", const KinetoReadOptions& options = {});

/// Links the GPU events of `trace` to the CPU ops that launched them and each CPU op to the op around it (sets
/// KinetoEvent::op and KinetoTrace::linkedKernels). The readers call it; exposed for tests.
void linkKinetoEvents(KinetoTrace& trace);

} // namespace stagecraft
