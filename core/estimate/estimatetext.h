// SPDX-License-Identifier: MIT
#pragma once

#include <string>

namespace stagecraft {

/// Seconds as the estimate's texts print them: "1.234 s" from one second up, "12.345 ms" from a millisecond up,
/// else "56.7 us". Pure.
std::string secondsText(double seconds);

/// Bytes in binary units with one decimal: "93.1 GiB", "7.6 MiB", "0.5 KiB". Pure.
std::string bytesText(double bytes);

} // namespace stagecraft
