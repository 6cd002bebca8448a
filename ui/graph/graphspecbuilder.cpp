// SPDX-License-Identifier: MIT
#include "graph/graphspecbuilder.h"

#include "graph/graphstyle.h"
#include "models/formatting.h"
#include "synthesis/synthesis.h"

#include <QFontMetricsF>
#include <algorithm>
#include <unordered_map>

namespace stagecraft {

namespace {

    constexpr int kPassCount = 3;
    constexpr int kLayerSegments = 3; // before, inside, after the window's layers
    constexpr double kMaxTitleWidth = 210;

    int32_t summaryBound(int32_t windowMicroBatches)
    {
        return kLayerSegments * (windowMicroBatches + 3) * kPassCount;
    }

    QString passName(Pass pass)
    {
        switch (pass) {
        case Pass::Forward:
            return QStringLiteral("fwd");
        case Pass::Backward:
            return QStringLiteral("bwd");
        case Pass::Optimizer:
            return QStringLiteral("optimizer");
        }
        return {};
    }

    QString microBatchRangeName(int32_t first, int32_t last)
    {
        if (first < 0)
            return QStringLiteral("per iteration");
        if (first == last)
            return QStringLiteral("mb%1").arg(first);
        return QStringLiteral("mb%1–%2").arg(first).arg(last);
    }

    // "mb0/L0.attn.o:all_reduce(tp)" -> "L0.attn.o:all_reduce(tp)"
    QString withoutMicroBatch(const std::string& name)
    {
        QString text = QString::fromStdString(name);
        if (text.startsWith(QLatin1String("mb"))) {
            const qsizetype slash = text.indexOf(QLatin1Char('/'));
            if (slash > 0)
                text = text.mid(slash + 1);
        }
        return text;
    }

    QString programTitle(const ProgramNode& node)
    {
        QString text = withoutMicroBatch(node.name);
        switch (node.kind) {
        case NodeKind::Compute:
            break;
        case NodeKind::Collective: {
            const qsizetype colon = text.lastIndexOf(QLatin1Char(':'));
            if (colon > 0)
                text.truncate(colon);
            break;
        }
        case NodeKind::Send:
        case NodeKind::Recv: {
            const QLatin1String prefix(node.kind == NodeKind::Send ? "send:" : "recv:");
            if (text.startsWith(prefix))
                text = text.mid(prefix.size());
            const qsizetype arrow = text.indexOf(QLatin1String(node.kind == NodeKind::Send ? "->" : "<-"));
            if (arrow > 0)
                text.truncate(arrow);
            break;
        }
        }
        return text;
    }

    QString programSubtitle(const ProgramNode& node, bool showMicroBatch)
    {
        QString text;
        if (showMicroBatch)
            text = (node.microBatch < 0 ? QStringLiteral("iter") : QStringLiteral("mb%1").arg(node.microBatch))
                + QStringLiteral(" · ");
        switch (node.kind) {
        case NodeKind::Compute:
            if (node.recompute)
                text += QStringLiteral("recompute · ");
            text += node.flops > 0 ? formatFlopCount(double(node.flops)) : formatByteCount(double(node.bytes));
            break;
        case NodeKind::Collective:
            text += QLatin1String(toString(node.collective)) + QStringLiteral(" · ")
                + QString::fromStdString(axisMaskName(node.mask)) + QStringLiteral(" · ")
                + formatByteCount(double(node.bytes));
            break;
        case NodeKind::Send:
            text += QStringLiteral("→ stage %1 · ").arg(node.peerStage) + formatByteCount(double(node.bytes));
            break;
        case NodeKind::Recv:
            text += QStringLiteral("← stage %1 · ").arg(node.peerStage) + formatByteCount(double(node.bytes));
            break;
        }
        return text;
    }

    GraphNodeKind graphKind(NodeKind kind)
    {
        switch (kind) {
        case NodeKind::Compute:
            return GraphNodeKind::Compute;
        case NodeKind::Collective:
            return GraphNodeKind::Collective;
        case NodeKind::Send:
            return GraphNodeKind::Send;
        case NodeKind::Recv:
            return GraphNodeKind::Recv;
        }
        return GraphNodeKind::Compute;
    }

    // Node counts per (layer, micro-batch slot) with slot 0 = per-iteration, slot m + 1 = micro-batch m.
    struct Histogram
    {
        int32_t layerMin = 0;
        int32_t slotsPerLayer = 1;
        std::vector<int64_t> counts;

        int64_t at(int32_t layer, int32_t microBatch) const
        {
            return counts[size_t(layer - layerMin) * size_t(slotsPerLayer) + size_t(microBatch + 1)];
        }
        int64_t inside(const GraphWindow& w) const
        {
            int64_t total = 0;
            for (int32_t l = w.layerFirst; l <= w.layerLast; ++l) {
                for (int32_t m = w.microBatchFirst; m <= w.microBatchLast; ++m)
                    total += at(l, m);
                if (w.iterationWork)
                    total += at(l, -1);
            }
            return total;
        }
    };

} // namespace

GraphSpecOptions::GraphSpecOptions()
    : titleFont(GraphStyle::titleFont())
    , subtitleFont(GraphStyle::subtitleFont())
{
}

std::pair<int32_t, int32_t> GraphSpecBuilder::layerRange(const ClassProgram& program)
{
    if (program.nodes.empty())
        return { 0, 0 };
    int32_t lo = program.nodes.front().layer;
    int32_t hi = lo;
    for (const ProgramNode& n : program.nodes) {
        lo = std::min(lo, n.layer);
        hi = std::max(hi, n.layer);
    }
    return { lo, hi };
}

int32_t GraphSpecBuilder::microBatchCount(const ClassProgram& program)
{
    int32_t last = -1;
    for (const ProgramNode& n : program.nodes)
        last = std::max(last, n.microBatch);
    return last + 1;
}

GraphWindow GraphSpecBuilder::defaultWindow(const ClassProgram& program)
{
    const auto [lo, hi] = layerRange(program);
    // The first transformer layer this stage computes: the layer holding most nodes among those >= 0 would be
    // better for stages that only receive a layer's output, but the first computed one is what users expect.
    int32_t layer = lo;
    std::vector<int64_t> perLayer(size_t(hi - lo + 1), 0);
    for (const ProgramNode& n : program.nodes)
        if (n.kind == NodeKind::Compute)
            ++perLayer[size_t(n.layer - lo)];
    for (int32_t l = std::max(lo, 0); l <= hi; ++l) {
        if (perLayer[size_t(l - lo)] > 0) {
            layer = l;
            break;
        }
    }
    GraphWindow w;
    w.layerFirst = w.layerLast = layer;
    w.microBatchFirst = w.microBatchLast = 0;
    w.iterationWork = true;
    return w;
}

QString GraphSpecBuilder::layerName(int32_t layer, int32_t modelLayers)
{
    if (layer < 0)
        return QStringLiteral("emb");
    if (layer >= modelLayers)
        return QStringLiteral("head");
    return QStringLiteral("L%1").arg(layer);
}

QString GraphSpecBuilder::layerRangeName(int32_t first, int32_t last, int32_t modelLayers)
{
    if (first == last)
        return layerName(first, modelLayers);
    return layerName(first, modelLayers) + QStringLiteral("–") + layerName(last, modelLayers);
}

QString GraphSpecBuilder::layerSetName(const std::vector<int32_t>& layers, int32_t modelLayers)
{
    std::vector<std::pair<int32_t, int32_t>> runs;
    for (const int32_t l : layers) {
        const bool decoder = l >= 0 && l < modelLayers;
        if (!runs.empty() && decoder && runs.back().second + 1 == l && runs.back().second >= 0)
            runs.back().second = l;
        else
            runs.emplace_back(l, l);
    }
    QStringList parts;
    for (size_t i = 0; i < runs.size(); ++i) {
        if (runs.size() > 4 && i == 2) {
            parts << QStringLiteral("…");
            i = runs.size() - 2;
            continue;
        }
        parts << layerRangeName(runs[i].first, runs[i].second, modelLayers);
    }
    return parts.join(QStringLiteral(", "));
}

GraphSpec GraphSpecBuilder::build(
    const SynthesisResult& result, int32_t classIndex, const GraphWindow& window, const GraphSpecOptions& options)
{
    GraphSpec spec =
        build(result.classes.at(size_t(classIndex)), result.graph ? result.graph->layers : 0, window, options);
    spec.classIndex = classIndex;
    return spec;
}

GraphSpec GraphSpecBuilder::build(
    const ClassProgram& program, int32_t modelLayers, const GraphWindow& requested, const GraphSpecOptions& options)
{
    GraphSpec spec;
    spec.classIndex = program.stage;
    spec.requested = requested;
    spec.maxNodes = std::max(options.maxNodes, GraphSpecOptions::kSmallestMaxNodes);
    spec.programNodeCount = int64_t(program.nodes.size());
    if (program.nodes.empty()) {
        spec.window = requested;
        return spec;
    }

    // Clamp the window into the program.
    const auto [layerMin, layerMax] = layerRange(program);
    const int32_t microBatches = microBatchCount(program);
    GraphWindow w = requested;
    w.layerFirst = std::clamp(w.layerFirst, layerMin, layerMax);
    w.layerLast = std::clamp(w.layerLast, w.layerFirst, layerMax);
    const int32_t mbMax = std::max(microBatches - 1, 0);
    w.microBatchFirst = std::clamp(w.microBatchFirst, 0, mbMax);
    w.microBatchLast = std::clamp(w.microBatchLast, w.microBatchFirst, mbMax);

    Histogram histogram;
    histogram.layerMin = layerMin;
    histogram.slotsPerLayer = microBatches + 1;
    histogram.counts.assign(size_t(layerMax - layerMin + 1) * size_t(histogram.slotsPerLayer), 0);
    for (const ProgramNode& n : program.nodes)
        ++histogram.counts[size_t(n.layer - layerMin) * size_t(histogram.slotsPerLayer)
            + size_t(std::max(n.microBatch, -1) + 1)];

    // Shrink from the end until the window's nodes plus the most summaries there can be fit under the limit.
    const GraphWindow clamped = w;
    auto windowMicroBatches = [&] { return w.microBatchLast - w.microBatchFirst + 1; };
    while (histogram.inside(w) + summaryBound(windowMicroBatches()) > spec.maxNodes) {
        if (w.microBatchLast > w.microBatchFirst)
            --w.microBatchLast;
        else if (w.layerLast > w.layerFirst)
            --w.layerLast;
        else
            break;
    }
    spec.window = w;
    spec.shrunk = !(w == clamped);
    const int32_t windowMbs = windowMicroBatches();
    const int64_t individualBudget = spec.maxNodes - summaryBound(windowMbs);
    spec.truncated = histogram.inside(w) > individualBudget;

    // Assign every program node to a spec node: itself, or the summary of its (layer segment, slot, pass).
    const int32_t slotCount = windowMbs + 3; // before, window micro-batches, after, per-iteration
    std::vector<int32_t> summaryNodeOf(size_t(kLayerSegments * slotCount * kPassCount), -1);
    std::vector<int32_t> specOf(program.nodes.size(), -1);
    const bool showMicroBatch = windowMbs > 1; // one micro-batch: the toolbar says which
    for (size_t i = 0; i < program.nodes.size(); ++i) {
        const ProgramNode& n = program.nodes[i];
        const int layerSegment = n.layer < w.layerFirst ? 0 : n.layer > w.layerLast ? 2 : 1;
        const bool microBatchInside = n.microBatch >= w.microBatchFirst && n.microBatch <= w.microBatchLast;
        const bool inside = layerSegment == 1 && (microBatchInside || (n.microBatch < 0 && w.iterationWork));
        if (inside && spec.individualCount < individualBudget) {
            GraphSpecNode node;
            node.kind = graphKind(n.kind);
            node.programNode = int32_t(i);
            node.pass = n.pass;
            node.recompute = n.recompute;
            node.collective = n.collective;
            node.title = programTitle(n);
            node.subtitle = programSubtitle(n, showMicroBatch);
            specOf[i] = int32_t(spec.nodes.size());
            spec.nodes.push_back(std::move(node));
            ++spec.individualCount;
            continue;
        }
        const int slot = n.microBatch < 0      ? slotCount - 1
            : n.microBatch < w.microBatchFirst ? 0
            : n.microBatch > w.microBatchLast  ? slotCount - 2
                                               : 1 + (n.microBatch - w.microBatchFirst);
        const size_t key = (size_t(layerSegment) * size_t(slotCount) + size_t(slot)) * kPassCount + size_t(n.pass);
        int32_t& summaryNode = summaryNodeOf[key];
        if (summaryNode < 0) {
            GraphSummary summary;
            summary.layerFirst = summary.layerLast = n.layer;
            summary.layers.push_back(n.layer);
            summary.microBatchFirst = summary.microBatchLast = n.microBatch;
            summary.pass = n.pass;
            summary.insideWindow = inside;
            GraphSpecNode node;
            node.kind = GraphNodeKind::Summary;
            node.pass = n.pass;
            node.summary = int32_t(spec.summaries.size());
            summaryNode = int32_t(spec.nodes.size());
            spec.summaries.push_back(summary);
            spec.nodes.push_back(std::move(node));
        }
        GraphSummary& s = spec.summaries[size_t(spec.nodes[size_t(summaryNode)].summary)];
        s.layerFirst = std::min(s.layerFirst, n.layer);
        s.layerLast = std::max(s.layerLast, n.layer);
        if (s.layers.back() != n.layer)
            s.layers.push_back(n.layer); // made sorted and unique below
        s.microBatchFirst = std::min(s.microBatchFirst, n.microBatch);
        s.microBatchLast = std::max(s.microBatchLast, n.microBatch);
        ++s.nodeCount;
        ++s.kindCount[size_t(n.kind)];
        if (n.kind == NodeKind::Compute) {
            s.flops += n.flops;
            s.computeBytes += n.bytes;
        } else {
            s.commBytes += n.bytes;
        }
        specOf[i] = summaryNode;
    }

    // Edges between distinct spec nodes, one per (from, to, kind), counting the program edges they stand for.
    std::unordered_map<uint64_t, size_t> edgeIndex;
    auto addEdge = [&](int32_t from, int32_t to, GraphEdgeKind kind) {
        if (from == to)
            return;
        const uint64_t key = (uint64_t(uint32_t(from)) << 33) | (uint64_t(uint32_t(to)) << 1) | uint64_t(kind);
        auto [it, added] = edgeIndex.try_emplace(key, spec.edges.size());
        if (added)
            spec.edges.push_back({ from, to, kind, 1 });
        else
            ++spec.edges[it->second].count;
    };
    for (size_t i = 0; i < program.nodes.size(); ++i) {
        const ProgramNode& n = program.nodes[i];
        for (NodeId d : n.dataDeps)
            addEdge(specOf[d.value], specOf[i], GraphEdgeKind::Data);
        for (NodeId d : n.ctrlDeps)
            addEdge(specOf[d.value], specOf[i], GraphEdgeKind::Ctrl);
    }
    // A schedule edge alongside a data edge says nothing the data edge does not.
    std::erase_if(spec.edges, [&](const GraphSpecEdge& e) {
        if (e.kind != GraphEdgeKind::Ctrl)
            return false;
        const uint64_t dataKey = (uint64_t(uint32_t(e.from)) << 33) | (uint64_t(uint32_t(e.to)) << 1);
        return edgeIndex.count(dataKey) > 0;
    });

    for (GraphSummary& s : spec.summaries) {
        std::sort(s.layers.begin(), s.layers.end());
        s.layers.erase(std::unique(s.layers.begin(), s.layers.end()), s.layers.end());
    }

    // Labels and sizes.
    const QFontMetricsF titleMetrics(options.titleFont);
    for (GraphSpecNode& node : spec.nodes) {
        if (node.kind == GraphNodeKind::Summary) {
            const GraphSummary& s = spec.summaries[size_t(node.summary)];
            QString title;
            if (s.pass == Pass::Optimizer)
                title = QStringLiteral("optimizer ") + layerSetName(s.layers, modelLayers);
            else
                title = layerSetName(s.layers, modelLayers) + QLatin1Char(' ') + passName(s.pass)
                    + QStringLiteral(" · ") + microBatchRangeName(s.microBatchFirst, s.microBatchLast);
            if (s.insideWindow)
                title = QStringLiteral("more of ") + title;
            node.title = title;
            node.subtitle = countNoun(s.nodeCount, QStringLiteral("node"), QStringLiteral("nodes"))
                + QStringLiteral(" · ")
                + (s.flops > 0 ? formatFlopCount(double(s.flops)) : formatByteCount(double(s.commBytes)));
        }
        node.title = titleMetrics.elidedText(node.title, Qt::ElideMiddle, kMaxTitleWidth);
        const QSizeF size =
            GraphStyle::nodeSize(node.kind, node.title, node.subtitle, options.titleFont, options.subtitleFont);
        node.widthPt = size.width();
        node.heightPt = size.height();
    }

    if (spec.shrunk || spec.truncated) {
        const QString shown = layerRangeName(w.layerFirst, w.layerLast, modelLayers) + QStringLiteral(", ")
            + microBatchRangeName(w.microBatchFirst, w.microBatchLast);
        spec.note = spec.truncated
            ? QStringLiteral("Showing the first %1 nodes of %2; the rest is summarised (limit %3 nodes).")
                  .arg(formatExact(spec.individualCount), shown, formatExact(spec.maxNodes))
            : QStringLiteral("Window reduced to %1 to stay under %2 nodes.").arg(shown, formatExact(spec.maxNodes));
    }
    return spec;
}

} // namespace stagecraft
