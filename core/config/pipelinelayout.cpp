// SPDX-License-Identifier: MIT
#include "config/pipelinelayout.h"

#include <algorithm>

namespace stagecraft {

namespace {

    constexpr size_t kMaxExpanded = size_t(1) << 20;

    /// One character of the expanded string and where it came from.
    struct Placed
    {
        char c;
        size_t offset;
    };

    bool isItemChar(char c)
    {
        return c == 'E' || c == 't' || c == 'm' || c == 'L' || c == '|';
    }

    std::string shown(char c)
    {
        if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
            static const char* hex = "0123456789abcdef";
            return std::string("byte 0x") + hex[(static_cast<unsigned char>(c) >> 4) & 0xf]
                + hex[static_cast<unsigned char>(c) & 0xf];
        }
        return std::string("'") + c + "'";
    }

    class Parser
    {
    public:
        Parser(std::string_view text, LayoutError& error)
            : m_text(text)
            , m_error(error)
        {
        }

        bool run(std::vector<Placed>& out)
        {
            while (skipCommas(), m_at < m_text.size()) {
                const size_t start = m_at;
                std::vector<Placed> unit;
                if (m_text[m_at] == '(') {
                    ++m_at;
                    while (skipCommas(), m_at < m_text.size() && m_text[m_at] != ')') {
                        const char c = m_text[m_at];
                        if (c == '(')
                            return fail(m_at, "a group inside a group: parentheses do not nest in a layout");
                        if (!isItemChar(c))
                            return unknown(m_at);
                        const Placed item { c, m_at++ };
                        // X*N inside a group: Megatron-Core unrolls the group first, then X*N (parse_str_to_list).
                        int64_t itemRepeats = 1;
                        if (!readRepeats(itemRepeats))
                            return false;
                        if (unit.size() + static_cast<size_t>(itemRepeats) > kMaxExpanded)
                            return fail(start, "the layout expands to more than 1,048,576 characters");
                        unit.insert(unit.end(), static_cast<size_t>(itemRepeats), item);
                    }
                    if (m_at >= m_text.size())
                        return fail(start, "the '(' opened here is not closed");
                    if (unit.empty())
                        return fail(start, "an empty group '()': a group holds at least one of E, t, m, L, |");
                    ++m_at; // ')'
                    skipCommas();
                    if (m_at >= m_text.size() || m_text[m_at] != '*')
                        return fail(start, "a group '(...)' must be followed by *N, the number of repeats");
                } else if (m_text[m_at] == ')') {
                    return fail(m_at, "')' without an opening '('");
                } else if (m_text[m_at] == '*') {
                    return fail(m_at, "'*' repeats the character or group before it, and there is none");
                } else if (isItemChar(m_text[m_at])) {
                    unit.push_back({ m_text[m_at], m_at });
                    ++m_at;
                } else {
                    return unknown(m_at);
                }
                int64_t repeats = 1;
                if (!readRepeats(repeats))
                    return false;
                if (out.size() + unit.size() * static_cast<size_t>(repeats) > kMaxExpanded)
                    return fail(start, "the layout expands to more than 1,048,576 characters");
                for (int64_t r = 0; r < repeats; ++r)
                    out.insert(out.end(), unit.begin(), unit.end());
            }
            return true;
        }

    private:
        /// An optional `*N` after a character or a group: N in `repeats` (1 without one); false after fail().
        bool readRepeats(int64_t& repeats)
        {
            repeats = 1;
            if (skipCommas(), m_at >= m_text.size() || m_text[m_at] != '*')
                return true;
            const size_t star = m_at++;
            skipCommas();
            if (m_at >= m_text.size() || m_text[m_at] < '0' || m_text[m_at] > '9')
                return fail(star, "expected a number of repeats after '*'");
            repeats = 0;
            while (skipCommas(), m_at < m_text.size() && m_text[m_at] >= '0' && m_text[m_at] <= '9') {
                repeats = repeats * 10 + (m_text[m_at] - '0');
                if (repeats > int64_t(kMaxExpanded))
                    return fail(star, "too many repeats: a layout expands to at most 1,048,576 characters");
                ++m_at;
            }
            if (m_at < m_text.size() && m_text[m_at] == '*')
                return fail(m_at, "'*N*M': repeat a group instead");
            return true;
        }

        void skipCommas()
        {
            while (m_at < m_text.size() && m_text[m_at] == ',')
                ++m_at;
        }
        bool fail(size_t offset, std::string message)
        {
            m_error = LayoutError { offset, std::move(message) };
            return false;
        }
        bool unknown(size_t offset)
        {
            return fail(offset,
                "unknown character " + shown(m_text[offset])
                    + ": expected E (embedding), t (decoder layer), m (MTP module), L (loss), | (next chunk), "
                      "(...)*N, X*N or ','");
        }

        std::string_view m_text;
        LayoutError& m_error;
        size_t m_at = 0;
    };

    LayoutItem itemOf(char c)
    {
        switch (c) {
        case 'E':
            return LayoutItem::Embedding;
        case 'm':
            return LayoutItem::Mtp;
        case 'L':
            return LayoutItem::Loss;
        default:
            return LayoutItem::Decoder;
        }
    }

    /// One chunk as text, runs of three or more equal items as X*N.
    std::string chunkText(const std::vector<LayoutItem>& chunk)
    {
        std::string out;
        for (size_t i = 0; i < chunk.size();) {
            size_t j = i;
            while (j < chunk.size() && chunk[j] == chunk[i])
                ++j;
            const size_t n = j - i;
            if (n >= 4) // "t*3" is no shorter than "ttt"
                out += std::string(1, layoutChar(chunk[i])) + "*" + std::to_string(n);
            else
                out += std::string(n, layoutChar(chunk[i]));
            i = j;
        }
        return out;
    }

} // namespace

char layoutChar(LayoutItem item)
{
    switch (item) {
    case LayoutItem::Embedding:
        return 'E';
    case LayoutItem::Decoder:
        return 't';
    case LayoutItem::Mtp:
        return 'm';
    case LayoutItem::Loss:
        return 'L';
    }
    return '?';
}

std::optional<PipelineLayout> PipelineLayout::parse(std::string_view text, LayoutError& error)
{
    std::vector<Placed> expanded;
    if (!Parser(text, error).run(expanded))
        return std::nullopt;
    PipelineLayout layout;
    layout.chunks.emplace_back();
    layout.itemOffsets.emplace_back();
    layout.chunkOffsets.push_back(0);
    for (const Placed& p : expanded) {
        if (p.c == '|') {
            layout.chunks.emplace_back();
            layout.itemOffsets.emplace_back();
            layout.chunkOffsets.push_back(p.offset);
            continue;
        }
        if (layout.chunks.back().empty())
            layout.chunkOffsets.back() = p.offset;
        layout.chunks.back().push_back(itemOf(p.c));
        layout.itemOffsets.back().push_back(p.offset);
    }
    return layout;
}

std::string PipelineLayout::toString() const
{
    std::vector<std::string> texts;
    texts.reserve(chunks.size());
    for (const auto& c : chunks)
        texts.push_back(chunkText(c));
    std::string out;
    for (size_t i = 0; i < texts.size();) {
        size_t k = 1;
        while (i + k < texts.size() && texts[i + k] == texts[i])
            ++k;
        const bool toEnd = i + k == texts.size();
        // A run that ends the layout keeps its last chunk outside the group: the layout does not end in '|'.
        const size_t grouped = toEnd ? k - 1 : k;
        const std::string plain = [&] {
            std::string s;
            for (size_t r = 0; r < grouped; ++r)
                s += texts[i] + "|";
            return s;
        }();
        const std::string group = "(" + texts[i] + "|)*" + std::to_string(grouped);
        out += grouped >= 2 && group.size() < plain.size() ? group : plain;
        if (toEnd)
            out += texts[i];
        i += k;
    }
    return out;
}

int64_t PipelineLayout::count(LayoutItem item) const
{
    int64_t n = 0;
    for (const auto& c : chunks)
        n += std::count(c.begin(), c.end(), item);
    return n;
}

std::optional<LayoutError> checkLayout(const PipelineLayout& layout, int64_t layers, int64_t mtpModules, int64_t pp)
{
    const int64_t chunks = layout.chunkCount();
    auto at = [&](size_t chunk, size_t item) { return layout.itemOffsets[chunk][item]; };
    if (pp <= 0 || chunks % pp != 0)
        return LayoutError { 0,
            "the layout has " + std::to_string(chunks) + " chunks ('|' separates them), not a multiple of pp="
                + std::to_string(pp) + " (pp * virtual stages chunks)" };
    // The items in chunk order, as Megatron-Core flattens them.
    struct Where
    {
        size_t chunk, item;
    };
    std::vector<Where> flat;
    for (size_t c = 0; c < layout.chunks.size(); ++c)
        for (size_t i = 0; i < layout.chunks[c].size(); ++i)
            flat.push_back({ c, i });
    auto itemAt = [&](const Where& w) { return layout.chunks[w.chunk][w.item]; };
    if (flat.empty())
        return LayoutError { 0, "the layout holds nothing: expected E first and L last" };
    if (itemAt(flat.front()) != LayoutItem::Embedding)
        return LayoutError { at(flat.front().chunk, flat.front().item),
            "the first item must be the embedding E (chunks before it may be empty)" };
    if (itemAt(flat.back()) != LayoutItem::Loss)
        return LayoutError { at(flat.back().chunk, flat.back().item),
            "the last item must be the loss L (chunks after it may be empty)" };
    int64_t decoders = 0, mtps = 0;
    std::optional<Where> firstMtp;
    for (size_t k = 0; k < flat.size(); ++k) {
        const Where& w = flat[k];
        switch (itemAt(w)) {
        case LayoutItem::Embedding:
            if (k != 0)
                return LayoutError { at(w.chunk, w.item), "a second embedding E: the layout holds exactly one" };
            break;
        case LayoutItem::Loss:
            if (k + 1 != flat.size())
                return LayoutError { at(w.chunk, w.item), "a second loss L: the layout holds exactly one" };
            break;
        case LayoutItem::Decoder:
            if (firstMtp)
                return LayoutError { at(w.chunk, w.item),
                    "a decoder layer t after an MTP module m: MTP modules come "
                    "after the last decoder layer" };
            ++decoders;
            break;
        case LayoutItem::Mtp:
            if (!firstMtp)
                firstMtp = w;
            else if (w.chunk != firstMtp->chunk)
                return LayoutError { at(w.chunk, w.item), "MTP modules in two chunks: every m must be in one chunk" };
            ++mtps;
            break;
        }
    }
    if (decoders != layers)
        return LayoutError { 0,
            "the layout holds " + std::to_string(decoders)
                + " decoder layers (t), the model has layers=" + std::to_string(layers) };
    if (mtps != mtpModules)
        return LayoutError { firstMtp ? at(firstMtp->chunk, firstMtp->item) : 0,
            "the layout holds " + std::to_string(mtps)
                + " MTP modules (m), the model has mtp_modules=" + std::to_string(mtpModules) };
    if (firstMtp) {
        const int64_t chunk = static_cast<int64_t>(firstMtp->chunk);
        const int64_t v = chunks / pp;
        if (chunk / pp != v - 1)
            return LayoutError { at(firstMtp->chunk, firstMtp->item),
                "MTP modules must be in the last virtual stage of a rank (chunk " + std::to_string(chunk)
                    + " is virtual stage " + std::to_string(chunk / pp) + " of " + std::to_string(v) + ")" };
    }
    return std::nullopt;
}

} // namespace stagecraft
