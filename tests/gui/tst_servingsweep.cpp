// SPDX-License-Identifier: MIT
// The Sweep tab for an inference config: the TPOT limit field, the serving columns of SweepModel and
// SweepRejectedModel, the throughput-against-TPOT chart and choosing a plan, over real sweeps of the
// llama3-70b-serving preset on 8 GPUs, each compared with an independent core sweep() of the same options.
#include "config/configloader.h"
#include "estimate/stepestimate.h"
#include "models/formatting.h"
#include "session/configdocument.h"
#include "sweep/sweepchartview.h"
#include "sweep/sweepmodel.h"
#include "sweep/sweepplan.h"
#include "sweep/sweeprejectedmodel.h"
#include "sweep/sweepview.h"
#include "sweephelpers.h"
#include "synthesis/synthesis.h"
#include "widgets/mainwindow.h"

#include <QAbstractItemModelTester>
#include <QCategoryAxis>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLineSeries>
#include <QScatterSeries>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QTabBar>
#include <QTableView>
#include <QTreeView>
#include <QUndoStack>
#include <QValueAxis>
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <set>

using namespace stagecraft;
using stagecraft::test::configOnly;
using stagecraft::test::coreSweep;
using stagecraft::test::loadPreset;

namespace {

constexpr const char* kPreset = "llama3-70b-serving";
constexpr int kGpus = 8;

/// Shows `view` at `size` and waits until it is on screen.
bool showAt(SweepView& view, const QSize& size)
{
    view.resize(size);
    view.show();
    return QTest::qWaitForWindowExposed(&view);
}

/// Runs the view's sweep of `preset` on `gpus` GPUs with the TPOT field set to `tpotText`.
bool runServing(SweepView& view, const QString& tpotText, const char* preset = kPreset, int gpus = kGpus)
{
    view.setResult(configOnly(loadPreset(preset)));
    view.gpusSpin()->setValue(gpus);
    view.tpotLimitEdit()->setText(tpotText);
    QSignalSpy finished(&view, &SweepView::sweepFinished);
    if (!view.runSweep())
        return false;
    return finished.wait(120000);
}

std::vector<int64_t> indices(const std::vector<SweepCandidate>& list)
{
    std::vector<int64_t> out;
    for (const SweepCandidate& c : list)
        out.push_back(c.index);
    return out;
}

/// The unit of a serving sweep's TPOT column: durationUnitFor() the largest TPOT among its timed plans.
DurationUnit tpotUnit(const SweepResult& r)
{
    double top = 0;
    for (const auto* list : { &r.ranked, &r.rejected })
        for (const SweepCandidate& c : *list)
            if (sweepPlanIsTimed(c))
                top = std::max(top, c.tpotS);
    return durationUnitFor(top);
}

/// The two serving presets, each on its own world: llama3-70b (dense) on 8 GPUs, deepseek-v3 (MoE: ep columns,
/// plans many times slower than the limit) on 32.
void servingPresets()
{
    QTest::addColumn<QString>("preset");
    QTest::addColumn<int>("gpus");
    QTest::newRow("llama3-70b-serving 8") << QString::fromLatin1(kPreset) << kGpus;
    QTest::newRow("deepseek-v3-serving 32") << QStringLiteral("deepseek-v3-serving") << 32;
}

/// The titles of the columns a view shows, in order.
QStringList visibleTitles(const QAbstractItemModel& model, const QHeaderView& header)
{
    QStringList titles;
    for (int column = 0; column < model.columnCount(); ++column)
        if (!header.isSectionHidden(column))
            titles << model.headerData(column, Qt::Horizontal).toString();
    return titles;
}

/// Brute force: a fitting plan is on the serving front when no other plan has a TPOT as low and a throughput as
/// high, one of them strictly.
bool dominated(const SweepCandidate& a, const std::vector<SweepCandidate>& all)
{
    for (const SweepCandidate& b : all)
        if (b.tpotS <= a.tpotS && b.tokensPerSPerGpu >= a.tokensPerSPerGpu
            && (b.tpotS < a.tpotS || b.tokensPerSPerGpu > a.tokensPerSPerGpu))
            return true;
    return false;
}

/// `text` is `value` rounded to the decimals `text` shows.
bool showsValue(const QString& text, double value)
{
    bool ok = false;
    const double shown = text.toDouble(&ok);
    const qsizetype dot = text.indexOf(QLatin1Char('.'));
    const int decimals = dot < 0 ? 0 : static_cast<int>(text.size() - dot - 1);
    return ok && std::abs(shown - value) <= 0.5 * std::pow(10.0, -decimals) * (1 + 1e-9);
}

} // namespace

class TestServingSweep : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void tpotFieldOnlyForInference()
    {
        SweepView view;
        QVERIFY(showAt(view, QSize(1366, 700)));
        // Before any config, and for a training config: the micro-batch sizes, no TPOT limit.
        QVERIFY(!view.tpotLimitEdit()->isVisible());
        view.setResult(configOnly(loadPreset("tiny")));
        QVERIFY(!view.tpotLimitEdit()->isVisible());
        QVERIFY(view.microBatchEdit()->isVisible());
        // An inference config: the TPOT limit, 50 ms by default, and no micro-batch sizes (the serving sweep keeps the
        // config's micro-batch).
        view.setResult(configOnly(loadPreset(kPreset)));
        QVERIFY(view.tpotLimitEdit()->isVisible());
        QVERIFY(!view.microBatchEdit()->isVisible());
        QCOMPARE(view.tpotLimitEdit()->text(), QStringLiteral("50"));
        QVERIFY(view.tpotLimitEdit()->toolTip().contains(QStringLiteral("mlperf.conf")));
        // Back to training.
        view.setResult(configOnly(loadPreset("llama3-8b")));
        QVERIFY(!view.tpotLimitEdit()->isVisible());
        QVERIFY(view.microBatchEdit()->isVisible());
    }

    void limitReachesTheCore_data()
    {
        // The text typed into the field ("median": between the two middle TPOTs of the plans that fit without a
        // limit, as tests/core/tst_servingestimate does, so that plans fall on both sides) and the limit it means.
        QTest::addColumn<QString>("tpotText");
        QTest::addColumn<double>("limitS");
        QTest::newRow("default 50 ms") << QStringLiteral("50") << 0.050;
        QTest::newRow("empty: no limit") << QString() << 0.0;
        QTest::newRow("0: no limit") << QStringLiteral("0") << 0.0;
        QTest::newRow("median") << QStringLiteral("median") << -1.0;
    }

    void limitReachesTheCore()
    {
        QFETCH(QString, tpotText);
        QFETCH(double, limitS);
        const Config base = loadPreset(kPreset);
        const auto unlimitedSweep = coreSweep(base, kGpus);
        const SweepResult& unlimited = *unlimitedSweep;
        const bool median = tpotText == QLatin1String("median");
        if (median) {
            std::vector<double> tpots;
            for (const SweepCandidate& c : unlimited.ranked)
                tpots.push_back(c.tpotS);
            std::sort(tpots.begin(), tpots.end());
            QVERIFY(tpots.size() >= 2);
            const size_t mid = tpots.size() / 2;
            tpotText = QString::number((tpots[mid - 1] + tpots[mid]) / 2 * 1e3, 'f', 3);
            limitS = tpotText.toDouble() * 1e-3;
        }
        SweepView view;
        QVERIFY(runServing(view, tpotText));
        const SweepResult& shown = *view.sweepResult();
        QVERIFY(shown.serving);
        QCOMPARE(shown.tpotLimitS, limitS);

        // The same plans, ranked and rejected alike, as a core sweep with the same limit.
        const auto coreResult = coreSweep(base, kGpus, limitS);
        const SweepResult& core = *coreResult;
        QCOMPARE(indices(shown.ranked), indices(core.ranked));
        QCOMPARE(indices(shown.rejected), indices(core.rejected));
        for (size_t i = 0; i < core.rejected.size(); ++i) {
            QCOMPARE(shown.rejected[i].rejection, core.rejected[i].rejection);
            QCOMPARE(shown.rejected[i].reason, core.rejected[i].reason);
        }

        // Over the limit are exactly the plans of the unlimited sweep that fit in memory and whose TPOT exceeds it.
        std::set<int64_t> over;
        if (limitS > 0)
            for (const SweepCandidate& c : unlimited.ranked)
                if (c.tpotS > limitS)
                    over.insert(c.index);
        std::set<int64_t> shownOver;
        for (const SweepCandidate& c : shown.rejected)
            if (c.rejection == SweepRejection::OverTpotLimit)
                shownOver.insert(c.index);
        QCOMPARE(shownOver, over);
        if (median)
            QVERIFY(!over.empty() && !shown.ranked.empty());

        // The rejected tree groups them under "tpot", each with the core's reason ("time per output token X > the
        // limit of Y").
        const SweepRejectedModel& rejected = *view.rejectedModel();
        QAbstractItemModelTester tester(view.rejectedModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        const int group = static_cast<int>(rejected.groupKeys().indexOf(QStringLiteral("tpot")));
        QCOMPARE(group >= 0, !over.empty());
        if (group >= 0) {
            const QModelIndex g = rejected.index(group, 0);
            QCOMPARE(rejected.data(g).toString(),
                QStringLiteral("Over the TPOT limit of %1 (%2)").arg(formatDuration(limitS)).arg(over.size()));
            QCOMPARE(rejected.rowCount(g), static_cast<int>(over.size()));
            for (int row = 0; row < rejected.rowCount(g); ++row) {
                const QModelIndex plan = rejected.index(row, SweepRejectedModel::ReasonColumn, g);
                const SweepCandidate* c = rejected.candidate(plan);
                QVERIFY(c && over.count(c->index) == 1);
                const QString reason = rejected.data(plan).toString();
                QCOMPARE(reason, QString::fromStdString(c->reason));
                QVERIFY2(reason.contains(QStringLiteral(" > the limit of ")), qPrintable(reason));
                // Its TPOT is shown: it has an estimate.
                QVERIFY(showsValue(rejected.data(rejected.index(row, rejected.column(SweepField::Tpot), g)).toString(),
                    c->tpotS / tpotUnit(shown).seconds));
            }
        }
        // The status line counts them.
        if (limitS > 0)
            QVERIFY2(view.statusLabel()->text().contains(
                         QStringLiteral("%1 over the TPOT limit of %2").arg(over.size()).arg(formatDuration(limitS))),
                qPrintable(view.statusLabel()->text()));
    }

    void badLimitFails()
    {
        SweepView view;
        view.setResult(configOnly(loadPreset(kPreset)));
        QSignalSpy failed(&view, &SweepView::sweepFailed);
        view.tpotLimitEdit()->setText(QStringLiteral("."));
        QVERIFY(!view.runSweep());
        QCOMPARE(failed.count(), 1);
        QVERIFY(view.statusLabel()->text().contains(QStringLiteral("TPOT limit")));
        QVERIFY(!view.isRunning());
        // The micro-batch field is not read for a serving sweep, whatever it holds.
        view.microBatchEdit()->setText(QStringLiteral("0"));
        view.tpotLimitEdit()->setText(QStringLiteral("50"));
        QVERIFY(view.runSweep());
        view.cancel();
    }

    void rankedRowsByThroughput()
    {
        SweepView view;
        QVERIFY(runServing(view, QStringLiteral("50")));
        const SweepModel& model = *view.model();
        QAbstractItemModelTester tester(view.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        const SweepResult& r = *view.sweepResult();
        QVERIFY(model.isServing());
        QCOMPARE(model.rowCount(), static_cast<int>(r.ranked.size()));
        QVERIFY(model.rowCount() > 1);
        const int tokens = model.column(SweepField::TokensPerGpu);
        QVERIFY(tokens > 0);
        // Model rows in rank order: descending tokens/s per GPU, rank = row + 1.
        for (int row = 0; row < model.rowCount(); ++row) {
            QCOMPARE(model.data(model.index(row, SweepModel::RankColumn), SweepModel::RawValueRole).toInt(), row + 1);
            if (row > 0)
                QVERIFY(model.data(model.index(row - 1, tokens), SweepModel::RawValueRole).toDouble()
                    >= model.data(model.index(row, tokens), SweepModel::RawValueRole).toDouble());
        }
        // The table is sorted by that column, descending, with its header saying so.
        QCOMPARE(view.table()->horizontalHeader()->sortIndicatorSection(), tokens);
        QCOMPARE(view.table()->horizontalHeader()->sortIndicatorOrder(), Qt::DescendingOrder);
        const QSortFilterProxyModel& proxy = *view.proxyModel();
        for (int row = 0; row < proxy.rowCount(); ++row)
            QCOMPARE(proxy.mapToSource(proxy.index(row, 0)).row(), row);

        // A training sweep afterwards: its own columns, back in rank order by step time.
        view.setResult(configOnly(loadPreset("tiny")));
        view.gpusSpin()->setValue(2);
        QSignalSpy finished(&view, &SweepView::sweepFinished);
        QVERIFY(view.runSweep());
        QVERIFY(finished.wait(60000));
        QVERIFY(!model.isServing());
        QCOMPARE(model.columnCount(), int(SweepModel::ColumnCount));
        QCOMPARE(view.table()->horizontalHeader()->sortIndicatorSection(), int(SweepModel::RankColumn));
        QCOMPARE(view.table()->horizontalHeader()->sortIndicatorOrder(), Qt::AscendingOrder);
        QCOMPARE(model.column(SweepField::TokensPerGpu), -1);
    }

    void servingColumns_data()
    {
        servingPresets();
    }

    void servingColumns()
    {
        QFETCH(QString, preset);
        QFETCH(int, gpus);
        // As wide as the Sweep tab of a 1366-pixel main window beside its config dock.
        SweepView view;
        QVERIFY(showAt(view, QSize(990, 700)));
        QVERIFY(runServing(view, QStringLiteral("50"), preset.toLatin1().constData(), gpus));
        const SweepResult& r = *view.sweepResult();
        const SweepModel& model = *view.model();

        // Units: one per column, the largest value's (durationUnitFor: ns, µs, ms or s), named in the title.
        double maxTtft = 0;
        for (const auto* list : { &r.ranked, &r.rejected })
            for (const SweepCandidate& c : *list)
                if (sweepPlanIsTimed(c))
                    maxTtft = std::max(maxTtft, c.ttftS);
        const DurationUnit tpotUnit = ::tpotUnit(r);
        const DurationUnit ttftUnit = durationUnitFor(maxTtft);
        const QString tpotTitle = QStringLiteral("TPOT (%1)").arg(QString::fromUtf8(tpotUnit.suffix).trimmed());
        const QString ttftTitle = QStringLiteral("TTFT (%1)").arg(QString::fromUtf8(ttftUnit.suffix).trimmed());
        // The plan's degrees and the serving figures: ep only for an MoE model (a dense model's plans all have ep 1),
        // no cp (plans that decode have cp 1), no rank (the row order under the sort by tokens/s), no training columns.
        const bool moe = loadPreset(preset.toLatin1().constData()).model.family == Family::Moe;
        QStringList titles { QStringLiteral("dp"), QStringLiteral("tp"), QStringLiteral("pp") };
        if (moe)
            titles << QStringLiteral("ep");
        titles << QStringLiteral("Tokens/s/GPU") << tpotTitle << ttftTitle << QStringLiteral("End peak\n(GiB)");
        QCOMPARE(visibleTitles(model, *view.table()->horizontalHeader()), titles);
        for (SweepField training : { SweepField::StepTime, SweepField::Mfu, SweepField::MicroBatch,
                 SweepField::Recompute, SweepField::Zero, SweepField::Schedule, SweepField::SequenceParallel })
            QCOMPARE(model.column(training), -1);
        QCOMPARE(view.table()->isColumnHidden(model.column(SweepField::Ep)), !moe);
        QVERIFY(view.table()->isColumnHidden(model.column(SweepField::Cp)));

        // Cells: the core's figures in the column's unit.
        for (int row = 0; row < model.rowCount(); ++row) {
            const SweepCandidate& c = *model.candidate(row);
            auto cell = [&](SweepField f) { return model.data(model.index(row, model.column(f))).toString(); };
            QCOMPARE(model.data(model.index(row, model.column(SweepField::Dp)), SweepModel::RawValueRole).toLongLong(),
                c.dp);
            QVERIFY(showsValue(cell(SweepField::TokensPerGpu), c.tokensPerSPerGpu));
            QVERIFY2(
                showsValue(cell(SweepField::Tpot), c.tpotS / tpotUnit.seconds), qPrintable(cell(SweepField::Tpot)));
            QVERIFY2(
                showsValue(cell(SweepField::Ttft), c.ttftS / ttftUnit.seconds), qPrintable(cell(SweepField::Ttft)));
            QVERIFY(showsValue(cell(SweepField::Peak), static_cast<double>(c.peakBytes) / (1024.0 * 1024 * 1024)));
            // The row's tooltip names the plan the serving way (ep when above 1), and how many sequences fit.
            const QString tip = model.data(model.index(row, 0), Qt::ToolTipRole).toString();
            QString plan = QStringLiteral("dp %1 \u00b7 tp %2 \u00b7 pp %3").arg(c.dp).arg(c.tp).arg(c.pp);
            if (c.ep > 1)
                plan += QStringLiteral(" \u00b7 ep %1").arg(c.ep);
            QVERIFY2(tip.startsWith(plan + QLatin1Char('\n')), qPrintable(tip));
            QVERIFY(tip.contains(QStringLiteral("up to %1 sequences fit").arg(formatExact(c.maxSequences))));
        }

        // The rejected tree: the reason, the plan and the serving figures.
        const SweepRejectedModel& rejected = *view.rejectedModel();
        QCOMPARE(
            visibleTitles(rejected, *view.rejectedTree()->header()), QStringList { QStringLiteral("Reason") } + titles);

        // Headers fit their titles: no column narrower than its title; beside the chart, the table shows every column
        // without scrolling.
        QHeaderView* header = view.table()->horizontalHeader();
        for (int column = 0; column < model.columnCount(); ++column)
            if (!header->isSectionHidden(column))
                QVERIFY2(header->sectionSize(column)
                        >= header->fontMetrics().horizontalAdvance(model.headerData(column, Qt::Horizontal).toString()),
                    qPrintable(model.headerData(column, Qt::Horizontal).toString()));
        QVERIFY2(header->length() <= view.table()->viewport()->width(),
            qPrintable(QStringLiteral("%1 > %2").arg(header->length()).arg(view.table()->viewport()->width())));
    }

    void screenshots_data()
    {
        // The Sweep tab's size in a main window of 1366 x 768 and of 1920 x 1080 beside the config dock.
        QTest::addColumn<QString>("preset");
        QTest::addColumn<int>("gpus");
        QTest::addColumn<QSize>("size");
        for (const auto& [preset, gpus] :
            { std::pair(QString::fromLatin1(kPreset), kGpus), std::pair(QStringLiteral("deepseek-v3-serving"), 32) }) {
            QTest::addRow("%s-1366x768", qPrintable(preset)) << preset << gpus << QSize(990, 660);
            QTest::addRow("%s-1920x1080", qPrintable(preset)) << preset << gpus << QSize(1545, 970);
        }
    }

    void screenshots()
    {
        // With STAGECRAFT_SCREENSHOT_DIR set: the fitting plans with the best one selected, then the rejected plans
        // with every group open, at both sizes.
        QFETCH(QString, preset);
        QFETCH(int, gpus);
        QFETCH(QSize, size);
        const QString dir = qEnvironmentVariable("STAGECRAFT_SCREENSHOT_DIR");
        if (dir.isEmpty())
            QSKIP("STAGECRAFT_SCREENSHOT_DIR is not set");
        SweepView view;
        QVERIFY(showAt(view, size));
        QVERIFY(runServing(view, QStringLiteral("50"), preset.toLatin1().constData(), gpus));
        view.table()->selectRow(0);
        QTest::qWait(50);
        const QString name =
            dir + QStringLiteral("/serving-sweep-%1").arg(QString::fromLatin1(QTest::currentDataTag()));
        QVERIFY(view.grab().save(name + QStringLiteral(".png")));
        view.rejectedTree()->parentWidget()->parentWidget()->findChild<QTabBar*>()->setCurrentIndex(1);
        view.rejectedTree()->expandAll();
        QTest::qWait(50);
        QVERIFY(view.grab().save(name + QStringLiteral("-rejected.png")));
    }

    void modelsSwitchLayouts()
    {
        // Training and serving results in turn, under the model testers: the column count changes with a reset.
        SweepModel model;
        SweepRejectedModel rejected;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester rejectedTester(&rejected, QAbstractItemModelTester::FailureReportingMode::QtTest);
        const auto serving = coreSweep(loadPreset(kPreset), kGpus, 0.050);
        const auto training = coreSweep(
            loadPreset("tiny", { QStringLiteral("model.layers=4"), QStringLiteral("training.global_batch=16") }), 4);
        for (const auto& result : { serving, training, serving }) {
            model.setResult(result);
            rejected.setResult(result);
            QCOMPARE(model.isServing(), result->serving);
            QCOMPARE(model.rowCount(), static_cast<int>(result->ranked.size()));
            QCOMPARE(model.columnCount(), result->serving ? 10 : int(SweepModel::ColumnCount));
            QCOMPARE(rejected.columnCount(), result->serving ? 10 : int(SweepRejectedModel::ColumnCount));
        }
        model.setResult(nullptr);
        rejected.setResult(nullptr);
        QCOMPARE(model.columnCount(), int(SweepModel::ColumnCount));
    }

    void servingParetoFrontByHand_data()
    {
        QTest::addColumn<QList<double>>("tpots");
        QTest::addColumn<QList<double>>("tokens");
        QTest::addColumn<QList<int>>("front");
        QTest::newRow("empty") << QList<double> {} << QList<double> {} << QList<int> {};
        // Faster plans with less throughput: every plan is on the front, by ascending TPOT.
        QTest::newRow("trade-off") << QList<double> { 0.03, 0.01, 0.02 } << QList<double> { 300.0, 100.0, 200.0 }
                                   << QList<int> { 1, 2, 0 };
        // 1 (20 ms, 200) is beaten by 0 (as fast, more throughput); 3 (30 ms, 250) by 2 (faster, as much); 0 and 4
        // are equal points: neither beats the other.
        QTest::newRow("ties") << QList<double> { 0.02, 0.02, 0.025, 0.03, 0.02 }
                              << QList<double> { 220.0, 200.0, 250.0, 250.0, 220.0 } << QList<int> { 0, 4, 2 };
    }

    void servingParetoFrontByHand()
    {
        QFETCH(QList<double>, tpots);
        QFETCH(QList<double>, tokens);
        QFETCH(QList<int>, front);
        std::vector<SweepCandidate> plans(static_cast<size_t>(tpots.size()));
        for (qsizetype i = 0; i < tpots.size(); ++i) {
            plans[static_cast<size_t>(i)].tpotS = tpots[i];
            plans[static_cast<size_t>(i)].tokensPerSPerGpu = tokens[i];
        }
        const std::vector<int> got = sweepServingParetoFront(plans);
        QCOMPARE(QList<int>(got.begin(), got.end()), front);
    }

    void chartPlotsThroughputAgainstTpot_data()
    {
        servingPresets();
    }

    void chartPlotsThroughputAgainstTpot()
    {
        QFETCH(QString, preset);
        QFETCH(int, gpus);
        SweepView view;
        QVERIFY(showAt(view, QSize(1366, 700)));
        QVERIFY(runServing(view, QStringLiteral("50"), preset.toLatin1().constData(), gpus));
        const SweepResult& r = *view.sweepResult();
        SweepChartView* chart = view.chartView();
        QVERIFY(chart->isServing());

        // One point per ranked plan at (TPOT in the axis unit, tokens/s per GPU).
        QCOMPARE(chart->fittingSeries()->count(), static_cast<qsizetype>(r.ranked.size()));
        // Rejected plans with an estimate are drawn up to 2.5 x the larger of the limit and the slowest fitting plan,
        // the others counted: over the limit as open circles, out of memory in grey.
        double slowestFitting = 0;
        for (const SweepCandidate& c : r.ranked)
            slowestFitting = std::max(slowestFitting, c.tpotS);
        const double cutoffS = 2.5 * std::max(slowestFitting, r.tpotLimitS);
        qsizetype over = 0, oom = 0, overHidden = 0, oomHidden = 0;
        std::vector<const SweepCandidate*> drawn;
        for (const SweepCandidate& c : r.ranked)
            drawn.push_back(&c);
        for (const SweepCandidate& c : r.rejected) {
            if (c.rejection != SweepRejection::OverTpotLimit && c.rejection != SweepRejection::OutOfMemory)
                continue;
            const bool hidden = c.tpotS > cutoffS;
            if (c.rejection == SweepRejection::OverTpotLimit)
                ++(hidden ? overHidden : over);
            else
                ++(hidden ? oomHidden : oom);
            if (!hidden)
                drawn.push_back(&c);
        }
        QCOMPARE(chart->overTpotLimitSeries()->count(), over);
        QCOMPARE(chart->outOfMemorySeries()->count(), oom);
        QCOMPARE(chart->hiddenOverTpotLimitCount(), overHidden);
        QCOMPARE(chart->hiddenOutOfMemoryCount(), oomHidden);

        // The TPOT axis is in the unit of the largest drawn TPOT or the limit; the throughput axis is logarithmic
        // when the drawn plans span more than a factor of 20.
        const QValueAxis* x = chart->memoryAxis();
        const QCategoryAxis* y = chart->timeAxis();
        double maxTpot = r.tpotLimitS, lo = 0, hi = 0;
        for (const SweepCandidate* c : drawn) {
            maxTpot = std::max(maxTpot, c->tpotS);
            lo = lo > 0 ? std::min(lo, c->tokensPerSPerGpu) : c->tokensPerSPerGpu;
            hi = std::max(hi, c->tokensPerSPerGpu);
        }
        const DurationUnit unit = durationUnitFor(maxTpot);
        QCOMPARE(
            x->titleText(), QStringLiteral("time per output token (%1)").arg(QString::fromUtf8(unit.suffix).trimmed()));
        QVERIFY(y->titleText().startsWith(QStringLiteral("output tokens/s per GPU")));
        QCOMPARE(chart->isTimeAxisLogarithmic(), hi / lo > 20);
        for (size_t i = 0; i < r.ranked.size(); ++i) {
            const QPointF p = chart->fittingSeries()->at(static_cast<qsizetype>(i));
            const double tokens = r.ranked[i].tokensPerSPerGpu;
            QCOMPARE(p.x(), r.ranked[i].tpotS / unit.seconds);
            QCOMPARE(p.y(), chart->isTimeAxisLogarithmic() ? std::log10(tokens) : tokens);
        }
        for (const QScatterSeries* s :
            { chart->fittingSeries(), chart->overTpotLimitSeries(), chart->outOfMemorySeries() })
            for (const QPointF& p : s->points()) {
                QVERIFY(p.x() >= x->min() && p.x() <= x->max());
                QVERIFY(p.y() >= y->min() && p.y() <= y->max());
            }
        const double limitX = 0.050 / unit.seconds;
        for (const QPointF& p : chart->overTpotLimitSeries()->points())
            QVERIFY(p.x() > limitX);
        for (const QPointF& p : chart->fittingSeries()->points())
            QVERIFY(p.x() <= limitX);
        // The limit: a vertical line at 50 ms across the plot.
        QCOMPARE(chart->tpotLimitSeries()->count(), 2);
        QCOMPARE(chart->tpotLimitSeries()->at(0).x(), limitX);
        QCOMPARE(chart->tpotLimitSeries()->at(1).x(), limitX);
        QCOMPARE(chart->tpotLimitSeries()->at(0).y(), y->min());
        QCOMPARE(chart->tpotLimitSeries()->at(1).y(), y->max());
        QVERIFY(chart->hbmSeries()->points().isEmpty());
        // The best plan, rank 1, marked.
        QCOMPARE(chart->bestSeries()->count(), 1);
        QCOMPARE(chart->bestSeries()->at(0), chart->fittingSeries()->at(0));
        // The Pareto front: the plans no other beats in both TPOT and throughput.
        const SweepModel& model = *view.model();
        qsizetype front = 0;
        for (int row = 0; row < model.rowCount(); ++row) {
            const bool onFront = !dominated(*model.candidate(row), r.ranked);
            QCOMPARE(model.isPareto(row), onFront);
            front += onFront;
        }
        QVERIFY(model.isPareto(0)); // the highest throughput is beaten by nothing
        QCOMPARE(chart->paretoPointSeries()->count(), front);
        QCOMPARE(chart->paretoSeries()->count(), 2 * front - 1);
        // The legend names them; the tooltip of a point gives its serving figures.
        const QString legend = view.legendLabel()->text();
        QVERIFY2(legend.contains(QStringLiteral("TPOT&nbsp;limit&nbsp;50.0&nbsp;ms")), qPrintable(legend));
        QVERIFY(legend.contains(QStringLiteral("over&nbsp;the&nbsp;TPOT&nbsp;limit&nbsp;(%1").arg(over + overHidden)));
        QVERIFY(legend.contains(QStringLiteral("best:")));
        const QString tip = chart->toolTipText({ true, 0 });
        QVERIFY(tip.contains(
            QString::number(r.ranked[0].tokensPerSPerGpu, 'f', 1) + QStringLiteral(" output tokens/s per GPU")));
        QVERIFY(tip.contains(QStringLiteral("TPOT ") + formatDuration(r.ranked[0].tpotS)));
        QVERIFY(!tip.contains(QStringLiteral("MFU")));
    }

    void choosingAPlanSetsTheParallelism()
    {
        SweepView view;
        QVERIFY(showAt(view, QSize(1366, 700)));
        QVERIFY(runServing(view, QStringLiteral("50")));
        const Config base = view.sweepConfig();
        const SweepModel& model = *view.model();
        QSignalSpy chosen(&view, &SweepView::planChosen);
        for (int row = 0; row < model.rowCount(); ++row) {
            const SweepCandidate& c = *model.candidate(row);
            QVERIFY(view.chooseRow(row));
            QCOMPARE(chosen.count(), 1);
            const auto config = chosen.takeFirst().at(0).value<Config>();
            QCOMPARE(config.parallelism.dp, c.dp);
            QCOMPARE(config.parallelism.tp, c.tp);
            QCOMPARE(config.parallelism.pp, c.pp);
            QCOMPARE(config.parallelism.ep, c.ep);
            QCOMPARE(config.parallelism.worldSize(), int64_t(kGpus));
            // Still the same serving workload.
            QVERIFY(isInference(config));
            QVERIFY(config.inference == base.inference);
            QVERIFY(config.model == base.model);
        }
        // Clicking the best point chooses the best plan.
        SweepChartView* chart = view.chartView();
        const std::optional<QPointF> pos = chart->viewPosition({ true, 0 });
        QVERIFY(pos);
        QTest::mouseClick(chart->viewport(), Qt::LeftButton, {}, pos->toPoint());
        QCOMPARE(chosen.count(), 1);
        const auto best = chosen.takeFirst().at(0).value<Config>();
        QVERIFY(isSweepPlan(best, *model.candidate(0)));
        // Loaded, it is the current plan: starred on the chart, marked in the table.
        view.setResult(configOnly(best));
        QCOMPARE(chart->currentPlan(), (SweepPlanRef { true, 0 }));
        QCOMPARE(model.currentRow(), 0);
        // The preset's own plan (tp 8) is found among the sweep's plans.
        view.setResult(configOnly(loadPreset(kPreset)));
        const SweepCandidate* own = sweepCandidate(*view.sweepResult(), chart->currentPlan());
        QVERIFY(own);
        QCOMPARE(own->tp, int64_t(8));
        QCOMPARE(own->dp * own->pp, int64_t(1));
    }

    void planLoadsIntoTheEditorUndoably()
    {
        // As a user: the serving preset in the main window, its Sweep tab run with the TPOT limit, the best plan
        // loaded as one undoable edit; Undo restores the preset's tp 8.
        MainWindow window(false);
        QSignalSpy shown(&window, &MainWindow::resultShown);
        QVERIFY(window.newFromPreset(QString::fromLatin1(kPreset)));
        QVERIFY(shown.wait(120000));
        auto* sweep = window.findChild<SweepView*>();
        QVERIFY(sweep);
        QVERIFY(window.showTab(QStringLiteral("sweep")));
        QVERIFY(sweep->tpotLimitEdit()->isVisibleTo(&window));
        QCOMPARE(sweep->gpusSpin()->value(), kGpus);
        QSignalSpy finished(sweep, &SweepView::sweepFinished);
        QVERIFY(sweep->runSweep());
        QVERIFY(finished.wait(120000));
        const SweepCandidate best = sweep->sweepResult()->ranked.front();
        QVERIFY(sweep->chooseRow(0));
        const Config& edited = window.document()->config();
        QVERIFY(isSweepPlan(edited, best));
        QVERIFY(isInference(edited));
        QVERIFY(shown.wait(120000));
        QCOMPARE(window.shownResult()->config.parallelism.tp, best.tp);
        window.document()->undoStack()->undo();
        QCOMPARE(window.document()->config().parallelism.tp, int64_t(8));
        QCOMPARE(window.document()->config().parallelism.dp, int64_t(1));
    }
};

QTEST_MAIN(TestServingSweep)
#include "tst_servingsweep.moc"
