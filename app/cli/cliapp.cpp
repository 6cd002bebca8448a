// SPDX-License-Identifier: MIT
#include "cliapp.h"

#include "command.h"
#include "config/programsize.h"
#include "version.h"

#include <CLI/CLI.hpp>
#include <iostream>

namespace stagecraft::cli {

int run(int argc, char** argv)
{
    CLI::App app { "Stagecraft: synthesize per-GPU execution traces of distributed LLM training", "stagecraft" };
    app.set_version_flag("--version", versionString());
    app.get_formatter()->column_width(32); // the longest flags plus their type stay clear of their description
    app.require_subcommand(1);
    app.footer(
        "Exit codes: 0 ok, 2 bad input (config, flags, file), 1 internal error (for simulate: a run that did not "
        "pass).");
    std::vector<Command> commands;
    commands.push_back(addSynthCommand(app));
    commands.push_back(addReportCommand(app));
    commands.push_back(addSweepCommand(app));
    commands.push_back(addInspectCommand(app));
    commands.push_back(addSimulateCommand(app));
    commands.push_back(addPresetsCommand(app));
    commands.push_back(addImportHfCommand(app));
    commands.push_back(addCalibrateCommand(app));
    commands.push_back(addCompareTraceCommand(app));
    // The program-size limit's message names the flag that raises it (the GUI has no such flag).
    setProgramLimitAdvice("raise the limit with --max-nodes");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? ExitOk : ExitBadInput;
    }
    try {
        for (const Command& c : commands)
            if (c.app && c.app->parsed())
                return c.run();
    } catch (const std::exception& e) {
        std::cerr << "stagecraft: internal error: " << e.what() << "\n";
        return ExitInternal;
    }
    return ExitOk;
}

} // namespace stagecraft::cli
