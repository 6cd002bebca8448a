// SPDX-License-Identifier: MIT
#pragma once

#include <QAbstractTableModel>
#include <memory>

namespace stagecraft {

struct SimulationComparison;

/// One row per rank class (pipeline stage) of an ASTRA-sim run set against our step-time estimate
/// (compareWithEstimate()): ASTRA-sim's finish time of the class's slowest rank, our estimate and the ratio, then
/// the same for exposed communication (finish minus compute busy time on both sides). DisplayRole is formatted
/// text; RawValueRole / SortRole the number (qint64 for counts and ranks, double seconds for times, double for
/// ratios; an invalid QVariant where ASTRA-sim reported no rank of the class).
class SimulationModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column
    {
        StageColumn,
        RanksColumn,
        SlowestRankColumn, ///< the class's rank that finished last in ASTRA-sim
        FinishColumn, ///< ASTRA-sim: when that rank finished
        EstimatedFinishColumn, ///< ClassEstimate::stepTimeS
        FinishRatioColumn, ///< ASTRA-sim / estimate
        ExposedColumn, ///< ASTRA-sim's exposed communication of that rank
        EstimatedExposedColumn, ///< stepTimeS - computeTimeS
        ExposedRatioColumn,
        ColumnCount
    };
    Q_ENUM(Column)

    enum Role
    {
        SortRole = Qt::UserRole,
        RawValueRole,
    };
    Q_ENUM(Role)

    explicit SimulationModel(QObject* parent = nullptr);
    ~SimulationModel() override;

    /// Shows `comparison` (null: an empty table). Keeps the pointer; never copies.
    void setComparison(std::shared_ptr<const SimulationComparison> comparison);
    const std::shared_ptr<const SimulationComparison>& comparison() const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QVariant rawValue(int row, int column) const;

    std::shared_ptr<const SimulationComparison> m_comparison;
};

} // namespace stagecraft
