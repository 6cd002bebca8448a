// SPDX-License-Identifier: MIT
#pragma once

#include <QAbstractTableModel>
#include <memory>
#include <optional>
#include <vector>

namespace stagecraft {

struct StepEstimate;
struct SynthesisResult;

/// A pinned baseline plan next to the current one, one row per figure: step time, MFU and tokens/s (from the
/// step-time estimates), peak memory per rank of every stage, and the bytes per iteration over all ranks of every
/// collective type and of pipeline send/recv. Columns: figure, baseline, current, change (absolute and relative;
/// ForegroundRole green when the current plan is better, red when worse). A figure one side lacks (no estimate yet,
/// a stage only one plan has) shows a dash. RawValueRole holds the double of the baseline and current columns.
///
/// To add a figure, add a row in rebuild(): a name, how to read it from a side, its kind and whether lower is better.
class ComparisonModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column
    {
        FigureColumn,
        BaselineColumn,
        CurrentColumn,
        ChangeColumn,
        ColumnCount
    };
    Q_ENUM(Column)

    enum Role
    {
        RawValueRole = Qt::UserRole,
    };

    /// One plan: its result and its estimate (null while it runs or when it failed).
    struct Side
    {
        std::shared_ptr<const SynthesisResult> result;
        std::shared_ptr<const StepEstimate> estimate;
    };

    explicit ComparisonModel(QObject* parent = nullptr);
    ~ComparisonModel() override;

    /// Sets or (with a null result) clears the baseline.
    void setBaseline(const Side& baseline);
    const Side& baseline() const;
    void setCurrent(const Side& current);
    bool hasBaseline() const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    enum class Kind
    {
        Duration,
        Fraction,
        Rate,
        Bytes,
    };
    struct Row
    {
        QString name;
        Kind kind = Kind::Bytes;
        bool lowerIsBetter = true;
        std::optional<double> baseline;
        std::optional<double> current;
    };

    void rebuild();
    static QString format(Kind kind, double value);
    QString changeText(const Row& row) const;

    Side m_baseline;
    Side m_current;
    std::vector<Row> m_rows;
};

} // namespace stagecraft
