// SPDX-License-Identifier: MIT
// The compact storage of program nodes: SmallVector (inline up to N, heap beyond) and NodeName (micro-batch prefix
// kept as a number, the rest interned). Both must behave exactly like the std::vector / std::string they replace.
#include "base/smallvector.h"
#include "program/nodename.h"
#include "program/program.h"

#include <QtTest>
#include <algorithm>
#include <numeric>
#include <random>

using namespace stagecraft;

class TestProgramStorage : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void sizes()
    {
        // Three 4-byte ids inline plus a 4-byte size: 16 bytes, a quarter less than a std::vector (24) and no heap
        // block for the one to three entries nearly every node has.
        QCOMPARE(sizeof(SmallVector<int32_t, 3>), size_t(16));
        QCOMPARE(sizeof(SmallVector<NodeId, 3>), size_t(16));
        QCOMPARE(sizeof(SmallVector<NodeId, 2>), size_t(12));
        QCOMPARE(sizeof(NodeName), size_t(12));
    }

    void smallVectorMatchesStdVector()
    {
        // Random pushes, erases (the sort + unique idiom and arbitrary ranges), copies, moves and clears across
        // the inline/heap boundary, compared element by element with a std::vector doing the same.
        std::mt19937 random(7);
        for (int round = 0; round < 2000; ++round) {
            SmallVector<int32_t, 3> small;
            std::vector<int32_t> reference;
            const int steps = int(random() % 40);
            for (int s = 0; s < steps; ++s) {
                const unsigned op = random() % 10;
                if (op < 6) {
                    const auto v = int32_t(random() % 8);
                    small.push_back(v);
                    reference.push_back(v);
                } else if (op == 6 && !reference.empty()) {
                    std::sort(small.begin(), small.end());
                    small.erase(std::unique(small.begin(), small.end()), small.end());
                    std::sort(reference.begin(), reference.end());
                    reference.erase(std::unique(reference.begin(), reference.end()), reference.end());
                } else if (op == 7 && !reference.empty()) {
                    const size_t a = random() % reference.size();
                    const size_t b = a + random() % (reference.size() - a + 1);
                    small.erase(small.begin() + a, small.begin() + b);
                    reference.erase(reference.begin() + long(a), reference.begin() + long(b));
                } else if (op == 8) {
                    SmallVector<int32_t, 3> copy(small);
                    SmallVector<int32_t, 3> moved(std::move(copy));
                    small = moved; // copy-assign over a possibly heap-backed value
                    SmallVector<int32_t, 3> other { 1, 2, 3, 4, 5 };
                    other = std::move(moved);
                    QVERIFY(other == small);
                } else if (op == 9 && random() % 4 == 0) {
                    small.clear();
                    reference.clear();
                }
                QCOMPARE(size_t(small.size()), reference.size());
                QVERIFY(std::equal(small.begin(), small.end(), reference.begin(), reference.end()));
            }
            const SmallVector<int32_t, 3> fromVector(reference);
            QVERIFY(fromVector == small);
        }
    }

    void pushBackOfOwnElement()
    {
        // push_back(v[0]) while the push moves the elements to a new block: the value is read before the move.
        SmallVector<int32_t, 3> v { 10, 20, 30 };
        v.push_back(v[0]);
        v.push_back(v[1]);
        v.push_back(v[4]);
        QCOMPARE(v.size(), uint32_t(6));
        const std::vector<int32_t> expected { 10, 20, 30, 10, 20, 20 };
        QVERIFY(std::equal(v.begin(), v.end(), expected.begin(), expected.end()));
    }

    void nodeNameRoundTrips_data()
    {
        QTest::addColumn<QString>("text");
        QTest::newRow("micro-batch prefix") << QStringLiteral("mb3/L12.attn.qkv:fwd");
        QTest::newRow("micro-batch 0") << QStringLiteral("mb0/embedding");
        QTest::newRow("no prefix") << QStringLiteral("optimizer:L4");
        QTest::newRow("empty") << QString();
        QTest::newRow("leading zero kept verbatim") << QStringLiteral("mb01/x");
        QTest::newRow("negative kept verbatim") << QStringLiteral("mb-1/x");
        QTest::newRow("no digits") << QStringLiteral("mb/x");
        QTest::newRow("only a prefix") << QStringLiteral("mb7/");
        QTest::newRow("number too long") << QStringLiteral("mb12345678901234567890/x");
        QTest::newRow("mb without slash") << QStringLiteral("mb12");
    }

    void nodeNameRoundTrips()
    {
        QFETCH(QString, text);
        const std::string s = text.toStdString();
        const NodeName name(s);
        QCOMPARE(name.str(), s);
        QCOMPARE(std::string(name), s);
        QCOMPARE(name.empty(), s.empty());
        QVERIFY(name == std::string_view(s));
        QCOMPARE("<" + name + ">", "<" + s + ">");
    }

    void nodeNamesShareTheirSuffix()
    {
        // Equal suffixes are one interned string: the micro-batches of a program share the text of their names.
        const NodeName a("mb1/L0.mlp.up:bwd");
        const NodeName b("mb2/L0.mlp.up:bwd");
        QCOMPARE(&a.withoutMicroBatch(), &b.withoutMicroBatch());
        QCOMPARE(a.withoutMicroBatch(), std::string("L0.mlp.up:bwd"));
        QVERIFY(!(a == b));
        QVERIFY(a == NodeName("mb1/L0.mlp.up:bwd"));
    }
};

QTEST_APPLESS_MAIN(TestProgramStorage)
#include "tst_programstorage.moc"
