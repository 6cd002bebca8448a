// SPDX-License-Identifier: MIT
#pragma once

#include "graph/graphspec.h"
#include "mesh/mesh.h"

#include <QString>

namespace stagecraft {

struct SynthesisResult;

/// The details panel's text for one node of a GraphSpec, as HTML: name, kind, pass, layer, micro-batch, FLOPs and
/// bytes; for collectives the type, axes, the group id on `rank` and its member ranks; for send/recv the peer rank
/// and tag; for summaries what they aggregate. Program nodes link their neighbours as `node:<index>` anchors.
/// Reentrant; runs on the GUI thread on a click (one scan of the program for consumers).
class GraphNodeDetails
{
public:
    static QString html(const SynthesisResult& result, const GraphSpec& spec, int32_t specNode, RankId rank);
    /// Program node index of a `node:<index>` anchor, -1 for any other link.
    static int32_t programNodeOfLink(const QString& link);
};

} // namespace stagecraft
