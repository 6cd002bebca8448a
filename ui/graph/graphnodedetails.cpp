// SPDX-License-Identifier: MIT
#include "graph/graphnodedetails.h"

#include "graph/graphspecbuilder.h"
#include "models/formatting.h"
#include "synthesis/synthesis.h"

#include <QStringList>

namespace stagecraft {

namespace {

    constexpr int kMaxListedNeighbours = 12;

    QString row(const QString& key, const QString& value)
    {
        return QStringLiteral("<tr><td style='color:#5a606a; padding-right:10px'>%1</td><td>%2</td></tr>")
            .arg(key, value);
    }

    QString exactAndShort(int64_t value, const QString& shortText)
    {
        return shortText + QStringLiteral(" <span style='color:#7a808a'>(%1)</span>").arg(formatExact(value));
    }

    QString passText(Pass pass)
    {
        switch (pass) {
        case Pass::Forward:
            return QStringLiteral("forward");
        case Pass::Backward:
            return QStringLiteral("backward");
        case Pass::Optimizer:
            return QStringLiteral("optimizer");
        }
        return {};
    }

    QString kindText(NodeKind kind)
    {
        switch (kind) {
        case NodeKind::Compute:
            return QStringLiteral("compute");
        case NodeKind::Collective:
            return QStringLiteral("collective");
        case NodeKind::Send:
            return QStringLiteral("send");
        case NodeKind::Recv:
            return QStringLiteral("recv");
        }
        return {};
    }

    QString joinRanks(const std::vector<int64_t>& ranks)
    {
        QStringList parts;
        for (int64_t r : ranks)
            parts << QString::number(r);
        return parts.join(QStringLiteral(", "));
    }

    QString nodeLink(const ClassProgram& program, NodeId id)
    {
        const ProgramNode& n = program.nodes[id.value];
        return QStringLiteral("<a href='node:%1'>%2</a>")
            .arg(id.value)
            .arg(QString::fromStdString(n.name).toHtmlEscaped());
    }

    template <typename Ids> QString linkList(const ClassProgram& program, const Ids& ids)
    {
        if (ids.empty())
            return QStringLiteral("—");
        QStringList parts;
        for (size_t i = 0; i < ids.size() && i < size_t(kMaxListedNeighbours); ++i)
            parts << nodeLink(program, ids[i]);
        if (ids.size() > size_t(kMaxListedNeighbours))
            parts << QStringLiteral("… %1 more").arg(ids.size() - size_t(kMaxListedNeighbours));
        return parts.join(QStringLiteral("<br>"));
    }

    QString programNodeHtml(const SynthesisResult& result, const ClassProgram& program, int32_t index, RankId rank)
    {
        const ProgramNode& n = program.nodes[size_t(index)];
        const int32_t layers = result.graph ? result.graph->layers : 0;
        QString html = QStringLiteral("<h3 style='margin:0 0 6px 0'>%1</h3><table cellspacing='0' cellpadding='2'>")
                           .arg(QString::fromStdString(n.name).toHtmlEscaped());
        QString kind = kindText(n.kind);
        if (n.kind == NodeKind::Collective)
            kind += QStringLiteral(" (%1)").arg(QLatin1String(toString(n.collective)));
        html += row(QStringLiteral("Kind"), kind);
        html +=
            row(QStringLiteral("Pass"), passText(n.pass) + (n.recompute ? QStringLiteral(", recomputed") : QString()));
        html += row(QStringLiteral("Layer"),
            QStringLiteral("%1 (%2)").arg(GraphSpecBuilder::layerName(n.layer, layers)).arg(n.layer));
        html += row(QStringLiteral("Micro-batch"),
            n.microBatch < 0 ? QStringLiteral("— (once per iteration)") : QString::number(n.microBatch));
        if (n.chunk > 0)
            html += row(QStringLiteral("Chunk"), QString::number(n.chunk));
        html += row(QStringLiteral("Program node"),
            QStringLiteral("#%1 of %2 (class %3)")
                .arg(formatExact(index), formatExact(qint64(program.nodes.size())))
                .arg(program.stage));

        switch (n.kind) {
        case NodeKind::Compute: {
            html += row(QStringLiteral("FLOPs"), exactAndShort(n.flops, formatFlopCount(double(n.flops))));
            html += row(QStringLiteral("Bytes"),
                exactAndShort(n.bytes, formatByteCount(double(n.bytes))) + QStringLiteral(" read + written"));
            if (result.graph && n.op >= 0 && size_t(n.op) < result.graph->ops.size()) {
                const Op& op = result.graph->ops[size_t(n.op)];
                html += row(QStringLiteral("Op"),
                    QStringLiteral("%1, %2 region")
                        .arg(QLatin1String(toString(op.kind)), QLatin1String(toString(op.region))));
            }
            break;
        }
        case NodeKind::Collective: {
            const Mesh& mesh = result.mesh();
            const int64_t groupIndex = mesh.groupIndex(n.mask, rank);
            html += row(QStringLiteral("Type"), QLatin1String(toString(n.collective)));
            html += row(QStringLiteral("Axes"), QString::fromStdString(axisMaskName(n.mask)));
            html += row(QStringLiteral("Bytes"),
                exactAndShort(n.bytes, formatByteCount(double(n.bytes))) + QStringLiteral(" (comm_size)"));
            html += row(QStringLiteral("Group"),
                QStringLiteral("id %1 on rank %2 (group %3 of %4)")
                    .arg(result.groupIdOf(n, rank))
                    .arg(rank.value)
                    .arg(groupIndex)
                    .arg(mesh.groupCount(n.mask)));
            html += row(QStringLiteral("Members"),
                QStringLiteral("ranks %1 <span style='color:#7a808a'>(ring order, %2 ranks)</span>")
                    .arg(joinRanks(mesh.groupMembers(n.mask, groupIndex)))
                    .arg(mesh.groupSize(n.mask)));
            break;
        }
        case NodeKind::Send:
        case NodeKind::Recv: {
            const RankId peer = result.peerOf(n, rank);
            html += row(QStringLiteral("Bytes"), exactAndShort(n.bytes, formatByteCount(double(n.bytes))));
            html += row(n.kind == NodeKind::Send ? QStringLiteral("To") : QStringLiteral("From"),
                QStringLiteral("rank %1 (stage %2)").arg(peer.value).arg(n.peerStage));
            html += row(QStringLiteral("Tag"), QString::number(n.tag));
            break;
        }
        }

        // Consumers: one scan of the program (a click, not a paint).
        std::vector<NodeId> consumers;
        for (size_t i = size_t(index) + 1; i < program.nodes.size(); ++i)
            for (NodeId d : program.nodes[i].dataDeps)
                if (d.value == uint32_t(index))
                    consumers.push_back(NodeId { uint32_t(i) });
        html += row(QStringLiteral("Inputs"), linkList(program, n.dataDeps));
        if (!n.ctrlDeps.empty())
            html += row(QStringLiteral("After"), linkList(program, n.ctrlDeps));
        html += row(QStringLiteral("Consumers"), linkList(program, consumers));
        html += QStringLiteral("</table>");
        return html;
    }

    QString summaryHtml(const SynthesisResult& result, const GraphSummary& s, const QString& title)
    {
        const int32_t layers = result.graph ? result.graph->layers : 0;
        QString html = QStringLiteral("<h3 style='margin:0 0 6px 0'>%1</h3><table cellspacing='0' cellpadding='2'>")
                           .arg(title.toHtmlEscaped());
        html += row(QStringLiteral("Kind"),
            s.insideWindow ? QStringLiteral("summary (window beyond the node limit)") : QStringLiteral("summary"));
        html += row(QStringLiteral("Layers"), GraphSpecBuilder::layerSetName(s.layers, layers));
        html += row(QStringLiteral("Micro-batches"),
            s.microBatchFirst < 0 ? QStringLiteral("— (once per iteration)")
                                  : QStringLiteral("%1 – %2").arg(s.microBatchFirst).arg(s.microBatchLast));
        html += row(QStringLiteral("Pass"), passText(s.pass));
        html += row(QStringLiteral("Nodes"),
            QStringLiteral("%1: %2 compute, %3 collective, %4 send, %5 recv")
                .arg(formatExact(s.nodeCount), formatExact(s.kindCount[0]), formatExact(s.kindCount[1]),
                    formatExact(s.kindCount[2]), formatExact(s.kindCount[3])));
        html += row(QStringLiteral("FLOPs"), exactAndShort(s.flops, formatFlopCount(double(s.flops))));
        html += row(
            QStringLiteral("Compute bytes"), exactAndShort(s.computeBytes, formatByteCount(double(s.computeBytes))));
        html += row(QStringLiteral("Comm bytes"), exactAndShort(s.commBytes, formatByteCount(double(s.commBytes))));
        html += QStringLiteral("</table><p style='color:#5a606a'>Double-click to show this range node by node.</p>");
        return html;
    }

} // namespace

QString GraphNodeDetails::html(const SynthesisResult& result, const GraphSpec& spec, int32_t specNode, RankId rank)
{
    if (specNode < 0 || size_t(specNode) >= spec.nodes.size() || size_t(spec.classIndex) >= result.classes.size())
        return {};
    const GraphSpecNode& node = spec.nodes[size_t(specNode)];
    if (node.kind == GraphNodeKind::Summary)
        return summaryHtml(result, spec.summaries[size_t(node.summary)], node.title);
    return programNodeHtml(result, result.classes[size_t(spec.classIndex)], node.programNode, rank);
}

int32_t GraphNodeDetails::programNodeOfLink(const QString& link)
{
    if (!link.startsWith(QLatin1String("node:")))
        return -1;
    bool ok = false;
    const int value = link.mid(5).toInt(&ok);
    return ok ? value : -1;
}

} // namespace stagecraft
