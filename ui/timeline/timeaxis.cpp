// SPDX-License-Identifier: MIT
#include "timeline/timeaxis.h"

#include "models/formatting.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace stagecraft {

TimeAxis TimeAxis::zoomed(double factor, double anchorX, double minSpanS, double maxSpanS) const
{
    TimeAxis a = *this;
    if (!(factor > 0))
        return a;
    const double anchorS = time(anchorX);
    a.spanS = std::clamp(spanS / factor, minSpanS, std::max(minSpanS, maxSpanS));
    a.startS = anchorS - (anchorX - left) / width * a.spanS;
    return a;
}

TimeAxis TimeAxis::panned(double dx) const
{
    TimeAxis a = *this;
    a.startS -= dx * pixelS();
    return a;
}

TimeAxis TimeAxis::clamped(double totalS) const
{
    TimeAxis a = *this;
    a.startS = std::clamp(a.startS, -0.9 * a.spanS, std::max(-0.9 * a.spanS, totalS - 0.1 * a.spanS));
    return a;
}

double tickStep(double spanS, int maxTicks)
{
    if (!(spanS > 0) || maxTicks < 1)
        return 0;
    const double raw = spanS / maxTicks;
    const double decade = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : { 1.0, 2.0, 5.0, 10.0 })
        if (m * decade >= raw * (1 - 1e-12))
            return m * decade;
    return 10 * decade;
}

std::vector<double> tickTimes(double startS, double endS, double stepS)
{
    std::vector<double> ticks;
    if (!(stepS > 0) || endS < startS)
        return ticks;
    const double first = std::ceil(startS / stepS - 1e-9);
    for (double k = first; k * stepS <= endS + stepS * 1e-9 && ticks.size() < 10000; k += 1)
        ticks.push_back(k * stepS);
    return ticks;
}

QString formatTickTime(double timeS, double stepS)
{
    if (std::abs(timeS) < stepS * 1e-6)
        return QStringLiteral("0");
    // The unit of ten steps: 200 µs steps read "1.2 ms", 50 µs steps "250 µs".
    const DurationUnit unit = durationUnitFor(stepS * 10);
    const double stepInUnit = stepS / unit.seconds;
    // A step of 1, 2 or 5 times 10^k needs -k decimals when k < 0.
    const int decimals = std::max(0, static_cast<int>(std::ceil(-std::log10(stepInUnit) - 1e-9)));
    return QString::number(timeS / unit.seconds, 'f', decimals) + QString::fromUtf8(unit.suffix);
}

} // namespace stagecraft
