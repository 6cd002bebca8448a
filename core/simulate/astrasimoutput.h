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
    /// Lines holding `[critical]`, `terminate called`, `Assertion` or `what():`, log timestamp removed; the first
    /// kMaxKeptErrorLines of them, each cut to kMaxKeptLineBytes.
    std::vector<std::string> errorLines;
    int64_t errorLineCount = 0; ///< all error lines, kept or not
    /// The last non-empty lines (at most 5), log timestamp removed, each cut to kMaxKeptLineBytes.
    std::vector<std::string> tailLines;
    /// More finish lines than kMaxFinishLines: the rest were not kept, and the run cannot pass.
    bool tooManyFinishLines = false;
};

/// What the parser keeps of an output of any size: memory stays bounded (a 750 MB log, a 300 MB line without a
/// newline). Lines are read up to kMaxLineBytes; the rest of a longer line is skipped (a finish line is ~70
/// bytes).
inline constexpr size_t kMaxLineBytes = 64 * 1024;
inline constexpr size_t kMaxKeptLineBytes = 1024;
inline constexpr size_t kMaxKeptErrorLines = 100;
inline constexpr size_t kMaxFinishLines = size_t { 1 } << 22; ///< 4 per rank of the largest world (1,048,576)

/// Parses ASTRA-sim's output incrementally: feed() chunks of any size, then finish(). Linear in the input.
class AstraSimOutputParser
{
public:
    void feed(std::string_view chunk);
    /// The output so far, with a last line that has no newline.
    AstraSimOutput finish();

private:
    void line(std::string_view text);

    AstraSimOutput m_out;
    std::string m_partial;
    bool m_skipping = false; ///< inside a line past kMaxLineBytes
    std::vector<std::string> m_tail; ///< ring of the last lines
    size_t m_tailNext = 0;
};

/// Parses ASTRA-sim's stdout and stderr (concatenated or either alone). Never throws on any input.
AstraSimOutput parseAstraSimOutput(std::string_view text);

/// Parses the file at `path` in chunks (AstraSimOutputParser). An unreadable file gives an empty output.
AstraSimOutput parseAstraSimOutputFile(const std::string& path);

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
