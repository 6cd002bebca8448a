// SPDX-License-Identifier: MIT
#include "charts/chartparts.h"

#include <QFrame>
#include <QLabel>
#include <QPalette>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
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
    // As many decimals as the interval has: 2.5-GiB ticks read 2.5, 5.0, 7.5 (not 2, 5, 8), 0.25 reads 0.25.
    for (int decimals = 0; decimals < 3; ++decimals) {
        const double scaled = interval * std::pow(10.0, decimals);
        if (std::abs(scaled - std::round(scaled)) <= 1e-6 * std::max(1.0, scaled))
            return QStringLiteral("%.%1f").arg(decimals);
    }
    return QStringLiteral("%.3f");
}

void setAxisTicks(QValueAxis* axis, double lo, double hi, double interval, const QString& format)
{
    // First an interval wider than both ranges (one label or two), then the range, then the real interval.
    const double wide = std::max({ std::abs(axis->max() - axis->min()), std::abs(hi - lo), interval }) * 2;
    axis->setTickType(QValueAxis::TicksDynamic);
    axis->setTickAnchor(0);
    axis->setTickInterval(wide);
    axis->setLabelFormat(format);
    axis->setRange(lo, hi);
    axis->setTickInterval(interval);
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
