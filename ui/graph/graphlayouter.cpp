// SPDX-License-Identifier: MIT
#include "graph/graphlayouter.h"

#include "graph/graphlogging.h"

#include <QElapsedTimer>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <graphviz/gvc.h>
#include <graphviz/gvplugin.h>
#include <mutex>
#include <string>

// The dot layout engine's plugin descriptor, exported by libgvplugin_dot_layout (linked by ui/CMakeLists.txt).
// Registering it directly makes layouts work even where Graphviz's plugin registry (config6a) was never written.
extern "C" {
extern gvplugin_library_t gvplugin_dot_layout_LTX_library;
}

namespace stagecraft {

namespace {

    std::mutex& graphvizMutex()
    {
        static std::mutex mutex;
        return mutex;
    }

    std::atomic<int64_t> s_layoutCount { 0 };

    // Graphviz reports errors through a process-wide callback; it is only ever called with the mutex held.
    std::string& errorBuffer()
    {
        static std::string buffer;
        return buffer;
    }

    int collectError(char* message)
    {
        errorBuffer() += message;
        return 0;
    }

    // Created on first use with the mutex held and kept for the life of the process: creating a context and
    // registering plugins costs more than a small layout.
    GVC_t* context()
    {
        static GVC_t* gvc = [] {
            agseterrf(&collectError);
            GVC_t* c = gvContextPlugins(nullptr, 0);
            gvAddLibrary(c, &gvplugin_dot_layout_LTX_library);
            return c;
        }();
        return gvc;
    }

    Agsym_t* declare(Agraph_t* g, int kind, const char* name, const char* defaultValue)
    {
        return agattr(g, kind, const_cast<char*>(name), const_cast<char*>(defaultValue));
    }

    void set(void* object, Agsym_t* symbol, const std::string& value)
    {
        agxset(object, symbol, const_cast<char*>(value.c_str()));
    }

    std::string inches(double points)
    {
        return std::to_string(points / 72.0);
    }

    // Owns a graph for the duration of one layout; frees layout data and graph on every path.
    struct GraphGuard
    {
        GVC_t* gvc = nullptr;
        Agraph_t* graph = nullptr;
        bool laidOut = false;
        ~GraphGuard()
        {
            if (laidOut)
                gvFreeLayout(gvc, graph);
            if (graph)
                agclose(graph);
        }
    };

    // A direct curve from the tail's bottom to the head's top (or top to bottom for an upward edge), ending one
    // arrow length before the head like dot's routes do.
    GraphEdgeRoute directRoute(const QRectF& from, const QRectF& to)
    {
        constexpr double kArrowLength = 10;
        const bool down = to.center().y() >= from.center().y();
        const QPointF start(from.center().x(), down ? from.bottom() : from.top());
        const QPointF tip(to.center().x(), down ? to.top() : to.bottom());
        const QPointF end = tip + QPointF(0, down ? -kArrowLength : kArrowLength);
        const double pull = std::max(std::abs(end.y() - start.y()) * 0.4, 20.0) * (down ? 1 : -1);
        GraphEdgeRoute route;
        route.bezier = { start, start + QPointF(0, pull), end - QPointF(0, pull), end };
        route.hasArrow = true;
        route.arrowTip = tip;
        route.direct = true;
        return route;
    }

    struct EdgePlan
    {
        std::vector<size_t> direct; ///< sorted
        int64_t virtualNodes = 0; ///< estimated virtual nodes of the edges left to dot
    };

    EdgePlan planEdges(const GraphSpec& spec, int64_t virtualNodeBudget)
    {
        // Longest-path levels over the data edges (the ones that constrain ranks). Nodes on a cycle (possible only
        // between summaries) keep the level reached when Kahn's algorithm stalls.
        const size_t n = spec.nodes.size();
        std::vector<std::vector<int32_t>> successors(n);
        std::vector<int32_t> indegree(n, 0);
        for (const GraphSpecEdge& e : spec.edges) {
            if (e.kind != GraphEdgeKind::Data || e.from < 0 || e.to < 0 || size_t(e.from) >= n || size_t(e.to) >= n)
                continue;
            successors[size_t(e.from)].push_back(e.to);
            ++indegree[size_t(e.to)];
        }
        std::vector<int64_t> level(n, 0);
        std::vector<int32_t> ready;
        for (size_t i = 0; i < n; ++i)
            if (indegree[i] == 0)
                ready.push_back(int32_t(i));
        while (!ready.empty()) {
            const int32_t a = ready.back();
            ready.pop_back();
            for (int32_t b : successors[size_t(a)]) {
                level[size_t(b)] = std::max(level[size_t(b)], level[size_t(a)] + 1);
                if (--indegree[size_t(b)] == 0)
                    ready.push_back(b);
            }
        }

        std::vector<std::pair<int64_t, size_t>> spans;
        int64_t virtualNodes = 0;
        for (size_t i = 0; i < spec.edges.size(); ++i) {
            const GraphSpecEdge& e = spec.edges[i];
            if (e.from < 0 || e.to < 0 || size_t(e.from) >= n || size_t(e.to) >= n)
                continue;
            const int64_t span = std::abs(level[size_t(e.to)] - level[size_t(e.from)]);
            if (span > 1) {
                spans.emplace_back(span, i);
                virtualNodes += span - 1;
            }
        }
        std::sort(spans.begin(), spans.end(),
            [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
        std::vector<size_t> direct;
        for (const auto& [span, index] : spans) {
            if (virtualNodes <= virtualNodeBudget)
                break;
            direct.push_back(index);
            virtualNodes -= span - 1;
        }
        std::sort(direct.begin(), direct.end());
        return { std::move(direct), virtualNodes };
    }

} // namespace

std::vector<size_t> GraphLayouter::directEdges(const GraphSpec& spec, int64_t virtualNodeBudget)
{
    return planEdges(spec, virtualNodeBudget).direct;
}

int64_t GraphLayouter::layoutCount()
{
    return s_layoutCount.load();
}

GraphLayout GraphLayouter::layout(const GraphSpec& spec)
{
    GraphLayout out;
    if (spec.nodes.empty()) {
        out.ok = true;
        return out;
    }

    std::lock_guard lock(graphvizMutex());
    QElapsedTimer timer;
    timer.start();
    ++s_layoutCount;
    errorBuffer().clear();

    GraphGuard guard;
    guard.gvc = context();
    guard.graph = agopen(const_cast<char*>("program"), Agdirected, nullptr);
    if (!guard.graph) {
        out.error = QStringLiteral("Graphviz could not create a graph");
        return out;
    }
    Agraph_t* g = guard.graph;

    const size_t nodeCount = spec.nodes.size();
    for (size_t i = 0; i < spec.edges.size(); ++i) {
        const GraphSpecEdge& e = spec.edges[i];
        if (e.from < 0 || e.to < 0 || size_t(e.from) >= nodeCount || size_t(e.to) >= nodeCount) {
            out.error = QStringLiteral("edge %1 refers to a node that does not exist").arg(i);
            return out;
        }
    }
    const EdgePlan plan = planEdges(spec, kVirtualNodeBudget);
    std::vector<bool> direct(spec.edges.size(), false);
    for (size_t i : plan.direct)
        direct[i] = true;

    declare(g, AGRAPH, "rankdir", "TB");
    declare(g, AGRAPH, "nodesep", "0.2");
    declare(g, AGRAPH, "ranksep", "0.32");
    declare(g, AGRAPH, "splines", "spline");
    // Network simplex (ranking and x placement) dominates dot's time, and it works on real plus virtual nodes.
    // Bounding its iterations keeps a few thousand nodes within seconds instead of minutes (measured on llama3-8b
    // windows: 470 nodes + 3,900 virtual 9.6 s unbounded, 0.7 s with nslimit 2; 2,936 nodes 10.5 s with
    // nslimit 2, 3.5 s with 0.5), at the price of wider layouts with a few more crossings.
    const int64_t effectiveNodes = int64_t(nodeCount) + plan.virtualNodes;
    if (effectiveNodes > 2500) {
        declare(g, AGRAPH, "nslimit", "0.5");
        declare(g, AGRAPH, "nslimit1", "0.5");
        declare(g, AGRAPH, "mclimit", "0.1");
    } else if (effectiveNodes > 600) {
        declare(g, AGRAPH, "nslimit", "2");
        declare(g, AGRAPH, "nslimit1", "2");
        declare(g, AGRAPH, "mclimit", "0.5");
    }
    Agsym_t* shape = declare(g, AGNODE, "shape", "box");
    Q_UNUSED(shape);
    declare(g, AGNODE, "fixedsize", "true");
    declare(g, AGNODE, "label", "");
    Agsym_t* width = declare(g, AGNODE, "width", "0.75");
    Agsym_t* height = declare(g, AGNODE, "height", "0.5");
    Agsym_t* constraint = declare(g, AGEDGE, "constraint", "true");
    Agsym_t* weight = declare(g, AGEDGE, "weight", "1");

    std::vector<Agnode_t*> nodes(nodeCount, nullptr);
    for (size_t i = 0; i < nodeCount; ++i) {
        const std::string name = "n" + std::to_string(i);
        Agnode_t* n = agnode(g, const_cast<char*>(name.c_str()), 1);
        set(n, width, inches(spec.nodes[i].widthPt));
        set(n, height, inches(spec.nodes[i].heightPt));
        nodes[i] = n;
    }
    std::vector<Agedge_t*> edges(spec.edges.size(), nullptr);
    for (size_t i = 0; i < spec.edges.size(); ++i) {
        if (direct[i])
            continue;
        const GraphSpecEdge& e = spec.edges[i];
        Agedge_t* edge = agedge(g, nodes[size_t(e.from)], nodes[size_t(e.to)], nullptr, 1);
        if (e.kind == GraphEdgeKind::Ctrl) {
            // Schedule order is drawn, but ranks follow the data flow.
            set(edge, constraint, "false");
        } else {
            set(edge, weight, "2");
        }
        edges[i] = edge;
    }

    if (gvLayout(guard.gvc, g, "dot") != 0) {
        out.error =
            QStringLiteral("Graphviz dot layout failed: %1").arg(QString::fromStdString(errorBuffer()).trimmed());
        qCWarning(lcGraph) << out.error;
        return out;
    }
    guard.laidOut = true;

    // Graphviz's y axis points up; flip it so the first rank is at the top, with the origin at the top-left.
    const boxf bb = GD_bb(g);
    const double top = bb.UR.y;
    const double left = bb.LL.x;
    auto toScene = [&](pointf p) { return QPointF(p.x - left, top - p.y); };
    out.bounds = QRectF(0, 0, bb.UR.x - bb.LL.x, bb.UR.y - bb.LL.y);

    out.nodeRects.resize(nodeCount);
    for (size_t i = 0; i < nodeCount; ++i) {
        const QPointF centre = toScene(ND_coord(nodes[i]));
        const double w = ND_width(nodes[i]) * 72.0;
        const double h = ND_height(nodes[i]) * 72.0;
        out.nodeRects[i] = QRectF(centre.x() - w / 2, centre.y() - h / 2, w, h);
    }
    out.edges.resize(edges.size());
    for (size_t i = 0; i < edges.size(); ++i) {
        if (direct[i]) {
            out.edges[i] =
                directRoute(out.nodeRects[size_t(spec.edges[i].from)], out.nodeRects[size_t(spec.edges[i].to)]);
            continue;
        }
        const splines* spl = ED_spl(edges[i]);
        GraphEdgeRoute& route = out.edges[i];
        if (!spl || spl->size < 1)
            continue;
        // dot routes an edge as one Bézier chain (several only for edges through cluster boundaries).
        for (int b = 0; b < spl->size; ++b) {
            const bezier& bz = spl->list[b];
            for (int k = 0; k < bz.size; ++k)
                route.bezier.push_back(toScene(bz.list[k]));
            if (bz.eflag) {
                route.hasArrow = true;
                route.arrowTip = toScene(bz.ep);
            }
        }
    }
    out.ok = true;
    out.elapsedMs = timer.elapsed();
    return out;
}

} // namespace stagecraft
