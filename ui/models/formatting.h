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
/// "1,705,216": an exact integer with thousands separators.
QString formatExact(qint64 value);
/// "1 class", "3 classes": `count` with the singular or the plural noun.
QString countNoun(qint64 count, const QString& singular, const QString& plural);

} // namespace stagecraft
