// SPDX-License-Identifier: MIT
#include "models/commmatrixmodel.h"

#include "heatmap/colorscale.h"
#include "models/formatting.h"
#include "synthesis/synthesis.h"

namespace stagecraft {

CommMatrixModel::CommMatrixModel(QObject* parent)
    : QAbstractTableModel(parent)
    , m_matrix(std::make_shared<const CommMatrix>())
{
}

CommMatrixModel::~CommMatrixModel() = default;

void CommMatrixModel::setResult(std::shared_ptr<const SynthesisResult> result, const CommMatrixOptions& options)
{
    std::shared_ptr<const CommMatrix> matrix;
    if (result) {
        CommMatrixOptions o = options;
        if (!commGroupingAvailable(*result, o.grouping))
            o.grouping = defaultCommGrouping(*result);
        matrix = std::make_shared<const CommMatrix>(buildCommMatrix(*result, o));
    }
    setMatrix(std::move(result), std::move(matrix));
}

void CommMatrixModel::setMatrix(std::shared_ptr<const SynthesisResult> result, std::shared_ptr<const CommMatrix> matrix)
{
    beginResetModel();
    m_result = std::move(result);
    m_matrix = matrix && m_result ? std::move(matrix) : std::make_shared<const CommMatrix>();
    endResetModel();
}

const std::shared_ptr<const SynthesisResult>& CommMatrixModel::result() const
{
    return m_result;
}

const CommMatrix& CommMatrixModel::matrix() const
{
    return *m_matrix;
}

std::shared_ptr<const CommMatrix> CommMatrixModel::matrixPointer() const
{
    return m_matrix;
}

int CommMatrixModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_matrix->units);
}

int CommMatrixModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_matrix->units);
}

QVariant CommMatrixModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const CommMatrix& m = *m_matrix;
    const double value = m.at(index.row(), index.column());
    switch (role) {
    case Qt::DisplayRole:
        return value > 0 ? formatByteCount(value) : QString();
    case Qt::ToolTipRole:
        return m.cellText(index.row(), index.column());
    case Qt::TextAlignmentRole:
        return int(Qt::AlignRight | Qt::AlignVCenter);
    case SortRole:
    case RawValueRole:
        return value;
    case KindBytesRole: {
        QList<double> kinds;
        for (double b : m.kindsAt(index.row(), index.column()))
            kinds.append(b);
        return QVariant::fromValue(kinds);
    }
    case ScalePositionRole:
        return value > 0 ? LogColorScale(m.minNonZeroCell, m.maxCell).position(value) : 0.0;
    default:
        return {};
    }
}

QVariant CommMatrixModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (section < 0 || section >= m_matrix->units)
        return QAbstractTableModel::headerData(section, orientation, role);
    if (role == Qt::DisplayRole)
        return m_matrix->unitLabel(section);
    if (role == Qt::ToolTipRole)
        return orientation == Qt::Vertical ? tr("sender: %1").arg(m_matrix->unitLabel(section))
                                           : tr("receiver: %1").arg(m_matrix->unitLabel(section));
    return QAbstractTableModel::headerData(section, orientation, role);
}

} // namespace stagecraft
