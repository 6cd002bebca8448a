// SPDX-License-Identifier: MIT
#include "models/simulationmodel.h"

#include "models/formatting.h"
#include "simulate/simulationcomparison.h"

namespace stagecraft {

namespace {

    bool isTimeColumn(int column)
    {
        return column == SimulationModel::FinishColumn || column == SimulationModel::EstimatedFinishColumn
            || column == SimulationModel::ExposedColumn || column == SimulationModel::EstimatedExposedColumn;
    }

    bool isRatioColumn(int column)
    {
        return column == SimulationModel::FinishRatioColumn || column == SimulationModel::ExposedRatioColumn;
    }

    /// Columns that only ASTRA-sim fills (empty when no rank of the class reported).
    bool isSimulatedColumn(int column)
    {
        return column == SimulationModel::SlowestRankColumn || column == SimulationModel::FinishColumn
            || column == SimulationModel::ExposedColumn || isRatioColumn(column);
    }

} // namespace

SimulationModel::SimulationModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

SimulationModel::~SimulationModel() = default;

void SimulationModel::setComparison(std::shared_ptr<const SimulationComparison> comparison)
{
    beginResetModel();
    m_comparison = std::move(comparison);
    endResetModel();
}

const std::shared_ptr<const SimulationComparison>& SimulationModel::comparison() const
{
    return m_comparison;
}

int SimulationModel::rowCount(const QModelIndex& parent) const
{
    if (parent.isValid() || !m_comparison)
        return 0;
    return static_cast<int>(m_comparison->stages.size());
}

int SimulationModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant SimulationModel::rawValue(int row, int column) const
{
    const StageComparison& s = m_comparison->stages[static_cast<size_t>(row)];
    if (isSimulatedColumn(column) && s.slowestRank < 0)
        return {};
    switch (column) {
    case StageColumn:
        return static_cast<qint64>(s.stage);
    case RanksColumn:
        return static_cast<qint64>(s.ranks);
    case SlowestRankColumn:
        return static_cast<qint64>(s.slowestRank);
    case FinishColumn:
        return s.simulatedFinishNs * 1e-9;
    case EstimatedFinishColumn:
        return s.estimatedFinishNs * 1e-9;
    case FinishRatioColumn:
        return s.finishRatio;
    case ExposedColumn:
        return s.simulatedExposedNs * 1e-9;
    case EstimatedExposedColumn:
        return s.estimatedExposedNs * 1e-9;
    case ExposedRatioColumn:
        return s.exposedRatio;
    default:
        return {};
    }
}

QVariant SimulationModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || !m_comparison || index.row() >= rowCount() || index.column() >= ColumnCount)
        return {};
    const int column = index.column();
    switch (role) {
    case Qt::DisplayRole: {
        const QVariant v = rawValue(index.row(), column);
        if (!v.isValid())
            return QStringLiteral("\u2014");
        if (isTimeColumn(column))
            return formatDuration(v.toDouble());
        if (isRatioColumn(column))
            return v.toDouble() > 0 ? QString::number(v.toDouble(), 'f', 2) : QStringLiteral("\u2014");
        return QString::number(v.toLongLong());
    }
    case SortRole:
    case RawValueRole:
        return rawValue(index.row(), column);
    case Qt::TextAlignmentRole:
        return column == StageColumn ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                                     : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::ToolTipRole: {
        const StageComparison& s = m_comparison->stages[static_cast<size_t>(index.row())];
        if (s.slowestRank < 0)
            return tr("ASTRA-sim reported no rank of stage %1").arg(s.stage);
        return tr("Stage %1: %2 of %3 ranks finished in ASTRA-sim; the slowest is rank %4")
            .arg(s.stage)
            .arg(s.reportedRanks)
            .arg(s.ranks)
            .arg(s.slowestRank);
    }
    default:
        return {};
    }
}

QVariant SimulationModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal)
        return QAbstractTableModel::headerData(section, orientation, role);
    if (role == Qt::DisplayRole) {
        switch (section) {
        case StageColumn:
            return tr("Stage");
        case RanksColumn:
            return tr("Ranks");
        case SlowestRankColumn:
            return tr("Slowest\nrank");
        case FinishColumn:
            return tr("Finish\nASTRA-sim");
        case EstimatedFinishColumn:
            return tr("Finish\nestimate");
        case FinishRatioColumn:
            return tr("Ratio");
        case ExposedColumn:
            return tr("Exposed comm\nASTRA-sim");
        case EstimatedExposedColumn:
            return tr("Exposed comm\nestimate");
        case ExposedRatioColumn:
            return tr("Ratio");
        default:
            return {};
        }
    }
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case FinishColumn:
            return tr("When the stage's slowest rank finished the iteration in ASTRA-sim");
        case EstimatedFinishColumn:
            return tr("When the stage's last node finishes in our step-time estimate");
        case FinishRatioColumn:
        case ExposedRatioColumn:
            return tr("ASTRA-sim / our estimate");
        case ExposedColumn:
            return tr("ASTRA-sim's exposed communication: finish time minus compute busy time (pipeline waits "
                      "included)");
        case EstimatedExposedColumn:
            return tr("The same measure in our estimate: step time minus compute busy time");
        default:
            return {};
        }
    }
    return {};
}

} // namespace stagecraft
