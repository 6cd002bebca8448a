// SPDX-License-Identifier: MIT
#pragma once

#include <QString>
#include <vector>

namespace stagecraft {

/// The time <-> x mapping of the timeline: the interval [startS, startS + spanS] fills the plot columns
/// [left, left + width). Plain value; the chart and its tests share it (STYLE §3 "per-rank timelines").
struct TimeAxis
{
    double startS = 0; ///< time at the plot's left edge, seconds
    double spanS = 1; ///< time across the plot, seconds (> 0)
    double left = 0; ///< x of the plot's left edge, pixels
    double width = 1; ///< plot width, pixels (> 0)

    double x(double timeS) const
    {
        return left + (timeS - startS) / spanS * width;
    }
    double time(double px) const
    {
        return startS + (px - left) / width * spanS;
    }
    /// Seconds per pixel.
    double pixelS() const
    {
        return spanS / width;
    }
    double endS() const
    {
        return startS + spanS;
    }

    /// Zoomed by `factor` (> 1 zooms in) around the pixel `anchorX`, whose time stays put. The span is clamped to
    /// [minSpanS, maxSpanS].
    TimeAxis zoomed(double factor, double anchorX, double minSpanS, double maxSpanS) const;
    /// Moved by `dx` pixels (positive: the content moves right, earlier times come into view).
    TimeAxis panned(double dx) const;
    /// The start clamped so that at least a tenth of the view overlaps [0, totalS].
    TimeAxis clamped(double totalS) const;
};

/// The tick step for `spanS` seconds: the smallest 1, 2 or 5 times a power of ten that puts at most `maxTicks`
/// ticks across the span. 0 for an empty span or maxTicks < 1.
double tickStep(double spanS, int maxTicks);
/// The multiples of `stepS` within [startS, endS], ascending.
std::vector<double> tickTimes(double startS, double endS, double stepS);
/// A tick label: `timeS` in the largest unit (ns, µs, ms, s) not above ten steps, with as many decimals as the step
/// needs: "0", "250 µs", "1.2 ms" (200 µs steps), "12 s". C locale.
QString formatTickTime(double timeS, double stepS);

} // namespace stagecraft
