// SPDX-License-Identifier: MIT
// Exact evaluation. A fast int64 path handles the common case (bound, positive denominators, every term an
// integer, no overflow); anything else is redone by the exact 128-bit rational path, which is the reference.

#include "symbolic/checkedmath.h"
#include "symbolic/expr.h"
#include "symbolic/exprbuilder.h"

#include <cmath>

namespace stagecraft {

using symbolic_detail::Int128;

namespace {

    /// acc/other := acc*v/other, cancelling common factors of v and `other` first so that a reduced fraction
    /// stays reduced. False when the reduced numerator leaves the 128-bit range.
    bool multiplyReduced(Int128& acc, Int128& other, Int128 v)
    {
        const Int128 g = symbolic_detail::gcd128(v, other);
        if (g > 1) {
            v /= g;
            other /= g;
        }
        return symbolic_detail::checkedMul(acc, v, &acc);
    }

    /// Walks the numerator (sign > 0) or denominator (sign < 0) factors of a term one power at a time.
    struct PowerCursor
    {
        const Expr::Factor* f;
        const Expr::Factor* end;
        int sign;
        int left = 0;

        /// Next base value to multiply, or false when exhausted.
        bool next(const Binding& b, Int128* v)
        {
            while (left == 0) {
                if (f == end)
                    return false;
                if ((f->exponent > 0) == (sign > 0))
                    left = f->exponent > 0 ? f->exponent : -f->exponent;
                else
                    ++f;
            }
            *v = b.value(f->symbol);
            if (--left == 0)
                ++f;
            return true;
        }
    };

    /// The exact value of one term as a reduced fraction (den may be negative until reduceFraction). Numerator
    /// and denominator powers are interleaved so that cancellation happens before either side grows.
    bool termValue(const Expr::Term& t, const Expr::Factor* factors, const Binding& b, Int128& num, Int128& den)
    {
        num = t.coefNum;
        den = t.coefDen;
        const Expr::Factor* first = factors + t.firstFactor;
        PowerCursor up { first, first + t.factorCount, 1 };
        PowerCursor down { first, first + t.factorCount, -1 };
        bool moreUp = true;
        bool moreDown = true;
        while (moreUp || moreDown) {
            Int128 v = 0;
            if (moreUp && (moreUp = up.next(b, &v)) && !multiplyReduced(num, den, v))
                return false;
            if (moreDown && (moreDown = down.next(b, &v)) && !multiplyReduced(den, num, v))
                return false;
        }
        symbolic_detail::reduceFraction(num, den);
        return true;
    }

    EvalResult fail(EvalStatus status, SymbolId symbol = {})
    {
        EvalResult r;
        r.status = status;
        r.symbol = symbol;
        return r;
    }

    /// The symbol that contributes most to the largest term (by log2 of its power), for an Overflow result: the
    /// one to make smaller. No symbol (0) for a constant expression.
    SymbolId dominantSymbol(std::span<const Expr::Term> terms, const Expr::Factor* factors, const Binding& b)
    {
        double largestTerm = -1;
        SymbolId dominant {};
        for (const Expr::Term& t : terms) {
            double termLog = std::log2(std::fabs(double(t.coefNum)));
            double factorLog = 0;
            SymbolId factorSymbol {};
            for (const Expr::Factor* f = factors + t.firstFactor; f != factors + t.firstFactor + t.factorCount; ++f) {
                const double v = std::fabs(double(b.value(f->symbol)));
                const double log = v > 0 ? f->exponent * std::log2(v) : 0;
                termLog += log;
                if (log > factorLog) {
                    factorLog = log;
                    factorSymbol = f->symbol;
                }
            }
            if (termLog > largestTerm && factorLog > 0) {
                largestTerm = termLog;
                dominant = factorSymbol;
            }
        }
        return dominant;
    }

    [[gnu::noinline]] EvalResult evaluateExact(
        std::span<const Expr::Term> terms, const Expr::Factor* factors, const Binding& b)
    {
        // Report binding problems first, in storage order, so the result does not depend on value magnitudes.
        for (const Expr::Term& t : terms) {
            for (const Expr::Factor* f = factors + t.firstFactor; f != factors + t.firstFactor + t.factorCount; ++f) {
                if (!b.isBound(f->symbol))
                    return fail(EvalStatus::Unbound, f->symbol);
            }
        }
        for (const Expr::Term& t : terms) {
            for (const Expr::Factor* f = factors + t.firstFactor; f != factors + t.firstFactor + t.factorCount; ++f) {
                if (f->exponent < 0 && b.value(f->symbol) == 0)
                    return fail(EvalStatus::DivisionByZero, f->symbol);
            }
        }
        Int128 sumNum = 0;
        Int128 sumDen = 1;
        for (const Expr::Term& t : terms) {
            Int128 num = 0;
            Int128 den = 1;
            if (!termValue(t, factors, b, num, den) || !symbolic_detail::addFraction(sumNum, sumDen, num, den))
                return fail(EvalStatus::Overflow, dominantSymbol(terms, factors, b));
        }
        EvalResult r;
        if (sumDen == 1) {
            if (!symbolic_detail::fitsInt64(sumNum))
                return fail(EvalStatus::Overflow, dominantSymbol(terms, factors, b));
            r.value = static_cast<int64_t>(sumNum);
            r.num = r.value;
            return r;
        }
        r.status = EvalStatus::NonInteger;
        if (symbolic_detail::fitsInt64(sumNum) && symbolic_detail::fitsInt64(sumDen)) {
            r.num = static_cast<int64_t>(sumNum);
            r.den = static_cast<int64_t>(sumDen);
        } else {
            r.num = 0;
            r.den = 0; // the reduced fraction does not fit in int64
        }
        return r;
    }

} // namespace

EvalResult Expr::evaluate(const Binding& b) const
{
    const Factor* const factors = m_factors.data();
    int64_t sum = 0;
    for (const Term& t : m_terms) {
        int64_t num = t.coefNum;
        int64_t den = t.coefDen;
        const Factor* f = factors + t.firstFactor;
        const Factor* const end = f + t.factorCount;
        for (; f != end; ++f) {
            if (!b.isBound(f->symbol)) [[unlikely]]
                goto exact;
            const int64_t v = b.value(f->symbol);
            int e = f->exponent;
            if (e > 0) {
                do {
                    if (__builtin_mul_overflow(num, v, &num)) [[unlikely]]
                        goto exact;
                } while (--e != 0);
            } else {
                if (v <= 0) [[unlikely]]
                    goto exact;
                do {
                    if (__builtin_mul_overflow(den, v, &den)) [[unlikely]]
                        goto exact;
                } while (++e != 0);
            }
        }
        if (den != 1) {
            // den > 0 here, so neither % nor / can trap.
            if (num % den != 0) [[unlikely]]
                goto exact;
            num /= den;
        }
        if (__builtin_add_overflow(sum, num, &sum)) [[unlikely]]
            goto exact;
    }
    {
        EvalResult r;
        r.value = sum;
        r.num = sum;
        return r;
    }
exact:
    return evaluateExact(m_terms, factors, b);
}

} // namespace stagecraft
