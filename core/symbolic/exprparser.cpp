// SPDX-License-Identifier: MIT
// Recursive-descent parser for Expr::parse.
//
//   sum     := product (('+' | '-') product)*
//   product := unary (('*' | '/') unary)*
//   unary   := ('+' | '-')* power              (signs are consumed in a loop: no recursion)
//   power   := primary ('^' ['+' | '-'] integer)?
//   primary := integer | identifier | '(' sum ')'
//
// Only parentheses recurse, and their depth is limited, so no input can exhaust the stack.

#include "symbolic/expr.h"

#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>

namespace stagecraft {

namespace {

    constexpr int kMaxNesting = 200;

    struct ParseError
    {
        std::size_t offset;
        std::string message;
    };

    bool isDigit(char c)
    {
        return c >= '0' && c <= '9';
    }

    bool isIdentifierStart(char c)
    {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
    }

    bool isIdentifierChar(char c)
    {
        return isIdentifierStart(c) || isDigit(c);
    }

    std::string describeChar(char c)
    {
        const auto u = static_cast<unsigned char>(c);
        if (u >= 0x20 && u < 0x7f)
            return std::string("'") + c + "'";
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\x%02X", u);
        return buf;
    }

    class Parser
    {
    public:
        explicit Parser(std::string_view text)
            : m_text(text)
        {
        }

        Expr parseAll()
        {
            Expr e = parseSum();
            skipSpace();
            if (!atEnd()) {
                if (peek() == ')')
                    fail(m_pos, "unmatched ')'");
                fail(m_pos, "expected an operator, found " + describeChar(peek()));
            }
            return e;
        }

    private:
        [[noreturn]] static void fail(std::size_t offset, std::string message)
        {
            throw ParseError { offset, std::move(message) };
        }

        bool atEnd() const
        {
            return m_pos >= m_text.size();
        }
        char peek() const
        {
            return atEnd() ? '\0' : m_text[m_pos];
        }

        void skipSpace()
        {
            while (!atEnd() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r'))
                ++m_pos;
        }

        /// Runs an algebra step, turning the exceptions of Expr's operators into a parse error at `offset`.
        template <typename F> static Expr apply(std::size_t offset, F&& step)
        {
            try {
                return step();
            } catch (const std::domain_error& e) {
                fail(offset, e.what());
            } catch (const std::overflow_error& e) {
                fail(offset, std::string("overflow: ") + e.what());
            }
        }

        Expr parseSum()
        {
            Expr acc = parseProduct();
            for (;;) {
                skipSpace();
                const char op = peek();
                if (op != '+' && op != '-')
                    return acc;
                const std::size_t opPos = m_pos++;
                const Expr rhs = parseProduct();
                acc = apply(opPos, [&] { return op == '+' ? acc + rhs : acc - rhs; });
            }
        }

        Expr parseProduct()
        {
            Expr acc = parseUnary();
            for (;;) {
                skipSpace();
                const char op = peek();
                if (op != '*' && op != '/')
                    return acc;
                ++m_pos;
                skipSpace();
                const std::size_t rhsPos = m_pos;
                const Expr rhs = parseUnary();
                if (op == '/') {
                    if (rhs.isZero())
                        fail(rhsPos, "division by zero");
                    if (!rhs.isMonomial())
                        fail(rhsPos, "division by a sum is not supported");
                }
                acc = apply(rhsPos, [&] { return op == '*' ? acc * rhs : acc / rhs; });
            }
        }

        Expr parseUnary()
        {
            bool negate = false;
            std::size_t signPos = 0;
            for (;;) {
                skipSpace();
                if (peek() != '-' && peek() != '+')
                    break;
                if (peek() == '-')
                    negate = !negate;
                signPos = m_pos++;
            }
            Expr e = parsePower();
            return negate ? apply(signPos, [&] { return -e; }) : e;
        }

        Expr parsePower()
        {
            Expr base = parsePrimary();
            skipSpace();
            if (peek() != '^')
                return base;
            const std::size_t caretPos = m_pos++;
            skipSpace();
            bool negative = false;
            if (peek() == '-' || peek() == '+') {
                negative = peek() == '-';
                ++m_pos;
                skipSpace();
            }
            if (!isDigit(peek()))
                fail(m_pos, "expected an integer exponent");
            const std::size_t expPos = m_pos;
            const int64_t magnitude = parseInteger();
            if (magnitude > std::numeric_limits<int16_t>::max())
                fail(expPos, "exponent out of range");
            const int n = static_cast<int>(negative ? -magnitude : magnitude);
            skipSpace();
            if (peek() == '^')
                fail(m_pos, "chained exponents are not supported; use parentheses");
            return apply(caretPos, [&] { return base.pow(n); });
        }

        /// Reads the digits at m_pos; rejects values above INT64_MAX and decimal points.
        int64_t parseInteger()
        {
            const std::size_t start = m_pos;
            int64_t v = 0;
            for (; isDigit(peek()); ++m_pos) {
                if (__builtin_mul_overflow(v, int64_t { 10 }, &v) || __builtin_add_overflow(v, peek() - '0', &v))
                    fail(start, "integer literal out of range");
            }
            if (peek() == '.')
                fail(m_pos, "only integers are supported");
            return v;
        }

        Expr parsePrimary()
        {
            skipSpace();
            if (atEnd())
                fail(m_pos, "expected an operand");
            const char c = peek();
            if (isDigit(c))
                return Expr(parseInteger());
            if (isIdentifierStart(c)) {
                const std::size_t start = m_pos;
                while (isIdentifierChar(peek()))
                    ++m_pos;
                try {
                    return Expr::symbol(m_text.substr(start, m_pos - start));
                } catch (const std::invalid_argument& e) {
                    fail(start, e.what());
                }
            }
            if (c == '(') {
                const std::size_t open = m_pos++;
                if (++m_depth > kMaxNesting)
                    fail(open, "expression nested too deeply (limit " + std::to_string(kMaxNesting) + ")");
                Expr inner = parseSum();
                skipSpace();
                if (atEnd())
                    fail(m_pos, "expected ')' to close '(' at " + std::to_string(open));
                if (peek() != ')')
                    fail(m_pos, "expected ')' or an operator, found " + describeChar(peek()));
                ++m_pos;
                --m_depth;
                return inner;
            }
            fail(m_pos, "expected an operand, found " + describeChar(c));
        }

        std::string_view m_text;
        std::size_t m_pos = 0;
        int m_depth = 0;
    };

} // namespace

std::optional<Expr> Expr::parse(std::string_view text, std::string* error)
{
    std::size_t offset = 0;
    std::string message;
    try {
        return Parser(text).parseAll();
    } catch (const ParseError& e) {
        offset = e.offset;
        message = e.message;
    } catch (const std::exception& e) {
        // Not expected (e.g. std::bad_alloc); never let it escape the parser.
        message = std::string("internal error: ") + e.what();
    }
    if (error)
        *error = "at " + std::to_string(offset) + ": " + message;
    return std::nullopt;
}

Expr expr(std::string_view text)
{
    std::string error;
    std::optional<Expr> e = Expr::parse(text, &error);
    if (!e)
        throw std::invalid_argument("cannot parse expression '" + std::string(text) + "': " + error);
    return *std::move(e);
}

} // namespace stagecraft
