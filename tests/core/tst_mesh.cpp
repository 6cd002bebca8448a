// SPDX-License-Identifier: MIT
// Mesh: rank <-> coordinates in rank_order, communicator groups and their ids.
#include "mesh/mesh.h"

#include <QtTest>
#include <set>

using namespace stagecraft;

namespace {
ParallelismConfig parallelism(int64_t dp, int64_t tp, int64_t pp, int64_t cp, int64_t ep, std::vector<MeshAxis> order)
{
    ParallelismConfig p;
    p.dp = dp;
    p.tp = tp;
    p.pp = pp;
    p.cp = cp;
    p.ep = ep;
    p.rankOrder = std::move(order);
    return p;
}
const std::vector<MeshAxis> kMegatron { MeshAxis::Tp, MeshAxis::Cp, MeshAxis::Ep, MeshAxis::Dp, MeshAxis::Pp };
const std::vector<MeshAxis> kStage { MeshAxis::Dp, MeshAxis::Tp, MeshAxis::Cp, MeshAxis::Ep, MeshAxis::Pp };
} // namespace

class TestMesh : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void megatronOrder()
    {
        // Megatron-LM's default order tp-cp-ep-dp-pp (fastest first):
        // rank = t + tp*(c + cp*(e + ep*(d + edp*p))) with edp = dp/ep.
        const Mesh mesh(parallelism(4, 2, 3, 2, 2, kMegatron));
        QCOMPARE(mesh.worldSize(), int64_t(4 * 2 * 3 * 2));
        QCOMPARE(mesh.degree(Axis::Edp), int64_t(2));
        for (int64_t r = 0; r < mesh.worldSize(); ++r) {
            const Coords c = mesh.coords(RankId { r });
            const int64_t expected = c[0] + 2 * (c[1] + 2 * (c[2] + 2 * (c[3] + 2 * c[4])));
            QCOMPARE(expected, r);
            QCOMPARE(mesh.rank(c).value, r);
        }
    }

    void stageOrder()
    {
        // STAGE numbers dense ranks d + dp*(t + tp*(c + cp*s)) (stage-method.md §3): rank_order [dp,tp,cp,ep,pp].
        const Mesh mesh(parallelism(2, 2, 2, 1, 1, kStage));
        for (int64_t r = 0; r < 8; ++r) {
            const Coords c = mesh.coords(RankId { r });
            QCOMPARE(c[3] + 2 * (c[0] + 2 * c[4]), r);
        }
        // STAGE's groups for dp = tp = pp = 2: dp {0,1} {2,3} {4,5} {6,7}; tp {0,2} {1,3} {4,6} {5,7}.
        const AxisMask dp = axisBit(Axis::Edp), tp = axisBit(Axis::Tp);
        QCOMPARE(mesh.groupCount(dp), int64_t(4));
        std::set<std::vector<int64_t>> dpGroups, tpGroups;
        for (int64_t g = 0; g < 4; ++g) {
            dpGroups.insert(mesh.groupMembers(dp, g));
            tpGroups.insert(mesh.groupMembers(tp, g));
        }
        QCOMPARE(dpGroups, (std::set<std::vector<int64_t>> { { 0, 1 }, { 2, 3 }, { 4, 5 }, { 6, 7 } }));
        QCOMPARE(tpGroups, (std::set<std::vector<int64_t>> { { 0, 2 }, { 1, 3 }, { 4, 6 }, { 5, 7 } }));
    }

    void groupsPartitionTheWorld_data()
    {
        QTest::addColumn<int>("mask");
        QTest::newRow("tp") << int(axisBit(Axis::Tp));
        QTest::newRow("dp") << int(kDpMask);
        QTest::newRow("edp") << int(axisBit(Axis::Edp));
        QTest::newRow("dp+cp") << int(kDpMask | axisBit(Axis::Cp));
        QTest::newRow("tp+edp") << int(axisBit(Axis::Tp) | axisBit(Axis::Edp));
    }

    void groupsPartitionTheWorld()
    {
        // Groups of a mask partition the ranks; members differ only in the mask's axes; groupIndex finds them.
        QFETCH(int, mask);
        const Mesh mesh(parallelism(4, 2, 2, 2, 2, kMegatron));
        const AxisMask m = static_cast<AxisMask>(mask);
        std::vector<int> seen(static_cast<size_t>(mesh.worldSize()), 0);
        for (int64_t g = 0; g < mesh.groupCount(m); ++g) {
            const std::vector<int64_t> members = mesh.groupMembers(m, g);
            QCOMPARE(int64_t(members.size()), mesh.groupSize(m));
            const Coords first = mesh.coords(RankId { members.front() });
            for (int64_t r : members) {
                ++seen[static_cast<size_t>(r)];
                QCOMPARE(mesh.groupIndex(m, RankId { r }), g);
                const Coords c = mesh.coords(RankId { r });
                for (int a = 0; a < kAxisCount; ++a)
                    if (!(m & (1u << a)))
                        QCOMPARE(c[static_cast<size_t>(a)], first[static_cast<size_t>(a)]);
            }
        }
        for (int count : seen)
            QCOMPARE(count, 1);
    }

    void groupIdsAreDenseAndSkipSingletons()
    {
        // dp 4, tp 2, cp 1: a cp "group" would have one member and is never formed; ids run 1..N densely.
        const Mesh mesh(parallelism(4, 2, 1, 1, 1, kMegatron));
        const GroupTable table(mesh, { axisBit(Axis::Tp), axisBit(Axis::Cp), axisBit(Axis::Edp) });
        QCOMPARE(table.masks().size(), size_t(2));
        QCOMPARE(table.groupCount(), int64_t(4 + 2)); // 8/2 tp groups + 8/4 dp groups
        std::set<int64_t> ids;
        table.forEachGroup([&](int64_t id, AxisMask, int64_t) { ids.insert(id); });
        QCOMPARE(ids, (std::set<int64_t> { 1, 2, 3, 4, 5, 6 }));
        QCOMPARE(table.groupId(axisBit(Axis::Cp), RankId { 0 }), int64_t(0));
        // Rank 5 = t 1, d 2: tp group index 2 (id 3), dp group index 1 (id 4 + 1 + 1 = 6).
        QCOMPARE(table.groupId(axisBit(Axis::Tp), RankId { 5 }), int64_t(3));
        QCOMPARE(table.groupId(axisBit(Axis::Edp), RankId { 5 }), int64_t(6));
    }
};

QTEST_GUILESS_MAIN(TestMesh)
#include "tst_mesh.moc"
