// SPDX-License-Identifier: MIT
#pragma once

#include <QAbstractItemModel>
#include <memory>
#include <vector>

namespace stagecraft {

struct SweepCandidate;
struct SweepResult;

/// The rejected plans of a sweep as a two-level tree: one top-level row per reason (SweepCandidate::reasonKey;
/// out of memory first, then by descending count), its plans as children in enumeration order. Column 0 holds the
/// group's name and count, or the plan's reason. Keeps the shared result and indexes into it.
class SweepRejectedModel : public QAbstractItemModel
{
    Q_OBJECT
public:
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
    std::vector<Group> m_groups;
};

} // namespace stagecraft
