// SPDX-License-Identifier: MIT
// Construction, arithmetic and queries of canonical expressions. Parsing, printing and evaluation live in
// exprparser.cpp, exprprinter.cpp and exprevaluate.cpp.

#include "symbolic/expr.h"

#include "symbolic/checkedmath.h"
#include "symbolic/exprbuilder.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace stagecraft {

using symbolic_detail::Int128;

namespace {

    /// The inverse of a non-zero monomial.
    Expr inverseMonomial(const Expr& m)
    {
        const Expr::Term& t = ExprBuilder::terms(m).front();
        std::vector<Expr::Factor> factors(ExprBuilder::factors(m, t).begin(), ExprBuilder::factors(m, t).end());
        for (Expr::Factor& f : factors)
            f.exponent = static_cast<int16_t>(-f.exponent); // exponents are kept within +-32767
        ExprBuilder b;
        b.addTerm(t.coefNum < 0 ? -Int128 { t.coefDen } : Int128 { t.coefDen },
            t.coefNum < 0 ? -Int128 { t.coefNum } : Int128 { t.coefNum }, factors);
        return b.build();
    }

    void requireDivisor(const Expr& b)
    {
        if (b.isZero())
            throw std::domain_error("division by zero");
        if (!b.isMonomial())
            throw std::domain_error("division by a sum is not supported");
    }

} // namespace

Expr::Expr() = default;

Expr::Expr(int64_t value)
{
    if (value == std::numeric_limits<int64_t>::min())
        throw std::overflow_error("integer constant out of range (INT64_MIN)");
    if (value != 0)
        m_terms.push_back(Term { value, 1, 0, 0 });
}

Expr Expr::symbol(std::string_view name)
{
    return symbol(internSymbol(name));
}

Expr Expr::symbol(SymbolId id)
{
    Expr e;
    e.m_terms.push_back(Term { 1, 1, 0, 1 });
    e.m_factors.push_back(Factor { id, 1 });
    return e;
}

Expr operator+(const Expr& a, const Expr& b)
{
    if (a.isZero())
        return b;
    if (b.isZero())
        return a;
    ExprBuilder builder;
    builder.reserve(a.m_terms.size() + b.m_terms.size(), a.m_factors.size() + b.m_factors.size());
    for (const Expr::Term& t : a.m_terms)
        builder.addTerm(t.coefNum, t.coefDen, ExprBuilder::factors(a, t));
    for (const Expr::Term& t : b.m_terms)
        builder.addTerm(t.coefNum, t.coefDen, ExprBuilder::factors(b, t));
    return builder.build();
}

Expr operator-(const Expr& a, const Expr& b)
{
    return a + (-b);
}

Expr operator*(const Expr& a, const Expr& b)
{
    if (a.isZero() || b.isZero())
        return Expr();
    const std::size_t pairs = a.m_terms.size() * b.m_terms.size();
    if (pairs > ExprBuilder::kMaxRawTerms)
        throw std::overflow_error("expression too large (product of " + std::to_string(a.m_terms.size()) + " and "
            + std::to_string(b.m_terms.size()) + " terms)");
    ExprBuilder builder;
    builder.reserve(pairs, a.m_factors.size() * b.m_terms.size() + b.m_factors.size() * a.m_terms.size());
    for (const Expr::Term& x : a.m_terms) {
        for (const Expr::Term& y : b.m_terms) {
            builder.addTerm(Int128 { x.coefNum } * y.coefNum, Int128 { x.coefDen } * y.coefDen,
                ExprBuilder::factors(a, x), ExprBuilder::factors(b, y));
        }
    }
    return builder.build();
}

Expr operator/(const Expr& a, const Expr& b)
{
    requireDivisor(b);
    return a * inverseMonomial(b);
}

Expr Expr::operator-() const
{
    Expr r = *this;
    for (Term& t : r.m_terms)
        t.coefNum = -t.coefNum; // coefficients are kept within +-INT64_MAX
    return r;
}

Expr Expr::pow(int n) const
{
    if (n == 0)
        return Expr(1);
    if (n < 0) {
        requireDivisor(*this);
        if (n == std::numeric_limits<int>::min())
            throw std::overflow_error("exponent out of range");
        return inverseMonomial(*this).pow(-n);
    }
    if (n == 1 || isZero())
        return *this;
    if (isMonomial()) {
        const Term& t = m_terms.front();
        Int128 num = 1;
        Int128 den = 1;
        Int128 baseNum = t.coefNum;
        Int128 baseDen = t.coefDen;
        for (int k = n;;) {
            if (k & 1) {
                if (!symbolic_detail::checkedMul(num, baseNum, &num)
                    || !symbolic_detail::checkedMul(den, baseDen, &den))
                    throw std::overflow_error("coefficient overflow");
            }
            k >>= 1;
            if (k == 0)
                break;
            if (!symbolic_detail::checkedMul(baseNum, baseNum, &baseNum)
                || !symbolic_detail::checkedMul(baseDen, baseDen, &baseDen))
                throw std::overflow_error("coefficient overflow");
        }
        std::vector<Factor> factors;
        for (const Factor& f : ExprBuilder::factors(*this, t)) {
            const int64_t e = int64_t { f.exponent } * n;
            if (e > std::numeric_limits<int16_t>::max() || e < -std::numeric_limits<int16_t>::max())
                throw std::overflow_error("exponent of " + std::string(symbolName(f.symbol)) + " out of range");
            factors.push_back(Factor { f.symbol, static_cast<int16_t>(e) });
        }
        ExprBuilder b;
        b.addTerm(num, den, factors);
        return b.build();
    }
    Expr result(1);
    Expr base = *this;
    for (int k = n;;) {
        if (k & 1)
            result = result * base;
        k >>= 1;
        if (k == 0)
            break;
        base = base * base;
    }
    return result;
}

bool operator==(const Expr& a, const Expr& b)
{
    if (a.m_terms.size() != b.m_terms.size() || a.m_factors.size() != b.m_factors.size())
        return false;
    for (std::size_t i = 0; i < a.m_terms.size(); ++i) {
        const Expr::Term& x = a.m_terms[i];
        const Expr::Term& y = b.m_terms[i];
        if (x.coefNum != y.coefNum || x.coefDen != y.coefDen || x.factorCount != y.factorCount)
            return false;
    }
    // Factors are stored contiguously in term order, so equal term shapes mean aligned factor arrays.
    for (std::size_t i = 0; i < a.m_factors.size(); ++i) {
        if (a.m_factors[i].symbol != b.m_factors[i].symbol || a.m_factors[i].exponent != b.m_factors[i].exponent)
            return false;
    }
    return true;
}

Expr Expr::substitute(SymbolId s, const Expr& replacement) const
{
    if (!contains(s))
        return *this;
    Expr result;
    for (const Term& t : m_terms) {
        ExprBuilder b;
        std::vector<Factor> rest;
        int exponent = 0;
        for (const Factor& f : ExprBuilder::factors(*this, t)) {
            if (f.symbol == s)
                exponent = f.exponent;
            else
                rest.push_back(f);
        }
        b.addTerm(t.coefNum, t.coefDen, rest);
        const Expr monomial = b.build();
        result += exponent == 0 ? monomial : monomial * replacement.pow(exponent);
    }
    return result;
}

Expr Expr::substitute(std::string_view name, const Expr& replacement) const
{
    return substitute(internSymbol(name), replacement);
}

bool Expr::isZero() const
{
    return m_terms.empty();
}

bool Expr::isConstant() const
{
    return m_factors.empty();
}

std::optional<int64_t> Expr::constantValue() const
{
    if (m_terms.empty())
        return 0;
    if (m_terms.size() == 1 && m_terms.front().factorCount == 0 && m_terms.front().coefDen == 1)
        return m_terms.front().coefNum;
    return std::nullopt;
}

bool Expr::isMonomial() const
{
    return m_terms.size() == 1;
}

std::vector<SymbolId> Expr::symbols() const
{
    std::vector<SymbolId> ids;
    ids.reserve(m_factors.size());
    for (const Factor& f : m_factors)
        ids.push_back(f.symbol);
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    return ids;
}

bool Expr::contains(SymbolId s) const
{
    return std::any_of(m_factors.begin(), m_factors.end(), [s](const Factor& f) { return f.symbol == s; });
}

int Expr::termCount() const
{
    return static_cast<int>(m_terms.size());
}

} // namespace stagecraft
