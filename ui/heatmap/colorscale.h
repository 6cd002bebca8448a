// SPDX-License-Identifier: MIT
#pragma once

#include <QColor>
#include <vector>

namespace stagecraft {

/// A logarithmic colour scale over [minValue, maxValue] (both > 0) onto the viridis colour map (perceptually
/// uniform, readable in grey and by colour-blind readers). Plain value; thread-safe to use from workers.
class LogColorScale
{
public:
    LogColorScale() = default;
    /// Non-positive or inverted bounds are repaired: min <= 0 becomes max / 1e6, min > max is swapped.
    LogColorScale(double minValue, double maxValue);

    double minValue() const
    {
        return m_min;
    }
    double maxValue() const
    {
        return m_max;
    }
    /// Position of `value` in [0, 1]: (log v - log min) / (log max - log min), clamped; 1 when min == max.
    double position(double value) const;
    /// The value at `position` (the inverse of position() inside [0, 1]).
    double valueAt(double position) const;
    /// viridis(position(value)).
    QColor color(double value) const;
    /// Tick values for a legend: powers of two of bytes that are also "round" binary units (1, 4, 16, ... B, 1 KiB,
    /// 4 KiB, ...), thinned to at most `maxTicks` evenly spaced in log, all within [min, max]. May be empty when the
    /// range is narrower than a factor of 4.
    std::vector<double> byteTicks(int maxTicks) const;

    /// The viridis colour map at t in [0, 1] (clamped), linear between the nine samples of viridisLite's
    /// viridis(9): #440154 #472D7B #3B528B #2C728E #21908C #27AD81 #5DC863 #AADC32 #FDE725.
    static QColor viridis(double t);

private:
    double m_min = 1;
    double m_max = 1;
};

} // namespace stagecraft
