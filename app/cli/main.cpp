// SPDX-License-Identifier: MIT
// stagecraft: the headless command line. Links core only.
#include "cliapp.h"

int main(int argc, char** argv)
{
    return stagecraft::cli::run(argc, argv);
}
