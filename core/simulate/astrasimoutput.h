// SPDX-License-Identifier: MIT
// Reading what ASTRA-sim printed and judging a run by the four pass criteria.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace stagecraft {

/// One `sys[R] finished, T cycles, exposed communication E cycles.` line. A cycle is one nanosecond in the
/// analytical backend (CLOCK_PERIOD = 1 ns). ASTRA-sim's "exposed communication" is T minus the rank's compute
/// busy time: everything that is not compute, including waits on pipeline neighbours.
struct AstraSimFinishLine
{
    int64_t rank = 0;
    uint64_t finishCycles = 0;
    uint64_t exposedCycles = 0;
};

/// ASTRA-sim's output, parsed. Plain value type.
struct AstraSimOutput
{
    std::vector<AstraSimFinishLine> finished; ///< in output order; a rank reporting twice appears twice
    /// The first `sys[R] peak memory usage: X UNIT` of each rank, in bytes. UNIT is B, KB, MB, GB or TB, binary
    /// (ASTRA-sim's LocalMemUsageTracker divides by 1024); X has two decimals, so the value is rounded.
    std::map<int64_t, double> peakMemoryBytes;
    /// Lines holding `[critical]`, `terminate called`, `Assertion` or `what():`, log timestamp removed.
    std::vector<std::string> errorLines;
    /// The last non-empty lines (at most 5), log timestamp removed.
    std::vector<std::string> tailLines;
};

/// Parses ASTRA-sim's stdout and stderr (concatenated or either alone). Never throws on any input.
AstraSimOutput parseAstraSimOutput(std::string_view text);

/// How the simulator process ended.
struct AstraSimExit
{
    bool timedOut = false; ///< killed because it ran past the time limit
    double timeoutS = 0;
    bool signalled = false; ///< ended by a signal (other than our timeout kill)
    int signal = 0;
    int exitCode = 0; ///< when it exited normally
};

/// The verdict on one run. `reason` is empty when it passed; otherwise every failed criterion, e.g.
/// "6/8 ranks finished; missing ranks 3, 5; 2 error lines". `relevantLines` are the first distinct error lines
/// (or, without any, the last lines of the output), at most 6, with " (xN)" for repeats.
struct AstraSimVerdict
{
    bool passed = false;
    std::string reason;
    std::vector<std::string> relevantLines;
    int64_t finishedRanks = 0; ///< distinct ranks in 0..npus-1 with a finished line
};

/// The four pass criteria: exit code 0; exactly one finished line for every rank 0..npus-1 (and none for other
/// ranks); no error line; within the time limit. With `trackLocalMem`, every rank must also report its peak
/// memory. Pure.
AstraSimVerdict judgeAstraSimRun(
    const AstraSimOutput& output, const AstraSimExit& exit, int64_t npus, bool trackLocalMem);

} // namespace stagecraft
