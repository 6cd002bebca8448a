// SPDX-License-Identifier: MIT
#pragma once

#include <QAbstractTableModel>
#include <memory>

namespace stagecraft {

struct SynthesisResult;

/// One row per rank class (pipeline stage) of a result: ranks, compute, node count and communication volume per
/// rank and iteration. DisplayRole is formatted text, RawValueRole/SortRole the exact number (qint64).
class OverviewModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column
    {
        StageColumn,
        RanksColumn,
        ExampleRankColumn,
        ComputeColumn,
        NodesColumn,
        AllReduceColumn,
        AllGatherColumn,
        ReduceScatterColumn,
        AllToAllColumn,
        SendColumn,
        RecvColumn,
        /// Peak memory per rank (ClassSummary::peakBytes); "—" while the summary carries no memory figure.
        /// More memory columns (weights, gradients, optimizer, activations) belong after this one.
        PeakMemoryColumn,
        ColumnCount
    };
    Q_ENUM(Column)

    enum Role
    {
        SortRole = Qt::UserRole,
        RawValueRole,
        /// The row's class index into SynthesisResult::classes (int), for every column.
        ClassRole,
        /// Peak memory column: true when the peak exceeds the HBM of the config's GPU (cluster.gpu).
        ExceedsHbmRole,
    };
    Q_ENUM(Role)

    explicit OverviewModel(QObject* parent = nullptr);
    ~OverviewModel() override;

    /// Shows `result` (may be null: an empty table). Keeps the pointer; never copies the result.
    void setResult(std::shared_ptr<const SynthesisResult> result);
    const std::shared_ptr<const SynthesisResult>& result() const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QVariant rawValue(int row, int column) const;
    QString displayText(int row, int column) const;

    int64_t hbmBytes() const;
    bool exceedsHbm(int row) const;

    std::shared_ptr<const SynthesisResult> m_result;
};

} // namespace stagecraft
