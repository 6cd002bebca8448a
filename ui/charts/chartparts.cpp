// SPDX-License-Identifier: MIT
#include "charts/chartparts.h"

#include <QFrame>
#include <QLabel>
#include <QPalette>
#include <QVBoxLayout>
#include <cmath>

namespace stagecraft {

double niceTickInterval(double range, int ticks)
{
    if (range <= 0)
        return 1;
    const double raw = range / ticks;
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : { 1.0, 2.0, 2.5, 5.0 })
        if (m * magnitude >= raw)
            return m * magnitude;
    return 10 * magnitude;
}

QString tickLabelFormat(double interval)
{
    if (interval >= 1)
        return QStringLiteral("%.0f");
    return interval >= 0.1 ? QStringLiteral("%.1f") : QStringLiteral("%.2f");
}

QFrame* chartCard(QWidget* chart, QLabel* legend, QWidget* parent)
{
    auto* card = new QFrame(parent);
    card->setFrameShape(QFrame::StyledPanel);
    card->setAutoFillBackground(true);
    QPalette cardPalette = card->palette();
    cardPalette.setColor(QPalette::Window, Qt::white);
    card->setPalette(cardPalette);
    auto* cardLayout = new QVBoxLayout(card);
    cardLayout->setContentsMargins(0, 0, 0, 8);
    cardLayout->setSpacing(0);
    cardLayout->addWidget(chart, 1);
    legend->setTextFormat(Qt::RichText);
    legend->setWordWrap(true);
    legend->setAlignment(Qt::AlignHCenter);
    legend->setContentsMargins(12, 0, 12, 0);
    cardLayout->addWidget(legend);
    return card;
}

} // namespace stagecraft
