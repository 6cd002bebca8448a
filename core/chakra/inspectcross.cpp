// SPDX-License-Identifier: MIT
// Checks across the ranks of a set (spec §7): every pg_name is a group of the JSON and the rank belongs to it,
// no collective on a singleton group, the members of a group issue the same collective sequence, every SEND
// has its RECV and vice versa.
#include "chakra/inspectinternal.h"

#include <limits>

namespace stagecraft::inspect {

namespace {
    std::string rankList(const std::vector<int>& ranks)
    {
        std::string s = "[";
        for (size_t i = 0; i < ranks.size(); ++i) {
            if (i == 8) {
                s += ", ...";
                break;
            }
            s += (i ? ", " : "") + std::to_string(ranks[i]);
        }
        return s + "]";
    }

    std::string nodeWhere(int rank, uint64_t id)
    {
        return "rank " + std::to_string(rank) + " node " + std::to_string(id);
    }

    std::string groupLabel(const std::string& key, const std::vector<int>& members)
    {
        return (key.empty() ? std::string("world group") : "group " + key) + " " + rankList(members);
    }

    /// What makes ranks alike (RankClass): everything the file says about its work except which groups and
    /// peers it talks to. Collectives count per group, without the group's name.
    std::vector<int64_t> classSignature(const TraceSummary& s)
    {
        std::vector<int64_t> sig { static_cast<int64_t>(s.nodeCount), static_cast<int64_t>(s.dataDepEdges),
            static_cast<int64_t>(s.ctrlDepEdges), s.totalNumOps, static_cast<int64_t>(s.totalTensorSize),
            static_cast<int64_t>(s.p2p.sends), s.p2p.sendSize, static_cast<int64_t>(s.p2p.recvs), s.p2p.recvSize,
            s.statedPeakBytes.has_value() ? 1 : 0, s.statedPeakBytes.value_or(0),
            static_cast<int64_t>(s.nodesByType.size()) };
        for (const auto& [type, count] : s.nodesByType) {
            sig.push_back(type);
            sig.push_back(static_cast<int64_t>(count));
        }
        std::vector<std::tuple<int64_t, int64_t, int64_t>> colls;
        for (const CollectiveTotals& c : s.collectives)
            colls.emplace_back(c.commType, static_cast<int64_t>(c.count), c.totalCommSize);
        std::sort(colls.begin(), colls.end());
        for (const auto& [type, count, size] : colls) {
            sig.push_back(type);
            sig.push_back(count);
            sig.push_back(size);
        }
        return sig;
    }
} // namespace

std::string CrossRankChecks::describeOp(int rank, const CollOp& op)
{
    return "rank " + std::to_string(rank) + " node " + std::to_string(op.id) + " " + chakraCollectiveName(op.type)
        + " comm_size " + std::to_string(op.size);
}

CrossRankChecks::CrossRankChecks(
    TraceSetSummary& set, Findings& findings, std::map<std::string, std::vector<int>> groupsByKey)
    : m_set(set)
    , m_findings(findings)
    , m_groupsByKey(std::move(groupsByKey))
    , m_rankColls(static_cast<size_t>(set.worldSize))
    , m_readable(static_cast<size_t>(set.worldSize), 0)
{
    for (const auto& [key, members] : m_groupsByKey) {
        std::vector<int> sorted = members;
        std::sort(sorted.begin(), sorted.end());
        m_sortedMembers.emplace(key, std::move(sorted));
    }
}

uint32_t CrossRankChecks::intern(std::vector<CollOp>&& seq)
{
    uint64_t h = seq.size();
    for (const CollOp& op : seq) {
        for (const uint64_t v : { static_cast<uint64_t>(op.type), static_cast<uint64_t>(op.size), op.id })
            h = (h ^ v) * 0x100000001b3ull + (h >> 29);
    }
    std::vector<uint32_t>& candidates = m_sequenceIndex[h];
    for (const uint32_t c : candidates) {
        if (m_sequences[c] == seq)
            return c;
    }
    candidates.push_back(static_cast<uint32_t>(m_sequences.size()));
    m_sequences.push_back(std::move(seq));
    return candidates.back();
}

void CrossRankChecks::add(RankRead&& r)
{
    const int rank = r.rank;
    RankInspection ri;
    ri.rank = rank;
    ri.path = r.path;
    if (!r.readError.empty()) {
        ri.readError = r.readError;
        m_findings.add(
            FindingSeverity::Error, "read-error", {}, 1, [&] { return "rank " + std::to_string(rank); },
            [&] { return r.readError; });
        m_set.ranks.push_back(std::move(ri));
        return;
    }
    m_readable[static_cast<size_t>(rank)] = 1;
    const TraceSummary& s = r.summary;
    ri.fileBytes = s.fileBytes;
    ri.nodes = s.nodeCount;
    ri.errors = s.count(FindingSeverity::Error);
    ri.warnings = s.count(FindingSeverity::Warning);
    for (const auto& c : s.collectives) {
        auto& t = m_totals[{ c.commType, c.pgName }];
        t.commType = c.commType;
        t.pgName = c.pgName;
        t.count += c.count;
        t.totalCommSize += c.totalCommSize;
    }

    // Merge this rank's findings, keyed by check and subject.
    for (const auto& f : s.findings) {
        bool inserted = false;
        TraceFinding& m = m_findings.at(
            "rank:" + f.check, f.subject, f.severity, "rank " + std::to_string(rank) + ": " + f.message, &inserted);
        if (inserted)
            m.check = f.check;
        ++m_ranksWith[{ "rank:" + f.check, f.subject }];
        m.count += f.count;
        for (const auto& ex : f.examples) {
            if (m.examples.size() >= MaxExamples)
                break;
            m.examples.push_back("rank " + std::to_string(rank) + ": " + ex);
        }
        if (f.examples.empty() && m.examples.size() < MaxExamples)
            m.examples.push_back("rank " + std::to_string(rank));
    }

    // Each rank's sequence per group, interned: the ranks of a class share theirs.
    std::map<std::string, std::vector<CollOp>> byGroup;
    for (CollRecord& c : r.collectives)
        byGroup[c.pg].push_back(CollOp { c.type, c.size, c.id });
    auto& colls = m_rankColls[static_cast<size_t>(rank)];
    for (auto& [pg, seq] : byGroup)
        colls.emplace(pg, intern(std::move(seq)));

    for (const P2PRecord& op : r.p2p) {
        const bool isSend = op.send;
        const std::string where = nodeWhere(rank, op.id);
        const auto self = isSend ? op.src : op.dst;
        if (self && *self != rank) {
            m_findings.add(
                FindingSeverity::Error, isSend ? "send-src-not-self" : "recv-dst-not-self", {}, 1,
                [&] { return where; },
                [&] {
                    return where + ": " + (isSend ? "SEND has comm_src " : "RECV has comm_dst ") + std::to_string(*self)
                        + ", which must equal its own rank (ASTRA-sim throws)";
                });
        }
        const auto peer = isSend ? op.dst : op.src;
        if (!peer || !op.tag || !op.size)
            continue; // reported as missing-attr by the per-rank check
        if (*peer < 0 || *peer >= m_set.worldSize) {
            m_findings.add(
                FindingSeverity::Error, "p2p-peer-out-of-range", {}, 1, [&] { return where; },
                [&] {
                    return where + ": peer rank " + std::to_string(*peer) + " is outside 0.."
                        + std::to_string(m_set.worldSize - 1);
                });
            continue;
        }
        const P2PKey key =
            isSend ? P2PKey { rank, *peer, *op.tag, *op.size } : P2PKey { *peer, rank, *op.tag, *op.size };
        auto& ends = m_p2p[key];
        if (isSend) {
            if (ends.sends++ == 0)
                ends.firstSend = { rank, op.id };
        } else {
            if (ends.recvs++ == 0)
                ends.firstRecv = { rank, op.id };
        }
    }

    const auto [cls, inserted] = m_classOf.try_emplace(classSignature(s), m_set.classes.size());
    if (inserted) {
        RankClass c;
        c.nodes = s.nodeCount;
        c.minFileBytes = c.maxFileBytes = s.fileBytes;
        for (const CollectiveTotals& t : s.collectives)
            c.collectives += t.count;
        c.sends = s.p2p.sends;
        c.recvs = s.p2p.recvs;
        c.totalNumOps = s.totalNumOps;
        m_set.classes.push_back(std::move(c));
    }
    RankClass& c = m_set.classes[cls->second];
    c.ranks.push_back(rank);
    c.minFileBytes = std::min(c.minFileBytes, s.fileBytes);
    c.maxFileBytes = std::max(c.maxFileBytes, s.fileBytes);
    c.errors += ri.errors;
    c.warnings += ri.warnings;
    c.ranksWithFindings += ri.errors + ri.warnings > 0 ? 1 : 0;
    ri.rankClass = static_cast<int>(cls->second);
    m_set.ranks.push_back(std::move(ri));
}

void CrossRankChecks::finish()
{
    for (auto& entry : m_totals)
        m_set.collectives.push_back(entry.second);
    sortCollectives(m_set.collectives);
    checkGroups();
    checkPointToPoint();
    for (const auto& [key, ranks] : m_ranksWith) {
        if (TraceFinding* f = m_findings.find(key.first, key.second))
            f->message += " [on " + std::to_string(ranks) + " of " + std::to_string(m_set.worldSize) + " ranks]";
    }
}

void CrossRankChecks::checkGroups()
{
    std::vector<int> world(static_cast<size_t>(m_set.worldSize));
    for (int r = 0; r < m_set.worldSize; ++r)
        world[static_cast<size_t>(r)] = r;
    std::set<std::string> usedKeys;
    for (int r = 0; r < m_set.worldSize; ++r) {
        for (const auto& entry : m_rankColls[static_cast<size_t>(r)]) {
            const std::string& key = entry.first;
            const std::vector<CollOp>& ops = m_sequences[entry.second];
            usedKeys.insert(key);
            if (key.empty())
                continue;
            const auto g = m_groupsByKey.find(key);
            const std::string where = "rank " + std::to_string(r) + " node " + std::to_string(ops.front().id);
            if (g == m_groupsByKey.end()) {
                m_findings.add(
                    FindingSeverity::Error, "pg-unknown", key, ops.size(), [&] { return where; },
                    [&] {
                        return where + ": pg_name \"" + key + "\" is not a group of "
                            + (m_set.groupsFile.empty() ? "the (missing) " + m_set.prefix + ".json"
                                                        : m_set.groupsFile.filename().string())
                            + " (ASTRA-sim: \"communicator group " + key + " not found\")";
                    });
            } else if (const auto& sorted = m_sortedMembers.at(key);
                       !std::binary_search(sorted.begin(), sorted.end(), r)) {
                m_findings.add(
                    FindingSeverity::Error, "pg-not-member", key, ops.size(), [&] { return where; },
                    [&] {
                        return where + ": collective in " + groupLabel(key, g->second)
                            + ", which does not contain rank " + std::to_string(r);
                    });
            }
        }
    }
    for (const std::string& key : usedKeys) {
        const std::vector<int>* members = &world;
        if (!key.empty()) {
            const auto g = m_groupsByKey.find(key);
            if (g == m_groupsByKey.end())
                continue;
            members = &g->second;
        }
        std::vector<int> present;
        for (int m : *members) {
            if (m >= 0 && m < m_set.worldSize && m_readable[static_cast<size_t>(m)])
                present.push_back(m);
        }
        if (present.empty())
            continue;
        static const std::vector<CollOp> none;
        constexpr uint32_t noSequence = std::numeric_limits<uint32_t>::max();
        auto indexOf = [&](int r) {
            const auto& colls = m_rankColls[static_cast<size_t>(r)];
            const auto f = colls.find(key);
            return f == colls.end() ? noSequence : f->second;
        };
        auto seqOf = [&](int r) -> const std::vector<CollOp>& {
            const uint32_t i = indexOf(r);
            return i == noSequence ? none : m_sequences[i];
        };
        if (members->size() == 1) {
            const auto& seq = seqOf(present.front());
            if (!seq.empty()) {
                m_findings.add(
                    FindingSeverity::Error, "singleton-collective", {}, seq.size(),
                    [&] { return describeOp(present.front(), seq.front()); },
                    [&] {
                        return describeOp(present.front(), seq.front()) + " runs on the single-member "
                            + groupLabel(key, *members) + " (ASTRA-sim never completes it)";
                    });
            }
            continue;
        }
        ++m_set.groupsChecked;
        const int ref = present.front();
        const uint32_t refIndex = indexOf(ref);
        const auto& refSeq = seqOf(ref);
        m_set.collectivesChecked += refSeq.size();
        for (size_t k = 1; k < present.size(); ++k) {
            const int r = present[k];
            const auto& seq = seqOf(r);
            m_set.collectivesChecked += seq.size();
            if (indexOf(r) == refIndex)
                continue; // the same interned sequence

            auto same = [](const CollOp& a, const CollOp& b) { return a.type == b.type && a.size == b.size; };
            size_t pos = 0;
            while (pos < refSeq.size() && pos < seq.size() && same(refSeq[pos], seq[pos]))
                ++pos;
            if (pos == refSeq.size() && pos == seq.size())
                continue;
            // Same multiset in another order: ASTRA-sim may still match them if timing allows; flag it.
            auto keyOf = [](const CollOp& o) { return std::make_pair(o.type, o.size); };
            std::vector<std::pair<int64_t, int64_t>> a;
            std::vector<std::pair<int64_t, int64_t>> b;
            for (const auto& o : refSeq)
                a.push_back(keyOf(o));
            for (const auto& o : seq)
                b.push_back(keyOf(o));
            std::sort(a.begin(), a.end());
            std::sort(b.begin(), b.end());
            const bool reordered = a == b;
            const std::string glabel = groupLabel(key, *members);
            const std::string lhs =
                pos < refSeq.size() ? describeOp(ref, refSeq[pos]) : "rank " + std::to_string(ref) + " (none)";
            const std::string rhs =
                pos < seq.size() ? describeOp(r, seq[pos]) : "rank " + std::to_string(r) + " (none)";
            m_findings.add(
                reordered ? FindingSeverity::Warning : FindingSeverity::Error,
                reordered ? "collective-order-differs" : "collective-mismatch", {}, 1,
                [&] { return glabel + ": ranks " + std::to_string(ref) + " and " + std::to_string(r); },
                [&] {
                    return glabel + ": rank " + std::to_string(ref) + " issues " + std::to_string(refSeq.size())
                        + " collectives, rank " + std::to_string(r) + " issues " + std::to_string(seq.size())
                        + "; they first differ at position " + std::to_string(pos) + ": " + lhs + " vs " + rhs
                        + (reordered ? " (same collectives in another dependency order; may deadlock)"
                                     : " (members wait forever in ASTRA-sim)");
                });
        }
    }
}

void CrossRankChecks::checkPointToPoint()
{
    for (const auto& entry : m_p2p) {
        const P2PEnds& ends = entry.second;
        m_set.p2pMatched += std::min(ends.sends, ends.recvs);
        if (ends.sends == ends.recvs)
            continue;
        const int64_t src = std::get<0>(entry.first);
        const int64_t dst = std::get<1>(entry.first);
        const int64_t tag = std::get<2>(entry.first);
        const int64_t size = std::get<3>(entry.first);
        const std::string firstSend = nodeWhere(ends.firstSend.first, ends.firstSend.second);
        const std::string firstRecv = nodeWhere(ends.firstRecv.first, ends.firstRecv.second);
        const std::string what = "(src " + std::to_string(src) + ", dst " + std::to_string(dst) + ", tag "
            + std::to_string(tag) + ", size " + std::to_string(size) + ")";
        if (ends.sends > ends.recvs) {
            m_findings.add(
                FindingSeverity::Error, "send-without-recv", {}, ends.sends - ends.recvs, [&] { return firstSend; },
                [&] {
                    return firstSend + ": SEND " + what + " has no matching RECV on rank " + std::to_string(dst) + " ("
                        + std::to_string(ends.sends) + " sends, " + std::to_string(ends.recvs) + " receives)";
                });
        } else if (ends.recvs > ends.sends) {
            m_findings.add(
                FindingSeverity::Error, "recv-without-send", {}, ends.recvs - ends.sends, [&] { return firstRecv; },
                [&] {
                    return firstRecv + ": RECV " + what + " has no matching SEND on rank " + std::to_string(src)
                        + " (the receiver waits forever)";
                });
        }
    }
}

} // namespace stagecraft::inspect
