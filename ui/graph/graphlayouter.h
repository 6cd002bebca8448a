// SPDX-License-Identifier: MIT
#pragma once

#include "graph/graphspec.h"

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
    static GraphLayout layout(const GraphSpec& spec);

    /// Number of layouts run so far in this process (for tests and diagnostics).
    static int64_t layoutCount();
};

} // namespace stagecraft
