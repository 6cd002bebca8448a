// SPDX-License-Identifier: MIT
#include "estimate/estimatetext.h"

#include <cstdio>

namespace stagecraft {

std::string secondsText(double s)
{
    char buf[32];
    if (s >= 1)
        std::snprintf(buf, sizeof buf, "%.3f s", s);
    else if (s >= 1e-3)
        std::snprintf(buf, sizeof buf, "%.3f ms", s * 1e3);
    else
        std::snprintf(buf, sizeof buf, "%.1f us", s * 1e6);
    return buf;
}

std::string bytesText(double bytes)
{
    char buf[32];
    if (bytes >= 1073741824.0)
        std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / 1073741824.0);
    else if (bytes >= 1048576.0)
        std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / 1048576.0);
    else
        std::snprintf(buf, sizeof buf, "%.1f KiB", bytes / 1024.0);
    return buf;
}

} // namespace stagecraft
