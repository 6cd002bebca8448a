// SPDX-License-Identifier: MIT
#pragma once

#include "graph/graphspec.h"

#include <vector>

namespace stagecraft {

/// The only door to Graphviz. cgraph and the dot engine keep global state and are not thread-safe, so every
/// Graphviz call of the process is made here, behind one mutex. Meant to run in a worker (QtConcurrent); it touches
/// no QObject. The dot layout plugin is registered from the linked library itself, so no Graphviz plugin registry
/// (config6a) is needed.
class GraphLayouter
{
public:
    /// Lays `spec` out with dot, top to bottom, at the nodes' given sizes, and copies the geometry out before the
    /// Graphviz graph is freed. Blocks while another thread lays out. Thread-safe; never throws. An empty spec gives
    /// an empty, successful layout.
    /// Edges spanning many ranks are the cost of a dot layout (one virtual node per rank crossed). Ranks are
    /// estimated by longest path over the data edges, and the longest edges are left out of dot (drawn direct,
    /// GraphEdgeRoute::direct) until the virtual nodes left are at most `kVirtualNodeBudget`.
    static GraphLayout layout(const GraphSpec& spec);
    static constexpr int64_t kVirtualNodeBudget = 3000;

    /// The edges layout() leaves to direct drawing, by index into spec.edges (sorted). Pure; no Graphviz call.
    static std::vector<size_t> directEdges(const GraphSpec& spec, int64_t virtualNodeBudget = kVirtualNodeBudget);

    /// Number of layouts run so far in this process (for tests and diagnostics).
    static int64_t layoutCount();
};

} // namespace stagecraft
