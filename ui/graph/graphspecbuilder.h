// SPDX-License-Identifier: MIT
#pragma once

#include "graph/graphspec.h"

#include <QFont>
#include <utility>

namespace stagecraft {

struct ClassProgram;
struct SynthesisResult;

/// Limits and fonts for building a GraphSpec. Construct on the GUI thread (fonts), use on any thread.
struct GraphSpecOptions
{
    static constexpr int32_t kDefaultMaxNodes = 3000;
    static constexpr int32_t kSmallestMaxNodes = 64;

    GraphSpecOptions();

    int32_t maxNodes = kDefaultMaxNodes; ///< hard limit on GraphSpec::nodes (clamped to >= kSmallestMaxNodes)
    QFont titleFont;
    QFont subtitleFont;
};

/// Turns a class program and a layer / micro-batch window into a GraphSpec: the window's nodes one by one, the rest
/// collapsed into summary nodes with the edges between them kept in aggregate.
///
/// Summaries are keyed by (layer range before / inside / after the window) x (micro-batches before the window,
/// each micro-batch of the window, after it, per-iteration) x pass, so there are at most
/// 9 * (window micro-batches + 3) of them whatever the program's size. When the window plus that bound exceeds the
/// node limit, the window is shrunk from its end, micro-batches first, then layers; a single layer and micro-batch
/// that alone exceeds it shows its first nodes and a summary of the rest. Pure function of its inputs; reentrant;
/// O(program nodes + edges), meant for a worker on large programs.
class GraphSpecBuilder
{
public:
    /// Smallest and largest layer of the program's nodes (-1 is the embedding); {0, 0} for an empty program.
    static std::pair<int32_t, int32_t> layerRange(const ClassProgram& program);
    /// 1 + the largest micro-batch index of the program's nodes (0 when it has none).
    static int32_t microBatchCount(const ClassProgram& program);
    /// The first transformer layer the program holds (else its first layer), micro-batch 0, per-iteration work on.
    static GraphWindow defaultWindow(const ClassProgram& program);
    /// "emb" for -1, "head" for `modelLayers` (the LM head and loss), "L<n>" otherwise.
    static QString layerName(int32_t layer, int32_t modelLayers);
    /// "L0–L9", "emb–L3", "L5".
    static QString layerRangeName(int32_t first, int32_t last, int32_t modelLayers);
    /// The sorted `layers` as runs: "L0–L3, L16–L19, L32–L35" (more than four runs: the first two, "…", the last).
    static QString layerSetName(const std::vector<int32_t>& layers, int32_t modelLayers);

    /// The spec of class `classIndex` of `result` (which must be valid).
    static GraphSpec build(const SynthesisResult& result, int32_t classIndex, const GraphWindow& window,
        const GraphSpecOptions& options = GraphSpecOptions());
    /// The spec of `program`; `modelLayers` only names the head layer in labels.
    static GraphSpec build(const ClassProgram& program, int32_t modelLayers, const GraphWindow& window,
        const GraphSpecOptions& options = GraphSpecOptions());
};

} // namespace stagecraft
