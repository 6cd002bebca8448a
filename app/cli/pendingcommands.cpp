// SPDX-License-Identifier: MIT
// Commands whose implementation lands in its own file; each weak default is replaced by that file's definition.
#include "command.h"

namespace stagecraft::cli {

__attribute__((weak)) Command addSweepCommand(CLI::App&)
{
    return {};
}

__attribute__((weak)) Command addSimulateCommand(CLI::App&)
{
    return {};
}

} // namespace stagecraft::cli
