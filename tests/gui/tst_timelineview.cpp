// SPDX-License-Identifier: MIT
// The Timeline view: the time axis (ticks, labels, zoom and pan), the lanes against the estimate's schedule, the
// hit test and tooltips, the rank and stage pickers, the Chrome trace export and the message of a failed estimate,
// over real synthesis results of the tiny and llama3-70b presets.
#include "estimate/stepestimate.h"
#include "guihelpers.h"
#include "models/formatting.h"
#include "synthesis/synthesis.h"
#include "timeline/timeaxis.h"
#include "timeline/timelinechart.h"
#include "timeline/timelinedata.h"
#include "timeline/timelineview.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QWheelEvent>
#include <QtTest>
#include <cmath>

using namespace stagecraft;
using stagecraft::test::synth;
using stagecraft::test::withGpu;

namespace {

/// tiny with dp 2 and pp 2 (rank_order tp, cp, ep, dp, pp: rank = dp + 2 * pp) and four micro-batches.
QStringList dp2pp2()
{
    return { QStringLiteral("parallelism.dp=2"), QStringLiteral("parallelism.pp=2"),
        QStringLiteral("training.global_batch=8"), QStringLiteral("training.micro_batch=1") };
}

// Every key of the plan is stated: the preset's own plan (NeMo's 64 GPUs, cp 2, interleaved, bf16 gradients) is
// not this one.
QStringList llama70b()
{
    return { QStringLiteral("parallelism.dp=4"), QStringLiteral("parallelism.tp=8"), QStringLiteral("parallelism.pp=4"),
        QStringLiteral("parallelism.cp=1"), QStringLiteral("parallelism.sequence_parallel=true"),
        QStringLiteral("parallelism.zero=1"), QStringLiteral("parallelism.schedule=1f1b"),
        QStringLiteral("parallelism.virtual_stages=1"), QStringLiteral("training.global_batch=32"),
        QStringLiteral("training.main_grad_dtype=fp32"), QStringLiteral("training.grad_reduce_dtype=fp32") };
}

bool waitForTimeline(TimelineView& view)
{
    if (!view.isUpdating())
        return true;
    QSignalSpy spy(&view, &TimelineView::timelineAvailable);
    return spy.wait(60000);
}

/// The schedule entries of one stream, in node order: what a lane must hold.
/// The nodes of `stream`; ScheduleStream::Communication stands for every communication stream (collectives,
/// data-parallel collectives, sends), which the Timeline draws in one lane.
std::vector<ScheduledNode> streamOf(const EstimateSchedule& schedule, size_t cls, ScheduleStream stream)
{
    std::vector<ScheduledNode> out;
    for (const ScheduledNode& s : schedule.classes[cls]) {
        const bool communication = s.stream != ScheduleStream::Compute && s.stream != ScheduleStream::None;
        if (stream == ScheduleStream::Communication ? communication : s.stream == stream)
            out.push_back(s);
    }
    return out;
}

bool sameSpans(const std::vector<TimelineSpan>& lane, const std::vector<ScheduledNode>& expected)
{
    if (lane.size() != expected.size())
        return false;
    for (size_t i = 0; i < lane.size(); ++i)
        if (lane[i].node != expected[i].node || lane[i].startS != expected[i].startS
            || lane[i].endS != expected[i].endS)
            return false;
    return true;
}

TimelineChart::Lane laneOf(const TimelineChart& chart, TimelineChart::LaneKind kind, int classIndex)
{
    for (const TimelineChart::Lane& lane : chart.lanes())
        if (lane.kind == kind && lane.classIndex == classIndex)
            return lane;
    qFatal("no such lane");
}

} // namespace

class TestTimelineView : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void tickStep_data()
    {
        QTest::addColumn<double>("span");
        QTest::addColumn<int>("maxTicks");
        QTest::addColumn<double>("step");
        // The smallest of 1, 2, 5 x 10^k not below span / maxTicks.
        QTest::newRow("1 ms / 10") << 1e-3 << 10 << 1e-4; // 1e-4 exactly
        QTest::newRow("7 ms / 10") << 7e-3 << 10 << 1e-3; // 7e-4 -> 1e-3
        QTest::newRow("250 ms / 5") << 0.25 << 5 << 0.05; // 0.05 exactly
        QTest::newRow("3 s / 4") << 3.0 << 4 << 1.0; // 0.75 -> 1
        QTest::newRow("13 us / 6") << 13e-6 << 6 << 5e-6; // 2.17e-6 -> 5e-6
        QTest::newRow("1.1 ms / 10") << 1.1e-3 << 10 << 2e-4; // 1.1e-4 -> 2e-4
        QTest::newRow("empty") << 0.0 << 10 << 0.0;
    }

    void tickStep()
    {
        QFETCH(double, span);
        QFETCH(int, maxTicks);
        QFETCH(double, step);
        const double actual = stagecraft::tickStep(span, maxTicks);
        QVERIFY2(std::abs(actual - step) <= 1e-12 * step, qPrintable(QString::number(actual, 'g', 17)));
        if (step > 0) {
            const std::vector<double> ticks = tickTimes(0.3 * step, 0.3 * step + span, step);
            QVERIFY(int(ticks.size()) <= maxTicks + 1);
            QVERIFY(!ticks.empty() && ticks.front() >= 0.3 * step);
        }
    }

    void tickLabels_data()
    {
        QTest::addColumn<double>("time");
        QTest::addColumn<double>("step");
        QTest::addColumn<QString>("label");
        // The unit is the largest of ns, µs, ms, s not above 10 x the step; decimals as the step needs.
        QTest::newRow("zero") << 0.0 << 1e-3 << QStringLiteral("0");
        QTest::newRow("ms, half steps") << 2.5e-3 << 5e-4 << QStringLiteral("2.5 ms");
        QTest::newRow("ms, whole") << 0.012 << 2e-3 << QStringLiteral("12 ms");
        QTest::newRow("ms from 200 us steps") << 1.2e-3 << 2e-4 << QStringLiteral("1.2 ms");
        QTest::newRow("us") << 250e-6 << 50e-6 << QStringLiteral("250 \u00b5s");
        QTest::newRow("s, half steps") << 1.5 << 0.5 << QStringLiteral("1.5 s");
        QTest::newRow("s, whole") << 3.0 << 1.0 << QStringLiteral("3 s");
        QTest::newRow("ns") << 40e-9 << 10e-9 << QStringLiteral("40 ns");
    }

    void tickLabels()
    {
        QFETCH(double, time);
        QFETCH(double, step);
        QFETCH(QString, label);
        QCOMPARE(formatTickTime(time, step), label);
    }

    void durations_data()
    {
        QTest::addColumn<double>("seconds");
        QTest::addColumn<QString>("text");
        QTest::newRow("zero") << 0.0 << QStringLiteral("0 s");
        QTest::newRow("ns") << 850e-9 << QStringLiteral("850 ns");
        QTest::newRow("us") << 12.34e-6 << QStringLiteral("12.3 \u00b5s");
        QTest::newRow("ms") << 1.2449e-3 << QStringLiteral("1.24 ms");
        QTest::newRow("s") << 3.2 << QStringLiteral("3.20 s");
        QTest::newRow("rounds up into the next unit") << 999.7e-6 << QStringLiteral("1.00 ms");
    }

    void durations()
    {
        QFETCH(double, seconds);
        QFETCH(QString, text);
        QCOMPARE(formatDuration(seconds), text);
    }

    void axisZoomAndPan()
    {
        // 10 s across 1000 px from x = 100: 0.01 s per pixel.
        const TimeAxis a { 0, 10, 100, 1000 };
        QCOMPARE(a.x(2.5), 350.0);
        QCOMPARE(a.time(350), 2.5);
        // Zooming in 2x around x = 350 keeps t = 2.5 there: span 5, start 2.5 - 250 px * 0.005 s/px = 1.25.
        const TimeAxis z = a.zoomed(2, 350, 1e-9, 100);
        QCOMPARE(z.spanS, 5.0);
        QCOMPARE(z.startS, 1.25);
        QCOMPARE(z.time(350), 2.5);
        // The span is clamped: zooming out 100x from 10 s stops at the maximum of 40 s.
        QCOMPARE(a.zoomed(0.01, 350, 1e-9, 40).spanS, 40.0);
        // Dragging the content 100 px to the right shows 100 px * 0.01 s/px = 1 s earlier.
        QCOMPARE(a.panned(100).startS, -1.0);
        // At least a tenth of the view stays over [0, total]: start within [-0.9 span, total - 0.1 span].
        QCOMPARE(a.panned(5000).clamped(20).startS, -9.0);
        QCOMPARE(a.panned(-5000).clamped(20).startS, 19.0);
    }

    void lanesMatchTheSchedule()
    {
        auto result = synth("tiny", dp2pp2());
        TimelineView view;
        view.resize(1400, 800);
        view.setResult(result);
        view.show();
        QVERIFY(waitForTimeline(view));
        const auto data = view.timelineData();
        QVERIFY(data);
        QVERIFY2(data->ok, qPrintable(data->error));
        QVERIFY(!view.messageLabel()->isVisibleTo(&view));

        // The view estimates on the config's GPU with default options, as the report does.
        StepEstimate expected;
        std::string error;
        QVERIFY(estimateStep(*result, *gpuPreset("h100-sxm"), EstimateOptions {}, expected, error));
        QCOMPARE(data->estimate.iterationTimeS, expected.iterationTimeS);
        QCOMPARE(data->schedule.classes.size(), size_t(2));

        TimelineChart* chart = view.chart();
        for (int c = 0; c < 2; ++c) {
            view.showClass(c);
            QCOMPARE(view.currentClass(), c);
            QCOMPARE(chart->currentClass(), c);
            const auto lanes = chart->lanes();
            // The class's two streams, then per stage its compute lane and (800 px leave room) its communication.
            QCOMPARE(lanes.size(), size_t(2 + 2 * 2));
            const auto compute = streamOf(data->schedule, size_t(c), ScheduleStream::Compute);
            const auto comm = streamOf(data->schedule, size_t(c), ScheduleStream::Communication);
            QVERIFY(!compute.empty() && !comm.empty());
            QVERIFY(sameSpans(chart->spans(laneOf(*chart, TimelineChart::LaneKind::Compute, c)), compute));
            QVERIFY(sameSpans(chart->spans(laneOf(*chart, TimelineChart::LaneKind::Communication, c)), comm));
            for (int s = 0; s < 2; ++s) {
                QVERIFY(sameSpans(chart->spans(laneOf(*chart, TimelineChart::LaneKind::Stage, s)),
                    streamOf(data->schedule, size_t(s), ScheduleStream::Compute)));
                QVERIFY(sameSpans(chart->spans(laneOf(*chart, TimelineChart::LaneKind::StageCommunication, s)),
                    streamOf(data->schedule, size_t(s), ScheduleStream::Communication)));
            }
            // The summary names the class's step time and bubble and the plan's MFU.
            const ClassEstimate& ce = data->estimate.classes[size_t(c)];
            const QString summary = view.summaryLabel()->text();
            QVERIFY2(summary.contains(formatDuration(ce.stepTimeS)), qPrintable(summary));
            QVERIFY2(summary.contains(QString::number(ce.bubbleFraction * 100, 'f', 1) + QLatin1Char('%')),
                qPrintable(summary));
            QVERIFY2(summary.contains(QString::number(data->estimate.mfu * 100, 'f', 1) + QLatin1Char('%')),
                qPrintable(summary));
        }
        // Ranks 2 and 3 are stage 1 (rank = dp + 2 * pp), 0 and 1 stage 0; out of range is clamped.
        view.showRank(3);
        QCOMPARE(view.currentClass(), 1);
        view.showRank(1);
        QCOMPARE(view.currentClass(), 0);
        view.showRank(99);
        QCOMPARE(view.currentRank(), qint64(3));
        QCOMPARE(view.currentClass(), 1);
    }

    void hoverZoomAndClick()
    {
        auto result = synth("tiny", dp2pp2());
        TimelineView view;
        view.resize(1400, 800);
        view.setResult(result);
        view.show();
        QVERIFY(waitForTimeline(view));
        QVERIFY(view.timelineData()->ok);
        TimelineChart* chart = view.chart();

        // Zoom onto the longest compute bar of stage 0 so that it spans half the plot: the hit test finds it and
        // the tooltip names it with its duration.
        const TimelineChart::Lane lane = laneOf(*chart, TimelineChart::LaneKind::Compute, 0);
        const auto& spans = chart->spans(lane);
        const auto longest = std::max_element(spans.begin(), spans.end(),
            [](const TimelineSpan& a, const TimelineSpan& b) { return a.endS - a.startS < b.endS - b.startS; });
        const double duration = longest->endS - longest->startS;
        chart->setVisibleRange(longest->startS - duration / 2, duration * 2);
        const TimeAxis axis = chart->axis();
        const QPointF centre(axis.x((longest->startS + longest->endS) / 2), lane.rect.center().y());
        const auto hit = chart->hitAt(centre);
        QVERIFY(hit);
        QCOMPARE(hit->span, size_t(longest - spans.begin()));
        QCOMPARE(hit->nearby, qint64(1));
        const QString tip = chart->tooltipAt(centre);
        const ProgramNode& node = result->classes[0].nodes[longest->node];
        QVERIFY2(tip.contains(QString::fromStdString(node.name).toHtmlEscaped()), qPrintable(tip));
        QVERIFY2(tip.contains(formatDuration(duration)), qPrintable(tip));
        QVERIFY2(tip.contains(formatFlopCount(double(node.flops))), qPrintable(tip));
        // Nothing under the labels.
        QVERIFY(!chart->hitAt(QPointF(10, lane.rect.center().y())));

        // One wheel notch up zooms in by 2^(1/4) around the mouse: the time under it stays put.
        const TimeAxis before = chart->axis();
        const QPointF at(before.left + before.width * 0.3, lane.rect.center().y());
        QWheelEvent wheel(at, chart->mapToGlobal(at), QPoint(), QPoint(0, 120), Qt::NoButton, Qt::NoModifier,
            Qt::NoScrollPhase, false);
        QApplication::sendEvent(chart, &wheel);
        const TimeAxis after = chart->axis();
        QVERIFY(std::abs(after.spanS - before.spanS / std::pow(2.0, 0.25)) <= 1e-12 * before.spanS);
        QVERIFY(std::abs(after.time(at.x()) - before.time(at.x())) <= 1e-9 * before.spanS);
        // Dragging 200 px to the right shows 200 px earlier.
        const TimeAxis beforeDrag = chart->axis();
        const QPoint from(int(beforeDrag.left + 600), int(lane.rect.center().y()));
        QTest::mousePress(chart, Qt::LeftButton, Qt::NoModifier, from);
        QTest::mouseMove(chart, from + QPoint(100, 0));
        QTest::mouseMove(chart, from + QPoint(200, 0));
        QTest::mouseRelease(chart, Qt::LeftButton, Qt::NoModifier, from + QPoint(200, 0));
        QVERIFY(std::abs(chart->axis().startS - (beforeDrag.startS - 200 * beforeDrag.pixelS()))
            <= 1e-9 * beforeDrag.spanS);
        QCOMPARE(view.currentClass(), 0); // a drag is no click

        // Fit shows the whole iteration again; a click on stage 1's overview lane shows stage 1.
        chart->fit();
        QCOMPARE(chart->axis().startS, 0.0);
        QVERIFY(chart->axis().endS() >= view.timelineData()->totalS);
        const TimelineChart::Lane stage1 = laneOf(*chart, TimelineChart::LaneKind::Stage, 1);
        QTest::mouseClick(chart, Qt::LeftButton, Qt::NoModifier, stage1.rect.center().toPoint());
        QCOMPARE(view.currentClass(), 1);
        QCOMPARE(view.currentRank(), qint64(2)); // stage 1's example rank
    }

    void exportChromeTrace()
    {
        auto result = synth("tiny", dp2pp2());
        TimelineView view;
        view.setResult(result);
        QVERIFY(waitForTimeline(view));
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath(QStringLiteral("trace.json"));
        QString error;
        QVERIFY2(view.exportChromeTrace(path, &error), qPrintable(error));
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QJsonParseError parseError;
        const QJsonDocument doc = QJsonDocument::fromJson(f.readAll(), &parseError);
        QCOMPARE(parseError.error, QJsonParseError::NoError);
        // Every node on a stream is one complete event; recvs are not (they occupy no stream).
        qint64 expected = 0;
        for (const ClassProgram& program : result->classes)
            for (const ProgramNode& n : program.nodes)
                expected += n.kind != NodeKind::Recv;
        qint64 complete = 0, processes = 0;
        for (const QJsonValue& v : doc.object().value(QLatin1String("traceEvents")).toArray()) {
            const QJsonObject e = v.toObject();
            complete += e.value(QLatin1String("ph")).toString() == QLatin1String("X");
            processes += e.value(QLatin1String("name")).toString() == QLatin1String("process_name");
        }
        QCOMPARE(complete, expected);
        QCOMPARE(processes, qint64(2));

        const QString missing = dir.filePath(QStringLiteral("no/such/dir/trace.json"));
        QVERIFY(!view.exportChromeTrace(missing, &error));
        QVERIFY2(error.contains(missing), qPrintable(error));
    }

    void failedEstimateSaysWhy()
    {
        // v100 is no GPU preset: the estimate cannot run. The loader refuses such a config, so the result's copy
        // is changed after synthesis (synthesis itself does not need the GPU).
        auto result = withGpu(synth("tiny", QStringList()), "v100");
        TimelineView view;
        view.resize(1000, 600);
        view.setResult(result);
        view.show();
        QVERIFY(waitForTimeline(view));
        QVERIFY(!view.timelineData()->ok);
        QVERIFY(view.messageLabel()->isVisibleTo(&view));
        QVERIFY2(view.messageLabel()->text().contains(QStringLiteral("unknown GPU \"v100\"")),
            qPrintable(view.messageLabel()->text()));
        QVERIFY(view.chart()->lanes().empty());
        QVERIFY(!view.summaryLabel()->isVisibleTo(&view));
        QString error;
        QVERIFY(!view.exportChromeTrace(QDir::temp().filePath(QStringLiteral("never.json")), &error));
        QVERIFY(error.contains(QStringLiteral("v100")));
        const QString dir = qEnvironmentVariable("STAGECRAFT_SCREENSHOT_DIR");
        if (!dir.isEmpty())
            QVERIFY(view.grab().save(dir + QStringLiteral("/timeline-failed.png")));

        // A good result afterwards replaces the message.
        view.setResult(synth("tiny", dp2pp2()));
        QVERIFY(waitForTimeline(view));
        QVERIFY(view.timelineData()->ok);
        QVERIFY(!view.messageLabel()->isVisibleTo(&view));
    }

    void supersededResultsAreDropped()
    {
        auto first = synth("tiny", dp2pp2());
        auto second = synth("tiny",
            { QStringLiteral("parallelism.pp=4"), QStringLiteral("model.layers=4"),
                QStringLiteral("training.global_batch=8"), QStringLiteral("training.micro_batch=1") });
        TimelineView view;
        QSignalSpy spy(&view, &TimelineView::timelineAvailable);
        view.setResult(first);
        view.setResult(second);
        QVERIFY(view.isUpdating());
        QTRY_VERIFY_WITH_TIMEOUT(!view.isUpdating(), 60000);
        QCOMPARE(spy.count(), 1);
        QCOMPARE(view.timelineData()->classes.size(), size_t(4));
        const auto lanes = view.chart()->lanes();
        QCOMPARE(std::count_if(lanes.begin(), lanes.end(),
                     [](const TimelineChart::Lane& l) { return l.kind == TimelineChart::LaneKind::Stage; }),
            4);
    }

    void switchingToFewerStages()
    {
        // Stage 1 of a two-stage plan is shown; the next result has one stage. Until its estimate arrives the
        // chart keeps the previous plan (painting and hovering must stay valid), then it shows stage 0.
        TimelineView view;
        view.resize(1000, 600);
        view.setResult(synth("tiny", dp2pp2()));
        view.show();
        QVERIFY(waitForTimeline(view));
        view.showRank(3);
        QCOMPARE(view.currentClass(), 1);
        view.setResult(synth("tiny", { QStringLiteral("parallelism.dp=2") }));
        QCOMPARE(view.currentClass(), 0);
        QVERIFY(!view.grab().isNull());
        QVERIFY(waitForTimeline(view));
        QCOMPARE(view.timelineData()->classes.size(), size_t(1));
        QCOMPARE(view.chart()->lanes().size(), size_t(2)); // one stage: no pipeline overview
        QVERIFY(!view.grab().isNull());
    }

    void screenshot_data()
    {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<QStringList>("overrides");
        QTest::addColumn<QString>("file");
        QTest::addColumn<double>("zoomS"); ///< > 0: show this long a window from stage 0's first backward node
        QTest::newRow("tiny dp2 pp2") << QStringLiteral("tiny") << dp2pp2() << QStringLiteral("timeline-tiny.png")
                                      << 0.0;
        QTest::newRow("llama3-70b dp4 tp8 pp4")
            << QStringLiteral("llama3-70b") << llama70b() << QStringLiteral("timeline-llama70b.png") << 0.0;
        QTest::newRow("llama3-70b zoomed to 3 ms")
            << QStringLiteral("llama3-70b") << llama70b() << QStringLiteral("timeline-llama70b-zoomed.png") << 3e-3;
    }

    // "Overlay measured trace...": HolisticTraceAnalysis's sampled_rank-0 (tests/data/kineto/README.md) over tiny
    // with dp 2 and pp 2. Its last step holds 602 GPU activities, 5 of them NCCL kernels, 615601 us from the first
    // start to the last end (python3, tst_kerneltable compareRealTrace). Rank 0 is stage 0.
    void measuredOverlay()
    {
        TimelineView view;
        view.resize(1366, 768);
        view.setResult(synth("tiny", dp2pp2()));
        view.show();
        QVERIFY(waitForTimeline(view));
        QSignalSpy loaded(&view, &TimelineView::measuredTraceLoaded);
        view.loadMeasuredTrace(QStringLiteral(STAGECRAFT_SOURCE_DIR "/tests/data/kineto/sampled_rank-0.json.gz"));
        QVERIFY(loaded.wait(60000));
        const auto overlay = view.measuredOverlay();
        QVERIFY2(overlay, qPrintable(view.measuredTraceError()));
        QCOMPARE(overlay->comparison.spans.size(), size_t(602));
        QCOMPARE(overlay->comparison.stage, 0);
        QVERIFY(std::abs(overlay->comparison.measuredStepS - 615601e-6) < 1e-9);
        TimelineChart* chart = view.chart();
        const TimelineChart::Lane compute = laneOf(*chart, TimelineChart::LaneKind::MeasuredCompute, 0);
        const TimelineChart::Lane comm = laneOf(*chart, TimelineChart::LaneKind::MeasuredCommunication, 0);
        QVERIFY(!chart->spans(compute).empty());
        QVERIFY(!chart->spans(comm).empty());
        // A lane's bars never overlap and are sorted (the chart's binary search relies on it).
        for (const TimelineChart::Lane& lane : { compute, comm }) {
            const auto& spans = chart->spans(lane);
            for (size_t i = 1; i < spans.size(); ++i)
                QVERIFY(spans[i].startS >= spans[i - 1].endS);
        }
        // The axis spans the longer of the two iterations.
        QVERIFY(chart->axis().spanS >= 615601e-6);
        QVERIFY(view.comparisonLabel()->isVisible());
        QVERIFY(view.comparisonLabel()->text().contains(QStringLiteral("ProfilerStep#552")));
        // The tooltip of a measured bar names its kernel.
        const auto& spans = chart->spans(compute);
        const TimelineSpan& first = spans.front();
        chart->setVisibleRange(first.startS, (first.endS - first.startS) * 4);
        const double x = chart->axis().x((first.startS + first.endS) / 2);
        const QString tip = chart->tooltipAt(QPointF(x, compute.rect.center().y()));
        QVERIFY2(tip.contains(QStringLiteral("measured on rank 0")), qPrintable(tip));
        chart->fit();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        const QString dir = qEnvironmentVariable("STAGECRAFT_SCREENSHOT_DIR");
        if (!dir.isEmpty())
            QVERIFY(view.grab().toImage().save(dir + QStringLiteral("/timeline-measured-overlay.png")));
        // A file that is no trace says why, and the chart keeps no overlay.
        view.loadMeasuredTrace(QStringLiteral(STAGECRAFT_SOURCE_DIR "/tests/data/kineto/README.md"));
        QVERIFY(loaded.wait(60000));
        QVERIFY(!view.measuredOverlay());
        QVERIFY(view.measuredTraceError().contains(QStringLiteral("README.md:1:2: invalid JSON")));
        view.clearMeasuredTrace();
        QVERIFY(!view.comparisonLabel()->isVisible());
    }

    // Renders the view offscreen at 1400x800. With STAGECRAFT_SCREENSHOT_DIR set, saves the picture there.
    void screenshot()
    {
        QFETCH(QString, preset);
        QFETCH(QStringList, overrides);
        QFETCH(QString, file);
        QFETCH(double, zoomS);
        TimelineView view;
        view.resize(1400, 800);
        view.setResult(synth(qPrintable(preset), overrides));
        view.show();
        QVERIFY(waitForTimeline(view));
        QVERIFY(view.timelineData()->ok);
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        TimelineChart* chart = view.chart();
        const TimelineChart::Lane lane = laneOf(*chart, TimelineChart::LaneKind::Compute, 0);
        if (zoomS > 0) {
            const auto& spans = chart->spans(lane);
            const auto backward = std::find_if(spans.begin(), spans.end(),
                [](const TimelineSpan& s) { return s.style == TimelineBarStyle::Backward; });
            QVERIFY(backward != spans.end());
            chart->setVisibleRange(backward->startS, zoomS);
        }
        const QImage image = view.grab().toImage();
        QCOMPARE(image.size(), QSize(1400, 800));
        // Bars were painted: the middle of the compute lane is not all lane background.
        const QPoint origin = chart->mapTo(&view, QPoint(0, 0));
        int coloured = 0;
        for (int x = int(lane.rect.left()); x < int(lane.rect.right()); ++x)
            coloured += image.pixelColor(origin + QPoint(x, int(lane.rect.center().y()))) != QColor(0xf2, 0xf2, 0xef);
        QVERIFY2(coloured > lane.rect.width() / 4, qPrintable(QString::number(coloured)));
        const QString dir = qEnvironmentVariable("STAGECRAFT_SCREENSHOT_DIR");
        if (!dir.isEmpty())
            QVERIFY(image.save(dir + QLatin1Char('/') + file));
    }
};

QTEST_MAIN(TestTimelineView)
#include "tst_timelineview.moc"
