// SPDX-License-Identifier: MIT
// OverviewModel and OverviewView over real synthesis results of the tiny preset.
#include "config/configloader.h"
#include "estimate/servingestimate.h"
#include "estimate/stepestimate.h"
#include "guihelpers.h"
#include "models/formatting.h"
#include "models/overviewmodel.h"
#include "synthesis/synthesis.h"
#include "timeline/timeaxis.h"
#include "widgets/overviewview.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QHeaderView>
#include <QLabel>
#include <QScrollBar>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QtTest>

using namespace stagecraft;
using stagecraft::test::synth;
using stagecraft::test::withGpu;

namespace {

qint64 raw(const QAbstractItemModel& model, int row, int column)
{
    return model.data(model.index(row, column), OverviewModel::RawValueRole).toLongLong();
}

// tiny (resources/presets/tiny.yaml): 2 layers, hidden 256, vocab 1024, global_batch 4, micro_batch 2.
// Its parameter count is hand-derived in tests/core/tst_model.cpp: 1,705,216.
constexpr qint64 kTinyParams = 1'705'216;

double rawDouble(const QAbstractItemModel& model, int row, int column)
{
    return model.data(model.index(row, column), OverviewModel::RawValueRole).toDouble();
}

// What the view must show: estimateStep() on the config's GPU with default options, computed here on its own.
StepEstimate expectedEstimate(const SynthesisResult& result)
{
    std::string error;
    const std::optional<GpuSpec> gpu = gpuForConfig(result.config, error);
    StepEstimate estimate;
    if (!gpu || !estimateStep(result, *gpu, EstimateOptions {}, estimate, error))
        qFatal("estimate failed: %s", error.c_str());
    return estimate;
}

bool waitForEstimate(const OverviewView& view)
{
    return QTest::qWaitFor([&view] { return !view.isEstimating(); }, 60000);
}

// Every key of the plan is stated: the preset's own plan (NeMo's 64 GPUs, cp 2, interleaved, bf16 gradients) is
// not this one.
QStringList llama70b()
{
    return { QStringLiteral("parallelism.dp=16"), QStringLiteral("parallelism.tp=8"),
        QStringLiteral("parallelism.pp=8"), QStringLiteral("parallelism.cp=1"),
        QStringLiteral("parallelism.sequence_parallel=true"), QStringLiteral("parallelism.zero=1"),
        QStringLiteral("parallelism.schedule=1f1b"), QStringLiteral("parallelism.virtual_stages=1"),
        QStringLiteral("training.global_batch=128"), QStringLiteral("training.main_grad_dtype=fp32"),
        QStringLiteral("training.grad_reduce_dtype=fp32") };
}

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
        // whole model reduced in fp32 (training.grad_reduce_dtype default): 1,705,216 params * 4 bytes = 6,820,864
        // bytes (= 6.50 MiB). No other collective.
        OverviewModel model;
        model.setResult(synth("tiny", { QStringLiteral("parallelism.dp=2") }));
        QCOMPARE(raw(model, 0, OverviewModel::AllReduceColumn), kTinyParams * 4);
        QVERIFY2(model.data(model.index(0, OverviewModel::AllReduceColumn)).toString().startsWith(QLatin1String("6.5")),
            qPrintable(model.data(model.index(0, OverviewModel::AllReduceColumn)).toString()));
        QCOMPARE(model.data(model.index(0, OverviewModel::AllReduceColumn), Qt::ToolTipRole).toString(),
            QStringLiteral("6,820,864 bytes per rank per iteration"));
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
        // ZeRO holds 16 bytes per parameter (ZeRO §3.1), 128.5 GB: it cannot fit, and the row says so. One GPU is
        // stated key by key: the preset's own plan is NeMo's 8-GPU one.
        const ConfigResult loaded = loadConfigOrPreset("llama3-8b",
            { "parallelism.dp=1", "parallelism.tp=1", "parallelism.pp=1", "parallelism.cp=1", "parallelism.zero=0",
                "training.main_grad_dtype=fp32", "training.grad_reduce_dtype=fp32", "training.global_batch=1",
                "training.micro_batch=1", "cluster.gpu=h100-sxm" });
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

    void estimateArrivesInTheTableAndCard_data()
    {
        QTest::addColumn<QStringList>("overrides");
        QTest::newRow("single GPU") << QStringList {};
        QTest::newRow("dp 2") << QStringList { QStringLiteral("parallelism.dp=2") };
        QTest::newRow("dp 2 tp 2 pp 2") << QStringList { QStringLiteral("parallelism.dp=2"),
            QStringLiteral("parallelism.tp=2"), QStringLiteral("parallelism.pp=2") };
    }

    void estimateArrivesInTheTableAndCard()
    {
        QFETCH(QStringList, overrides);
        const auto result = synth("tiny", overrides);
        OverviewView view;
        QAbstractItemModelTester tester(view.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy available(&view, &OverviewView::estimateAvailable);
        QSignalSpy changed(view.model(), &QAbstractItemModel::dataChanged);
        view.setResult(result);
        // The estimate runs in the worker: setResult() returns before it, and the card and columns say so.
        QVERIFY(view.isEstimating());
        QCOMPARE(view.figure(QStringLiteral("step")), QStringLiteral("estimating\u2026"));
        QCOMPARE(view.model()->data(view.model()->index(0, OverviewModel::StepTimeColumn)).toString(),
            QStringLiteral("\u2026"));
        QVERIFY(!view.model()
                     ->data(view.model()->index(0, OverviewModel::StepTimeColumn), OverviewModel::RawValueRole)
                     .isValid());
        QVERIFY(available.wait(60000));
        QCOMPARE(available.count(), 1);
        QVERIFY(!view.isEstimating());

        const StepEstimate expected = expectedEstimate(*result);
        const OverviewModel& model = *view.model();
        QCOMPARE(size_t(model.rowCount()), expected.classes.size());
        // One dataChanged over exactly the three estimate columns of every row.
        QCOMPARE(changed.count(), 1);
        QCOMPARE(changed.front().at(0).toModelIndex(), model.index(0, OverviewModel::StepTimeColumn));
        QCOMPARE(changed.front().at(1).toModelIndex(), model.index(model.rowCount() - 1, OverviewModel::BubbleColumn));
        double slowest = 0;
        for (int row = 0; row < model.rowCount(); ++row) {
            const ClassEstimate& c = expected.classes[size_t(row)];
            QCOMPARE(rawDouble(model, row, OverviewModel::StepTimeColumn), c.stepTimeS);
            QCOMPARE(model.data(model.index(row, OverviewModel::StepTimeColumn), OverviewModel::SortRole).toDouble(),
                c.stepTimeS);
            QCOMPARE(rawDouble(model, row, OverviewModel::ExposedCommColumn), c.exposedCommunicationS);
            QCOMPARE(rawDouble(model, row, OverviewModel::BubbleColumn), c.bubbleFraction);
            QCOMPARE(
                model.data(model.index(row, OverviewModel::StepTimeColumn)).toString(), formatDuration(c.stepTimeS));
            QVERIFY(model.data(model.index(row, OverviewModel::BubbleColumn)).toString().endsWith(QLatin1Char('%')));
            slowest = std::max(slowest, c.stepTimeS);
        }
        QVERIFY(slowest > 0);
        // The iteration lasts until the slowest class finishes (stepestimate.h, iterationTimeS).
        QCOMPARE(model.estimate()->iterationTimeS, slowest);
        QCOMPARE(view.figure(QStringLiteral("step")), formatDuration(slowest));
        QVERIFY2(view.figureDetail(QStringLiteral("step"))
                     .contains(QString::number(100.0 * expected.mfu, 'f', 1) + QStringLiteral("%")),
            qPrintable(view.figureDetail(QStringLiteral("step"))));
        QVERIFY(view.figureDetail(QStringLiteral("step")).contains(QLatin1String("tokens/s")));
        QVERIFY(view.figureToolTip(QStringLiteral("step")).contains(QLatin1String("h100-sxm")));
        QVERIFY(view.figureToolTip(QStringLiteral("step")).contains(QLatin1String("roofline"), Qt::CaseInsensitive));
    }

    void servingFiguresArriveInTheCards()
    {
        // tiny served: 2 layers, 4 KV heads of 256/8 = 32, tp 2; 8 sequences of 100 prompt tokens generating 40.
        const auto result = synth("tiny",
            { QStringLiteral("workload=inference"), QStringLiteral("parallelism.tp=2"),
                QStringLiteral("inference.batch=8"), QStringLiteral("inference.prompt_tokens=100"),
                QStringLiteral("inference.output_tokens=40"), QStringLiteral("inference.block_size=16") });
        OverviewView view;
        QSignalSpy available(&view, &OverviewView::estimateAvailable);
        view.setResult(result);
        // A serving result shows the serving cards, not a training iteration's.
        for (const char* name : { "microbatches", "tokens", "step" })
            QVERIFY2(!view.isFigureShown(QLatin1String(name)), name);
        for (const char* name :
            { "world", "params", "flops", "classes", "sequences", "kvcache", "ttft", "tpot", "throughput" })
            QVERIFY2(view.isFigureShown(QLatin1String(name)), name);
        for (const int column :
            { OverviewModel::StepTimeColumn, OverviewModel::ExposedCommColumn, OverviewModel::BubbleColumn })
            QVERIFY(view.table()->isColumnHidden(column));
        QCOMPARE(view.figure(QStringLiteral("sequences")), QStringLiteral("8"));
        QCOMPARE(view.figure(QStringLiteral("ttft")), QStringLiteral("estimating\u2026"));
        QVERIFY(available.wait(60000));
        QVERIFY(view.servingEstimate());

        // The same estimate, computed here on its own.
        std::string error;
        const std::optional<GpuSpec> gpu = gpuForConfig(result->config, error);
        QVERIFY(gpu);
        ServingEstimate expected;
        QVERIFY2(estimateServing(*result, *gpu, EstimateOptions {}, expected, error), error.c_str());
        QCOMPARE(view.figure(QStringLiteral("ttft")), formatDuration(expected.ttftS));
        QCOMPARE(view.figure(QStringLiteral("tpot")), formatDuration(expected.tpotS));
        QCOMPARE(view.figure(QStringLiteral("throughput")),
            QStringLiteral("%1 tok/s").arg(formatParameterCount(expected.tokensPerSPerGpu)));
        // Throughput per GPU: batch * output_tokens / (TTFT + (output_tokens - 1) * TPOT) / GPUs.
        QVERIFY(std::abs(expected.tokensPerSPerGpu - 8.0 * 40 / (expected.ttftS + 39 * expected.tpotS) / 2)
            <= 1e-9 * expected.tokensPerSPerGpu);
        // The cache at the last token: layers * sequences * (prompt + output - 1 = 139 positions, in blocks of 16:
        // 144) * 2 (keys, values) * 4/2 KV heads * 32 * 2 bytes, on each of the tp ranks.
        const qint64 cache = 2LL * 8 * 144 * 2 * (4 / 2) * 32 * 2;
        QCOMPARE(view.figure(QStringLiteral("kvcache")), formatByteCount(double(cache)));
        QVERIFY(
            view.figureDetail(QStringLiteral("kvcache"))
                .contains(countNoun(expected.maxSequences, QStringLiteral("sequence"), QStringLiteral("sequences"))));
        // The decode step's bytes and its time at HBM speed are stated, and whether it is memory-bound.
        QVERIFY2(view.figureDetail(QStringLiteral("tpot")).contains(QLatin1String("-bound: ")),
            qPrintable(view.figureDetail(QStringLiteral("tpot"))));

        // Back to a training result: its cards and columns return.
        view.setResult(synth("tiny", {}));
        QVERIFY(view.isFigureShown(QStringLiteral("step")));
        QVERIFY(!view.isFigureShown(QStringLiteral("ttft")));
        QVERIFY(!view.table()->isColumnHidden(OverviewModel::StepTimeColumn));
        QVERIFY(waitForEstimate(view));
    }

    void estimateFormulas()
    {
        // One GPU: nothing to communicate, so no exposed communication. Data parallelism only (pp = 1): the
        // pipeline bubble (p-1)/(m+p-1) of Narayanan et al. 2021 §2.2 is 0 for p = 1.
        for (const QStringList& overrides : { QStringList {}, QStringList { QStringLiteral("parallelism.dp=2") } }) {
            OverviewView view;
            QSignalSpy available(&view, &OverviewView::estimateAvailable);
            view.setResult(synth("tiny", overrides));
            QVERIFY(available.wait(60000));
            const OverviewModel& model = *view.model();
            QCOMPARE(model.rowCount(), 1);
            QVERIFY(std::abs(rawDouble(model, 0, OverviewModel::BubbleColumn)) < 1e-12);
            QCOMPARE(model.data(model.index(0, OverviewModel::BubbleColumn)).toString(), QStringLiteral("0.0%"));
            if (overrides.isEmpty()) {
                QCOMPARE(rawDouble(model, 0, OverviewModel::ExposedCommColumn), 0.0);
                QCOMPARE(
                    model.data(model.index(0, OverviewModel::ExposedCommColumn)).toString(), QStringLiteral("0 s"));
            } else {
                // dp 2 all-reduces the gradients (dataParallelGradientAllReduce): some of it is not hidden.
                QVERIFY(rawDouble(model, 0, OverviewModel::ExposedCommColumn) > 0);
            }
        }
    }

    void failedEstimateSaysWhy()
    {
        // Every GPU preset (resources/gpus/*.yaml) has fp32, fp16 and bf16 peaks, so no preset lacks the training
        // precision; an unknown GPU makes the estimate fail the same way (synthesis itself does not need the GPU).
        OverviewView view;
        QAbstractItemModelTester tester(view.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        view.resize(1400, 800);
        view.show();
        QSignalSpy available(&view, &OverviewView::estimateAvailable);
        view.setResult(
            withGpu(synth("tiny", QStringList()), "v100")); // the loader refuses v100: changed after synthesis
        QVERIFY(available.wait(60000));
        std::string error;
        QVERIFY(!gpuForConfig(view.model()->result()->config, error));
        QVERIFY(QString::fromStdString(error).contains(QLatin1String("v100")));
        QCOMPARE(view.figure(QStringLiteral("step")), QStringLiteral("unavailable"));
        QCOMPARE(view.figureDetail(QStringLiteral("step")), QString::fromStdString(error));
        QVERIFY(view.figureToolTip(QStringLiteral("step")).contains(QString::fromStdString(error)));
        QCOMPARE(view.model()->estimateError(), QString::fromStdString(error));
        const QModelIndex step = view.model()->index(0, OverviewModel::StepTimeColumn);
        QCOMPARE(view.model()->data(step).toString(), QStringLiteral("\u2014"));
        QVERIFY(!view.model()->data(step, OverviewModel::RawValueRole).isValid());
        QVERIFY(view.model()->data(step, Qt::ToolTipRole).toString().contains(QLatin1String("v100")));
        // Said in the card, not in a dialog.
        QVERIFY(!QApplication::activeModalWidget());
        const QString dir = qEnvironmentVariable("STAGECRAFT_SCREENSHOT_DIR");
        QCoreApplication::processEvents(); // the layout makes room for the wrapped reason
        bool reasonSeen = false;
        for (QLabel* detail : view.findChildren<QLabel*>(QStringLiteral("cardDetail"))) {
            if (detail->text() != QString::fromStdString(error))
                continue;
            reasonSeen = true;
            // Wrapped over several lines, all of them inside the card.
            QVERIFY(detail->height() >= detail->heightForWidth(detail->width()));
            QVERIFY(detail->heightForWidth(detail->width()) > detail->fontMetrics().lineSpacing());
            QVERIFY(detail->geometry().bottom() <= detail->parentWidget()->contentsRect().bottom());
        }
        QVERIFY(reasonSeen);
        if (!dir.isEmpty())
            QVERIFY(view.grab().save(dir + QStringLiteral("/overview-estimate-failed.png")));

        // A good result afterwards replaces the message.
        view.setResult(synth("tiny", {}));
        QVERIFY(available.wait(60000));
        QVERIFY(view.model()->estimate());
        QVERIFY(view.model()->estimateError().isEmpty());
        QCOMPARE(view.figure(QStringLiteral("step")), formatDuration(view.model()->estimate()->iterationTimeS));
    }

    void supersededEstimateIsDropped()
    {
        // The first result (4 stages) is replaced before its estimate can land; only the second one's arrives.
        const auto first = synth("tiny",
            { QStringLiteral("parallelism.pp=4"), QStringLiteral("model.layers=4"),
                QStringLiteral("training.global_batch=8"), QStringLiteral("training.micro_batch=1") });
        const auto second = synth("tiny", { QStringLiteral("parallelism.dp=2") });
        OverviewView view;
        QAbstractItemModelTester tester(view.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy available(&view, &OverviewView::estimateAvailable);
        view.setResult(first);
        view.setResult(second);
        QVERIFY(waitForEstimate(view));
        QCOMPARE(available.count(), 1);
        const StepEstimate expected = expectedEstimate(*second);
        QCOMPARE(view.model()->estimate()->classes.size(), size_t(1));
        QCOMPARE(view.model()->estimate()->iterationTimeS, expected.iterationTimeS);
        QCOMPARE(rawDouble(*view.model(), 0, OverviewModel::StepTimeColumn), expected.classes[0].stepTimeS);
        QCOMPARE(view.figure(QStringLiteral("step")), formatDuration(expected.iterationTimeS));

        // The model itself refuses an estimate made for another result.
        auto stale = std::make_shared<StepEstimate>(expectedEstimate(*first));
        QSignalSpy changed(view.model(), &QAbstractItemModel::dataChanged);
        QVERIFY(!view.model()->setEstimate(first, stale));
        QCOMPARE(changed.count(), 0);
        QCOMPARE(view.model()->estimate()->classes.size(), size_t(1));
        QCOMPARE(rawDouble(*view.model(), 0, OverviewModel::StepTimeColumn), expected.classes[0].stepTimeS);
    }

    // Renders the view offscreen at 1400x800 for Llama 3 70B on 1,024 GPUs once the estimate is in, and checks that
    // no card value and no table column is cut. With STAGECRAFT_SCREENSHOT_DIR set, saves the picture there.
    void screenshot()
    {
        OverviewView view;
        view.resize(1400, 800);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QSignalSpy available(&view, &OverviewView::estimateAvailable);
        view.setResult(synth("llama3-70b", llama70b()));
        QVERIFY(available.wait(120000));
        QVERIFY(view.model()->estimate());
        QCOMPARE(view.model()->rowCount(), 8);
        QCoreApplication::processEvents();
        const QImage image = view.grab().toImage();
        QCOMPARE(image.size(), QSize(1400, 800));
        for (QLabel* value : view.findChildren<QLabel*>(QStringLiteral("cardValue")))
            QVERIFY2(value->width() >= value->sizeHint().width(), qPrintable(value->text()));
        // The estimate's detail (MFU, tokens/s) fits on its line too.
        const QString stepDetail = view.figureDetail(QStringLiteral("step"));
        bool detailSeen = false;
        for (QLabel* detail : view.findChildren<QLabel*>(QStringLiteral("cardDetail"))) {
            if (detail->text() != stepDetail)
                continue;
            detailSeen = true;
            QVERIFY2(detail->contentsRect().width() >= detail->fontMetrics().horizontalAdvance(stepDetail),
                qPrintable(stepDetail));
        }
        QVERIFY(detailSeen);
        QTableView* table = view.table();
        const QAbstractItemView* items = table; // sizeHintForColumn() is public there, protected in QTableView
        for (int column = 0; column < OverviewModel::ColumnCount; ++column)
            QVERIFY2(
                table->columnWidth(column) >= items->sizeHintForColumn(column), qPrintable(QString::number(column)));
        QVERIFY(!table->horizontalScrollBar()->isVisible());
        QVERIFY(!table->verticalScrollBar()->isVisible());
        const QString dir = qEnvironmentVariable("STAGECRAFT_SCREENSHOT_DIR");
        if (!dir.isEmpty())
            QVERIFY(image.save(dir + QStringLiteral("/overview-estimate.png")));
    }
};

QTEST_MAIN(TestOverviewModel)
#include "tst_overviewmodel.moc"
