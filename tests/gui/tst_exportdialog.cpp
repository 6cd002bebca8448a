// SPDX-License-Identifier: MIT
// ExportDialog: writes a real trace set in its worker (rank files + communicator groups), honours rank ranges,
// refuses to overwrite an earlier export unless told, validates the name, and a cancel leaves nothing.
// "Simulate with ASTRA-sim...": enabled by a whole protobuf export and a binary; the simulation dialog runs a
// stand-in simulator (a shell script printing ASTRA-sim's `finished` lines), shows it against the estimate, and
// its Cancel stops the simulator.
#include "chakra/chakrareader.h"
#include "estimate/stepestimate.h"
#include "guihelpers.h"
#include "models/simulationmodel.h"
#include "simulate/astrasimrunner.h"
#include "widgets/exportdialog.h"
#include "widgets/simulatedialog.h"

#include <QAbstractItemModelTester>
#include <QDir>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QtTest>

using namespace stagecraft;
using stagecraft::test::synth;

namespace {

constexpr int kTimeoutMs = 120'000;

// tiny with dp 2, tp 2, pp 2: world = dp * tp * pp = 8 ranks in 2 classes (one per pipeline stage).
const QStringList kDp2Tp2Pp2 { QStringLiteral("parallelism.dp=2"), QStringLiteral("parallelism.tp=2"),
    QStringLiteral("parallelism.pp=2") };

QStringList filesIn(const QString& dir)
{
    return QDir(dir).entryList(QDir::Files | QDir::Hidden, QDir::Name);
}

QPushButton* exportButton(const ExportDialog& dialog)
{
    return dialog.findChild<QPushButton*>(QStringLiteral("exportButton"));
}

QPushButton* simulateButton(const ExportDialog& dialog)
{
    return dialog.findChild<QPushButton*>(QStringLiteral("simulateButton"));
}

/// An executable shell script at `path` running `body`.
QString writeScript(const QString& path, const QByteArray& body)
{
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        qFatal("cannot write %s", qPrintable(path));
    file.write("#!/bin/sh\n" + body);
    file.close();
    file.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    return path;
}

/// A stand-in simulator reporting ranks 0..7 finished at 1000 + 10 r ns with 100 + r ns exposed communication.
QString passingStandIn(const QString& path)
{
    return writeScript(path,
        "r=0\nwhile [ $r -lt 8 ]; do\n"
        "  echo \"sys[$r] finished, $((1000 + 10 * r)) cycles, exposed communication $((100 + r)) cycles.\"\n"
        "  r=$((r + 1))\ndone\n");
}

/// Exports `dialog`'s result and waits for the end; true when it succeeded.
bool exportAndWait(ExportDialog& dialog)
{
    QSignalSpy finished(&dialog, &ExportDialog::exportFinished);
    dialog.startExport();
    return finished.wait(kTimeoutMs) && finished.first().first().toBool();
}

} // namespace

class TestExportDialog : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void exportsEveryRankAndTheGroups()
    {
        const auto result = synth("tiny", kDp2Tp2Pp2);
        QTemporaryDir tmp;
        const QString out = tmp.filePath(QStringLiteral("traces")); // created by the export
        ExportDialog dialog(result, false);
        dialog.setDirectory(out);
        dialog.setName(QStringLiteral("run"));
        QVERIFY2(dialog.validationMessage().isEmpty(), qPrintable(dialog.validationMessage()));
        QVERIFY(exportButton(dialog)->isEnabled());
        QSignalSpy finished(&dialog, &ExportDialog::exportFinished);
        dialog.startExport();
        QVERIFY(dialog.isRunning());
        QVERIFY(finished.wait(kTimeoutMs));
        QCOMPARE(finished.first().first().toBool(), true);
        QVERIFY(!dialog.isRunning());

        QStringList expected { QStringLiteral("run.json"), QStringLiteral("run.yaml") };
        for (int r = 0; r < 8; ++r)
            expected << QStringLiteral("run.%1.et").arg(r);
        expected.sort();
        QCOMPARE(filesIn(out), expected);
        const auto summary = dialog.lastSummary();
        QVERIFY(summary);
        QCOMPARE(summary->files, 8);
        QVERIFY(summary->wroteGroups);
        QVERIFY(!summary->cancelled);
        // Every file reads back as a Chakra trace; together they hold the nodes and bytes the summary states.
        uint64_t nodes = 0, bytes = 0;
        for (int r = 0; r < 8; ++r) {
            const QString path = QDir(out).filePath(QStringLiteral("run.%1.et").arg(r));
            const ChakraReadResult read = readChakraFile(path.toStdString());
            QVERIFY2(read.ok(), read.error.c_str());
            QVERIFY(!read.trace->nodes.empty());
            nodes += read.trace->nodes.size();
            bytes += static_cast<uint64_t>(QFileInfo(path).size());
        }
        QCOMPARE(summary->nodes, nodes);
        QCOMPARE(summary->bytes, bytes);
        QVERIFY2(dialog.resultText().startsWith(QLatin1String("Wrote 8 rank files")), qPrintable(dialog.resultText()));
        QVERIFY(dialog.resultText().contains(QLatin1String("stagecraft inspect")));
    }

    void rankRangeWritesOnlyThoseRanks()
    {
        const auto result = synth("tiny", kDp2Tp2Pp2);
        QTemporaryDir tmp;
        ExportDialog dialog(result, false);
        dialog.setDirectory(tmp.path());
        dialog.setName(QStringLiteral("part"));
        dialog.setFormat(ChakraFileFormat::Json);
        dialog.setRankRange(2, 5);
        QCOMPARE(dialog.options().firstRank, 2);
        QCOMPARE(dialog.options().endRank, 5);
        const auto plan = dialog.findChild<QLabel*>(QStringLiteral("exportPlan"));
        QVERIFY2(plan->text().startsWith(QLatin1String("Writes 3 rank files")), qPrintable(plan->text()));
        QSignalSpy finished(&dialog, &ExportDialog::exportFinished);
        dialog.startExport();
        QVERIFY(finished.wait(kTimeoutMs));
        // Ranks 2, 3, 4; the groups file belongs to the range that starts at rank 0.
        QCOMPARE(filesIn(tmp.path()),
            QStringList(
                { QStringLiteral("part.2.json"), QStringLiteral("part.3.json"), QStringLiteral("part.4.json") }));
        QVERIFY(!dialog.lastSummary()->wroteGroups);
    }

    void refusesToReplaceAnEarlierExportUnlessTold()
    {
        const auto result = synth("tiny", kDp2Tp2Pp2);
        QTemporaryDir tmp;
        {
            ExportDialog first(result, false);
            first.setDirectory(tmp.path());
            first.setName(QStringLiteral("same"));
            QSignalSpy finished(&first, &ExportDialog::exportFinished);
            first.startExport();
            QVERIFY(finished.wait(kTimeoutMs));
        }
        const QString other = tmp.filePath(QStringLiteral("notes.txt"));
        QFile note(other);
        QVERIFY(note.open(QIODevice::WriteOnly));
        note.write("not ours\n");
        note.close();

        ExportDialog second(result, false);
        second.setDirectory(tmp.path());
        second.setName(QStringLiteral("same"));
        QVERIFY2(second.validationMessage().contains(QLatin1String("already holds files of an export named 'same'")),
            qPrintable(second.validationMessage()));
        QVERIFY(!exportButton(second)->isEnabled());
        second.setName(QStringLiteral("other"));
        QVERIFY(second.validationMessage().isEmpty());
        second.setName(QStringLiteral("same"));
        second.setReplaceExisting(true);
        QVERIFY(second.validationMessage().isEmpty());
        QVERIFY(exportButton(second)->isEnabled());
        QSignalSpy finished(&second, &ExportDialog::exportFinished);
        second.startExport();
        QVERIFY(finished.wait(kTimeoutMs));
        QCOMPARE(finished.first().first().toBool(), true);
        // 8 rank files + the groups file + the config + the unrelated file, which an export never touches.
        QCOMPARE(filesIn(tmp.path()).size(), 11);
        QVERIFY(QFile::exists(other));
    }

    void rejectsBadNamesAndFolders_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("subdir");
        QTest::addColumn<QString>("expected");
        QTest::newRow("dotdot") << QStringLiteral("..x") << QString() << QStringLiteral("contains '..'");
        QTest::newRow("separator") << QStringLiteral("a/b") << QString() << QStringLiteral("path separator");
        QTest::newRow("empty") << QString() << QString() << QStringLiteral("the name is empty");
        QTest::newRow("missing parent") << QStringLiteral("ok") << QStringLiteral("no/such/dir")
                                        << QStringLiteral("does not exist");
    }

    void rejectsBadNamesAndFolders()
    {
        QFETCH(QString, name);
        QFETCH(QString, subdir);
        QFETCH(QString, expected);
        const auto result = synth("tiny", {});
        QTemporaryDir tmp;
        ExportDialog dialog(result, false);
        dialog.setDirectory(subdir.isEmpty() ? tmp.path() : tmp.filePath(subdir));
        dialog.setName(name);
        QVERIFY2(dialog.validationMessage().contains(expected), qPrintable(dialog.validationMessage()));
        QVERIFY(!exportButton(dialog)->isEnabled());
        dialog.startExport(); // refused: nothing runs, nothing is written
        QVERIFY(!dialog.isRunning());
        QVERIFY(filesIn(tmp.path()).isEmpty());
    }

    void simulateButtonFollowsTheExportAndTheBinary()
    {
        const auto result = synth("tiny", kDp2Tp2Pp2);
        QTemporaryDir tmp;
        const QString binary = passingStandIn(tmp.filePath(QStringLiteral("fake-astrasim")));
        ExportDialog dialog(result, false);
        dialog.setDirectory(tmp.filePath(QStringLiteral("traces")));
        dialog.setName(QStringLiteral("run"));
        dialog.setAstraSimBinary(binary);
        QPushButton* simulate = simulateButton(dialog);
        QVERIFY(simulate);
        // Nothing exported yet.
        QVERIFY(!simulate->isEnabled());
        QVERIFY2(dialog.simulateUnavailableReason().startsWith(QLatin1String("Export the trace set first")),
            qPrintable(dialog.simulateUnavailableReason()));
        QCOMPARE(simulate->toolTip(), dialog.simulateUnavailableReason());
        QVERIFY(!dialog.openSimulateDialog());

        QVERIFY(exportAndWait(dialog));
        QVERIFY2(dialog.simulateUnavailableReason().isEmpty(), qPrintable(dialog.simulateUnavailableReason()));
        QVERIFY(simulate->isEnabled());

        // The binary: required, and it must be an executable file.
        dialog.setAstraSimBinary(QString());
        QVERIFY(!simulate->isEnabled());
        QVERIFY(dialog.simulateUnavailableReason().contains(QLatin1String("Set the ASTRA-sim binary")));
        dialog.setAstraSimBinary(tmp.filePath(QStringLiteral("no-such-simulator")));
        QVERIFY(!simulate->isEnabled());
        QVERIFY(dialog.simulateUnavailableReason().contains(QLatin1String("not found")));
        dialog.setAstraSimBinary(tmp.filePath(QStringLiteral("traces/run.json")));
        QVERIFY(dialog.simulateUnavailableReason().contains(QLatin1String("not an executable file")));
        dialog.setAstraSimBinary(binary);
        QVERIFY(simulate->isEnabled());

        // While an export runs, and after exports ASTRA-sim cannot read: a rank range, JSON files.
        dialog.setReplaceExisting(true);
        dialog.setRankRange(0, 4);
        QSignalSpy finished(&dialog, &ExportDialog::exportFinished);
        dialog.startExport();
        QVERIFY(dialog.isRunning());
        QVERIFY(!simulate->isEnabled());
        QVERIFY(finished.wait(kTimeoutMs));
        QVERIFY(!simulate->isEnabled());
        QVERIFY(dialog.simulateUnavailableReason().contains(QLatin1String("needs every rank")));
        dialog.setRankRange(0, -1);
        dialog.setFormat(ChakraFileFormat::Json);
        QVERIFY(exportAndWait(dialog));
        QVERIFY(!simulate->isEnabled());
        QVERIFY(dialog.simulateUnavailableReason().contains(QLatin1String("Chakra ET (protobuf)")));
        dialog.setFormat(ChakraFileFormat::Protobuf);
        QVERIFY(exportAndWait(dialog));
        QVERIFY(simulate->isEnabled());
    }

    void simulateShowsTheRunNextToTheEstimate()
    {
        const auto result = synth("tiny", kDp2Tp2Pp2);
        QTemporaryDir tmp;
        ExportDialog dialog(result, false);
        dialog.setDirectory(tmp.filePath(QStringLiteral("traces")));
        dialog.setName(QStringLiteral("run"));
        dialog.setAstraSimBinary(passingStandIn(tmp.filePath(QStringLiteral("fake-astrasim"))));
        QVERIFY(exportAndWait(dialog));
        SimulateDialog* simulation = dialog.openSimulateDialog();
        QVERIFY(simulation);
        QVERIFY(simulation->isRunning());
        QSignalSpy finished(simulation, &SimulateDialog::simulationFinished);
        QVERIFY(finished.wait(kTimeoutMs));
        QCOMPARE(finished.first().first().toBool(), true);
        QVERIFY(!simulation->isRunning());
        QVERIFY2(simulation->statusText().startsWith(QLatin1String("PASS: 8 of 8 ranks finished")),
            qPrintable(simulation->statusText()));
        QVERIFY(QFileInfo(tmp.filePath(QStringLiteral("traces/run.astrasim/cmd.sh"))).isExecutable());

        // One row per stage: the stage's slowest rank (its highest, by the stand-in's 1000 + 10 r) against the
        // estimate of the same result.
        SimulationModel* model = simulation->model();
        QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model->rowCount(), 2);
        std::string error;
        StepEstimate estimate;
        QVERIFY(estimateStep(*result, *gpuPreset(result->config.cluster.gpu), {}, estimate, error));
        for (int row = 0; row < 2; ++row) {
            auto raw = [&](int column) { return model->index(row, column).data(SimulationModel::RawValueRole); };
            qint64 slowest = -1;
            for (qint64 r = 0; r < 8; ++r)
                if (result->classOf(RankId { r }) == row)
                    slowest = r;
            QCOMPARE(raw(SimulationModel::StageColumn).toLongLong(), row);
            QCOMPARE(raw(SimulationModel::RanksColumn).toLongLong(), 4);
            QCOMPARE(raw(SimulationModel::SlowestRankColumn).toLongLong(), slowest);
            const double finishS = (1000.0 + 10.0 * double(slowest)) * 1e-9;
            const double exposedS = (100.0 + double(slowest)) * 1e-9;
            const ClassEstimate& e = estimate.classes[size_t(row)];
            QCOMPARE(raw(SimulationModel::FinishColumn).toDouble(), finishS);
            QCOMPARE(raw(SimulationModel::EstimatedFinishColumn).toDouble(), e.stepTimeS);
            QCOMPARE(raw(SimulationModel::FinishRatioColumn).toDouble(), finishS / e.stepTimeS);
            QCOMPARE(raw(SimulationModel::ExposedColumn).toDouble(), exposedS);
            QCOMPARE(raw(SimulationModel::EstimatedExposedColumn).toDouble(), e.stepTimeS - e.computeTimeS);
            QCOMPARE(raw(SimulationModel::ExposedRatioColumn).toDouble(), exposedS / (e.stepTimeS - e.computeTimeS));
            QVERIFY(!model->index(row, SimulationModel::FinishColumn).data().toString().isEmpty());
        }
        delete simulation;
    }

    void simulateFailureAndCancel()
    {
        const auto result = synth("tiny", kDp2Tp2Pp2);
        QTemporaryDir tmp;
        ExportDialog dialog(result, false);
        dialog.setDirectory(tmp.filePath(QStringLiteral("traces")));
        dialog.setName(QStringLiteral("run"));
        // A stall: rank 0 never finishes, the simulator still exits 0.
        dialog.setAstraSimBinary(writeScript(tmp.filePath(QStringLiteral("stall")),
            "r=1\nwhile [ $r -lt 8 ]; do echo \"sys[$r] finished, 5 cycles, exposed communication 0 cycles.\"; "
            "r=$((r + 1)); done\n"));
        QVERIFY(exportAndWait(dialog));
        SimulateDialog* failing = dialog.openSimulateDialog();
        QVERIFY(failing);
        QSignalSpy failed(failing, &SimulateDialog::simulationFinished);
        QVERIFY(failed.wait(kTimeoutMs));
        QCOMPARE(failed.first().first().toBool(), false);
        QVERIFY2(failing->statusText().startsWith(QLatin1String("FAIL: 7/8 ranks finished; missing rank 0")),
            qPrintable(failing->statusText()));
        QCOMPARE(failing->model()->rowCount(), 2); // the ranks that finished are still shown
        delete failing;

        // A simulator that runs for a minute: Cancel kills it.
        dialog.setAstraSimBinary(writeScript(tmp.filePath(QStringLiteral("slow")), "sleep 60\n"));
        SimulateDialog* slow = dialog.openSimulateDialog();
        QVERIFY(slow);
        QSignalSpy stopped(slow, &SimulateDialog::simulationFinished);
        QTest::qWait(200);
        QVERIFY(slow->isRunning());
        QElapsedTimer clock;
        clock.start();
        slow->cancel();
        QVERIFY(stopped.wait(10'000));
        QVERIFY(clock.elapsed() < 5'000);
        QVERIFY(slow->lastResult());
        QCOMPARE(slow->lastResult()->status, AstraSimStatus::Cancelled);
        QVERIFY2(slow->statusText().startsWith(QLatin1String("Cancelled")), qPrintable(slow->statusText()));
        delete slow;
    }

    void cancelLeavesNothing()
    {
        // 512 ranks (dp 64 x tp 8, cp 1: not the preset's own plan) of llama3-8b, one writer thread; cancelled at the
        // first progress report, so most rank files are never written: an export keeps a whole set or nothing.
        const auto result = synth("llama3-8b",
            { QStringLiteral("parallelism.dp=64"), QStringLiteral("parallelism.tp=8"),
                QStringLiteral("parallelism.cp=1"), QStringLiteral("parallelism.zero=0"),
                QStringLiteral("training.main_grad_dtype=fp32"), QStringLiteral("training.grad_reduce_dtype=fp32"),
                QStringLiteral("training.global_batch=64") });
        QCOMPARE(result->worldSize(), 512);
        QTemporaryDir tmp;
        ExportDialog dialog(result, false);
        dialog.setDirectory(tmp.path());
        dialog.setName(QStringLiteral("big"));
        dialog.findChild<QSpinBox*>(QStringLiteral("exportThreads"))->setValue(1);
        auto* progress = dialog.findChild<QProgressBar*>(QStringLiteral("exportProgress"));
        connect(progress, &QProgressBar::valueChanged, &dialog, [&dialog](int value) {
            if (value > 0)
                dialog.cancelExport();
        });
        QSignalSpy finished(&dialog, &ExportDialog::exportFinished);
        dialog.startExport();
        QVERIFY(finished.wait(kTimeoutMs));
        const auto summary = dialog.lastSummary();
        QVERIFY(summary);
        QVERIFY(summary->cancelled);
        QCOMPARE(summary->files, int64_t(0));
        QVERIFY(!summary->wroteGroups);
        // Nothing at all: no rank file, no temporary, no groups file.
        QCOMPARE(filesIn(tmp.path()), QStringList());
        QVERIFY2(dialog.resultText().startsWith(QLatin1String("Cancelled after")), qPrintable(dialog.resultText()));
    }
};

QTEST_MAIN(TestExportDialog)
#include "tst_exportdialog.moc"
