// SPDX-License-Identifier: MIT
#include "models/formatting.h"

#include "report/report.h"

#include <QLocale>
#include <array>
#include <cmath>

namespace stagecraft {

namespace {

    QString scaled(double value, const std::array<const char*, 7>& suffixes, double base)
    {
        size_t i = 0;
        while (std::abs(value) >= base && i + 1 < suffixes.size()) {
            value /= base;
            ++i;
        }
        if (i == 0)
            return QString::number(value, 'f', 0) + QLatin1String(suffixes[0]);
        return QString::number(value, 'f',
                   std::abs(value) < 10        ? 2
                       : std::abs(value) < 100 ? 1
                                               : 0)
            + QLatin1String(suffixes[i]);
    }

    constexpr std::array<DurationUnit, 4> kDurationUnits { { { 1e-9, " ns" }, { 1e-6, " \u00b5s" }, { 1e-3, " ms" },
        { 1, " s" } } };

} // namespace

DurationUnit durationUnitFor(double seconds)
{
    DurationUnit unit = kDurationUnits.front();
    for (const DurationUnit& u : kDurationUnits)
        if (seconds >= u.seconds * (1 - 1e-9))
            unit = u;
    return unit;
}

QString formatDuration(double seconds)
{
    if (seconds == 0)
        return QStringLiteral("0 s");
    DurationUnit unit = durationUnitFor(std::abs(seconds));
    // 999.7 µs rounds to "1000 µs" with three digits: say "1.00 ms" instead.
    if (std::abs(seconds) / unit.seconds >= 999.5 && unit.seconds < 1)
        unit = durationUnitFor(unit.seconds * 1000);
    const double v = seconds / unit.seconds;
    const double a = std::abs(v);
    // Decimals by the rounded magnitude, so 9.996 reads "10.0", not "10.00".
    return QString::number(v, 'f', a >= 99.95 ? 0 : a >= 9.995 ? 1 : 2) + QString::fromUtf8(unit.suffix);
}

QString formatParameterCount(double count)
{
    return scaled(count, { "", " K", " M", " B", " T", " Q", " ?" }, 1000);
}

QString formatFlopCount(double flops)
{
    QString text = QString::fromStdString(formatCount(flops));
    if (!text.isEmpty() && text.back().isDigit())
        text += QLatin1Char(' '); // "512 FLOP" below the first prefix, "1.23 PFLOP" above it
    return text + QStringLiteral("FLOP");
}

QString formatByteCount(double bytes)
{
    if (bytes == 0)
        return QStringLiteral("0 B");
    return QString::fromStdString(formatBytes(bytes));
}

QString formatExact(qint64 value)
{
    QLocale locale(QLocale::English, QLocale::UnitedStates);
    return locale.toString(value);
}

QString countNoun(qint64 count, const QString& singular, const QString& plural)
{
    return formatExact(count) + QLatin1Char(' ') + (count == 1 ? singular : plural);
}

QString keptMicroBatchesRange(qint64 kept, qint64 total)
{
    return QStringLiteral("micro-batches 1\u2013%1 of %2").arg(formatExact(kept), formatExact(total));
}

QString keptMicroBatchesText(qint64 kept, qint64 total)
{
    return keptMicroBatchesRange(kept, total)
        + QStringLiteral(" drawn (%1\u2013%2 repeat the steady state)").arg(formatExact(kept + 1), formatExact(total));
}

} // namespace stagecraft
