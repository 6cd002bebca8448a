// SPDX-License-Identifier: MIT
// The name of a program node ("mb3/L12.attn.qkv:fwd"): its micro-batch prefix kept as a number and the rest
// interned in a process-wide table. A program repeats the same suffixes for every micro-batch (and its stages
// repeat each other's), so a name costs 12 bytes and no allocation, where a std::string of the same text cost
// 32 bytes plus a heap block of about 30.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace stagecraft {

class NodeName
{
public:
    NodeName();
    NodeName(std::string_view text); // NOLINT(google-explicit-constructor): names are assigned from strings
    NodeName(const std::string& text)
        : NodeName(std::string_view(text))
    {
    }
    NodeName(const char* text)
        : NodeName(std::string_view(text))
    {
    }
    /// "mb<microBatch>/<suffix>" (just `suffix` for microBatch < 0) from a suffix interned once with intern(): what a
    /// program builder that names the same op in every micro-batch uses, without composing and parsing the text.
    NodeName(int32_t microBatch, const std::string* internedSuffix)
        : m_microBatch(microBatch < 0 ? -1 : microBatch)
    {
        setSuffix(internedSuffix);
    }
    /// The process-wide copy of `suffix` (stable for the process's life), for the constructor above.
    static const std::string* intern(std::string_view suffix);

    /// The full text, as it was given.
    std::string str() const;
    operator std::string() const // NOLINT(google-explicit-constructor): reads like the string it was
    {
        return str();
    }
    bool empty() const
    {
        return m_microBatch < 0 && suffix()->empty();
    }
    /// The text after the "mbN/" prefix (all of it when there is none).
    const std::string& withoutMicroBatch() const
    {
        return *suffix();
    }

    friend bool operator==(const NodeName& a, const NodeName& b)
    {
        return a.suffix() == b.suffix() && a.m_microBatch == b.m_microBatch; // interned: same text, same pointer
    }
    friend bool operator==(const NodeName& a, std::string_view b)
    {
        return a.str() == b;
    }
    friend bool operator==(const NodeName& a, const std::string& b)
    {
        return a.str() == b;
    }
    friend bool operator==(const NodeName& a, const char* b)
    {
        return a.str() == b;
    }

private:
    const std::string* suffix() const
    {
        const std::string* p = nullptr;
        std::memcpy(&p, m_suffix, sizeof p);
        return p;
    }
    void setSuffix(const std::string* p)
    {
        std::memcpy(m_suffix, &p, sizeof p);
    }

    /// The interned suffix's address, in two 4-byte words so that the name is 12 bytes with 4-byte alignment
    /// (a program node packs tighter). Never null.
    uint32_t m_suffix[2] {};
    int32_t m_microBatch = -1; ///< >= 0: the text starts with "mb<m_microBatch>/"
};

std::string operator+(const std::string& a, const NodeName& b);
std::string operator+(const NodeName& a, const std::string& b);
std::string operator+(const char* a, const NodeName& b);
std::string operator+(const NodeName& a, const char* b);

} // namespace stagecraft
