// SPDX-License-Identifier: MIT
#include "heatmap/colorscale.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace stagecraft {

namespace {

    // viridisLite::viridis(9) (S. Garnier et al., the R port of matplotlib's viridis by van der Walt and Smith).
    constexpr std::array<QRgb, 9> kViridis { 0x440154, 0x472D7B, 0x3B528B, 0x2C728E, 0x21908C, 0x27AD81, 0x5DC863,
        0xAADC32, 0xFDE725 };

} // namespace

LogColorScale::LogColorScale(double minValue, double maxValue)
    : m_min(minValue)
    , m_max(maxValue)
{
    if (m_min > m_max)
        std::swap(m_min, m_max);
    if (m_max <= 0)
        m_max = 1;
    if (m_min <= 0)
        m_min = m_max / 1e6;
}

double LogColorScale::position(double value) const
{
    if (m_max <= m_min)
        return 1.0;
    if (value <= m_min)
        return 0.0;
    if (value >= m_max)
        return 1.0;
    return (std::log(value) - std::log(m_min)) / (std::log(m_max) - std::log(m_min));
}

double LogColorScale::valueAt(double position) const
{
    position = std::clamp(position, 0.0, 1.0);
    return std::exp(std::log(m_min) + position * (std::log(m_max) - std::log(m_min)));
}

QColor LogColorScale::color(double value) const
{
    return viridis(position(value));
}

std::vector<double> LogColorScale::byteTicks(int maxTicks) const
{
    std::vector<double> candidates;
    // 4^k bytes: 1 B, 4 B, ..., 1 KiB, 4 KiB, 16 KiB, ..., up to 2^62.
    for (int e = 0; e <= 62; e += 2) {
        const double v = std::ldexp(1.0, e);
        if (v >= m_min * (1 - 1e-12) && v <= m_max * (1 + 1e-12))
            candidates.push_back(v);
    }
    if (maxTicks < 1 || candidates.empty())
        return {};
    if (static_cast<int>(candidates.size()) <= maxTicks)
        return candidates;
    // Keep every k-th, preferring whole binary units (2^(10j)) by starting from one of them where possible.
    const size_t stride = (candidates.size() + static_cast<size_t>(maxTicks) - 1) / static_cast<size_t>(maxTicks);
    size_t start = 0;
    for (size_t i = 0; i < std::min(stride, candidates.size()); ++i) {
        const int e = std::ilogb(candidates[i]);
        if (e % 10 == 0) {
            start = i;
            break;
        }
    }
    std::vector<double> ticks;
    for (size_t i = start; i < candidates.size(); i += stride)
        ticks.push_back(candidates[i]);
    return ticks;
}

QColor LogColorScale::viridis(double t)
{
    t = std::clamp(t, 0.0, 1.0);
    const double x = t * static_cast<double>(kViridis.size() - 1);
    const size_t i = std::min(static_cast<size_t>(x), kViridis.size() - 2);
    const double f = x - static_cast<double>(i);
    const QColor a(kViridis[i]);
    const QColor b(kViridis[i + 1]);
    auto mix = [f](int u, int v) { return static_cast<int>(std::lround(u + (v - u) * f)); };
    return QColor(mix(a.red(), b.red()), mix(a.green(), b.green()), mix(a.blue(), b.blue()));
}

} // namespace stagecraft
