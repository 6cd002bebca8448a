// SPDX-License-Identifier: MIT
#pragma once

#include <QLabel>

namespace stagecraft {

/// A one-line plain-text label that shrinks below its text: it paints the text elided at the end ("per replica,
/// of 1…") and then shows the whole text as its tooltip (no tooltip while the text is whole). Its size hint is the
/// whole text, its minimum a few characters, so layouts give it room when there is some and never grow a window for it.
class ElidedLabel : public QLabel
{
    Q_OBJECT
public:
    explicit ElidedLabel(QWidget* parent = nullptr);
    explicit ElidedLabel(const QString& text, QWidget* parent = nullptr);
    ~ElidedLabel() override;

    /// Sets the (whole) text; text() returns it.
    void setText(const QString& text);
    /// True when the text is painted shortened.
    bool isElided() const;

    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    void updateToolTip();
};

} // namespace stagecraft
