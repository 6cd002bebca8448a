// SPDX-License-Identifier: MIT
#pragma once

namespace stagecraft {
/// The program version, e.g. "0.1.0". Static storage; thread-safe.
const char* versionString();
} // namespace stagecraft
