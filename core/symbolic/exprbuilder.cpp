// SPDX-License-Identifier: MIT

#include "symbolic/exprbuilder.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string_view>

namespace stagecraft {

using symbolic_detail::Int128;

namespace {

    struct KeyFactor
    {
        std::string_view name;
        int16_t exponent;
    };

    [[noreturn]] void throwTooLarge()
    {
        throw std::overflow_error("expression too large (more than " + std::to_string(ExprBuilder::kMaxTerms)
            + " terms or too many intermediate terms)");
    }

} // namespace

void ExprBuilder::reserve(std::size_t terms, std::size_t factors)
{
    m_raw.reserve(m_raw.size() + terms);
    m_rawFactors.reserve(m_rawFactors.size() + factors);
}

void ExprBuilder::addTerm(Int128 num, Int128 den, std::span<const Expr::Factor> factors)
{
    addTerm(num, den, factors, {});
}

void ExprBuilder::addTerm(Int128 num, Int128 den, std::span<const Expr::Factor> a, std::span<const Expr::Factor> b)
{
    if (num == 0)
        return;
    if (den == 0)
        throw std::domain_error("division by zero");
    if (m_raw.size() >= kMaxRawTerms)
        throwTooLarge();
    const std::size_t first = m_rawFactors.size();
    m_rawFactors.insert(m_rawFactors.end(), a.begin(), a.end());
    m_rawFactors.insert(m_rawFactors.end(), b.begin(), b.end());
    finishTerm(num, den, first);
}

void ExprBuilder::finishTerm(Int128 num, Int128 den, std::size_t first)
{
    symbolic_detail::reduceFraction(num, den);
    const auto begin = m_rawFactors.begin() + static_cast<std::ptrdiff_t>(first);
    std::sort(
        begin, m_rawFactors.end(), [](const Expr::Factor& x, const Expr::Factor& y) { return x.symbol < y.symbol; });
    // Merge repeated symbols in place and drop zero exponents.
    auto out = begin;
    for (auto it = begin; it != m_rawFactors.end();) {
        int64_t exponent = 0;
        const SymbolId s = it->symbol;
        for (; it != m_rawFactors.end() && it->symbol == s; ++it)
            exponent += it->exponent;
        if (exponent == 0)
            continue;
        if (exponent > std::numeric_limits<int16_t>::max() || exponent < -std::numeric_limits<int16_t>::max())
            throw std::overflow_error("exponent of " + std::string(symbolName(s)) + " out of range");
        *out++ = Expr::Factor { s, static_cast<int16_t>(exponent) };
    }
    m_rawFactors.erase(out, m_rawFactors.end());
    m_raw.push_back(
        RawTerm { num, den, static_cast<uint32_t>(first), static_cast<uint32_t>(m_rawFactors.size() - first) });
}

Expr ExprBuilder::build()
{
    // Sort key per raw term: factors by symbol name (exponent descending for equal names cannot happen: one
    // factor per symbol). Comparing names, not ids, keeps term order and printing independent of interning order.
    std::vector<KeyFactor> keys;
    keys.reserve(m_rawFactors.size());
    for (const Expr::Factor& f : m_rawFactors)
        keys.push_back(KeyFactor { symbolName(f.symbol), f.exponent });
    std::vector<int> degree(m_raw.size());
    for (std::size_t i = 0; i < m_raw.size(); ++i) {
        const RawTerm& t = m_raw[i];
        const auto kb = keys.begin() + t.first;
        std::sort(kb, kb + t.count, [](const KeyFactor& x, const KeyFactor& y) { return x.name < y.name; });
        int d = 0;
        for (uint32_t k = 0; k < t.count; ++k)
            d += kb[k].exponent;
        degree[i] = d;
    }
    // Canonical order: terms with symbols first, by total degree descending, then lexicographically by
    // (name ascending, exponent descending); constants last. Returns <0, 0 (same monomial) or >0.
    const auto compare = [&](std::size_t a, std::size_t b) -> int {
        const RawTerm& ta = m_raw[a];
        const RawTerm& tb = m_raw[b];
        const bool ca = ta.count == 0;
        const bool cb = tb.count == 0;
        if (ca != cb)
            return ca ? 1 : -1;
        if (degree[a] != degree[b])
            return degree[a] > degree[b] ? -1 : 1;
        const uint32_t n = std::min(ta.count, tb.count);
        for (uint32_t k = 0; k < n; ++k) {
            const KeyFactor& x = keys[ta.first + k];
            const KeyFactor& y = keys[tb.first + k];
            if (const int c = x.name.compare(y.name); c != 0)
                return c < 0 ? -1 : 1;
            if (x.exponent != y.exponent)
                return x.exponent > y.exponent ? -1 : 1;
        }
        if (ta.count != tb.count)
            return ta.count < tb.count ? -1 : 1;
        return 0;
    };
    std::vector<std::size_t> order(m_raw.size());
    std::iota(order.begin(), order.end(), std::size_t { 0 });
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return compare(a, b) < 0; });

    Expr result;
    for (std::size_t i = 0; i < order.size();) {
        const RawTerm& t = m_raw[order[i]];
        Int128 num = t.num;
        Int128 den = t.den;
        std::size_t j = i + 1;
        for (; j < order.size() && compare(order[i], order[j]) == 0; ++j) {
            const RawTerm& u = m_raw[order[j]];
            if (!symbolic_detail::addFraction(num, den, u.num, u.den))
                throw std::overflow_error("coefficient overflow");
        }
        i = j;
        if (num == 0)
            continue;
        if (!symbolic_detail::fitsInt64Symmetric(num) || !symbolic_detail::fitsInt64Symmetric(den))
            throw std::overflow_error("coefficient overflow");
        if (result.m_terms.size() >= kMaxTerms)
            throwTooLarge();
        result.m_terms.push_back(Expr::Term { static_cast<int64_t>(num), static_cast<int64_t>(den),
            static_cast<uint32_t>(result.m_factors.size()), static_cast<uint16_t>(t.count) });
        result.m_factors.insert(
            result.m_factors.end(), m_rawFactors.begin() + t.first, m_rawFactors.begin() + t.first + t.count);
    }
    m_raw.clear();
    m_rawFactors.clear();
    return result;
}

} // namespace stagecraft
