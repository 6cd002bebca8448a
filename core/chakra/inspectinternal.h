// SPDX-License-Identifier: MIT
// Internals of `inspect`, shared by its parts and by nothing else:
//   chakrainspect.cpp  the public entry points (one trace, one file, a whole set)
//   inspectrank.cpp    one rank file: statistics and checks node by node, then the graph (the as-soon-as-ready
//                      replay's checks live in chakrareplay.cpp and are merged here)
//   inspectread.cpp    finding a set's files and its communicator groups, reading the rank files
//   inspectcross.cpp   checks across ranks: group membership, collective sequences, send/recv pairs
//   inspectprint.cpp   JSON and text renderings
#pragma once

#include "chakra/chakrainspect.h"
#include "chakra/chakrareader.h"
#include "chakra/chakrareplay.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace stagecraft::inspect {

constexpr size_t MaxExamples = 5;

/// Aggregates findings by (check, subject); messages and examples are built only when kept. A repeated
/// occurrence costs one hash lookup and no allocation (some checks fire on every node of a file).
class Findings
{
public:
    template <typename MakeExample, typename MakeMessage>
    void add(FindingSeverity severity, std::string_view check, std::string_view subject, uint64_t n,
        MakeExample&& makeExample, MakeMessage&& makeMessage)
    {
        auto [it, inserted] = m_index.try_emplace(keyOf(check, subject), m_items.size());
        if (inserted) {
            TraceFinding f;
            f.severity = severity;
            f.check = check;
            f.subject = subject;
            f.message = makeMessage();
            m_items.push_back(std::move(f));
        }
        TraceFinding& f = m_items[it->second];
        f.count += n;
        if (f.examples.size() < MaxExamples)
            f.examples.push_back(makeExample());
    }

    void add(FindingSeverity severity, std::string_view check, std::string_view subject, const std::string& message,
        const std::string& example = {})
    {
        add(
            severity, check, subject, 1, [&] { return example; }, [&] { return message; });
    }

    /// Findings sorted by severity (stable: first occurrence order within a severity).
    std::vector<TraceFinding> take()
    {
        for (auto& f : m_items) {
            auto& ex = f.examples;
            ex.erase(std::remove(ex.begin(), ex.end(), std::string()), ex.end());
        }
        std::stable_sort(m_items.begin(), m_items.end(),
            [](const TraceFinding& a, const TraceFinding& b) { return a.severity < b.severity; });
        m_index.clear();
        return std::move(m_items);
    }

    TraceFinding* find(std::string_view check, std::string_view subject)
    {
        const auto it = m_index.find(keyOf(check, subject));
        return it == m_index.end() ? nullptr : &m_items[it->second];
    }

    /// Direct access for merging (set level).
    TraceFinding& at(std::string_view check, std::string_view subject, FindingSeverity severity,
        const std::string& message, bool* inserted)
    {
        auto [it, ins] = m_index.try_emplace(keyOf(check, subject), m_items.size());
        *inserted = ins;
        if (ins) {
            TraceFinding f;
            f.severity = severity;
            f.check = check;
            f.subject = subject;
            f.message = message;
            m_items.push_back(std::move(f));
        }
        return m_items[it->second];
    }

private:
    /// The index key of (check, subject), built in a buffer that is reused from call to call.
    const std::string& keyOf(std::string_view check, std::string_view subject)
    {
        m_key.assign(check);
        m_key += '\x1f';
        m_key.append(subject);
        return m_key;
    }

    std::unordered_map<std::string, size_t> m_index;
    std::vector<TraceFinding> m_items;
    std::string m_key;
};

inline bool isDecimal(std::string_view s)
{
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

/// Orders pg names numerically when both are decimal, else textually.
inline bool pgLess(const std::string& a, const std::string& b)
{
    if (isDecimal(a) && isDecimal(b) && a.size() != b.size())
        return a.size() < b.size();
    return a < b;
}

/// Sorts by (comm_type, pg_name as number then text).
inline void sortCollectives(std::vector<CollectiveTotals>& colls)
{
    std::sort(colls.begin(), colls.end(), [](const auto& a, const auto& b) {
        if (a.commType != b.commType)
            return a.commType < b.commType;
        return pgLess(a.pgName, b.pgName);
    });
}

// --- one rank file (inspectrank.cpp) ----------------------------------------------------------------------

/// What the graph checks keep of each node: its id and its dependencies (data then ctrl), flattened.
/// About 16 bytes per node plus 8 per dependency, whatever the node carries otherwise.
struct NodeTable
{
    std::vector<uint64_t> ids;
    std::vector<uint64_t> depStart { 0 }; ///< deps of node i: deps[depStart[i], depStart[i + 1])
    std::vector<uint64_t> deps;

    void add(const ChakraNode& n)
    {
        ids.push_back(n.id);
        deps.insert(deps.end(), n.dataDeps.begin(), n.dataDeps.end());
        deps.insert(deps.end(), n.ctrlDeps.begin(), n.ctrlDeps.end());
        depStart.push_back(deps.size());
    }
    size_t size() const
    {
        return ids.size();
    }
};

struct NodeStats
{
    std::map<std::string, OpTypeTotals> compute;
    std::map<std::pair<int64_t, std::string>, CollectiveTotals> collectives;
    bool numOpsOverflow = false;
    bool sizeOverflow = false;
};

/// What inspectTraceSet() needs from one rank beyond the summary.
struct CollRecord
{
    uint32_t index; ///< node position in the file
    int64_t type;
    int64_t size;
    uint64_t id;
    std::string pg; ///< "" = world group ("" or "0" in the file)
};
struct P2PRecord
{
    bool send;
    uint64_t id;
    std::optional<int64_t> src, dst, tag, size;
};

/// Streaming inspection: nodes are checked as they arrive and only ids and dependencies are kept
/// (plus collective and send/recv keys when `forSet`).
class TraceInspector final : public ChakraTraceVisitor
{
public:
    TraceInspector(std::string source, bool forSet);

    bool onMetadata(ChakraMetadata&& metadata, const ChakraRecordInfo&) override;
    bool onNode(ChakraNode&& node, const ChakraRecordInfo&) override;

    void addMetadata(const ChakraMetadata& metadata);
    void addNode(const ChakraNode& node);

    /// Runs the whole-graph checks. `framing` describes the file (empty for an in-memory trace).
    TraceSummary finish(const ChakraFramingInfo& framing);

    /// After finish(): the collectives in issue order (dependency order, ties by ascending id); nodes
    /// that can never run are left out.
    std::vector<CollRecord> collectivesInIssueOrder();
    const std::vector<P2PRecord>& p2p() const
    {
        return m_p2p;
    }

private:
    bool m_forSet;
    TraceSummary m_s;
    Findings m_findings;
    NodeStats m_stats;
    std::unordered_set<std::string> m_written;
    NodeTable m_table;
    TraceReplay m_replay;
    std::vector<uint32_t> m_invalid;
    uint64_t m_withInputs = 0;
    uint64_t m_withOutputs = 0;
    std::vector<CollRecord> m_colls;
    std::vector<P2PRecord> m_p2p;
    std::vector<uint32_t> m_issueOrder;
};

// --- a trace set: files and groups, reading (inspectread.cpp) ---------------------------------------------

/// Finds `<prefix>.<rank>.et` in `directory` and sets set.prefix and set.worldSize; reports an unreadable
/// directory, an ambiguous or absent prefix, missing ranks and a single rank. Returns the files by rank
/// (empty if there is no set to check).
std::map<int, std::filesystem::path> discoverRankFiles(
    const std::filesystem::path& directory, const std::string& prefix, TraceSetSummary& set, Findings& findings);

/// Reads `<prefix>.json` next to the rank files if it exists (set.groupsFile, set.groups) and returns the
/// valid groups by their key as written in the file.
std::map<std::string, std::vector<int>> readCommGroups(TraceSetSummary& set, Findings& findings);

/// One rank file of a set, read and checked on its own.
struct RankRead
{
    int rank = 0;
    std::filesystem::path path;
    std::string readError; ///< non-empty: the file could not be read; nothing else is set
    TraceSummary summary;
    std::vector<CollRecord> collectives; ///< in issue order
    std::vector<P2PRecord> p2p;
};

RankRead readRank(int rank, const std::filesystem::path& path);

/// Reads every file and hands the results to `consume` on the calling thread in ascending rank order, whatever
/// the number of threads reading: `threads` workers (0 = one per hardware thread; 1 = read on the calling
/// thread), each file read and checked on one worker. Nothing throws out of a worker.
void readRanksInOrder(const std::map<int, std::filesystem::path>& files, unsigned threads,
    const std::function<void(RankRead&&)>& consume);

// --- checks across ranks (inspectcross.cpp) ---------------------------------------------------------------

/// Takes the ranks one by one (in ascending order) and keeps only what the cross-rank checks need: each
/// rank's collective sequence per group and the send/recv keys.
class CrossRankChecks
{
public:
    CrossRankChecks(TraceSetSummary& set, Findings& findings, std::map<std::string, std::vector<int>> groupsByKey);

    void add(RankRead&& rank);
    /// Group membership and sequences, send/recv pairs, and the per-rank findings' rank counts.
    void finish();

private:
    struct CollOp
    {
        int64_t type;
        int64_t size;
        uint64_t id;

        bool operator==(const CollOp&) const = default;
    };
    struct P2PEnds
    {
        uint64_t sends = 0;
        uint64_t recvs = 0;
        std::pair<int, uint64_t> firstSend; ///< (rank, node id) of the first send
        std::pair<int, uint64_t> firstRecv;
    };
    using P2PKey = std::tuple<int64_t, int64_t, int64_t, int64_t>; // src, dst, tag, size

    /// The index of `seq` in m_sequences, adding it if it is new.
    uint32_t intern(std::vector<CollOp>&& seq);
    void checkGroups();
    void checkPointToPoint();
    static std::string describeOp(int rank, const CollOp& op);

    TraceSetSummary& m_set;
    Findings& m_findings;
    std::map<std::string, std::vector<int>> m_groupsByKey; ///< members in the JSON's order
    std::map<std::string, std::vector<int>> m_sortedMembers;
    /// Per rank: group key -> its collective sequence there, an index into m_sequences. The distinct sequences
    /// are few (ranks alike issue the same), so memory grows with the classes, not with the rank count.
    std::vector<std::map<std::string, uint32_t>> m_rankColls;
    std::vector<std::vector<CollOp>> m_sequences;
    std::unordered_map<uint64_t, std::vector<uint32_t>> m_sequenceIndex; ///< hash -> indices into m_sequences
    std::vector<char> m_readable;
    std::map<P2PKey, P2PEnds> m_p2p;
    std::map<std::pair<int64_t, std::string>, CollectiveTotals> m_totals;
    std::map<std::pair<std::string, std::string>, size_t> m_ranksWith; ///< merged per-rank finding -> rank count
    std::map<std::vector<int64_t>, size_t> m_classOf; ///< class signature -> index into m_set.classes
};

} // namespace stagecraft::inspect
