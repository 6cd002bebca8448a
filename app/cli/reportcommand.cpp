// SPDX-License-Identifier: MIT
// stagecraft report CONFIG [--json] [--rank R [--dump]]
#include "command.h"
#include "config/presets.h"
#include "program/programdump.h"
#include "report/report.h"

#include <iostream>

namespace stagecraft::cli {

Command addReportCommand(CLI::App& app)
{
    struct State
    {
        ConfigFlags flags;
        bool json = false;
        std::optional<int64_t> rank;
        bool dump = false;
    };
    auto state = std::make_shared<State>();
    CLI::App* cmd = app.add_subcommand("report", "Summarize a workload: parameters, FLOPs, per-class programs, memory");
    state->flags.add(cmd);
    cmd->add_flag("--json", state->json, "Print the report JSON (DESIGN.md §4) instead of text");
    cmd->add_option("--rank", state->rank, "Print one rank's program summary (groups, peers, bytes)");
    cmd->add_flag("--dump", state->dump, "With --rank: print every node of the rank's class program");
    return { cmd, [state]() -> int {
                int exitCode = ExitOk;
                auto result = loadAndSynthesize(state->flags, exitCode);
                if (!result)
                    return exitCode;
                if (state->rank) {
                    const int64_t r = *state->rank;
                    if (r < 0 || r >= result->worldSize()) {
                        std::cerr << "stagecraft: --rank " << r << " is outside 0.." << result->worldSize() - 1 << "\n";
                        return ExitBadInput;
                    }
                    std::cout << rankReportText(*result, RankId { r });
                    if (state->dump)
                        std::cout << dumpProgram(result->classes[static_cast<size_t>(result->classOf(RankId { r }))]);
                } else if (state->json) {
                    std::cout << reportJson(*result).dump(2) << "\n";
                } else {
                    std::cout << reportText(*result);
                }
                return ExitOk;
            } };
}

Command addPresetsCommand(CLI::App& app)
{
    auto json = std::make_shared<bool>(false);
    CLI::App* cmd = app.add_subcommand("presets", "List the built-in presets");
    cmd->add_flag("--json", *json, "Print the list as JSON");
    return { cmd, [json]() -> int {
                if (*json) {
                    nlohmann::ordered_json j = nlohmann::ordered_json::array();
                    for (const std::string& name : presetNames())
                        j.push_back({ { "name", name }, { "summary", presetSummary(name) } });
                    std::cout << j.dump(2) << "\n";
                } else {
                    for (const std::string& name : presetNames())
                        std::printf("%-14s %s\n", name.c_str(), presetSummary(name).c_str());
                }
                return ExitOk;
            } };
}

} // namespace stagecraft::cli
