// SPDX-License-Identifier: MIT
#pragma once

#include "model/op.h"
#include "sharding/layout.h"

#include <QPointF>
#include <QRectF>
#include <QString>
#include <array>
#include <cstdint>
#include <vector>

namespace stagecraft {

// Plain data shared between the graph spec builder, the Graphviz layouter (a worker) and the scene (GUI thread).
// No QObject: values are copied across threads.

/// What a node of the shown graph stands for: one program node, or a summary of many.
enum class GraphNodeKind : uint8_t
{
    Compute,
    Collective,
    Send,
    Recv,
    Summary
};

/// Data edges are the program's data dependencies, control edges its schedule order (ctrlDeps).
enum class GraphEdgeKind : uint8_t
{
    Data,
    Ctrl
};

/// The part of a class program shown node by node: layers [layerFirst, layerLast] (-1 is the embedding, the
/// model's layer count the head and loss) and micro-batches [microBatchFirst, microBatchLast]. Per-iteration
/// nodes (micro-batch -1: gradient reduction, optimizer) of the window's layers are shown individually when
/// `iterationWork` is set. Everything else is collapsed into summary nodes.
struct GraphWindow
{
    int32_t layerFirst = 0;
    int32_t layerLast = 0;
    int32_t microBatchFirst = 0;
    int32_t microBatchLast = 0;
    bool iterationWork = true;

    friend bool operator==(const GraphWindow&, const GraphWindow&) = default;
};

/// Aggregate of the program nodes a summary node stands for.
struct GraphSummary
{
    int32_t layerFirst = 0; ///< smallest layer among its nodes
    int32_t layerLast = 0;
    /// Every layer among its nodes, sorted: an interleaved stage's chunks hold runs apart (L0–L3, L16–L19, …).
    std::vector<int32_t> layers;
    int32_t microBatchFirst = 0; ///< -1: per-iteration work
    int32_t microBatchLast = 0;
    Pass pass = Pass::Forward;
    bool insideWindow = false; ///< the window's own nodes beyond the node limit
    int64_t nodeCount = 0;
    std::array<int64_t, 4> kindCount {}; ///< by NodeKind (compute, collective, send, recv)
    int64_t flops = 0; ///< compute FLOPs
    int64_t computeBytes = 0; ///< memory traffic of its compute nodes
    int64_t commBytes = 0; ///< comm_size of its collectives, send and recv
};

struct GraphSpecNode
{
    GraphNodeKind kind = GraphNodeKind::Compute;
    QString title; ///< first label line (op or tensor name)
    QString subtitle; ///< second label line (FLOPs, bytes, peer)
    double widthPt = 0; ///< size for the layout, in points (= scene units)
    double heightPt = 0;
    int32_t programNode = -1; ///< index into ClassProgram::nodes; -1 for summaries
    int32_t summary = -1; ///< index into GraphSpec::summaries; -1 for program nodes
    Pass pass = Pass::Forward;
    bool recompute = false;
    CollectiveType collective = CollectiveType::AllReduce;
};

struct GraphSpecEdge
{
    int32_t from = 0; ///< index into GraphSpec::nodes
    int32_t to = 0;
    GraphEdgeKind kind = GraphEdgeKind::Data;
    int64_t count = 1; ///< program edges this edge stands for (> 1 between summaries)
};

/// The graph to lay out and show: nodes and edges by index, plus what was asked for and what is shown.
struct GraphSpec
{
    int32_t classIndex = 0;
    GraphWindow requested; ///< the window asked for
    GraphWindow window; ///< the window shown (smaller than `requested` when the node limit forced it)
    bool shrunk = false; ///< `window` differs from `requested`
    bool truncated = false; ///< even a single layer and micro-batch exceeded the limit; its tail is a summary
    int32_t maxNodes = 0; ///< the limit the spec was built under
    int64_t programNodeCount = 0; ///< nodes of the whole class program
    int64_t individualCount = 0; ///< program nodes shown one by one
    QString note; ///< human-readable remark about shrinking, empty when none
    std::vector<GraphSpecNode> nodes;
    std::vector<GraphSpecEdge> edges;
    std::vector<GraphSummary> summaries;
};

/// One edge as laid out: a cubic Bézier chain (p0, c1, c2, p1, c1, c2, p2, ...) and the arrow head's tip.
struct GraphEdgeRoute
{
    std::vector<QPointF> bezier;
    bool hasArrow = false;
    QPointF arrowTip; ///< the head node's border point the arrow touches
    /// Drawn as a direct curve between the nodes instead of routed by dot: an edge spanning very many ranks costs
    /// dot one virtual node per rank, and a few hundred such edges would take minutes to lay out.
    bool direct = false;
};

/// The outcome of a layout, in points with y pointing down and the origin at the top-left of `bounds`.
/// `nodeRects` and `edges` are parallel to GraphSpec::nodes and GraphSpec::edges.
struct GraphLayout
{
    bool ok = false;
    QString error; ///< why the layout failed (ok == false)
    QRectF bounds;
    std::vector<QRectF> nodeRects;
    std::vector<GraphEdgeRoute> edges;
    qint64 elapsedMs = 0; ///< time spent inside Graphviz, waiting for the mutex excluded
};

} // namespace stagecraft
