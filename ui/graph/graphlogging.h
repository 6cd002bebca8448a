// SPDX-License-Identifier: MIT
#pragma once

#include <QLoggingCategory>

namespace stagecraft {

Q_DECLARE_LOGGING_CATEGORY(lcGraph)

} // namespace stagecraft
