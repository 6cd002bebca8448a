// SPDX-License-Identifier: MIT
// libFuzzer target: arbitrary bytes -> Chakra reader -> inspect (text and JSON rendering) -> writer.
// Any crash, sanitizer report, leak or timeout is a bug: the reader must turn every input into either a
// trace or an error message.
#include "chakra/chakrainspect.h"
#include "chakra/chakrareader.h"
#include "chakra/chakrawriter.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace stagecraft;
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    const ChakraReadResult result = readChakraBytes(bytes, "fuzz");
    if (!result.ok()) {
        if (result.error.empty())
            std::abort(); // a failed read must explain itself
        return 0;
    }
    const ChakraTrace& trace = *result.trace;
    const TraceSummary summary = inspectTrace(trace, "fuzz");
    (void)summaryToText(summary);
    (void)summaryToJson(summary).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);

    // Whatever we read must serialize, re-read and serialize again to the same bytes (bytes, not values:
    // NaN != NaN). The writer refuses records that encode to 0 bytes by design; that is not a bug.
    try {
        const std::string once = serializeChakraTrace(trace);
        const ChakraReadResult reread = readChakraBytes(once, "fuzz-reread");
        if (!reread.ok() || serializeChakraTrace(*reread.trace) != once)
            std::abort();
    } catch (const ChakraWriteError&) {
    }
    return 0;
}
