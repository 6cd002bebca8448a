// SPDX-License-Identifier: MIT
// Running ASTRA-sim's analytical simulator on an exported trace set: the run folder next to the traces (configs,
// cmd.sh, captured output), the child process with a time limit and a cancel hook, and the verdict.
#pragma once

#include "simulate/astrasimconfig.h"
#include "simulate/astrasimoutput.h"
#include "synthesis/progress.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace stagecraft {

/// An exported trace set: `<name>.<rank>.et` for ranks 0..ranks-1 in `directory`, with the communicator groups
/// `<name>.json` and the resolved config `<name>.yaml` when present. Plain value type.
struct TraceSet
{
    std::filesystem::path directory;
    std::string name;
    int64_t ranks = 0;
    std::filesystem::path groupsPath; ///< empty when `<name>.json` is absent (every collective on the world)
    std::filesystem::path configPath; ///< empty when `<name>.yaml` is absent
    /// directory / name: ASTRA-sim's --workload-configuration (it appends ".<rank>.et").
    std::filesystem::path prefix() const
    {
        return directory / name;
    }
};

/// Finds the trace set `name` in `directory`; with an empty `name`, the only one there (a set is recognised by
/// its `<name>.0.et`). The rank files must be exactly 0..N-1. Returns nullopt and sets `error` (naming the folder
/// and what was found) otherwise. Reads the directory only; never throws.
std::optional<TraceSet> findTraceSet(
    const std::filesystem::path& directory, const std::string& name, std::string& error);

/// Whether the rank file's first compute node carries `inputs` / `outputs` tensor lists (an export with
/// ExportOptions::tensorLists), which ASTRA-sim's track-local-mem needs. Reads the file only up to that node.
/// False with `error` set when the file cannot be read.
bool traceHasTensorLists(const std::filesystem::path& rankFile, std::string& error);

/// The simulator binary: a path, or a bare name looked up in PATH. Returns the absolute path of an executable
/// regular file, or nullopt with `error`. Never throws.
std::optional<std::filesystem::path> resolveAstraSimBinary(const std::string& binary, std::string& error);

/// The files of one run, in `<traces.directory>/<traces.name>.astrasim/`.
struct AstraSimRunFiles
{
    std::filesystem::path runDirectory;
    std::filesystem::path systemPath; ///< system.json
    std::filesystem::path networkPath; ///< network.yml
    std::filesystem::path memoryPath; ///< memory.json
    std::filesystem::path commandPath; ///< cmd.sh: repeats the run by hand
    std::filesystem::path stdoutPath; ///< stdout.txt
    std::filesystem::path stderrPath; ///< stderr.txt
    std::filesystem::path logDirectory; ///< log/ (ASTRA-sim's own log files)
    std::vector<std::string> command; ///< argv of the run, argv[0] = the binary
};

/// Creates the run folder (refusing a symlink or anything but a folder at its place) and writes system.json,
/// network.yml, memory.json and an executable cmd.sh, each through a temporary file renamed into place; an
/// existing file of those names is replaced only if it is a regular file. Returns nullopt and sets `error` on
/// any failure. `binary` must be absolute. Never throws.
std::optional<AstraSimRunFiles> writeAstraSimRunFiles(
    const TraceSet& traces, const AstraSimSetup& setup, const std::filesystem::path& binary, std::string& error);

/// The text of cmd.sh for `files`: a POSIX shell script that changes into the run folder and execs the command,
/// every argument single-quoted. Pure.
std::string astraSimCommandScript(const AstraSimRunFiles& files);

struct AstraSimRunOptions
{
    std::string binary; ///< path or bare name (PATH)
    double timeoutS = 300; ///< wall-clock limit; the process group is killed when it expires
};

enum class AstraSimStatus
{
    Passed, ///< all four criteria hold
    Failed, ///< the simulator ran and a criterion failed (`reason` says which)
    BadInput, ///< nothing ran: no binary, trace set and setup disagree, run folder not writable
    Cancelled ///< the progress sink cancelled; the process group was killed
};

/// One rank's figures from its `finished` line (the first, when it reported twice).
struct AstraSimRankResult
{
    int64_t rank = 0;
    double finishNs = 0;
    double exposedCommunicationNs = 0; ///< ASTRA-sim's: finish minus compute busy time
    std::optional<double> peakMemoryBytes; ///< with track-local-mem
};

/// The outcome of runAstraSim(). Plain value type.
struct AstraSimResult
{
    AstraSimStatus status = AstraSimStatus::BadInput;
    bool passed = false; ///< status == Passed
    std::string reason; ///< empty when passed
    std::vector<std::string> relevantLines; ///< on failure: the first relevant simulator lines
    int64_t npus = 0;
    std::vector<AstraSimRankResult> ranks; ///< ranks that reported, ascending
    double wallS = 0; ///< from the start of the process to its end
    AstraSimRunFiles files; ///< empty paths when nothing was written
};

/// Runs the simulator on `traces` with the configs of `setup` (which must describe traces.ranks NPUs; with
/// setup.trackLocalMem the traces must hold tensor lists, see traceHasTensorLists()). Writes the
/// run files (writeAstraSimRunFiles), starts the binary with fork + exec in its own process group, in the run
/// folder, with stdin from /dev/null and stdout / stderr into stdout.txt / stderr.txt (temporary names renamed
/// when it ends), waits for it within `options.timeoutS` and judges the run (judgeAstraSimRun). On expiry or
/// cancel the whole process group gets SIGTERM, then SIGKILL after two seconds. `progress` (may be null) hears
/// the fraction of ranks that reported "finished" and is polled for cancel about every 20 ms. Blocks the calling
/// thread; call it from a worker. Thread-safe (shares nothing). Never throws.
AstraSimResult runAstraSim(const TraceSet& traces, const AstraSimSetup& setup, const AstraSimRunOptions& options,
    ProgressSink* progress = nullptr);

/// "passed", "failed", "bad input", "cancelled".
const char* toString(AstraSimStatus status);

} // namespace stagecraft
