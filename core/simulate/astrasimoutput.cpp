// SPDX-License-Identifier: MIT
#include "simulate/astrasimoutput.h"

#include "estimate/chrometrace.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <set>
#include <unistd.h>

namespace stagecraft {

namespace {

    constexpr size_t kTailLines = 5;
    constexpr size_t kRelevantLines = 6;

    bool isDigit(char c)
    {
        return c >= '0' && c <= '9';
    }

    /// The line without a leading spdlog timestamp "[2025-01-31 12:34:56.789] " and without trailing blanks.
    std::string_view stripped(std::string_view line)
    {
        while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
            line.remove_suffix(1);
        // "[YYYY-MM-DD HH:MM:SS.fff] "
        if (line.size() > 22 && line[0] == '[' && isDigit(line[1]) && line[5] == '-' && line[8] == '-'
            && line[11] == ' ' && line[14] == ':' && line[17] == ':') {
            const size_t close = line.find("] ");
            if (close != std::string_view::npos && close < 40)
                line.remove_prefix(close + 2);
        }
        return line;
    }

    /// Reads an unsigned decimal at `pos`, advancing it; false when there is none.
    bool readUnsigned(std::string_view s, size_t& pos, uint64_t& value)
    {
        const char* begin = s.data() + pos;
        const char* end = s.data() + s.size();
        const auto [ptr, ec] = std::from_chars(begin, end, value);
        if (ec != std::errc() || ptr == begin)
            return false;
        pos += static_cast<size_t>(ptr - begin);
        return true;
    }

    bool expect(std::string_view s, size_t& pos, std::string_view literal)
    {
        if (s.substr(pos, literal.size()) != literal)
            return false;
        pos += literal.size();
        return true;
    }

    /// `sys[R]` at `pos` (advanced past it).
    bool readSys(std::string_view s, size_t& pos, int64_t& rank)
    {
        uint64_t r = 0;
        if (!expect(s, pos, "sys[") || !readUnsigned(s, pos, r) || !expect(s, pos, "]") || r > INT64_MAX)
            return false;
        rank = static_cast<int64_t>(r);
        return true;
    }

    void parseFinished(std::string_view line, std::vector<AstraSimFinishLine>& out)
    {
        for (size_t at = line.find("sys["); at != std::string_view::npos; at = line.find("sys[", at + 1)) {
            size_t pos = at;
            AstraSimFinishLine f;
            if (readSys(line, pos, f.rank) && expect(line, pos, " finished, ")
                && readUnsigned(line, pos, f.finishCycles) && expect(line, pos, " cycles, exposed communication ")
                && readUnsigned(line, pos, f.exposedCycles) && expect(line, pos, " cycles")) {
                out.push_back(f);
                return;
            }
        }
    }

    void parsePeakMemory(std::string_view line, std::map<int64_t, double>& out)
    {
        for (size_t at = line.find("sys["); at != std::string_view::npos; at = line.find("sys[", at + 1)) {
            size_t pos = at;
            int64_t rank = 0;
            if (!readSys(line, pos, rank) || !expect(line, pos, " peak memory usage: "))
                continue;
            // "12.34 MB": strtod needs a terminated string; the number is short.
            const std::string rest(line.substr(pos, 64));
            char* end = nullptr;
            const double value = std::strtod(rest.c_str(), &end);
            if (end == rest.c_str() || !std::isfinite(value) || value < 0)
                return;
            std::string_view unit(end);
            while (!unit.empty() && unit.front() == ' ')
                unit.remove_prefix(1);
            static constexpr std::array<std::string_view, 5> kUnits { "B", "KB", "MB", "GB", "TB" };
            for (size_t k = 0; k < kUnits.size(); ++k) {
                if (unit.substr(0, kUnits[k].size()) == kUnits[k]
                    && (unit.size() == kUnits[k].size()
                        || !std::isalpha(static_cast<unsigned char>(unit[kUnits[k].size()])))) {
                    out.emplace(rank, value * std::pow(1024.0, static_cast<double>(k)));
                    return;
                }
            }
            return;
        }
    }

    bool isErrorLine(std::string_view line)
    {
        for (std::string_view marker : { "[critical]", "terminate called", "Assertion", "what():" })
            if (line.find(marker) != std::string_view::npos)
                return true;
        return false;
    }

    /// The first `limit` distinct lines, each with " (xN)" when it occurs N > 1 times.
    std::vector<std::string> distinctLines(const std::vector<std::string>& lines, size_t limit)
    {
        std::vector<std::pair<std::string, size_t>> seen;
        for (const std::string& line : lines) {
            auto it = std::find_if(seen.begin(), seen.end(), [&](const auto& p) { return p.first == line; });
            if (it != seen.end())
                ++it->second;
            else
                seen.emplace_back(line, 1);
        }
        std::vector<std::string> out;
        for (size_t i = 0; i < seen.size() && i < limit; ++i)
            out.push_back(
                seen[i].second > 1 ? seen[i].first + "  (x" + std::to_string(seen[i].second) + ")" : seen[i].first);
        return out;
    }

} // namespace

void AstraSimOutputParser::line(std::string_view raw)
{
    const std::string_view line = stripped(raw);
    if (line.empty())
        return;
    if (line.find("sys[") != std::string_view::npos) {
        if (line.find(" finished, ") != std::string_view::npos) {
            if (m_out.finished.size() < kMaxFinishLines)
                parseFinished(line, m_out.finished);
            else
                m_out.tooManyFinishLines = true;
        } else if (line.find(" peak memory usage: ") != std::string_view::npos) {
            if (m_out.peakMemoryBytes.size() < kMaxFinishLines)
                parsePeakMemory(line, m_out.peakMemoryBytes);
        }
    }
    const std::string_view kept = line.substr(0, kMaxKeptLineBytes);
    if (isErrorLine(line)) {
        ++m_out.errorLineCount;
        if (m_out.errorLines.size() < kMaxKeptErrorLines)
            m_out.errorLines.emplace_back(kept);
    }
    if (m_tail.size() < kTailLines)
        m_tail.emplace_back(kept);
    else
        m_tail[m_tailNext % kTailLines].assign(kept);
    ++m_tailNext;
}

void AstraSimOutputParser::feed(std::string_view chunk)
{
    while (!chunk.empty()) {
        const size_t nl = chunk.find('\n');
        const std::string_view piece = chunk.substr(0, nl);
        if (!m_skipping) {
            const size_t room = kMaxLineBytes - std::min(kMaxLineBytes, m_partial.size());
            m_partial.append(piece.substr(0, room));
            if (piece.size() > room)
                m_skipping = true; // the rest of this line is not read
        }
        if (nl == std::string_view::npos)
            return;
        line(m_partial);
        m_partial.clear();
        m_skipping = false;
        chunk.remove_prefix(nl + 1);
    }
}

AstraSimOutput AstraSimOutputParser::finish()
{
    if (!m_partial.empty())
        line(m_partial);
    m_partial.clear();
    m_skipping = false;
    AstraSimOutput out = m_out;
    // The ring, oldest first.
    const size_t n = m_tail.size();
    for (size_t i = 0; i < n; ++i)
        out.tailLines.push_back(m_tail[(m_tailNext - n + i) % kTailLines]);
    return out;
}

AstraSimOutput parseAstraSimOutput(std::string_view text)
{
    AstraSimOutputParser parser;
    parser.feed(text);
    return parser.finish();
}

AstraSimOutput parseAstraSimOutputFile(const std::string& path)
{
    AstraSimOutputParser parser;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return parser.finish();
    std::vector<char> buffer(size_t { 1 } << 16);
    for (;;) {
        const ssize_t n = ::read(fd, buffer.data(), buffer.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        parser.feed(std::string_view(buffer.data(), static_cast<size_t>(n)));
    }
    ::close(fd);
    return parser.finish();
}

AstraSimVerdict judgeAstraSimRun(
    const AstraSimOutput& output, const AstraSimExit& exit, int64_t npus, bool trackLocalMem)
{
    AstraSimVerdict v;
    std::map<int64_t, int> reports;
    for (const AstraSimFinishLine& f : output.finished)
        ++reports[f.rank];
    std::vector<int64_t> missing, twice, extra, noMemory, implausible;
    // Exposed communication is the finish time minus compute: a line with more of it than its finish time is not
    // a rank that finished, whatever printed it.
    for (const AstraSimFinishLine& f : output.finished)
        if (f.exposedCycles > f.finishCycles && implausible.size() < 64)
            implausible.push_back(f.rank);
    std::sort(implausible.begin(), implausible.end());
    implausible.erase(std::unique(implausible.begin(), implausible.end()), implausible.end());
    for (int64_t r = 0; r < npus; ++r) {
        const auto it = reports.find(r);
        if (it == reports.end())
            missing.push_back(r);
        else if (it->second > 1)
            twice.push_back(r);
        if (trackLocalMem && !output.peakMemoryBytes.count(r))
            noMemory.push_back(r);
    }
    for (const auto& [rank, count] : reports) {
        if (rank >= 0 && rank < npus)
            ++v.finishedRanks;
        else
            extra.push_back(rank);
    }

    std::vector<std::string> problems;
    if (exit.timedOut) {
        char text[64];
        std::snprintf(text, sizeof text, "timed out after %g s", exit.timeoutS);
        problems.emplace_back(text);
    } else if (exit.signalled) {
        const char* name = strsignal(exit.signal);
        problems.push_back(
            "killed by signal " + std::to_string(exit.signal) + (name ? std::string(" (") + name + ")" : ""));
    } else if (exit.exitCode != 0) {
        problems.push_back("exit code " + std::to_string(exit.exitCode));
    }
    if (!missing.empty())
        problems.push_back("missing " + rankRangeText(missing));
    if (!twice.empty())
        problems.push_back(rankRangeText(twice) + " reported finishing more than once");
    if (!extra.empty())
        problems.push_back("unexpected " + rankRangeText(extra) + " (the trace set has " + std::to_string(npus) + ")");
    const int64_t errorCount = std::max<int64_t>(output.errorLineCount, static_cast<int64_t>(output.errorLines.size()));
    if (errorCount > 0)
        problems.push_back(std::to_string(errorCount) + " error line" + (errorCount > 1 ? "s" : ""));
    if (output.tooManyFinishLines)
        problems.push_back("more than " + std::to_string(kMaxFinishLines) + " finish lines");
    if (!implausible.empty())
        problems.push_back(rankRangeText(implausible) + " reported more exposed communication than finish time");
    if (missing.empty() && !noMemory.empty())
        problems.push_back("no peak memory line for " + rankRangeText(noMemory));

    v.passed = problems.empty();
    if (!v.passed) {
        v.reason = std::to_string(v.finishedRanks) + "/" + std::to_string(npus) + " ranks finished";
        for (const std::string& p : problems)
            v.reason += "; " + p;
        v.relevantLines =
            distinctLines(output.errorLines.empty() ? output.tailLines : output.errorLines, kRelevantLines);
    }
    return v;
}

} // namespace stagecraft
