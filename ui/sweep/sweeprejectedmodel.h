// SPDX-License-Identifier: MIT
#pragma once

#include "sweep/sweepplan.h"

#include <QAbstractItemModel>
#include <memory>
#include <optional>
#include <vector>

namespace stagecraft {

/// The rejected plans of a sweep as a two-level tree: one top-level row per reason (SweepCandidate::reasonKey;
/// out of memory first, then by descending count), its plans as children in enumeration order. Column 0 holds the
/// group's name and count, or the plan's reason. Keeps the shared result and indexes into it. A serving sweep has
/// the serving columns (the plan, tokens/s per GPU, TPOT, TTFT, peak memory, as SweepModel) and a group of the
/// plans over the TPOT limit; column() and field() map between columns and fields.
class SweepRejectedModel : public QAbstractItemModel
{
    Q_OBJECT
public:
    /// The columns of a training sweep (and of the empty model).
    enum Column
    {
        ReasonColumn,
        DpColumn,
        TpColumn,
        PpColumn,
        ScheduleColumn,
        CpColumn,
        EpColumn,
        MicroBatchColumn,
        RecomputeColumn,
        ZeroColumn,
        StepTimeColumn,
        PeakColumn,
        ColumnCount
    };
    enum Role
    {
        SortRole = Qt::UserRole,
        RawValueRole,
        RejectedIndexRole, ///< index into SweepResult::rejected (plans), -1 (groups)
    };

    explicit SweepRejectedModel(QObject* parent = nullptr);
    ~SweepRejectedModel() override;

    void setResult(std::shared_ptr<const SweepResult> result);
    std::shared_ptr<const SweepResult> result() const;

    /// The reason keys of the groups, in row order.
    QStringList groupKeys() const;
    /// The plan of `index` (a child row), null for groups.
    const SweepCandidate* candidate(const QModelIndex& index) const;
    /// Index into SweepResult::rejected of `index`'s plan, -1 for groups.
    int rejectedIndex(const QModelIndex& index) const;
    /// The column showing `field`, -1 when this sweep has none.
    int column(SweepField field) const;
    /// The plan field of `column`; nullopt for the reason column and out of range.
    std::optional<SweepField> field(int column) const;

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Group
    {
        QString key;
        std::vector<int> members; ///< indices into SweepResult::rejected
    };

    std::shared_ptr<const SweepResult> m_result;
    SweepColumns m_columns;
    SweepServingUnits m_units;
    std::vector<Group> m_groups;
};

} // namespace stagecraft
