// SPDX-License-Identifier: MIT
// Process-wide symbol interning and Binding.

#include "symbolic/expr.h"

#include <atomic>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

namespace stagecraft {

namespace {

    bool isIdentifierStart(char c)
    {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
    }

    bool isIdentifierChar(char c)
    {
        return isIdentifierStart(c) || (c >= '0' && c <= '9');
    }

    bool isIdentifier(std::string_view name)
    {
        if (name.empty() || !isIdentifierStart(name.front()))
            return false;
        for (const char c : name) {
            if (!isIdentifierChar(c))
                return false;
        }
        return true;
    }

    struct SymbolTable
    {
        std::mutex mutex;
        std::map<std::string, uint16_t, std::less<>> ids; // guarded by mutex
        // Written once per slot under the mutex before the id is handed out; never modified afterwards, so readers
        // holding an id need no lock.
        std::string names[kMaxSymbols];
        std::atomic<int> count { 0 };
    };

    SymbolTable& table()
    {
        // Never destroyed: symbolName() promises views valid for the life of the process, including static destructors.
        static SymbolTable* t = new SymbolTable;
        return *t;
    }

} // namespace

SymbolId internSymbol(std::string_view name)
{
    if (!isIdentifier(name))
        throw std::invalid_argument("invalid symbol name '" + std::string(name) + "'");
    SymbolTable& t = table();
    const std::lock_guard lock(t.mutex);
    if (const auto it = t.ids.find(name); it != t.ids.end())
        return SymbolId { it->second };
    const int n = t.count.load(std::memory_order_relaxed);
    if (n >= kMaxSymbols)
        throw std::invalid_argument("too many distinct symbols (limit " + std::to_string(kMaxSymbols) + ")");
    t.names[n] = std::string(name);
    t.ids.emplace(t.names[n], static_cast<uint16_t>(n));
    t.count.store(n + 1, std::memory_order_release);
    return SymbolId { static_cast<uint16_t>(n) };
}

std::string_view symbolName(SymbolId id)
{
    SymbolTable& t = table();
    if (id.value >= t.count.load(std::memory_order_acquire))
        return {};
    return t.names[id.value];
}

void Binding::set(SymbolId id, int64_t value)
{
    m_values[id.value] = value;
    m_bound[id.value >> 6] |= uint64_t { 1 } << (id.value & 63);
}

void Binding::set(std::string_view name, int64_t value)
{
    set(internSymbol(name), value);
}

void Binding::unset(SymbolId id)
{
    m_values[id.value] = 0;
    m_bound[id.value >> 6] &= ~(uint64_t { 1 } << (id.value & 63));
}

} // namespace stagecraft
