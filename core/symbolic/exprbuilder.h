// SPDX-License-Identifier: MIT
#pragma once

// Internal to core/symbolic: collects raw terms and turns them into a canonical Expr; also gives the printer,
// evaluator and parser read access to an Expr's terms.

#include "symbolic/checkedmath.h"
#include "symbolic/expr.h"

#include <cstddef>
#include <span>
#include <vector>

namespace stagecraft {

/// Not thread-safe; one builder per construction. Throws std::overflow_error from build() when a merged
/// coefficient, an exponent or the term count leaves its range.
class ExprBuilder
{
public:
    /// Upper bound on the terms of one canonical expression, and on the raw terms of one construction
    /// (a product of sums). Shape expressions have a handful; the limits keep hostile input cheap.
    static constexpr std::size_t kMaxTerms = 4096;
    static constexpr std::size_t kMaxRawTerms = std::size_t { 1 } << 16;

    /// Adds coefficient num/den (den != 0, any sign, not necessarily reduced) times the product of `factors`
    /// (any order, repeated symbols and zero exponents allowed). Exponents are summed in int32 and checked.
    void addTerm(symbolic_detail::Int128 num, symbolic_detail::Int128 den, std::span<const Expr::Factor> factors);
    /// Same, with a second factor list multiplied in (used for products of two terms).
    void addTerm(symbolic_detail::Int128 num, symbolic_detail::Int128 den, std::span<const Expr::Factor> a,
        std::span<const Expr::Factor> b);
    void reserve(std::size_t terms, std::size_t factors);
    /// Canonicalizes and returns the result; the builder is left empty.
    Expr build();

    static std::span<const Expr::Term> terms(const Expr& e)
    {
        return e.m_terms;
    }
    static std::span<const Expr::Factor> factors(const Expr& e, const Expr::Term& t)
    {
        return std::span<const Expr::Factor>(e.m_factors).subspan(t.firstFactor, t.factorCount);
    }

private:
    struct RawTerm
    {
        symbolic_detail::Int128 num;
        symbolic_detail::Int128 den;
        uint32_t first;
        uint32_t count;
    };
    void finishTerm(symbolic_detail::Int128 num, symbolic_detail::Int128 den, std::size_t first);

    std::vector<RawTerm> m_raw;
    std::vector<Expr::Factor> m_rawFactors;
};

} // namespace stagecraft
