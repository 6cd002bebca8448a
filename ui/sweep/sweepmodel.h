// SPDX-License-Identifier: MIT
#pragma once

#include <QAbstractTableModel>
#include <memory>
#include <vector>

namespace stagecraft {

struct SweepCandidate;
struct SweepResult;

/// The fitting plans of a sweep, one row per plan in rank order (ascending step time). Keeps the shared result and
/// indexes into it (row = index into `ranked`). DisplayRole is formatted text; SortRole/RawValueRole hold numbers
/// (recompute as 0/1/2 for none/selective/full). Rows on the Pareto front (sweepParetoFront) are bold and answer
/// ParetoRole; the row of the current config's plan answers CurrentRole and has a highlighted background.
class SweepModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column
    {
        RankColumn,
        DpColumn,
        TpColumn,
        PpColumn,
        ScheduleColumn,
        CpColumn,
        EpColumn,
        MicroBatchColumn,
        RecomputeColumn,
        ZeroColumn,
        SequenceParallelColumn,
        StepTimeColumn,
        MfuColumn,
        PeakColumn,
        ColumnCount
    };
    enum Role
    {
        SortRole = Qt::UserRole,
        RawValueRole,
        ParetoRole, ///< bool
        CurrentRole, ///< bool
    };

    explicit SweepModel(QObject* parent = nullptr);
    ~SweepModel() override;

    /// Shows `result` (null: empty) and computes its Pareto front.
    void setResult(std::shared_ptr<const SweepResult> result);
    std::shared_ptr<const SweepResult> result() const;
    /// Marks row `row` (-1: none) as the current config's plan.
    void setCurrentRow(int row);
    int currentRow() const;

    /// The plan of `row`, null when out of range.
    const SweepCandidate* candidate(int row) const;
    bool isPareto(int row) const;
    /// Rows on the Pareto front by ascending peak memory.
    const std::vector<int>& paretoRows() const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::shared_ptr<const SweepResult> m_result;
    std::vector<int> m_pareto;
    std::vector<bool> m_isPareto;
    int m_currentRow = -1;
};

} // namespace stagecraft
