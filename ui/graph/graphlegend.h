// SPDX-License-Identifier: MIT
#pragma once

#include <QWidget>

namespace stagecraft {

/// A key to the graph's shapes, colours and edge styles, drawn with GraphStyle in two columns.
class GraphLegend : public QWidget
{
    Q_OBJECT
public:
    explicit GraphLegend(QWidget* parent = nullptr);
    ~GraphLegend() override;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;
};

} // namespace stagecraft
