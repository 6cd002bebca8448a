// SPDX-License-Identifier: MIT
#include "widgets/int64spinbox.h"

#include <QLineEdit>
#include <QStyle>
#include <QStyleOptionSpinBox>
#include <limits>

namespace stagecraft {

Int64SpinBox::Int64SpinBox(QWidget* parent)
    : QAbstractSpinBox(parent)
{
    setAlignment(Qt::AlignRight | Qt::AlignVCenter);
    setAccelerated(true);
    updateText();
    connect(lineEdit(), &QLineEdit::textEdited, this, &Int64SpinBox::onTextEdited);
    connect(this, &QAbstractSpinBox::editingFinished, this, &Int64SpinBox::updateText);
}

Int64SpinBox::~Int64SpinBox() = default;

qint64 Int64SpinBox::value() const
{
    return m_value;
}

qint64 Int64SpinBox::minimum() const
{
    return m_minimum;
}

qint64 Int64SpinBox::maximum() const
{
    return m_maximum;
}

void Int64SpinBox::setRange(qint64 minimum, qint64 maximum)
{
    m_minimum = minimum;
    m_maximum = std::max(minimum, maximum);
    updateGeometry();
    setValue(m_value);
}

void Int64SpinBox::setSingleStep(qint64 step)
{
    m_singleStep = std::max<qint64>(1, step);
}

void Int64SpinBox::setStepMode(StepMode mode)
{
    m_stepMode = mode;
}

void Int64SpinBox::setValue(qint64 value)
{
    value = std::clamp(value, m_minimum, m_maximum);
    if (value == m_value) {
        updateText();
        return;
    }
    m_value = value;
    updateText();
    Q_EMIT valueChanged(m_value);
}

void Int64SpinBox::stepBy(int steps)
{
    qint64 value = m_value;
    for (int i = 0; i < std::abs(steps); ++i) {
        if (m_stepMode == StepMode::Doubling) {
            if (steps > 0)
                value = value > m_maximum / 2 ? m_maximum : std::max<qint64>(1, value * 2);
            else
                value /= 2;
        } else if (steps > 0) {
            value = value > m_maximum - m_singleStep ? m_maximum : value + m_singleStep;
        } else {
            value = value < m_minimum + m_singleStep ? m_minimum : value - m_singleStep;
        }
    }
    setValue(value);
    selectAll();
}

QAbstractSpinBox::StepEnabled Int64SpinBox::stepEnabled() const
{
    StepEnabled enabled = StepNone;
    if (m_value > m_minimum)
        enabled |= StepDownEnabled;
    if (m_value < m_maximum)
        enabled |= StepUpEnabled;
    return enabled;
}

bool Int64SpinBox::parse(const QString& text, qint64& value) const
{
    if (!specialValueText().isEmpty() && text == specialValueText()) {
        value = m_minimum;
        return true;
    }
    QString digits = text.trimmed();
    digits.remove(QLatin1Char(',')).remove(QLatin1Char('_'));
    bool ok = false;
    value = digits.toLongLong(&ok);
    return ok;
}

QValidator::State Int64SpinBox::validate(QString& input, int& /*pos*/) const
{
    if (!specialValueText().isEmpty() && input == specialValueText())
        return QValidator::Acceptable;
    const QString trimmed = input.trimmed();
    if (trimmed.isEmpty() || trimmed == QLatin1String("-"))
        return QValidator::Intermediate;
    qint64 value = 0;
    if (!parse(trimmed, value))
        return QValidator::Invalid;
    if (value > m_maximum && value > 0)
        return QValidator::Invalid;
    return value < m_minimum ? QValidator::Intermediate : QValidator::Acceptable;
}

void Int64SpinBox::fixup(QString& input) const
{
    input = displayText(m_value);
}

void Int64SpinBox::onTextEdited(const QString& text)
{
    qint64 value = 0;
    if (parse(text, value) && value >= m_minimum && value <= m_maximum && value != m_value) {
        m_value = value;
        Q_EMIT valueChanged(m_value);
    }
}

QString Int64SpinBox::displayText(qint64 value) const
{
    return value == m_minimum && !specialValueText().isEmpty() ? specialValueText() : QString::number(value);
}

void Int64SpinBox::updateText()
{
    const QString text = displayText(m_value);
    if (lineEdit()->text() != text)
        lineEdit()->setText(text);
    update(); // the step arrows' enabled state follows the value
}

QSize Int64SpinBox::sizeHint() const
{
    ensurePolished();
    const QFontMetrics metrics = fontMetrics();
    const int digits = static_cast<int>(std::min<qint64>(QString::number(m_maximum).size(), 10));
    const int width = metrics.horizontalAdvance(QString(digits + 1, QLatin1Char('0')));
    QStyleOptionSpinBox option;
    initStyleOption(&option);
    const QSize content(width, lineEdit()->sizeHint().height());
    return style()->sizeFromContents(QStyle::CT_SpinBox, &option, content, this);
}

QSize Int64SpinBox::minimumSizeHint() const
{
    // Room for 7 digits: a narrow panel (the configuration dock at 1366 x 768) may shrink the field below its
    // preferred width rather than push it past the panel's edge, where its digits would be cut off.
    ensurePolished();
    const int width = fontMetrics().horizontalAdvance(QString(7, QLatin1Char('0')));
    QStyleOptionSpinBox option;
    initStyleOption(&option);
    const QSize content(width, lineEdit()->sizeHint().height());
    return style()->sizeFromContents(QStyle::CT_SpinBox, &option, content, this).boundedTo(sizeHint());
}

} // namespace stagecraft
