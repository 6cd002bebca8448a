// SPDX-License-Identifier: MIT
// OverviewModel and OverviewView over real synthesis results of the tiny preset.
#include "config/configloader.h"
#include "guihelpers.h"
#include "models/overviewmodel.h"
#include "synthesis/synthesis.h"
#include "widgets/overviewview.h"

#include <QAbstractItemModelTester>
#include <QSortFilterProxyModel>
#include <QtTest>

using namespace stagecraft;
using stagecraft::test::synth;

namespace {

qint64 raw(const QAbstractItemModel& model, int row, int column)
{
    return model.data(model.index(row, column), OverviewModel::RawValueRole).toLongLong();
}

// tiny (resources/presets/tiny.yaml): 2 layers, hidden 256, vocab 1024, global_batch 4, micro_batch 2.
// Its parameter count is hand-derived in tests/core/tst_model.cpp: 1,705,216.
constexpr qint64 kTinyParams = 1'705'216;

} // namespace

class TestOverviewModel : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void modelTester()
    {
        OverviewModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(model.columnCount(), int(OverviewModel::ColumnCount));
        model.setResult(synth("tiny",
            { QStringLiteral("model.layers=8"), QStringLiteral("parallelism.pp=4"),
                QStringLiteral("parallelism.tp=2") }));
        QCOMPARE(model.rowCount(), 4);
        model.setResult(synth("tiny", {}));
        QCOMPARE(model.rowCount(), 1);
        model.setResult(nullptr);
        QCOMPARE(model.rowCount(), 0);
    }

    void ranksPerClass_data()
    {
        QTest::addColumn<QStringList>("overrides");
        QTest::addColumn<qint64>("world");
        QTest::addColumn<int>("pp");
        QTest::newRow("single GPU") << QStringList {} << qint64(1) << 1;
        QTest::newRow("dp 2") << QStringList { QStringLiteral("parallelism.dp=2") } << qint64(2) << 1;
        QTest::newRow("tp 2 pp 2") << QStringList { QStringLiteral("parallelism.tp=2"),
            QStringLiteral("parallelism.pp=2") }
                                   << qint64(4) << 2;
        QTest::newRow("dp 2 tp 2 pp 2 cp 2") << QStringList { QStringLiteral("parallelism.dp=2"),
            QStringLiteral("parallelism.tp=2"), QStringLiteral("parallelism.pp=2"), QStringLiteral("parallelism.cp=2") }
                                             << qint64(16) << 2;
    }

    void ranksPerClass()
    {
        QFETCH(QStringList, overrides);
        QFETCH(qint64, world);
        QFETCH(int, pp);
        OverviewModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setResult(synth("tiny", overrides));
        // One class per pipeline stage, each holding world / pp ranks.
        QCOMPARE(model.rowCount(), pp);
        for (int row = 0; row < pp; ++row) {
            QCOMPARE(raw(model, row, OverviewModel::StageColumn), qint64(row));
            QCOMPARE(raw(model, row, OverviewModel::RanksColumn), world / pp);
            QCOMPARE(model.data(model.index(row, OverviewModel::RanksColumn)).toString(), QString::number(world / pp));
            // rank_order [tp, cp, ep, dp, pp]: pp varies slowest, so stage s starts at rank s * (dp*tp*cp).
            QCOMPARE(raw(model, row, OverviewModel::ExampleRankColumn), row * (world / pp));
            QCOMPARE(model.data(model.index(row, OverviewModel::StageColumn), OverviewModel::ClassRole).toInt(), row);
        }
    }

    void singleDeviceComputesTheWholeIteration()
    {
        // One GPU runs every FLOP of the iteration: its compute column is the model's FLOPs per iteration.
        const auto result = synth("tiny", {});
        OverviewModel model;
        model.setResult(result);
        QCOMPARE(double(raw(model, 0, OverviewModel::ComputeColumn)), result->cost.flopsPerIteration);
        QVERIFY(model.data(model.index(0, OverviewModel::ComputeColumn)).toString().endsWith(QLatin1String("FLOP")));
        // A single GPU communicates nothing.
        for (int column : { int(OverviewModel::AllReduceColumn), int(OverviewModel::AllGatherColumn),
                 int(OverviewModel::ReduceScatterColumn), int(OverviewModel::AllToAllColumn),
                 int(OverviewModel::SendColumn), int(OverviewModel::RecvColumn) }) {
            QCOMPARE(raw(model, 0, column), qint64(0));
            QCOMPARE(model.data(model.index(0, column)).toString(), QStringLiteral("0 B"));
        }
    }

    void dataParallelGradientAllReduce()
    {
        // ZeRO-0 with dp 2 and tp 1: each rank all-reduces its whole gradient once per iteration, which is the
        // whole model in bf16: 1,705,216 params * 2 bytes = 3,410,432 bytes (= 3.25 MiB). No other collective.
        OverviewModel model;
        model.setResult(synth("tiny", { QStringLiteral("parallelism.dp=2") }));
        QCOMPARE(raw(model, 0, OverviewModel::AllReduceColumn), kTinyParams * 2);
        QVERIFY2(
            model.data(model.index(0, OverviewModel::AllReduceColumn)).toString().startsWith(QLatin1String("3.25")),
            qPrintable(model.data(model.index(0, OverviewModel::AllReduceColumn)).toString()));
        QCOMPARE(model.data(model.index(0, OverviewModel::AllReduceColumn), Qt::ToolTipRole).toString(),
            QStringLiteral("3,410,432 bytes per rank per iteration"));
        QCOMPARE(raw(model, 0, OverviewModel::AllGatherColumn), qint64(0));
        QCOMPARE(raw(model, 0, OverviewModel::ReduceScatterColumn), qint64(0));
        QCOMPARE(raw(model, 0, OverviewModel::AllToAllColumn), qint64(0));
    }

    void pipelineStagesSendAndReceive()
    {
        // Two stages: stage 0 sends activations forward and receives their gradients; stage 1 the reverse.
        // Per micro-batch both are b*s*h bf16 = 2*128*256*2 = 131,072 bytes; global_batch 4 / micro_batch 2 = 2
        // micro-batches, so 262,144 bytes each way.
        OverviewModel model;
        model.setResult(synth("tiny", { QStringLiteral("parallelism.pp=2") }));
        QCOMPARE(model.rowCount(), 2);
        for (int row = 0; row < 2; ++row) {
            QCOMPARE(raw(model, row, OverviewModel::SendColumn), qint64(262'144));
            QCOMPARE(raw(model, row, OverviewModel::RecvColumn), qint64(262'144));
        }
    }

    void sortsByRawValue()
    {
        // 8 layers over 4 stages: the first stage adds the embedding, the last the head, so compute differs.
        OverviewModel model;
        model.setResult(synth("tiny", { QStringLiteral("model.layers=8"), QStringLiteral("parallelism.pp=4") }));
        QSortFilterProxyModel proxy;
        proxy.setSourceModel(&model);
        proxy.setSortRole(OverviewModel::SortRole);
        proxy.sort(OverviewModel::ComputeColumn, Qt::DescendingOrder);
        QCOMPARE(proxy.rowCount(), 4);
        for (int row = 1; row < proxy.rowCount(); ++row)
            QVERIFY(raw(proxy, row - 1, OverviewModel::ComputeColumn) >= raw(proxy, row, OverviewModel::ComputeColumn));
        // The head's vocabulary projection (2*b*s*h*v) outweighs the embedding lookup: the last stage sorts first.
        QCOMPARE(raw(proxy, 0, OverviewModel::StageColumn), qint64(3));
    }

    void headerFigures()
    {
        OverviewView view;
        view.setResult(synth("tiny", { QStringLiteral("parallelism.dp=2"), QStringLiteral("parallelism.tp=2") }));
        QCOMPARE(view.model()->result()->cost.params, kTinyParams);
        QCOMPARE(view.figure(QStringLiteral("params")), QStringLiteral("1.71 M"));
        QCOMPARE(view.figureDetail(QStringLiteral("params")), QStringLiteral("1,705,216"));
        QCOMPARE(view.figure(QStringLiteral("world")), QStringLiteral("4 GPUs")); // dp 2 * tp 2
        // global_batch / (micro_batch * dp) = 4 / (2 * 2) = 1 micro-batch per replica.
        QCOMPARE(view.figure(QStringLiteral("microbatches")), QStringLiteral("1"));
        // global_batch * seq_len = 4 * 128 = 512 tokens.
        QCOMPARE(view.figure(QStringLiteral("tokens")), QStringLiteral("512"));
        QCOMPARE(view.figure(QStringLiteral("classes")), QStringLiteral("1"));
        QCOMPARE(view.model()->rowCount(), 1);
    }

    void peakMemory()
    {
        // Mixed-precision Adam keeps 16 bytes per parameter resident without ZeRO: bf16 weights and gradients
        // (2 + 2) and fp32 master weights, momentum and variance (4 + 4 + 4) (Rajbhandari et al. 2020, ZeRO,
        // section 3.1: "16 Psi bytes"). The peak adds activations on top, so it is at least 16 * 1,705,216.
        OverviewModel model;
        model.setResult(synth("tiny", {}));
        const QModelIndex peak = model.index(0, OverviewModel::PeakMemoryColumn);
        QVERIFY(model.data(peak, OverviewModel::RawValueRole).toLongLong() >= 16 * kTinyParams);
        QVERIFY2(model.data(peak).toString().endsWith(QLatin1String("MiB")), qPrintable(model.data(peak).toString()));
        QCOMPARE(model.data(peak, OverviewModel::ExceedsHbmRole).toBool(), false);
        QVERIFY(!model.data(peak, Qt::BackgroundRole).isValid());
    }

    void peakAgainstHbm()
    {
        // Llama 3 8B (8,030,261,248 parameters, model card) on one H100 (80 GB HBM3, NVIDIA datasheet) without
        // ZeRO holds 16 bytes per parameter (ZeRO §3.1), 128.5 GB: it cannot fit, and the row says so.
        const ConfigResult loaded = loadConfigOrPreset(
            "llama3-8b", { "training.global_batch=1", "training.micro_batch=1", "cluster.gpu=h100-sxm" });
        QVERIFY(loaded.config.has_value());
        const SynthesisOutcome outcome = synthesize(*loaded.config);
        QVERIFY(outcome.result);
        OverviewModel model;
        QAbstractItemModelTester tester(&model);
        model.setResult(outcome.result);
        const QModelIndex peak = model.index(0, OverviewModel::PeakMemoryColumn);
        QVERIFY(model.data(peak, OverviewModel::RawValueRole).toLongLong() >= 16 * int64_t(8'030'261'248));
        QCOMPARE(model.data(peak, OverviewModel::ExceedsHbmRole).toBool(), true);
        QVERIFY(model.data(peak, Qt::BackgroundRole).isValid());
        QVERIFY(model.data(peak, Qt::ToolTipRole).toString().contains(QLatin1String("Does not fit")));
    }
};

QTEST_MAIN(TestOverviewModel)
#include "tst_overviewmodel.moc"
