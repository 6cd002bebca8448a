// SPDX-License-Identifier: MIT
#pragma once

#include "config/diagnostic.h"
#include "serving/servingrequest.h"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace stagecraft {

/// Largest trace file readRequestTrace() reads (the Azure 2023 conversation trace is 0.7 MB).
inline constexpr size_t kMaxRequestTraceBytes = size_t(64) << 20;
/// Most data rows a trace may hold (each becomes a 24-byte request).
inline constexpr int64_t kMaxRequestTraceRows = 4'000'000;

/// A trace's requests sorted by arrival (stable), times from its earliest arrival, and the problems found. Plain
/// value type.
struct RequestTrace
{
    std::vector<ServingRequest> requests;
    std::vector<Diagnostic> diagnostics; ///< errors: `requests` is then empty
};

/// Parses a CSV request trace: one request per row, three columns (arrival, prompt tokens, output tokens), comma
/// separated, cells optionally in double quotes ("" inside for a quote), LF or CRLF line ends, the last line's end
/// optional. A first row that is not numeric is a header naming the columns in any order: arrival_s / arrival /
/// timestamp / time, prompt_tokens / contexttokens / input_tokens, output_tokens / generatedtokens (case
/// ignored; the Azure LLM inference traces' TIMESTAMP,ContextTokens,GeneratedTokens). An arrival is seconds (a
/// non-negative number) or a date-time "YYYY-MM-DD HH:MM:SS[.fraction]" (the Azure traces'); token counts are
/// integers >= 1 (output 0 or 1 rows are kept as 1). Blank lines are skipped. At most `maxRequests` rows are kept
/// (0 = all, at most kMaxRequestTraceRows). Problems are `file:line:col` errors naming the column and what was
/// expected, the offending cell escaped (at most 20 reported). Never throws except std::bad_alloc; pure.
RequestTrace parseRequestTrace(std::string_view text, const std::string& fileName, int64_t maxRequests);

/// readBoundedFile() of `path` (at most kMaxRequestTraceBytes; FIFOs, devices and directories refused) and
/// parseRequestTrace().
RequestTrace readRequestTrace(const std::string& path, int64_t maxRequests);

/// `text` in double quotes for a message: `"` and `\` escaped, control and non-ASCII bytes as \xNN, cut to 40 bytes
/// with "..." (a cell of a trace may hold anything).
std::string escapedCell(std::string_view text);

} // namespace stagecraft
