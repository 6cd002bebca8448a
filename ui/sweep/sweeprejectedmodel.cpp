// SPDX-License-Identifier: MIT
#include "sweep/sweeprejectedmodel.h"

#include "estimate/sweep.h"
#include "models/formatting.h"

#include <QFont>
#include <algorithm>
#include <map>
#include <optional>

namespace stagecraft {

namespace {

    // internalId of an index: 0 for a group row, group + 1 for a plan row.
    constexpr quintptr kGroupId = 0;

    /// The training columns after the reason; the table leaves out SP and MFU.
    const std::vector<SweepField> kTrainingFields { SweepField::Dp, SweepField::Tp, SweepField::Pp,
        SweepField::Schedule, SweepField::Cp, SweepField::Ep, SweepField::MicroBatch, SweepField::Recompute,
        SweepField::Zero, SweepField::StepTime, SweepField::Peak };

    /// The measured fields: empty for a plan without an estimate.
    bool isMeasured(SweepField field)
    {
        return field == SweepField::StepTime || field == SweepField::Peak || field == SweepField::TokensPerGpu
            || field == SweepField::Tpot || field == SweepField::Ttft;
    }

} // namespace

SweepRejectedModel::SweepRejectedModel(QObject* parent)
    : QAbstractItemModel(parent)
    , m_columns(kTrainingFields)
{
    static_assert(ColumnCount == 12, "the training columns are the reason and kTrainingFields");
}

SweepRejectedModel::~SweepRejectedModel() = default;

void SweepRejectedModel::setResult(std::shared_ptr<const SweepResult> result)
{
    beginResetModel();
    m_result = std::move(result);
    const bool serving = m_result && m_result->serving;
    m_columns = serving ? SweepColumns::serving() : SweepColumns(kTrainingFields);
    m_units = serving ? sweepServingUnits(*m_result) : SweepServingUnits {};
    m_groups.clear();
    if (m_result) {
        std::map<std::string, std::vector<int>> byKey;
        for (size_t i = 0; i < m_result->rejected.size(); ++i)
            byKey[m_result->rejected[i].reasonKey].push_back(static_cast<int>(i));
        for (auto& [key, members] : byKey)
            m_groups.push_back({ QString::fromStdString(key), std::move(members) });
        // As `stagecraft sweep` prints them: memory first, then the largest groups.
        std::stable_sort(m_groups.begin(), m_groups.end(), [](const Group& a, const Group& b) {
            const bool am = a.key == QLatin1String("memory"), bm = b.key == QLatin1String("memory");
            if (am != bm)
                return am;
            return a.members.size() > b.members.size();
        });
    }
    endResetModel();
}

std::shared_ptr<const SweepResult> SweepRejectedModel::result() const
{
    return m_result;
}

QStringList SweepRejectedModel::groupKeys() const
{
    QStringList keys;
    for (const Group& g : m_groups)
        keys << g.key;
    return keys;
}

int SweepRejectedModel::rejectedIndex(const QModelIndex& index) const
{
    if (!index.isValid() || index.model() != this || index.internalId() == kGroupId)
        return -1;
    const Group& g = m_groups[index.internalId() - 1];
    return g.members[static_cast<size_t>(index.row())];
}

int SweepRejectedModel::column(SweepField field) const
{
    return m_columns.column(field);
}

std::optional<SweepField> SweepRejectedModel::field(int column) const
{
    return m_columns.field(column);
}

const SweepCandidate* SweepRejectedModel::candidate(const QModelIndex& index) const
{
    const int i = rejectedIndex(index);
    return i >= 0 ? &m_result->rejected[static_cast<size_t>(i)] : nullptr;
}

QModelIndex SweepRejectedModel::index(int row, int column, const QModelIndex& parent) const
{
    if (column < 0 || column >= columnCount() || row < 0 || row >= rowCount(parent))
        return {};
    if (!parent.isValid())
        return createIndex(row, column, kGroupId);
    return createIndex(row, column, static_cast<quintptr>(parent.row()) + 1);
}

QModelIndex SweepRejectedModel::parent(const QModelIndex& child) const
{
    if (!child.isValid() || child.internalId() == kGroupId)
        return {};
    return createIndex(static_cast<int>(child.internalId() - 1), 0, kGroupId);
}

int SweepRejectedModel::rowCount(const QModelIndex& parent) const
{
    if (!parent.isValid())
        return static_cast<int>(m_groups.size());
    if (parent.column() != 0 || parent.internalId() != kGroupId)
        return 0;
    return static_cast<int>(m_groups[static_cast<size_t>(parent.row())].members.size());
}

int SweepRejectedModel::columnCount(const QModelIndex& parent) const
{
    Q_UNUSED(parent);
    return m_columns.count();
}

QVariant SweepRejectedModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const int column = index.column();
    if (index.internalId() == kGroupId) {
        const Group& g = m_groups[static_cast<size_t>(index.row())];
        switch (role) {
        case Qt::DisplayRole:
            if (column != ReasonColumn)
                return {};
            if (g.key == QLatin1String("memory"))
                return tr("Out of memory (%1)").arg(formatExact(static_cast<qint64>(g.members.size())));
            if (g.key == QLatin1String("estimate"))
                return tr("Estimate failed (%1)").arg(formatExact(static_cast<qint64>(g.members.size())));
            if (g.key == QLatin1String("tpot"))
                return tr("Over the TPOT limit of %1 (%2)")
                    .arg(formatDuration(m_result->tpotLimitS), formatExact(static_cast<qint64>(g.members.size())));
            return tr("Invalid: %1 (%2)").arg(g.key, formatExact(static_cast<qint64>(g.members.size())));
        case SortRole:
        case RawValueRole:
            return column == ReasonColumn ? QVariant(g.key) : QVariant();
        case RejectedIndexRole:
            return -1;
        case Qt::FontRole: {
            QFont font;
            font.setBold(true);
            return font;
        }
        case Qt::ToolTipRole:
            if (!g.members.empty())
                return tr("e.g. %1").arg(
                    QString::fromStdString(m_result->rejected[static_cast<size_t>(g.members.front())].reason));
            return {};
        default:
            return {};
        }
    }
    const int i = rejectedIndex(index);
    const SweepCandidate& c = m_result->rejected[static_cast<size_t>(i)];
    const std::optional<SweepField> f = field(column);
    const bool empty = f && isMeasured(*f) && !sweepPlanIsTimed(c);
    switch (role) {
    case Qt::DisplayRole:
        if (empty)
            return QString();
        if (f)
            return m_result->serving ? sweepServingDisplay(c, *f, m_units) : sweepFieldDisplay(c, *f);
        return QString::fromStdString(c.reason);
    case SortRole:
    case RawValueRole:
        if (empty)
            return {};
        return f ? sweepFieldValue(c, *f) : QVariant(QString::fromStdString(c.reason));
    case RejectedIndexRole:
        return i;
    case Qt::TextAlignmentRole:
        if (!f || sweepFieldIsText(*f))
            return QVariant(Qt::AlignLeft | Qt::AlignVCenter);
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::ToolTipRole:
        return QString(sweepPlanText(c, m_result->serving) + QLatin1Char('\n') + QString::fromStdString(c.reason));
    default:
        return {};
    }
}

QVariant SweepRejectedModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole || section < 0 || section >= columnCount())
        return {};
    const std::optional<SweepField> f = field(section);
    if (!f)
        return tr("Reason");
    return m_result && m_result->serving ? sweepServingTitle(*f, m_units) : sweepFieldTitle(*f);
}

} // namespace stagecraft
