// SPDX-License-Identifier: MIT
#pragma once

#include <QAbstractSpinBox>

namespace stagecraft {

/// A spin box over the full qint64 range (QSpinBox stops at 2^31 - 1). Steps either add a fixed amount or, for
/// parallel degrees and batch sizes, double and halve the value.
class Int64SpinBox : public QAbstractSpinBox
{
    Q_OBJECT
public:
    enum class StepMode
    {
        Linear,
        Doubling
    };

    explicit Int64SpinBox(QWidget* parent = nullptr);
    ~Int64SpinBox() override;

    qint64 value() const;
    qint64 minimum() const;
    qint64 maximum() const;
    void setRange(qint64 minimum, qint64 maximum);
    void setSingleStep(qint64 step);
    void setStepMode(StepMode mode);

    void stepBy(int steps) override;
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

public Q_SLOTS:
    /// Clamps to the range; emits valueChanged() when the value changes.
    void setValue(qint64 value);

Q_SIGNALS:
    void valueChanged(qint64 value);

protected:
    QValidator::State validate(QString& input, int& pos) const override;
    void fixup(QString& input) const override;
    StepEnabled stepEnabled() const override;

private:
    void onTextEdited(const QString& text);
    void updateText();
    /// The text of `value`: specialValueText() at the minimum when there is one (0 = "auto (4)"), else the digits.
    QString displayText(qint64 value) const;
    bool parse(const QString& text, qint64& value) const;

    qint64 m_value = 0;
    qint64 m_minimum = 0;
    qint64 m_maximum = std::numeric_limits<qint64>::max();
    qint64 m_singleStep = 1;
    StepMode m_stepMode = StepMode::Linear;
};

} // namespace stagecraft
