// SPDX-License-Identifier: MIT
#include "program/nodename.h"

#include <charconv>
#include <functional>
#include <mutex>
#include <string_view>
#include <unordered_set>

namespace stagecraft {

namespace {

    /// Interned suffixes: node-based, so a pointer to an element stays valid for the process's life. Grows by
    /// the distinct suffixes only (layers x ops x passes of the largest model seen), never by micro-batches.
    struct TextHash
    {
        using is_transparent = void; ///< looks up a string_view without making a std::string of it
        size_t operator()(std::string_view text) const noexcept
        {
            return std::hash<std::string_view> {}(text);
        }
    };

    const std::string* intern(std::string_view text)
    {
        static std::mutex mutex;
        static std::unordered_set<std::string, TextHash, std::equal_to<>> table;
        const std::lock_guard lock(mutex);
        // Nearly every name is already interned: find first, as emplace would allocate a node to compare.
        if (const auto it = table.find(text); it != table.end())
            return &*it;
        return &*table.emplace(text).first;
    }

    const std::string* emptyText()
    {
        static const std::string* const empty = intern({});
        return empty;
    }

} // namespace

NodeName::NodeName()
{
    setSuffix(emptyText());
}

NodeName::NodeName(std::string_view text)
{
    // "mb<digits>/" with a canonical number (no leading zero, fits): anything else is kept verbatim.
    if (text.size() > 3 && text.substr(0, 2) == "mb") {
        const size_t slash = text.find('/', 2);
        if (slash != std::string_view::npos && slash > 2 && slash <= 2 + 18 && text[2] >= '0' && text[2] <= '9'
            && (text[2] != '0' || slash == 3)) {
            int32_t value = 0;
            const auto [end, ec] = std::from_chars(text.data() + 2, text.data() + slash, value);
            if (ec == std::errc() && end == text.data() + slash) {
                m_microBatch = value;
                setSuffix(intern(text.substr(slash + 1)));
                return;
            }
        }
    }
    setSuffix(text.empty() ? emptyText() : intern(text));
}

const std::string* NodeName::intern(std::string_view suffix)
{
    return suffix.empty() ? emptyText() : stagecraft::intern(suffix);
}

std::string NodeName::str() const
{
    if (m_microBatch < 0)
        return *suffix();
    return "mb" + std::to_string(m_microBatch) + "/" + *suffix();
}

std::string operator+(const std::string& a, const NodeName& b)
{
    return a + b.str();
}
std::string operator+(const NodeName& a, const std::string& b)
{
    return a.str() + b;
}
std::string operator+(const char* a, const NodeName& b)
{
    return a + b.str();
}
std::string operator+(const NodeName& a, const char* b)
{
    return a.str() + b;
}

} // namespace stagecraft
