// SPDX-License-Identifier: MIT
#include "serving/requesttrace.h"

#include "config/boundedfile.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <optional>

namespace stagecraft {

namespace {

    constexpr size_t kMaxErrors = 20;
    enum Column : size_t
    {
        Arrival,
        Prompt,
        Output,
        kColumns
    };
    constexpr std::array<const char*, kColumns> kColumnNames { "arrival", "prompt tokens", "output tokens" };

    struct Cell
    {
        std::string text;
        int column = 1; ///< 1-based byte column of the cell's first character
    };

    std::string lower(std::string_view s)
    {
        std::string out(s);
        for (char& c : out)
            if (c >= 'A' && c <= 'Z')
                c = static_cast<char>(c - 'A' + 'a');
        return out;
    }

    std::string_view trimmed(std::string_view s)
    {
        while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
            s.remove_prefix(1);
        while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
            s.remove_suffix(1);
        return s;
    }

    /// Splits one line into cells; false (with `problemColumn`) on an unterminated quote.
    bool splitCells(std::string_view line, std::vector<Cell>& cells, int& problemColumn)
    {
        cells.clear();
        size_t i = 0;
        for (;;) {
            Cell cell;
            while (i < line.size() && (line[i] == ' ' || line[i] == '\t'))
                ++i;
            cell.column = static_cast<int>(std::min<size_t>(i, 1u << 30)) + 1;
            if (i < line.size() && line[i] == '"') {
                ++i;
                bool closed = false;
                while (i < line.size()) {
                    if (line[i] == '"') {
                        if (i + 1 < line.size() && line[i + 1] == '"') {
                            cell.text += '"';
                            i += 2;
                            continue;
                        }
                        ++i;
                        closed = true;
                        break;
                    }
                    cell.text += line[i++];
                }
                if (!closed) {
                    problemColumn = cell.column;
                    return false;
                }
                while (i < line.size() && line[i] != ',')
                    cell.text += line[i++]; // text after the closing quote belongs to the cell (reported if bad)
            } else {
                const size_t end = line.find(',', i);
                cell.text = std::string(line.substr(i, end == std::string_view::npos ? line.npos : end - i));
                i = end == std::string_view::npos ? line.size() : end;
            }
            cell.text = std::string(trimmed(cell.text));
            cells.push_back(std::move(cell));
            if (i >= line.size())
                return true;
            ++i; // the comma
        }
    }

    std::optional<int64_t> parseInteger(std::string_view s)
    {
        if (!s.empty() && s.front() == '+')
            s.remove_prefix(1);
        int64_t v = 0;
        const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
        if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size())
            return std::nullopt;
        return v;
    }

    std::optional<double> parseNumber(std::string_view s)
    {
        if (!s.empty() && s.front() == '+')
            s.remove_prefix(1);
        double v = 0;
        const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
        if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size() || !std::isfinite(v))
            return std::nullopt;
        return v;
    }

    /// Days from 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil algorithm).
    int64_t daysFromCivil(int64_t y, int64_t m, int64_t d)
    {
        y -= m <= 2;
        const int64_t era = (y >= 0 ? y : y - 399) / 400;
        const int64_t yoe = y - era * 400;
        const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
        const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        return era * 146097 + doe - 719468;
    }

    /// "YYYY-MM-DD HH:MM:SS[.fraction]" (or a T between) as seconds since 1970; nullopt when it is not one.
    std::optional<double> parseDateTime(std::string_view s)
    {
        if (s.size() < 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') || s[13] != ':'
            || s[16] != ':')
            return std::nullopt;
        auto digits = [&](size_t at, size_t n) -> std::optional<int64_t> {
            int64_t v = 0;
            for (size_t k = at; k < at + n; ++k) {
                if (s[k] < '0' || s[k] > '9')
                    return std::nullopt;
                v = v * 10 + (s[k] - '0');
            }
            return v;
        };
        const auto y = digits(0, 4), mo = digits(5, 2), d = digits(8, 2), h = digits(11, 2), mi = digits(14, 2),
                   sec = digits(17, 2);
        if (!y || !mo || !d || !h || !mi || !sec || *mo < 1 || *mo > 12 || *d < 1 || *d > 31 || *h > 23 || *mi > 59
            || *sec > 60)
            return std::nullopt;
        double fraction = 0;
        if (s.size() > 19) {
            if (s[19] != '.' || s.size() == 20 || s.size() > 40)
                return std::nullopt;
            double scale = 0.1;
            for (size_t k = 20; k < s.size(); ++k, scale /= 10) {
                if (s[k] < '0' || s[k] > '9')
                    return std::nullopt;
                fraction += scale * (s[k] - '0');
            }
        }
        return static_cast<double>(daysFromCivil(*y, *mo, *d) * 86400 + *h * 3600 + *mi * 60 + *sec) + fraction;
    }

    std::optional<Column> columnOfHeader(const std::string& name)
    {
        const std::string n = lower(name);
        for (const char* a : { "arrival_s", "arrival", "arrival_time", "timestamp", "time" })
            if (n == a)
                return Arrival;
        for (const char* p : { "prompt_tokens", "contexttokens", "context_tokens", "input_tokens", "prompt" })
            if (n == p)
                return Prompt;
        for (const char* o : { "output_tokens", "generatedtokens", "generated_tokens", "output" })
            if (n == o)
                return Output;
        return std::nullopt;
    }

} // namespace

std::string escapedCell(std::string_view text)
{
    static const char* hex = "0123456789abcdef";
    std::string out = "\"";
    const size_t shown = std::min<size_t>(text.size(), 40);
    for (size_t i = 0; i < shown; ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20 || c >= 0x7f) {
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 15];
        } else {
            out += static_cast<char>(c);
        }
    }
    out += '"';
    if (shown < text.size())
        out += "...";
    return out;
}

RequestTrace parseRequestTrace(std::string_view text, const std::string& fileName, int64_t maxRequests)
{
    RequestTrace out;
    const int64_t limit = maxRequests > 0 ? std::min(maxRequests, kMaxRequestTraceRows) : kMaxRequestTraceRows;
    auto fail = [&](int line, int column, const std::string& message) {
        if (out.diagnostics.size() < kMaxErrors)
            out.diagnostics.push_back({ Severity::Error, fileName, line, column, "inference.trace", message });
    };
    if (text.size() >= 3 && static_cast<unsigned char>(text[0]) == 0xef && static_cast<unsigned char>(text[1]) == 0xbb
        && static_cast<unsigned char>(text[2]) == 0xbf)
        text.remove_prefix(3); // a UTF-8 byte order mark
    std::array<size_t, kColumns> index { 0, 1, 2 };
    bool sawFirst = false;
    std::vector<Cell> cells;
    std::vector<double> absolute;
    size_t start = 0;
    int lineNumber = 0;
    while (start < text.size() && out.diagnostics.size() < kMaxErrors) {
        size_t end = text.find('\n', start);
        if (end == std::string_view::npos)
            end = text.size();
        const std::string_view line = text.substr(start, end - start);
        start = end + 1;
        lineNumber = lineNumber < (1 << 30) ? lineNumber + 1 : lineNumber;
        if (trimmed(line).empty())
            continue;
        int problemColumn = 0;
        if (!splitCells(line, cells, problemColumn)) {
            fail(lineNumber, problemColumn, "a quoted cell is not closed on its line");
            continue;
        }
        if (!sawFirst) {
            sawFirst = true;
            // A header: its first cell is not a number nor a date-time.
            if (!cells.empty() && !parseNumber(cells[0].text) && !parseDateTime(cells[0].text)) {
                std::array<bool, kColumns> found {};
                for (size_t k = 0; k < cells.size(); ++k) {
                    const std::optional<Column> c = columnOfHeader(cells[k].text);
                    if (!c) {
                        fail(lineNumber, cells[k].column,
                            "unknown column " + escapedCell(cells[k].text)
                                + " in the header; expected arrival_s (or timestamp), prompt_tokens (or "
                                  "ContextTokens) and output_tokens (or GeneratedTokens)");
                        continue;
                    }
                    if (found[*c])
                        fail(lineNumber, cells[k].column,
                            std::string("the ") + kColumnNames[*c] + " column is named twice in the header");
                    found[*c] = true;
                    index[*c] = k;
                }
                for (size_t c = 0; c < kColumns; ++c)
                    if (!found[c])
                        fail(lineNumber, 1, std::string("the header has no ") + kColumnNames[c] + " column");
                continue;
            }
        }
        const size_t needed = std::max({ index[0], index[1], index[2] }) + 1;
        if (cells.size() != std::max<size_t>(needed, 3)) {
            fail(lineNumber, cells.size() < needed ? static_cast<int>(std::min<size_t>(line.size(), 1u << 30)) + 1 : 1,
                "expected " + std::to_string(std::max<size_t>(needed, 3)) + " comma-separated cells (arrival, "
                    + "prompt tokens, output tokens), found " + std::to_string(cells.size()));
            continue;
        }
        if (static_cast<int64_t>(out.requests.size()) >= limit) {
            if (maxRequests <= 0 || maxRequests > kMaxRequestTraceRows)
                fail(lineNumber, 1,
                    "more than " + std::to_string(kMaxRequestTraceRows) + " requests; keep the first ones with "
                        + "inference.requests");
            break;
        }
        const Cell& a = cells[index[Arrival]];
        const Cell& p = cells[index[Prompt]];
        const Cell& o = cells[index[Output]];
        std::optional<double> arrival = parseNumber(a.text);
        if (arrival && *arrival < 0)
            arrival.reset();
        if (!arrival)
            arrival = parseDateTime(a.text);
        if (!arrival) {
            fail(lineNumber, a.column,
                "arrival: expected seconds (a non-negative number) or a date-time YYYY-MM-DD HH:MM:SS[.fraction], "
                "found "
                    + escapedCell(a.text));
            continue;
        }
        const std::optional<int64_t> prompt = parseInteger(p.text);
        if (!prompt || *prompt < 1 || *prompt > 10'000'000) {
            fail(lineNumber, p.column,
                "prompt tokens: expected an integer from 1 to 10000000, found " + escapedCell(p.text));
            continue;
        }
        const std::optional<int64_t> output = parseInteger(o.text);
        if (!output || *output < 0 || *output > 10'000'000) {
            fail(lineNumber, o.column,
                "output tokens: expected an integer from 0 to 10000000, found " + escapedCell(o.text));
            continue;
        }
        out.requests.push_back({ 0, *prompt, std::max<int64_t>(1, *output) });
        absolute.push_back(*arrival);
    }
    if (out.diagnostics.empty() && out.requests.empty())
        fail(std::max(1, lineNumber), 1, "the trace holds no request");
    if (!out.diagnostics.empty()) {
        out.requests.clear();
        return out;
    }
    const double first = *std::min_element(absolute.begin(), absolute.end());
    for (size_t i = 0; i < out.requests.size(); ++i)
        out.requests[i].arrivalS = absolute[i] - first;
    std::stable_sort(out.requests.begin(), out.requests.end(),
        [](const ServingRequest& x, const ServingRequest& y) { return x.arrivalS < y.arrivalS; });
    return out;
}

RequestTrace readRequestTrace(const std::string& path, int64_t maxRequests)
{
    std::string text;
    const std::string problem = readBoundedFile(
        path, kMaxRequestTraceBytes, { "request trace", "a CSV request trace", "a request trace" }, text);
    if (!problem.empty()) {
        RequestTrace out;
        out.diagnostics.push_back({ Severity::Error, path, 0, 0, "inference.trace", problem });
        return out;
    }
    return parseRequestTrace(text, path, maxRequests);
}

} // namespace stagecraft
