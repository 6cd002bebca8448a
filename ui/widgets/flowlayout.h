// SPDX-License-Identifier: MIT
#pragma once

#include <QLayout>
#include <QList>

class QHBoxLayout;

namespace stagecraft {

/// A layout that places its items left to right and wraps to a new line when the width runs out, as text does
/// (the idea of Qt's Flow Layout example). For rows of controls that must not make a window wider than a laptop's
/// screen: on a wide window they stay on one line. Items keep their size hints; a stretch item (addStretch())
/// pushes the items after it to the right end of its line.
class FlowLayout : public QLayout
{
    Q_OBJECT
public:
    explicit FlowLayout(QWidget* parent = nullptr);
    ~FlowLayout() override;

    /// Space between items on a line and between lines, px (default: the style's layout spacing).
    void setSpacing(int spacing) override;
    int spacing() const override;
    /// An empty item that takes the rest of its line: the items after it go to the right end.
    void addStretch();
    /// Fixed space of `size` px before the next item (dropped at the start of a line).
    void addSpacing(int size);

    void addItem(QLayoutItem* item) override;
    int count() const override;
    QLayoutItem* itemAt(int index) const override;
    QLayoutItem* takeAt(int index) override;
    Qt::Orientations expandingDirections() const override;
    bool hasHeightForWidth() const override;
    int heightForWidth(int width) const override;
    QSize minimumSize() const override;
    QSize sizeHint() const override;
    void setGeometry(const QRect& rect) override;

private:
    /// Lays the items out in `rect` (only measures when `apply` is false); returns the height used.
    int doLayout(const QRect& rect, bool apply) const;

    QList<QLayoutItem*> m_items;
    int m_spacing = -1;
};

/// A row of controls that stays together when `flow` wraps: a widget of `parent` added to `flow`, holding the
/// returned margin-free horizontal layout.
QHBoxLayout* addControlGroup(FlowLayout* flow, QWidget* parent);

} // namespace stagecraft
