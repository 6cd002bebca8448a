// SPDX-License-Identifier: MIT
#pragma once

namespace stagecraft {
/// The program version, e.g. "0.1.0" (the CMake project version). Static storage; thread-safe.
inline const char* versionString()
{
    return STAGECRAFT_VERSION;
}
} // namespace stagecraft
