// SPDX-License-Identifier: MIT
#include "sweep/sweepmodel.h"

#include "models/formatting.h"
#include "sweep/sweepplan.h"

#include <QBrush>
#include <QColor>
#include <QFont>

namespace stagecraft {

namespace {

    const QColor kCurrentBackground(0xff, 0xf3, 0xc4);

    QVariant raw(const SweepCandidate& c, int column, int row)
    {
        switch (column) {
        case SweepModel::RankColumn:
            return row + 1;
        case SweepModel::DpColumn:
            return qint64(c.dp);
        case SweepModel::TpColumn:
            return qint64(c.tp);
        case SweepModel::PpColumn:
            return qint64(c.pp);
        case SweepModel::CpColumn:
            return qint64(c.cp);
        case SweepModel::EpColumn:
            return qint64(c.ep);
        case SweepModel::MicroBatchColumn:
            return qint64(c.microBatch);
        case SweepModel::RecomputeColumn:
            return static_cast<int>(c.recompute);
        case SweepModel::ZeroColumn:
            return c.zero;
        case SweepModel::SequenceParallelColumn:
            return c.sequenceParallel;
        case SweepModel::StepTimeColumn:
            return c.stepTimeS;
        case SweepModel::MfuColumn:
            return c.mfu;
        case SweepModel::PeakColumn:
            return qint64(c.peakBytes);
        default:
            return {};
        }
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
        switch (column) {
        case RecomputeColumn:
            return QLatin1String(toString(c.recompute));
        case SequenceParallelColumn:
            return c.sequenceParallel ? tr("yes") : tr("no");
        case StepTimeColumn:
            return formatDuration(c.stepTimeS);
        case MfuColumn:
            return QString(QString::number(c.mfu * 100, 'f', 1) + QStringLiteral(" %"));
        case PeakColumn:
            return formatByteCount(static_cast<double>(c.peakBytes));
        default:
            return raw(c, column, row);
        }
    case SortRole:
    case RawValueRole:
        return raw(c, column, row);
    case ParetoRole:
        return isPareto(row);
    case CurrentRole:
        return row == m_currentRow;
    case Qt::TextAlignmentRole:
        if (column == RecomputeColumn || column == SequenceParallelColumn)
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
    if (role == Qt::DisplayRole) {
        switch (section) {
        case RankColumn:
            return tr("Rank");
        case DpColumn:
            return tr("dp");
        case TpColumn:
            return tr("tp");
        case PpColumn:
            return tr("pp");
        case CpColumn:
            return tr("cp");
        case EpColumn:
            return tr("ep");
        case MicroBatchColumn:
            return tr("mb");
        case RecomputeColumn:
            return tr("Recompute");
        case ZeroColumn:
            return tr("ZeRO");
        case SequenceParallelColumn:
            return tr("SP");
        case StepTimeColumn:
            return tr("Step time");
        case MfuColumn:
            return tr("MFU");
        case PeakColumn:
            return tr("Peak memory");
        default:
            return {};
        }
    }
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case RankColumn:
            return tr("Position by ascending step time");
        case DpColumn:
            return tr("Data-parallel degree");
        case TpColumn:
            return tr("Tensor-parallel degree");
        case PpColumn:
            return tr("Pipeline-parallel degree (stages)");
        case CpColumn:
            return tr("Context-parallel degree");
        case EpColumn:
            return tr("Expert-parallel degree (MoE models)");
        case MicroBatchColumn:
            return tr("Micro-batch size (sequences per micro-batch per replica)");
        case RecomputeColumn:
            return tr("Activation recomputation");
        case ZeroColumn:
            return tr("ZeRO stage (3 = FSDP)");
        case SequenceParallelColumn:
            return tr("Sequence parallelism alongside tensor parallelism");
        case StepTimeColumn:
            return tr("Estimated iteration time");
        case MfuColumn:
            return tr("Model FLOPs utilization");
        case PeakColumn:
            return tr("Peak memory of the fullest GPU");
        default:
            return {};
        }
    }
    return {};
}

} // namespace stagecraft
