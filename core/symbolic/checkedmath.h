// SPDX-License-Identifier: MIT
#pragma once

// Internal to core/symbolic: 128-bit checked integer and rational arithmetic shared by the canonicalizer and the
// exact evaluator. Every helper returns false instead of overflowing; nothing here allocates or throws.

#include <cstdint>
#include <limits>

namespace stagecraft::symbolic_detail {

__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 UInt128;

/// Largest magnitude we keep in an Int128. The range is symmetric (INT128_MIN is treated as overflow) so that
/// negation and absolute value never overflow.
inline constexpr Int128 kInt128Max = static_cast<Int128>((static_cast<UInt128>(1) << 127) - 1);

inline bool fitsInt64Symmetric(Int128 v)
{
    return v <= std::numeric_limits<int64_t>::max() && v >= -static_cast<Int128>(std::numeric_limits<int64_t>::max());
}

inline bool fitsInt64(Int128 v)
{
    return v <= std::numeric_limits<int64_t>::max() && v >= std::numeric_limits<int64_t>::min();
}

inline UInt128 absU(Int128 v)
{
    return v < 0 ? static_cast<UInt128>(0) - static_cast<UInt128>(v) : static_cast<UInt128>(v);
}

inline bool checkedMul(Int128 a, Int128 b, Int128* out)
{
    return !__builtin_mul_overflow(a, b, out) && *out >= -kInt128Max;
}

inline bool checkedAdd(Int128 a, Int128 b, Int128* out)
{
    return !__builtin_add_overflow(a, b, out) && *out >= -kInt128Max;
}

/// gcd(|a|, |b|); gcd(0, 0) == 0. Operands are in the symmetric range, so the result fits.
inline Int128 gcd128(Int128 a, Int128 b)
{
    UInt128 x = absU(a);
    UInt128 y = absU(b);
    while (y != 0) {
        const UInt128 r = x % y;
        x = y;
        y = r;
    }
    return static_cast<Int128>(x);
}

/// Brings num/den to lowest terms with den > 0. den must not be 0.
inline void reduceFraction(Int128& num, Int128& den)
{
    if (den < 0) {
        num = -num;
        den = -den;
    }
    if (den == 1)
        return;
    const Int128 g = gcd128(num, den);
    if (g > 1) {
        num /= g;
        den /= g;
    }
    if (num == 0)
        den = 1;
}

/// a := a + b for reduced fractions with positive denominators. The result is reduced.
inline bool addFraction(Int128& aNum, Int128& aDen, Int128 bNum, Int128 bDen)
{
    if (aDen == 1 && bDen == 1)
        return checkedAdd(aNum, bNum, &aNum);
    const Int128 g = gcd128(aDen, bDen);
    const Int128 aScale = bDen / g; // lcm / aDen
    const Int128 bScale = aDen / g; // lcm / bDen
    Int128 lcm = 0;
    Int128 x = 0;
    Int128 y = 0;
    Int128 sum = 0;
    if (!checkedMul(aDen, aScale, &lcm) || !checkedMul(aNum, aScale, &x) || !checkedMul(bNum, bScale, &y)
        || !checkedAdd(x, y, &sum))
        return false;
    aNum = sum;
    aDen = lcm;
    reduceFraction(aNum, aDen);
    return true;
}

/// a := a * b for reduced fractions with positive denominators (cross-reduced first). The result is reduced.
inline bool mulFraction(Int128& aNum, Int128& aDen, Int128 bNum, Int128 bDen)
{
    const Int128 g1 = gcd128(aNum, bDen);
    const Int128 g2 = gcd128(bNum, aDen);
    const Int128 an = g1 > 1 ? aNum / g1 : aNum;
    const Int128 bd = g1 > 1 ? bDen / g1 : bDen;
    const Int128 bn = g2 > 1 ? bNum / g2 : bNum;
    const Int128 ad = g2 > 1 ? aDen / g2 : aDen;
    Int128 num = 0;
    Int128 den = 0;
    if (!checkedMul(an, bn, &num) || !checkedMul(ad, bd, &den))
        return false;
    aNum = num;
    aDen = den;
    if (aNum == 0)
        aDen = 1;
    return true;
}

} // namespace stagecraft::symbolic_detail
