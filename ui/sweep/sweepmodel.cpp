// SPDX-License-Identifier: MIT
#include "sweep/sweepmodel.h"

#include "models/formatting.h"
#include "sweep/sweepplan.h"

#include <QBrush>
#include <QColor>
#include <QFont>
#include <optional>

namespace stagecraft {

namespace {

    const QColor kCurrentBackground(0xff, 0xf3, 0xc4);

    static_assert(SweepModel::PeakColumn - SweepModel::DpColumn == static_cast<int>(SweepField::Peak)
            && SweepModel::PeakColumn + 1 == SweepModel::ColumnCount,
        "the columns after RankColumn are the SweepField values in order");

    /// The plan field of a column; every column after RankColumn is one, in SweepField order.
    std::optional<SweepField> fieldOf(int column)
    {
        if (column < SweepModel::DpColumn || column >= SweepModel::ColumnCount)
            return std::nullopt;
        return static_cast<SweepField>(column - SweepModel::DpColumn);
    }

    QVariant raw(const SweepCandidate& c, int column, int row)
    {
        if (const auto field = fieldOf(column))
            return sweepFieldValue(c, *field);
        return column == SweepModel::RankColumn ? QVariant(row + 1) : QVariant();
    }

} // namespace

SweepModel::SweepModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

SweepModel::~SweepModel() = default;

void SweepModel::setResult(std::shared_ptr<const SweepResult> result)
{
    beginResetModel();
    m_result = std::move(result);
    m_pareto = m_result ? sweepParetoFront(m_result->ranked) : std::vector<int> {};
    m_isPareto.assign(m_result ? m_result->ranked.size() : 0, false);
    for (int row : m_pareto)
        m_isPareto[static_cast<size_t>(row)] = true;
    m_currentRow = -1;
    endResetModel();
}

std::shared_ptr<const SweepResult> SweepModel::result() const
{
    return m_result;
}

void SweepModel::setCurrentRow(int row)
{
    if (row < -1 || row >= rowCount())
        row = -1;
    if (row == m_currentRow)
        return;
    const int old = m_currentRow;
    m_currentRow = row;
    for (int r : { old, row })
        if (r >= 0)
            Q_EMIT dataChanged(index(r, 0), index(r, ColumnCount - 1), { Qt::BackgroundRole, CurrentRole });
}

int SweepModel::currentRow() const
{
    return m_currentRow;
}

const SweepCandidate* SweepModel::candidate(int row) const
{
    if (!m_result || row < 0 || static_cast<size_t>(row) >= m_result->ranked.size())
        return nullptr;
    return &m_result->ranked[static_cast<size_t>(row)];
}

bool SweepModel::isPareto(int row) const
{
    return row >= 0 && static_cast<size_t>(row) < m_isPareto.size() && m_isPareto[static_cast<size_t>(row)];
}

const std::vector<int>& SweepModel::paretoRows() const
{
    return m_pareto;
}

int SweepModel::rowCount(const QModelIndex& parent) const
{
    if (parent.isValid() || !m_result)
        return 0;
    return static_cast<int>(m_result->ranked.size());
}

int SweepModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant SweepModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const int row = index.row();
    const int column = index.column();
    const SweepCandidate& c = *candidate(row);
    switch (role) {
    case Qt::DisplayRole:
        if (const auto field = fieldOf(column))
            return sweepFieldDisplay(c, *field);
        return raw(c, column, row);
    case SortRole:
    case RawValueRole:
        return raw(c, column, row);
    case ParetoRole:
        return isPareto(row);
    case CurrentRole:
        return row == m_currentRow;
    case Qt::TextAlignmentRole:
        if (const auto field = fieldOf(column); field && sweepFieldIsText(*field))
            return QVariant(Qt::AlignLeft | Qt::AlignVCenter);
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::FontRole:
        if (isPareto(row)) {
            QFont font;
            font.setBold(true);
            return font;
        }
        return {};
    case Qt::BackgroundRole:
        if (row == m_currentRow)
            return QBrush(kCurrentBackground);
        return {};
    case Qt::ToolTipRole: {
        QString tip = sweepPlanText(c);
        if (isPareto(row))
            tip += QLatin1Char('\n') + tr("On the Pareto front: no fitting plan is both faster and smaller.");
        if (row == m_currentRow)
            tip += QLatin1Char('\n') + tr("The current config's plan.");
        return tip;
    }
    default:
        return {};
    }
}

QVariant SweepModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return {};
    const auto field = fieldOf(section);
    if (role == Qt::DisplayRole)
        return field ? sweepFieldTitle(*field) : tr("Rank");
    if (role == Qt::ToolTipRole)
        return field ? sweepFieldToolTip(*field) : tr("Position by ascending step time");
    return {};
}

} // namespace stagecraft
