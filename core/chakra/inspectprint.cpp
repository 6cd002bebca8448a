// SPDX-License-Identifier: MIT
// JSON and text renderings of inspect's summaries.
#include "chakra/inspectinternal.h"

#include <map>
#include <nlohmann/json.hpp>

namespace stagecraft {

const char* const kRankClassRule = "ranks alike: the same nodes of each type, dependencies, compute totals, "
                                   "collectives per group, send/recv volumes and stated peak; only group ids "
                                   "and peers differ";

namespace {
    using OJson = nlohmann::ordered_json;

    OJson findingsToJson(const std::vector<TraceFinding>& findings)
    {
        OJson arr = OJson::array();
        for (const auto& f : findings) {
            OJson j = OJson::object();
            j["severity"] = findingSeverityName(f.severity);
            j["check"] = f.check;
            if (!f.subject.empty())
                j["subject"] = f.subject;
            j["message"] = f.message;
            j["count"] = f.count;
            j["examples"] = f.examples;
            arr.push_back(std::move(j));
        }
        return arr;
    }

    OJson collectivesToJson(const std::vector<CollectiveTotals>& colls)
    {
        OJson arr = OJson::array();
        for (const auto& c : colls) {
            OJson j = OJson::object();
            j["comm_type"] = chakraCollectiveName(c.commType);
            j["comm_type_value"] = c.commType;
            j["pg_name"] = c.pgName;
            j["count"] = c.count;
            j["total_comm_size"] = c.totalCommSize;
            arr.push_back(std::move(j));
        }
        return arr;
    }

    /// Plain-text table with a header row; columns right-aligned unless marked left.
    class Table
    {
    public:
        Table(std::vector<std::string> header, std::vector<bool> leftAligned)
            : m_left(std::move(leftAligned))
        {
            m_rows.push_back(std::move(header));
        }
        void add(std::vector<std::string> row)
        {
            m_rows.push_back(std::move(row));
        }
        std::string render(const std::string& indent = "  ") const
        {
            std::vector<size_t> width(m_rows.front().size(), 0);
            for (const auto& row : m_rows) {
                for (size_t c = 0; c < row.size() && c < width.size(); ++c)
                    width[c] = std::max(width[c], row[c].size());
            }
            std::string out;
            for (const auto& row : m_rows) {
                std::string line = indent;
                for (size_t c = 0; c < width.size(); ++c) {
                    const std::string cell = c < row.size() ? row[c] : std::string();
                    const std::string pad(width[c] - cell.size(), ' ');
                    if (c > 0)
                        line += "  ";
                    line += (c < m_left.size() && m_left[c]) ? cell + pad : pad + cell;
                }
                while (!line.empty() && line.back() == ' ')
                    line.pop_back();
                out += line + '\n';
            }
            return out;
        }

    private:
        std::vector<bool> m_left;
        std::vector<std::vector<std::string>> m_rows;
    };

    std::string num(uint64_t v)
    {
        return std::to_string(v);
    }

    std::string num(int64_t v)
    {
        return std::to_string(v);
    }

    std::string findingsText(const std::vector<TraceFinding>& findings, size_t errors, size_t warnings, size_t notes)
    {
        std::string out = "findings: " + num(uint64_t(errors)) + " errors, " + num(uint64_t(warnings)) + " warnings, "
            + num(uint64_t(notes)) + " notes\n";
        for (const auto& f : findings) {
            out += "  " + std::string(findingSeverityName(f.severity)) + " [" + f.check + "] " + f.message;
            if (f.count > 1)
                out += " (" + num(f.count) + " occurrences)";
            out += '\n';
            if (f.count > 1 && !f.examples.empty()) {
                std::string ex;
                for (const auto& e : f.examples)
                    ex += (ex.empty() ? "" : "; ") + e;
                out += "      e.g. " + ex + '\n';
            }
        }
        return out;
    }

    std::string yesNo(bool b)
    {
        return b ? "yes" : "no";
    }

    /// Ranks listed in the set text before "the first N" cuts the list (--all lists them all).
    constexpr size_t MaxRankRows = 100;

    /// Ascending ranks as runs of consecutive ranks: {0, 1, 2, 5} -> {{0, 2}, {5, 5}}.
    std::vector<std::pair<int, int>> rankRanges(const std::vector<int>& ranks)
    {
        std::vector<std::pair<int, int>> out;
        for (const int r : ranks) {
            if (!out.empty() && out.back().second + 1 == r)
                out.back().second = r;
            else
                out.emplace_back(r, r);
        }
        return out;
    }

    /// "0-127", "0-7, 64-71, 128-135, 192-199, ... (16 runs)", or "3-1019 step 8" for an evenly spaced class.
    std::string rankRangesText(const std::vector<int>& ranks)
    {
        constexpr size_t MaxRuns = 4;
        const auto runs = rankRanges(ranks);
        if (runs.size() > 2) {
            const int step = ranks[1] - ranks[0];
            bool even = step > 1;
            for (size_t i = 2; even && i < ranks.size(); ++i)
                even = ranks[i] - ranks[i - 1] == step;
            if (even)
                return std::to_string(ranks.front()) + "-" + std::to_string(ranks.back()) + " step "
                    + std::to_string(step);
        }
        std::string out;
        for (size_t i = 0; i < runs.size() && i < MaxRuns; ++i) {
            const auto [first, last] = runs[i];
            out += (i ? ", " : "") + std::to_string(first) + (first == last ? "" : "-" + std::to_string(last));
        }
        if (runs.size() > MaxRuns)
            out += ", ... (" + std::to_string(runs.size()) + " runs)";
        return out;
    }
} // namespace

nlohmann::ordered_json summaryToJson(const TraceSummary& s)
{
    OJson j = OJson::object();
    j["source"] = s.source;
    j["file_bytes"] = s.fileBytes;
    j["version"] = s.version;
    j["schema"] = s.schema;
    j["nodes"] = s.nodeCount;
    OJson types = OJson::object();
    for (const auto& [t, c] : s.nodesByType)
        types[chakraNodeTypeName(static_cast<ChakraNodeType>(t))] = c;
    j["nodes_by_type"] = std::move(types);
    j["data_dep_edges"] = s.dataDepEdges;
    j["ctrl_dep_edges"] = s.ctrlDepEdges;
    OJson comp = OJson::array();
    for (const auto& t : s.compute) {
        OJson c = OJson::object();
        c["op_type"] = t.opType;
        c["nodes"] = t.nodes;
        c["num_ops"] = t.numOps;
        c["tensor_size"] = t.tensorSize;
        c["duration_micros"] = t.durationMicros;
        comp.push_back(std::move(c));
    }
    j["compute"] = std::move(comp);
    j["total_num_ops"] = s.totalNumOps;
    j["total_tensor_size"] = s.totalTensorSize;
    j["collectives"] = collectivesToJson(s.collectives);
    j["p2p"] = OJson { { "sends", s.p2p.sends }, { "send_size", s.p2p.sendSize }, { "recvs", s.p2p.recvs },
        { "recv_size", s.p2p.recvSize } };
    OJson g = OJson::object();
    g["dense_ids"] = s.denseIds;
    g["topological_order"] = s.topologicalOrder;
    g["acyclic"] = s.acyclic;
    g["duplicate_ids"] = s.duplicateIds;
    g["dangling_deps"] = s.danglingDeps;
    g["nodes_on_or_behind_cycles"] = s.nodesOnOrBehindCycles;
    g["roots"] = s.roots;
    g["longest_path_nodes"] = s.longestPathNodes;
    j["graph"] = std::move(g);
    OJson r = OJson::object();
    r["escapes"] = s.escapes;
    r["unread_outputs"] = s.unreadOutputs;
    r["tensor_peak_bytes"] = s.replayTensorPeakBytes ? OJson(*s.replayTensorPeakBytes) : OJson();
    r["stated_peak_bytes"] = s.statedPeakBytes ? OJson(*s.statedPeakBytes) : OJson();
    j["replay"] = std::move(r);
    j["errors"] = s.count(FindingSeverity::Error);
    j["warnings"] = s.count(FindingSeverity::Warning);
    j["notes"] = s.count(FindingSeverity::Note);
    j["findings"] = findingsToJson(s.findings);
    return j;
}

nlohmann::ordered_json summaryToJson(const TraceSetSummary& s)
{
    OJson j = OJson::object();
    j["directory"] = s.directory.string();
    j["prefix"] = s.prefix;
    j["world_size"] = s.worldSize;
    j["groups_file"] = s.groupsFile.string();
    OJson groups = OJson::object();
    for (const auto& [id, members] : s.groups)
        groups[std::to_string(id)] = members;
    j["groups"] = std::move(groups);
    OJson ranks = OJson::array();
    for (const auto& r : s.ranks) {
        OJson o = OJson::object();
        o["rank"] = r.rank;
        o["path"] = r.path.string();
        o["file_bytes"] = r.fileBytes;
        o["nodes"] = r.nodes;
        o["errors"] = r.errors;
        o["warnings"] = r.warnings;
        if (!r.readError.empty())
            o["read_error"] = r.readError;
        o["class"] = r.rankClass < 0 ? OJson() : OJson(r.rankClass);
        ranks.push_back(std::move(o));
    }
    j["ranks"] = std::move(ranks);
    j["rank_class_rule"] = kRankClassRule;
    OJson classes = OJson::array();
    for (size_t k = 0; k < s.classes.size(); ++k) {
        const RankClass& c = s.classes[k];
        OJson o = OJson::object();
        o["class"] = k;
        o["rank_count"] = c.ranks.size();
        OJson ranges = OJson::array();
        for (const auto& [first, last] : rankRanges(c.ranks))
            ranges.push_back(OJson::array({ first, last }));
        o["ranks"] = std::move(ranges);
        o["nodes"] = c.nodes;
        o["file_bytes_min"] = c.minFileBytes;
        o["file_bytes_max"] = c.maxFileBytes;
        o["collectives"] = c.collectives;
        o["sends"] = c.sends;
        o["recvs"] = c.recvs;
        o["total_num_ops"] = c.totalNumOps;
        o["ranks_with_findings"] = c.ranksWithFindings;
        o["errors"] = c.errors;
        o["warnings"] = c.warnings;
        classes.push_back(std::move(o));
    }
    j["rank_classes"] = std::move(classes);
    j["collectives"] = collectivesToJson(s.collectives);
    j["groups_checked"] = s.groupsChecked;
    j["collectives_checked"] = s.collectivesChecked;
    j["p2p_matched"] = s.p2pMatched;
    j["errors"] = s.count(FindingSeverity::Error);
    j["warnings"] = s.count(FindingSeverity::Warning);
    j["notes"] = s.count(FindingSeverity::Note);
    j["findings"] = findingsToJson(s.findings);
    return j;
}

std::string summaryToText(const TraceSummary& s)
{
    std::string out;
    out += "trace: " + (s.source.empty() ? std::string("(memory)") : s.source) + " (" + num(s.fileBytes) + " bytes)\n";
    out += "metadata: version \"" + s.version + "\", schema \"" + s.schema + "\"\n";
    out += "nodes: " + num(s.nodeCount) + ", data deps: " + num(s.dataDepEdges) + ", ctrl deps: " + num(s.ctrlDepEdges)
        + "\n";
    Table types({ "type", "nodes" }, { true, false });
    for (const auto& [t, c] : s.nodesByType)
        types.add({ chakraNodeTypeName(static_cast<ChakraNodeType>(t)), num(c) });
    out += types.render();
    out += "graph: dense ids " + yesNo(s.denseIds) + ", file order topological " + yesNo(s.topologicalOrder)
        + ", acyclic " + yesNo(s.acyclic) + ", roots " + num(s.roots) + ", longest path " + num(s.longestPathNodes)
        + " nodes\n";
    out += "as-soon-as-ready replay: " + num(s.escapes) + " nodes escape their schedule phase";
    if (s.replayTensorPeakBytes) {
        out += ", " + num(s.unreadOutputs) + " unread outputs, tensor-lifetime peak " + num(*s.replayTensorPeakBytes)
            + " bytes";
        if (s.statedPeakBytes)
            out += " (stated " + num(*s.statedPeakBytes) + ")";
    }
    out += "\n";
    if (!s.compute.empty()) {
        out += "\ncompute by op_type:\n";
        Table t({ "op_type", "nodes", "num_ops", "tensor_size", "duration_us" }, { true, false, false, false, false });
        for (const auto& c : s.compute)
            t.add({ c.opType.empty() ? "(none)" : c.opType, num(c.nodes), num(c.numOps), num(c.tensorSize),
                num(c.durationMicros) });
        t.add({ "total", "", num(s.totalNumOps), num(s.totalTensorSize), "" });
        out += t.render();
    }
    if (!s.collectives.empty()) {
        out += "\ncollectives:\n";
        Table t({ "comm_type", "pg_name", "count", "total comm_size" }, { true, true, false, false });
        for (const auto& c : s.collectives)
            t.add({ chakraCollectiveName(c.commType), c.pgName.empty() ? "(world)" : c.pgName, num(c.count),
                num(c.totalCommSize) });
        out += t.render();
    }
    if (s.p2p.sends + s.p2p.recvs > 0) {
        out += "\npoint-to-point:\n";
        Table t({ "kind", "count", "total comm_size" }, { true, false, false });
        t.add({ "send", num(s.p2p.sends), num(s.p2p.sendSize) });
        t.add({ "recv", num(s.p2p.recvs), num(s.p2p.recvSize) });
        out += t.render();
    }
    out += "\n"
        + findingsText(s.findings, s.count(FindingSeverity::Error), s.count(FindingSeverity::Warning),
            s.count(FindingSeverity::Note));
    return out;
}

std::string summaryToText(const TraceSetSummary& s, bool everyRank)
{
    std::string out;
    out += "trace set: " + (s.directory / (s.prefix + ".<rank>.et")).string() + ", " + std::to_string(s.worldSize)
        + " ranks\n";
    out += "groups: "
        + (s.groupsFile.empty() ? std::string("(no ") + s.prefix + ".json)"
                                : s.groupsFile.filename().string() + ", " + std::to_string(s.groups.size()) + " groups")
        + "\n";
    if (!s.classes.empty()) {
        out += "\nrank classes: " + num(uint64_t(s.classes.size())) + " (" + kRankClassRule + ")\n";
        Table t({ "class", "ranks", "which", "bytes", "nodes", "collectives", "sends", "recvs", "errors", "warnings" },
            { false, false, true, false, false, false, false, false, false, false });
        for (size_t k = 0; k < s.classes.size(); ++k) {
            const RankClass& c = s.classes[k];
            const std::string bytes = c.minFileBytes == c.maxFileBytes
                ? num(c.minFileBytes)
                : num(c.minFileBytes) + ".." + num(c.maxFileBytes);
            t.add({ num(uint64_t(k)), num(uint64_t(c.ranks.size())), rankRangesText(c.ranks), bytes, num(c.nodes),
                num(c.collectives), num(c.sends), num(c.recvs), num(uint64_t(c.errors)), num(uint64_t(c.warnings)) });
        }
        out += t.render();
    }
    std::vector<const RankInspection*> shown;
    size_t withFindings = 0;
    for (const auto& r : s.ranks) {
        const bool finding = !r.readError.empty() || r.errors + r.warnings > 0;
        withFindings += finding ? 1 : 0;
        if (everyRank || (finding && shown.size() < MaxRankRows))
            shown.push_back(&r);
    }
    if (everyRank) {
        out += "\nranks:\n";
    } else if (withFindings == 0) {
        out += "\nranks with errors or warnings: none (every rank: --all)\n";
    } else {
        out += "\nranks with errors or warnings: " + num(uint64_t(withFindings)) + " of "
            + num(uint64_t(s.ranks.size()))
            + (withFindings > shown.size() ? ", the first " + num(uint64_t(shown.size())) : std::string())
            + " (every rank: --all)\n";
    }
    if (!shown.empty()) {
        Table ranks(
            { "rank", "class", "bytes", "nodes", "errors", "warnings" }, { false, false, false, false, false, false });
        for (const RankInspection* r : shown) {
            ranks.add({ std::to_string(r->rank), r->rankClass < 0 ? "-" : std::to_string(r->rankClass),
                r->readError.empty() ? num(r->fileBytes) : "unreadable", num(r->nodes), num(uint64_t(r->errors)),
                num(uint64_t(r->warnings)) });
        }
        out += ranks.render();
    }
    if (!s.collectives.empty() && everyRank) {
        out += "\ncollectives (all ranks):\n";
        Table t({ "comm_type", "pg_name", "count", "total comm_size" }, { true, true, false, false });
        for (const auto& c : s.collectives)
            t.add({ chakraCollectiveName(c.commType), c.pgName.empty() ? "(world)" : c.pgName, num(c.count),
                num(c.totalCommSize) });
        out += t.render();
    } else if (!s.collectives.empty()) {
        // Per type: one row per group would be as long as the rank list on a large set.
        struct PerType
        {
            uint64_t groups = 0;
            uint64_t count = 0;
            int64_t totalCommSize = 0;
        };
        std::map<int64_t, PerType> perType;
        for (const auto& c : s.collectives) {
            PerType& p = perType[c.commType];
            ++p.groups;
            p.count += c.count;
            p.totalCommSize += c.totalCommSize;
        }
        out += "\ncollectives (all ranks, per type; per group: --all):\n";
        Table t({ "comm_type", "groups", "count", "total comm_size" }, { true, false, false, false });
        for (const auto& [type, p] : perType)
            t.add({ chakraCollectiveName(type), num(p.groups), num(p.count), num(p.totalCommSize) });
        out += t.render();
    }
    out += "\nchecked: " + num(s.collectivesChecked) + " collectives in " + num(s.groupsChecked) + " groups, "
        + num(s.p2pMatched) + " send/recv pairs matched\n";
    out += "\n"
        + findingsText(s.findings, s.count(FindingSeverity::Error), s.count(FindingSeverity::Warning),
            s.count(FindingSeverity::Note));
    return out;
}

} // namespace stagecraft
