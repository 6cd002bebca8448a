// SPDX-License-Identifier: MIT
#include "heatmap/commmatrix.h"

#include "heatmap/colorscale.h"
#include "models/formatting.h"
#include "synthesis/synthesis.h"

#include <QStringList>
#include <algorithm>
#include <limits>

namespace stagecraft {

namespace {

    constexpr int kMaskCount = 1 << kAxisCount;

    bool axisGrouping(CommGrouping g, Axis& axis)
    {
        switch (g) {
        case CommGrouping::TpRank:
            axis = Axis::Tp;
            return true;
        case CommGrouping::CpRank:
            axis = Axis::Cp;
            return true;
        case CommGrouping::EpRank:
            axis = Axis::Ep;
            return true;
        case CommGrouping::DpReplica:
            axis = Axis::Edp;
            return true;
        case CommGrouping::Stage:
            axis = Axis::Pp;
            return true;
        case CommGrouping::Rank:
        case CommGrouping::Node:
            break;
        }
        return false;
    }

    int64_t gpusPerNode(const SynthesisResult& result)
    {
        return std::max<int64_t>(1, result.config.cluster.gpusPerNode);
    }

} // namespace

QString commKindName(CommKind kind)
{
    switch (kind) {
    case CommKind::AllReduce:
        return QStringLiteral("all-reduce");
    case CommKind::AllGather:
        return QStringLiteral("all-gather");
    case CommKind::ReduceScatter:
        return QStringLiteral("reduce-scatter");
    case CommKind::AllToAll:
        return QStringLiteral("all-to-all");
    case CommKind::SendRecv:
        break;
    }
    return QStringLiteral("send/recv");
}

QString commGroupingName(CommGrouping grouping)
{
    switch (grouping) {
    case CommGrouping::Rank:
        return QStringLiteral("rank");
    case CommGrouping::Node:
        return QStringLiteral("node");
    case CommGrouping::TpRank:
        return QStringLiteral("tp rank");
    case CommGrouping::CpRank:
        return QStringLiteral("cp rank");
    case CommGrouping::EpRank:
        return QStringLiteral("ep rank");
    case CommGrouping::DpReplica:
        return QStringLiteral("dp replica");
    case CommGrouping::Stage:
        break;
    }
    return QStringLiteral("stage");
}

QString CommMatrix::unitLabel(int64_t unit) const
{
    return commGroupingName(options.grouping) + QLatin1Char(' ') + QString::number(unit);
}

QString CommMatrix::cellText(int64_t row, int64_t column) const
{
    const double value = at(row, column);
    QString text = row == column && options.grouping != CommGrouping::Rank
        ? QString(QStringLiteral("within ") + unitLabel(row))
        : QString(unitLabel(row) + QStringLiteral(" \u2192 ") + unitLabel(column));
    if (value <= 0)
        return text + QStringLiteral(": no traffic");
    text += QStringLiteral(": ") + formatByteCount(value);
    QStringList parts;
    const auto& kinds = kindsAt(row, column);
    for (int k = 0; k < kCommKindCount; ++k) {
        if (kinds[static_cast<size_t>(k)] <= 0)
            continue;
        const QString name = static_cast<CommKind>(k) == CommKind::SendRecv ? QStringLiteral("send")
                                                                            : commKindName(static_cast<CommKind>(k));
        parts << name + QLatin1Char(' ') + formatByteCount(kinds[static_cast<size_t>(k)]);
    }
    if (!parts.isEmpty())
        text += QStringLiteral(" (") + parts.join(QStringLiteral(", ")) + QLatin1Char(')');
    return text;
}

int64_t commUnitCount(const SynthesisResult& result, CommGrouping grouping)
{
    Axis axis {};
    if (axisGrouping(grouping, axis))
        return result.mesh().degree(axis);
    if (grouping == CommGrouping::Node) {
        const int64_t gpn = gpusPerNode(result);
        return (result.worldSize() + gpn - 1) / gpn;
    }
    return result.worldSize();
}

int64_t commUnitOf(const SynthesisResult& result, CommGrouping grouping, int64_t rank)
{
    Axis axis {};
    if (axisGrouping(grouping, axis))
        return result.mesh().coords(RankId { rank })[static_cast<size_t>(axis)];
    if (grouping == CommGrouping::Node)
        return rank / gpusPerNode(result);
    return rank;
}

bool commGroupingAvailable(const SynthesisResult& result, CommGrouping grouping)
{
    const int64_t units = commUnitCount(result, grouping);
    if (units > kMaxCommUnits || units < 1)
        return false;
    Axis axis {};
    if (axisGrouping(grouping, axis))
        return units > 1;
    if (grouping == CommGrouping::Node)
        return units > 1;
    return true;
}

CommGrouping defaultCommGrouping(const SynthesisResult& result)
{
    if (result.worldSize() <= kDefaultRankLimit)
        return CommGrouping::Rank;
    if (commGroupingAvailable(result, CommGrouping::Node))
        return CommGrouping::Node;
    for (CommGrouping g : { CommGrouping::Stage, CommGrouping::DpReplica, CommGrouping::TpRank, CommGrouping::CpRank,
             CommGrouping::EpRank })
        if (commGroupingAvailable(result, g))
            return g;
    return CommGrouping::Stage;
}

CommMatrix buildCommMatrix(const SynthesisResult& result, const CommMatrixOptions& options)
{
    CommMatrix m;
    m.options = options;
    m.world = result.worldSize();
    if (!commGroupingAvailable(result, options.grouping))
        return m;
    const Mesh& mesh = result.mesh();
    m.units = commUnitCount(result, options.grouping);
    const auto cells = static_cast<size_t>(m.units * m.units);
    m.bytes.assign(cells, 0.0);
    m.byKind.assign(cells, {});

    Axis unitAxis {};
    const bool byAxis = axisGrouping(options.grouping, unitAxis);
    const int64_t gpn = gpusPerNode(result);
    m.ranksPerUnit = options.grouping == CommGrouping::Node ? gpn : byAxis ? m.world / m.units : 1;
    auto unitOf = [&](int64_t rank) -> int64_t {
        if (byAxis)
            return mesh.coords(RankId { rank })[static_cast<size_t>(unitAxis)];
        if (options.grouping == CommGrouping::Node)
            return rank / gpn;
        return rank;
    };
    auto wanted = [&](CommKind k) { return (options.kinds >> static_cast<unsigned>(k)) & 1u; };
    auto add = [&](int64_t from, int64_t to, CommKind kind, double bytes) {
        if (bytes <= 0)
            return;
        const auto cell = static_cast<size_t>(unitOf(from) * m.units + unitOf(to));
        m.bytes[cell] += bytes;
        m.byKind[cell][static_cast<size_t>(kind)] += bytes;
    };

    // Per class: summed comm_size per (mask, collective type) and send bytes per peer stage. Every rank of a class
    // runs the same program, so these totals are all a rank needs besides its group membership.
    const size_t classes = result.classes.size();
    const auto stages = static_cast<size_t>(mesh.degree(Axis::Pp));
    std::vector<std::array<double, kCollectiveTypeCount>> collective(classes * kMaskCount);
    std::vector<double> sends(classes * stages, 0.0);
    // A compressed result's programs hold some micro-batches; its probe one period more: the full iteration's
    // sums are kept + repeats * (probe - kept) (synthesis.h MicroBatchCompression).
    auto addPrograms = [&](const SynthesisResult& from, double weight) {
        for (size_t c = 0; c < classes && c < from.classes.size(); ++c) {
            for (const ProgramNode& node : from.classes[c].nodes) {
                if (node.kind == NodeKind::Collective)
                    collective[c * kMaskCount + node.mask][static_cast<size_t>(node.collective)] +=
                        weight * static_cast<double>(node.bytes);
                else if (node.kind == NodeKind::Send && node.peerStage >= 0
                    && static_cast<size_t>(node.peerStage) < stages)
                    sends[c * stages + static_cast<size_t>(node.peerStage)] += weight * static_cast<double>(node.bytes);
            }
        }
    };
    if (result.compression) {
        const auto repeats = static_cast<double>(result.compression->repeats());
        addPrograms(result, 1 - repeats);
        addPrograms(*result.compression->probe, repeats);
    } else {
        addPrograms(result, 1);
    }

    for (AxisMask mask : result.groups.masks()) {
        if ((mask & ~options.axes) != 0)
            continue; // an axis of this group is filtered out
        const int64_t n = mesh.groupSize(mask);
        if (n < 2)
            continue;
        const double nd = static_cast<double>(n);
        for (int64_t g = 0; g < mesh.groupCount(mask); ++g) {
            const std::vector<int64_t> members = mesh.groupMembers(mask, g);
            for (size_t k = 0; k < members.size(); ++k) {
                const int64_t rank = members[k];
                const int32_t c = result.classOf(RankId { rank });
                if (c < 0 || static_cast<size_t>(c) >= classes)
                    continue;
                const auto& s = collective[static_cast<size_t>(c) * kMaskCount + mask];
                const int64_t next = members[(k + 1) % members.size()];
                if (wanted(CommKind::AllReduce))
                    add(rank, next, CommKind::AllReduce,
                        2.0 * (nd - 1) / nd * s[static_cast<size_t>(CollectiveType::AllReduce)]);
                if (wanted(CommKind::AllGather))
                    add(rank, next, CommKind::AllGather, (nd - 1) * s[static_cast<size_t>(CollectiveType::AllGather)]);
                if (wanted(CommKind::ReduceScatter))
                    add(rank, next, CommKind::ReduceScatter,
                        (nd - 1) / nd * s[static_cast<size_t>(CollectiveType::ReduceScatter)]);
                const double a2a = s[static_cast<size_t>(CollectiveType::AllToAll)];
                if (wanted(CommKind::AllToAll) && a2a > 0)
                    for (size_t j = 0; j < members.size(); ++j)
                        if (j != k)
                            add(rank, members[j], CommKind::AllToAll, a2a / nd);
            }
        }
    }

    const bool ppShown = (options.axes >> static_cast<unsigned>(Axis::Pp)) & 1u;
    if (wanted(CommKind::SendRecv) && ppShown && stages > 1) {
        for (int64_t rank = 0; rank < m.world; ++rank) {
            const int32_t c = result.classOf(RankId { rank });
            if (c < 0 || static_cast<size_t>(c) >= classes)
                continue;
            for (size_t p = 0; p < stages; ++p) {
                const double b = sends[static_cast<size_t>(c) * stages + p];
                if (b > 0)
                    add(rank, mesh.withCoordinate(RankId { rank }, Axis::Pp, static_cast<int64_t>(p)).value,
                        CommKind::SendRecv, b);
            }
        }
    }

    m.minNonZeroCell = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < cells; ++i) {
        m.total += m.bytes[i];
        for (size_t k = 0; k < kCommKindCount; ++k)
            m.kindTotals[k] += m.byKind[i][k];
        if (m.bytes[i] > 0) {
            m.maxCell = std::max(m.maxCell, m.bytes[i]);
            m.minNonZeroCell = std::min(m.minNonZeroCell, m.bytes[i]);
        }
    }
    if (m.maxCell <= 0)
        m.minNonZeroCell = 0;
    return m;
}

QImage renderCommMatrixImage(const CommMatrix& matrix, const LogColorScale& scale, QColor background)
{
    const int units = static_cast<int>(matrix.units);
    QImage image(std::max(units, 1), std::max(units, 1), QImage::Format_RGB32);
    image.fill(background);
    for (int row = 0; row < units; ++row) {
        auto* line = reinterpret_cast<QRgb*>(image.scanLine(row));
        for (int column = 0; column < units; ++column) {
            const double value = matrix.at(row, column);
            if (value > 0)
                line[column] = scale.color(value).rgb();
        }
    }
    return image;
}

} // namespace stagecraft
