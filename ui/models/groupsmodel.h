// SPDX-License-Identifier: MIT
#pragma once

#include <QAbstractTableModel>
#include <array>
#include <memory>
#include <vector>

namespace stagecraft {

struct SynthesisResult;

/// One row per communicator group of a result (GroupTable, in id order): id, axes, size, the pipeline stage its
/// members belong to, the first members, and the collectives each member issues in it per iteration (count and
/// summed comm_size, from the class program). DisplayRole is formatted text, SortRole/RawValueRole raw values.
class GroupsModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column
    {
        IdColumn,
        AxesColumn,
        SizeColumn,
        StageColumn,
        MembersColumn,
        CollectivesColumn,
        BytesColumn, ///< summed comm_size per member and iteration
        ColumnCount
    };
    Q_ENUM(Column)

    enum Role
    {
        SortRole = Qt::UserRole,
        RawValueRole,
        MaskRole, ///< the group's AxisMask (int), every column
        GroupIndexRole, ///< index of the group within its mask (qint64), every column
        MembersRole, ///< QList<qint64>: all member ranks in ring order, every column
    };
    Q_ENUM(Role)

    /// Members listed in the Members column before "…".
    static constexpr int kMembersShown = 6;

    explicit GroupsModel(QObject* parent = nullptr);
    ~GroupsModel() override;

    /// Shows `result` (may be null: an empty table). Keeps the pointer; per-row text is computed on demand.
    void setResult(std::shared_ptr<const SynthesisResult> result);
    const std::shared_ptr<const SynthesisResult>& result() const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Row
    {
        qint64 id = 0;
        quint8 mask = 0;
        qint64 index = 0;
        qint64 firstMember = -1;
        int stage = 0;
    };
    struct Issued
    {
        std::array<qint64, 4> count {};
        std::array<qint64, 4> bytes {};
        qint64 totalCount = 0;
        qint64 totalBytes = 0;
    };
    const Issued& issued(const Row& row) const;
    QVariant rawValue(const Row& row, int column) const;

    std::shared_ptr<const SynthesisResult> m_result;
    std::vector<Row> m_rows;
    std::vector<Issued> m_issued; ///< [class * 256 + mask]
};

} // namespace stagecraft
