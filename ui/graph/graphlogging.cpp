// SPDX-License-Identifier: MIT
#include "graph/graphlogging.h"

namespace stagecraft {

Q_LOGGING_CATEGORY(lcGraph, "stagecraft.graph", QtWarningMsg)

} // namespace stagecraft
