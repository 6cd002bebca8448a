// SPDX-License-Identifier: MIT
#include "models/groupsmodel.h"

#include "models/formatting.h"
#include "synthesis/synthesis.h"

#include <QStringList>

namespace stagecraft {

namespace {

    constexpr size_t kMasks = 1u << kAxisCount;

    const char* const kTypeNames[] = { "all-reduce", "all-gather", "reduce-scatter", "all-to-all" };

} // namespace

GroupsModel::GroupsModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

GroupsModel::~GroupsModel() = default;

void GroupsModel::setResult(std::shared_ptr<const SynthesisResult> result)
{
    beginResetModel();
    m_result = std::move(result);
    m_rows.clear();
    m_issued.clear();
    if (m_result) {
        m_rows.reserve(static_cast<size_t>(m_result->groups.groupCount()));
        const Mesh& mesh = m_result->mesh();
        m_result->groups.forEachGroup([&](int64_t id, AxisMask mask, int64_t index) {
            // Collective groups never span the pp axis, so all members run the same class program: the first
            // member's class is the group's.
            const std::vector<int64_t> members = mesh.groupMembers(mask, index);
            const qint64 first = members.empty() ? -1 : members.front();
            m_rows.push_back(Row { id, mask, index, first, first >= 0 ? m_result->classOf(RankId { first }) : 0 });
        });
        m_issued.assign(m_result->classes.size() * kMasks, Issued {});
        // A compressed result's programs hold some micro-batches and its probe one period more: the iteration
        // issues kept + repeats * (probe - kept) (synthesis.h MicroBatchCompression).
        auto addPrograms = [&](const SynthesisResult& from, int64_t weight) {
            for (size_t c = 0; c < m_result->classes.size() && c < from.classes.size(); ++c)
                for (const ProgramNode& node : from.classes[c].nodes) {
                    if (node.kind != NodeKind::Collective)
                        continue;
                    Issued& is = m_issued[c * kMasks + node.mask];
                    const auto t = static_cast<size_t>(node.collective);
                    is.count[t] += weight;
                    is.bytes[t] += weight * node.bytes;
                    is.totalCount += weight;
                    is.totalBytes += weight * node.bytes;
                }
        };
        if (const auto& z = m_result->compression) {
            addPrograms(*m_result, 1 - z->repeats());
            addPrograms(*z->probe, z->repeats());
        } else {
            addPrograms(*m_result, 1);
        }
    }
    endResetModel();
}

const std::shared_ptr<const SynthesisResult>& GroupsModel::result() const
{
    return m_result;
}

int GroupsModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int GroupsModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

const GroupsModel::Issued& GroupsModel::issued(const Row& row) const
{
    return m_issued[static_cast<size_t>(row.stage) * kMasks + row.mask];
}

QVariant GroupsModel::rawValue(const Row& row, int column) const
{
    switch (column) {
    case IdColumn:
        return row.id;
    case AxesColumn:
        return QString::fromStdString(axisMaskName(row.mask));
    case SizeColumn:
        return QVariant::fromValue<qint64>(m_result->mesh().groupSize(row.mask));
    case StageColumn:
        return row.stage;
    case MembersColumn:
        return row.firstMember;
    case CollectivesColumn:
        return issued(row).totalCount;
    case BytesColumn:
        return issued(row).totalBytes;
    default:
        return {};
    }
}

QVariant GroupsModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid) || !m_result)
        return {};
    const Row& row = m_rows[static_cast<size_t>(index.row())];
    const int column = index.column();
    switch (role) {
    case Qt::DisplayRole:
        switch (column) {
        case MembersColumn: {
            const std::vector<int64_t> members = m_result->mesh().groupMembers(row.mask, row.index);
            QStringList shown;
            for (size_t i = 0; i < members.size() && i < static_cast<size_t>(kMembersShown); ++i)
                shown << QString::number(members[i]);
            QString text = shown.join(QStringLiteral(", "));
            if (members.size() > static_cast<size_t>(kMembersShown))
                text += QStringLiteral(", \u2026");
            return text;
        }
        case BytesColumn:
            return formatByteCount(static_cast<double>(issued(row).totalBytes));
        case CollectivesColumn:
            return formatExact(issued(row).totalCount);
        default:
            return rawValue(row, column);
        }
    case Qt::ToolTipRole:
        if (column == CollectivesColumn || column == BytesColumn) {
            const Issued& is = issued(row);
            QStringList lines;
            for (size_t t = 0; t < is.count.size(); ++t)
                if (is.count[t] > 0)
                    lines << tr("%1: %2 \u00d7, %3 per member")
                                 .arg(QLatin1String(kTypeNames[t]), formatExact(is.count[t]),
                                     formatByteCount(static_cast<double>(is.bytes[t])));
            return lines.isEmpty() ? tr("no collectives in this group") : lines.join(QLatin1Char('\n'));
        }
        if (column == MembersColumn) {
            const std::vector<int64_t> members = m_result->mesh().groupMembers(row.mask, row.index);
            QStringList all;
            for (size_t i = 0; i < members.size() && i < 64; ++i)
                all << QString::number(members[i]);
            return tr("ring order: %1%2")
                .arg(all.join(QStringLiteral(", ")), members.size() > 64 ? QStringLiteral(", \u2026") : QString());
        }
        return {};
    case Qt::TextAlignmentRole:
        return column == AxesColumn || column == MembersColumn ? QVariant()
                                                               : QVariant(int(Qt::AlignRight | Qt::AlignVCenter));
    case SortRole:
    case RawValueRole:
        return rawValue(row, column);
    case MaskRole:
        return int(row.mask);
    case GroupIndexRole:
        return row.index;
    case MembersRole: {
        QList<qint64> list;
        for (int64_t r : m_result->mesh().groupMembers(row.mask, row.index))
            list.append(r);
        return QVariant::fromValue(list);
    }
    default:
        return {};
    }
}

QVariant GroupsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return QAbstractTableModel::headerData(section, orientation, role);
    if (role == Qt::DisplayRole) {
        switch (section) {
        case IdColumn:
            return tr("Id");
        case AxesColumn:
            return tr("Axes");
        case SizeColumn:
            return tr("Size");
        case StageColumn:
            return tr("Stage");
        case MembersColumn:
            return tr("Members");
        case CollectivesColumn:
            return tr("Collectives");
        case BytesColumn:
            return tr("Bytes / iter");
        default:
            break;
        }
    }
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case MembersColumn:
            return tr("Member ranks in ring order");
        case CollectivesColumn:
            return tr("Collectives each member issues in this group per iteration");
        case BytesColumn:
            return tr("Summed comm_size of those collectives, per member and iteration (Chakra's meaning: the "
                      "buffer for all-reduce and all-to-all, the shard for all-gather, the input for reduce-scatter)");
        default:
            break;
        }
    }
    return QAbstractTableModel::headerData(section, orientation, role);
}

} // namespace stagecraft
