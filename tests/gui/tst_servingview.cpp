// SPDX-License-Identifier: MIT
// The Serving tab (issue #28): a serving config's requests simulated over time, its summary, the three charts and
// the SLO sizing table, each compared with the core's own simulateServing() / sloSweep() of the same controls.
// With STAGECRAFT_SHOTS=<dir> it also saves the tab for llama3-70b-serving under an underloaded (2 requests/s) and
// an overloaded (40 requests/s) rate, and with the sizing for 20 requests/s, at 1440x900 and 1366x768.
#include "charts/servingview.h"
#include "estimate/stepestimate.h"
#include "sweephelpers.h"

#include <QChart>
#include <QChartView>
#include <QLabel>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableWidget>
#include <QtTest>

using namespace stagecraft;
using stagecraft::test::configOnly;
using stagecraft::test::loadPreset;

namespace {

bool settle(ServingView& view)
{
    if (view.isSettled())
        return true;
    QSignalSpy settled(&view, &ResultView::settled);
    return settled.wait(180000);
}

QList<QChartView*> charts(ServingView& view)
{
    return view.findChildren<QChartView*>();
}

} // namespace

class TestServingView : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void simulatesTheConfig()
    {
        // tiny at 300 requests/s: the view's figures are the core's for the same config.
        const Config config = loadPreset("tiny",
            { QStringLiteral("workload=inference"), QStringLiteral("inference.batch=1"),
                QStringLiteral("inference.prompt_tokens=64"), QStringLiteral("inference.output_tokens=16"),
                QStringLiteral("inference.arrival=poisson"), QStringLiteral("inference.request_rate=300"),
                QStringLiteral("inference.requests=400"), QStringLiteral("inference.slo_ttft_ms=20"),
                QStringLiteral("inference.slo_tpot_ms=2"), QStringLiteral("cluster.gpu=h100-sxm") });
        ServingView view;
        view.resize(1366, 768);
        view.show();
        view.setResult(configOnly(config));
        QVERIFY(settle(view));
        const std::shared_ptr<const ServingSimulation> shown = view.simulation();
        QVERIFY(shown);
        std::string error;
        const std::optional<GpuSpec> gpu = gpuForConfig(config, error);
        ServingSimulation core;
        QVERIFY(simulateServing(config, *gpu, EstimateOptions {}, core, error));
        QCOMPARE(shown->finished, core.finished);
        QCOMPARE(shown->ttft.p99, core.ttft.p99);
        QCOMPARE(shown->tpot.p99, core.tpot.p99);
        QCOMPARE(shown->goodputFraction, core.goodputFraction);
        // The summary names the served rate and the p99s; the charts hold the series.
        const QString summary = view.findChild<QLabel*>(QStringLiteral("servingSummary"))->text();
        QVERIFY2(summary.contains(QStringLiteral("400 requests")), qPrintable(summary));
        QVERIFY(summary.contains(QStringLiteral("p99")));
        const QList<QChartView*> views = charts(view);
        QCOMPARE(views.size(), 3);
        for (QChartView* v : views) {
            QVERIFY(!v->chart()->series().isEmpty());
            for (QAbstractSeries* s : v->chart()->series())
                QVERIFY(!static_cast<QLineSeries*>(s)->points().isEmpty());
        }
        // The running series is the core's series, point for point.
        auto* running = static_cast<QLineSeries*>(views[0]->chart()->series()[0]);
        QCOMPARE(running->count(), int(core.series.size()));
        for (int i = 0; i < running->count(); ++i)
            QCOMPARE(running->at(i).y(), core.series[size_t(i)].running);
    }

    void latencyAxisInPlainDigits()
    {
        // Overloaded (llama3-70b-serving at 40 requests/s on one replica: the queue grows, end-to-end latencies
        // reach minutes), the latency axis spans up to 10^6 ms; its decades are labelled in plain digits (%g wrote
        // 1e+06 beside 100000).
        ServingView view;
        view.resize(1366, 768);
        view.show();
        view.setResult(configOnly(loadPreset("llama3-70b-serving",
            { QStringLiteral("inference.arrival=poisson"), QStringLiteral("inference.request_rate=40"),
                QStringLiteral("inference.requests=2000") })));
        QVERIFY(settle(view));
        const QList<QChartView*> views = charts(view);
        QCOMPARE(views.size(), 3);
        const QList<QAbstractAxis*> axes = views[2]->chart()->axes(Qt::Horizontal);
        QCOMPARE(axes.size(), 1);
        auto* log = qobject_cast<QLogValueAxis*>(axes.front());
        QVERIFY(log);
        QVERIFY2(log->max() >= 1e6, qPrintable(QString::number(log->max())));
        for (double tick = log->min(); tick <= log->max(); tick *= 10) {
            const QString label = QString::asprintf(qPrintable(log->labelFormat()), tick);
            QVERIFY2(!label.contains(QLatin1Char('e')), qPrintable(label));
        }
    }

    void sizesForARate()
    {
        const Config config = loadPreset("tiny",
            { QStringLiteral("workload=inference"), QStringLiteral("inference.batch=1"),
                QStringLiteral("inference.prompt_tokens=64"), QStringLiteral("inference.output_tokens=16"),
                QStringLiteral("cluster.gpu=h100-sxm"), QStringLiteral("cluster.gpus_per_node=2") });
        ServingView view;
        view.setResult(configOnly(config));
        QVERIFY(settle(view));
        view.setRequestRate(400, false);
        view.sizeForRate();
        QVERIFY(settle(view));
        auto* table = view.findChild<QTableWidget*>();
        QVERIFY(table);
        QVERIFY(table->rowCount() > 0);
        // Ranked by GPUs: the GPUs column never decreases.
        for (int r = 1; r < table->rowCount(); ++r)
            QVERIFY(table->item(r - 1, 2)->text().toLongLong() <= table->item(r, 2)->text().toLongLong());
    }

    void screenshots()
    {
        const QByteArray dir = qgetenv("STAGECRAFT_SHOTS");
        if (dir.isEmpty())
            QSKIP("set STAGECRAFT_SHOTS=<dir> to save the Serving tab's screenshots");
        for (const QSize size : { QSize(1440, 900), QSize(1366, 768) }) {
            const QString suffix = QStringLiteral("-%1x%2.png").arg(size.width()).arg(size.height());
            for (const double rate : { 2.0, 40.0 }) {
                ServingView view;
                view.resize(size);
                view.show();
                QVERIFY(QTest::qWaitForWindowExposed(&view));
                view.setResult(configOnly(loadPreset("llama3-70b-serving",
                    { QStringLiteral("inference.arrival=poisson"),
                        QStringLiteral("inference.request_rate=%1").arg(rate),
                        QStringLiteral("inference.requests=2000") })));
                QVERIFY(settle(view));
                if (rate == 40.0) {
                    view.setRequestRate(20, false);
                    view.sizeForRate();
                    QVERIFY(settle(view));
                }
                QTest::qWait(300); // the charts lay out their axes on the next events
                QVERIFY(view.grab().save(QString::fromUtf8(dir)
                    + (rate < 10 ? QStringLiteral("/serving-underloaded") : QStringLiteral("/serving-overloaded-sized"))
                    + suffix));
            }
        }
    }
};

QTEST_MAIN(TestServingView)
#include "tst_servingview.moc"
