// SPDX-License-Identifier: MIT
// MainWindow: an edit re-synthesizes after the debounce and the views follow; a failing edit keeps the last good
// result on screen; files with errors open into the YAML tab; tabs are addressable by name; the window fits a laptop.
#include "charts/memorychartview.h"
#include "charts/memoryview.h"
#include "config/configloader.h"
#include "config/configwriter.h"
#include "config/hfimport.h"
#include "estimate/stepestimate.h"
#include "models/comparisonmodel.h"
#include "models/diagnosticmodel.h"
#include "models/overviewmodel.h"
#include "session/configdocument.h"
#include "session/synthesissession.h"
#include "sweep/sweepchartview.h"
#include "sweep/sweepview.h"
#include "synthesis/synthesis.h"
#include "widgets/configeditor.h"
#include "widgets/configform.h"
#include "widgets/exportdialog.h"
#include "widgets/int64spinbox.h"
#include "widgets/layouteditor.h"
#include "widgets/mainwindow.h"
#include "widgets/overviewview.h"
#include "widgets/reportview.h"
#include "widgets/resultview.h"

#include <QAction>
#include <QDialogButtonBox>
#include <QElapsedTimer>
#include <QHeaderView>
#include <QLabel>
#include <QLineSeries>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QToolButton>
#include <QUndoStack>
#include <QtTest>
#include <algorithm>

using namespace stagecraft;

namespace {

constexpr int kTimeoutMs = 60'000;

Int64SpinBox* spin(const MainWindow& window, const char* key)
{
    auto* box = qobject_cast<Int64SpinBox*>(window.configEditor()->form()->fieldWidget(QString::fromLatin1(key)));
    if (!box)
        qFatal("no spin box for %s", key);
    return box;
}

qint64 ranksOfClass0(const MainWindow& window)
{
    const OverviewModel* model = window.overviewView()->model();
    return model->data(model->index(0, OverviewModel::RanksColumn), OverviewModel::RawValueRole).toLongLong();
}

/// The widgets with the widest (or tallest) minimum size hints, for a failure message: where the minimum comes from.
QString largestMinimums(const QWidget& window, bool byHeight)
{
    QList<QWidget*> widgets = window.findChildren<QWidget*>();
    auto extent = [byHeight](const QWidget* w) {
        const QSize s = w->minimumSizeHint().expandedTo(w->minimumSize());
        return byHeight ? s.height() : s.width();
    };
    std::sort(
        widgets.begin(), widgets.end(), [&](const QWidget* a, const QWidget* b) { return extent(a) > extent(b); });
    QStringList lines;
    for (const QWidget* w : widgets.mid(0, 40)) {
        QString path;
        for (const QObject* o = w; o && o != &window; o = o->parent())
            path.prepend(QString::fromLatin1(o->metaObject()->className()) + QLatin1Char('#') + o->objectName()
                + QLatin1Char('/'));
        lines << QStringLiteral("%1 %2").arg(extent(w)).arg(path);
    }
    return lines.join(QLatin1Char('\n'));
}

/// Waits until the current tab's view has finished its work for the shown result.
bool waitUntilSettled(const MainWindow& window)
{
    ResultView* view = window.currentResultView();
    return view && (view->isSettled() || QSignalSpy(view, &ResultView::settled).wait(kTimeoutMs));
}

} // namespace

class TestMainWindow : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QCoreApplication::setOrganizationName(QStringLiteral("StagecraftTest"));
    }

    void opensPresetAndShowsResult()
    {
        MainWindow window(false);
        QSignalSpy shown(&window, &MainWindow::resultShown);
        QVERIFY(window.newFromPreset(QStringLiteral("tiny")));
        QVERIFY(shown.wait(kTimeoutMs));
        QVERIFY(window.shownResult());
        QCOMPARE(window.overviewView()->model()->result(), window.shownResult());
        QCOMPARE(window.windowTitle(), QStringLiteral("tiny (preset)[*]"));
        QVERIFY(!window.isWindowModified());
        // Views off screen get the result when their tab is shown: the report tab then shows the core's text.
        QVERIFY(!window.hasCurrentResult(window.reportView()));
        QVERIFY(window.reportView()->textEdit()->toPlainText().isEmpty());
        QVERIFY(window.showTab(QStringLiteral("report")));
        QVERIFY(window.hasCurrentResult(window.reportView()));
        QVERIFY(window.reportView()->textEdit()->toPlainText().startsWith(QLatin1String("tiny")));
        const auto status = window.findChild<QLabel*>(QStringLiteral("synthesisStatus"));
        QVERIFY(status);
        // tiny: dp = tp = pp = cp = 1, so 1 rank in 1 class.
        QVERIFY2(
            status->text().startsWith(QLatin1String("Synthesized 1 rank, 1 class in ")), qPrintable(status->text()));
        QVERIFY(!window.findChild<QToolButton*>(QStringLiteral("cancelButton"))->isEnabled());
    }

    void editingTpChangesTheWorld_data()
    {
        QTest::addColumn<QString>("key");
        QTest::addColumn<qint64>("value");
        QTest::addColumn<qint64>("ranksPerClass");
        QTest::addColumn<QString>("world");
        // tiny has dp = tp = pp = cp = 1; ranks per class = dp * tp * cp (one class per pipeline stage).
        QTest::newRow("tp 2") << QStringLiteral("parallelism.tp") << qint64(2) << qint64(2) << QStringLiteral("2 GPUs");
        QTest::newRow("tp 4") << QStringLiteral("parallelism.tp") << qint64(4) << qint64(4) << QStringLiteral("4 GPUs");
        QTest::newRow("dp 2") << QStringLiteral("parallelism.dp") << qint64(2) << qint64(2) << QStringLiteral("2 GPUs");
        QTest::newRow("pp 2") << QStringLiteral("parallelism.pp") << qint64(2) << qint64(1) << QStringLiteral("2 GPUs");
    }

    void editingTpChangesTheWorld()
    {
        QFETCH(QString, key);
        QFETCH(qint64, value);
        QFETCH(qint64, ranksPerClass);
        QFETCH(QString, world);
        MainWindow window(false);
        QSignalSpy shown(&window, &MainWindow::resultShown);
        QSignalSpy started(window.session(), &SynthesisSession::synthesisStarted);
        window.newFromPreset(QStringLiteral("tiny"));
        QVERIFY(shown.wait(kTimeoutMs));
        QCOMPARE(ranksOfClass0(window), qint64(1));
        started.clear();

        QElapsedTimer clock;
        clock.start();
        spin(window, key.toLatin1().constData())->setValue(value);
        QVERIFY(window.isWindowModified());
        QCOMPARE(started.count(), 0); // debounced, not synchronous
        QVERIFY(shown.wait(kTimeoutMs));
        // Qt::CoarseTimer (QTimer's default) may fire up to 5 % early (QTimer docs, Qt::TimerType).
        QVERIFY(clock.elapsed() >= window.synthesisDelayMs() * 95 / 100 - 1);
        QCOMPARE(started.count(), 1);
        QCOMPARE(ranksOfClass0(window), ranksPerClass);
        QCOMPARE(window.overviewView()->figure(QStringLiteral("world")), world);
        QCOMPARE(window.shownResult()->worldSize(), world.section(QLatin1Char(' '), 0, 0).toLongLong());
    }

    void failingEditKeepsLastGoodResult()
    {
        MainWindow window(false);
        QSignalSpy shown(&window, &MainWindow::resultShown);
        QSignalSpy failed(window.session(), &SynthesisSession::synthesisFailed);
        window.newFromPreset(QStringLiteral("tiny"));
        QVERIFY(shown.wait(kTimeoutMs));
        const auto good = window.shownResult();
        auto* banner = window.overviewView()->findChild<QLabel*>(QStringLiteral("staleBanner"));
        QVERIFY(banner);
        QVERIFY(banner->isHidden());

        spin(window, "parallelism.tp")->setValue(3); // tiny has 8 heads
        QVERIFY(failed.wait(kTimeoutMs));
        QCOMPARE(window.shownResult(), good);
        QCOMPARE(window.overviewView()->model()->result(), good);
        QCOMPARE(ranksOfClass0(window), qint64(1));
        QVERIFY(!banner->isHidden());
        const auto status = window.findChild<QLabel*>(QStringLiteral("synthesisStatus"));
        QVERIFY2(status->text().contains(QLatin1String("tp=3 does not divide heads=8")), qPrintable(status->text()));

        // Fixing the value brings a new result and hides the banner.
        spin(window, "parallelism.tp")->setValue(2);
        QVERIFY(shown.wait(kTimeoutMs));
        QVERIFY(window.shownResult() != good);
        QCOMPARE(ranksOfClass0(window), qint64(2));
        QVERIFY(banner->isHidden());
    }

    void undoResynthesizes()
    {
        MainWindow window(false);
        QSignalSpy shown(&window, &MainWindow::resultShown);
        window.newFromPreset(QStringLiteral("tiny"));
        QVERIFY(shown.wait(kTimeoutMs));
        // global_batch 4 = micro_batch 2 * dp 2 * 1 micro-batch: dp 2 is the largest dp tiny allows.
        spin(window, "parallelism.dp")->setValue(2);
        QVERIFY(shown.wait(kTimeoutMs));
        QCOMPARE(ranksOfClass0(window), qint64(2));
        window.document()->undoStack()->undo();
        QVERIFY(shown.wait(kTimeoutMs));
        QCOMPARE(ranksOfClass0(window), qint64(1));
        QVERIFY(!window.isWindowModified());
    }

    void opensFiles()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        MainWindow window(false);
        QSignalSpy shown(&window, &MainWindow::resultShown);
        window.newFromPreset(QStringLiteral("tiny"));
        QVERIFY(shown.wait(kTimeoutMs));

        // Save to a file and open it again.
        const QString good = dir.filePath(QStringLiteral("good.yaml"));
        QString error;
        spin(window, "parallelism.tp")->setValue(2);
        QVERIFY(window.document()->saveAs(good, &error));
        QVERIFY(!window.isWindowModified());
        QCOMPARE(window.windowTitle(), QStringLiteral("good.yaml[*]"));
        MainWindow second(false);
        QSignalSpy secondShown(&second, &MainWindow::resultShown);
        QVERIFY(second.openConfigOrPreset(good));
        QCOMPARE(second.document()->config().parallelism.tp, int64_t(2));
        QVERIFY(secondShown.wait(kTimeoutMs));
        QCOMPARE(ranksOfClass0(second), qint64(2));

        // A file with an error opens into the YAML tab with the problem at its line; the config is kept.
        const QString bad = dir.filePath(QStringLiteral("bad.yaml"));
        QFile file(bad);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("name: bad\nmodel:\n  preset: tiny\ntraining:\n  global_batch: 4\n  micro_batch: 2\n"
                   "parallelism:\n  tp: 3\n");
        file.close();
        const Config before = second.document()->config();
        QVERIFY(second.openFile(bad));
        QCOMPARE(second.document()->config(), before);
        QCOMPARE(second.document()->filePath(), bad);
        QVERIFY(!second.isWindowModified()); // opening never dirties (issue 31)
        QVERIFY(second.configEditor()->hasUnappliedText());
        const DiagnosticModel* problems = second.configEditor()->diagnosticModel();
        bool found = false;
        for (int row = 0; row < problems->rowCount(); ++row) {
            const QModelIndex index = problems->index(row);
            if (index.data(DiagnosticModel::KeyPathRole).toString() == QLatin1String("parallelism.tp")) {
                QCOMPARE(index.data(DiagnosticModel::LineRole).toInt(), 8); // "  tp: 3" is line 8
                found = true;
            }
        }
        QVERIFY(found);

        // Neither a file nor a preset.
        QVERIFY(!second.openConfigOrPreset(QStringLiteral("no-such-preset"), {}, &error));
        QVERIFY2(error.contains(QLatin1String("tiny")), qPrintable(error)); // the message lists the presets
    }

    void brokenFileAtStartUp()
    {
        // Nothing loaded yet: the default preset stands in while the file's text waits to be fixed.
        QTemporaryDir dir;
        const QString bad = dir.filePath(QStringLiteral("broken.yaml"));
        QFile file(bad);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("name: broken\nmodel:\n  preset: tiny\n  heads: 7\ntraining:\n  global_batch: 4\n");
        file.close();
        MainWindow window(false);
        QSignalSpy shown(&window, &MainWindow::resultShown);
        QVERIFY(window.openConfigOrPreset(bad));
        QVERIFY(window.configEditor()->hasTextErrors());
        QCOMPARE(window.document()->config(), *loadConfigOrPreset("default").config);
        QVERIFY(shown.wait(kTimeoutMs));
        QVERIFY(!window.overviewView()->findChild<QLabel*>(QStringLiteral("staleBanner"))->isHidden());
        const auto status = window.findChild<QLabel*>(QStringLiteral("synthesisStatus"));
        QVERIFY2(status->text().startsWith(QLatin1String("broken.yaml has errors")), qPrintable(status->text()));
    }

    void importsHuggingFaceConfig()
    {
        // File > Import Hugging Face Config replaces the model (and the name), as one undoable edit.
        MainWindow window(false);
        QVERIFY(window.newFromPreset(QStringLiteral("tiny")));
        QVERIFY(window.findChild<QAction*>(QStringLiteral("importHfConfigAction")));
        const Config before = window.document()->config();
        const QString good = QStringLiteral(STAGECRAFT_SOURCE_DIR "/tests/data/hf/good/gpt2.json");
        QVERIFY(window.importHfConfig(good));
        Config expected = before;
        expected.model = *importHfConfigFile(good.toStdString()).model;
        expected.name = "gpt2";
        QCOMPARE(window.document()->config(), expected);
        QVERIFY(window.isWindowModified());
        window.document()->undoStack()->undo();
        QCOMPARE(window.document()->config(), before);

        // A config.json that does not map shows in the YAML tab like a YAML file with errors: the problems point
        // into the JSON file (named in the list), the config is kept, and Apply retries the import.
        const QString bad = QStringLiteral(STAGECRAFT_SOURCE_DIR "/tests/data/hf/broken/mlp-bias.json");
        QVERIFY(!window.importHfConfig(bad));
        QCOMPARE(window.document()->config(), before);
        QVERIFY(window.configEditor()->hasTextErrors());
        const DiagnosticModel* problems = window.configEditor()->diagnosticModel();
        bool found = false;
        for (int row = 0; row < problems->rowCount(); ++row) {
            const QModelIndex index = problems->index(row);
            if (index.data(DiagnosticModel::KeyPathRole).toString() == QLatin1String("mlp_bias")) {
                QCOMPARE(index.data(DiagnosticModel::FileRole).toString(), bad);
                QCOMPARE(index.data(DiagnosticModel::LineRole).toInt(), 5);
                QVERIFY(index.data().toString().startsWith(QLatin1String("mlp-bias.json:5:15  mlp_bias: ")));
                found = true;
            }
        }
        QVERIFY(found);
    }

    void overrides()
    {
        MainWindow window(false);
        QSignalSpy shown(&window, &MainWindow::resultShown);
        QString error;
        QVERIFY(window.openConfigOrPreset(QStringLiteral("tiny"),
            { QStringLiteral("parallelism.pp=2"), QStringLiteral("parallelism.tp=2") }, &error));
        QVERIFY(shown.wait(kTimeoutMs));
        // pp 2: two classes of tp 2 ranks each.
        QCOMPARE(window.overviewView()->model()->rowCount(), 2);
        QCOMPARE(ranksOfClass0(window), qint64(2));
        // An override the validator rejects is an error naming the key, not a window with a broken config.
        QVERIFY(!window.openConfigOrPreset(QStringLiteral("tiny"), { QStringLiteral("parallelism.tp=3") }, &error));
        QVERIFY2(error.contains(QLatin1String("parallelism.tp")), qPrintable(error));
        QCOMPARE(window.document()->config().parallelism.tp, int64_t(2));
    }

    void exportActionOpensTheDialogOnTheShownResult()
    {
        // File > Export Chakra Trace is disabled until a result is shown, then opens the dialog over that result;
        // tiny at dp 2 x pp 2 is 4 ranks, so the dialog plans 4 rank files.
        MainWindow window(false);
        auto* action = window.findChild<QAction*>(QStringLiteral("exportTraceAction"));
        QVERIFY(action);
        QVERIFY(!action->isEnabled());
        QVERIFY(!window.openExportDialog());
        QSignalSpy shown(&window, &MainWindow::resultShown);
        QVERIFY(window.openConfigOrPreset(
            QStringLiteral("tiny"), { QStringLiteral("parallelism.dp=2"), QStringLiteral("parallelism.pp=2") }));
        QVERIFY(shown.wait(kTimeoutMs));
        QVERIFY(action->isEnabled());
        ExportDialog* dialog = window.openExportDialog();
        QVERIFY(dialog);
        QVERIFY(dialog->isVisible());
        QVERIFY(dialog->testAttribute(Qt::WA_DeleteOnClose));
        QCOMPARE(dialog->options().name, std::string("tiny"));
        const auto plan = dialog->findChild<QLabel*>(QStringLiteral("exportPlan"));
        QVERIFY2(plan->text().startsWith(QLatin1String("Writes 4 rank files")), qPrintable(plan->text()));
        dialog->close();
    }

    void sweepPlanLoadsIntoTheEditor()
    {
        // tiny on 4 GPUs: run the Sweep tab, load its fastest plan; the document takes the plan as one undoable
        // edit, the next synthesis shows its world (dp*tp*pp*cp = 4), and Undo restores the preset's single GPU.
        MainWindow window(false);
        QSignalSpy shown(&window, &MainWindow::resultShown);
        QVERIFY(window.newFromPreset(QStringLiteral("tiny")));
        QVERIFY(shown.wait(kTimeoutMs));
        auto* sweep = window.findChild<SweepView*>();
        QVERIFY(sweep);
        QVERIFY(window.showTab(QStringLiteral("sweep")));
        sweep->gpusSpin()->setValue(4);
        QSignalSpy finished(sweep, &SweepView::sweepFinished);
        QVERIFY(sweep->runSweep());
        QVERIFY(finished.wait(kTimeoutMs));
        QVERIFY(!sweep->sweepResult()->ranked.empty());
        const SweepCandidate best = sweep->sweepResult()->ranked.front();
        QVERIFY(sweep->chooseRow(0));
        const Config& edited = window.document()->config();
        QCOMPARE(edited.parallelism.dp, best.dp);
        QCOMPARE(edited.parallelism.tp, best.tp);
        QCOMPARE(edited.parallelism.pp, best.pp);
        QCOMPARE(edited.parallelism.cp, best.cp);
        QCOMPARE(edited.training.microBatch, best.microBatch);
        QCOMPARE(edited.parallelism.worldSize(), int64_t(4));
        QVERIFY(shown.wait(kTimeoutMs));
        QCOMPARE(window.shownResult()->worldSize(), int64_t(4));
        window.document()->undoStack()->undo();
        QCOMPARE(window.document()->config().parallelism.worldSize(), int64_t(1));
    }

    void formFitsBesideEveryTab_data()
    {
        QTest::addColumn<QString>("preset");
        for (const char* preset : { "tiny", "llama3-70b", "llama3-70b-serving" })
            QTest::addRow("%s", preset) << QString::fromLatin1(preset);
    }

    void formFitsBesideEveryTab()
    {
        // At 1366 x 768 the configuration panel is narrow: every field must fit inside it (a field wider than the
        // form's viewport is cut off at the right edge with its digits, as a long text suggestion once did), and no
        // tab may take the panel's room: a tab whose minimum width is too large squeezes the dock until the form's
        // fields are cut (the Serving tab's one-row controls once did).
        QFETCH(QString, preset);
        MainWindow window(false);
        window.resize(1366, 768);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QSignalSpy shown(&window, &MainWindow::resultShown);
        QString error;
        QVERIFY2(window.openConfigOrPreset(preset, {}, &error), qPrintable(error));
        QVERIFY(shown.wait(kTimeoutMs));
        auto* scroll = window.configEditor()->form()->findChild<QScrollArea*>();
        QVERIFY(scroll);
        for (const QString& name : window.tabNames()) {
            QVERIFY(window.showTab(name));
            QVERIFY2(waitUntilSettled(window), qPrintable(name));
            QTest::qWait(50); // layouts settle
            const int viewport = scroll->viewport()->width();
            QVERIFY2(scroll->widget()->width() <= viewport && !scroll->horizontalScrollBar()->isVisible(),
                qPrintable(QStringLiteral("%1: form %2 > viewport %3")
                               .arg(name)
                               .arg(scroll->widget()->width())
                               .arg(viewport)));
            Int64SpinBox* layers = spin(window, "model.layers");
            const QPoint right = layers->mapTo(scroll->viewport(), QPoint(layers->width(), 0));
            QVERIFY2(right.x() <= viewport,
                qPrintable(QStringLiteral("%1: layers field ends at %2 > %3").arg(name).arg(right.x()).arg(viewport)));
        }
    }

    void layoutEditorAppliesALayout()
    {
        // Edit > Pipeline Layout on llama3-8b (32 layers) with pp 4 and 2 virtual stages: 8 chunks, chunk g on
        // stage g % 4 as virtual stage g / 4 (Megatron's interleaved placement). An uneven layout the editor makes
        // is applied as one undoable edit that also clears the split shorthands.
        MainWindow window(false);
        QSignalSpy shown(&window, &MainWindow::resultShown);
        QString error;
        QVERIFY2(
            window.openConfigOrPreset(QStringLiteral("llama3-8b"),
                QStringList { QStringLiteral("parallelism.pp=4"), QStringLiteral("parallelism.tp=1"),
                    QStringLiteral("parallelism.cp=1"), QStringLiteral("parallelism.dp=1"),
                    QStringLiteral("parallelism.schedule=interleaved"), QStringLiteral("parallelism.virtual_stages=2"),
                    QStringLiteral("training.global_batch=8"), QStringLiteral("parallelism.first_stage_layers=0"),
                    QStringLiteral("parallelism.last_stage_layers=0") },
                &error),
            qPrintable(error));
        QVERIFY(shown.wait(kTimeoutMs));
        LayoutEditorDialog* dialog = window.openLayoutEditor();
        QVERIFY(dialog);
        QTableWidget* table = dialog->table();
        QCOMPARE(table->rowCount(), 8);
        for (int g = 0; g < 8; ++g) {
            QCOMPARE(table->item(g, 0)->text(), QString::number(g % 4));
            QCOMPARE(table->item(g, 1)->text(), QString::number(g / 4));
        }
        // The even split: 32 / 8 = 4 layers a chunk, the embedding first, the loss last.
        LayoutError parseError;
        std::optional<PipelineLayout> start = PipelineLayout::parse(dialog->layoutText().toStdString(), parseError);
        QVERIFY2(start,
            qPrintable(dialog->layoutText() + QStringLiteral(": ") + QString::fromStdString(parseError.message)));
        QCOMPARE(start->count(LayoutItem::Decoder), int64_t(32));
        QVERIFY(dialog->problem().isEmpty());
        QPushButton* ok = dialog->findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok);
        // One layer too many: refused, OK disabled, the message says why.
        dialog->setDecoderLayers(0, 5);
        QVERIFY(!dialog->problem().isEmpty());
        QVERIFY(!ok->isEnabled());
        // Move it from the first chunk to the last: 3 + 4 * 6 + 5 = 32, accepted.
        dialog->setDecoderLayers(0, 3);
        dialog->setDecoderLayers(7, 5);
        QVERIFY2(dialog->problem().isEmpty(), qPrintable(dialog->problem()));
        QVERIFY(ok->isEnabled());
        const QString text = dialog->layoutText();
        ok->click();
        QVERIFY(shown.wait(kTimeoutMs));
        QCOMPARE(QString::fromStdString(window.document()->config().parallelism.pipelineLayout), text);
        std::optional<PipelineLayout> applied = PipelineLayout::parse(text.toStdString(), parseError);
        QVERIFY(applied);
        QCOMPARE(int(applied->chunks.front().size()), 1 + 3); // E and 3 layers
        QCOMPARE(int(applied->chunks.back().size()), 5 + 1); // 5 layers and L
        window.document()->undoStack()->undo();
        QVERIFY(window.document()->config().parallelism.pipelineLayout.empty());
    }

    void fitsALaptopScreen()
    {
        // 1366 x 768 is the smallest common laptop screen: with a preset on every tab, the window may be that small
        // and the Overview's table then shows every column without scrolling.
        MainWindow window(false);
        window.resize(1366, 768);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QSignalSpy shown(&window, &MainWindow::resultShown);
        QString error;
        QVERIFY2(window.openConfigOrPreset(QStringLiteral("llama3-70b"), {}, &error), qPrintable(error));
        QVERIFY(shown.wait(kTimeoutMs));
        // Tabs not shown yet (no result, never laid out) must not ask for more room either.
        QSize minimum = window.minimumSizeHint().expandedTo(window.minimumSize());
        QVERIFY2(minimum.width() <= 1366 && minimum.height() <= 768,
            qPrintable(QStringLiteral("%1x%2").arg(minimum.width()).arg(minimum.height())));
        // A view's minimum may grow with what it shows: give every tab the result and let its work finish.
        for (const QString& name : window.tabNames()) {
            QVERIFY(window.showTab(name));
            QVERIFY2(waitUntilSettled(window), qPrintable(name));
        }
        minimum = window.minimumSizeHint().expandedTo(window.minimumSize());
        qInfo("minimum size with llama3-70b on every tab: %dx%d", minimum.width(), minimum.height());
        if (minimum.width() > 1366)
            qInfo("widest minimums:\n%s", qPrintable(largestMinimums(window, false)));
        QVERIFY(minimum.width() <= 1366);
        if (minimum.height() > 768)
            qInfo("tallest minimums:\n%s", qPrintable(largestMinimums(window, true)));
        QVERIFY(minimum.height() <= 768);

        QVERIFY(window.showTab(QStringLiteral("overview")));
        QVERIFY(waitUntilSettled(window));
        window.resize(1366, 768);
        QTest::qWait(50); // layouts settle
        QCOMPARE(window.size(), QSize(1366, 768));
        QTableView* table = window.overviewView()->table();
        const QAbstractItemView* items = table; // sizeHintForColumn() is public there, protected in QTableView
        const QHeaderView* header = table->horizontalHeader();
        const int margin = header->style()->pixelMetric(QStyle::PM_HeaderMargin, nullptr, header);
        QVERIFY(table->isVisible());
        QVERIFY(!table->horizontalScrollBar()->isVisible());
        for (int c = 0; c < header->count(); ++c) {
            const QString title = table->model()->headerData(c, Qt::Horizontal).toString();
            QVERIFY2(!header->isSectionHidden(c), qPrintable(title));
            const int right = header->sectionViewportPosition(c) + header->sectionSize(c);
            QVERIFY2(header->sectionViewportPosition(c) >= 0 && right <= table->viewport()->width(),
                qPrintable(
                    QStringLiteral("%1 ends at %2 of %3").arg(title).arg(right).arg(table->viewport()->width())));
            // Wide enough for its title (on one or two lines) and its values: nothing is elided.
            int need = items->sizeHintForColumn(c);
            for (const QString& line : title.split(QLatin1Char('\n')))
                need = std::max(need, header->fontMetrics().horizontalAdvance(line) + 2 * margin);
            QVERIFY2(header->sectionSize(c) >= need,
                qPrintable(QStringLiteral("%1: %2 < %3").arg(title).arg(header->sectionSize(c)).arg(need)));
        }
    }

    void pinnedBaselineIsComparedWithLaterPlans()
    {
        // tiny on 1 GPU pinned, then dp 2: the Overview lists both plans' figures side by side with the change.
        MainWindow window(false);
        window.setSynthesisDelayMs(0);
        QSignalSpy shown(&window, &MainWindow::resultShown);
        QVERIFY(!window.pinBaseline()); // nothing shown yet
        QVERIFY(window.newFromPreset(QStringLiteral("tiny")));
        QVERIFY(shown.wait(kTimeoutMs));
        QVERIFY(waitUntilSettled(window)); // the Overview's estimate is in
        const auto baseline = window.shownResult();
        const auto baselineEstimate = window.overviewView()->model()->estimate();
        QVERIFY(baselineEstimate);
        const ComparisonModel* comparison = window.overviewView()->comparisonModel();
        QCOMPARE(comparison->rowCount(), 0);
        QVERIFY(window.pinBaseline());
        QCOMPARE(window.baselineResult(), baseline);
        QVERIFY(window.overviewView()->comparisonTable()->isVisibleTo(window.overviewView()));

        spin(window, "parallelism.dp")->setValue(2);
        QVERIFY(shown.wait(kTimeoutMs));
        QVERIFY(waitUntilSettled(window));
        QCOMPARE(window.baselineResult(), baseline); // an edit keeps the baseline
        const auto current = window.overviewView()->model()->estimate();
        QVERIFY(current);
        // Step time, MFU, tokens/s, one peak-memory row per stage, four collective types and send/recv.
        QCOMPARE(comparison->rowCount(), 3 + int(baseline->summaries.size()) + 5);
        auto raw = [comparison](int row, int column) {
            return comparison->data(comparison->index(row, column), ComparisonModel::RawValueRole).toDouble();
        };
        QCOMPARE(raw(0, ComparisonModel::BaselineColumn), baselineEstimate->iterationTimeS);
        QCOMPARE(raw(0, ComparisonModel::CurrentColumn), current->iterationTimeS);
        QCOMPARE(raw(2, ComparisonModel::BaselineColumn), baselineEstimate->tokensPerS);
        QCOMPARE(raw(3, ComparisonModel::BaselineColumn), double(baseline->summaries.front().peakBytes));
        QCOMPARE(raw(3, ComparisonModel::CurrentColumn), double(window.shownResult()->summaries.front().peakBytes));
        QVERIFY(!comparison->data(comparison->index(0, ComparisonModel::ChangeColumn)).toString().isEmpty());

        // The Sweep marks the baseline's plan among its plans for the baseline's GPU count.
        auto* sweep = window.findChild<SweepView*>();
        QVERIFY(window.showTab(QStringLiteral("sweep")));
        sweep->gpusSpin()->setValue(1);
        QSignalSpy swept(sweep, &SweepView::sweepFinished);
        QVERIFY(sweep->runSweep());
        QVERIFY(swept.wait(kTimeoutMs));
        QVERIFY(sweep->chartView()->baselinePlan().isValid());
        QVERIFY(!sweep->chartView()->currentPlan().isValid()); // dp 2 is not a plan for one GPU

        window.clearBaseline();
        QVERIFY(!sweep->chartView()->baselinePlan().isValid());
        QVERIFY(!window.baselineResult());
        QCOMPARE(comparison->rowCount(), 0);
        QVERIFY(!window.overviewView()->comparisonTable()->isVisibleTo(window.overviewView()));
    }

    void pinAndClearAreUndoable()
    {
        MainWindow window(false);
        window.setSynthesisDelayMs(0);
        QSignalSpy shown(&window, &MainWindow::resultShown);
        QVERIFY(window.newFromPreset(QStringLiteral("tiny")));
        QVERIFY(shown.wait(kTimeoutMs));
        QVERIFY(window.showTab(QStringLiteral("memory")));
        QVERIFY(waitUntilSettled(window));
        auto* memory = window.findChild<MemoryView*>();
        QUndoStack* undo = window.document()->undoStack();
        const auto first = window.shownResult();
        QVERIFY(!window.document()->isModified());
        auto* clearAction = window.findChild<QAction*>(QStringLiteral("clearBaselineAction"));
        QVERIFY(!clearAction->isEnabled());

        QVERIFY(window.pinBaseline());
        QCOMPARE(undo->undoText(), QStringLiteral("Pin Baseline"));
        QCOMPARE(window.baselineResult(), first);
        QVERIFY(window.document()->isModified()); // the baseline is saved with the document
        QVERIFY(clearAction->isEnabled());
        QVERIFY(waitUntilSettled(window));
        QVERIFY(memory->chartView()->baselineSeries()->isVisible());

        spin(window, "parallelism.dp")->setValue(2);
        QVERIFY(shown.wait(kTimeoutMs));
        const auto second = window.shownResult();
        QVERIFY(second != first);

        // Undo the edit, then the pin: no baseline, nothing to save, and the views drop it.
        undo->undo();
        QCOMPARE(window.document()->config().parallelism.dp, 1);
        QCOMPARE(window.baselineResult(), first);
        QCOMPARE(undo->undoText(), QStringLiteral("Pin Baseline"));
        undo->undo();
        QVERIFY(!window.baselineResult());
        QVERIFY(!window.document()->baseline().config);
        QVERIFY(!window.document()->isModified());
        QVERIFY(!clearAction->isEnabled());
        QVERIFY(waitUntilSettled(window));
        QVERIFY(!memory->chartView()->baselineSeries()->isVisible());
        // Redo pins the same plan again, at once (no new synthesis).
        undo->redo();
        QCOMPARE(window.baselineResult(), first);
        QVERIFY(!window.isSynthesizingBaseline());
        QVERIFY(window.document()->isModified());

        // Clear is an undo step too.
        window.clearBaseline();
        QCOMPARE(undo->undoText(), QStringLiteral("Clear Baseline"));
        QVERIFY(!window.baselineResult());
        undo->undo();
        QCOMPARE(window.baselineResult(), first);
        undo->redo();
        QVERIFY(!window.baselineResult());
        const int steps = undo->count();
        window.clearBaseline(); // nothing pinned: no new step
        QCOMPARE(undo->count(), steps);

        // A new document has its own (no) baseline.
        QVERIFY(window.pinBaseline());
        QVERIFY(window.newFromPreset(QStringLiteral("tiny")));
        QVERIFY(!window.baselineResult());
        QCOMPARE(undo->count(), 0);
    }

    void baselineIsSavedAndLoaded()
    {
        // tiny on one GPU pinned, then dp 2, saved: plan.yaml holds dp 2 and plan.baseline.yaml the baseline, both
        // plain configs. Opening plan.yaml synthesizes the baseline again and compares with it.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath(QStringLiteral("plan.yaml"));
        const QString sidecar = dir.filePath(QStringLiteral("plan.baseline.yaml"));
        QCOMPARE(ConfigDocument::baselinePath(path), sidecar);
        Config pinned;
        qint64 pinnedPeak = 0;
        {
            MainWindow window(false);
            window.setSynthesisDelayMs(0);
            QSignalSpy shown(&window, &MainWindow::resultShown);
            QVERIFY(window.newFromPreset(QStringLiteral("tiny")));
            QVERIFY(shown.wait(kTimeoutMs));
            QVERIFY(window.pinBaseline());
            pinned = window.baselineResult()->config;
            pinnedPeak = window.baselineResult()->summaries.front().peakBytes;
            spin(window, "parallelism.dp")->setValue(2);
            QVERIFY(shown.wait(kTimeoutMs));
            QString error;
            QVERIFY2(window.document()->saveAs(path, &error), qPrintable(error));
            QVERIFY(!window.document()->isModified());
        }
        QVERIFY(QFileInfo(sidecar).isFile());
        // The baseline's file is a config the loader (and so the command line) reads as it is, with every key of
        // the pinned plan.
        const ConfigResult onDisk = loadConfigFile(sidecar.toStdString());
        QVERIFY(onDisk.config);
        QCOMPARE(onDisk.config->parallelism.dp, 1);
        QCOMPARE(toYaml(*onDisk.config), toYaml(pinned));
        const ConfigResult main = loadConfigFile(path.toStdString());
        QVERIFY(main.config);
        QCOMPARE(main.config->parallelism.dp, 2);

        MainWindow window(false);
        window.setSynthesisDelayMs(0);
        QSignalSpy baselineShown(&window, &MainWindow::baselineShown);
        QVERIFY(window.openFile(path));
        QVERIFY(window.document()->baseline().config);
        QCOMPARE(toYaml(*window.document()->baseline().config), toYaml(pinned));
        QVERIFY(!window.document()->isModified());
        QVERIFY(window.isSynthesizingBaseline()); // in the background; the window stays responsive
        QVERIFY(!window.baselineResult());
        QTRY_VERIFY_WITH_TIMEOUT(window.baselineResult() != nullptr, kTimeoutMs);
        QVERIFY(!window.isSynthesizingBaseline());
        QCOMPARE(toYaml(window.baselineResult()->config), toYaml(pinned));
        QCOMPARE(window.baselineResult()->summaries.front().peakBytes, pinnedPeak);
        QVERIFY(!window.document()->isModified()); // the same document as saved
        // The Overview estimates the re-synthesized baseline itself.
        QVERIFY(waitUntilSettled(window));
        QTRY_VERIFY_WITH_TIMEOUT(window.overviewView()->comparisonModel()->baseline().estimate != nullptr, kTimeoutMs);

        // Clearing it is a change to save; saving removes the baseline's file, so it stays cleared.
        window.clearBaseline();
        QVERIFY(window.document()->isModified());
        QString error;
        QVERIFY2(window.document()->saveAs(path, &error), qPrintable(error));
        QVERIFY(!QFileInfo::exists(sidecar));
        MainWindow again(false);
        QVERIFY(again.openFile(path));
        QVERIFY(!again.document()->baseline().config);
        QVERIFY(!again.isSynthesizingBaseline());
    }

    void tabsByName()
    {
        MainWindow window(false);
        QCOMPARE(window.tabNames(),
            (QStringList { QStringLiteral("overview"), QStringLiteral("graph"), QStringLiteral("memory"),
                QStringLiteral("communication"), QStringLiteral("timeline"), QStringLiteral("sweep"),
                QStringLiteral("report"), QStringLiteral("serving") }));
        QVERIFY(window.showTab(QStringLiteral("memory")));
        QVERIFY(window.showTab(QStringLiteral("report")));
        QVERIFY(window.showTab(QStringLiteral("Overview")));
        QVERIFY(!window.showTab(QStringLiteral("nonsense")));
    }
};

QTEST_MAIN(TestMainWindow)
#include "tst_mainwindow.moc"
