// SPDX-License-Identifier: MIT
// JSON and text renderings of inspect's summaries.
#include "chakra/inspectinternal.h"

#include <nlohmann/json.hpp>

namespace stagecraft {

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
        ranks.push_back(std::move(o));
    }
    j["ranks"] = std::move(ranks);
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

std::string summaryToText(const TraceSetSummary& s)
{
    std::string out;
    out += "trace set: " + (s.directory / (s.prefix + ".<rank>.et")).string() + ", " + std::to_string(s.worldSize)
        + " ranks\n";
    out += "groups: "
        + (s.groupsFile.empty() ? std::string("(no ") + s.prefix + ".json)"
                                : s.groupsFile.filename().string() + ", " + std::to_string(s.groups.size()) + " groups")
        + "\n";
    Table ranks({ "rank", "bytes", "nodes", "errors", "warnings" }, { false, false, false, false, false });
    for (const auto& r : s.ranks) {
        ranks.add({ std::to_string(r.rank), r.readError.empty() ? num(r.fileBytes) : "unreadable", num(r.nodes),
            num(uint64_t(r.errors)), num(uint64_t(r.warnings)) });
    }
    out += ranks.render();
    if (!s.collectives.empty()) {
        out += "\ncollectives (all ranks):\n";
        Table t({ "comm_type", "pg_name", "count", "total comm_size" }, { true, true, false, false });
        for (const auto& c : s.collectives)
            t.add({ chakraCollectiveName(c.commType), c.pgName.empty() ? "(world)" : c.pgName, num(c.count),
                num(c.totalCommSize) });
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
