// SPDX-License-Identifier: MIT
#pragma once

#include <QAbstractTableModel>
#include <memory>

namespace stagecraft {

struct StepEstimate;
struct SynthesisResult;

/// One row per rank class (pipeline stage) of a result: ranks, compute, node count and communication volume per
/// rank and iteration, and the class's timings from the step-time estimate. DisplayRole is formatted text,
/// RawValueRole/SortRole the exact number (qint64; double seconds or fraction for the estimate columns).
///
/// The estimate is not computed here (it can take a while): whoever owns the model runs estimateStep() in a worker
/// and hands the outcome to setEstimate(). Until then the estimate columns show an ellipsis; after a failed
/// estimate they show a dash and the reason in the tooltip.
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
        /// ClassEstimate::stepTimeS: when the class's last node finishes (seconds).
        StepTimeColumn,
        /// ClassEstimate::exposedCommunicationS: communication not hidden behind compute (seconds).
        ExposedCommColumn,
        /// ClassEstimate::bubbleFraction: idle share of the pipeline period, in [0, 1].
        BubbleColumn,
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

    /// The step-time estimate of `forResult`: `estimate` when it succeeded, else null and `error` says why.
    /// Ignored (returns false) unless `forResult` is the shown result, so a late estimate of a replaced result
    /// never lands. Emits dataChanged for the estimate columns. setResult() clears the estimate.
    bool setEstimate(const std::shared_ptr<const SynthesisResult>& forResult,
        std::shared_ptr<const StepEstimate> estimate, const QString& error = {});
    /// The estimate of the shown result; null while it runs or after it failed.
    const std::shared_ptr<const StepEstimate>& estimate() const;
    /// Why the estimate of the shown result failed; empty while it runs or after it succeeded.
    QString estimateError() const;
    /// True from setResult() with a result until setEstimate() for it.
    bool isEstimatePending() const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QVariant rawValue(int row, int column) const;
    QString displayText(int row, int column) const;

    int64_t hbmBytes() const;
    bool exceedsHbm(int row) const;
    QVariant estimateTip(int row, int column) const;

    std::shared_ptr<const SynthesisResult> m_result;
    std::shared_ptr<const StepEstimate> m_estimate;
    QString m_estimateError;
    bool m_estimatePending = false;
};

} // namespace stagecraft
