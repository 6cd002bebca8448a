// SPDX-License-Identifier: MIT
#pragma once

#include "sweep/sweepplan.h"

#include <QAbstractTableModel>
#include <memory>
#include <optional>
#include <vector>

namespace stagecraft {

/// The fitting plans of a sweep, one row per plan in rank order (ascending step time; serving: descending tokens/s
/// per GPU). Keeps the shared result and indexes into it (row = index into `ranked`). DisplayRole is formatted text;
/// SortRole/RawValueRole hold numbers (recompute as 0/1/2 for none/selective/full). Rows on the Pareto front
/// (sweepParetoFront) are bold and answer ParetoRole; the row of the current config's plan answers CurrentRole and
/// has a highlighted background.
///
/// A training sweep has the columns of Column. A serving sweep (SweepResult::serving) has the rank, the plan (dp,
/// tp, pp, cp, ep) and its serving figures, tokens/s per GPU, TPOT, TTFT and peak memory, the measured ones in one
/// unit per column named by the title (SweepServingUnits); the tooltip adds the sequences that fit. column() and
/// field() map between the two.
class SweepModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    /// The columns of a training sweep (and of the empty model).
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
    /// True when the shown sweep is a serving sweep (its columns are the serving ones).
    bool isServing() const;
    /// The column showing `field`, -1 when this sweep has none.
    int column(SweepField field) const;
    /// The plan field of `column`; nullopt for the rank column and out of range.
    std::optional<SweepField> field(int column) const;
    bool isPareto(int row) const;
    /// Rows on the Pareto front by ascending peak memory.
    const std::vector<int>& paretoRows() const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::shared_ptr<const SweepResult> m_result;
    SweepColumns m_columns;
    SweepServingUnits m_units;
    std::vector<int> m_pareto;
    std::vector<bool> m_isPareto;
    int m_currentRow = -1;
};

} // namespace stagecraft
