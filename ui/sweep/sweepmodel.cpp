// SPDX-License-Identifier: MIT
#include "sweep/sweepmodel.h"

#include "models/formatting.h"

#include <QBrush>
#include <QColor>
#include <QFont>

namespace stagecraft {

namespace {

    const QColor kCurrentBackground(0xff, 0xf3, 0xc4);

    static_assert(SweepModel::PeakColumn - SweepModel::DpColumn == static_cast<int>(SweepField::Peak)
            && SweepModel::PeakColumn + 1 == SweepModel::ColumnCount,
        "the training columns after RankColumn are the SweepField values Dp to Peak in order");

    std::vector<SweepField> trainingFields()
    {
        std::vector<SweepField> fields;
        for (int f = 0; f <= static_cast<int>(SweepField::Peak); ++f)
            fields.push_back(static_cast<SweepField>(f));
        return fields;
    }

} // namespace

SweepModel::SweepModel(QObject* parent)
    : QAbstractTableModel(parent)
    , m_columns(trainingFields())
{
}

SweepModel::~SweepModel() = default;

void SweepModel::setResult(std::shared_ptr<const SweepResult> result)
{
    beginResetModel();
    m_result = std::move(result);
    const bool serving = m_result && m_result->serving;
    m_columns = serving ? SweepColumns::serving() : SweepColumns(trainingFields());
    m_units = serving ? sweepServingUnits(*m_result) : SweepServingUnits {};
    m_pareto = m_result ? sweepParetoFront(*m_result) : std::vector<int> {};
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
            Q_EMIT dataChanged(index(r, 0), index(r, columnCount() - 1), { Qt::BackgroundRole, CurrentRole });
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

bool SweepModel::isServing() const
{
    return m_result && m_result->serving;
}

int SweepModel::column(SweepField field) const
{
    return m_columns.column(field);
}

std::optional<SweepField> SweepModel::field(int column) const
{
    return m_columns.field(column);
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
    return parent.isValid() ? 0 : m_columns.count();
}

QVariant SweepModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const int row = index.row();
    const int column = index.column();
    const SweepCandidate& c = *candidate(row);
    const std::optional<SweepField> f = field(column);
    switch (role) {
    case Qt::DisplayRole:
        if (f)
            return isServing() ? sweepServingDisplay(c, *f, m_units) : sweepFieldDisplay(c, *f);
        return row + 1;
    case SortRole:
    case RawValueRole:
        return f ? sweepFieldValue(c, *f) : QVariant(row + 1);
    case ParetoRole:
        return isPareto(row);
    case CurrentRole:
        return row == m_currentRow;
    case Qt::TextAlignmentRole:
        if (f && sweepFieldIsText(*f))
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
        QString tip = sweepPlanText(c, isServing());
        if (isServing())
            tip += QLatin1Char('\n')
                + tr("%1 output tokens/s per GPU (the decode alone: %2) \u00b7 TPOT %3 \u00b7 TTFT %4 \u00b7 up to %5 "
                     "sequences fit")
                      .arg(QString::number(c.tokensPerSPerGpu, 'f', 1),
                          QString::number(c.decodeTokensPerSPerGpu, 'f', 1), formatDuration(c.tpotS),
                          formatDuration(c.ttftS), formatExact(c.maxSequences));
        if (isPareto(row))
            tip += QLatin1Char('\n')
                + (isServing() ? tr("On the Pareto front: no fitting plan has both a lower TPOT and a higher "
                                    "throughput.")
                               : tr("On the Pareto front: no fitting plan is both faster and smaller."));
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
    if (orientation != Qt::Horizontal || section < 0 || section >= columnCount())
        return {};
    const std::optional<SweepField> f = field(section);
    if (role == Qt::DisplayRole) {
        if (!f)
            return tr("Rank");
        return isServing() ? sweepServingTitle(*f, m_units) : sweepFieldTitle(*f);
    }
    if (role == Qt::ToolTipRole) {
        if (f)
            return sweepFieldToolTip(*f);
        return isServing() ? tr("Position by descending output tokens/s per GPU")
                           : tr("Position by ascending step time");
    }
    return {};
}

} // namespace stagecraft
