// SPDX-License-Identifier: MIT
#pragma once

#include <QString>

class QFrame;
class QLabel;
class QValueAxis;
class QWidget;

namespace stagecraft {

// Pieces the Qt Charts views (Memory, Sweep) share.

/// A "nice" tick interval (1, 2, 2.5 or 5 times a power of ten) giving about `ticks` intervals over `range`;
/// 1 for an empty range.
double niceTickInterval(double range, int ticks);
/// The printf format of axis labels for ticks `interval` apart: the decimals the interval has ("%.0f" for 5, "%.1f"
/// for 2.5, "%.2f" for 0.25), at most 3.
QString tickLabelFormat(double interval);
/// Dynamic ticks `interval` apart from 0 over [lo, hi], labelled with `format`. In an order that never lays out
/// more than a few labels: Qt Charts lays out every label of the current range and interval at each of these
/// setters, so a new range under the old interval (0..10,000 steps, 1 apart) would shape thousands of labels.
void setAxisTicks(QValueAxis* axis, double lo, double hi, double interval, const QString& format);
/// The chart and its legend on one white card. The legend is a rich-text label under the chart because QLegend
/// cannot wrap. Reparents both into the returned frame (owned by `parent`).
QFrame* chartCard(QWidget* chart, QLabel* legend, QWidget* parent);

} // namespace stagecraft
