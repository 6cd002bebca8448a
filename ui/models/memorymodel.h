// SPDX-License-Identifier: MIT
#pragma once

#include <QAbstractTableModel>
#include <QColor>
#include <memory>
#include <vector>

namespace stagecraft {

struct SynthesisResult;

/// The buffers of one rank class that are alive at one step of its schedule (the memory chart's cursor), largest
/// first: tensor name (with micro-batch), category, bytes and the steps it is alive from/to. Resident state
/// (weights, gradients, optimizer) is listed too, so the rows always sum to the timeline's total at that step.
/// DisplayRole is formatted text; SortRole/RawValueRole the raw value (qint64 bytes/steps, text for names).
class MemoryModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column
    {
        NameColumn,
        CategoryColumn,
        BytesColumn,
        FromColumn, ///< first step the buffer is alive (0 for resident state)
        ToColumn, ///< last step the buffer is alive
        ColumnCount
    };
    Q_ENUM(Column)

    enum Role
    {
        SortRole = Qt::UserRole,
        RawValueRole,
        BufferRole, ///< the buffer id (int) in ClassProgram::buffers, every column
        CategoryRole, ///< MemoryCategory as int, every column
    };
    Q_ENUM(Role)

    explicit MemoryModel(QObject* parent = nullptr);
    ~MemoryModel() override;

    /// Shows `result` (may be null: an empty table); resets the class to 0 and the step to the class's peak.
    void setResult(std::shared_ptr<const SynthesisResult> result);
    const std::shared_ptr<const SynthesisResult>& result() const;
    /// Selects the rank class (index into SynthesisResult::classes) and moves the step to its peak.
    void setClass(int classIndex);
    int classIndex() const;
    /// Lists the buffers alive at `step` (clamped to the program); -1 shows none.
    void setStep(qint64 step);
    qint64 step() const;
    /// Sum of the listed buffers' bytes.
    qint64 liveBytes() const;

    /// "mb3/L5.mlp.down", "L3.attn.q.weight (gathered)", "L0.mlp.up.weight (optimizer state)",
    /// "mb0/L0.attn.o (all-reduce out)": how the view names buffer `buffer` of class `classIndex`.
    static QString bufferName(const SynthesisResult& result, int classIndex, int buffer);
    /// Chart colour of a MemoryCategory (weights blue, gradients orange, optimizer purple, activations green,
    /// other grey: the tab10 palette of matplotlib/d3).
    static QColor categoryColor(int category);
    /// "weights", "gradients", "optimizer", "activations", "other".
    static QString categoryName(int category);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    void rebuild();
    QVariant rawValue(int row, int column) const;

    std::shared_ptr<const SynthesisResult> m_result;
    int m_class = 0;
    qint64 m_step = -1;
    std::vector<int> m_rows; ///< buffer ids alive at m_step, largest first
    qint64 m_liveBytes = 0;
};

} // namespace stagecraft
