// SPDX-License-Identifier: MIT
// Reading Chakra ET rank files (ours, STAGE's, converted PyTorch traces): spec/chakra-et.md §1-§3.
//
// The reader never throws and never trusts the input: every length is checked against the bytes that are
// really there before anything is allocated, so a corrupt or hostile file yields an error message, not a
// crash or a huge allocation. Errors name the source, the record index (record 0 = the GlobalMetadata,
// record k >= 1 = the k-th Node) and the byte offset of the record's length prefix, e.g.
//   "w.0.et: record 3 (Node) at byte offset 118 declares 200 bytes but only 12 remain (file size 134)".
#pragma once

#include "chakra/chakratrace.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace stagecraft {

/// Where a record sits in the file.
struct ChakraRecordInfo
{
    uint64_t index = 0; ///< 0 = GlobalMetadata, k = k-th Node
    uint64_t offset = 0; ///< byte offset of the record's varint length prefix
    uint32_t length = 0; ///< payload bytes after the prefix
};

/// Streaming consumer: receives each record as it is parsed, so a large file is never held as a whole
/// trace. The arguments may be moved from. Return false to stop reading early (that is not an error).
class ChakraTraceVisitor
{
public:
    virtual ~ChakraTraceVisitor() = default;
    virtual bool onMetadata(ChakraMetadata&& metadata, const ChakraRecordInfo& record);
    virtual bool onNode(ChakraNode&& node, const ChakraRecordInfo& record) = 0;
};

/// Outcome of a streaming read. `error` is empty on success (also when the visitor stopped early).
struct ChakraReadStatus
{
    std::string error;
    ChakraFramingInfo framing;

    bool ok() const
    {
        return error.empty();
    }
};

/// Reads `path` record by record into `visitor`. Memory use is bounded by the largest record plus a 1 MiB
/// read buffer, whatever the file size. Works on regular files and on pipes. Thread-safe (no shared state).
ChakraReadStatus visitChakraFile(const std::filesystem::path& path, ChakraTraceVisitor& visitor);
/// Same over bytes in memory; `sourceName` prefixes error messages. The bytes are not retained.
ChakraReadStatus visitChakraBytes(
    std::string_view bytes, ChakraTraceVisitor& visitor, std::string_view sourceName = "<memory>");

/// A whole trace, or an error message (exactly one of the two is set).
struct ChakraReadResult
{
    std::optional<ChakraTrace> trace;
    std::string error;

    bool ok() const
    {
        return trace.has_value();
    }
};

/// Reads a whole rank file into memory. A file holding only the GlobalMetadata is a valid (empty) trace;
/// `inspectTrace` reports that as a problem. Zero-length records are read as all-default messages (what
/// ASTRA-sim does) and their offsets recorded in `trace.framing` (Chakra's Python reader would stop there).
/// gzip-compressed files are refused with a message saying so (ASTRA-sim cannot read them, spec §1).
ChakraReadResult readChakraFile(const std::filesystem::path& path);
/// Same over bytes in memory.
ChakraReadResult readChakraBytes(std::string_view bytes, std::string_view sourceName = "<memory>");

} // namespace stagecraft
