// SPDX-License-Identifier: MIT
#pragma once

#include <QString>
#include <QtGlobal>

namespace stagecraft {

// Display text for figures shown in the views. All of them are deterministic (C locale) so that screenshots and
// tests do not depend on the user's locale.

/// "8.03 B" (parameters; K, M, B, T steps of 1000).
QString formatParameterCount(double count);
/// "1.23 PFLOP" (SI prefixes of 1000).
QString formatFlopCount(double flops);
/// "1.50 GiB" (binary prefixes), "0 B" for zero.
QString formatByteCount(double bytes);
/// A time unit for display: its length in seconds and its suffix (" ns", " \u00b5s", " ms", " s").
struct DurationUnit
{
    double seconds;
    const char* suffix;
};
/// The largest of ns, µs, ms and s not above `seconds` (ns for anything smaller).
DurationUnit durationUnitFor(double seconds);
/// A duration with three significant digits: "850 ns", "12.3 µs", "1.24 ms", "3.20 s", "123 s"; "0 s" for zero. A
/// value that rounds up into the next unit or decade takes that form ("999.7 µs" -> "1.00 ms", "9.996 s" ->
/// "10.0 s").
QString formatDuration(double seconds);
/// "1,705,216": an exact integer with thousands separators.
QString formatExact(qint64 value);
/// "1 class", "3 classes": `count` with the singular or the plural noun.
QString countNoun(qint64 count, const QString& singular, const QString& plural);
/// The micro-batches a compressed result's programs hold: "micro-batches 1\u20134 of 1,024" (where room is short,
/// e.g. an axis title).
QString keptMicroBatchesRange(qint64 kept, qint64 total);
/// The same with what the others do: "micro-batches 1\u20134 of 1,024 drawn (5\u20131,024 repeat the steady state)".
/// The views that draw the programs (Memory, Timeline, Graph) say so next to what they draw.
QString keptMicroBatchesText(qint64 kept, qint64 total);

} // namespace stagecraft
