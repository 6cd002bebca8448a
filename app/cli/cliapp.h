// SPDX-License-Identifier: MIT
#pragma once

namespace stagecraft::cli {

/// Exit codes (README.md, Command-line reference): 0 ok, 2 bad input (config, flags, file), 1 internal error.
enum ExitCode
{
    ExitOk = 0,
    ExitInternal = 1,
    ExitBadInput = 2
};

/// Parses the command line and runs the chosen command. Never throws.
int run(int argc, char** argv);

} // namespace stagecraft::cli
