// SPDX-License-Identifier: MIT
// Writing Chakra ET rank files (protobuf, spec/chakra-et.md §1), their JSON rendering, and the ASTRA-sim
// communicator-group JSON (§7.3). Files appear atomically: everything goes to a temporary file in the target
// directory that is renamed to the final name only on commit().
//
// ERRORS: every function and member here reports failure by throwing ChakraWriteError (the only exception
// type that leaves this header's API). The CLI maps it to exit code 2 (bad output location).
#pragma once

#include "chakra/chakratrace.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace stagecraft {

class StagedFiles;

/// A write failed: cannot create/write/sync/rename (ENOSPC, EACCES, EROFS, ENOENT, ...), or the caller broke
/// the writer protocol (node before metadata, an attribute whose value does not match its kind).
/// what() is a complete message naming the path and, for system errors, strerror(errno), e.g.
/// "cannot create temporary file '/out/.w.0.et.tmp-4711-0' for '/out/w.0.et': Permission denied".
class ChakraWriteError : public std::runtime_error
{
public:
    ChakraWriteError(const std::string& message, std::filesystem::path path, int errorNumber = 0);
    /// The final path the failing write was meant to produce.
    const std::filesystem::path& path() const
    {
        return m_path;
    }
    /// errno of the failing system call, 0 for protocol errors.
    int errorNumber() const
    {
        return m_errno;
    }

private:
    std::filesystem::path m_path;
    int m_errno = 0;
};

enum class ChakraFileFormat
{
    Protobuf, ///< the Chakra ET wire format: varint32-delimited GlobalMetadata then Nodes
    Json, ///< one JSON document {"metadata": {...}, "nodes": [{...}, ...]}, one node per line
};

struct ChakraWriteOptions
{
    ChakraFileFormat format = ChakraFileFormat::Protobuf;
    /// fsync the file before the rename and the directory after it (durable against power loss; slower).
    bool fsync = false;
    /// Bytes gathered in memory before a write(2); at least 4 KiB is used.
    size_t bufferBytes = size_t { 1 } << 20;
    /// When set, files are created in this set of staged files (output/stagedfiles.h) instead of a temporary name
    /// of their own, and commit() only completes them: they get their names when the set is committed. The
    /// folder of the path must be the set's folder.
    StagedFiles* stage = nullptr;
};

/// Streams one rank file. Protocol: construct, writeMetadata() once, writeNode() any number of times,
/// commit(). Until commit() the data lives in `.<file name>.tmp-<pid>-<n>` next to the final path; the
/// destructor of an uncommitted writer removes that file, so an aborted export leaves no partial file.
/// An existing file at the final path is replaced atomically on commit().
///
/// Protobuf records are written exactly like google::protobuf::util::SerializeDelimitedToOstream: a varint32
/// length then the message. A record whose encoding would be 0 bytes (an all-default Node, a metadata with
/// empty version and no attributes) is refused, because Chakra's readers disagree on it (spec §1).
/// The writer writes what it is given: it does not check ids, dependencies or attribute names (use
/// inspectTrace() for that). Output bytes depend only on the input: equal traces give identical files.
///
/// Not thread-safe; one writer per file. Move-only.
class ChakraFileWriter
{
public:
    /// Creates the temporary file in `finalPath`'s directory (which must exist). Throws ChakraWriteError.
    explicit ChakraFileWriter(std::filesystem::path finalPath, ChakraWriteOptions options = {});
    ~ChakraFileWriter();
    ChakraFileWriter(ChakraFileWriter&&) noexcept;
    ChakraFileWriter& operator=(ChakraFileWriter&&) noexcept;
    ChakraFileWriter(const ChakraFileWriter&) = delete;
    ChakraFileWriter& operator=(const ChakraFileWriter&) = delete;

    /// Must be called exactly once, before any node. Throws ChakraWriteError.
    void writeMetadata(const ChakraMetadata& metadata);
    /// Appends one node. Throws ChakraWriteError.
    void writeNode(const ChakraNode& node);
    /// Appends records made by encodeChakraNodeRecord() (Protobuf format only), `nodeCount` of them. The fast
    /// path of exports that serialize a node list once and reuse its bytes. Throws ChakraWriteError.
    void writeEncodedNodes(std::string_view records, uint64_t nodeCount);
    /// Flushes, optionally fsyncs, closes and renames the temporary file to the final path. After it the
    /// writer is finished; any further call throws. Throws ChakraWriteError (then the temporary is removed).
    void commit();

    const std::filesystem::path& finalPath() const;
    /// The temporary file currently written (empty after commit or failure).
    std::filesystem::path temporaryPath() const;
    /// Bytes produced so far (buffered ones included).
    uint64_t bytesWritten() const;
    uint64_t nodesWritten() const;

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

/// Convenience: writes a whole trace with ChakraFileWriter (metadata then nodes in vector order) and commits.
/// Throws ChakraWriteError.
void writeChakraTrace(const std::filesystem::path& path, const ChakraTrace& trace, ChakraWriteOptions options = {});

/// The protobuf record of one node (varint32 length, then the message), byte-identical to what writeNode()
/// writes for it. Throws ChakraWriteError on the same protocol errors.
std::string encodeChakraNodeRecord(const ChakraNode& node);

/// Serializes a trace to the Chakra protobuf bytes in memory (the same bytes writeChakraTrace() writes).
/// Throws ChakraWriteError (path empty) on the same protocol errors.
std::string serializeChakraTrace(const ChakraTrace& trace);

/// Writes the ASTRA-sim communicator-group JSON (spec §7.3), atomically: one object, keys = group ids as
/// decimal strings in ascending numeric order, values = global ranks in the given order (ASTRA-sim builds the
/// ring in that order), one group per line:
///   {
///     "1": [0, 1],
///     "2": [2, 3]
///   }
/// Group ids must be > 0 (0 means the world group) and ranks >= 0, else ChakraWriteError.
/// The bytes are commGroupsText(groups).
void writeCommGroups(
    const std::filesystem::path& path, const std::map<int, std::vector<int>>& groups, ChakraWriteOptions options = {});
/// The text writeCommGroups() writes for `groups`, without its checks. Pure function; thread-safe.
std::string commGroupsText(const std::map<int, std::vector<int>>& groups);

// Canonical attributes (spec §5.2): each helper builds the attribute with the oneof member that both
// ASTRA-sim's current and legacy feeders read correctly.

/// `num_ops` int64_val: floating-point operations of a compute node (FLOPs).
ChakraAttribute chakraNumOps(int64_t flops);
/// `tensor_size` uint64_val: bytes moved to/from memory.
ChakraAttribute chakraTensorSize(uint64_t bytes);
/// `op_type` string_val: informational operator kind.
ChakraAttribute chakraOpType(std::string opType);
/// `is_cpu_op` bool_val.
ChakraAttribute chakraIsCpuOp(bool isCpu);
/// `comm_type` int64_val with the CollectiveCommType value.
ChakraAttribute chakraCommType(ChakraCollective type);
/// `comm_size` int64_val in bytes, with the per-collective meaning of spec §6.
ChakraAttribute chakraCommSize(int64_t bytes);
/// `pg_name` string_val: the decimal communicator-group id, a key of the group JSON.
ChakraAttribute chakraPgName(int groupId);
/// `comm_src` / `comm_dst` int32_val: global ranks; `comm_tag` int32_val.
ChakraAttribute chakraCommSrc(int32_t rank);
ChakraAttribute chakraCommDst(int32_t rank);
ChakraAttribute chakraCommTag(int32_t tag);
/// `involved_dim` bool_list.
ChakraAttribute chakraInvolvedDim(std::vector<bool> dims);

/// One tensor of an `inputs`/`outputs` list: a name unique per rank and its size in bytes.
struct ChakraTensorRef
{
    std::string name;
    uint64_t bytes = 0;
};
/// `inputs` / `outputs` string_list [name1, bytes1, name2, bytes2, ...], sizes as plain decimal integers.
ChakraAttribute chakraInputs(const std::vector<ChakraTensorRef>& tensors);
ChakraAttribute chakraOutputs(const std::vector<ChakraTensorRef>& tensors);

} // namespace stagecraft
