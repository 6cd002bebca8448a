// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stagecraft {

/// A named symbol ("Seq", "tp", ...). Interned process-wide: the same name always gives the same id.
/// Ids are small dense integers (< kMaxSymbols) so a Binding is a flat array.
struct SymbolId
{
    uint16_t value = 0;
    friend bool operator==(SymbolId, SymbolId) = default;
    friend auto operator<=>(SymbolId, SymbolId) = default;
};

/// Upper bound on distinct symbols in one process.
inline constexpr int kMaxSymbols = 256;

/// Interns `name` (an identifier: letter or '_' then letters, digits, '_'). Thread-safe.
/// Throws std::invalid_argument for an empty or malformed name or when kMaxSymbols is exceeded.
SymbolId internSymbol(std::string_view name);
/// The name of an interned symbol. Thread-safe; the view stays valid for the life of the process.
std::string_view symbolName(SymbolId id);

/// Values for symbols, used by Expr::evaluate. Unbound symbols make evaluation fail with Unbound.
/// Copyable, cheap (a flat array); not thread-safe for concurrent mutation.
class Binding
{
public:
    void set(SymbolId id, int64_t value);
    void set(std::string_view name, int64_t value);
    void unset(SymbolId id);
    bool isBound(SymbolId id) const
    {
        return (m_bound[id.value >> 6] >> (id.value & 63)) & 1u;
    }
    int64_t value(SymbolId id) const
    {
        return m_values[id.value];
    }

private:
    int64_t m_values[kMaxSymbols] = {};
    uint64_t m_bound[kMaxSymbols / 64] = {};
};

enum class EvalStatus : uint8_t
{
    Ok,
    NonInteger, ///< exact value is a fraction, e.g. Head/tp with Head=32, tp=3
    Overflow, ///< a term or the sum does not fit in int64
    Unbound, ///< a symbol has no value in the binding
    DivisionByZero, ///< a symbol in a denominator is bound to 0
};

/// Result of exact evaluation. `value` is meaningful only when status == Ok. For NonInteger, num/den hold the
/// reduced fraction (when it fits in int64) so that a message can show it; `symbol` names the offending symbol
/// for Unbound and DivisionByZero, and for Overflow the symbol whose power contributes most to the largest term
/// (the value to make smaller; meaningless when the expression has no symbols).
/// Details of this implementation: for NonInteger whose reduced fraction does not fit in int64, num == den == 0.
/// When several symbols are unbound (or zero in a denominator) one of them is reported.
struct EvalResult
{
    EvalStatus status = EvalStatus::Ok;
    int64_t value = 0;
    int64_t num = 0;
    int64_t den = 1;
    SymbolId symbol {};
    bool ok() const
    {
        return status == EvalStatus::Ok;
    }
};

/// Human-readable explanation of a failed evaluation of `e`, e.g.
/// "Head/tp = 32/3 is not an integer". Empty string for Ok.
class Expr;
std::string describeEvalError(const Expr& e, const EvalResult& r);

/// An exact symbolic expression: a sum of monomials, each a rational coefficient times a product of symbols
/// with (possibly negative) integer exponents. Examples: `Seq/(cp*tp)`, `Head + 2*KVHead`,
/// `2*MicroBatch*Seq*Dmodel^2/tp`.
///
/// Always kept in canonical form (terms sorted, like terms merged, zero terms dropped, coefficient fractions
/// reduced), so structural equality is mathematical equality of the rational functions representable this way:
/// `(Seq/cp)/tp == Seq/(cp*tp)` and `Head + KVHead == KVHead + Head`.
/// Division is supported by a monomial only (a symbol, number or product/quotient of them); dividing by a
/// sum throws std::domain_error, as does division by the constant 0.
/// Value type; immutable after construction; safe to share across threads for reading.
///
/// Limits (all throw std::overflow_error when exceeded during construction, never on evaluation): coefficients
/// are fractions whose numerator and denominator lie within +-INT64_MAX (so `Expr(INT64_MIN)` throws), exponents
/// within +-32767, at most 4096 terms per expression and 65536 term products per multiplication.
/// Canonical term order: terms with symbols first, by total degree (sum of exponents) descending, then by their
/// factors compared by symbol *name*, constants last. Printing orders factors by name too, so text and term order
/// never depend on the order in which symbols were interned.
class Expr
{
public:
    /// The constant 0.
    Expr();
    /// An integer constant. Implicit on purpose: `2 * e`, `e + 1` read naturally.
    Expr(int64_t value);
    Expr(int value)
        : Expr(static_cast<int64_t>(value))
    {
    }
    /// A single symbol.
    static Expr symbol(std::string_view name);
    static Expr symbol(SymbolId id);

    /// Parses text like `Seq/(cp*tp)`, `Head + 2*KVHead`, `Dmodel^2`, `-3*x`. Grammar: sums and differences of
    /// products and quotients of integers, identifiers, parenthesised expressions, and `^` with an integer
    /// exponent. On failure returns nullopt and, when `error` is non-null, sets it to a message naming the
    /// 0-based character offset ("at 5: expected an operand").
    static std::optional<Expr> parse(std::string_view text, std::string* error = nullptr);

    /// Prints the canonical form; parse(toString()) == *this for every expression.
    std::string toString() const;

    friend Expr operator+(const Expr& a, const Expr& b);
    friend Expr operator-(const Expr& a, const Expr& b);
    friend Expr operator*(const Expr& a, const Expr& b);
    /// Throws std::domain_error when b is not a non-zero monomial.
    friend Expr operator/(const Expr& a, const Expr& b);
    Expr operator-() const;
    Expr& operator+=(const Expr& b)
    {
        return *this = *this + b;
    }
    Expr& operator*=(const Expr& b)
    {
        return *this = *this * b;
    }
    /// Integer power, n >= 0. Also accepts n < 0 for a non-zero monomial (its inverse to the power -n) and
    /// throws std::domain_error for a negative power of zero or of a sum. pow(0) is 1, also for zero.
    Expr pow(int n) const;

    friend bool operator==(const Expr& a, const Expr& b);

    /// Replaces every occurrence of `s` by `replacement` and returns the canonical result.
    /// Throws std::domain_error if `s` occurs with a negative exponent and `replacement` is not a monomial.
    Expr substitute(SymbolId s, const Expr& replacement) const;
    Expr substitute(std::string_view name, const Expr& replacement) const;

    bool isZero() const;
    /// True when the expression has no symbols.
    bool isConstant() const;
    /// The value when the expression is an integer constant.
    std::optional<int64_t> constantValue() const;
    /// True when the expression is a single term (coefficient times a product of powers).
    bool isMonomial() const;
    /// The distinct symbols that occur, sorted by id.
    std::vector<SymbolId> symbols() const;
    bool contains(SymbolId s) const;

    /// Exact evaluation under `b`. Never truncates: a fractional exact value gives NonInteger; anything
    /// that does not fit int64 (including intermediates that cannot be reduced) gives Overflow.
    /// Does not allocate. Target: well under 100 ns for a typical shape expression.
    /// Intermediates are exact in 128 bits, so e.g. `x*y - x*z` evaluates correctly even when x*y alone
    /// exceeds int64. Thread-safe (const, no shared state).
    EvalResult evaluate(const Binding& b) const;

    /// Number of terms of the canonical form (0 for the zero expression).
    int termCount() const;

    /// Implementation detail, public so that the evaluator and printer can be free functions.
    struct Factor
    {
        SymbolId symbol;
        int16_t exponent; // never 0
    };
    struct Term
    {
        int64_t coefNum; // never 0
        int64_t coefDen; // > 0, gcd(coefNum, coefDen) == 1
        uint32_t firstFactor; // index into m_factors
        uint16_t factorCount; // factors sorted by symbol id, one per symbol
    };

private:
    std::vector<Term> m_terms; // sorted canonically
    std::vector<Factor> m_factors;
    friend class ExprBuilder;
};

/// Convenience: parse or throw std::invalid_argument with the parse error. For literals in code.
Expr expr(std::string_view text);

} // namespace stagecraft
