// SPDX-License-Identifier: MIT
#pragma once

#include "heatmap/commmatrix.h"

#include <QAbstractTableModel>
#include <memory>

namespace stagecraft {

struct SynthesisResult;

/// The communication matrix as a units x units table (row = sender, column = receiver; units are ranks, nodes or
/// mesh coordinates, see CommMatrixOptions) for the heatmap's tooltips, a table view and export. DisplayRole is the
/// formatted byte count, ToolTipRole the pair with its per-type breakdown, RawValueRole/SortRole the bytes (double).
/// The matrix itself is built by buildCommMatrix(), on a worker by CommView, or here by setResult().
class CommMatrixModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Role
    {
        SortRole = Qt::UserRole,
        RawValueRole,
        /// QList<double> of bytes per CommKind (all-reduce, all-gather, reduce-scatter, all-to-all, send/recv).
        KindBytesRole,
        /// Fraction of the largest cell in [0, 1] on the log colour scale of the heatmap (0 for empty cells).
        ScalePositionRole,
    };
    Q_ENUM(Role)

    explicit CommMatrixModel(QObject* parent = nullptr);
    ~CommMatrixModel() override;

    /// Builds the matrix of `result` (may be null: an empty table) with `options` on the calling thread.
    /// When the grouping is not available for this result, defaultCommGrouping() is used instead.
    void setResult(std::shared_ptr<const SynthesisResult> result, const CommMatrixOptions& options = {});
    /// Shows a matrix built elsewhere (a worker) for `result`.
    void setMatrix(std::shared_ptr<const SynthesisResult> result, std::shared_ptr<const CommMatrix> matrix);
    const std::shared_ptr<const SynthesisResult>& result() const;
    /// The shown matrix; never null (an empty matrix without a result).
    const CommMatrix& matrix() const;
    std::shared_ptr<const CommMatrix> matrixPointer() const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::shared_ptr<const SynthesisResult> m_result;
    std::shared_ptr<const CommMatrix> m_matrix;
};

} // namespace stagecraft
