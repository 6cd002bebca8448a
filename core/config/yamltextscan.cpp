// SPDX-License-Identifier: MIT
#include "config/yamltextscan.h"

#include <cstring>
#include <vector>

namespace stagecraft {

namespace {

    constexpr size_t npos = std::string_view::npos;

    /// Index of the quote that closes the one at `open`, on this line; npos when there is none.
    size_t closingQuote(std::string_view line, size_t open)
    {
        const char quote = line[open];
        for (size_t j = open + 1; j < line.size(); ++j) {
            if (quote == '"' && line[j] == '\\')
                ++j; // an escape: the next character is never the end
            else if (line[j] == quote) {
                if (quote == '\'' && j + 1 < line.size() && line[j + 1] == '\'')
                    ++j; // '' is a single quote inside '...'
                else
                    return j;
            }
        }
        return npos;
    }

    bool isBlank(char c)
    {
        return c == ' ' || c == '\t';
    }

    struct Key
    {
        size_t column;
        std::string name;
    };

    std::string joinedKeys(const std::vector<Key>& keys)
    {
        std::string out;
        for (const Key& key : keys)
            out += (out.empty() ? "" : ".") + key.name;
        return out;
    }

} // namespace

YamlTextScan scanYamlText(std::string_view text)
{
    YamlTextScan out;
    std::vector<Key> keys; // block-mapping keys enclosing the current line, outermost first
    int flowDepth = 0; // open [ and { (they may span lines)
    long blockParentIndent = -1; // >= 0 inside a block scalar: its content is indented more than this
    bool content = false; // the current document has content
    bool ended = false; // a `...` ended the current document
    int lineNumber = 0;
    for (size_t start = 0; start <= text.size();) {
        size_t end = text.find('\n', start);
        if (end == npos)
            end = text.size();
        std::string_view line = text.substr(start, end - start);
        start = end + 1;
        ++lineNumber;
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);

        const size_t first = line.find_first_not_of(" \t");
        const size_t indent = line.find_first_not_of(' ');
        if (blockParentIndent >= 0) {
            if (first == npos || long(indent) > blockParentIndent)
                continue;
            blockParentIndent = -1;
        }
        if (first == npos || line[first] == '#')
            continue;

        size_t i = first;
        if (flowDepth == 0 && first == 0) {
            const bool marker = line.size() == 3 || (line.size() > 3 && isBlank(line[3]));
            if (marker && line.substr(0, 3) == "---") {
                if (content || ended) {
                    out.secondDocumentLine = lineNumber;
                    out.secondDocumentColumn = 1;
                    return out;
                }
                keys.clear();
                i = 3;
            } else if (marker && line.substr(0, 3) == "...") {
                ended = true;
                keys.clear();
                continue;
            } else if (line[0] == '%' && !content) {
                continue; // a directive
            }
        }
        if (ended) {
            out.secondDocumentLine = lineNumber;
            out.secondDocumentColumn = int(first) + 1;
            return out;
        }
        if (flowDepth == 0) {
            while (!keys.empty() && keys.back().column >= first)
                keys.pop_back();
        }

        bool tokenStart = true; // the next non-blank character may open a scalar, a collection or a block scalar
        bool afterQuoted = false; // the last token was a quoted scalar (so ':' right after it is an indicator)
        size_t scalarStart = npos; // the current scalar's first character
        std::string quotedText; // the last quoted scalar's text (for keys)
        while (i < line.size()) {
            const char c = line[i];
            if (isBlank(c)) {
                ++i;
                continue;
            }
            if (c == '#' && (i == 0 || isBlank(line[i - 1])))
                break; // a comment
            content = true;
            if (tokenStart && (c == '"' || c == '\'')) {
                const size_t close = closingQuote(line, i);
                if (close == npos) {
                    out.openQuoteLine = lineNumber;
                    out.openQuoteColumn = int(i) + 1;
                    out.openQuote = c;
                    out.openQuoteKeyPath = joinedKeys(keys);
                    return out;
                }
                scalarStart = i;
                quotedText = std::string(line.substr(i + 1, close - i - 1));
                i = close + 1;
                tokenStart = false;
                afterQuoted = true;
                continue;
            }
            const bool wasQuoted = afterQuoted;
            afterQuoted = false;
            if ((c == '[' || c == '{') && (tokenStart || flowDepth > 0)) {
                ++flowDepth;
                tokenStart = true;
                ++i;
                continue;
            }
            if ((c == ']' || c == '}') && flowDepth > 0) {
                --flowDepth;
                tokenStart = false;
                ++i;
                continue;
            }
            if (c == ',' && flowDepth > 0) {
                tokenStart = true;
                ++i;
                continue;
            }
            const bool blankAfter = i + 1 == line.size() || isBlank(line[i + 1]);
            if ((c == '-' || c == '?') && tokenStart && blankAfter) {
                ++i;
                continue;
            }
            const bool flowAfter = flowDepth > 0 && i + 1 < line.size() && std::strchr(",[]{}", line[i + 1]);
            if (c == ':' && (blankAfter || flowAfter || wasQuoted)) {
                if (flowDepth == 0 && scalarStart != npos) {
                    std::string name = wasQuoted ? quotedText : std::string(line.substr(scalarStart, i - scalarStart));
                    while (!name.empty() && isBlank(name.back()))
                        name.pop_back();
                    while (!keys.empty() && keys.back().column >= scalarStart)
                        keys.pop_back();
                    keys.push_back({ scalarStart, std::move(name) });
                }
                scalarStart = npos;
                tokenStart = true;
                ++i;
                continue;
            }
            if (tokenStart && flowDepth == 0 && (c == '|' || c == '>')) {
                blockParentIndent = long(indent == npos ? first : indent);
                break; // the header's rest is indicators or a comment
            }
            if (tokenStart && (c == '&' || c == '!' || c == '*')) {
                // An anchor, a tag or an alias: one word. After an alias no scalar follows.
                while (i < line.size() && !isBlank(line[i]) && !(flowDepth > 0 && std::strchr(",[]{}", line[i])))
                    ++i;
                tokenStart = c != '*';
                continue;
            }
            if (tokenStart)
                scalarStart = i;
            tokenStart = false;
            ++i;
        }
    }
    return out;
}

} // namespace stagecraft
