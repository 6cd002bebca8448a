// SPDX-License-Identifier: MIT
// Tests of the exact symbolic expression engine (core/symbolic/expr.h).
// Expected canonical text follows the documented canonical form (expr.h: terms by degree descending, then by
// symbol name; factors by name; positive powers before '/', constants last). Expected values are computed by
// hand or by the C++ formulas written next to them.

#include "symbolic/expr.h"

#include <QTest>
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <new>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace stagecraft;

// Counts heap allocations so that the "evaluate does not allocate" contract can be checked.
namespace {
std::atomic<long> g_allocations { 0 };
} // namespace

void* operator new(std::size_t size)
{
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    if (void* p = std::malloc(size ? size : 1))
        return p;
    throw std::bad_alloc();
}

void operator delete(void* p) noexcept
{
    std::free(p);
}

void operator delete(void* p, std::size_t) noexcept
{
    std::free(p);
}

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

/// "a=1, b=-2" -> Binding.
Binding bindingFrom(const QString& spec)
{
    Binding b;
    const QStringList items = spec.split(QLatin1Char(','), Qt::SkipEmptyParts);
    for (const QString& item : items) {
        const QStringList kv = item.split(QLatin1Char('='));
        if (kv.size() != 2)
            qFatal("bad binding spec");
        bool ok = false;
        const qint64 v = kv[1].trimmed().toLongLong(&ok);
        if (!ok)
            qFatal("bad binding value");
        b.set(kv[0].trimmed().toStdString(), v);
    }
    return b;
}

Expr parseOrFail(const QString& text)
{
    std::string error;
    const std::optional<Expr> e = Expr::parse(text.toStdString(), &error);
    if (!e)
        qFatal("unexpected parse failure of '%s': %s", qPrintable(text), error.c_str());
    return *e;
}

QString qs(const std::string& s)
{
    return QString::fromStdString(s);
}

} // namespace

class TestSymbolic : public QObject
{
    Q_OBJECT

private slots:
    void roundTrip_data()
    {
        QTest::addColumn<QString>("input");
        QTest::addColumn<QString>("canonical");
        QTest::newRow("shard") << "Seq/(cp*tp)"
                               << "Seq/(cp*tp)";
        QTest::newRow("nested quotient") << "(Seq/cp)/tp"
                                         << "Seq/(cp*tp)";
        QTest::newRow("two quotients") << "B*S/dp/cp"
                                       << "B*S/(cp*dp)";
        QTest::newRow("kv heads") << "KVHead*2 + Head"
                                  << "Head + 2*KVHead";
        QTest::newRow("factors by name") << "MicroBatch*Seq*2*Dmodel^2/tp"
                                         << "2*Dmodel^2*MicroBatch*Seq/tp";
        QTest::newRow("constant last") << "3 - x"
                                       << "-x + 3";
        QTest::newRow("rational coefficient") << "x*3/2"
                                              << "3*x/2";
        QTest::newRow("rational constant") << "3/2"
                                           << "3/2";
        QTest::newRow("negative rational") << "-3/2"
                                           << "-3/2";
        QTest::newRow("reduced constant") << "6/4"
                                          << "3/2";
        QTest::newRow("zero") << "0"
                              << "0";
        QTest::newRow("cancel") << "x - x"
                                << "0";
        QTest::newRow("negative exponent") << "x^-1"
                                           << "1/x";
        QTest::newRow("coefficient over symbol") << "2/x"
                                                 << "2/x";
        QTest::newRow("number in denominator") << "x/(2*y)"
                                               << "x/(2*y)";
        QTest::newRow("binomial") << "(a+b)^2"
                                  << "a^2 + 2*a*b + b^2";
        QTest::newRow("difference of squares") << "(a+b)*(a-b)"
                                               << "a^2 - b^2";
        QTest::newRow("polynomial") << "1 + x + x^2"
                                    << "x^2 + x + 1";
        QTest::newRow("degree order") << "1/x + x"
                                      << "x + 1/x";
        QTest::newRow("whitespace") << " \t Head   *\n Dff  "
                                    << "Dff*Head";
        QTest::newRow("negated sum") << "-(a - b)"
                                     << "-a + b";
        QTest::newRow("distribute") << "2*(x + 1)"
                                    << "2*x + 2";
        QTest::newRow("mixed powers") << "x^2*y^-3"
                                      << "x^2/y^3";
        QTest::newRow("int64 max") << "9223372036854775807"
                                   << "9223372036854775807";
        QTest::newRow("unary minus binds looser than ^") << "-x^2"
                                                         << "-x^2";
        QTest::newRow("same denominator") << "KVHead/tp + Head/tp"
                                          << "Head/tp + KVHead/tp";
        QTest::newRow("power of power") << "(x^2)^3"
                                        << "x^6";
        QTest::newRow("same degree lexicographic") << "b^2 + a*b + a^2"
                                                   << "a^2 + a*b + b^2";
        QTest::newRow("ascii order") << "a + Z + _u"
                                     << "Z + _u + a";
        QTest::newRow("double negation") << "a - -b"
                                         << "a + b";
        QTest::newRow("degree zero quotient before constant") << "5 + Seq/tp"
                                                              << "Seq/tp + 5";
        QTest::newRow("fraction of sum") << "(a + 3*b)/6"
                                         << "a/6 + b/2";
    }

    void roundTrip()
    {
        QFETCH(QString, input);
        QFETCH(QString, canonical);
        const Expr e = parseOrFail(input);
        QCOMPARE(qs(e.toString()), canonical);
        const Expr again = parseOrFail(qs(e.toString()));
        QVERIFY(again == e);
        QCOMPARE(qs(again.toString()), canonical);
    }

    void canonicalEquality_data()
    {
        QTest::addColumn<QString>("lhs");
        QTest::addColumn<QString>("rhs");
        QTest::addColumn<bool>("equal");
        QTest::newRow("nested quotient") << "(Seq/cp)/tp"
                                         << "Seq/(cp*tp)" << true;
        QTest::newRow("commutative sum") << "Head + KVHead"
                                         << "KVHead + Head" << true;
        QTest::newRow("like terms") << "2*x - x"
                                    << "x" << true;
        QTest::newRow("square") << "x*x"
                                << "x^2" << true;
        QTest::newRow("difference of squares") << "(a+b)*(a-b)"
                                               << "a^2 - b^2" << true;
        QTest::newRow("halves") << "a/2 + a/2"
                                << "a" << true;
        QTest::newRow("self quotient") << "x/x"
                                       << "1" << true;
        QTest::newRow("reciprocal") << "1/(1/x)"
                                    << "x" << true;
        QTest::newRow("negative power") << "x^-2*x^3"
                                        << "x" << true;
        QTest::newRow("zero power") << "(a+b)^0"
                                    << "1" << true;
        QTest::newRow("different symbols") << "x"
                                           << "y" << false;
        QTest::newRow("different coefficient") << "x/2"
                                               << "x" << false;
        QTest::newRow("power vs product") << "x^2"
                                          << "2*x" << false;
        QTest::newRow("extra constant") << "x + 1"
                                        << "x" << false;
        QTest::newRow("sign") << "a - b"
                              << "b - a" << false;
        QTest::newRow("quotient vs product") << "a/b"
                                             << "a*b" << false;
    }

    void canonicalEquality()
    {
        QFETCH(QString, lhs);
        QFETCH(QString, rhs);
        QFETCH(bool, equal);
        const Expr a = parseOrFail(lhs);
        const Expr b = parseOrFail(rhs);
        QCOMPARE(a == b, equal);
        QCOMPARE(b == a, equal);
        QCOMPARE(a.toString() == b.toString(), equal);
    }

    void operatorsMatchParser()
    {
        const Expr seq = Expr::symbol("Seq");
        const Expr cp = Expr::symbol("cp");
        const Expr tp = Expr::symbol(internSymbol("tp"));
        QVERIFY(seq / cp / tp == expr("Seq/(cp*tp)"));
        QVERIFY(2 * seq + 1 == expr("2*Seq + 1"));
        QVERIFY(seq - 3 == expr("Seq - 3"));
        QVERIFY(-seq == expr("-Seq"));
        QVERIFY((seq + cp).pow(3) == expr("(Seq + cp)*(Seq + cp)*(Seq + cp)"));
        QVERIFY(tp.pow(-2) == expr("1/tp^2"));
        Expr acc = 0;
        for (int i = 0; i < 4; ++i)
            acc += seq;
        QVERIFY(acc == expr("4*Seq"));
        acc *= cp;
        QVERIFY(acc == expr("4*Seq*cp"));
    }

    void queries()
    {
        const Expr zero;
        QVERIFY(zero.isZero());
        QVERIFY(zero.isConstant());
        QVERIFY(!zero.isMonomial());
        QCOMPARE(zero.termCount(), 0);
        QCOMPARE(zero.constantValue(), std::optional<int64_t>(0));

        QCOMPARE(expr("7").constantValue(), std::optional<int64_t>(7));
        QCOMPARE(expr("-7").constantValue(), std::optional<int64_t>(-7));
        QVERIFY(!expr("7/2").constantValue().has_value());
        QVERIFY(expr("7/2").isConstant());
        QVERIFY(!expr("x").constantValue().has_value());
        QVERIFY(!expr("x").isConstant());

        const Expr e = expr("Head*Dmodel/tp + 2*KVHead + 1");
        QCOMPARE(e.termCount(), 3);
        QVERIFY(!e.isMonomial());
        QVERIFY(expr("3*Head*Dmodel/tp").isMonomial());
        QVERIFY(e.contains(internSymbol("tp")));
        QVERIFY(!e.contains(internSymbol("Seq")));
        std::vector<SymbolId> expected { internSymbol("Head"), internSymbol("Dmodel"), internSymbol("tp"),
            internSymbol("KVHead") };
        std::sort(expected.begin(), expected.end());
        QVERIFY(e.symbols() == expected);
    }

    void constructionErrors()
    {
        QVERIFY_THROWS_EXCEPTION(std::domain_error, expr("x") / expr("a + b"));
        QVERIFY_THROWS_EXCEPTION(std::domain_error, expr("x") / Expr(0));
        QVERIFY_THROWS_EXCEPTION(std::domain_error, expr("a + b").pow(-1));
        QVERIFY_THROWS_EXCEPTION(std::domain_error, Expr().pow(-1));
        QVERIFY_THROWS_EXCEPTION(std::overflow_error, static_cast<void>(Expr(kMin)));
        QVERIFY_THROWS_EXCEPTION(std::overflow_error, Expr(kMax) + 1);
        QVERIFY_THROWS_EXCEPTION(std::overflow_error, Expr(kMax) * 2);
        QVERIFY_THROWS_EXCEPTION(std::overflow_error, expr("x/9223372036854775807") / 2);
        QVERIFY_THROWS_EXCEPTION(std::overflow_error, expr("x").pow(32767) * expr("x"));
        // 2^63 > INT64_MAX; 2^62 fits.
        QVERIFY_THROWS_EXCEPTION(std::overflow_error, Expr(2).pow(63));
        QCOMPARE(Expr(2).pow(62).constantValue(), std::optional<int64_t>(int64_t { 1 } << 62));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, expr("a +"));
        // Coefficients are kept within +-INT64_MAX: -INT64_MAX is fine, -INT64_MAX - 1 (INT64_MIN) is not.
        QCOMPARE((-Expr(kMax)).constantValue(), std::optional<int64_t>(-kMax));
        QVERIFY_THROWS_EXCEPTION(std::overflow_error, -Expr(kMax) - 1);
    }

    void evaluate_data()
    {
        QTest::addColumn<QString>("expression");
        QTest::addColumn<QString>("binding");
        QTest::addColumn<int>("status");
        QTest::addColumn<qint64>("value"); // Ok: value; NonInteger: numerator
        QTest::addColumn<qint64>("den"); // NonInteger only
        QTest::addColumn<QString>("symbol"); // Unbound / DivisionByZero only
        const int ok = int(EvalStatus::Ok);
        const int nonInteger = int(EvalStatus::NonInteger);
        const int overflow = int(EvalStatus::Overflow);
        const int unbound = int(EvalStatus::Unbound);
        const int divByZero = int(EvalStatus::DivisionByZero);

        // (64 + 2*8) * 8192 / 64 = 80 * 128
        QTest::newRow("qkv width") << "(Head + 2*KVHead)*Dmodel/Head"
                                   << "Head=64,KVHead=8,Dmodel=8192" << ok << qint64(80 * 128) << qint64(1)
                                   << QString();
        QTest::newRow("shard") << "Seq/(cp*tp)"
                               << "Seq=8192,cp=2,tp=4" << ok << qint64(8192 / 8) << qint64(1) << QString();
        // 2 * 4 * 2048 * 4096^2 / 8
        QTest::newRow("activation bytes") << "2*MicroBatch*Seq*Dmodel^2/tp"
                                          << "MicroBatch=4,Seq=2048,Dmodel=4096,tp=8" << ok
                                          << qint64(2LL * 4 * 2048 * 4096 * 4096 / 8) << qint64(1) << QString();
        QTest::newRow("heads not divisible") << "Head/tp"
                                             << "Head=32,tp=3" << nonInteger << qint64(32) << qint64(3) << QString();
        QTest::newRow("fraction reduced") << "Head/tp"
                                          << "Head=30,tp=4" << nonInteger << qint64(15) << qint64(2) << QString();
        QTest::newRow("halves sum to integer") << "a/2 + b/2"
                                               << "a=1,b=1" << ok << qint64(1) << qint64(1) << QString();
        QTest::newRow("sixths sum to integer") << "a/6 + b/6 + c/6"
                                               << "a=1,b=2,c=3" << ok << qint64(1) << qint64(1) << QString();
        QTest::newRow("integer plus fraction") << "a + b/3"
                                               << "a=2,b=1" << nonInteger << qint64(7) << qint64(3) << QString();
        // 1/2 + 1/3 = 5/6
        QTest::newRow("fractions") << "a/2 + b/3"
                                   << "a=1,b=1" << nonInteger << qint64(5) << qint64(6) << QString();
        QTest::newRow("rational coefficient") << "3*x/2"
                                              << "x=4" << ok << qint64(6) << qint64(1) << QString();
        QTest::newRow("rational constant") << "3/2"
                                           << "" << nonInteger << qint64(3) << qint64(2) << QString();
        QTest::newRow("constant") << "7"
                                  << "" << ok << qint64(7) << qint64(1) << QString();
        QTest::newRow("zero") << "0"
                              << "" << ok << qint64(0) << qint64(1) << QString();
        QTest::newRow("negative values") << "x - 2*y"
                                         << "x=-5,y=3" << ok << qint64(-11) << qint64(1) << QString();
        QTest::newRow("negative denominator") << "x/y"
                                              << "x=-6,y=-3" << ok << qint64(2) << qint64(1) << QString();
        QTest::newRow("negative fraction") << "x/y"
                                           << "x=7,y=-2" << nonInteger << qint64(-7) << qint64(2) << QString();
        // (2^21 - 1)^3 < 2^63
        QTest::newRow("cube fits") << "x^3"
                                   << "x=2097151" << ok << qint64(2097151LL * 2097151LL * 2097151LL) << qint64(1)
                                   << QString();
        // (3e6)^3 = 2.7e19 > INT64_MAX ~ 9.22e18
        QTest::newRow("cube overflows") << "x^3"
                                        << "x=3000000" << overflow << qint64(0) << qint64(1) << QString();
        // floor(sqrt(INT64_MAX)) = 3037000499
        QTest::newRow("product just fits")
            << "x*y"
            << "x=3037000499,y=3037000499" << ok << qint64(3037000499LL * 3037000499LL) << qint64(1) << QString();
        QTest::newRow("product just overflows")
            << "x*y"
            << "x=3037000500,y=3037000500" << overflow << qint64(0) << qint64(1) << QString();
        QTest::newRow("sum overflows") << "x + y"
                                       << "x=9223372036854775807,y=1" << overflow << qint64(0) << qint64(1)
                                       << QString();
        QTest::newRow("sum at max") << "x + y"
                                    << "x=9223372036854775806,y=1" << ok << qint64(kMax) << qint64(1) << QString();
        QTest::newRow("int64 min") << "x"
                                   << "x=-9223372036854775808" << ok << qint64(kMin) << qint64(1) << QString();
        QTest::newRow("negated int64 min")
            << "-x"
            << "x=-9223372036854775808" << overflow << qint64(0) << qint64(1) << QString();
        // Partial sums leave int64 but the exact result fits: INT64_MAX + 1 - 2.
        QTest::newRow("intermediate sum overflow")
            << "x + y - z"
            << "x=9223372036854775807,y=1,z=2" << ok << qint64(kMax - 1) << qint64(1) << QString();
        // 2^62*4 - 2^62*3 = 2^62, although 2^62*4 does not fit in int64.
        QTest::newRow("intermediate term overflow")
            << "x*y - x*z"
            << "x=4611686018427387904,y=4,z=3" << ok << qint64(int64_t { 1 } << 62) << qint64(1) << QString();
        // (2^40)^2 / 2^20 = 2^60
        QTest::newRow("numerator above int64")
            << "x^2/y"
            << "x=1099511627776,y=1048576" << ok << qint64(int64_t { 1 } << 60) << qint64(1) << QString();
        // (2^40)^4 / (2^39)^4 = 16; numerator and denominator alone exceed 128 bits.
        QTest::newRow("cancellation across sides")
            << "x^4/y^4"
            << "x=1099511627776,y=549755813888" << ok << qint64(16) << qint64(1) << QString();
        // (2^26)^5 = 2^130 exceeds even 128 bits.
        QTest::newRow("beyond 128 bits") << "x^5"
                                         << "x=67108864" << overflow << qint64(0) << qint64(1) << QString();
        // 1/(2^40 * 2^40): the reduced fraction 1/2^80 does not fit; num = den = 0 by contract.
        QTest::newRow("fraction too large")
            << "1/(x*y)"
            << "x=1099511627776,y=1099511627776" << nonInteger << qint64(0) << qint64(0) << QString();
        QTest::newRow("unbound") << "x + y"
                                 << "x=1" << unbound << qint64(0) << qint64(1) << "y";
        QTest::newRow("unbound in denominator") << "Seq/(cp*tp)"
                                                << "Seq=8,cp=2" << unbound << qint64(0) << qint64(1) << "tp";
        QTest::newRow("division by zero") << "x/y^2"
                                          << "x=1,y=0" << divByZero << qint64(0) << qint64(1) << "y";
        QTest::newRow("zero numerator still divides by zero")
            << "x/y"
            << "x=0,y=0" << divByZero << qint64(0) << qint64(1) << "y";
        QTest::newRow("zero in numerator") << "x*y/z"
                                           << "x=0,y=5,z=7" << ok << qint64(0) << qint64(1) << QString();
    }

    void evaluate()
    {
        QFETCH(QString, expression);
        QFETCH(QString, binding);
        QFETCH(int, status);
        QFETCH(qint64, value);
        QFETCH(qint64, den);
        QFETCH(QString, symbol);
        const Expr e = parseOrFail(expression);
        const Binding b = bindingFrom(binding);
        const EvalResult r = e.evaluate(b);
        QCOMPARE(int(r.status), status);
        QCOMPARE(r.ok(), status == int(EvalStatus::Ok));
        switch (EvalStatus(status)) {
        case EvalStatus::Ok:
            QCOMPARE(r.value, value);
            QVERIFY(describeEvalError(e, r).empty());
            break;
        case EvalStatus::NonInteger:
            QCOMPARE(r.num, value);
            QCOMPARE(r.den, den);
            break;
        case EvalStatus::Unbound:
        case EvalStatus::DivisionByZero:
            QCOMPARE(qs(std::string(symbolName(r.symbol))), symbol);
            break;
        case EvalStatus::Overflow:
            break;
        }
    }

    void describeErrors()
    {
        Binding b;
        b.set("Head", 32);
        b.set("tp", 3);
        const Expr heads = expr("Head/tp");
        const EvalResult r = heads.evaluate(b);
        QCOMPARE(int(r.status), int(EvalStatus::NonInteger));
        QCOMPARE(qs(describeEvalError(heads, r)), QStringLiteral("Head/tp = 32/3 is not an integer"));

        b.set("tp", 0);
        const std::string zero = describeEvalError(heads, heads.evaluate(b));
        QVERIFY2(
            zero.find("division by zero") != std::string::npos && zero.find("tp") != std::string::npos, zero.c_str());

        b.unset(internSymbol("tp"));
        QVERIFY(!b.isBound(internSymbol("tp")));
        const std::string unbound = describeEvalError(heads, heads.evaluate(b));
        QVERIFY2(unbound.find("symbol tp has no value") != std::string::npos, unbound.c_str());

        b.set("x", 3000000);
        const Expr cube = expr("x^3");
        const std::string overflow = describeEvalError(cube, cube.evaluate(b));
        QVERIFY2(overflow.find("x^3") != std::string::npos && overflow.find("64-bit") != std::string::npos,
            overflow.c_str());
    }

    void parseErrors_data()
    {
        QTest::addColumn<QString>("input");
        QTest::addColumn<QString>("message");
        QTest::newRow("empty") << ""
                               << "at 0: expected an operand";
        QTest::newRow("blank") << "   "
                               << "at 3: expected an operand";
        QTest::newRow("dangling plus") << "a+"
                                       << "at 2: expected an operand";
        QTest::newRow("unclosed") << "(a"
                                  << "at 2: expected ')' to close '(' at 0";
        QTest::newRow("unmatched close") << "a)"
                                         << "at 1: unmatched ')'";
        QTest::newRow("division by sum") << "a/(b+c)"
                                         << "at 2: division by a sum is not supported";
        QTest::newRow("division by zero") << "a/0"
                                          << "at 2: division by zero";
        QTest::newRow("division by cancelled sum") << "a/(b-b)"
                                                   << "at 2: division by zero";
        QTest::newRow("negative power of sum") << "(a+b)^-1"
                                               << "at 5: division by a sum is not supported";
        QTest::newRow("negative power of zero") << "0^-1"
                                                << "at 1: division by zero";
        // Implicit multiplication is not supported: "3a" must be written "3*a".
        QTest::newRow("implicit product") << "3a"
                                          << "at 1: expected an operator, found 'a'";
        QTest::newRow("symbolic exponent") << "a^b"
                                           << "at 2: expected an integer exponent";
        QTest::newRow("decimal exponent") << "a ^ 1.5"
                                          << "at 5: only integers are supported";
        QTest::newRow("decimal literal") << "2.5*x"
                                         << "at 1: only integers are supported";
        QTest::newRow("chained exponent") << "a^2^3"
                                          << "at 3: chained exponents are not supported; use parentheses";
        QTest::newRow("exponent range") << "a^99999"
                                        << "at 2: exponent out of range";
        QTest::newRow("bad character") << "@"
                                       << "at 0: expected an operand, found '@'";
        QTest::newRow("control character") << "a\x01"
                                           << "at 1: expected an operator, found \\x01";
        QTest::newRow("double operator") << "a * * b"
                                         << "at 4: expected an operand, found '*'";
        QTest::newRow("empty parentheses") << "()"
                                           << "at 1: expected an operand, found ')'";
        QTest::newRow("literal too large") << "x + 99999999999999999999"
                                           << "at 4: integer literal out of range";
        QTest::newRow("sum overflow") << "9223372036854775807 + 1"
                                      << "at 20: overflow: coefficient overflow";
        // C(70,35) ~ 1.1e20 > INT64_MAX
        QTest::newRow("binomial overflow") << "(a+b)^70"
                                           << "at 5: overflow: coefficient overflow";
        QTest::newRow("too many terms") << "(a+b+c+d+e+f+g+h)^40"
                                        << "at 17: overflow: expression too large (product of 330 and 330 terms)";
        QTest::newRow("too deep") << QString(201, QLatin1Char('(')) + QLatin1String("a")
                + QString(201, QLatin1Char(')'))
                                  << "at 200: expression nested too deeply (limit 200)";
    }

    void parseErrors()
    {
        QFETCH(QString, input);
        QFETCH(QString, message);
        std::string error;
        const std::optional<Expr> e = Expr::parse(input.toStdString(), &error);
        QVERIFY(!e.has_value());
        QCOMPARE(qs(error), message);
        QVERIFY(!Expr::parse(input.toStdString()).has_value()); // no error sink is fine too
    }

    void parseLimits()
    {
        // 200 levels of parentheses are allowed, and long sign runs do not recurse.
        const std::string deep = std::string(200, '(') + "a" + std::string(200, ')');
        QVERIFY(Expr::parse(deep) == std::optional<Expr>(expr("a")));
        const std::string signs = std::string(100001, '-') + "x";
        QVERIFY(Expr::parse(signs) == std::optional<Expr>(expr("-x")));
        std::string error;
        QVERIFY(!Expr::parse(std::string(100000, '('), &error));
        QCOMPARE(qs(error), QStringLiteral("at 200: expression nested too deeply (limit 200)"));
    }

    void parseNeverCrashes()
    {
        // Random token strings, mostly alternating operands and operators, with identifiers padded by spaces so
        // that only a, b and x are ever interned; and random bytes without identifier characters. Parsing either
        // fails with an "at N:" message whose offset lies within the input, or succeeds with an expression that
        // prints and re-parses to itself.
        const char* const operands[] = { " a ", " b ", " x ", "0", "1", "2", "9", "(", "-" };
        const char* const operators[] = { "+", "-", "*", "/", "^2", "^-1", "^ 3", ")" };
        const char* const noise[] = { "(", ")", "^", ".", " ", "+", "-", "99999999999", "^99", "*/" };
        std::mt19937 rng(12345);
        int parsed = 0;
        for (int i = 0; i < 40000; ++i) {
            std::string s;
            const unsigned length = rng() % 24;
            bool expectOperand = true;
            for (unsigned k = 0; k < length; ++k) {
                if (i % 4 == 3) {
                    const char c = char(rng() % 256);
                    const bool identifierChar = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
                    s += identifierChar ? '(' : c;
                } else if (rng() % 16 == 0) {
                    s += noise[rng() % std::size(noise)];
                } else if (expectOperand) {
                    const char* t = operands[rng() % std::size(operands)];
                    s += t;
                    expectOperand = t[0] == '(' || t[0] == '-';
                } else {
                    const char* t = operators[rng() % std::size(operators)];
                    s += t;
                    expectOperand = t[0] != ')' && t[0] != '^';
                }
            }
            std::string error;
            const std::optional<Expr> e = Expr::parse(s, &error);
            if (!e) {
                QVERIFY2(error.rfind("at ", 0) == 0, s.c_str());
                QVERIFY2(std::stoul(error.substr(3)) <= s.size(), s.c_str());
                continue;
            }
            ++parsed;
            const std::optional<Expr> again = Expr::parse(e->toString());
            QVERIFY2(again && *again == *e, (s + " -> " + e->toString()).c_str());
        }
        QVERIFY(parsed > 1000); // the generator does produce valid expressions
    }

    void substitute()
    {
        QVERIFY(expr("Batch*Seq/dp").substitute("Batch", expr("MicroBatch")) == expr("MicroBatch*Seq/dp"));
        QVERIFY(expr("Batch*Seq/dp").substitute("Batch", expr("MicroBatch*GradAccum"))
            == expr("GradAccum*MicroBatch*Seq/dp"));
        // (a+1)^2 + (a+1) = a^2 + 3a + 2
        QVERIFY(expr("x^2 + x").substitute("x", expr("a + 1")) == expr("a^2 + 3*a + 2"));
        // y/(2z)^2 = y/(4 z^2)
        QVERIFY(expr("y/x^2").substitute("x", expr("2*z")) == expr("y/(4*z^2)"));
        QVERIFY(expr("x*y + 1").substitute("x", Expr(0)) == expr("1"));
        QVERIFY(expr("x + y").substitute("x", expr("-y")).isZero());
        QVERIFY(expr("Seq/tp").substitute("cp", expr("a + b")) == expr("Seq/tp"));
        QCOMPARE(qs(expr("Head/tp").substitute("tp", Expr(4)).toString()), QStringLiteral("Head/4"));
        QVERIFY_THROWS_EXCEPTION(std::domain_error, expr("y/x").substitute("x", expr("a + b")));
        QVERIFY_THROWS_EXCEPTION(std::domain_error, expr("y/x").substitute("x", Expr(0)));
    }

    void interning()
    {
        // Interned first in this process, in reverse name order, so ids and names disagree on order.
        const SymbolId late = internSymbol("qqZeta");
        const SymbolId early = internSymbol("qqAlpha");
        QVERIFY(late < early);
        QCOMPARE(internSymbol("qqZeta"), late);
        QCOMPARE(Expr::symbol("qqAlpha"), Expr::symbol(early));
        QCOMPARE(qs(std::string(symbolName(late))), QStringLiteral("qqZeta"));
        QCOMPARE(qs(std::string(symbolName(early))), QStringLiteral("qqAlpha"));
        // Printing and term order follow names, not ids.
        QCOMPARE(qs(expr("qqZeta + qqAlpha").toString()), QStringLiteral("qqAlpha + qqZeta"));
        QCOMPARE(qs(expr("qqZeta*qqAlpha").toString()), QStringLiteral("qqAlpha*qqZeta"));
        QCOMPARE(qs(expr("1/(qqZeta*qqAlpha)").toString()), QStringLiteral("1/(qqAlpha*qqZeta)"));

        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, internSymbol(""));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, internSymbol("1a"));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, internSymbol("a-b"));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, internSymbol("a b"));

        // Concurrent interning of the same names yields one id per name.
        constexpr int kThreads = 4;
        constexpr int kNames = 40;
        std::vector<std::vector<SymbolId>> ids(kThreads);
        std::vector<std::thread> threads;
        for (int t = 0; t < kThreads; ++t) {
            threads.emplace_back([t, &ids] {
                for (int i = 0; i < kNames; ++i)
                    ids[t].push_back(internSymbol("qqThread" + std::to_string((i * (t + 1)) % kNames)));
            });
        }
        for (std::thread& th : threads)
            th.join();
        for (int t = 0; t < kThreads; ++t) {
            for (int i = 0; i < kNames; ++i) {
                const std::string name = "qqThread" + std::to_string((i * (t + 1)) % kNames);
                QCOMPARE(ids[t][i], internSymbol(name));
                QCOMPARE(qs(std::string(symbolName(ids[t][i]))), qs(name));
            }
        }
    }

    void evaluateMatchesSubstitution()
    {
        // Cross-check the evaluator against the independent constructive arithmetic: substituting every symbol by
        // its value must give the constant the evaluator computes.
        const char* const shapes[] = { "(Head + 2*KVHead)*Dmodel/Head", "a/2 + b/3 - c/6", "x^2/y - 3*x + 7/2",
            "(a - b)*(a + b)/c", "a*b*c/(2*d)", "x^3 - y^3/x" };
        const char* const names[] = { "Head", "KVHead", "Dmodel", "a", "b", "c", "d", "x", "y" };
        std::mt19937 rng(7);
        for (const char* text : shapes) {
            const Expr e = expr(text);
            for (int round = 0; round < 200; ++round) {
                Binding b;
                Expr substituted = e;
                for (const char* name : names) {
                    int v = int(rng() % 19) - 9;
                    if (v == 0)
                        v = 5; // keep denominators non-zero
                    b.set(name, v);
                    substituted = substituted.substitute(name, Expr(v));
                }
                QVERIFY(substituted.isConstant());
                const EvalResult r = e.evaluate(b);
                const std::string s = substituted.toString();
                if (const std::optional<int64_t> c = substituted.constantValue()) {
                    QCOMPARE(int(r.status), int(EvalStatus::Ok));
                    QCOMPARE(r.value, *c);
                } else {
                    QCOMPARE(int(r.status), int(EvalStatus::NonInteger));
                    QVERIFY(Expr(r.num) / Expr(r.den) == substituted);
                }
            }
        }
    }

    void evaluateDoesNotAllocate()
    {
        const Expr shapes[] = { expr("(Head + 2*KVHead)*Dmodel/Head"), expr("Head/tp"), expr("x*y - x*z"),
            expr("a/2 + b/3") };
        Binding b =
            bindingFrom(QStringLiteral("Head=32,KVHead=8,Dmodel=4096,tp=3,x=4611686018427387904,y=4,z=3,a=1,b=1"));
        long sink = 0;
        const long before = g_allocations.load();
        for (const Expr& e : shapes) {
            const EvalResult r = e.evaluate(b); // fast path, exact path, non-integer result
            sink += long(r.status);
        }
        const long after = g_allocations.load();
        QCOMPARE(after - before, 0L);
        QVERIFY(sink > 0);
        // The counter does see allocations (so the check above can fail).
        const std::string probe = expr("a + b").toString() + std::string(64, ' ');
        QVERIFY(g_allocations.load() > after);
    }
};

QTEST_GUILESS_MAIN(TestSymbolic)
#include "tst_symbolic.moc"
