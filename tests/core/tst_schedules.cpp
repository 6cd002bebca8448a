// SPDX-License-Identifier: MIT
// Pipeline schedules with a split backward (ZB-H1, DualPipe, DualPipeV) and the interleaved schedule's micro-batch
// groups: the per-rank order of F, B and W against the reference schedulers' own order (tests/data/schedules, with
// the commits it came from), and Megatron-LM's schedule table.
#include "config/config.h"
#include "config/configloader.h"
#include "model/modelgraph.h"
#include "program/distributionplan.h"
#include "program/stageplan.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

using namespace stagecraft;

namespace {

/// Our order in the reference data's notation: F/BW/B/W, the chunk (DualPipe: the direction) and the micro-batch
/// of that chunk or direction, '&' after a forward paired with the next backward.
QString notation(Schedule schedule, int32_t microBatches, const std::vector<ScheduleUnit>& order)
{
    QStringList out;
    for (const ScheduleUnit& u : order) {
        const char* pass = u.pass == UnitPass::Forward ? "F"
            : u.pass == UnitPass::Backward             ? "BW"
            : u.pass == UnitPass::BackwardInput        ? "B"
                                                       : "W";
        const int32_t id =
            schedule == Schedule::DualPipe ? u.microBatch - u.localChunk * (microBatches / 2) : u.microBatch;
        QString item = QStringLiteral("%1%2.%3").arg(QLatin1String(pass)).arg(u.localChunk).arg(id);
        if (u.pairedWithNext)
            item += QLatin1Char('&');
        out << item;
    }
    return out.join(QLatin1Char(' '));
}

QJsonObject referenceOrders()
{
    QFile f(QStringLiteral(STAGECRAFT_TEST_DATA "/schedules/reference-orders.json"));
    if (!f.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(f.fileName()));
    return QJsonDocument::fromJson(f.readAll()).object().value(QStringLiteral("orders")).toObject();
}

} // namespace

class TestSchedules : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void referenceOrder_data()
    {
        QTest::addColumn<int>("schedule");
        QTest::addColumn<int>("pp");
        QTest::addColumn<int>("microBatches");
        // pp 4 and 8 with 10 and 20 micro-batches. DualPipe and DualPipeV refuse pp 8 with 10 (their step()
        // asserts num_chunks >= 2 * num_ranks), and so does scheduleOrder (an empty order): see refusedShapes.
        for (int pp : { 4, 8 })
            for (int m : { 10, 20 }) {
                QTest::addRow("zb1p pp%d m%d", pp, m) << int(Schedule::ZeroBubbleH1) << pp << m;
                if (m >= 2 * pp) {
                    QTest::addRow("dualpipe pp%d m%d", pp, m) << int(Schedule::DualPipe) << pp << m;
                    QTest::addRow("dualpipev pp%d m%d", pp, m) << int(Schedule::DualPipeV) << pp << m;
                }
            }
    }

    void referenceOrder()
    {
        QFETCH(int, schedule);
        QFETCH(int, pp);
        QFETCH(int, microBatches);
        const auto s = static_cast<Schedule>(schedule);
        const QString key = QStringLiteral("%1 pp%2 m%3").arg(QLatin1String(toString(s))).arg(pp).arg(microBatches);
        const QJsonArray ranks = referenceOrders().value(key).toArray();
        QCOMPARE(ranks.size(), pp);
        ScheduleShape shape;
        shape.schedule = s;
        shape.pp = pp;
        shape.virtualStages = s == Schedule::DualPipeV ? 2 : 1;
        shape.microBatches = microBatches;
        for (int r = 0; r < pp; ++r) {
            const std::vector<ScheduleUnit> order = scheduleOrder(shape, r);
            QCOMPARE(notation(s, microBatches, order), ranks.at(r).toString());
        }
    }

    void refusedShapes()
    {
        ScheduleShape shape;
        shape.pp = 8;
        shape.microBatches = 10;
        shape.schedule = Schedule::DualPipe;
        QVERIFY(scheduleOrder(shape, 0).empty());
        shape.schedule = Schedule::DualPipeV;
        shape.virtualStages = 2;
        QVERIFY(scheduleOrder(shape, 0).empty());
        shape.schedule = Schedule::DualPipe;
        shape.pp = 3; // DualPipe pairs stage s with pp-1-s: pp must be even
        shape.microBatches = 20;
        QVERIFY(scheduleOrder(shape, 0).empty());
    }

    void activationsInFlight_data()
    {
        QTest::addColumn<int>("schedule");
        QTest::addColumn<int>("pp");
        QTest::addColumn<int>("microBatches");
        QTest::addColumn<QString>("expected"); // the most chunk forwards whose backward has not run, per rank
        // deepseek-ai/DualPipe README, "Pipeline Bubbles and Memory Usage Comparison": activation PP for 1F1B and
        // ZB1P (rank s of 1F1B holds pp - s: Narayanan et al. 2021, §2.2), PP + 1 for DualPipe on every rank.
        // DualPipeV runs chunks of half a stage: 2 PP + 1 of them is the README's PP + 1 in stage units, rounded up.
        QTest::newRow("1f1b pp4 m10") << int(Schedule::OneFOneB) << 4 << 10 << QStringLiteral("4 3 2 1");
        QTest::newRow("zb1p pp4 m10") << int(Schedule::ZeroBubbleH1) << 4 << 10 << QStringLiteral("4 3 2 1");
        QTest::newRow("zb1p pp8 m20") << int(Schedule::ZeroBubbleH1) << 8 << 20 << QStringLiteral("8 7 6 5 4 3 2 1");
        QTest::newRow("dualpipe pp4 m10") << int(Schedule::DualPipe) << 4 << 10 << QStringLiteral("5 5 5 5");
        QTest::newRow("dualpipe pp8 m20") << int(Schedule::DualPipe) << 8 << 20 << QStringLiteral("9 9 9 9 9 9 9 9");
        QTest::newRow("dualpipev pp4 m10") << int(Schedule::DualPipeV) << 4 << 10 << QStringLiteral("9 9 9 9");
    }

    void activationsInFlight()
    {
        QFETCH(int, schedule);
        QFETCH(int, pp);
        QFETCH(int, microBatches);
        QFETCH(QString, expected);
        ScheduleShape shape;
        shape.schedule = static_cast<Schedule>(schedule);
        shape.pp = pp;
        shape.virtualStages = shape.schedule == Schedule::DualPipeV ? 2 : 1;
        shape.microBatches = microBatches;
        QStringList most;
        for (int r = 0; r < pp; ++r) {
            int live = 0, peak = 0;
            for (const ScheduleUnit& u : scheduleOrder(shape, r)) {
                if (u.pass == UnitPass::Forward)
                    peak = std::max(peak, ++live);
                else if (u.pass != UnitPass::BackwardWeight)
                    --live; // the whole backward or its input-gradient part frees the forward's activations
            }
            most << QString::number(peak);
        }
        QCOMPARE(most.join(QLatin1Char(' ')), expected);
    }

    void everyPassOnce_data()
    {
        QTest::addColumn<int>("schedule");
        QTest::addColumn<int>("pp");
        QTest::addColumn<int>("v");
        QTest::addColumn<int>("microBatches");
        QTest::newRow("zb1p pp6 m13") << int(Schedule::ZeroBubbleH1) << 6 << 1 << 13;
        QTest::newRow("dualpipe pp6 m14") << int(Schedule::DualPipe) << 6 << 1 << 14;
        QTest::newRow("dualpipev pp3 m7") << int(Schedule::DualPipeV) << 3 << 2 << 7;
        QTest::newRow("interleaved pp4 v3 m10") << int(Schedule::Interleaved) << 4 << 3 << 10;
        QTest::newRow("1f1b pp5 m3") << int(Schedule::OneFOneB) << 5 << 1 << 3;
    }

    void everyPassOnce()
    {
        // Every (micro-batch, local chunk) runs one forward and either one whole backward or one B and later one W,
        // with the forward first and the B before its W.
        QFETCH(int, schedule);
        QFETCH(int, pp);
        QFETCH(int, v);
        QFETCH(int, microBatches);
        ScheduleShape shape;
        shape.schedule = static_cast<Schedule>(schedule);
        shape.pp = pp;
        shape.virtualStages = v;
        shape.microBatches = microBatches;
        const int locals = shape.schedule == Schedule::DualPipe ? 2 : v;
        for (int r = 0; r < pp; ++r) {
            const std::vector<ScheduleUnit> order = scheduleOrder(shape, r);
            QVERIFY(!order.empty());
            std::map<std::pair<int, int>, std::string> seen; // (mb, chunk) -> passes in order
            for (const ScheduleUnit& u : order)
                seen[{ u.microBatch, u.localChunk }] += "FXBW"[static_cast<int>(u.pass)];
            const int perChunk = shape.schedule == Schedule::DualPipe ? microBatches / 2 : microBatches;
            QCOMPARE(int(seen.size()), perChunk * locals);
            for (const auto& [key, passes] : seen)
                QVERIFY2(passes == "FX" || passes == "FBW", passes.c_str());
        }
    }

    void interleavedTable()
    {
        // Megatron-LM's schedule table for PP2 N3 M5 VP2 (the comment in forward_backward_pipelining_with_
        // interleaving, schedules.py, commit d98e8a64): micro-batches 0 1 2 0 1 2 3 4 3 4, chunks 0 0 0 1 1 1 0 0 1 1.
        // Stage 1 warms up with (2-1-1)*2 + (2-1)*3 = 3 forwards, then alternates; the forwards follow the table.
        ScheduleShape shape;
        shape.schedule = Schedule::Interleaved;
        shape.pp = 2;
        shape.virtualStages = 2;
        shape.microBatches = 5;
        shape.groupSize = 3;
        QString forwards, backwards;
        for (const ScheduleUnit& u : scheduleOrder(shape, 1))
            (u.backward() ? backwards : forwards) += QStringLiteral("%1/%2 ").arg(u.microBatch).arg(u.localChunk);
        QCOMPARE(forwards, QStringLiteral("0/0 1/0 2/0 0/1 1/1 2/1 3/0 4/0 3/1 4/1 "));
        // Backwards visit the chunks in reverse: virtual micro-batch k's chunk is v-1 minus the table's.
        QCOMPARE(backwards, QStringLiteral("0/1 1/1 2/1 0/0 1/0 2/0 3/1 4/1 3/0 4/0 "));
        const std::vector<ScheduleUnit> order = scheduleOrder(shape, 1);
        for (int k = 0; k < 3; ++k)
            QVERIFY(!order[static_cast<size_t>(k)].backward());
        QVERIFY(order[3].pass == UnitPass::Forward && order[4].backward());
    }

    void groupSize_data()
    {
        QTest::addColumn<int>("pp");
        QTest::addColumn<int>("m");
        QTest::addColumn<int>("requested");
        QTest::addColumn<int>("expected");
        QTest::newRow("divides") << 4 << 16 << 0 << 4;
        // Unset, N is pp even when m is no multiple of it: Megatron-Core's default (model_parallel_config.py,
        // d98e8a64, microbatch_group_size_per_vp_stage None -> pipeline_model_parallel_size). 20 on pp 8 leaves a
        // last group of 4 < 8, which the validator refuses as Megatron-LM does; 10 is what the user must set.
        QTest::newRow("default is pp") << 8 << 20 << 0 << 8;
        QTest::newRow("llama-style, set") << 8 << 20 << 10 << 10;
        QTest::newRow("requested") << 4 << 16 << 8 << 8;
        QTest::newRow("fewer than pp") << 8 << 5 << 0 << 5;
    }

    void groupSize()
    {
        QFETCH(int, pp);
        QFETCH(int, m);
        QFETCH(int, requested);
        QFETCH(int, expected);
        QCOMPARE(interleavedGroupSize(pp, m, requested), expected);
    }

    void epOverlapPairs()
    {
        // Megatron-Core with overlap_moe_expert_parallel_comm: one more warm-up forward, and every steady-state
        // forward paired with the backward after it (get_pp_rank_microbatches).
        ScheduleShape shape;
        shape.schedule = Schedule::Interleaved;
        shape.pp = 2;
        shape.virtualStages = 2;
        shape.microBatches = 4;
        shape.pairForwardBackward = true;
        const std::vector<ScheduleUnit> order = scheduleOrder(shape, 0);
        // Stage 0: (2-0-1)*2 + (2-1)*2 + 1 = 5 warm-up forwards of 8.
        int warmup = 0;
        while (!order[static_cast<size_t>(warmup)].pairedWithNext && !order[static_cast<size_t>(warmup)].backward())
            ++warmup;
        QCOMPARE(warmup, 5);
        int pairs = 0;
        for (size_t k = 0; k + 1 < order.size(); ++k)
            if (order[k].pairedWithNext) {
                QVERIFY(order[k].pass == UnitPass::Forward && order[k + 1].backward());
                ++pairs;
            }
        QCOMPARE(pairs, 8 - 5);
    }

    /// buildClassProgram()'s unit starts (what the quick estimate profiles by): every node a unit's emission adds
    /// belongs to that unit, by micro-batch, direction and (compute) chunk, for the stage's whole order and for the
    /// last micro-batch's units alone (where consecutive units share a micro-batch and a direction).
    void unitStartsPartitionTheProgram()
    {
        // tiny, 4 layers on pp 2 x v 2 (one layer per chunk), 8 / 2 = 4 micro-batches.
        const ConfigResult loaded = loadConfigOrPreset("tiny",
            { "model.layers=4", "parallelism.dp=1", "parallelism.tp=1", "parallelism.pp=2",
                "parallelism.schedule=interleaved", "parallelism.virtual_stages=2", "training.global_batch=8",
                "training.micro_batch=2" });
        QVERIFY(loaded.config);
        std::string error;
        const std::optional<DistributionPlan> plan = planDistribution(
            *loaded.config, buildModelGraph(loaded.config->model, loaded.config->training.precision), error);
        QVERIFY2(plan, error.c_str());
        ScheduleShape shape = scheduleShapeOf(*loaded.config);
        shape.microBatches = 4;
        for (int32_t stage = 0; stage < 2; ++stage) {
            std::vector<ScheduleUnit> whole = scheduleOrder(shape, stage);
            QCOMPARE(whole.size(), size_t(4 * 2 * 2)); // micro-batches x local chunks x (forward, backward)
            std::vector<ScheduleUnit> last = whole;
            std::erase_if(last, [](const ScheduleUnit& u) { return u.microBatch != 3; });
            for (const std::vector<ScheduleUnit>* order : { &whole, &last }) {
                std::vector<uint32_t> starts;
                const ClassProgram program = buildClassProgram(*plan, stage, false, order, &starts);
                QCOMPARE(starts.size(), order->size());
                for (size_t k = 0; k < starts.size(); ++k) {
                    const ScheduleUnit& unit = (*order)[k];
                    const size_t end = k + 1 < starts.size() ? starts[k + 1] : program.nodes.size();
                    QVERIFY(starts[k] <= end);
                    int computes = 0;
                    for (size_t i = starts[k]; i < end; ++i) {
                        const ProgramNode& node = program.nodes[i];
                        if (node.microBatch < 0)
                            continue; // gradient reductions and the optimizer
                        QCOMPARE(node.microBatch, unit.microBatch);
                        QCOMPARE(node.pass == Pass::Backward || node.recompute, unit.backward());
                        if (node.kind == NodeKind::Compute) {
                            QCOMPARE(int32_t(node.chunk), unit.localChunk);
                            ++computes;
                        }
                    }
                    QVERIFY2(
                        computes > 0, qPrintable(QStringLiteral("unit %1 of stage %2 is empty").arg(k).arg(stage)));
                }
                for (size_t i = 0; i < (starts.empty() ? program.nodes.size() : starts.front()); ++i)
                    QVERIFY(program.nodes[i].microBatch < 0); // nothing of a micro-batch before the first unit
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestSchedules)
#include "tst_schedules.moc"
