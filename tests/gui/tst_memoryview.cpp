// SPDX-License-Identifier: MIT
// The Memory view: MemoryModel (live buffers at a step), the down-sampling of the chart series, the CSV export and
// the MemoryView widget, over real synthesis results of the tiny and llama3-70b presets; the baseline's overlay and
// the estimated-time axis (checked against the step-time estimate's own schedule).
#include "charts/memorychartdata.h"
#include "charts/memorychartview.h"
#include "charts/memorytimes.h"
#include "charts/memoryview.h"
#include "config/configloader.h"
#include "estimate/stepestimate.h"
#include "guihelpers.h"
#include "models/formatting.h"
#include "models/memorymodel.h"
#include "synthesis/synthesis.h"

#include <QAbstractItemModelTester>
#include <QAreaSeries>
#include <QComboBox>
#include <QFile>
#include <QLabel>
#include <QLineSeries>
#include <QScatterSeries>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>

using namespace stagecraft;
using stagecraft::test::synth;

namespace {

QStringList dp2tp2pp2()
{
    return { QStringLiteral("parallelism.dp=2"), QStringLiteral("parallelism.tp=2"),
        QStringLiteral("parallelism.pp=2") };
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

qint64 raw(const QAbstractItemModel& model, int row, int column)
{
    return model.data(model.index(row, column), MemoryModel::RawValueRole).toLongLong();
}

bool waitForChart(MemoryView& view)
{
    if (!view.isUpdating())
        return true;
    QSignalSpy spy(&view, &MemoryView::chartDataAvailable);
    return spy.wait(20000);
}

/// Waits until the view's chart, and the estimate the time axis needs, are done.
bool waitUntilSettled(MemoryView& view)
{
    return view.isSettled() || QSignalSpy(&view, &ResultView::settled).wait(60000);
}

double maxY(const QXYSeries& series)
{
    double top = 0;
    for (const QPointF& p : series.points())
        top = std::max(top, p.y());
    return top;
}

/// The schedule of `result` as the Timeline tab gets it (estimateStep on the config's GPU, default options),
/// computed here without the view's code.
struct Estimated
{
    StepEstimate estimate;
    EstimateSchedule schedule;
};

Estimated estimated(const SynthesisResult& result)
{
    Estimated e;
    std::string error;
    const auto gpu = gpuForConfig(result.config, error);
    if (!gpu || !estimateStep(result, *gpu, EstimateOptions {}, e.estimate, error, &e.schedule))
        qFatal("no estimate: %s", error.c_str());
    return e;
}

} // namespace

class TestMemoryView : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void maximaSampling_data()
    {
        QTest::addColumn<QString>("shape");
        QTest::addColumn<int>("count");
        QTest::addColumn<int>("maxPoints");
        QTest::newRow("short: kept whole") << QStringLiteral("ramp") << 10 << 2000;
        QTest::newRow("exactly the limit") << QStringLiteral("ramp") << 2000 << 2000;
        QTest::newRow("spike in 100k") << QStringLiteral("spike") << 100000 << 2000;
        QTest::newRow("sawtooth period 50") << QStringLiteral("sawtooth") << 100000 << 2000;
        QTest::newRow("uneven buckets") << QStringLiteral("spike") << 4481 << 2000;
        QTest::newRow("one point") << QStringLiteral("spike") << 4481 << 1;
    }

    void maximaSampling()
    {
        QFETCH(QString, shape);
        QFETCH(int, count);
        QFETCH(int, maxPoints);
        std::vector<int64_t> values(static_cast<size_t>(count));
        const int spikeAt = count * 2 / 3 + 1;
        for (int i = 0; i < count; ++i) {
            if (shape == QLatin1String("sawtooth"))
                values[static_cast<size_t>(i)] = i % 50;
            else
                values[static_cast<size_t>(i)] = i / 3; // slow ramp with ties
        }
        if (shape == QLatin1String("spike"))
            values[static_cast<size_t>(spikeAt)] = 1'000'000'000;

        const std::vector<int64_t> kept = maximaSampleIndices(values, maxPoints);
        QCOMPARE(qint64(kept.size()), qint64(std::min(count, maxPoints)));
        QVERIFY(std::is_sorted(kept.begin(), kept.end()));
        QVERIFY(std::adjacent_find(kept.begin(), kept.end()) == kept.end());
        int64_t keptMax = 0;
        for (int64_t i : kept)
            keptMax = std::max(keptMax, values[static_cast<size_t>(i)]);
        QCOMPARE(keptMax, *std::max_element(values.begin(), values.end()));
        if (shape == QLatin1String("spike"))
            QVERIFY(std::find(kept.begin(), kept.end(), spikeAt) != kept.end());
        if (shape == QLatin1String("sawtooth")) {
            // 100000 / 2000 = 50: every bucket is one period [50k, 50k + 50), whose maximum 49 sits at 50k + 49.
            for (size_t b = 0; b < kept.size(); ++b)
                QCOMPARE(kept[b], int64_t(50 * b + 49));
        }
        if (count <= maxPoints)
            for (int i = 0; i < count; ++i)
                QCOMPARE(kept[static_cast<size_t>(i)], int64_t(i));
    }

    void stepAtTime_data()
    {
        // Steps 0..3 start at 0, 2, 1 and 2 s (step 2 on another stream starts before step 1): in start order
        // 0, 2, 1, 3 (the tie in step order).
        QTest::addColumn<double>("timeS");
        QTest::addColumn<qint64>("step");
        QTest::newRow("before the first start") << -1.0 << qint64(0);
        QTest::newRow("at the first start") << 0.0 << qint64(0);
        QTest::newRow("between") << 0.5 << qint64(0);
        QTest::newRow("a later step that starts earlier") << 1.5 << qint64(2);
        QTest::newRow("a tie: the last in step order") << 2.0 << qint64(3);
        QTest::newRow("after the last start") << 9.0 << qint64(3);
    }

    void stepAtTime()
    {
        QFETCH(double, timeS);
        QFETCH(qint64, step);
        MemoryClassTimes times;
        times.startS = { 0, 2, 1, 2 };
        times.endS = { 1, 3, 2, 4 };
        times.byStart = { 0, 2, 1, 3 };
        times.finishS = 4;
        QCOMPARE(qint64(times.stepAt(timeS)), step);
        QCOMPARE(MemoryClassTimes {}.stepAt(timeS), int64_t(-1));
    }

    void modelTester()
    {
        MemoryModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 0);
        model.setResult(synth("tiny", dp2tp2pp2()));
        QVERIFY(model.rowCount() > 0);
        model.setClass(1);
        model.setStep(0);
        model.setStep(10);
        model.setStep(-1);
        QCOMPARE(model.rowCount(), 0);
        model.setStep(1'000'000); // clamped to the last step: resident state at least
        QVERIFY(model.rowCount() > 0);
        model.setResult(synth("tiny", { QStringLiteral("parallelism.dp=2"), QStringLiteral("parallelism.zero=3") }));
        QVERIFY(model.rowCount() > 0);
        model.setResult(nullptr);
        QCOMPARE(model.rowCount(), 0);
    }

    void liveAtPeakSumsToPeak_data()
    {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<QStringList>("overrides");
        QTest::newRow("tiny") << QStringLiteral("tiny") << QStringList {};
        QTest::newRow("tiny dp2 tp2 pp2") << QStringLiteral("tiny") << dp2tp2pp2();
        QTest::newRow("tiny dp2 zero3") << QStringLiteral(
            "tiny") << QStringList { QStringLiteral("parallelism.dp=2"), QStringLiteral("parallelism.zero=3") };
        QTest::newRow("tiny recompute full pp2") << QStringLiteral(
            "tiny") << QStringList { QStringLiteral("training.recompute=full"), QStringLiteral("parallelism.pp=2") };
        QTest::newRow("llama3-70b dp16 tp8 pp8") << QStringLiteral("llama3-70b") << llama70b();
    }

    void liveAtPeakSumsToPeak()
    {
        QFETCH(QString, preset);
        QFETCH(QStringList, overrides);
        const auto result = synth(qPrintable(preset), overrides);
        MemoryModel model;
        model.setResult(result);
        for (size_t c = 0; c < result->classes.size(); ++c) {
            model.setClass(static_cast<int>(c));
            const ClassSummary& s = result->summaries[c];
            QCOMPARE(model.step(), qint64(s.peakStep));
            // Everything alive at the peak step, resident state included, is the peak: the rows are the
            // non-resident buffers plus the resident weights, gradients and optimizer state of the summary.
            qint64 sum = 0;
            qint64 transient = 0;
            for (int row = 0; row < model.rowCount(); ++row) {
                const qint64 bytes = raw(model, row, MemoryModel::BytesColumn);
                sum += bytes;
                const int buffer = model.data(model.index(row, 0), MemoryModel::BufferRole).toInt();
                if (!result->classes[c].buffers[static_cast<size_t>(buffer)].resident)
                    transient += bytes;
                QVERIFY(raw(model, row, MemoryModel::FromColumn) <= s.peakStep);
                QVERIFY(raw(model, row, MemoryModel::ToColumn) >= s.peakStep);
                if (row > 0)
                    QVERIFY(raw(model, row - 1, MemoryModel::BytesColumn) >= bytes);
            }
            QCOMPARE(sum, qint64(s.peakBytes));
            QCOMPARE(model.liveBytes(), qint64(s.peakBytes));
            QCOMPARE(transient + s.weightBytes + s.gradientBytes + s.optimizerBytes, qint64(s.peakBytes));
            QCOMPARE(model.rowCount(), int(result->memory[c].liveAtPeak.size()));

            // Any other step: the rows sum to the timeline's total there.
            const MemoryTimeline& tl = result->memory[c];
            for (size_t step : { size_t(0), tl.series.size() / 3, tl.series.size() - 1 }) {
                model.setStep(static_cast<qint64>(step));
                qint64 live = 0;
                for (int row = 0; row < model.rowCount(); ++row)
                    live += raw(model, row, MemoryModel::BytesColumn);
                QCOMPARE(live, qint64(tl.total(step)));
            }
        }
    }

    void bufferNames()
    {
        const auto result = synth("tiny", { QStringLiteral("parallelism.dp=2"), QStringLiteral("parallelism.zero=3") });
        const ClassProgram& program = result->classes[0];
        bool sawGathered = false;
        bool sawMicroBatch = false;
        bool sawOptimizer = false;
        for (size_t b = 0; b < program.buffers.size(); ++b) {
            const Buffer& buf = program.buffers[b];
            const QString name = MemoryModel::bufferName(*result, 0, static_cast<int>(b));
            QVERIFY2(!name.isEmpty(), qPrintable(QString::number(b)));
            if (buf.tensor >= 0)
                QVERIFY(name.contains(
                    QString::fromStdString(result->graph->tensors[static_cast<size_t>(buf.tensor)].name)));
            if (buf.microBatch >= 0) {
                QVERIFY2(name.startsWith(QStringLiteral("mb%1/").arg(buf.microBatch)), qPrintable(name));
                sawMicroBatch = true;
            }
            if (!buf.resident && buf.category == MemoryCategory::Weights) {
                QVERIFY2(name.endsWith(QLatin1String(" (gathered)")), qPrintable(name));
                sawGathered = true;
            }
            if (buf.resident && buf.category == MemoryCategory::Optimizer) {
                QVERIFY2(name.endsWith(QLatin1String(" (optimizer state)")), qPrintable(name));
                sawOptimizer = true;
            }
        }
        // ZeRO-3 all-gathers the weight shards before use (Rajbhandari et al. 2020, §5.3).
        QVERIFY(sawGathered);
        QVERIFY(sawMicroBatch);
        QVERIFY(sawOptimizer);
    }

    void csvExport_data()
    {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<QStringList>("overrides");
        QTest::newRow("tiny dp2 tp2 pp2") << QStringLiteral("tiny") << dp2tp2pp2();
        QTest::newRow("llama3-70b dp16 tp8 pp8") << QStringLiteral("llama3-70b") << llama70b();
    }

    void csvExport()
    {
        QFETCH(QString, preset);
        QFETCH(QStringList, overrides);
        const auto result = synth(qPrintable(preset), overrides);
        MemoryView view;
        view.setResult(result);
        QVERIFY(waitForChart(view));
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        for (int c = 0; c < int(result->classes.size()); ++c) {
            view.showClass(c);
            const QString path = dir.filePath(QStringLiteral("stage%1.csv").arg(c));
            QString error;
            QVERIFY2(view.exportCsv(path, &error), qPrintable(error));
            QFile file(path);
            QVERIFY(file.open(QIODevice::ReadOnly | QIODevice::Text));
            const QList<QByteArray> lines = file.readAll().split('\n');
            QCOMPARE(lines.front(), QByteArray("step,weights,gradients,optimizer,activations,other,total"));
            const MemoryTimeline& tl = result->memory[static_cast<size_t>(c)];
            QCOMPARE(qint64(lines.size()), qint64(tl.series.size()) + 2); // header, rows, empty after the last \n
            qint64 maxTotal = -1;
            qint64 maxStep = -1;
            for (qsizetype i = 1; i + 1 < lines.size(); ++i) {
                const QList<QByteArray> cells = lines[i].split(',');
                QCOMPARE(cells.size(), 7);
                QCOMPARE(cells[0].toLongLong(), qint64(i - 1));
                qint64 sum = 0;
                for (int k = 1; k <= 5; ++k)
                    sum += cells[k].toLongLong();
                const qint64 total = cells[6].toLongLong();
                QCOMPARE(total, sum);
                if (total > maxTotal) {
                    maxTotal = total;
                    maxStep = i - 1;
                }
            }
            QCOMPARE(maxTotal, qint64(result->summaries[static_cast<size_t>(c)].peakBytes));
            QCOMPARE(maxStep, qint64(result->summaries[static_cast<size_t>(c)].peakStep));
            // Resident weights are the same at every step: the column equals the summary's figure.
            QCOMPARE(
                lines[1].split(',')[1].toLongLong(), qint64(result->summaries[static_cast<size_t>(c)].weightBytes));
        }
        QVERIFY(!view.exportCsv(dir.filePath(QStringLiteral("no/such/dir/x.csv"))));
    }

    void chartSeries_data()
    {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<QStringList>("overrides");
        QTest::newRow("tiny dp2 tp2 pp2") << QStringLiteral("tiny") << dp2tp2pp2();
        QTest::newRow("llama3-70b dp16 tp8 pp8") << QStringLiteral("llama3-70b") << llama70b();
    }

    void chartSeries()
    {
        QFETCH(QString, preset);
        QFETCH(QStringList, overrides);
        const auto result = synth(qPrintable(preset), overrides);
        MemoryView view;
        view.resize(1400, 900);
        view.setResult(result);
        QVERIFY(waitForChart(view));
        MemoryChartView* chart = view.chartView();
        const int last = int(result->classes.size()) - 1;
        QCOMPARE(view.currentClass(), 0);
        QCOMPARE(view.compareClass(), last); // first vs last stage by default
        const ClassSummary& s = result->summaries[0];
        const MemoryTimeline& tl = result->memory[0];
        const double unit = chart->chartData().unitBytes;
        const qint64 expectedPoints = std::min<qint64>(qint64(tl.series.size()), kMaxMemoryChartPoints);
        for (int c = 0; c < kMemoryChartCategories; ++c)
            QCOMPARE(qint64(chart->categorySeries(c)->count()), expectedPoints);
        // The top of the stack keeps the peak (exact: bytes / 2^k is exact in a double).
        double top = 0;
        for (const QPointF& p : chart->categorySeries(kMemoryChartCategories - 1)->points())
            top = std::max(top, p.y());
        QCOMPARE(qint64(top * unit), qint64(s.peakBytes));
        // Weights at the bottom: the resident weights (no ZeRO-3 here).
        QCOMPARE(qint64(chart->categorySeries(0)->at(0).y() * unit), qint64(s.weightBytes));
        QCOMPARE(chart->peakSeries()->count(), 1);
        QCOMPARE(qint64(chart->peakSeries()->at(0).x()), qint64(s.peakStep));
        const QString node = QString::fromStdString(result->classes[0].nodes[static_cast<size_t>(s.peakStep)].name);
        QVERIFY2(chart->peakText().contains(QStringLiteral("at step %1 (%2)").arg(s.peakStep).arg(node)),
            qPrintable(chart->peakText()));
        QVERIFY(chart->compareSeries()->isVisible());
        QCOMPARE(qint64(chart->compareSeries()->count()),
            std::min<qint64>(
                qint64(result->memory[static_cast<size_t>(last)].series.size()), kMaxMemoryCompareChartPoints));
        double compareTop = 0;
        for (const QPointF& p : chart->compareSeries()->points())
            compareTop = std::max(compareTop, p.y());
        QCOMPARE(qint64(compareTop * unit), qint64(result->summaries[static_cast<size_t>(last)].peakBytes));
        QVERIFY2(
            chart->hbmSeries()->name().contains(QLatin1String("h100-sxm")), qPrintable(chart->hbmSeries()->name()));
        // The cursor starts at the peak and the table lists what is alive there.
        QCOMPARE(view.cursorStep(), qint64(s.peakStep));
        QCOMPARE(view.model()->liveBytes(), qint64(s.peakBytes));

        view.setCompareClass(-1);
        QVERIFY(waitForChart(view));
        QVERIFY(!chart->compareSeries()->isVisible());
        QCOMPARE(chart->compareSeries()->count(), 0);
    }

    void servingCacheGrowsAndEnds()
    {
        // tiny served with blocks of one token, so every decode step adds a position: 2 layers, 4 KV heads of 32
        // (tp 1), 4 sequences of 30 prompt tokens, 20 output tokens, 6 decode steps in the programs. One position of
        // every sequence is 2 layers * 4 sequences * 2 (keys, values) * 4 * 32 * 2 bytes = 4,096 bytes.
        const auto result = synth("tiny",
            { QStringLiteral("workload=inference"), QStringLiteral("inference.batch=4"),
                QStringLiteral("inference.prompt_tokens=30"), QStringLiteral("inference.output_tokens=20"),
                QStringLiteral("inference.decode_steps=6"), QStringLiteral("inference.block_size=1") });
        constexpr qint64 kPosition = 2 * 4 * 2 * 4 * 32 * 2;
        MemoryView view;
        view.resize(1400, 900);
        view.setResult(result);
        QVERIFY(waitForChart(view));
        MemoryChartView* chart = view.chartView();
        const MemoryChartData& data = chart->chartData();
        const double unit = data.unitBytes;
        // The kv_cache band (between the activations' top and its own) ends at the programs' cache: the prompt
        // and the 6 decode steps' positions.
        constexpr int kv = static_cast<int>(MemoryCategory::KvCache);
        const QPointF top = chart->categorySeries(kv)->points().back();
        const QPointF below = chart->categorySeries(kv - 1)->points().back();
        QCOMPARE(qint64(std::llround((top.y() - below.y()) * unit)), (30 + 6) * kPosition);
        // The line of the generation's end: the weights and the cache of the last token's 30 + 20 - 1 positions.
        const qint64 weights = result->summaries[0].weightBytes;
        QVERIFY(chart->generationEndSeries()->isVisible());
        QCOMPARE(data.generationEndToken, qint64(49));
        QCOMPARE(qint64(data.generationEndBytes), weights + 49 * kPosition);
        QCOMPARE(qint64(std::llround(chart->generationEndSeries()->at(0).y() * unit)), weights + 49 * kPosition);
        // No legend entry for the gradients and optimizer state serving does not hold.
        QVERIFY(!chart->legendHtml().contains(QLatin1String("gradients")));
        QVERIFY(!chart->legendHtml().contains(QLatin1String("optimizer")));
        QVERIFY(chart->legendHtml().contains(QLatin1String("kv_cache")));

        // Training draws no such line.
        view.setResult(synth("tiny", {}));
        QVERIFY(waitForChart(view));
        QVERIFY(!chart->generationEndSeries()->isVisible());
        QCOMPARE(chart->chartData().generationEndBytes, int64_t(0));
    }

    void rankPicker()
    {
        // rank_order [tp, cp, ep, dp, pp]: rank = tp + 2 dp + 4 pp for dp = tp = pp = 2, so ranks 4..7 are stage 1.
        const auto result = synth("tiny", dp2tp2pp2());
        MemoryView view;
        view.setResult(result);
        QVERIFY(waitForChart(view));
        view.showRank(5);
        QCOMPARE(view.currentClass(), 1);
        QVERIFY(waitForChart(view));
        QCOMPARE(view.chartView()->chartData().classIndex, 1);
        QCOMPARE(view.model()->classIndex(), 1);
        view.showRank(3);
        QCOMPARE(view.currentClass(), 0);
        view.setCursorStep(0);
        QCOMPARE(view.cursorStep(), qint64(0));
        QCOMPARE(view.model()->liveBytes(), qint64(result->memory[0].total(0)));
        QVERIFY(view.cursorTitle()->text().contains(QLatin1String("step 0")));
    }

    void hoverAndClick()
    {
        const auto result = synth("tiny", dp2tp2pp2());
        MemoryView view;
        view.resize(1400, 900);
        view.setResult(result);
        view.show();
        QVERIFY(waitForChart(view));
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QTest::qWait(50);
        MemoryChartView* chart = view.chartView();
        auto pointOf = [&](qint64 step) {
            const QPointF scene = chart->chart()->mapToScene(
                chart->chart()->mapToPosition(QPointF(double(step), 1.0), chart->peakSeries()));
            return chart->mapFromScene(scene);
        };
        const qint64 peak = result->summaries[0].peakStep;
        QCOMPARE(view.cursorStep(), peak);
        // Hovering moves the cursor and the table; the step is the nearest node.
        QTest::mouseMove(chart->viewport(), pointOf(10));
        QCOMPARE(view.cursorStep(), qint64(10));
        QCOMPARE(chart->cursorStep(), qint64(10));
        QCOMPARE(view.model()->liveBytes(), qint64(result->memory[0].total(10)));
        // A click pins the cursor; after the mouse leaves, it returns there.
        QTest::mouseClick(chart->viewport(), Qt::LeftButton, {}, pointOf(20));
        QTest::mouseMove(chart->viewport(), pointOf(30));
        QCOMPARE(view.cursorStep(), qint64(30));
        QEvent leave(QEvent::Leave);
        QCoreApplication::sendEvent(chart, &leave);
        QCOMPARE(view.cursorStep(), qint64(20));
    }

    void singleClassAndReset()
    {
        MemoryView view;
        view.setResult(synth("tiny", {}));
        QVERIFY(waitForChart(view));
        QCOMPARE(view.compareClass(), -1); // one class: nothing to compare with
        QVERIFY(!view.chartView()->compareSeries()->isVisible());
        view.setResult(nullptr);
        QCOMPARE(view.model()->rowCount(), 0);
        QVERIFY(!view.isEnabled());
        QString error;
        QVERIFY(!view.exportCsv(QStringLiteral("unused.csv"), &error));
        QVERIFY(!error.isEmpty());
    }

    void baselineOverlay()
    {
        // Current: tiny on dp 2, tp 2, pp 2; baseline: tiny on one GPU (one stage). Stage 0 is drawn against the
        // baseline's stage 0, stage 1 against its last (and only) stage.
        const auto result = synth("tiny", dp2tp2pp2());
        const auto baseline = synth("tiny", {});
        MemoryView view;
        view.resize(1400, 900);
        view.setResult(result);
        QVERIFY(waitUntilSettled(view));
        MemoryChartView* chart = view.chartView();
        QCOMPARE(view.baselineClass(), -1);
        QVERIFY(!chart->baselineSeries()->isVisible());
        QVERIFY(!chart->legendHtml().contains(QLatin1String("baseline")));

        view.setBaseline(baseline);
        QVERIFY(!view.isSettled());
        QVERIFY(waitUntilSettled(view));
        QCOMPARE(view.baselineClass(), 0);
        const MemoryChartData& data = chart->chartData();
        QCOMPARE(data.baselineClass, 0);
        QVERIFY(chart->baselineSeries()->isVisible());
        QVERIFY(chart->baselineSeries()->count() > 0);
        QVERIFY(chart->baselineSeries()->count() <= kMaxMemoryCompareChartPoints);
        // The overlay keeps the baseline's peak, as core computed it; its marker and label say so.
        const MemoryTimeline& tl = baseline->memory[0];
        QCOMPARE(qint64(maxY(*chart->baselineSeries()) * data.unitBytes), qint64(tl.peakBytes));
        QCOMPARE(chart->baselinePeakSeries()->count(), 1);
        QCOMPARE(qint64(chart->baselinePeakSeries()->at(0).y() * data.unitBytes), qint64(tl.peakBytes));
        QCOMPARE(qint64(chart->baselinePeakSeries()->at(0).x()), qint64(tl.peakStep));
        QVERIFY2(chart->baselinePeakText().contains(
                     formatByteCount(double(tl.peakBytes)) + QStringLiteral(" at step %1").arg(tl.peakStep)),
            qPrintable(chart->baselinePeakText()));
        QVERIFY2(chart->legendHtml().contains(QLatin1String("baseline:")), qPrintable(chart->legendHtml()));
        // This plan's peak is unchanged, and the two labels do not cover each other.
        QCOMPARE(qint64(maxY(*chart->categorySeries(kMemoryChartCategories - 1)) * data.unitBytes),
            qint64(result->summaries[0].peakBytes));
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QTest::qWait(50);
        QVERIFY(!chart->peakLabelRect().isEmpty());
        QVERIFY(!chart->baselinePeakLabelRect().isEmpty());
        QVERIFY(!chart->peakLabelRect().intersects(chart->baselinePeakLabelRect()));

        // Stage 1 has no counterpart in a one-stage baseline: its last stage stands in, and the name says so.
        view.showClass(1);
        QVERIFY(waitUntilSettled(view));
        QCOMPARE(view.baselineClass(), 0);
        QCOMPARE(chart->chartData().classIndex, 1);
        QCOMPARE(chart->chartData().baselineClass, 0);
        QVERIFY2(chart->baselineSeries()->name().contains(QLatin1String("its last")),
            qPrintable(chart->baselineSeries()->name()));

        view.setBaseline(nullptr);
        QVERIFY(waitUntilSettled(view));
        QCOMPARE(view.baselineClass(), -1);
        QVERIFY(!chart->baselineSeries()->isVisible());
        QVERIFY(chart->baselinePeakLabelRect().isEmpty());
    }

    void timeAxis_data()
    {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<QStringList>("overrides");
        QTest::newRow("tiny dp2 tp2 pp2") << QStringLiteral("tiny") << dp2tp2pp2();
        QTest::newRow("llama3-70b dp16 tp8 pp8") << QStringLiteral("llama3-70b") << llama70b();
    }

    void timeAxis()
    {
        QFETCH(QString, preset);
        QFETCH(QStringList, overrides);
        const auto result = synth(qPrintable(preset), overrides);
        const Estimated e = estimated(*result);
        MemoryView view;
        view.resize(1400, 900);
        view.setResult(result);
        QVERIFY(waitUntilSettled(view));
        QVERIFY(!view.chartView()->chartData().timeAxis);
        QVERIFY(!view.times()); // not estimated until asked for

        view.setXAxis(MemoryView::TimeAxis);
        QCOMPARE(view.xAxisCombo()->currentData().toInt(), int(MemoryView::TimeAxis));
        QVERIFY(!view.isSettled()); // the estimate runs
        QVERIFY(waitUntilSettled(view));
        QVERIFY(view.times() && view.times()->ok);
        QVERIFY(!view.axisNote()->isVisibleTo(&view));
        MemoryChartView* chart = view.chartView();
        for (int cls = 0; cls < int(result->classes.size()); cls += std::max(1, int(result->classes.size()) - 1)) {
            view.showClass(cls);
            QVERIFY(waitUntilSettled(view));
            const MemoryChartData& data = chart->chartData();
            QCOMPARE(data.classIndex, cls);
            QVERIFY(data.timeAxis);
            const auto c = static_cast<size_t>(cls);
            const MemoryTimeline& tl = result->memory[c];
            const ScheduledNode& atPeak = e.schedule.classes[c][static_cast<size_t>(tl.peakStep)];
            QCOMPARE(atPeak.node, uint32_t(tl.peakStep));
            // The peak sits at the estimated start of its node, in ms: the instant the Timeline shows it.
            QCOMPARE(chart->peakSeries()->at(0).x(), atPeak.startS * 1000.0);
            QCOMPARE(qint64(chart->peakSeries()->at(0).y() * data.unitBytes), qint64(tl.peakBytes));
            QVERIFY2(chart->peakText().contains(formatDuration(atPeak.startS)), qPrintable(chart->peakText()));
            // The top of the stack reaches the peak there, holds it as a level, and runs left to right.
            const QList<QPointF> top = chart->categorySeries(kMemoryChartCategories - 1)->points();
            QVERIFY(top.size() <= kMaxMemoryChartPoints);
            bool levelAtPeak = false;
            for (qsizetype i = 0; i + 1 < top.size(); ++i)
                levelAtPeak = levelAtPeak
                    || (top[i].y() == top[i + 1].y() && qint64(top[i].y() * data.unitBytes) == tl.peakBytes
                        && top[i].x() <= atPeak.startS * 1000.0 && atPeak.startS * 1000.0 <= top[i + 1].x());
            QVERIFY(levelAtPeak);
            QVERIFY(std::is_sorted(
                top.begin(), top.end(), [](const QPointF& a, const QPointF& b) { return a.x() < b.x(); }));
            // Nothing is drawn after the rank's estimated finish, and the axis ends there.
            const double finishMs = e.estimate.classes[c].stepTimeS * 1000.0;
            QVERIFY2(
                top.back().x() <= finishMs, qPrintable(QStringLiteral("%1 > %2").arg(top.back().x()).arg(finishMs)));
            QVERIFY(data.xMax >= finishMs);
            // The cursor follows: at the peak's step it sits at the peak's time.
            view.setCursorStep(tl.peakStep);
            QCOMPARE(chart->xOfStep(tl.peakStep), atPeak.startS * 1000.0);
            QVERIFY(view.cursorTitle()->text().contains(formatDuration(atPeak.startS)));
            // The comparison line of another stage is on the same clock.
            if (data.compareClass >= 0) {
                const QList<QPointF> line = chart->compareSeries()->points();
                QVERIFY(
                    line.back().x() <= e.estimate.classes[static_cast<size_t>(data.compareClass)].stepTimeS * 1000.0);
                QCOMPARE(qint64(maxY(*chart->compareSeries()) * data.unitBytes),
                    qint64(result->memory[static_cast<size_t>(data.compareClass)].peakBytes));
            }
        }

        // Back to steps: x is the node index again.
        view.setXAxis(MemoryView::StepAxis);
        QVERIFY(waitUntilSettled(view));
        QVERIFY(!chart->chartData().timeAxis);
        QCOMPARE(chart->peakSeries()->at(0).x(), double(chart->chartData().peakStep));
    }

    void timeAxisWithBaseline()
    {
        // The estimate of a new result (and of the baseline) arrives after its memory chart: the chart shows steps
        // first, then the time axis, and the view is settled only then.
        const auto baseline = synth("tiny", {});
        const auto result = synth("tiny", dp2tp2pp2());
        const Estimated eb = estimated(*baseline);
        MemoryView view;
        view.resize(1400, 900);
        view.setXAxis(MemoryView::TimeAxis);
        view.setBaseline(baseline);
        view.setResult(result);
        QVERIFY(!view.isSettled());
        QVERIFY(waitUntilSettled(view));
        MemoryChartView* chart = view.chartView();
        const MemoryChartData& data = chart->chartData();
        QVERIFY(data.timeAxis);
        QCOMPARE(data.baselineClass, 0);
        QVERIFY(data.baselineMissing.isEmpty());
        const MemoryTimeline& tl = baseline->memory[0];
        QCOMPARE(chart->baselinePeakSeries()->at(0).x(),
            eb.schedule.classes[0][static_cast<size_t>(tl.peakStep)].startS * 1000.0);
        QCOMPARE(qint64(maxY(*chart->baselineSeries()) * data.unitBytes), qint64(tl.peakBytes));
        QVERIFY(chart->baselineSeries()->points().back().x() <= eb.estimate.classes[0].stepTimeS * 1000.0);

        // A result whose estimate cannot run: steps, and the note says why.
        view.setResult(test::withGpu(result, "no-such-gpu"));
        QVERIFY(waitUntilSettled(view));
        QVERIFY(!chart->chartData().timeAxis);
        QVERIFY(view.axisNote()->isVisibleTo(&view));
        QVERIFY2(view.axisNote()->text().contains(QLatin1String("no-such-gpu")), qPrintable(view.axisNote()->text()));
        QVERIFY(chart->baselineSeries()->isVisible()); // on the step axis the baseline needs no estimate
    }

    void screenshot_data()
    {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<QStringList>("overrides");
        QTest::addColumn<QString>("file");
        QTest::newRow("tiny dp2 tp2 pp2") << QStringLiteral("tiny") << dp2tp2pp2() << QStringLiteral("memory-tiny.png");
        QTest::newRow("llama3-70b dp16 tp8 pp8")
            << QStringLiteral("llama3-70b") << llama70b() << QStringLiteral("memory-llama70b.png");
    }

    // Renders the view offscreen at 1400x900. With STAGECRAFT_SCREENSHOT_DIR set, saves the picture there.
    void screenshot()
    {
        QFETCH(QString, preset);
        QFETCH(QStringList, overrides);
        QFETCH(QString, file);
        MemoryView view;
        view.resize(1400, 900);
        view.setResult(synth(qPrintable(preset), overrides));
        view.show();
        QVERIFY(waitForChart(view));
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QTest::qWait(100); // let the chart lay out its legend and axes
        const QImage image = view.grab().toImage();
        QCOMPARE(image.size(), QSize(1400, 900));
        const QString dir = qEnvironmentVariable("STAGECRAFT_SCREENSHOT_DIR");
        if (!dir.isEmpty())
            QVERIFY(image.save(dir + QLatin1Char('/') + file));
    }

    // "Overlay measured memory...": HolisticTraceAnalysis's memory_timeline.raw.gz (PyTorch export_memory_timeline
    // raw JSON) over tiny. python3 counted 16845 events, peak 3082832104 bytes of live memory (tst_kineto
    // memoryTimeline); with one iteration in it the whole recording is stretched over ours, so its last point sits at
    // the chart's right end and its peak is the recording's.
    void measuredMemoryOverlay()
    {
        MemoryView view;
        view.resize(1366, 768);
        view.setResult(synth("tiny", {}));
        view.show();
        QVERIFY(waitForChart(view));
        QSignalSpy loaded(&view, &MemoryView::measuredMemoryLoaded);
        view.loadMeasuredMemory(QStringLiteral(STAGECRAFT_SOURCE_DIR "/tests/data/kineto/memory_timeline.raw.gz"));
        QVERIFY(loaded.wait(60000));
        QVERIFY2(view.measuredMemory(), qPrintable(view.measuredMemoryError()));
        QCOMPARE(view.measuredMemory()->events, int64_t(16845));
        MemoryChartView* chart = view.chartView();
        QVERIFY(chart->measuredSeries()->isVisible());
        const QList<QPointF> points = chart->measuredSeries()->points();
        QVERIFY(!points.isEmpty() && points.size() <= 2001);
        const MemoryChartData& data = chart->chartData();
        QVERIFY(std::abs(points.back().x() - data.xMax) <= 1e-9 * std::max(1.0, data.xMax));
        const QPointF peak = chart->measuredPeakSeries()->points().front();
        QVERIFY(std::abs(peak.y() * data.unitBytes - 3082832104.0) < 1.0);
        QVERIFY(view.measuredNote()->isVisible());
        QVERIFY(view.measuredNote()->text().contains(formatByteCount(3082832104.0)));
        QVERIFY(chart->legendHtml().contains(QStringLiteral("measured:")));
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        const QString dir = qEnvironmentVariable("STAGECRAFT_SCREENSHOT_DIR");
        if (!dir.isEmpty())
            QVERIFY(view.grab().toImage().save(dir + QStringLiteral("/memory-measured-overlay.png")));
        // Five iterations in the recording (its five humps): only the first fifth is drawn, ending at our right end.
        view.setMeasuredIterations(5);
        const QList<QPointF> fifth = chart->measuredSeries()->points();
        QVERIFY(!fifth.isEmpty() && fifth.back().x() <= data.xMax * (1 + 1e-9));
        QVERIFY(view.measuredNote()->text().contains(QStringLiteral("iteration 1 of 5")));
        if (!dir.isEmpty())
            QVERIFY(view.grab().toImage().save(dir + QStringLiteral("/memory-measured-overlay-1-of-5.png")));
        view.clearMeasuredMemory();
        QVERIFY(!chart->measuredSeries()->isVisible());
    }
};

QTEST_MAIN(TestMemoryView)
#include "tst_memoryview.moc"
