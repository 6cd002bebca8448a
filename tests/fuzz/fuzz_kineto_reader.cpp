// SPDX-License-Identifier: MIT
// libFuzzer target: bytes -> Kineto trace reader and PyTorch memory timeline reader. Every input must become a
// trace (whose links point inside it) or one message "source:line:col: ..." free of control bytes. Any crash,
// sanitizer report, leak, timeout or abort() is a bug.
#include "kineto/kinetoreader.h"
#include "kineto/memorytimeline.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

void check(bool condition)
{
    if (!condition)
        std::abort();
}

void checkMessage(const std::string& error)
{
    check(error.rfind("fuzz:", 0) == 0);
    check(error.find('\n') == std::string::npos);
    for (char c : error)
        check(static_cast<unsigned char>(c) >= 0x20 && c != 0x7F);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    stagecraft::KinetoReadOptions options;
    options.maxEvents = 100000;
    const stagecraft::KinetoReadResult r = stagecraft::readKinetoBytes(bytes, "fuzz", options);
    check(r.ok() != !r.error.empty());
    if (r.ok()) {
        const stagecraft::KinetoTrace& t = *r.trace;
        for (const stagecraft::KinetoEvent& e : t.events) {
            check(e.name >= 0 && size_t(e.name) < t.names.size());
            check(e.op < 0 || size_t(e.op) < t.events.size());
            check(e.shape < 0 || size_t(e.shape) < t.shapes.size());
            check(e.collective < 0 || size_t(e.collective) < t.collectives.size());
        }
        check(t.linkedKernels <= t.kernels && t.ncclKernels <= t.kernels);
    } else
        checkMessage(r.error);
    const stagecraft::MemoryTimelineReadResult m = stagecraft::readMemoryTimelineBytes(bytes, "fuzz");
    check(m.ok() != !m.error.empty());
    if (m.ok()) {
        check(!m.timeline->points.empty());
        for (const stagecraft::MeasuredMemoryPoint& p : m.timeline->points)
            check(p.totalBytes <= m.timeline->peakBytes);
    } else
        checkMessage(m.error);
    return 0;
}
