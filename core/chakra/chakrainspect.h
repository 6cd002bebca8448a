// SPDX-License-Identifier: MIT
// `stagecraft inspect`: statistics and validation of one Chakra ET rank file or of a whole trace set
// (rank files + communicator-group JSON), against the writer checklist of spec/chakra-et.md §9 and the
// ASTRA-sim rules of §7-§8.
//
// Severity policy: Error = ASTRA-sim aborts, hangs or silently drops work on it (dangling dependency, cycle,
// duplicate id, unsupported collective, unmatched send/recv, collective sequences that differ inside a
// group...). Warning = works with ASTRA-sim HEAD but not with every Chakra reader, or loses information
// (non-canonical attribute kinds such as STAGE's int32 `is_cpu_op`, empty version, sizes like "16384.0").
// Note = a property worth knowing that is legitimate (ids not dense, file order not topological, ctrl_deps).
// Nothing here throws; problems of the input are findings.
#pragma once

#include "chakra/chakratrace.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

namespace stagecraft {

enum class FindingSeverity
{
    Error,
    Warning,
    Note,
};

/// "error", "warning", "note".
const char* findingSeverityName(FindingSeverity severity);

/// One kind of problem, aggregated over its occurrences.
struct TraceFinding
{
    FindingSeverity severity = FindingSeverity::Note;
    std::string check; ///< stable identifier, e.g. "dangling-dep", "collective-mismatch"
    std::string subject; ///< what the check is about when it varies (an attribute name), else empty
    std::string message; ///< full description of the first occurrence
    uint64_t count = 0; ///< number of occurrences (nodes, records, groups...)
    std::vector<std::string> examples; ///< the first few occurrences, e.g. "node 17" or "rank 3 node 17"
};

/// Compute nodes grouped by `op_type` ("" when absent). Units are the producer's: Stagecraft writes FLOPs
/// and bytes, STAGE multiply-accumulates and elements.
struct OpTypeTotals
{
    std::string opType;
    uint64_t nodes = 0;
    int64_t numOps = 0; ///< sum of `num_ops` (saturates at INT64_MAX, then a finding says so)
    uint64_t tensorSize = 0; ///< sum of `tensor_size`
    uint64_t durationMicros = 0; ///< sum of `duration_micros`
};

/// Collectives grouped by (comm_type, pg_name).
struct CollectiveTotals
{
    int64_t commType = 0;
    std::string pgName; ///< "" = no pg_name (world group)
    uint64_t count = 0;
    int64_t totalCommSize = 0; ///< sum of `comm_size` (producer's unit; bytes for Stagecraft)
};

struct PointToPointTotals
{
    uint64_t sends = 0;
    int64_t sendSize = 0; ///< sum of `comm_size` over sends
    uint64_t recvs = 0;
    int64_t recvSize = 0;
};

/// Everything `inspect` reports about one rank file.
struct TraceSummary
{
    std::string source; ///< file name or label given by the caller
    uint64_t fileBytes = 0;
    std::string version; ///< GlobalMetadata.version
    std::string schema; ///< GlobalMetadata attribute `schema` if it is a string, else ""
    uint64_t nodeCount = 0;
    std::map<int32_t, uint64_t> nodesByType; ///< wire value of Node.type -> count
    uint64_t dataDepEdges = 0;
    uint64_t ctrlDepEdges = 0;
    std::vector<OpTypeTotals> compute; ///< sorted by op_type
    int64_t totalNumOps = 0;
    uint64_t totalTensorSize = 0;
    std::vector<CollectiveTotals> collectives; ///< sorted by (comm_type, pg_name as number then text)
    PointToPointTotals p2p;

    bool denseIds = false; ///< the set of ids is exactly {0, ..., n-1}
    bool topologicalOrder = false; ///< every dependency names a node that comes earlier in the file
    bool acyclic = false; ///< no dependency cycle (dangling deps ignored)
    uint64_t duplicateIds = 0; ///< records whose id repeats an earlier one
    uint64_t danglingDeps = 0; ///< dependency entries naming an id absent from the file
    uint64_t nodesOnOrBehindCycles = 0; ///< nodes that can never become ready
    uint64_t roots = 0; ///< nodes without dependencies
    uint64_t longestPathNodes = 0; ///< nodes on the longest dependency chain (0 if cyclic)
    /// As-soon-as-ready replay (chakrareplay.h): nodes that can start before the compute node that precedes
    /// them in the file, tensors written and never read, the tensor-lifetime peak (when every node carries
    /// tensor lists) and the producer's stated peak (GlobalMetadata `peak_memory_bytes`).
    uint64_t escapes = 0;
    uint64_t unreadOutputs = 0;
    std::optional<uint64_t> replayTensorPeakBytes;
    std::optional<int64_t> statedPeakBytes;

    std::vector<TraceFinding> findings; ///< errors first, then warnings, then notes

    size_t count(FindingSeverity severity) const;
};

/// Statistics and checklist findings of one trace. `source` labels the summary. O(n log n + edges);
/// iterative (no recursion), so any graph depth is fine. Pure function; thread-safe.
TraceSummary inspectTrace(const ChakraTrace& trace, std::string source = {});

/// Streams a rank file through the same checks without holding the trace in memory (about 16 bytes per
/// node plus 8 per dependency, whatever the file size). If the file cannot be read completely, the summary
/// covers the records before the problem and its first finding is a "read-error" error carrying the
/// reader's message, which is also stored in `*readError` if given (empty on success). Thread-safe.
TraceSummary inspectTraceFile(const std::filesystem::path& path, std::string* readError = nullptr);

/// One rank file of a set, as seen by inspectTraceSet().
struct RankInspection
{
    int rank = 0;
    std::filesystem::path path;
    uint64_t fileBytes = 0;
    uint64_t nodes = 0;
    size_t errors = 0;
    size_t warnings = 0;
    std::string readError; ///< non-empty if the file could not be read
    int rankClass = -1; ///< index into TraceSetSummary::classes; -1 if the file could not be read
};

/// Ranks whose files are alike: the same number of nodes of each type and of dependencies, the same compute
/// totals (num_ops, tensor_size), the same collectives per group (type, count, total size), the same send/recv
/// counts and sizes and the same stated peak. Only whom they talk to differs: group ids and peers. In a
/// Stagecraft set these are the ranks of one pipeline stage (two stages fall into one class only if their
/// programs and stated peaks are equal, which the first and last stages never are).
struct RankClass
{
    std::vector<int> ranks; ///< ascending
    uint64_t nodes = 0;
    uint64_t minFileBytes = 0; ///< file sizes differ a little with the varint size of group ids and peers
    uint64_t maxFileBytes = 0;
    uint64_t collectives = 0; ///< collective nodes per rank
    uint64_t sends = 0; ///< per rank
    uint64_t recvs = 0;
    int64_t totalNumOps = 0; ///< per rank
    size_t ranksWithFindings = 0; ///< ranks of the class with errors or warnings
    size_t errors = 0; ///< summed over the class's ranks (distinct checks per rank, as in RankInspection)
    size_t warnings = 0;
};

/// What makes ranks alike, in words (the text and JSON renderings print it).
extern const char* const kRankClassRule;

/// A whole trace set: `<prefix>.<rank>.et` for ranks 0..N-1 plus `<prefix>.json`.
struct TraceSetSummary
{
    std::filesystem::path directory;
    std::string prefix;
    int worldSize = 0; ///< highest rank found + 1
    std::filesystem::path groupsFile; ///< empty if absent
    std::map<int, std::vector<int>> groups; ///< parsed group JSON (valid entries only)
    std::vector<RankInspection> ranks;
    std::vector<RankClass> classes; ///< in order of their first rank
    std::vector<CollectiveTotals> collectives; ///< summed over all ranks
    uint64_t collectivesChecked = 0; ///< collective nodes compared against their group peers
    uint64_t groupsChecked = 0; ///< groups (plus the world group if used) whose sequences were compared
    uint64_t p2pMatched = 0; ///< send/recv pairs matched on (src, dst, tag, size)
    /// Set-level findings, followed by the per-rank findings merged by check (examples name the rank).
    std::vector<TraceFinding> findings;

    size_t count(FindingSeverity severity) const;
};

/// Finds `<prefix>.<rank>.et` in `directory` (decimal rank, no padding, as ASTRA-sim opens them) and
/// `<prefix>.json`, streams the rank files (keeping only their collective sequences, each distinct one once,
/// and send/recv keys), groups the ranks into classes (RankClass) and checks the set rules of spec §7: files for ranks
/// 0..N-1, every pg_name is a group of the JSON and the rank belongs to it, no collective on a singleton group, every
/// member of a group issues the same sequence of (comm_type, comm_size) in that group (in dependency order, ties by
/// ascending id, which is how ASTRA-sim issues ready nodes), every SEND has a RECV with equal (src, dst, tag, size) on
/// the peer and vice versa. With an empty `prefix` the directory must hold exactly one prefix. The rank files are read
/// by `threads` worker threads (0 = one per hardware thread), each holding one file's ids and dependencies at a
/// time; the summary is the same for any thread count. Thread-safe.
TraceSetSummary inspectTraceSet(
    const std::filesystem::path& directory, const std::string& prefix = {}, unsigned threads = 0);

/// JSON renderings (keys stable; numbers exact). Pure functions.
nlohmann::ordered_json summaryToJson(const TraceSummary& summary);
nlohmann::ordered_json summaryToJson(const TraceSetSummary& summary);
/// Human-readable report with aligned tables, ending with a newline.
std::string summaryToText(const TraceSummary& summary);
/// A set's report: one row per rank class and one per rank with errors or warnings, the collectives summed per
/// type; with `everyRank`, one row per rank and per (type, group) as well.
std::string summaryToText(const TraceSetSummary& summary, bool everyRank = false);

} // namespace stagecraft
