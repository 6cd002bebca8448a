// SPDX-License-Identifier: MIT
#include "widgets/flowlayout.h"

#include <QHBoxLayout>
#include <QSpacerItem>
#include <QStyle>
#include <QWidget>
#include <algorithm>

namespace stagecraft {

namespace {

    bool isStretch(QLayoutItem* item)
    {
        QSpacerItem* spacer = item->spacerItem();
        return spacer && (spacer->expandingDirections() & Qt::Horizontal);
    }

} // namespace

FlowLayout::FlowLayout(QWidget* parent)
    : QLayout(parent)
{
}

FlowLayout::~FlowLayout()
{
    while (QLayoutItem* item = takeAt(0))
        delete item;
}

void FlowLayout::setSpacing(int spacing)
{
    m_spacing = spacing;
    invalidate();
}

int FlowLayout::spacing() const
{
    if (m_spacing >= 0)
        return m_spacing;
    const QWidget* parent = parentWidget();
    const int fromStyle =
        parent ? parent->style()->pixelMetric(QStyle::PM_LayoutHorizontalSpacing, nullptr, parent) : -1;
    return fromStyle >= 0 ? fromStyle : 6;
}

void FlowLayout::addStretch()
{
    addItem(new QSpacerItem(0, 0, QSizePolicy::Expanding, QSizePolicy::Minimum));
}

void FlowLayout::addSpacing(int size)
{
    addItem(new QSpacerItem(size, 0, QSizePolicy::Fixed, QSizePolicy::Minimum));
}

void FlowLayout::addItem(QLayoutItem* item)
{
    m_items.append(item);
    invalidate();
}

int FlowLayout::count() const
{
    return static_cast<int>(m_items.size());
}

QLayoutItem* FlowLayout::itemAt(int index) const
{
    return index >= 0 && index < m_items.size() ? m_items[index] : nullptr;
}

QLayoutItem* FlowLayout::takeAt(int index)
{
    if (index < 0 || index >= m_items.size())
        return nullptr;
    QLayoutItem* item = m_items.takeAt(index);
    invalidate();
    return item;
}

Qt::Orientations FlowLayout::expandingDirections() const
{
    return {};
}

bool FlowLayout::hasHeightForWidth() const
{
    return true;
}

int FlowLayout::heightForWidth(int width) const
{
    return doLayout(QRect(0, 0, width, 0), false);
}

QSize FlowLayout::minimumSize() const
{
    // As narrow as the widest item: everything else wraps.
    QSize size;
    for (QLayoutItem* item : m_items)
        if (!item->isEmpty() && !item->spacerItem())
            size = size.expandedTo(item->minimumSize());
    const QMargins m = contentsMargins();
    return size + QSize(m.left() + m.right(), m.top() + m.bottom());
}

QSize FlowLayout::sizeHint() const
{
    // Everything on one line.
    int width = 0;
    int height = 0;
    int visible = 0;
    for (QLayoutItem* item : m_items) {
        if (item->isEmpty() && !item->spacerItem())
            continue;
        const QSize hint = item->sizeHint();
        width += hint.width();
        height = std::max(height, hint.height());
        ++visible;
    }
    width += std::max(0, visible - 1) * spacing();
    const QMargins m = contentsMargins();
    return { width + m.left() + m.right(), height + m.top() + m.bottom() };
}

void FlowLayout::setGeometry(const QRect& rect)
{
    QLayout::setGeometry(rect);
    doLayout(rect, true);
}

int FlowLayout::doLayout(const QRect& rect, bool apply) const
{
    const QRect area = rect.marginsRemoved(contentsMargins());
    const int gap = spacing();
    // Break the items into lines first, then place each line (a stretch needs the line's width).
    struct Line
    {
        int first = 0;
        int end = 0;
        int width = 0; ///< of the items and gaps, stretches excluded
        int height = 0;
        int stretches = 0;
    };
    QList<Line> lines;
    Line line;
    bool lineEmpty = true;
    for (int i = 0; i < m_items.size(); ++i) {
        QLayoutItem* item = m_items[i];
        const bool spacer = item->spacerItem() != nullptr;
        if (item->isEmpty() && !spacer)
            continue;
        const int w = isStretch(item) ? 0 : item->sizeHint().width();
        const int needed = lineEmpty ? w : line.width + gap + w;
        if (!lineEmpty && !spacer && needed > area.width()) {
            line.end = i;
            lines.append(line);
            line = Line { i, i, 0, 0, 0 };
            lineEmpty = true;
        }
        if (lineEmpty && spacer) {
            line.first = i + 1; // no spacing or stretch at the start of a line
            continue;
        }
        line.width = lineEmpty ? w : line.width + gap + w;
        line.height = std::max(line.height, spacer ? 0 : item->sizeHint().height());
        line.stretches += isStretch(item) ? 1 : 0;
        lineEmpty = false;
    }
    line.end = static_cast<int>(m_items.size());
    if (!lineEmpty)
        lines.append(line);

    int y = area.top();
    for (const Line& l : std::as_const(lines)) {
        if (apply) {
            const int extra = std::max(0, area.width() - l.width);
            int x = area.left();
            bool first = true;
            for (int i = l.first; i < l.end; ++i) {
                QLayoutItem* item = m_items[i];
                if (item->isEmpty() && !item->spacerItem())
                    continue;
                if (!first)
                    x += gap;
                first = false;
                if (isStretch(item)) {
                    x += l.stretches > 0 ? extra / l.stretches : 0;
                    continue;
                }
                const QSize hint = item->sizeHint();
                const int w = std::min(hint.width(), area.width());
                // Vertically centred on the line, as a QHBoxLayout does.
                const int h = std::min(hint.height(), l.height);
                item->setGeometry(QRect(x, y + (l.height - h) / 2, w, h));
                x += w;
            }
        }
        y += l.height + gap;
    }
    if (!lines.isEmpty())
        y -= gap;
    const QMargins m = contentsMargins();
    return y - area.top() + m.top() + m.bottom();
}

QHBoxLayout* addControlGroup(FlowLayout* flow, QWidget* parent)
{
    auto* group = new QWidget(parent);
    auto* row = new QHBoxLayout(group);
    row->setContentsMargins(0, 0, 0, 0);
    flow->addWidget(group);
    return row;
}

} // namespace stagecraft
