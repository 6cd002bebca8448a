// SPDX-License-Identifier: MIT
// Canonical printing and evaluation error messages.

#include "symbolic/expr.h"
#include "symbolic/exprbuilder.h"

#include <algorithm>
#include <string>
#include <vector>

namespace stagecraft {

namespace {

    struct NamedFactor
    {
        std::string_view name;
        int exponent;
    };

    void appendPower(std::string& out, std::string_view name, int exponent)
    {
        out += name;
        if (exponent != 1) {
            out += '^';
            out += std::to_string(exponent);
        }
    }

    /// Prints |term|: `2*Dmodel^2*MicroBatch*Seq/tp`, `Seq/(cp*tp)`, `3*x/2`, `3/2`, `1/x`. Factors are ordered by
    /// name so the text does not depend on interning order.
    void appendMagnitude(std::string& out, const Expr& e, const Expr::Term& t)
    {
        std::vector<NamedFactor> factors;
        factors.reserve(t.factorCount);
        for (const Expr::Factor& f : ExprBuilder::factors(e, t))
            factors.push_back(NamedFactor { symbolName(f.symbol), f.exponent });
        std::sort(
            factors.begin(), factors.end(), [](const NamedFactor& a, const NamedFactor& b) { return a.name < b.name; });

        // Coefficients are within +-INT64_MAX, so the magnitude fits.
        const int64_t magnitude = t.coefNum < 0 ? -t.coefNum : t.coefNum;
        const bool hasNumeratorSymbol =
            std::any_of(factors.begin(), factors.end(), [](const NamedFactor& f) { return f.exponent > 0; });
        bool first = true;
        if (magnitude != 1 || !hasNumeratorSymbol) {
            out += std::to_string(magnitude);
            first = false;
        }
        for (const NamedFactor& f : factors) {
            if (f.exponent < 0)
                continue;
            if (!first)
                out += '*';
            appendPower(out, f.name, f.exponent);
            first = false;
        }

        const int denominatorParts = (t.coefDen != 1 ? 1 : 0)
            + static_cast<int>(
                std::count_if(factors.begin(), factors.end(), [](const NamedFactor& f) { return f.exponent < 0; }));
        if (denominatorParts == 0)
            return;
        out += denominatorParts == 1 ? "/" : "/(";
        first = true;
        if (t.coefDen != 1) {
            out += std::to_string(t.coefDen);
            first = false;
        }
        for (const NamedFactor& f : factors) {
            if (f.exponent > 0)
                continue;
            if (!first)
                out += '*';
            appendPower(out, f.name, -f.exponent);
            first = false;
        }
        if (denominatorParts > 1)
            out += ')';
    }

} // namespace

std::string Expr::toString() const
{
    if (m_terms.empty())
        return "0";
    std::string out;
    bool first = true;
    for (const Term& t : m_terms) {
        if (first)
            out += t.coefNum < 0 ? "-" : "";
        else
            out += t.coefNum < 0 ? " - " : " + ";
        appendMagnitude(out, *this, t);
        first = false;
    }
    return out;
}

std::string describeEvalError(const Expr& e, const EvalResult& r)
{
    switch (r.status) {
    case EvalStatus::Ok:
        return {};
    case EvalStatus::NonInteger:
        if (r.den == 0)
            return e.toString() + " is not an integer (its exact value is a fraction too large to show)";
        return e.toString() + " = " + std::to_string(r.num) + "/" + std::to_string(r.den) + " is not an integer";
    case EvalStatus::Overflow:
        return e.toString() + " does not fit in a 64-bit integer";
    case EvalStatus::Unbound:
        return e.toString() + ": symbol " + std::string(symbolName(r.symbol)) + " has no value";
    case EvalStatus::DivisionByZero:
        return e.toString() + ": division by zero (" + std::string(symbolName(r.symbol)) + " = 0)";
    }
    return e.toString() + ": unknown evaluation error";
}

} // namespace stagecraft
