// SPDX-License-Identifier: MIT
// Issue 31's meaning and readability points on the real widgets: serving views that speak of serving (10), the
// window that never outgrows the screen (12), tables and boxes that show what they hold (13), axes, colours and
// labels that say what they mean (14), one name per quantity (9).
#include "charts/chartparts.h"
#include "charts/memorytimes.h"
#include "config/configloader.h"
#include "estimate/servingestimate.h"
#include "estimate/stepestimate.h"
#include "graph/graphnodeitem.h"
#include "graph/graphspecbuilder.h"
#include "graph/graphview.h"
#include "guihelpers.h"
#include "models/overviewmodel.h"
#include "report/report.h"
#include "sweep/sweepchartview.h"
#include "sweep/sweepmodel.h"
#include "sweep/sweepview.h"
#include "sweephelpers.h"
#include "synthesis/synthesis.h"
#include "timeline/timelinechart.h"
#include "timeline/timelinedata.h"
#include "timeline/timelinestyle.h"
#include "timeline/timelineview.h"
#include "widgets/mainwindow.h"
#include "widgets/overviewview.h"
#include "widgets/reportview.h"
#include "widgets/resultview.h"

#include <QCategoryAxis>
#include <QGraphicsScene>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QRegularExpression>
#include <QScreen>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableView>
#include <QValueAxis>
#include <QtTest>

using namespace stagecraft;

namespace {

constexpr int kTimeoutMs = 60'000;

bool waitUntilSettled(ResultView* view)
{
    return view && (view->isSettled() || QSignalSpy(view, &ResultView::settled).wait(kTimeoutMs));
}

/// The hue of `c` in degrees, and the distance of two hues around the circle.
int hueDistance(const QColor& a, const QColor& b)
{
    const int d = std::abs(a.hsvHue() - b.hsvHue());
    return std::min(d, 360 - d);
}

} // namespace

class TestReadability : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QCoreApplication::setOrganizationName(QStringLiteral("StagecraftTest"));
    }

    // ---- 10: serving views speak of serving ----

    void timelineTimesThePrefillAndDecodeSteps()
    {
        const auto result = test::synth("llama3-70b-serving", QStringList {});
        TimelineView view;
        view.resize(1000, 600);
        view.setResult(result);
        QVERIFY(waitUntilSettled(&view));
        const auto data = view.timelineData();
        QVERIFY(data && data->ok);
        QVERIFY(data->serving);
        QVERIFY(view.messageLabel()->isHidden()); // no red "the step-time estimate failed"
        // The lanes end where the serving estimate's schedule ends: the programs' span.
        QCOMPARE(data->totalS, data->serving->programsTimeS);
        QVERIFY(!data->classes.front().compute.empty());
        const QString summary = view.summaryLabel()->text();
        QVERIFY2(summary.contains(QLatin1String("time to first token")), qPrintable(summary));
        // decode_steps 0 = min(4, 256 - 1) = 4 steps written (the preset's header).
        QVERIFY2(summary.contains(QLatin1String("4 decode steps")), qPrintable(summary));
        QVERIFY2(!summary.contains(QLatin1String("iteration")), qPrintable(summary));
    }

    void servingAssumptionsNameNoTrainingWork()
    {
        const auto result = test::synth("llama3-70b-serving", QStringList {});
        std::string error;
        const std::optional<GpuSpec> gpu = gpuForConfig(result->config, error);
        QVERIFY(gpu);
        ServingEstimate e;
        QVERIFY2(estimateServing(*result, *gpu, EstimateOptions {}, e, error), error.c_str());
        const QString text = QString::fromStdString(assumptionsText(e.assumptions));
        for (const char* training : { "backward", "grad reduce", "param gather" })
            QVERIFY2(!text.contains(QLatin1String(training)), qPrintable(text));
        QVERIFY2(text.contains(QLatin1String("FlashAttention forward")), qPrintable(text));
        // A training estimate keeps them.
        const auto training = test::synth("tiny", QStringList {});
        StepEstimate s;
        QVERIFY(estimateStep(*training, *gpuForConfig(training->config, error), EstimateOptions {}, s, error));
        QVERIFY(QString::fromStdString(assumptionsText(s.assumptions)).contains(QLatin1String("grad reduce")));
    }

    void memoryTabTimesAServingPlan()
    {
        // "Estimated time" on the Memory tab places a serving plan's steps on the serving schedule's clock.
        const auto result = test::synth("llama3-70b-serving", QStringList {});
        const MemoryTimes times = computeMemoryTimes(*result);
        QVERIFY2(times.ok, qPrintable(times.error));
        QCOMPARE(times.classes.size(), result->classes.size());
        std::string error;
        ServingEstimate e;
        QVERIFY(estimateServing(*result, *gpuForConfig(result->config, error), EstimateOptions {}, e, error));
        QCOMPARE(times.classes.front()->finishS, e.programsTimeS);
    }

    // ---- 12: the window fits the screen and never grows past it ----

    void windowFitsTheScreenAndNeverGrows()
    {
        MainWindow window(false);
        const QSize available = window.screen()->availableGeometry().size();
        QVERIFY2(window.width() <= available.width() && window.height() <= available.height(),
            qPrintable(QStringLiteral("%1x%2 on %3x%4")
                           .arg(window.width())
                           .arg(window.height())
                           .arg(available.width())
                           .arg(available.height())));
        window.resize(1366, 768);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QSignalSpy shown(&window, &MainWindow::resultShown);
        QVERIFY(window.newFromPreset(QStringLiteral("llama3-70b-serving")));
        QVERIFY(shown.wait(kTimeoutMs));
        for (const QString& name : window.tabNames()) {
            QVERIFY(window.showTab(name));
            QVERIFY2(waitUntilSettled(window.currentResultView()), qPrintable(name));
            QTest::qWait(20); // layouts settle
            QVERIFY2(window.size() == QSize(1366, 768),
                qPrintable(QStringLiteral("%1: %2x%3").arg(name).arg(window.width()).arg(window.height())));
        }
        const QSize minimum = window.minimumSizeHint();
        QVERIFY2(minimum.height() <= 768, qPrintable(QString::number(minimum.height())));
    }

    // ---- 13: tables and boxes show what they hold ----

    void sweepTableShowsItsRankingColumnsFirst()
    {
        SweepView view;
        view.resize(900, 600); // narrower than the table: it scrolls
        view.setResult(test::configOnly("tiny", {}));
        view.gpusSpin()->setValue(8);
        QSignalSpy finished(&view, &SweepView::sweepFinished);
        QVERIFY(view.runSweep());
        QVERIFY(finished.wait(kTimeoutMs));
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QHeaderView* header = view.table()->horizontalHeader();
        QCOMPARE(header->visualIndex(SweepModel::RankColumn), 0);
        QCOMPARE(header->visualIndex(SweepModel::StepTimeColumn), 1);
        QCOMPARE(header->visualIndex(SweepModel::MfuColumn), 2);
        QCOMPARE(header->visualIndex(SweepModel::PeakColumn), 3);
        for (int column : { SweepModel::StepTimeColumn, SweepModel::MfuColumn, SweepModel::PeakColumn }) {
            const int right = header->sectionViewportPosition(column) + header->sectionSize(column);
            QVERIFY2(header->sectionViewportPosition(column) >= 0 && right <= view.table()->viewport()->width(),
                qPrintable(QStringLiteral("column %1 ends at %2 of %3")
                               .arg(column)
                               .arg(right)
                               .arg(view.table()->viewport()->width())));
        }
    }

    void reportWrapsProseNotTables()
    {
        const auto result = test::synth("llama3-70b", QStringList {});
        ReportView view;
        view.resize(900, 600);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setResult(result);
        const QString shown = view.textEdit()->toPlainText();
        const QString report = QString::fromStdString(reportText(*result));
        // The same words in the same order: only line breaks were added.
        QCOMPARE(shown.simplified(), report.simplified());
        const int columns = view.columns();
        static const QRegularExpression table(QStringLiteral("(\\S {2,}\\S.*){3}"));
        for (const QString& line : shown.split(QLatin1Char('\n')))
            QVERIFY2(line.size() <= columns || table.match(line).hasMatch(), qPrintable(line));
        // Every table row is whole (its stage and its last column on one line).
        QVERIFY(shown.contains(QRegularExpression(QStringLiteral("\\n0 +16 +0 +[0-9.]+ P"))));
    }

    void overviewNotesShowEveryMessage()
    {
        const auto result = test::synth("llama3-70b", QStringList {});
        OverviewView view;
        view.resize(1000, 700);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setResult(result);
        QVERIFY(waitUntilSettled(&view));
        QTest::qWait(20);
        QListWidget* list = view.warnings();
        // The padded vocabulary's note (128256 to a multiple of 128 * tp), longer than one line of the list.
        QVERIFY(list->count() >= 1);
        QVERIFY(list->fontMetrics().horizontalAdvance(list->item(0)->text()) > list->viewport()->width());
        for (int row = 0; row < list->count(); ++row) {
            const QRect rect = list->visualItemRect(list->item(row));
            QVERIFY2(rect.bottom() <= list->viewport()->height(),
                qPrintable(QStringLiteral("message %1 ends at %2 of %3")
                               .arg(row)
                               .arg(rect.bottom())
                               .arg(list->viewport()->height())));
        }
    }

    // ---- 14: axes, colours and labels ----

    void tickLabelsShowTheirDecimals_data()
    {
        QTest::addColumn<double>("interval");
        QTest::addColumn<QString>("format");
        QTest::newRow("2.5 GiB") << 2.5 << QStringLiteral("%.1f");
        QTest::newRow("5") << 5.0 << QStringLiteral("%.0f");
        QTest::newRow("0.25") << 0.25 << QStringLiteral("%.2f");
        QTest::newRow("0.5") << 0.5 << QStringLiteral("%.1f");
        QTest::newRow("20") << 20.0 << QStringLiteral("%.0f");
    }

    void tickLabelsShowTheirDecimals()
    {
        QFETCH(double, interval);
        QFETCH(QString, format);
        QCOMPARE(tickLabelFormat(interval), format);
    }

    void sweepAxesReadPlainly()
    {
        SweepChartView chart;
        chart.setSweep(nullptr, {}, {});
        // The empty state draws no ticks ("0 0 1 1 1" of a 0..1 axis at whole numbers).
        QVERIFY(!chart.memoryAxis()->labelsVisible());
        QVERIFY(!chart.timeAxis()->labelsVisible());
        // A sweep: no exponent notation beside plain numbers on the time axis.
        const auto sweep = test::coreSweep(test::loadPreset("tiny"), 8);
        chart.setSweep(sweep, {}, QStringLiteral("tiny"));
        QVERIFY(chart.memoryAxis()->labelsVisible());
        const QStringList labels = chart.timeAxis()->categoriesLabels();
        QVERIFY(!labels.isEmpty());
        for (const QString& label : labels)
            QVERIFY2(!label.contains(QLatin1Char('e')), qPrintable(labels.join(QLatin1Char(' '))));
    }

    void recomputeHasItsOwnColour()
    {
        const QColor recompute = TimelineStyle::solidColor(TimelineBarStyle::Recompute);
        for (TimelineBarStyle other : { TimelineBarStyle::Forward, TimelineBarStyle::Backward }) {
            const QColor c = TimelineStyle::solidColor(other);
            QVERIFY2(hueDistance(recompute, c) >= 30,
                qPrintable(QStringLiteral("%1 vs %2").arg(recompute.name(), c.name())));
        }
    }

    void interleavedSummariesNameTheirChunks()
    {
        // llama3-70b: pp 4, 5 chunks of 4 layers (resources/presets/llama3-70b.yaml): stage 0 holds layers 0-3,
        // 16-19, 32-35, 48-51, 64-67.
        std::vector<int32_t> stage0;
        for (int chunk = 0; chunk < 5; ++chunk)
            for (int l = 0; l < 4; ++l)
                stage0.push_back(chunk * 16 + l);
        QCOMPARE(GraphSpecBuilder::layerSetName(stage0, 80), QStringLiteral("L0–L3, L16–L19, …, L64–L67"));
        QCOMPARE(GraphSpecBuilder::layerSetName({ -1, 0, 1, 2 }, 80), QStringLiteral("emb, L0–L2"));
        QCOMPARE(GraphSpecBuilder::layerSetName({ 5 }, 80), QStringLiteral("L5"));
        // On the real program: the summary of what lies beyond the window names the chunks, not L1–L67.
        const auto result = test::synth("llama3-70b", QStringList {});
        const GraphSpec spec = GraphSpecBuilder::build(*result, 0, GraphSpecBuilder::defaultWindow(result->classes[0]));
        bool found = false;
        for (const GraphSummary& s : spec.summaries) {
            for (size_t i = 1; i < s.layers.size(); ++i)
                found = found || s.layers[i] - s.layers[i - 1] > 1; // a gap: another stage's layers left out
            QVERIFY(std::is_sorted(s.layers.begin(), s.layers.end()));
        }
        QVERIFY(found);
    }

    void sweepStatusSaysWhyPlansFailed()
    {
        SweepResult r;
        r.candidates = 3;
        SweepCandidate fit;
        r.ranked.push_back(fit);
        SweepCandidate failed;
        failed.rejection = SweepRejection::EstimateFailed;
        failed.reason = "internal error in the step-time estimate: the stages deadlock";
        r.rejected.push_back(failed);
        r.rejected.push_back(failed);
        const QString status = SweepView::summaryOf(r, 1.5);
        QVERIFY2(status.contains(QLatin1String("2 failed (internal error in the step-time estimate: the stages "
                                               "deadlock)")),
            qPrintable(status));
    }

    // ---- 17: find, measure and follow the sends ----

    void timelineFindsMeasuresAndDrawsSends()
    {
        // llama3-70b: 4 pipeline stages (pp 4) that send activations and gradients to their neighbours.
        const auto result = test::synth("llama3-70b", QStringList {});
        TimelineView view;
        view.resize(1200, 700);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setResult(result);
        QVERIFY(waitUntilSettled(&view));
        TimelineChart* chart = view.chart();
        const auto data = view.timelineData();
        QVERIFY(data && data->ok);

        // Find: the count is the bars of stage 0 whose node name contains the text, counted here by brute force.
        const ClassProgram& program = result->classes[0];
        const QString needle = QString::fromStdString(program.nodes[data->classes[0].compute.front().node].name);
        int expected = 0;
        for (const auto* lane : { &data->classes[0].compute, &data->classes[0].communication })
            for (const TimelineSpan& s : *lane)
                expected += QString::fromStdString(program.nodes[s.node].name).contains(needle, Qt::CaseInsensitive);
        QVERIFY(expected > 0);
        chart->setSearchText(needle.toUpper()); // case-insensitive
        QCOMPARE(chart->searchMatchCount(), expected);
        QVERIFY(chart->showNextMatch());
        const TimeAxis axis = chart->axis();
        bool centred = false;
        for (const TimelineSpan& s : data->classes[0].compute)
            centred = centred
                || (QString::fromStdString(program.nodes[s.node].name).contains(needle, Qt::CaseInsensitive)
                    && s.startS >= axis.startS && s.endS <= axis.endS());
        QVERIFY(centred);
        chart->setSearchText(QStringLiteral("no such node name"));
        QCOMPARE(chart->searchMatchCount(), 0);
        QVERIFY(!chart->showNextMatch());

        // Measure: Shift+drag from one x to another measures the times under them.
        chart->fit();
        const QRectF plot = chart->lanes().front().rect;
        const QPoint a(int(plot.left() + plot.width() * 0.25), int(plot.center().y()));
        const QPoint b(int(plot.left() + plot.width() * 0.5), int(plot.center().y()));
        QTest::mousePress(chart, Qt::LeftButton, Qt::ShiftModifier, a);
        QTest::mouseMove(chart, b);
        QTest::mouseRelease(chart, Qt::LeftButton, Qt::ShiftModifier, b);
        const auto range = chart->measuredRange();
        QVERIFY(range);
        const double pixel = chart->axis().pixelS();
        QVERIFY(std::abs(range->first - chart->axis().time(a.x())) <= pixel);
        QVERIFY(std::abs(range->second - chart->axis().time(b.x())) <= pixel);
        QTest::keyClick(chart, Qt::Key_Escape);
        QVERIFY(!chart->measuredRange());

        // Sends: one arrow per visible send, from its stage's lane to its peer's, forward in time.
        chart->setVisibleRange(0, data->totalS / 8);
        std::vector<double> stageY;
        for (const TimelineChart::Lane& lane : chart->lanes())
            if (lane.kind == TimelineChart::LaneKind::Stage)
                stageY.push_back(lane.rect.center().y());
        QCOMPARE(stageY.size(), size_t(4));
        size_t visibleSends = 0;
        for (const TimelineLanes& lanes : data->classes)
            for (const TimelineSpan& s : lanes.communication)
                visibleSends += s.style == TimelineBarStyle::Send && s.endS >= chart->axis().startS
                    && s.startS <= chart->axis().endS();
        const std::vector<TimelineChart::Arrow> arrows = chart->sendArrows();
        QVERIFY(visibleSends > 0);
        QCOMPARE(arrows.size(), visibleSends);
        for (const TimelineChart::Arrow& arrow : arrows) {
            QVERIFY(arrow.from.x() <= arrow.to.x());
            QVERIFY(arrow.from.y() != arrow.to.y());
            QVERIFY(std::find(stageY.begin(), stageY.end(), arrow.from.y()) != stageY.end());
            QVERIFY(std::find(stageY.begin(), stageY.end(), arrow.to.y()) != stageY.end());
        }
    }

    void graphFindsANodeByName()
    {
        const auto result = test::synth("tiny", QStringList {});
        GraphView view;
        view.resize(1200, 800);
        view.setResult(result);
        QVERIFY(view.isSettled() || QSignalSpy(&view, &GraphView::graphShown).wait(kTimeoutMs));
        const GraphSpec& spec = view.shownSpec();
        QVERIFY(!spec.nodes.empty());
        // The last drawn program node's name: every drawn node whose name contains it is a match.
        int32_t target = -1;
        for (int32_t i = 0; i < int32_t(spec.nodes.size()); ++i)
            if (spec.nodes[size_t(i)].programNode >= 0)
                target = i;
        QVERIFY(target >= 0);
        const QString name =
            QString::fromStdString(result->classes[0].nodes[size_t(spec.nodes[size_t(target)].programNode)].name);
        const int found = view.findNode(name);
        QVERIFY(found >= 1);
        const QList<QGraphicsItem*> selected = view.scene()->selectedItems();
        QCOMPARE(selected.size(), qsizetype(1));
        const auto* item = static_cast<const GraphNodeItem*>(selected.front());
        const GraphSpecNode& chosen = spec.nodes[size_t(item->specIndex())];
        QVERIFY(chosen.title.contains(name, Qt::CaseInsensitive) || chosen.subtitle.contains(name, Qt::CaseInsensitive)
            || QString::fromStdString(result->classes[0].nodes[size_t(chosen.programNode)].name)
                   .contains(name, Qt::CaseInsensitive));
        QCOMPARE(view.findNode(QStringLiteral("no such node name")), 0);
    }

    // ---- 9: one name per quantity ----

    void peakAndPayloadAreNamed()
    {
        OverviewModel model;
        model.setResult(test::synth("llama3-70b-serving", QStringList {}));
        QCOMPARE(model.headerData(OverviewModel::PeakMemoryColumn, Qt::Horizontal).toString(),
            QStringLiteral("Program peak"));
        QVERIFY(model.headerData(OverviewModel::AllReduceColumn, Qt::Horizontal, Qt::ToolTipRole)
                    .toString()
                    .startsWith(QLatin1String("Payload bytes")));
    }

    void reportJsonGivesModelAndHardwareFlops()
    {
        const auto result = test::synth("tiny", QStringList { QStringLiteral("training.recompute=full") });
        const nlohmann::ordered_json j = reportJson(*result);
        const ModelCost& c = result->cost;
        // Full recompute re-runs the forward: hardware = model + recompute + optimizer (core/model/modelcost.h).
        const double model =
            static_cast<double>(c.microBatches) * (c.forwardFlopsPerMicroBatch + c.backwardFlopsPerMicroBatch);
        QCOMPARE(j.at("model_flops_per_iteration").get<double>(), model);
        QCOMPARE(j.at("hardware_flops_per_iteration").get<double>(),
            model + static_cast<double>(c.microBatches) * c.recomputeFlopsPerMicroBatch
                + static_cast<double>(c.optimizerFlops));
        QVERIFY(c.recomputeFlopsPerMicroBatch > 0);
        QCOMPARE(j.at("flops_per_iteration").get<double>(), j.at("hardware_flops_per_iteration").get<double>());
    }
};

QTEST_MAIN(TestReadability)
#include "tst_readability.moc"
