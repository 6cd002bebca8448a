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

} // namespace

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

} // namespace stagecraft
