// SPDX-License-Identifier: MIT
// The Sweep tab: the Pareto front, SweepModel and SweepRejectedModel under QAbstractItemModelTester, and SweepView
// over real sweeps of the tiny and llama3-8b presets (running, cancelling, choosing a plan, the chart).
#include "config/configloader.h"
#include "config/pipelinelayout.h"
#include "estimate/stepestimate.h"
#include "guihelpers.h"
#include "models/formatting.h"
#include "sweep/sweepchartview.h"
#include "sweep/sweepmodel.h"
#include "sweep/sweepplan.h"
#include "sweep/sweeprejectedmodel.h"
#include "sweep/sweepview.h"
#include "sweephelpers.h"
#include "synthesis/synthesis.h"

#include <QAbstractItemModelTester>
#include <QCategoryAxis>
#include <QLabel>
#include <QLineEdit>
#include <QLineSeries>
#include <QMenu>
#include <QProgressBar>
#include <QPushButton>
#include <QScatterSeries>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QTabBar>
#include <QTableView>
#include <QToolButton>
#include <QTreeView>
#include <QValueAxis>
#include <QtTest>
#include <cmath>

using namespace stagecraft;
using stagecraft::test::configOnly;
using stagecraft::test::coreSweep;
using stagecraft::test::loadPreset;
using stagecraft::test::synth;

namespace {

/// tiny with 4 layers and a batch of 16, so that pp up to 4 and dp up to 8 are valid (as in tests/core/tst_sweep).
QStringList tinySweepBase()
{
    return { QStringLiteral("model.layers=4"), QStringLiteral("training.global_batch=16"),
        QStringLiteral("training.micro_batch=1") };
}

bool runAndWait(SweepView& view)
{
    QSignalSpy finished(&view, &SweepView::sweepFinished);
    if (!view.runSweep())
        return false;
    return finished.wait(120000);
}

double rawDouble(const QAbstractItemModel& model, int row, int column)
{
    return model.data(model.index(row, column), SweepModel::RawValueRole).toDouble();
}

qint64 rawInt(const QAbstractItemModel& model, int row, int column)
{
    return model.data(model.index(row, column), SweepModel::RawValueRole).toLongLong();
}

/// Brute force: plan a is dominated by b when b is no slower and no larger, and better in one of the two.
bool dominated(const SweepCandidate& a, const std::vector<SweepCandidate>& all)
{
    for (const SweepCandidate& b : all)
        if (b.stepTimeS <= a.stepTimeS && b.peakBytes <= a.peakBytes
            && (b.stepTimeS < a.stepTimeS || b.peakBytes < a.peakBytes))
            return true;
    return false;
}

} // namespace

class TestSweepView : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void paretoFrontByHand_data()
    {
        QTest::addColumn<QList<qint64>>("peaks");
        QTest::addColumn<QList<double>>("times");
        QTest::addColumn<QList<int>>("front");
        QTest::newRow("empty") << QList<qint64> {} << QList<double> {} << QList<int> {};
        QTest::newRow("single") << QList<qint64> { 5 } << QList<double> { 1.0 } << QList<int> { 0 };
        // Trading memory for time: every point is on the front, listed by ascending peak.
        QTest::newRow("trade-off") << QList<qint64> { 30, 10, 20 } << QList<double> { 1.0, 3.0, 2.0 }
                                   << QList<int> { 1, 2, 0 };
        // 0 (10, 5) and 1 (10, 5) are equal: neither dominates the other. 2 (12, 5) is dominated by 0 (smaller,
        // as fast). 3 (8, 7) is the smallest. 4 (8, 9) is dominated by 3. 5 (20, 1) is dominated by 6 (15, 1).
        QTest::newRow("ties") << QList<qint64> { 10, 10, 12, 8, 8, 20, 15 }
                              << QList<double> { 5.0, 5.0, 5.0, 7.0, 9.0, 1.0, 1.0 } << QList<int> { 3, 0, 1, 6 };
        // One plan is both fastest and smallest: it dominates everything else.
        QTest::newRow("one winner") << QList<qint64> { 4, 2, 3 } << QList<double> { 2.0, 1.0, 1.5 } << QList<int> { 1 };
    }

    void paretoFrontByHand()
    {
        QFETCH(QList<qint64>, peaks);
        QFETCH(QList<double>, times);
        QFETCH(QList<int>, front);
        std::vector<SweepCandidate> plans(static_cast<size_t>(peaks.size()));
        for (qsizetype i = 0; i < peaks.size(); ++i) {
            plans[static_cast<size_t>(i)].peakBytes = peaks[i];
            plans[static_cast<size_t>(i)].stepTimeS = times[i];
        }
        const std::vector<int> got = sweepParetoFront(plans);
        QCOMPARE(QList<int>(got.begin(), got.end()), front);
    }

    void stepTimeText_data()
    {
        QTest::addColumn<double>("seconds");
        QTest::addColumn<QString>("text");
        // Three significant digits; a value that rounds up to the next decade or unit takes its form.
        QTest::newRow("seconds") << 7.412 << QStringLiteral("7.41 s");
        QTest::newRow("rounds to 10 s") << 9.996 << QStringLiteral("10.0 s");
        QTest::newRow("hundreds of seconds") << 123.4 << QStringLiteral("123 s");
        QTest::newRow("milliseconds") << 0.8123 << QStringLiteral("812 ms");
        QTest::newRow("rounds to 1 s") << 0.9996 << QStringLiteral("1.00 s");
        QTest::newRow("microseconds") << 3.52e-5 << QStringLiteral("35.2 \u00b5s");
        QTest::newRow("rounds to 1 ms") << 0.0009996 << QStringLiteral("1.00 ms");
    }

    void stepTimeText()
    {
        QFETCH(double, seconds);
        QFETCH(QString, text);
        QCOMPARE(formatDuration(seconds), text);
    }

    void planConfigSetsOnlyThePlan()
    {
        const Config base = loadPreset("tiny", tinySweepBase());
        SweepCandidate plan;
        plan.dp = 2;
        plan.tp = 2;
        plan.pp = 2;
        plan.cp = 1;
        plan.ep = 1;
        plan.microBatch = 4;
        plan.recompute = Recompute::Full;
        plan.zero = 3;
        plan.sequenceParallel = true;
        const Config config = sweepPlanConfig(base, plan);
        QCOMPARE(config.parallelism.worldSize(), 8);
        QCOMPARE(config.parallelism.dp, 2);
        QCOMPARE(config.parallelism.tp, 2);
        QCOMPARE(config.parallelism.pp, 2);
        QCOMPARE(config.parallelism.zero, 3);
        QVERIFY(config.parallelism.sequenceParallel);
        QCOMPARE(config.training.microBatch, 4);
        QCOMPARE(config.training.recompute, Recompute::Full);
        QVERIFY(config.model == base.model);
        QCOMPARE(config.training.globalBatch, base.training.globalBatch);
        QVERIFY(config.cluster == base.cluster);
        QVERIFY(isSweepPlan(config, plan));
        QVERIFY(!isSweepPlan(base, plan));
        QVERIFY(sameSweepInputs(base, config));
        Config otherModel = base;
        otherModel.model.layers = 8;
        QVERIFY(!sameSweepInputs(base, otherModel));
    }

    void modelsUnderTester()
    {
        // llama3-8b on 8 GPUs: plans that fit, plans out of memory (dp 8 without ZeRO holds the whole 8B model's
        // weights, gradients and Adam states: 16 bytes x 8.0e9 parameters > 80 GiB) and plans the validator refuses.
        SweepModel model;
        SweepRejectedModel rejected;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester rejectedTester(&rejected, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(model.columnCount(), int(SweepModel::ColumnCount));
        QCOMPARE(rejected.rowCount(), 0);

        const auto result = coreSweep(loadPreset("llama3-8b", {}), 8);
        QVERIFY(result->error.empty());
        model.setResult(result);
        rejected.setResult(result);
        QCOMPARE(model.rowCount(), static_cast<int>(result->ranked.size()));
        QVERIFY(model.rowCount() > 0);
        model.setCurrentRow(1);
        QVERIFY(model.data(model.index(1, 0), SweepModel::CurrentRole).toBool());
        model.setCurrentRow(-1);

        // Groups: out of memory first, every rejected plan in exactly one group, under its own reason key.
        QVERIFY(rejected.rowCount() >= 1);
        QCOMPARE(rejected.groupKeys().front(), QStringLiteral("memory"));
        int children = 0;
        for (int g = 0; g < rejected.rowCount(); ++g) {
            const QModelIndex group = rejected.index(g, 0);
            QVERIFY(!rejected.candidate(group));
            for (int r = 0; r < rejected.rowCount(group); ++r) {
                const SweepCandidate* c = rejected.candidate(rejected.index(r, 0, group));
                QVERIFY(c);
                QCOMPARE(QString::fromStdString(c->reasonKey), rejected.groupKeys()[g]);
                ++children;
            }
        }
        QCOMPARE(children, static_cast<int>(result->rejected.size()));

        // A sweep with plans the validator refuses: tiny on 8 GPUs (tp 8 does not divide 4 KV heads).
        const auto tiny = coreSweep(loadPreset("tiny", tinySweepBase()), 8);
        rejected.setResult(tiny);
        QVERIFY(rejected.groupKeys().contains(QStringLiteral("parallelism.tp")));
        QVERIFY(!rejected.groupKeys().contains(QStringLiteral("memory")));
        model.setResult(tiny);
        model.setResult(nullptr);
        rejected.setResult(nullptr);
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(rejected.rowCount(), 0);
    }

    void candidateCountByHand()
    {
        // tiny (global_batch 4) on 4 GPUs, micro-batches 1, 2, 4, 8 (SweepOptions' default), per the enumeration rule
        // of core/estimate/sweep.h: (dp, tp, pp, cp) with product 4, the micro-batch sizes dividing 4 / dp,
        // recompute x3, ZeRO 0-3 when dp*cp > 1 (else 0 only); ep = 1 (dense model).
        //   dp 4: (tp,pp,cp) = (1,1,1)                     1 case  x 1 mb (1)       x 3 x 4 zero = 12
        //   dp 2: (2,1,1) (1,2,1) (1,1,2)                  3 cases x 2 mb (1, 2)    x 3 x 4 zero = 72
        //   dp 1, cp > 1: (1,1,4) (2,1,2) (1,2,2)          3 cases x 3 mb (1, 2, 4) x 3 x 4 zero = 108
        //   dp 1, cp = 1: (4,1,1) (1,4,1) (2,2,1)          3 cases x 3 mb (1, 2, 4) x 3 x 1 zero = 27
        //   total 12 + 72 + 108 + 27 = 219
        // Invalid plans (pp 4 > 2 layers) are candidates too: they are counted as rejected.
        constexpr qint64 kExpected = 219;
        SweepView view;
        view.setResult(synth("tiny", {}));
        QCOMPARE(view.gpusSpin()->value(), 1);
        view.gpusSpin()->setValue(4);
        QVERIFY(runAndWait(view));
        const auto result = view.sweepResult();
        QVERIFY(result);
        QCOMPARE(result->candidates, kExpected);
        QCOMPARE(view.model()->rowCount() + static_cast<qint64>(result->rejected.size()), kExpected);
        QVERIFY2(view.statusLabel()->text().startsWith(QStringLiteral("219 plans: ")),
            qPrintable(view.statusLabel()->text()));
    }

    void alsoTryFp8()
    {
        // Also try > FP8 on tiny (219 plans on 4 GPUs, candidateCountByHand) doubles the plans, each FP8 plan
        // marked in its schedule cell; the menu is hidden for a serving config and its all-to-all entry is off for
        // a dense model.
        SweepView view;
        view.setResult(synth("tiny", {}));
        view.gpusSpin()->setValue(4);
        auto* button = view.findChild<QToolButton*>(QStringLiteral("sweepAlsoTry"));
        QVERIFY(button && button->menu());
        const QList<QAction*> actions = button->menu()->actions();
        QCOMPARE(actions.size(), 3);
        QVERIFY(!actions[1]->isEnabled()); // the all-to-all overlap: MoE only
        actions[0]->setChecked(true);
        QVERIFY(runAndWait(view));
        const auto result = view.sweepResult();
        QVERIFY(result);
        QCOMPARE(result->candidates, qint64(2 * 219));
        int fp8Rows = 0;
        for (int r = 0; r < view.model()->rowCount(); ++r)
            for (int c = 0; c < view.model()->columnCount(); ++c)
                fp8Rows += view.model()->data(view.model()->index(r, c)).toString().contains(QStringLiteral("fp8"));
        QVERIFY(fp8Rows > 0);
        view.setResult(configOnly(loadPreset("llama3-70b-serving", {})));
        QVERIFY(!button->isVisibleTo(&view));
    }

    void alsoTryBalancedLayout()
    {
        // Also try > balanced splits on tiny with 9 layers on 8 GPUs: no split makes 2, 4 or 8 stages even, so
        // the pipelined plans also come with a generated layout; its schedule cell says so and the plan's text
        // carries the layout string (pp 2: 11 slots, "Etttt|tttttL" by tst_stageplan's rule).
        SweepView view;
        view.setResult(synth("tiny",
            { QStringLiteral("model.layers=9"), QStringLiteral("training.global_batch=16"),
                QStringLiteral("training.micro_batch=1") }));
        view.gpusSpin()->setValue(8);
        auto* button = view.findChild<QToolButton*>(QStringLiteral("sweepAlsoTry"));
        QVERIFY(button && button->menu());
        button->menu()->actions()[2]->setChecked(true);
        QVERIFY(runAndWait(view));
        const auto result = view.sweepResult();
        QVERIFY(result);
        int layoutRow = -1;
        for (int r = 0; r < view.model()->rowCount() && layoutRow < 0; ++r)
            if (view.model()
                    ->data(view.model()->index(r, SweepModel::ScheduleColumn))
                    .toString()
                    .contains(QStringLiteral("balanced layout")))
                layoutRow = r;
        QVERIFY(layoutRow >= 0);
        bool pp2 = false;
        for (const SweepCandidate& c : result->ranked)
            if (c.pp == 2 && !c.pipelineLayout.empty()) {
                pp2 = true;
                LayoutError error;
                QVERIFY(
                    *PipelineLayout::parse(c.pipelineLayout, error) == *PipelineLayout::parse("Etttt|tttttL", error));
                QVERIFY(sweepPlanText(c).endsWith(
                    QStringLiteral("balanced layout ") + QString::fromStdString(c.pipelineLayout)));
            }
        QVERIFY(pp2);
        const QString dir = qEnvironmentVariable("STAGECRAFT_SCREENSHOT_DIR");
        if (!dir.isEmpty()) {
            view.resize(1366, 768);
            view.show();
            view.table()->selectRow(layoutRow);
            QTest::qWait(50);
            QVERIFY(view.grab().save(dir + QStringLiteral("/sweep-balanced-layout.png")));
        }
    }

    void rowsAreTheFittingPlansByStepTime()
    {
        SweepView view;
        view.setResult(synth("tiny", tinySweepBase()));
        view.gpusSpin()->setValue(8);
        QVERIFY(runAndWait(view));
        const auto result = view.sweepResult();
        const SweepModel& model = *view.model();
        QCOMPARE(model.rowCount(), static_cast<int>(result->ranked.size()));
        int fitting = 0;
        for (const auto* list : { &result->ranked, &result->rejected })
            for (const SweepCandidate& c : *list)
                fitting += c.rejection == SweepRejection::None;
        QCOMPARE(model.rowCount(), fitting);
        for (int row = 1; row < model.rowCount(); ++row)
            QVERIFY(rawDouble(model, row - 1, SweepModel::StepTimeColumn)
                <= rawDouble(model, row, SweepModel::StepTimeColumn));
        for (int row = 0; row < model.rowCount(); ++row)
            QCOMPARE(rawInt(model, row, SweepModel::RankColumn), row + 1);

        // The table sorts through the proxy by raw values: by peak memory, descending.
        view.table()->sortByColumn(SweepModel::PeakColumn, Qt::DescendingOrder);
        const QSortFilterProxyModel& proxy = *view.proxyModel();
        for (int row = 1; row < proxy.rowCount(); ++row)
            QVERIFY(rawInt(proxy, row - 1, SweepModel::PeakColumn) >= rawInt(proxy, row, SweepModel::PeakColumn));
    }

    void paretoFrontOfRealSweeps_data()
    {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<QStringList>("overrides");
        QTest::addColumn<int>("gpus");
        QTest::newRow("tiny 8") << QStringLiteral("tiny") << tinySweepBase() << 8;
        QTest::newRow("llama3-8b 8") << QStringLiteral("llama3-8b") << QStringList {} << 8;
    }

    void paretoFrontOfRealSweeps()
    {
        QFETCH(QString, preset);
        QFETCH(QStringList, overrides);
        QFETCH(int, gpus);
        SweepView view;
        view.setResult(configOnly(preset.toUtf8().constData(), overrides));
        view.gpusSpin()->setValue(gpus);
        QVERIFY(runAndWait(view));
        const auto result = view.sweepResult();
        const SweepModel& model = *view.model();
        QVERIFY(!model.paretoRows().empty());
        for (int row = 0; row < model.rowCount(); ++row) {
            const bool onFront = !dominated(*model.candidate(row), result->ranked);
            QVERIFY2(model.isPareto(row) == onFront, qPrintable(QStringLiteral("row %1").arg(row)));
            QCOMPARE(model.data(model.index(row, 0), SweepModel::ParetoRole).toBool(), onFront);
        }
        // The chart draws every front point; its staircase has one corner between consecutive points.
        const qsizetype front = static_cast<qsizetype>(model.paretoRows().size());
        QCOMPARE(view.chartView()->paretoPointSeries()->count(), front);
        QCOMPARE(view.chartView()->paretoSeries()->count(), 2 * front - 1);
        QCOMPARE(view.chartView()->fittingSeries()->count(), model.rowCount());
        // The fastest plan (rank 1) is on the front unless an equally fast plan needs less memory.
        QVERIFY(model.isPareto(0) || dominated(*model.candidate(0), result->ranked));
    }

    void planChosenFromRowAndPoint()
    {
        SweepView view;
        view.resize(1400, 800);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        // Sweep 8 GPUs from a 1-GPU config: the chosen plan's world is the GPU count swept, not the config's.
        view.setResult(synth("tiny", tinySweepBase()));
        view.gpusSpin()->setValue(8);
        QVERIFY(runAndWait(view));
        const Config base = view.sweepConfig();
        QSignalSpy chosen(&view, &SweepView::planChosen);

        const SweepModel& model = *view.model();
        for (int row : { 0, model.rowCount() / 2, model.rowCount() - 1 }) {
            QVERIFY(view.chooseRow(row));
            QCOMPARE(chosen.count(), 1);
            const auto config = chosen.takeFirst().at(0).value<Config>();
            QCOMPARE(config.parallelism.worldSize(), 8);
            QCOMPARE(config.parallelism.dp, rawInt(model, row, SweepModel::DpColumn));
            QCOMPARE(config.parallelism.tp, rawInt(model, row, SweepModel::TpColumn));
            QCOMPARE(config.parallelism.pp, rawInt(model, row, SweepModel::PpColumn));
            QCOMPARE(config.parallelism.cp, rawInt(model, row, SweepModel::CpColumn));
            QCOMPARE(config.training.microBatch, rawInt(model, row, SweepModel::MicroBatchColumn));
            QCOMPARE(static_cast<int>(config.training.recompute),
                static_cast<int>(rawInt(model, row, SweepModel::RecomputeColumn)));
            QCOMPARE(config.parallelism.zero, static_cast<int>(rawInt(model, row, SweepModel::ZeroColumn)));
            QVERIFY(config.model == base.model);
        }
        QVERIFY(!view.chooseRow(model.rowCount()));
        QCOMPARE(chosen.count(), 0);

        // Activating a row of the (sorted) table chooses that row's plan.
        view.table()->sortByColumn(SweepModel::PeakColumn, Qt::AscendingOrder);
        const QModelIndex first = view.proxyModel()->index(0, SweepModel::DpColumn);
        const int sourceRow = view.proxyModel()->mapToSource(first).row();
        Q_EMIT view.table()->activated(first);
        QCOMPARE(chosen.count(), 1);
        QVERIFY(isSweepPlan(chosen.takeFirst().at(0).value<Config>(), *model.candidate(sourceRow)));

        // Clicking a Pareto point in the chart chooses the plan drawn there.
        SweepChartView* chart = view.chartView();
        const SweepPlanRef target { true, model.paretoRows().front() };
        const std::optional<QPointF> pos = chart->viewPosition(target);
        QVERIFY(pos);
        const SweepPlanRef hit = chart->planAt(*pos);
        QVERIFY(hit.isValid());
        const SweepCandidate& hitPlan = *sweepCandidate(*view.sweepResult(), hit);
        QCOMPARE(hitPlan.peakBytes, model.candidate(target.index)->peakBytes);
        QCOMPARE(hitPlan.stepTimeS, model.candidate(target.index)->stepTimeS);
        QTest::mouseClick(chart->viewport(), Qt::LeftButton, {}, pos->toPoint());
        QCOMPARE(chosen.count(), 1);
        const auto clicked = chosen.takeFirst().at(0).value<Config>();
        QVERIFY(isSweepPlan(clicked, hitPlan));
        QCOMPARE(clicked.parallelism.worldSize(), 8);
        QVERIFY(!chart->planAt(QPointF(2, 2)).isValid());

        // Loading the plan makes it the current one: the chart stars it and the table marks its row.
        view.setResult(synth("tiny",
            QStringList(tinySweepBase())
                << QStringLiteral("parallelism.dp=%1").arg(clicked.parallelism.dp)
                << QStringLiteral("parallelism.tp=%1").arg(clicked.parallelism.tp)
                << QStringLiteral("parallelism.pp=%1").arg(clicked.parallelism.pp)
                << QStringLiteral("parallelism.cp=%1").arg(clicked.parallelism.cp)
                << QStringLiteral("parallelism.zero=%1").arg(clicked.parallelism.zero)
                << QStringLiteral("parallelism.sequence_parallel=%1")
                       .arg(clicked.parallelism.sequenceParallel ? QStringLiteral("true") : QStringLiteral("false"))
                << QStringLiteral("training.micro_batch=%1").arg(clicked.training.microBatch)
                << QStringLiteral("training.recompute=%1").arg(QLatin1String(toString(clicked.training.recompute)))));
        QCOMPARE(chart->currentPlan(), hit);
        QCOMPARE(chart->currentSeries()->count(), 1);
        QCOMPARE(view.model()->currentRow(), hit.index);
        QVERIFY(chart->toolTipText(hit).contains(QStringLiteral("the current config")));
    }

    void gpusFollowTheWorldUntilEdited()
    {
        SweepView view;
        view.setResult(synth("tiny", { QStringLiteral("parallelism.dp=2") }));
        QCOMPARE(view.gpusSpin()->value(), 2);
        view.setResult(synth("tiny", { QStringLiteral("parallelism.dp=2"), QStringLiteral("parallelism.tp=2") }));
        QCOMPARE(view.gpusSpin()->value(), 4);
        view.gpusSpin()->setValue(16); // the user's choice sticks
        view.setResult(synth("tiny", { QStringLiteral("parallelism.dp=2") }));
        QCOMPARE(view.gpusSpin()->value(), 16);
        view.gpusSpin()->setValue(2); // back to the world size: following again
        view.setResult(synth("tiny", { QStringLiteral("parallelism.tp=2"), QStringLiteral("parallelism.pp=2") }));
        QCOMPARE(view.gpusSpin()->value(), 4);
        // setResult() alone never starts a sweep.
        QVERIFY(!view.isRunning());
        QVERIFY(!view.sweepResult());
    }

    void badInputFails()
    {
        SweepView view;
        QSignalSpy failed(&view, &SweepView::sweepFailed);
        QVERIFY(!view.runSweep()); // no config yet
        QCOMPARE(failed.count(), 1);
        view.setResult(synth("tiny", {}));
        view.microBatchEdit()->setText(QStringLiteral("0, 2"));
        QVERIFY(!view.runSweep());
        QCOMPARE(failed.count(), 2);
        QVERIFY(view.statusLabel()->text().contains(QStringLiteral("Micro-batch sizes")));
        QVERIFY(!view.isRunning());
        // With valid sizes, only those are tried.
        view.microBatchEdit()->setText(QStringLiteral("2"));
        view.gpusSpin()->setValue(2);
        QVERIFY(runAndWait(view));
        for (const auto* list : { &view.sweepResult()->ranked, &view.sweepResult()->rejected })
            for (const SweepCandidate& c : *list)
                QCOMPARE(c.microBatch, 2);
    }

    void cancelKeepsThePreviousSweep()
    {
        SweepView view;
        view.setResult(synth("tiny", {}));
        view.gpusSpin()->setValue(4);
        QVERIFY(runAndWait(view));
        const auto previous = view.sweepResult();
        const int previousRows = view.model()->rowCount();

        // llama3-70b on 1,024 GPUs takes seconds: cancel it once it has reported progress.
        view.setResult(configOnly("llama3-70b", {}));
        view.gpusSpin()->setValue(1024);
        QSignalSpy finished(&view, &SweepView::sweepFinished);
        QSignalSpy cancelled(&view, &SweepView::sweepCancelled);
        QVERIFY(view.runSweep());
        QVERIFY(view.isRunning());
        QCOMPARE(view.runButton()->text(), QStringLiteral("Cancel"));
        QVERIFY(view.progressBar()->isVisibleTo(&view));
        QTRY_VERIFY_WITH_TIMEOUT(view.progressBar()->value() > 0, 60000);
        view.cancel();
        QVERIFY(!view.isRunning());
        QCOMPARE(view.runButton()->text(), QStringLiteral("Run sweep"));
        QVERIFY(cancelled.wait(60000));
        QCOMPARE(cancelled.count(), 1);
        QVERIFY(cancelled.at(0).at(0).toBool()); // the core stopped early
        QCOMPARE(finished.count(), 0);
        QCOMPARE(view.sweepResult(), previous);
        QCOMPARE(view.model()->result(), previous);
        QCOMPARE(view.model()->rowCount(), previousRows);
        QVERIFY(view.statusLabel()->text().startsWith(QStringLiteral("Cancelled")));

        // A run superseded by a newer one is dropped; the newer one is shown.
        QVERIFY(view.runSweep());
        view.setResult(synth("tiny", {}));
        view.gpusSpin()->setValue(2);
        QVERIFY(view.runSweep());
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
        QCOMPARE(cancelled.count(), 2);
        QCOMPARE(view.sweepResult()->gpus, 2);
    }

    void chartScales_data()
    {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<QStringList>("overrides");
        QTest::addColumn<int>("gpus");
        QTest::addColumn<QString>("screenshot");
        // tiny: MiB-sized plans, the 80 GiB line far beyond them. llama3-8b: GiB-sized plans on both sides of it.
        QTest::newRow("tiny 8") << QStringLiteral("tiny") << tinySweepBase() << 8 << QStringLiteral("sweep-tiny-8");
        QTest::newRow("llama3-8b 64") << QStringLiteral("llama3-8b") << QStringList {} << 64
                                      << QStringLiteral("sweep-llama3-8b-64");
        if (qEnvironmentVariableIsSet("STAGECRAFT_SLOW_TESTS"))
            QTest::newRow("llama3-70b 1024")
                << QStringLiteral("llama3-70b") << QStringList {} << 1024 << QStringLiteral("sweep-llama3-70b-1024");
    }

    void chartScales()
    {
        QFETCH(QString, preset);
        QFETCH(QStringList, overrides);
        QFETCH(int, gpus);
        QFETCH(QString, screenshot);
        SweepView view;
        view.resize(1400, 800);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setResult(configOnly(preset.toUtf8().constData(), overrides));
        view.gpusSpin()->setValue(gpus);
        QVERIFY(runAndWait(view));
        const SweepResult& r = *view.sweepResult();
        SweepChartView* chart = view.chartView();

        // Every drawn point lies inside the axes.
        const QValueAxis* x = chart->memoryAxis();
        const QCategoryAxis* y = chart->timeAxis();
        for (const QScatterSeries* s : { chart->fittingSeries(), chart->outOfMemorySeries() })
            for (const QPointF& p : s->points()) {
                QVERIFY(p.x() >= x->min() && p.x() <= x->max());
                QVERIFY(p.y() >= y->min() && p.y() <= y->max());
            }
        // Out-of-memory plans are drawn up to 2.5 x HBM, the rest counted.
        qsizetype oom = 0, beyond = 0;
        for (const SweepCandidate& c : r.rejected)
            if (c.rejection == SweepRejection::OutOfMemory)
                ++(static_cast<double>(c.peakBytes) > 2.5 * static_cast<double>(r.hbmBytes) ? beyond : oom);
        QCOMPARE(chart->outOfMemorySeries()->count(), oom);
        QCOMPARE(chart->hiddenOutOfMemoryCount(), beyond);
        // The legend names every group with its count.
        const QString legend = view.legendLabel()->text();
        QVERIFY(legend.contains(QStringLiteral("Pareto&nbsp;front&nbsp;(%1)").arg(view.model()->paretoRows().size())));
        QVERIFY(legend.contains(
            QStringLiteral("fits&nbsp;in&nbsp;HBM&nbsp;(%1)").arg(formatExact(view.model()->rowCount()))));
        QCOMPARE(legend.contains(QStringLiteral("out&nbsp;of&nbsp;memory")), oom + beyond > 0);
        // Logarithmic time axis exactly when the drawn step times span more than a factor of 20.
        double lo = 0, hi = 0;
        for (const SweepCandidate& c : r.ranked) {
            lo = lo > 0 ? std::min(lo, c.stepTimeS) : c.stepTimeS;
            hi = std::max(hi, c.stepTimeS);
        }
        for (const SweepCandidate& c : r.rejected)
            if (c.rejection == SweepRejection::OutOfMemory
                && static_cast<double>(c.peakBytes) <= 2.5 * static_cast<double>(r.hbmBytes)) {
                lo = lo > 0 ? std::min(lo, c.stepTimeS) : c.stepTimeS;
                hi = std::max(hi, c.stepTimeS);
            }
        QCOMPARE(chart->isTimeAxisLogarithmic(), hi / lo > 20);
        // The HBM line (h100-sxm: 80 GiB, resources/gpus) stands at 80 on a GiB axis when plans reach it.
        if (!chart->hbmSeries()->points().isEmpty()) {
            QCOMPARE(chart->hbmSeries()->at(0).x(), 80.0);
            QVERIFY(x->titleText().contains(QStringLiteral("GiB")));
        }
        // Hovering a point explains it: its plan, step time and MFU.
        const SweepPlanRef fastest { true, 0 };
        const QString tip = chart->toolTipText(fastest);
        QVERIFY(tip.contains(QStringLiteral("dp %1 ").arg(r.ranked[0].dp)));
        QVERIFY(tip.contains(formatDuration(r.ranked[0].stepTimeS)));
        QVERIFY(tip.contains(QStringLiteral("MFU %1 %").arg(QString::number(r.ranked[0].mfu * 100, 'f', 1))));

        const QString dir = qEnvironmentVariable("STAGECRAFT_SCREENSHOT_DIR");
        if (!dir.isEmpty()) {
            // As after loading a plan from the front: the star on it, and the fastest plan selected in the table.
            auto current = std::make_shared<SynthesisResult>();
            const std::vector<int>& front = view.model()->paretoRows();
            current->config =
                sweepPlanConfig(view.sweepConfig(), r.ranked[static_cast<size_t>(front[front.size() / 2])]);
            view.setResult(current);
            view.table()->selectRow(0);
            QTest::qWait(50);
            QVERIFY(view.grab().save(dir + QLatin1Char('/') + screenshot + QStringLiteral(".png")));
            // The rejected plans, the first group open.
            view.rejectedTree()->parentWidget()->parentWidget()->findChild<QTabBar*>()->setCurrentIndex(1);
            view.rejectedTree()->expand(view.rejectedModel()->index(0, 0));
            QTest::qWait(50);
            QVERIFY(view.grab().save(dir + QLatin1Char('/') + screenshot + QStringLiteral("-rejected.png")));
        }
    }
};

QTEST_MAIN(TestSweepView)
#include "tst_sweepview.moc"
