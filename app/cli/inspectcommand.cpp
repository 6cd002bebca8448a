// SPDX-License-Identifier: MIT
// stagecraft inspect TRACE.et|DIR [--json] [--prefix NAME] [--all] [--threads N]
#include "chakra/chakrainspect.h"
#include "command.h"

#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

namespace stagecraft::cli {

Command addInspectCommand(CLI::App& app)
{
    struct State
    {
        std::string path;
        bool json = false;
        std::string prefix;
        bool all = false;
        unsigned threads = 0;
    };
    auto st = std::make_shared<State>();
    CLI::App* cmd = app.add_subcommand("inspect",
        "Read any Chakra ET file (ours, STAGE's, converted PyTorch traces) and check it; given a directory, check "
        "the whole trace set across ranks (collective sequences per group, send/recv pairs)");
    cmd->add_option("TRACE", st->path, "A .et file or a directory holding <prefix>.<rank>.et and <prefix>.json")
        ->required();
    cmd->add_flag("--json", st->json, "Print the summary as JSON");
    cmd->add_option("--prefix", st->prefix, "With a directory: the file prefix when it holds several trace sets");
    cmd->add_flag("--all", st->all,
        "With a directory: one row per rank and per group; by default one per rank class (ranks whose files are "
        "alike), the ranks with errors or warnings and the collectives per type (--json always lists every rank)");
    cmd->add_option("--threads", st->threads, "With a directory: files read in parallel (default: all cores)");
    return { cmd, [st]() -> int {
                namespace fs = std::filesystem;
                std::error_code ec;
                if (!fs::exists(st->path, ec)) {
                    std::cerr << "stagecraft: " << st->path << ": no such file or directory\n";
                    return ExitBadInput;
                }
                size_t errors = 0;
                if (fs::is_directory(st->path, ec)) {
                    const TraceSetSummary s = inspectTraceSet(st->path, st->prefix, st->threads);
                    std::cout << (st->json ? summaryToJson(s).dump(2) + "\n" : summaryToText(s, st->all));
                    errors = s.count(FindingSeverity::Error);
                } else {
                    std::string readError;
                    const TraceSummary s = inspectTraceFile(st->path, &readError);
                    std::cout << (st->json ? summaryToJson(s).dump(2) + "\n" : summaryToText(s));
                    errors = s.count(FindingSeverity::Error);
                    if (!readError.empty()) {
                        std::cerr << "stagecraft: " << readError << "\n";
                        return ExitBadInput;
                    }
                }
                // A trace with errors (dangling dependencies, cycles, mismatched collectives) is bad input.
                return errors == 0 ? ExitOk : ExitBadInput;
            } };
}

} // namespace stagecraft::cli
