// SPDX-License-Identifier: MIT
// One rank file: statistics and checks node by node as the records stream in, then the whole-graph checks
// (duplicate ids, dangling dependencies, cycles, issue order) and the as-soon-as-ready replay's findings.
#include "chakra/inspectinternal.h"

#include <functional>
#include <limits>
#include <queue>

namespace stagecraft::inspect {

namespace {
    std::string nodeRef(const ChakraNode& n)
    {
        return "node " + std::to_string(n.id);
    }

    std::string nodeLabel(const ChakraNode& n)
    {
        std::string s = "node " + std::to_string(n.id);
        if (!n.name.empty())
            s += " (" + n.name + ")";
        return s;
    }
    int64_t saturatingAdd(int64_t a, int64_t b, bool* overflow)
    {
        int64_t r = 0;
        if (__builtin_add_overflow(a, b, &r)) {
            *overflow = true;
            return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
        }
        return r;
    }

    uint64_t saturatingAddU(uint64_t a, uint64_t b, bool* overflow)
    {
        uint64_t r = 0;
        if (__builtin_add_overflow(a, b, &r)) {
            *overflow = true;
            return std::numeric_limits<uint64_t>::max();
        }
        return r;
    }

    // Attributes that simulators read, with the oneof member of spec §5.2 and what ASTRA-sim HEAD accepts.
    enum class Accept
    {
        Integer, ///< any integer kind (incl. bool) converts
        String, ///< only string_val
        BoolList, ///< only bool_list
        TensorList, ///< string_list, or no value
    };
    struct AttrRule
    {
        ChakraAttrKind canonical;
        Accept accept;
        bool simulatorReads; ///< false: informational only (wrong kind is a warning, not an error)
    };

    const AttrRule* attrRule(std::string_view name)
    {
        static const std::unordered_map<std::string_view, AttrRule> rules = {
            { "is_cpu_op", { ChakraAttrKind::Bool, Accept::Integer, true } },
            { "num_ops", { ChakraAttrKind::Int64, Accept::Integer, true } },
            { "tensor_size", { ChakraAttrKind::Uint64, Accept::Integer, true } },
            { "comm_type", { ChakraAttrKind::Int64, Accept::Integer, true } },
            { "comm_size", { ChakraAttrKind::Int64, Accept::Integer, true } },
            { "comm_src", { ChakraAttrKind::Int32, Accept::Integer, true } },
            { "comm_dst", { ChakraAttrKind::Int32, Accept::Integer, true } },
            { "comm_tag", { ChakraAttrKind::Int32, Accept::Integer, true } },
            { "comm_priority", { ChakraAttrKind::Int32, Accept::Integer, true } },
            { "pg_name", { ChakraAttrKind::String, Accept::String, true } },
            { "involved_dim", { ChakraAttrKind::BoolList, Accept::BoolList, true } },
            { "inputs", { ChakraAttrKind::StringList, Accept::TensorList, true } },
            { "outputs", { ChakraAttrKind::StringList, Accept::TensorList, true } },
            { "op_type", { ChakraAttrKind::String, Accept::String, false } },
        };
        const auto it = rules.find(name);
        return it == rules.end() ? nullptr : &it->second;
    }

    bool accepted(const AttrRule& rule, ChakraAttrKind kind)
    {
        switch (rule.accept) {
        case Accept::Integer:
            return chakraAttrKindIsInteger(kind);
        case Accept::String:
            return kind == ChakraAttrKind::String;
        case Accept::BoolList:
            return kind == ChakraAttrKind::BoolList;
        case Accept::TensorList:
            return kind == ChakraAttrKind::StringList || kind == ChakraAttrKind::None;
        }
        return false;
    }

    /// ready set in ascending id order), iterative throughout.
    struct Graph
    {
        std::vector<uint32_t> issueOrder; ///< node indices that can run, in issue order
        std::vector<uint32_t> childCount;
    };

    Graph analyzeGraph(const NodeTable& t, TraceSummary& s, Findings& findings)
    {
        const size_t n = t.size();
        Graph g;
        g.childCount.assign(n, 0);
        auto ref = [&](size_t i) { return "node " + std::to_string(t.ids[i]); };

        std::unordered_map<uint64_t, uint32_t> indexOf;
        indexOf.reserve(n);
        bool allBelowN = true;
        for (size_t i = 0; i < n; ++i) {
            const uint64_t id = t.ids[i];
            if (id >= n)
                allBelowN = false;
            auto [it, inserted] = indexOf.try_emplace(id, static_cast<uint32_t>(i));
            if (!inserted) {
                ++s.duplicateIds;
                const size_t first = it->second;
                findings.add(
                    FindingSeverity::Error, "duplicate-id", {}, 1, [&] { return ref(i); },
                    [&] {
                        return "node id " + std::to_string(id) + " appears at node positions " + std::to_string(first)
                            + " and " + std::to_string(i) + " (ASTRA-sim keeps the last record and drops the others)";
                    });
            }
        }
        s.denseIds = allBelowN && s.duplicateIds == 0;

        // Edges parent -> child, deps resolved to the first record of an id.
        std::vector<uint32_t> indegree(n, 0);
        std::vector<uint32_t> edgeParent;
        std::vector<uint32_t> edgeChild;
        edgeParent.reserve(t.deps.size());
        edgeChild.reserve(t.deps.size());
        bool topological = true;
        for (size_t i = 0; i < n; ++i) {
            for (uint64_t k = t.depStart[i]; k < t.depStart[i + 1]; ++k) {
                const uint64_t dep = t.deps[k];
                const auto it = indexOf.find(dep);
                if (it == indexOf.end()) {
                    ++s.danglingDeps;
                    findings.add(
                        FindingSeverity::Error, "dangling-dep", {}, 1,
                        [&] { return ref(i) + " -> " + std::to_string(dep); },
                        [&] {
                            return ref(i) + " depends on id " + std::to_string(dep)
                                + ", which is not in the file (ASTRA-sim aborts at load)";
                        });
                    continue;
                }
                const uint32_t parent = it->second;
                if (parent >= i)
                    topological = false;
                edgeParent.push_back(parent);
                edgeChild.push_back(static_cast<uint32_t>(i));
                ++indegree[i];
                ++g.childCount[parent];
            }
        }
        s.topologicalOrder = topological;

        // CSR children lists.
        std::vector<size_t> childStart(n + 1, 0);
        for (uint32_t p : edgeParent)
            ++childStart[p + 1];
        for (size_t i = 0; i < n; ++i)
            childStart[i + 1] += childStart[i];
        std::vector<uint32_t> children(edgeParent.size());
        {
            std::vector<size_t> fill(childStart.begin(), childStart.end() - 1);
            for (size_t e = 0; e < edgeParent.size(); ++e)
                children[fill[edgeParent[e]]++] = edgeChild[e];
        }
        std::vector<uint32_t>().swap(edgeParent);
        std::vector<uint32_t>().swap(edgeChild);

        using Item = std::pair<uint64_t, uint32_t>; // (id, index)
        std::priority_queue<Item, std::vector<Item>, std::greater<>> ready;
        for (size_t i = 0; i < n; ++i) {
            if (indegree[i] == 0) {
                ++s.roots;
                ready.emplace(t.ids[i], static_cast<uint32_t>(i));
            }
        }
        std::vector<uint64_t> depth(n, 1);
        std::vector<char> done(n, 0);
        g.issueOrder.reserve(n);
        uint64_t longest = 0;
        while (!ready.empty()) {
            const uint32_t i = ready.top().second;
            ready.pop();
            done[i] = 1;
            g.issueOrder.push_back(i);
            longest = std::max(longest, depth[i]);
            for (size_t e = childStart[i]; e < childStart[i + 1]; ++e) {
                const uint32_t c = children[e];
                depth[c] = std::max(depth[c], depth[i] + 1);
                if (--indegree[c] == 0)
                    ready.emplace(t.ids[c], c);
            }
        }
        s.nodesOnOrBehindCycles = n - g.issueOrder.size();
        s.acyclic = s.nodesOnOrBehindCycles == 0;
        s.longestPathNodes = s.acyclic ? longest : 0;

        if (!s.acyclic) {
            // Every node left over has a left-over parent, so walking up parents must revisit a node.
            uint32_t start = 0;
            while (done[start])
                ++start;
            std::vector<int64_t> posInPath(n, -1);
            std::vector<uint32_t> path;
            uint32_t cur = start;
            while (posInPath[cur] < 0) {
                posInPath[cur] = static_cast<int64_t>(path.size());
                path.push_back(cur);
                for (uint64_t k = t.depStart[cur]; k < t.depStart[cur + 1]; ++k) {
                    const auto it = indexOf.find(t.deps[k]);
                    if (it != indexOf.end() && !done[it->second]) {
                        cur = it->second;
                        break;
                    }
                }
            }
            std::vector<uint32_t> cycle(path.begin() + posInPath[cur], path.end());
            std::reverse(cycle.begin(), cycle.end()); // parent -> child order
            std::rotate(cycle.begin(),
                std::min_element(
                    cycle.begin(), cycle.end(), [&](uint32_t a, uint32_t b) { return t.ids[a] < t.ids[b]; }),
                cycle.end()); // start at the smallest id, so the text does not depend on where the walk began
            std::string text;
            for (size_t k = 0; k < cycle.size() && k < 8; ++k)
                text += std::to_string(t.ids[cycle[k]]) + " -> ";
            text += cycle.size() > 8 ? "..." : std::to_string(t.ids[cycle.front()]);
            const std::string msg = std::to_string(s.nodesOnOrBehindCycles)
                + " nodes are on or behind a dependency cycle and never run, e.g. the cycle " + text
                + (s.roots == 0 ? " (no node is free of dependencies: ASTRA-sim aborts at load)"
                                : " (ASTRA-sim silently skips them and reports the rank finished early)");
            findings.add(
                FindingSeverity::Error, "cycle", {}, s.nodesOnOrBehindCycles, [&] { return ref(cycle.front()); },
                [&] { return msg; });
        }
        return g;
    }

    void checkAttributes(const ChakraNode& node, Findings& findings)
    {
        const auto& attrs = node.attrs;
        for (size_t k = 0; k < attrs.size(); ++k) {
            const ChakraAttribute& a = attrs[k];
            for (size_t m = 0; m < k; ++m) {
                if (attrs[m].name == a.name) {
                    findings.add(
                        FindingSeverity::Warning, "duplicate-attr", a.name, 1, [&] { return nodeRef(node); },
                        [&] {
                            return nodeLabel(node) + " has attribute '" + a.name
                                + "' more than once (ASTRA-sim reads the first, the legacy feeder the last)";
                        });
                    break;
                }
            }
            const AttrRule* rule = attrRule(a.name);
            if (!rule || a.kind == rule->canonical)
                continue;
            if (accepted(*rule, a.kind)) {
                if (a.kind == ChakraAttrKind::None)
                    continue; // an empty inputs/outputs list is allowed (spec §5.2)
                findings.add(
                    FindingSeverity::Warning, "noncanonical-attr-kind", a.name, 1, [&] { return nodeRef(node); },
                    [&] {
                        return "attribute '" + a.name + "' is " + chakraAttrKindName(a.kind) + ", canonical is "
                            + chakraAttrKindName(rule->canonical) + " (first on " + nodeLabel(node)
                            + "); ASTRA-sim HEAD converts it, legacy Chakra feeders read "
                            + (a.kind == ChakraAttrKind::None ? "nothing" : "0/false") + " instead";
                    });
            } else {
                findings.add(
                    rule->simulatorReads ? FindingSeverity::Error : FindingSeverity::Warning, "attr-kind", a.name, 1,
                    [&] { return nodeRef(node); },
                    [&] {
                        return "attribute '" + a.name + "' is " + chakraAttrKindName(a.kind) + " on " + nodeLabel(node)
                            + "; expected " + chakraAttrKindName(rule->canonical)
                            + (rule->simulatorReads ? " (ASTRA-sim throws on this kind)" : "");
                    });
            }
        }
    }

    void requireAttr(const ChakraNode& node, const char* name, Findings& findings)
    {
        if (node.attr(name))
            return;
        findings.add(
            FindingSeverity::Error, "missing-attr", name, 1, [&] { return nodeRef(node); },
            [&] {
                return chakraNodeTypeName(node.type) + " " + nodeLabel(node) + " lacks the required attribute '" + name
                    + "' (ASTRA-sim throws)";
            });
    }

    void checkNotCpu(const ChakraNode& node, Findings& findings)
    {
        if (node.boolAttr("is_cpu_op").value_or(false)) {
            findings.add(
                FindingSeverity::Error, "comm-cpu-op", {}, 1, [&] { return nodeRef(node); },
                [&] { return "communication " + nodeLabel(node) + " has is_cpu_op = true (ASTRA-sim throws)"; });
        }
    }

    /// inputs/outputs string lists: even length, plain integer sizes, each tensor written once per rank.
    void checkTensorList(
        const ChakraNode& node, const char* name, std::unordered_set<std::string>* written, Findings& findings)
    {
        const ChakraAttribute* a = node.attr(name);
        const auto* list = a ? a->stringListValue() : nullptr;
        if (!list)
            return;
        if (list->size() % 2 != 0) {
            findings.add(
                FindingSeverity::Warning, "io-odd-length", name, 1, [&] { return nodeRef(node); },
                [&] {
                    return "'" + std::string(name) + "' of " + nodeLabel(node) + " has " + std::to_string(list->size())
                        + " entries; it must be name/size pairs (track-local-mem fails)";
                });
            return;
        }
        bool sizeReported = false;
        for (size_t k = 0; k + 1 < list->size(); k += 2) {
            const std::string& size = (*list)[k + 1];
            if (!sizeReported && !isDecimal(size)) {
                sizeReported = true;
                findings.add(
                    FindingSeverity::Warning, "io-size-not-integer", name, 1, [&] { return nodeRef(node); },
                    [&] {
                        return "tensor sizes in '" + std::string(name) + "' are not plain integers, e.g. \"" + size
                            + "\" on " + nodeLabel(node) + " (ASTRA-sim parses leading digits only)";
                    });
            }
            if (written && !written->insert((*list)[k]).second) {
                findings.add(
                    FindingSeverity::Warning, "tensor-written-twice", {}, 1, [&] { return nodeRef(node); },
                    [&] {
                        return "tensor '" + (*list)[k] + "' is written again by " + nodeLabel(node)
                            + " (ASTRA-sim's track-local-mem aborts on a second write)";
                    });
            }
        }
    }

    void checkNode(const ChakraNode& node, TraceSummary& s, NodeStats& st, std::unordered_set<std::string>& written,
        Findings& findings)
    {
        checkAttributes(node, findings);
        checkTensorList(node, "inputs", nullptr, findings);
        checkTensorList(node, "outputs", &written, findings);
        switch (node.type) {
        case ChakraNodeType::Comp: {
            const auto opType = node.stringAttr("op_type").value_or(std::string());
            auto& t = st.compute[opType];
            t.opType = opType;
            ++t.nodes;
            const auto numOps = node.intAttr("num_ops");
            const auto tensorSize = node.uintAttr("tensor_size");
            if (numOps) {
                if (*numOps <= 0 && tensorSize && node.durationMicros == 0) {
                    findings.add(
                        FindingSeverity::Error, "num-ops-not-positive", {}, 1, [&] { return nodeRef(node); },
                        [&] {
                            return nodeLabel(node) + " has num_ops " + std::to_string(*numOps)
                                + ": ASTRA-sim's roofline times it as " + (*numOps == 0 ? "0/0" : "negative")
                                + ", the node never completes and no rank finishes (count a memory-bound op's "
                                  "element operations)";
                        });
                } else if (*numOps < 0) {
                    findings.add(
                        FindingSeverity::Error, "negative-num-ops", {}, 1, [&] { return nodeRef(node); },
                        [&] { return nodeLabel(node) + " has num_ops " + std::to_string(*numOps); });
                }
                t.numOps = saturatingAdd(t.numOps, *numOps, &st.numOpsOverflow);
                s.totalNumOps = saturatingAdd(s.totalNumOps, *numOps, &st.numOpsOverflow);
            }
            if (tensorSize) {
                t.tensorSize = saturatingAddU(t.tensorSize, *tensorSize, &st.sizeOverflow);
                s.totalTensorSize = saturatingAddU(s.totalTensorSize, *tensorSize, &st.sizeOverflow);
            }
            t.durationMicros = saturatingAddU(t.durationMicros, node.durationMicros, &st.sizeOverflow);
            const bool roofline = numOps && tensorSize;
            if (!roofline && node.durationMicros == 0) {
                findings.add(
                    FindingSeverity::Warning, "comp-no-cost", {}, 1, [&] { return nodeRef(node); },
                    [&] {
                        return "compute " + nodeLabel(node)
                            + " has neither duration_micros nor both num_ops and tensor_size (simulated as 1 ns)";
                    });
            } else if (!roofline) {
                findings.add(
                    FindingSeverity::Note, "comp-no-roofline", {}, 1, [&] { return nodeRef(node); },
                    [&] {
                        return "compute nodes without num_ops and tensor_size, e.g. " + nodeLabel(node)
                            + " (only duration replay works; roofline mode throws)";
                    });
            } else if (node.durationMicros == 0) {
                findings.add(
                    FindingSeverity::Note, "comp-no-duration", {}, 1, [&] { return nodeRef(node); },
                    [&] {
                        return "compute nodes carry no duration_micros, e.g. " + nodeLabel(node)
                            + " (simulate with \"roofline-enabled\": 1, else each takes 1 ns)";
                    });
            }
            break;
        }
        case ChakraNodeType::CommColl: {
            checkNotCpu(node, findings);
            requireAttr(node, "comm_type", findings);
            requireAttr(node, "comm_size", findings);
            const auto type = node.intAttr("comm_type");
            const auto size = node.intAttr("comm_size");
            if (type) {
                if (*type == 5) {
                    findings.add(
                        FindingSeverity::Warning, "broadcast-replayed", {}, 1, [&] { return nodeRef(node); },
                        [&] {
                            return "BROADCAST " + nodeLabel(node)
                                + " is not simulated as traffic; ASTRA-sim replays its duration_micros";
                        });
                } else if (*type != 0 && *type != 2 && *type != 6 && *type != 7) {
                    findings.add(
                        FindingSeverity::Error, "unsupported-collective", chakraCollectiveName(*type), 1,
                        [&] { return nodeRef(node); },
                        [&] {
                            return nodeLabel(node) + " uses " + chakraCollectiveName(*type)
                                + ", which ASTRA-sim does not support (it aborts)";
                        });
                }
            }
            if (size && *size <= 0) {
                const bool allGather = type && *type == 2;
                findings.add(
                    allGather ? FindingSeverity::Error : FindingSeverity::Warning,
                    allGather ? "allgather-size" : "comm-size-nonpositive", {}, 1, [&] { return nodeRef(node); },
                    [&] {
                        return nodeLabel(node) + " has comm_size " + std::to_string(*size)
                            + (allGather ? " on an ALL_GATHER (ASTRA-sim loops forever)"
                                         : " (ASTRA-sim silently raises it to a small transfer)");
                    });
            }
            std::string pg;
            if (const ChakraAttribute* a = node.attr("pg_name"); a && a->stringValue())
                pg = *a->stringValue();
            if (pg.empty() || pg == "0") {
                findings.add(
                    FindingSeverity::Note, "world-group", {}, 1, [&] { return nodeRef(node); },
                    [&] {
                        return "collectives without a pg_name (or \"0\") run on the world group of all ranks, e.g. "
                            + nodeLabel(node);
                    });
                pg.clear();
            } else if (!isDecimal(pg)) {
                findings.add(
                    FindingSeverity::Warning, "pg-name-not-decimal", {}, 1, [&] { return nodeRef(node); },
                    [&] {
                        return "pg_name \"" + pg + "\" of " + nodeLabel(node)
                            + " is not a decimal group id (ASTRA-sim looks it up in the group JSON)";
                    });
            }
            const int64_t t = type.value_or(-1);
            auto& c = st.collectives[{ t, pg }];
            c.commType = t;
            c.pgName = pg;
            ++c.count;
            c.totalCommSize = saturatingAdd(c.totalCommSize, size.value_or(0), &st.sizeOverflow);
            break;
        }
        case ChakraNodeType::CommSend:
            checkNotCpu(node, findings);
            requireAttr(node, "comm_dst", findings);
            requireAttr(node, "comm_size", findings);
            requireAttr(node, "comm_tag", findings);
            ++s.p2p.sends;
            s.p2p.sendSize = saturatingAdd(s.p2p.sendSize, node.intAttr("comm_size").value_or(0), &st.sizeOverflow);
            break;
        case ChakraNodeType::CommRecv:
            checkNotCpu(node, findings);
            requireAttr(node, "comm_src", findings);
            requireAttr(node, "comm_size", findings);
            requireAttr(node, "comm_tag", findings);
            ++s.p2p.recvs;
            s.p2p.recvSize = saturatingAdd(s.p2p.recvSize, node.intAttr("comm_size").value_or(0), &st.sizeOverflow);
            break;
        case ChakraNodeType::MemLoad:
        case ChakraNodeType::MemStore:
            requireAttr(node, "tensor_size", findings);
            findings.add(
                FindingSeverity::Warning, "mem-node", {}, 1, [&] { return nodeRef(node); },
                [&] {
                    return "memory " + nodeLabel(node)
                        + " needs a remote-memory model in ASTRA-sim (NO_MEMORY_EXPANSION exits)";
                });
            break;
        case ChakraNodeType::Metadata:
            findings.add(
                FindingSeverity::Error, "metadata-node", {}, 1, [&] { return nodeRef(node); },
                [&] { return "METADATA_NODE " + nodeLabel(node) + " makes ASTRA-sim's statistics layer abort"; });
            break;
        case ChakraNodeType::Invalid:
            break; // needs the child count: judged in TraceInspector::finish()
        default:
            findings.add(
                FindingSeverity::Error, "unknown-node-type", {}, 1, [&] { return nodeRef(node); },
                [&] { return nodeLabel(node) + " has type " + chakraNodeTypeName(node.type) + ", not in the schema"; });
            break;
        }
    }
} // namespace

TraceInspector::TraceInspector(std::string source, bool forSet)
    : m_forSet(forSet)
{
    m_s.source = std::move(source);
}

bool TraceInspector::onMetadata(ChakraMetadata&& metadata, const ChakraRecordInfo&)
{
    addMetadata(metadata);
    return true;
}

bool TraceInspector::onNode(ChakraNode&& node, const ChakraRecordInfo&)
{
    addNode(node);
    return true;
}

void TraceInspector::addMetadata(const ChakraMetadata& metadata)
{
    m_s.version = metadata.version;
    if (const ChakraAttribute* a = metadata.attr("peak_memory_bytes"))
        m_replay.setStatedPeak(a->toInt64());
    if (const ChakraAttribute* a = metadata.attr("schema"); a && a->stringValue())
        m_s.schema = *a->stringValue();
    if (metadata.version.empty()) {
        m_findings.add(FindingSeverity::Warning, "version-empty", {},
            "GlobalMetadata.version is empty (Chakra's generator writes e.g. \"0.0.4\"; ASTRA-sim does not "
            "check it)");
    }
    for (const auto& a : metadata.attrs) {
        if (a.name == "schema" && a.kind != ChakraAttrKind::String) {
            m_findings.add(FindingSeverity::Warning, "attr-kind", "schema",
                "GlobalMetadata attribute 'schema' is " + chakraAttrKindName(a.kind) + ", expected string_val");
        }
    }
}

void TraceInspector::addNode(const ChakraNode& node)
{
    const auto index = static_cast<uint32_t>(m_table.size());
    m_table.add(node);
    m_replay.add(node);
    m_s.dataDepEdges += node.dataDeps.size();
    m_s.ctrlDepEdges += node.ctrlDeps.size();
    ++m_s.nodesByType[static_cast<int32_t>(node.type)];
    checkNode(node, m_s, m_stats, m_written, m_findings);
    if (node.type == ChakraNodeType::Invalid)
        m_invalid.push_back(index);
    m_withInputs += node.attr("inputs") ? 1 : 0;
    m_withOutputs += node.attr("outputs") ? 1 : 0;
    if (!node.ctrlDeps.empty()) {
        m_findings.add(
            FindingSeverity::Note, "ctrl-deps", {}, 1, [&] { return nodeRef(node); },
            [&] {
                return "nodes with ctrl_deps, e.g. " + nodeLabel(node)
                    + " (ASTRA-sim HEAD waits for them; the legacy feeder ignores them)";
            });
    }
    if (!m_forSet)
        return;
    if (node.type == ChakraNodeType::CommColl) {
        std::string pg = node.stringAttr("pg_name").value_or(std::string());
        if (pg == "0")
            pg.clear();
        m_colls.push_back(CollRecord { index, node.intAttr("comm_type").value_or(-1),
            node.intAttr("comm_size").value_or(0), node.id, std::move(pg) });
    } else if (node.type == ChakraNodeType::CommSend || node.type == ChakraNodeType::CommRecv) {
        m_p2p.push_back(P2PRecord { node.type == ChakraNodeType::CommSend, node.id, node.intAttr("comm_src"),
            node.intAttr("comm_dst"), node.intAttr("comm_tag"), node.intAttr("comm_size") });
    }
}

TraceSummary TraceInspector::finish(const ChakraFramingInfo& framing)
{
    TraceSummary& s = m_s;
    Findings& findings = m_findings;
    s.fileBytes = framing.fileBytes;
    s.nodeCount = m_table.size();
    const uint64_t n = s.nodeCount;

    if (!framing.zeroLengthRecordOffsets.empty()) {
        findings.add(
            FindingSeverity::Error, "zero-length-record", {},
            std::max<uint64_t>(framing.zeroLengthRecords, framing.zeroLengthRecordOffsets.size()),
            [&] { return "offset " + std::to_string(framing.zeroLengthRecordOffsets.front()); },
            [&] {
                return "zero-length record at byte offset " + std::to_string(framing.zeroLengthRecordOffsets.front())
                    + " (not read as a node here; Chakra's Python reader stops there; ASTRA-sim reads an "
                      "all-default node)";
            });
    }
    if (n == 0) {
        findings.add(FindingSeverity::Error, "no-nodes", {},
            "the file holds no nodes (ASTRA-sim aborts: \"No dependancy free nodes found\"; an idle rank "
            "needs at least one node)");
    }

    Graph graph = analyzeGraph(m_table, s, findings);
    {
        std::vector<TraceFinding> replayFindings;
        const ReplaySummary replay = m_replay.finish(replayFindings);
        s.escapes = replay.escapes;
        s.unreadOutputs = replay.unreadOutputs;
        s.replayTensorPeakBytes = replay.tensorPeakBytes;
        s.statedPeakBytes = replay.statedPeakBytes;
        for (TraceFinding& f : replayFindings) {
            bool inserted = false;
            TraceFinding& into = findings.at(f.check, f.subject, f.severity, f.message, &inserted);
            into.count += f.count;
            for (std::string& e : f.examples)
                if (into.examples.size() < MaxExamples)
                    into.examples.push_back(std::move(e));
        }
    }
    for (uint32_t i : m_invalid) {
        const uint32_t children = graph.childCount[i];
        const std::string ref = "node " + std::to_string(m_table.ids[i]);
        findings.add(
            children > 0 ? FindingSeverity::Error : FindingSeverity::Warning, "invalid-node", {}, 1,
            [&] { return ref; },
            [&] {
                return "INVALID_NODE " + ref
                    + (children > 0 ? " has dependants, which ASTRA-sim never runs" : " does nothing");
            });
    }
    if ((m_withInputs > 0 && m_withInputs < n) || (m_withOutputs > 0 && m_withOutputs < n)) {
        findings.add(FindingSeverity::Warning, "io-missing", {},
            "inputs/outputs attributes are on " + std::to_string(m_withInputs) + "/" + std::to_string(m_withOutputs)
                + " of " + std::to_string(n)
                + " nodes; ASTRA-sim's track-local-mem needs them on every node (it throws)");
    }
    if (m_stats.numOpsOverflow || m_stats.sizeOverflow) {
        findings.add(FindingSeverity::Warning, "sum-overflow", {},
            "a sum of num_ops, tensor_size or comm_size exceeds 64 bits; totals are saturated");
    }
    if (n > 0 && !s.denseIds && s.duplicateIds == 0) {
        findings.add(FindingSeverity::Note, "ids-not-dense", {},
            "node ids are not exactly 0.." + std::to_string(n - 1) + " (allowed; Stagecraft writes dense ids)");
    }
    if (!s.topologicalOrder) {
        findings.add(FindingSeverity::Note, "not-topological", {},
            "some dependency names a node that comes later in the file (allowed: readers build the graph "
            "from ids)");
    }
    if (framing.recordsWithUnknownFields > 0) {
        findings.add(FindingSeverity::Note, "unknown-fields", {},
            std::to_string(framing.recordsWithUnknownFields)
                + " records carry fields that this schema does not define (ignored)");
    }

    for (auto& entry : m_stats.compute)
        s.compute.push_back(entry.second);
    for (auto& entry : m_stats.collectives)
        s.collectives.push_back(entry.second);
    sortCollectives(s.collectives);
    s.findings = findings.take();
    m_issueOrder = std::move(graph.issueOrder);
    return std::move(s);
}

std::vector<CollRecord> TraceInspector::collectivesInIssueOrder()
{
    std::vector<int64_t> rank(m_table.size(), -1);
    for (size_t k = 0; k < m_issueOrder.size(); ++k)
        rank[m_issueOrder[k]] = static_cast<int64_t>(k);
    std::vector<CollRecord> out;
    for (auto& c : m_colls) {
        if (rank[c.index] >= 0)
            out.push_back(std::move(c));
    }
    std::sort(out.begin(), out.end(),
        [&](const CollRecord& a, const CollRecord& b) { return rank[a.index] < rank[b.index]; });
    return out;
}

} // namespace stagecraft::inspect
