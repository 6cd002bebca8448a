// SPDX-License-Identifier: MIT
#include "chakra/chakrainspect.h"

#include "chakra/chakrareader.h"
#include "chakra/chakrareplay.h"

#include <algorithm>
#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <queue>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

namespace stagecraft {

const char* findingSeverityName(FindingSeverity severity)
{
    switch (severity) {
    case FindingSeverity::Error:
        return "error";
    case FindingSeverity::Warning:
        return "warning";
    case FindingSeverity::Note:
        return "note";
    }
    return "note";
}

size_t TraceSummary::count(FindingSeverity severity) const
{
    return static_cast<size_t>(
        std::count_if(findings.begin(), findings.end(), [severity](const auto& f) { return f.severity == severity; }));
}

size_t TraceSetSummary::count(FindingSeverity severity) const
{
    return static_cast<size_t>(
        std::count_if(findings.begin(), findings.end(), [severity](const auto& f) { return f.severity == severity; }));
}

namespace {
    constexpr size_t MaxExamples = 5;

    /// Aggregates findings by (check, subject); messages and examples are built only when kept.
    class Findings
    {
    public:
        template <typename MakeExample, typename MakeMessage>
        void add(FindingSeverity severity, const std::string& check, const std::string& subject, uint64_t n,
            MakeExample&& makeExample, MakeMessage&& makeMessage)
        {
            const std::string key = check + '\x1f' + subject;
            auto [it, inserted] = m_index.try_emplace(key, m_items.size());
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

        void add(FindingSeverity severity, const std::string& check, const std::string& subject,
            const std::string& message, const std::string& example = {})
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

        TraceFinding* find(const std::string& check, const std::string& subject)
        {
            const auto it = m_index.find(check + '\x1f' + subject);
            return it == m_index.end() ? nullptr : &m_items[it->second];
        }

        /// Direct access for merging (set level).
        TraceFinding& at(const std::string& check, const std::string& subject, FindingSeverity severity,
            const std::string& message, bool* inserted)
        {
            const std::string key = check + '\x1f' + subject;
            auto [it, ins] = m_index.try_emplace(key, m_items.size());
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
        std::unordered_map<std::string, size_t> m_index;
        std::vector<TraceFinding> m_items;
    };

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

    bool isDecimal(std::string_view s)
    {
        return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
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

    /// Dependency graph of one trace: Kahn's algorithm with a min-id ready queue (ASTRA-sim scans its
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

    struct NodeStats
    {
        std::map<std::string, OpTypeTotals> compute;
        std::map<std::pair<int64_t, std::string>, CollectiveTotals> collectives;
        bool numOpsOverflow = false;
        bool sizeOverflow = false;
    };

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

    /// Orders pg names numerically when both are decimal, else textually.
    bool pgLess(const std::string& a, const std::string& b)
    {
        if (isDecimal(a) && isDecimal(b) && a.size() != b.size())
            return a.size() < b.size();
        return a < b;
    }

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
        TraceInspector(std::string source, bool forSet)
            : m_forSet(forSet)
        {
            m_s.source = std::move(source);
        }

        bool onMetadata(ChakraMetadata&& metadata, const ChakraRecordInfo&) override
        {
            addMetadata(metadata);
            return true;
        }
        bool onNode(ChakraNode&& node, const ChakraRecordInfo&) override
        {
            addNode(node);
            return true;
        }

        void addMetadata(const ChakraMetadata& metadata)
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

        void addNode(const ChakraNode& node)
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

        /// Runs the whole-graph checks. `framing` describes the file (empty for an in-memory trace).
        TraceSummary finish(const ChakraFramingInfo& framing)
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
                        return "zero-length record at byte offset "
                            + std::to_string(framing.zeroLengthRecordOffsets.front())
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
                    "inputs/outputs attributes are on " + std::to_string(m_withInputs) + "/"
                        + std::to_string(m_withOutputs) + " of " + std::to_string(n)
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
            std::sort(s.collectives.begin(), s.collectives.end(), [](const auto& a, const auto& b) {
                if (a.commType != b.commType)
                    return a.commType < b.commType;
                return pgLess(a.pgName, b.pgName);
            });
            s.findings = findings.take();
            m_issueOrder = std::move(graph.issueOrder);
            return std::move(s);
        }

        /// After finish(): the collectives in issue order (dependency order, ties by ascending id); nodes
        /// that can never run are left out.
        std::vector<CollRecord> collectivesInIssueOrder()
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
} // namespace

TraceSummary inspectTrace(const ChakraTrace& trace, std::string source)
{
    TraceInspector inspector(std::move(source), false);
    inspector.addMetadata(trace.metadata);
    for (const auto& node : trace.nodes)
        inspector.addNode(node);
    return inspector.finish(trace.framing);
}

TraceSummary inspectTraceFile(const std::filesystem::path& path, std::string* readError)
{
    TraceInspector inspector(path.string(), false);
    const ChakraReadStatus status = visitChakraFile(path, inspector);
    TraceSummary s = inspector.finish(status.framing);
    if (readError)
        *readError = status.error;
    if (!status.ok()) {
        TraceFinding f;
        f.severity = FindingSeverity::Error;
        f.check = "read-error";
        f.message = status.error + " (the statistics cover the records before it)";
        f.count = 1;
        s.findings.insert(s.findings.begin(), std::move(f));
    }
    return s;
}

// ------------------------------------------------------------------------------------------------------------
// Trace sets

namespace {
    struct CollOp
    {
        int64_t type;
        int64_t size;
        uint64_t id;
    };

    struct P2PEnds
    {
        uint64_t sends = 0;
        uint64_t recvs = 0;
        std::string firstSend;
        std::string firstRecv;
    };

    using P2PKey = std::tuple<int64_t, int64_t, int64_t, int64_t>; // src, dst, tag, size

    std::string describeOp(int rank, const CollOp& op)
    {
        return "rank " + std::to_string(rank) + " node " + std::to_string(op.id) + " " + chakraCollectiveName(op.type)
            + " comm_size " + std::to_string(op.size);
    }

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

    std::string groupLabel(const std::string& key, const std::vector<int>& members)
    {
        return (key.empty() ? std::string("world group") : "group " + key) + " " + rankList(members);
    }
} // namespace

TraceSetSummary inspectTraceSet(const std::filesystem::path& directory, const std::string& prefixArg)
{
    TraceSetSummary set;
    set.directory = directory;
    Findings findings;
    auto finish = [&] {
        set.findings = findings.take();
        return set;
    };

    // 1. Discover <prefix>.<rank>.et.
    std::map<std::string, std::map<int, std::filesystem::path>> byPrefix;
    std::error_code ec;
    std::filesystem::directory_iterator it(directory, ec);
    if (ec) {
        findings.add(
            FindingSeverity::Error, "no-trace-set", {}, "cannot list '" + directory.string() + "': " + ec.message());
        return finish();
    }
    static const std::regex rankFile(R"(^(.+)\.(0|[1-9][0-9]{0,8})\.et$)");
    for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
        if (ec)
            break;
        const std::string name = it->path().filename().string();
        std::smatch m;
        if (!std::regex_match(name, m, rankFile))
            continue;
        byPrefix[m[1].str()][std::stoi(m[2].str())] = it->path();
    }
    if (!prefixArg.empty()) {
        set.prefix = prefixArg;
    } else if (byPrefix.size() == 1) {
        set.prefix = byPrefix.begin()->first;
    } else if (byPrefix.size() > 1) {
        std::string names;
        for (const auto& [p, _] : byPrefix)
            names += (names.empty() ? "" : ", ") + p;
        findings.add(FindingSeverity::Error, "ambiguous-prefix", {},
            "'" + directory.string() + "' holds several trace sets (" + names + "); name one");
        return finish();
    }
    const auto found = byPrefix.find(set.prefix);
    if (found == byPrefix.end() || found->second.empty()) {
        findings.add(FindingSeverity::Error, "no-trace-set", {},
            "no <prefix>.<rank>.et files" + (set.prefix.empty() ? std::string() : " for prefix '" + set.prefix + "'")
                + " in '" + directory.string() + "'");
        return finish();
    }
    const auto& files = found->second;
    set.worldSize = files.rbegin()->first + 1;
    for (int r = 0; r < set.worldSize; ++r) {
        if (!files.count(r)) {
            findings.add(
                FindingSeverity::Error, "missing-rank", {}, 1, [&] { return "rank " + std::to_string(r); },
                [&] {
                    return "rank file " + set.prefix + "." + std::to_string(r) + ".et is missing (ranks found up to "
                        + std::to_string(set.worldSize - 1) + "; ASTRA-sim exits)";
                });
        }
    }
    if (set.worldSize < 2) {
        findings.add(FindingSeverity::Warning, "single-rank", {},
            "a single rank cannot be simulated with ASTRA-sim's analytical network (it needs at least 2)");
    }

    // 2. Communicator groups.
    std::map<std::string, std::vector<int>> groupsByKey;
    const std::filesystem::path groupsPath = directory / (set.prefix + ".json");
    if (std::filesystem::exists(groupsPath, ec)) {
        set.groupsFile = groupsPath;
        std::ifstream in(groupsPath, std::ios::binary);
        std::stringstream text;
        text << in.rdbuf();
        const nlohmann::json doc = nlohmann::json::parse(text.str(), nullptr, false);
        if (doc.is_discarded() || !doc.is_object()) {
            findings.add(FindingSeverity::Error, "groups-json-invalid", {},
                groupsPath.string() + " is not a JSON object of communicator groups");
        } else {
            for (const auto& item : doc.items()) {
                // Named variables, not structured bindings: clang 14 cannot capture those in lambdas.
                const std::string key = item.key();
                const auto& value = item.value();
                const auto bad = [&](const std::string& why) {
                    findings.add(
                        FindingSeverity::Error, "groups-json-invalid", {}, 1, [&] { return "group " + key; },
                        [&] { return groupsPath.string() + ": group \"" + key + "\" " + why; });
                };
                if (!isDecimal(key) || key.size() > 9 || std::stoi(key) <= 0) {
                    bad("has a key that is not a decimal id > 0");
                    continue;
                }
                if (!value.is_array()) {
                    bad("is not an array of ranks");
                    continue;
                }
                std::vector<int> members;
                bool ok = true;
                for (const auto& v : value) {
                    if (!v.is_number_integer() || v.get<int64_t>() < 0
                        || v.get<int64_t>() > std::numeric_limits<int32_t>::max()) {
                        ok = false;
                        break;
                    }
                    members.push_back(v.get<int>());
                }
                if (!ok) {
                    bad("lists something that is not a non-negative rank");
                    continue;
                }
                std::vector<int> sorted = members;
                std::sort(sorted.begin(), sorted.end());
                if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
                    bad("lists a rank twice");
                    continue;
                }
                if (!sorted.empty() && sorted.back() >= set.worldSize) {
                    findings.add(
                        FindingSeverity::Error, "group-rank-out-of-range", {}, 1, [&] { return "group " + key; },
                        [&] {
                            return "group " + key + " lists rank " + std::to_string(sorted.back()) + " but the set has "
                                + std::to_string(set.worldSize) + " ranks";
                        });
                }
                groupsByKey[key] = members;
                set.groups[std::stoi(key)] = members;
            }
        }
    }

    // 3. Ranks, one at a time.
    std::vector<std::map<std::string, std::vector<CollOp>>> rankColls(static_cast<size_t>(set.worldSize));
    std::vector<char> readable(static_cast<size_t>(set.worldSize), 0);
    std::map<P2PKey, P2PEnds> p2p;
    std::map<std::pair<int64_t, std::string>, CollectiveTotals> totals;
    std::map<std::pair<std::string, std::string>, std::set<int>> rankSets; // merged per-rank finding -> ranks
    for (const auto& file : files) {
        const int rank = file.first;
        const std::filesystem::path& path = file.second;
        RankInspection ri;
        ri.rank = rank;
        ri.path = path;
        TraceInspector inspector(path.filename().string(), true);
        const ChakraReadStatus status = visitChakraFile(path, inspector);
        if (!status.ok()) {
            ri.readError = status.error;
            findings.add(
                FindingSeverity::Error, "read-error", {}, 1, [&] { return "rank " + std::to_string(rank); },
                [&] { return status.error; });
            set.ranks.push_back(std::move(ri));
            continue;
        }
        readable[static_cast<size_t>(rank)] = 1;
        const TraceSummary s = inspector.finish(status.framing);
        ri.fileBytes = s.fileBytes;
        ri.nodes = s.nodeCount;
        ri.errors = s.count(FindingSeverity::Error);
        ri.warnings = s.count(FindingSeverity::Warning);
        for (const auto& c : s.collectives) {
            auto& t = totals[{ c.commType, c.pgName }];
            t.commType = c.commType;
            t.pgName = c.pgName;
            t.count += c.count;
            t.totalCommSize += c.totalCommSize;
        }

        // Merge this rank's findings, keyed by check and subject.
        for (const auto& f : s.findings) {
            bool inserted = false;
            TraceFinding& m = findings.at(
                "rank:" + f.check, f.subject, f.severity, "rank " + std::to_string(rank) + ": " + f.message, &inserted);
            if (inserted)
                m.check = f.check;
            rankSets[{ "rank:" + f.check, f.subject }].insert(rank);
            m.count += f.count;
            for (const auto& ex : f.examples) {
                if (m.examples.size() >= MaxExamples)
                    break;
                m.examples.push_back("rank " + std::to_string(rank) + ": " + ex);
            }
            if (f.examples.empty() && m.examples.size() < MaxExamples)
                m.examples.push_back("rank " + std::to_string(rank));
        }

        auto& colls = rankColls[static_cast<size_t>(rank)];
        for (CollRecord& c : inspector.collectivesInIssueOrder())
            colls[c.pg].push_back(CollOp { c.type, c.size, c.id });

        for (const P2PRecord& op : inspector.p2p()) {
            const bool isSend = op.send;
            const std::string where = "rank " + std::to_string(rank) + " node " + std::to_string(op.id);
            const auto self = isSend ? op.src : op.dst;
            if (self && *self != rank) {
                findings.add(
                    FindingSeverity::Error, isSend ? "send-src-not-self" : "recv-dst-not-self", {}, 1,
                    [&] { return where; },
                    [&] {
                        return where + ": " + (isSend ? "SEND has comm_src " : "RECV has comm_dst ")
                            + std::to_string(*self) + ", which must equal its own rank (ASTRA-sim throws)";
                    });
            }
            const auto peer = isSend ? op.dst : op.src;
            if (!peer || !op.tag || !op.size)
                continue; // reported as missing-attr by the per-rank check
            if (*peer < 0 || *peer >= set.worldSize) {
                findings.add(
                    FindingSeverity::Error, "p2p-peer-out-of-range", {}, 1, [&] { return where; },
                    [&] {
                        return where + ": peer rank " + std::to_string(*peer) + " is outside 0.."
                            + std::to_string(set.worldSize - 1);
                    });
                continue;
            }
            const P2PKey key =
                isSend ? P2PKey { rank, *peer, *op.tag, *op.size } : P2PKey { *peer, rank, *op.tag, *op.size };
            auto& ends = p2p[key];
            if (isSend) {
                if (ends.sends++ == 0)
                    ends.firstSend = where;
            } else {
                if (ends.recvs++ == 0)
                    ends.firstRecv = where;
            }
        }
        set.ranks.push_back(std::move(ri));
    }
    for (auto& entry : totals)
        set.collectives.push_back(entry.second);
    std::sort(set.collectives.begin(), set.collectives.end(), [](const auto& a, const auto& b) {
        if (a.commType != b.commType)
            return a.commType < b.commType;
        return pgLess(a.pgName, b.pgName);
    });

    // 4. Group membership and sequences.
    std::vector<int> world(static_cast<size_t>(set.worldSize));
    for (int r = 0; r < set.worldSize; ++r)
        world[static_cast<size_t>(r)] = r;
    std::set<std::string> usedKeys;
    for (int r = 0; r < set.worldSize; ++r) {
        for (const auto& entry : rankColls[static_cast<size_t>(r)]) {
            const std::string& key = entry.first;
            const auto& ops = entry.second;
            usedKeys.insert(key);
            if (key.empty())
                continue;
            const auto g = groupsByKey.find(key);
            const std::string where = "rank " + std::to_string(r) + " node " + std::to_string(ops.front().id);
            if (g == groupsByKey.end()) {
                findings.add(
                    FindingSeverity::Error, "pg-unknown", key, ops.size(), [&] { return where; },
                    [&] {
                        return where + ": pg_name \"" + key + "\" is not a group of "
                            + (set.groupsFile.empty() ? "the (missing) " + set.prefix + ".json"
                                                      : set.groupsFile.filename().string())
                            + " (ASTRA-sim: \"communicator group " + key + " not found\")";
                    });
            } else if (std::find(g->second.begin(), g->second.end(), r) == g->second.end()) {
                findings.add(
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
            const auto g = groupsByKey.find(key);
            if (g == groupsByKey.end())
                continue;
            members = &g->second;
        }
        std::vector<int> present;
        for (int m : *members) {
            if (m >= 0 && m < set.worldSize && readable[static_cast<size_t>(m)])
                present.push_back(m);
        }
        if (present.empty())
            continue;
        static const std::vector<CollOp> none;
        auto seqOf = [&](int r) -> const std::vector<CollOp>& {
            const auto& colls = rankColls[static_cast<size_t>(r)];
            const auto f = colls.find(key);
            return f == colls.end() ? none : f->second;
        };
        if (members->size() == 1) {
            const auto& seq = seqOf(present.front());
            if (!seq.empty()) {
                findings.add(
                    FindingSeverity::Error, "singleton-collective", {}, seq.size(),
                    [&] { return describeOp(present.front(), seq.front()); },
                    [&] {
                        return describeOp(present.front(), seq.front()) + " runs on the single-member "
                            + groupLabel(key, *members) + " (ASTRA-sim never completes it)";
                    });
            }
            continue;
        }
        ++set.groupsChecked;
        const int ref = present.front();
        const auto& refSeq = seqOf(ref);
        set.collectivesChecked += refSeq.size();
        for (size_t k = 1; k < present.size(); ++k) {
            const int r = present[k];
            const auto& seq = seqOf(r);
            set.collectivesChecked += seq.size();
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
            findings.add(
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

    // 5. Send/recv pairs.
    for (const auto& entry : p2p) {
        const P2PEnds& ends = entry.second;
        const int64_t src = std::get<0>(entry.first);
        const int64_t dst = std::get<1>(entry.first);
        const int64_t tag = std::get<2>(entry.first);
        const int64_t size = std::get<3>(entry.first);
        const std::string what = "(src " + std::to_string(src) + ", dst " + std::to_string(dst) + ", tag "
            + std::to_string(tag) + ", size " + std::to_string(size) + ")";
        set.p2pMatched += std::min(ends.sends, ends.recvs);
        if (ends.sends > ends.recvs) {
            findings.add(
                FindingSeverity::Error, "send-without-recv", {}, ends.sends - ends.recvs,
                [&] { return ends.firstSend; },
                [&] {
                    return ends.firstSend + ": SEND " + what + " has no matching RECV on rank " + std::to_string(dst)
                        + " (" + std::to_string(ends.sends) + " sends, " + std::to_string(ends.recvs) + " receives)";
                });
        } else if (ends.recvs > ends.sends) {
            findings.add(
                FindingSeverity::Error, "recv-without-send", {}, ends.recvs - ends.sends,
                [&] { return ends.firstRecv; },
                [&] {
                    return ends.firstRecv + ": RECV " + what + " has no matching SEND on rank " + std::to_string(src)
                        + " (the receiver waits forever)";
                });
        }
    }

    for (const auto& [key, ranksSeen] : rankSets) {
        if (TraceFinding* f = findings.find(key.first, key.second))
            f->message +=
                " [on " + std::to_string(ranksSeen.size()) + " of " + std::to_string(set.worldSize) + " ranks]";
    }
    set.findings = findings.take();
    return set;
}

// ------------------------------------------------------------------------------------------------------------
// Rendering

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
