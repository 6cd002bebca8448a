// SPDX-License-Identifier: MIT
// The Communication view: the log colour scale, the heatmap cell geometry, and the CommView widget (worker-built
// matrix image, hover text, filters, groups table) over real synthesis results.
#include "config/configloader.h"
#include "guihelpers.h"
#include "heatmap/colorscale.h"
#include "heatmap/commmatrix.h"
#include "heatmap/commview.h"
#include "heatmap/fabriclevelpanel.h"
#include "heatmap/heatmapgeometry.h"
#include "heatmap/heatmapwidget.h"
#include "models/commmatrixmodel.h"
#include "models/groupsmodel.h"
#include "synthesis/synthesis.h"

#include <QComboBox>
#include <QLabel>
#include <QSignalSpy>
#include <QTableView>
#include <QTableWidget>
#include <QtTest>
#include <cmath>

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

bool waitForMatrix(CommView& view)
{
    if (!view.isUpdating())
        return true;
    QSignalSpy spy(&view, &CommView::matrixAvailable);
    return spy.wait(20000);
}

constexpr double kKiB = 1024.0;
constexpr double kMiB = 1024.0 * kKiB;
constexpr double kGiB = 1024.0 * kMiB;

} // namespace

class TestCommView : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void colorScalePosition_data()
    {
        QTest::addColumn<double>("minValue");
        QTest::addColumn<double>("maxValue");
        QTest::addColumn<double>("value");
        QTest::addColumn<double>("position");
        QTest::newRow("min") << kKiB << kGiB << kKiB << 0.0;
        QTest::newRow("max") << kKiB << kGiB << kGiB << 1.0;
        // 2^20 is the geometric mean of 2^10 and 2^30: the middle of a log scale.
        QTest::newRow("geometric mean") << kKiB << kGiB << kMiB << 0.5;
        QTest::newRow("a quarter") << kKiB << kGiB << 32 * kKiB << 0.25; // 2^15: (15 - 10) / 20
        QTest::newRow("below min clamps") << kKiB << kGiB << 1.0 << 0.0;
        QTest::newRow("above max clamps") << kKiB << kGiB << 4 * kGiB << 1.0;
        QTest::newRow("single value") << kMiB << kMiB << kMiB << 1.0;
        QTest::newRow("swapped bounds") << kGiB << kKiB << kMiB << 0.5;
    }

    void colorScalePosition()
    {
        QFETCH(double, minValue);
        QFETCH(double, maxValue);
        QFETCH(double, value);
        QFETCH(double, position);
        const LogColorScale scale(minValue, maxValue);
        QVERIFY2(
            std::abs(scale.position(value) - position) < 1e-12, qPrintable(QString::number(scale.position(value))));
        if (minValue != maxValue && position > 0 && position < 1)
            QVERIFY(std::abs(scale.valueAt(position) - value) < 1e-6 * value);
    }

    void viridis_data()
    {
        QTest::addColumn<double>("t");
        QTest::addColumn<QString>("color");
        // viridisLite::viridis(9) (matplotlib's viridis sampled at 0, 1/8, ..., 1).
        QTest::newRow("0") << 0.0 << QStringLiteral("#440154");
        QTest::newRow("1/8") << 0.125 << QStringLiteral("#472d7b");
        QTest::newRow("1/2") << 0.5 << QStringLiteral("#21908c");
        QTest::newRow("7/8") << 0.875 << QStringLiteral("#aadc32");
        QTest::newRow("1") << 1.0 << QStringLiteral("#fde725");
        QTest::newRow("clamped below") << -3.0 << QStringLiteral("#440154");
        QTest::newRow("clamped above") << 7.0 << QStringLiteral("#fde725");
    }

    void viridis()
    {
        QFETCH(double, t);
        QFETCH(QString, color);
        QCOMPARE(LogColorScale::viridis(t).name(), color);
    }

    void viridisLightnessIsMonotonic()
    {
        // viridis is designed with monotonically increasing lightness (van der Walt & Smith, SciPy 2015 talk
        // "A Better Default Colormap for Matplotlib"), so larger cells always read lighter, also in grey.
        // Lightness here is CIE 1976 L* of the sRGB colour (IEC 61966-2-1 linearisation, Rec. 709 luminance).
        auto linear = [](double c) { return c <= 0.04045 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4); };
        auto lStar = [&](const QColor& c) {
            const double y = 0.2126 * linear(c.redF()) + 0.7152 * linear(c.greenF()) + 0.0722 * linear(c.blueF());
            const double f = y > 216.0 / 24389.0 ? std::cbrt(y) : (24389.0 / 27.0 * y + 16) / 116;
            return 116 * f - 16;
        };
        double previous = -1;
        for (int i = 0; i <= 64; ++i) {
            const double lightness = lStar(LogColorScale::viridis(i / 64.0));
            QVERIFY2(lightness > previous, qPrintable(QString::number(i)));
            previous = lightness;
        }
        // From dark purple (L* ~15) to light yellow (L* ~91).
        QVERIFY(lStar(LogColorScale::viridis(0)) < 20);
        QVERIFY(lStar(LogColorScale::viridis(1)) > 85);
    }

    void byteTicks_data()
    {
        QTest::addColumn<double>("minValue");
        QTest::addColumn<double>("maxValue");
        QTest::addColumn<int>("maxTicks");
        QTest::addColumn<QList<double>>("expected");
        // Powers of 4 inside [1 KiB, 1 GiB]: 2^10, 2^12, ..., 2^30 (11 values).
        QList<double> all;
        for (int e = 10; e <= 30; e += 2)
            all << std::ldexp(1.0, e);
        QTest::newRow("all fit") << kKiB << kGiB << 20 << all;
        // Thinned to 4: every third, starting at a whole binary unit (1 KiB).
        QTest::newRow("thinned") << kKiB << kGiB << 4
                                 << QList<double> { std::ldexp(1.0, 10), std::ldexp(1.0, 16), std::ldexp(1.0, 22),
                                        std::ldexp(1.0, 28) };
        QTest::newRow("narrow range") << 5.0 * kMiB << 6.0 * kMiB << 5 << QList<double> {};
        QTest::newRow("inside") << 3.0 << 20.0 << 5 << QList<double> { 4.0, 16.0 };
    }

    void byteTicks()
    {
        QFETCH(double, minValue);
        QFETCH(double, maxValue);
        QFETCH(int, maxTicks);
        QFETCH(QList<double>, expected);
        const std::vector<double> ticks = LogColorScale(minValue, maxValue).byteTicks(maxTicks);
        QCOMPARE(QList<double>(ticks.begin(), ticks.end()), expected);
    }

    void geometry_data()
    {
        QTest::addColumn<QRectF>("available");
        QTest::addColumn<int>("units");
        QTest::addColumn<QPointF>("point");
        QTest::addColumn<QPoint>("cell");
        QTest::addColumn<double>("side");
        // 300 px for 8 cells: 37 px cells, a 296 px square at the top-left of the available area.
        const QRectF a(10, 20, 500, 300);
        QTest::newRow("top-left cell") << a << 8 << QPointF(10, 20) << QPoint(0, 0) << 296.0;
        QTest::newRow("column 3 row 5") << a << 8 << QPointF(10 + 3 * 37 + 1, 20 + 5 * 37 + 36.5) << QPoint(3, 5)
                                        << 296.0;
        QTest::newRow("last cell") << a << 8 << QPointF(10 + 295.9, 20 + 295.9) << QPoint(7, 7) << 296.0;
        QTest::newRow("right of the plot") << a << 8 << QPointF(10 + 296, 20) << QPoint(-1, -1) << 296.0;
        QTest::newRow("above the plot") << a << 8 << QPointF(50, 19.9) << QPoint(-1, -1) << 296.0;
        // More units than pixels: fractional cells over the whole square.
        QTest::newRow("dense") << QRectF(0, 0, 100, 100) << 512 << QPointF(99.9, 0.1) << QPoint(511, 0) << 100.0;
        QTest::newRow("no units") << a << 0 << QPointF(20, 30) << QPoint(-1, -1) << 300.0;
    }

    void geometry()
    {
        QFETCH(QRectF, available);
        QFETCH(int, units);
        QFETCH(QPointF, point);
        QFETCH(QPoint, cell);
        QFETCH(double, side);
        const HeatmapGeometry g = HeatmapGeometry::fit(available, units);
        QCOMPARE(g.plot.width(), side);
        QCOMPARE(g.plot.height(), side);
        QCOMPARE(g.plot.topLeft(), available.topLeft());
        QCOMPARE(g.cellAt(point), cell);
        if (cell.x() >= 0)
            QVERIFY(g.cellRect(cell.y(), cell.x()).contains(point));
    }

    void commViewTiny()
    {
        const auto r = synth("tiny", dp2tp2pp2());
        CommView view;
        view.resize(1400, 900);
        view.setResult(r);
        QVERIFY(waitForMatrix(view));
        QCOMPARE(int(view.options().grouping), int(CommGrouping::Rank));
        // gpus_per_node = 8 holds the whole world: no node grouping; stage, dp replica and tp rank have 2 units each.
        QStringList items;
        for (int i = 0; i < view.groupingCombo()->count(); ++i)
            items << view.groupingCombo()->itemText(i);
        QCOMPARE(items,
            QStringList({ QStringLiteral("rank (8)"), QStringLiteral("tp rank (2)"), QStringLiteral("dp replica (2)"),
                QStringLiteral("stage (2)") }));
        const CommMatrix& m = view.matrixModel()->matrix();
        QCOMPARE(m.units, int64_t(8));
        QCOMPARE(view.heatmap()->image().size(), QSize(8, 8));
        // Pixels: the colour scale's colour for traffic, the empty colour for none (rank 0 never sends to itself).
        QCOMPARE(view.heatmap()->image().pixel(4, 0), view.heatmap()->scale().color(m.at(0, 4)).rgb());
        QCOMPARE(QColor(view.heatmap()->image().pixel(0, 0)), HeatmapWidget::emptyCellColor());
        QCOMPARE(view.heatmap()->scale().maxValue(), m.maxCell);
        QCOMPARE(view.groupsTable()->model()->rowCount(), int(r->groups.groupCount()));

        // Hover the cell rank 0 -> rank 4: the label states the pair and its bytes.
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        const HeatmapGeometry g = view.heatmap()->geometry();
        QTest::mouseMove(view.heatmap(), g.cellRect(0, 4).center().toPoint());
        QCOMPARE(view.heatmap()->hoveredCell(), QPoint(4, 0));
        QCOMPARE(view.hoverLabel()->text(), m.cellText(0, 4));
        QVERIFY(view.hoverLabel()->text().startsWith(QStringLiteral("rank 0 \u2192 rank 4: ")));

        // Only send/recv: the matrix total is what the programs send, times the ranks of each class.
        CommMatrixOptions o = view.options();
        o.kinds = 1u << unsigned(CommKind::SendRecv);
        view.setOptions(o);
        QVERIFY(waitForMatrix(view));
        const double sends = double(r->summaries[0].sendBytes) * double(r->summaries[0].ranks)
            + double(r->summaries[1].sendBytes) * double(r->summaries[1].ranks);
        QCOMPARE(view.matrixModel()->matrix().total, sends);

        // Selecting a group marks its members: the first tp group is ranks {0, 1}.
        view.setGrouping(CommGrouping::Stage);
        QVERIFY(waitForMatrix(view));
        QCOMPARE(view.heatmap()->image().size(), QSize(2, 2));
        QCOMPARE(view.groupingCombo()->currentText(), QStringLiteral("stage (2)"));
        view.groupsTable()->selectRow(0);
        QCOMPARE(view.groupsTable()->currentIndex().data(GroupsModel::MembersRole).value<QList<qint64>>(),
            QList<qint64>({ 0, 1 }));
    }

    void commViewLarge()
    {
        const auto r = synth("llama3-70b", llama70b());
        CommView view;
        view.resize(1400, 900);
        view.setResult(r);
        QVERIFY(waitForMatrix(view));
        QCOMPARE(int(view.options().grouping), int(CommGrouping::Node));
        QCOMPARE(view.groupingCombo()->currentText(), QStringLiteral("node (128)"));
        QCOMPARE(view.heatmap()->image().size(), QSize(128, 128));
        QCOMPARE(view.groupsModel()->rowCount(), int(r->groups.groupCount()));
        QVERIFY(view.summaryLabel()->text().contains(QLatin1String("1,024 ranks")));
        // A filter that leaves nothing: no image, the heatmap says why.
        CommMatrixOptions o = view.options();
        o.kinds = 1u << unsigned(CommKind::AllToAll); // a dense model has no all-to-all
        view.setOptions(o);
        QVERIFY(waitForMatrix(view));
        QCOMPARE(view.matrixModel()->matrix().total, 0.0);
        QVERIFY(view.heatmap()->image().isNull());
    }

    void singleGpuAndReset()
    {
        CommView view;
        view.setResult(synth("tiny", {}));
        QVERIFY(waitForMatrix(view));
        QCOMPARE(view.matrixModel()->rowCount(), 1);
        QCOMPARE(view.matrixModel()->matrix().total, 0.0); // one GPU talks to nobody
        QVERIFY(view.heatmap()->image().isNull());
        QCOMPARE(view.groupsModel()->rowCount(), 0);
        view.setResult(nullptr);
        QCOMPARE(view.matrixModel()->rowCount(), 0);
        QVERIFY(!view.isEnabled());
    }

    void bytesByFabricLevel()
    {
        // llama3-70b dp16 tp8 pp8 (1,024 ranks, 128 nodes) on the DGX SuperPOD: tp stays in a node's NVLink, a dp
        // group is 16 consecutive nodes (one scalable unit of 32: its rail leaves), a pipeline send crosses 16 nodes,
        // inside a scalable unit from even stages and into the next unit (the spines) from odd ones. 4 units are
        // one pod: nothing reaches the core.
        const auto r = synth("llama3-70b", llama70b() << QStringLiteral("cluster.topology=dgx-h100-superpod"));
        CommView view;
        view.resize(1400, 900);
        view.setResult(r);
        QVERIFY(waitForMatrix(view));
        QTableWidget* t = view.levelPanel()->table();
        QCOMPARE(t->rowCount(), 4);
        auto text = [&](int row, int column) { return t->item(row, column)->text(); };
        QVERIFY(text(0, 3).contains(QLatin1String("tp")));
        QVERIFY(text(1, 3).contains(QLatin1String("dp")));
        QVERIFY(text(1, 3).contains(QLatin1String("send pp")));
        QCOMPARE(text(2, 3), QStringLiteral("send pp (direct)"));
        QCOMPARE(text(3, 3), QStringLiteral("nothing"));
        // The bytes of all levels add up to every rank's comm sizes (the report's comm_bytes times the ranks).
        const FabricLevelSummary s = summarizeFabricLevels(*r);
        double expected = 0;
        for (const ClassSummary& c : r->summaries) {
            double perRank = double(c.sendBytes);
            for (int64_t b : c.collectiveBytes)
                perRank += double(b);
            expected += perRank * double(c.ranks);
        }
        QCOMPARE(s.bytes[0] + s.bytes[1] + s.bytes[2] + s.bytes[3], expected);
        QCOMPARE(s.bytes[3], 0.0);
        // Without a topology: a node and the network.
        view.setResult(synth("llama3-70b", llama70b()));
        QVERIFY(waitForMatrix(view));
        QCOMPARE(t->rowCount(), 2);
        QCOMPARE(text(0, 0), QStringLiteral("Inside a node"));
    }

    void screenshot_data()
    {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<QStringList>("overrides");
        QTest::addColumn<QString>("file");
        QTest::newRow("tiny dp2 tp2 pp2") << QStringLiteral("tiny") << dp2tp2pp2() << QStringLiteral("comm-tiny.png");
        QTest::newRow("llama3-70b dp16 tp8 pp8")
            << QStringLiteral("llama3-70b") << llama70b() << QStringLiteral("comm-llama70b.png");
        QTest::newRow("llama3-70b on the DGX SuperPOD")
            << QStringLiteral("llama3-70b") << (llama70b() << QStringLiteral("cluster.topology=dgx-h100-superpod"))
            << QStringLiteral("comm-llama70b-superpod.png");
    }

    // Renders the view offscreen at 1400x900 with the largest cell hovered. With STAGECRAFT_SCREENSHOT_DIR set,
    // saves the picture there.
    void screenshot()
    {
        QFETCH(QString, preset);
        QFETCH(QStringList, overrides);
        QFETCH(QString, file);
        CommView view;
        view.resize(1400, 900);
        view.setResult(synth(qPrintable(preset), overrides));
        view.show();
        QVERIFY(waitForMatrix(view));
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        const CommMatrix& m = view.matrixModel()->matrix();
        int64_t best = 1;
        for (int64_t i = 0; i < m.units * m.units; ++i)
            if (i / m.units != i % m.units && m.bytes[size_t(i)] > m.bytes[size_t(best)])
                best = i;
        view.heatmap()->setHoveredCell(int(best / m.units), int(best % m.units));
        view.groupsTable()->selectRow(0);
        QTest::qWait(100);
        const QImage image = view.grab().toImage();
        QCOMPARE(image.size(), QSize(1400, 900));
        const QString dir = qEnvironmentVariable("STAGECRAFT_SCREENSHOT_DIR");
        if (!dir.isEmpty())
            QVERIFY(image.save(dir + QLatin1Char('/') + file));
    }
};

QTEST_MAIN(TestCommView)
#include "tst_commview.moc"
