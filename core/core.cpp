// SPDX-License-Identifier: MIT
// The aggregate `core` library: every area library is linked through it.
#include "version.h"

namespace stagecraft {
const char* versionString()
{
    return "0.1.0";
}
} // namespace stagecraft
