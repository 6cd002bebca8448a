// SPDX-License-Identifier: MIT
// libFuzzer target: bytes -> the CSV request trace reader. Every input must become either requests (sorted by
// arrival, from 0, each with a prompt and an output of at least one token) or errors that name a line and column
// inside the text. Any crash, sanitizer report, leak, timeout or abort() is a bug.
#include "serving/requesttrace.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace {

void check(bool condition)
{
    if (!condition)
        std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const stagecraft::RequestTrace trace = stagecraft::parseRequestTrace(text, "fuzz.csv", 0);
    if (!trace.diagnostics.empty()) {
        check(trace.requests.empty());
        check(trace.diagnostics.size() <= 20);
        for (const stagecraft::Diagnostic& d : trace.diagnostics) {
            check(d.severity == stagecraft::Severity::Error && !d.message.empty());
            check(d.line >= 1 && d.column >= 1 && static_cast<size_t>(d.column) <= size + 2);
            for (char c : d.message)
                check(static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f);
        }
        return 0;
    }
    check(!trace.requests.empty());
    double previous = 0;
    for (const stagecraft::ServingRequest& r : trace.requests) {
        check(r.arrivalS >= previous && r.promptTokens >= 1 && r.outputTokens >= 1);
        previous = r.arrivalS;
    }
    check(trace.requests.front().arrivalS == 0);
    return 0;
}
