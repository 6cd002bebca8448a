// SPDX-License-Identifier: MIT
// Issue 31's editing points on the real window: a file that is refused or does not load never dirties the document
// nor is offered for saving over itself (1); undo habits (15); the Training/Inference switch, "Make servable", the
// value in force of an "automatic" 0 and the preset's source (11).
#include "config/configloader.h"
#include "config/configvalidator.h"
#include "config/configwriter.h"
#include "config/hfimport.h"
#include "guihelpers.h"
#include "session/configdocument.h"
#include "synthesis/synthesis.h"
#include "widgets/configeditor.h"
#include "widgets/configform.h"
#include "widgets/exportdialog.h"
#include "widgets/int64spinbox.h"
#include "widgets/mainwindow.h"
#include "widgets/overviewview.h"

#include <QAbstractButton>
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QToolButton>
#include <QUndoStack>
#include <QtTest>

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

QComboBox* combo(const MainWindow& window, const char* key)
{
    auto* box = qobject_cast<QComboBox*>(window.configEditor()->form()->fieldWidget(QString::fromLatin1(key)));
    if (!box)
        qFatal("no combo box for %s", key);
    return box;
}

QByteArray readAll(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return file.readAll();
}

bool writeAll(const QString& path, const QByteArray& bytes)
{
    QFile file(path);
    return file.open(QIODevice::WriteOnly) && file.write(bytes) == bytes.size();
}

/// The first action of the window's menus whose text (without '&') is `text` or starts with `text` and a space
/// ("Undo" finds "Undo Import gpt2.json").
QAction* menuAction(const MainWindow& window, const QString& text)
{
    const QList<QMenu*> menus = window.menuBar()->findChildren<QMenu*>();
    for (const QMenu* menu : menus) {
        for (QAction* action : menu->actions()) {
            const QString t = action->text().remove(QLatin1Char('&'));
            if (t == text || t.startsWith(text + QLatin1Char(' ')))
                return action;
        }
    }
    return nullptr;
}

/// Runs `trigger`, and answers the message box it opens with `pressButton` after recording its buttons and default.
struct MessageBoxAnswer
{
    bool seen = false;
    QList<QMessageBox::StandardButton> buttons;
    QMessageBox::StandardButton defaultButton = QMessageBox::NoButton;
    QString text;
};

MessageBoxAnswer answerNextMessageBox(QMessageBox::StandardButton pressButton, const std::function<void()>& trigger)
{
    MessageBoxAnswer answer;
    QTimer timer;
    timer.setInterval(20);
    QObject::connect(&timer, &QTimer::timeout, [&] {
        auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
        if (!box)
            return;
        timer.stop();
        answer.seen = true;
        answer.text = box->text();
        for (QAbstractButton* b : box->buttons())
            answer.buttons << box->standardButton(b);
        if (auto* d = box->defaultButton())
            answer.defaultButton = box->standardButton(d);
        box->done(pressButton);
    });
    timer.start();
    trigger();
    timer.stop();
    return answer;
}

/// A window with preset `name` synthesized and shown.
struct Shown
{
    MainWindow window { false };
    QSignalSpy shown { &window, &MainWindow::resultShown };

    explicit Shown(const char* name)
    {
        if (!window.newFromPreset(QString::fromLatin1(name)) || !shown.wait(kTimeoutMs))
            qFatal("%s did not synthesize", name);
    }
};

} // namespace

class TestEditingHabits : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QCoreApplication::setOrganizationName(QStringLiteral("StagecraftTest"));
    }

    // ---- 1: a rejected file is never marked modified nor offered for saving over itself ----

    void refusedFileLeavesTheDocumentAlone_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("reason");
        // A PNG's first bytes: 0x89 is no UTF-8 lead byte; then NUL bytes.
        QTest::newRow("binary") << QByteArray("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16) << QStringLiteral("byte 1 (0x89)");
        QTest::newRow("nul") << QByteArray("name: x\n\0\0", 10)
                             << QStringLiteral("byte 9 is the control character 0x00");
        // "café" in Latin-1: 0xE9 followed by a newline is no UTF-8 sequence.
        QTest::newRow("latin-1") << QByteArray("name: caf\xe9\n") << QStringLiteral("byte 10 (0xe9)");
        // 64 KiB + 1 of comment lines: over the config size limit (kMaxConfigBytes = 64 * 1024).
        QTest::newRow("oversized") << QByteArray(64 * 1024 + 1, '#') << QStringLiteral("65536 bytes");
    }

    void refusedFileLeavesTheDocumentAlone()
    {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, reason);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("garbage.yaml"));
        QVERIFY(writeAll(path, bytes));
        Shown s("tiny");
        const Config before = s.window.document()->config();
        const QString yamlBefore = s.window.configEditor()->yamlEdit()->toPlainText();
        QVERIFY(!s.window.openFile(path));
        // The document is untouched: same config, still the preset, not modified, nothing to save, the same text.
        QCOMPARE(s.window.document()->config(), before);
        QVERIFY(s.window.document()->filePath().isEmpty());
        QCOMPARE(s.window.windowTitle(), QStringLiteral("tiny (preset)[*]"));
        QVERIFY(!s.window.isWindowModified());
        QVERIFY(!s.window.hasUnsavedChanges());
        QVERIFY(!s.window.configEditor()->hasUnappliedText());
        QCOMPARE(s.window.configEditor()->yamlEdit()->toPlainText(), yamlBefore);
        const auto status = s.window.findChild<QLabel*>(QStringLiteral("synthesisStatus"));
        QVERIFY2(status->text().startsWith(QLatin1String("Not opened: ")), qPrintable(status->text()));
        QVERIFY2(status->text().contains(reason), qPrintable(status->text()));
        QCOMPARE(readAll(path), bytes);
        // From the command line too: an error, not a window with a broken document.
        QString error;
        QVERIFY(!s.window.openConfigOrPreset(path, {}, &error));
        QVERIFY2(error.contains(reason), qPrintable(error));
    }

    void malformedFileOpensUnmodifiedAndIsNeverSavedOverItself()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("malformed.yaml"));
        const QByteArray bytes("name: malformed\nmodel:\n  preset: tiny\n  layers: [2\n");
        QVERIFY(writeAll(path, bytes));
        Shown s("tiny");
        QVERIFY(s.window.openFile(path));
        QCOMPARE(s.window.document()->filePath(), path);
        QCOMPARE(s.window.configEditor()->yamlEdit()->toPlainText(), QString::fromUtf8(bytes)); // as it is
        QVERIFY(s.window.configEditor()->hasTextErrors());
        QCOMPARE(s.window.windowTitle(), QStringLiteral("malformed.yaml[*]"));
        QVERIFY(!s.window.isWindowModified()); // opening never dirties
        QVERIFY(!s.window.hasUnsavedChanges());

        // Opening something else asks nothing: no prompt, the file is left as it was.
        const MessageBoxAnswer none = answerNextMessageBox(QMessageBox::Cancel, [&] {
            QAction* preset = menuAction(s.window, QStringLiteral("tiny"));
            QVERIFY(preset);
            preset->trigger();
        });
        QVERIFY(!none.seen);
        QVERIFY(s.window.document()->filePath().isEmpty()); // now the tiny preset
        QCOMPARE(readAll(path), bytes);

        // Typing in the text that still does not load: the prompt offers no Save (it would write the last good
        // config over the file), and its default is Cancel.
        QVERIFY(s.window.openFile(path));
        QPlainTextEdit* yaml = s.window.configEditor()->yamlEdit();
        QTextCursor cursor = yaml->textCursor();
        cursor.movePosition(QTextCursor::End);
        cursor.insertText(QStringLiteral("# a note\n"));
        QVERIFY(s.window.hasUnsavedChanges());
        const MessageBoxAnswer asked =
            answerNextMessageBox(QMessageBox::Cancel, [&] { menuAction(s.window, QStringLiteral("tiny"))->trigger(); });
        QVERIFY(asked.seen);
        QVERIFY2(!asked.buttons.contains(QMessageBox::Save), qPrintable(asked.text));
        QVERIFY(asked.buttons.contains(QMessageBox::Discard));
        QCOMPARE(asked.defaultButton, QMessageBox::Cancel);
        QCOMPARE(s.window.document()->filePath(), path); // cancelled: still the file
        // File > Save refuses the text with errors rather than writing the last good config.
        menuAction(s.window, QStringLiteral("Save"))->trigger();
        QCOMPARE(readAll(path), bytes);
    }

    // ---- 15: undo habits ----

    void ctrlZInAFocusedSpinBoxUndoesTheDocument()
    {
        Shown s("tiny");
        s.window.show();
        QApplication::setActiveWindow(&s.window);
        QVERIFY(QTest::qWaitForWindowActive(&s.window));
        Int64SpinBox* tp = spin(s.window, "parallelism.tp");
        tp->setFocus(Qt::OtherFocusReason);
        QVERIFY(tp->hasFocus());
        tp->stepBy(1); // 1 -> 2
        QCOMPARE(s.window.document()->config().parallelism.tp, int64_t(2));
        QUndoStack* stack = s.window.document()->undoStack();
        QCOMPARE(stack->count(), 1);
        QTest::keyClick(tp, Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(s.window.document()->config().parallelism.tp, int64_t(1)); // undone, not a new edit
        QCOMPARE(stack->index(), 0);
        QCOMPARE(stack->count(), 1);
        QCOMPARE(tp->value(), qint64(1));
        QTest::keyClick(tp, Qt::Key_Z, Qt::ControlModifier | Qt::ShiftModifier); // redo
        QCOMPARE(s.window.document()->config().parallelism.tp, int64_t(2));
    }

    void everyValueIsAnUndoStepTypingIsOne()
    {
        Shown s("tiny");
        s.window.show();
        QApplication::setActiveWindow(&s.window);
        QVERIFY(QTest::qWaitForWindowActive(&s.window));
        QUndoStack* stack = s.window.document()->undoStack();
        Int64SpinBox* layers = spin(s.window, "model.layers");
        // 2 -> 4 -> 8 -> 6 as three entries: three steps, each reachable again.
        for (const char* value : { "4", "8", "6" }) {
            layers->setFocus(Qt::OtherFocusReason);
            layers->selectAll();
            QTest::keyClicks(layers, QString::fromLatin1(value));
            QTest::keyClick(layers, Qt::Key_Tab);
        }
        QCOMPARE(s.window.document()->config().model.layers, int64_t(6));
        QCOMPARE(stack->count(), 3);
        stack->undo();
        QCOMPARE(s.window.document()->config().model.layers, int64_t(8));
        stack->undo();
        QCOMPARE(s.window.document()->config().model.layers, int64_t(4));
        // Typing "12" is one step (the text of each keystroke extends the last), not "1" then "12".
        stack->redo();
        stack->redo();
        layers->setFocus(Qt::OtherFocusReason);
        layers->selectAll();
        QTest::keyClicks(layers, QStringLiteral("12"));
        QCOMPARE(s.window.document()->config().model.layers, int64_t(12));
        QCOMPARE(stack->count(), 4);
        stack->undo();
        QCOMPARE(s.window.document()->config().model.layers, int64_t(6));
    }

    void importHuggingFaceIsOneUndoStep()
    {
        Shown s("tiny");
        QAction* undo = menuAction(s.window, QStringLiteral("Undo"));
        QVERIFY(undo);
        QVERIFY(!undo->isEnabled());
        const Config before = s.window.document()->config();
        const QString good = QStringLiteral(STAGECRAFT_SOURCE_DIR "/tests/data/hf/good/gpt2.json");
        QVERIFY(s.window.importHfConfig(good));
        QVERIFY(s.shown.wait(kTimeoutMs));
        QVERIFY(undo->isEnabled());
        QVERIFY2(undo->text().contains(QLatin1String("gpt2.json")), qPrintable(undo->text()));
        undo->trigger();
        QCOMPARE(s.window.document()->config(), before);
    }

    void revertOfABadFileClearsTheBannerAndTheStatus()
    {
        QTemporaryDir dir;
        const QString bad = dir.filePath(QStringLiteral("bad.yaml"));
        QVERIFY(
            writeAll(bad, "name: bad\nmodel:\n  preset: tiny\ntraining:\n  global_batch: 4\nparallelism:\n  tp: 3\n"));
        Shown s("tiny");
        QVERIFY(s.window.openFile(bad));
        auto* banner = s.window.overviewView()->findChild<QLabel*>(QStringLiteral("staleBanner"));
        QVERIFY(banner && !banner->isHidden());
        const auto status = s.window.findChild<QLabel*>(QStringLiteral("synthesisStatus"));
        QVERIFY(status->styleSheet().contains(QLatin1String("#b71c1c")));
        QPushButton* revert = nullptr;
        for (QPushButton* b : s.window.configEditor()->findChildren<QPushButton*>())
            if (b->text() == QLatin1String("Revert"))
                revert = b;
        QVERIFY(revert && revert->isEnabled());
        revert->click();
        QVERIFY(!s.window.configEditor()->hasUnappliedText());
        QVERIFY(banner->isHidden());
        QVERIFY2(!status->styleSheet().contains(QLatin1String("#b71c1c")), qPrintable(status->text()));
        QVERIFY(!s.window.isWindowModified());
    }

    void titleNamesThePresetPicked()
    {
        Shown s("tiny");
        QComboBox* presets = s.window.configEditor()->presetCombo();
        const int index = presets->findData(QStringLiteral("llama3-70b"));
        QVERIFY(index >= 0);
        presets->setCurrentIndex(index);
        Q_EMIT presets->activated(index);
        QCOMPARE(s.window.document()->config().name, std::string("llama3-70b"));
        QCOMPARE(s.window.windowTitle(), QStringLiteral("llama3-70b (preset)[*]"));
        QVERIFY(s.window.isWindowModified());
        QCOMPARE(s.window.document()->displayName(), QStringLiteral("llama3-70b (preset)"));
        s.window.document()->undoStack()->undo();
        QCOMPARE(s.window.windowTitle(), QStringLiteral("tiny (preset)[*]"));
    }

    void exportDialogStaysReadyAfterASuccessfulExport()
    {
        const auto result = test::synth("tiny", QStringList { QStringLiteral("parallelism.dp=2") });
        QTemporaryDir tmp;
        ExportDialog dialog(result, false);
        dialog.setDirectory(tmp.path());
        dialog.setName(QStringLiteral("run"));
        QSignalSpy finished(&dialog, &ExportDialog::exportFinished);
        dialog.startExport();
        QVERIFY(finished.wait(kTimeoutMs));
        QCOMPARE(finished.first().first().toBool(), true);
        // Its own files are no conflict: no red message, Export stays enabled and replaces them (and only them).
        QVERIFY2(dialog.validationMessage().isEmpty(), qPrintable(dialog.validationMessage()));
        QPushButton* exportButton = nullptr;
        for (QPushButton* b : dialog.findChildren<QPushButton*>())
            if (b->text().remove(QLatin1Char('&')) == QLatin1String("Export"))
                exportButton = b;
        QVERIFY(exportButton && exportButton->isEnabled());
        QVERIFY(writeAll(tmp.filePath(QStringLiteral("notes.txt")), "not ours\n"));
        dialog.startExport();
        QVERIFY(finished.wait(kTimeoutMs));
        QCOMPARE(finished.last().first().toBool(), true);
        // tiny with dp 2: 2 rank files, the groups and the config; and the unrelated file.
        QCOMPARE(QDir(tmp.path()).entryList(QDir::Files).size(), 5);
        QCOMPARE(readAll(tmp.filePath(QStringLiteral("notes.txt"))), QByteArray("not ours\n"));
        // Another name that finds files there is still refused.
        dialog.setName(QStringLiteral("run"));
        dialog.setRankRange(0, 1);
        QVERIFY(dialog.validationMessage().contains(QLatin1String("already holds files")));
    }

    // ---- 11: the Training/Inference switch, "Make servable", values in force, the preset's source ----

    void inferenceSwitchOffersMakeServable()
    {
        Shown s("llama3-70b");
        s.window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&s.window));
        ConfigForm* form = s.window.configEditor()->form();
        combo(s.window, "workload")->setCurrentText(QStringLiteral("inference"));
        const Config serving = s.window.document()->config();
        QCOMPARE(serving.workload, Workload::Inference);
        // The batch comes from the training plan: global_batch 128, a multiple of dp * pp = 2 * 4 (the preset).
        QCOMPARE(serving.inference.batch, int64_t(128));
        QCOMPARE(s.window.document()->undoStack()->count(), 1); // one step
        // What is left is what only training accepts, and one button clears it: cp (a mesh axis of the GPU count)
        // is an error; ZeRO and the interleaved schedule are ignored for serving with a note at each key.
        QStringList errors, notes;
        for (const Diagnostic& d : validateConfig(serving))
            (d.severity == Severity::Error ? errors : notes) << QString::fromStdString(d.keyPath);
        QCOMPARE(errors, QStringList({ QStringLiteral("parallelism.cp") }));
        QVERIFY2(notes.contains(QStringLiteral("parallelism.zero")), qPrintable(notes.join(u' ')));
        QVERIFY2(notes.contains(QStringLiteral("parallelism.schedule")), qPrintable(notes.join(u' ')));
        QPushButton* servable = form->servableButton();
        QVERIFY(servable && servable->isVisible() && servable->isEnabled());
        QVERIFY2(servable->toolTip().contains(QStringLiteral("parallelism.zero: 1 \u2192 0")),
            qPrintable(servable->toolTip()));
        // The ZeRO row shown to be fixed stays where it is when set to 0 by hand: no row moves under the mouse.
        QWidget* zero = form->fieldWidget(QStringLiteral("parallelism.zero"));
        QWidget* below = form->fieldWidget(QStringLiteral("parallelism.schedule"));
        QVERIFY(zero->isVisible());
        QTest::qWait(1);
        const int belowY = below->mapTo(form, QPoint()).y();
        QVERIFY(form->setFieldText(QStringLiteral("parallelism.zero"), QStringLiteral("0")));
        QCOMPARE(s.window.document()->config().parallelism.zero, 0);
        QVERIFY(zero->isVisible());
        QTest::qWait(1);
        QCOMPARE(below->mapTo(form, QPoint()).y(), belowY);
        servable->click();
        const Config fixed = s.window.document()->config();
        for (const Diagnostic& d : validateConfig(fixed))
            QVERIFY2(d.severity != Severity::Error, d.toString().c_str());
        QCOMPARE(fixed.parallelism.cp, int64_t(1));
        QCOMPARE(fixed.parallelism.dp, int64_t(4)); // dp 2 * cp 2: the same 64 GPUs
        QCOMPARE(fixed.parallelism.virtualStages, int64_t(1));
        QCOMPARE(fixed.parallelism.schedule, Schedule::OneFOneB);
        QVERIFY(!servable->isEnabled());
        QVERIFY(servable->isVisible()); // greyed, not gone
        QVERIFY(s.shown.wait(kTimeoutMs)); // it synthesizes
        // Back to training: the training batch is the one it had, never 0.
        combo(s.window, "workload")->setCurrentText(QStringLiteral("training"));
        QCOMPARE(s.window.document()->config().training.globalBatch, int64_t(128));
    }

    void servingPresetSwitchedToTrainingHasABatch()
    {
        Shown s("llama3-70b-serving");
        combo(s.window, "workload")->setCurrentText(QStringLiteral("training"));
        const Config c = s.window.document()->config();
        // inference.batch 64 on dp 1, pp 1 (resources/presets/llama3-70b-serving.yaml): 64 sequences per iteration.
        QCOMPARE(c.training.globalBatch, int64_t(64));
        for (const Diagnostic& d : validateConfig(c))
            QVERIFY2(d.keyPath != "training.global_batch", d.toString().c_str());
    }

    void interleavedServingNamesTheScheduleNotVirtualStages()
    {
        // virtual_stages is 1 already: the fix is the schedule, and the message says so.
        Config c = *loadConfigOrPreset("llama3-70b").config;
        c.workload = Workload::Inference;
        c.parallelism.virtualStages = 1;
        bool found = false;
        for (const Diagnostic& d : validateConfig(c)) {
            QVERIFY2(d.keyPath != "parallelism.virtual_stages", d.toString().c_str());
            if (d.keyPath == "parallelism.schedule" && d.severity == Severity::Note) {
                QVERIFY2(d.message.find("ignored for serving") != std::string::npos, d.message.c_str());
                QVERIFY2(d.message.find("(1f1b, one virtual stage") != std::string::npos, d.message.c_str());
                found = true;
            }
        }
        QVERIFY(found);
    }

    void automaticZerosShowTheValueInForce()
    {
        Shown s("llama3-70b-serving");
        // decode_steps 0 = min(4, output_tokens - 1) = min(4, 255) (the preset's header says 4 are written).
        Int64SpinBox* steps = spin(s.window, "inference.decode_steps");
        QCOMPARE(steps->value(), qint64(0));
        QCOMPARE(steps->text(), QStringLiteral("auto (4)"));
        // cluster.gemm_efficiency 0 = the H100 preset's 0.801 (resources/gpus/h100-sxm.yaml, Bekman's table).
        QComboBox* gemm = combo(s.window, "cluster.gemm_efficiency");
        QCOMPARE(gemm->currentText(), QString());
        QCOMPARE(gemm->lineEdit()->placeholderText(), QStringLiteral("auto (0.801)"));
        // Typing a value sets it; emptying the field is automatic again.
        QVERIFY(s.window.configEditor()->form()->setFieldText(
            QStringLiteral("cluster.gemm_efficiency"), QStringLiteral("0.7")));
        QCOMPARE(s.window.document()->config().cluster.gemmEfficiency, 0.7);
        QVERIFY(s.window.configEditor()->form()->setFieldText(QStringLiteral("cluster.gemm_efficiency"), QString()));
        QCOMPARE(s.window.document()->config().cluster.gemmEfficiency, 0.0);
        // A number typed into the automatic spin box is taken as typed.
        QVERIFY(s.window.configEditor()->form()->setFieldText(
            QStringLiteral("inference.decode_steps"), QStringLiteral("2")));
        QCOMPARE(s.window.document()->config().inference.decodeSteps, int64_t(2));
        QCOMPARE(steps->text(), QStringLiteral("2"));
    }

    void presetSourceIsShown()
    {
        Shown s("llama3-70b");
        auto* source = s.window.configEditor()->findChild<QToolButton*>(QStringLiteral("presetSourceButton"));
        QVERIFY(source && source->isEnabled());
        // resources/presets/llama3-70b.yaml's header: the paper and NeMo's recommended config it cites.
        QVERIFY2(source->toolTip().contains(QLatin1String("arXiv:2407.21783")), qPrintable(source->toolTip()));
        QVERIFY2(source->toolTip().contains(QLatin1String("NVIDIA/NeMo")), qPrintable(source->toolTip()));
    }
};

QTEST_MAIN(TestEditingHabits)
#include "tst_editinghabits.moc"
