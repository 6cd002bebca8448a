// SPDX-License-Identifier: MIT
// stagecraft-gui: the Qt explorer. `stagecraft-gui [CONFIG]` opens a YAML file or a preset (default: "default").
// Headless modes need no display: --check-config FILE, --help, --version. Anything else without a display (and no
// platform chosen with QT_QPA_PLATFORM or -platform) exits 2 with what to do instead.
#include "charts/memoryview.h"
#include "config/configloader.h"
#include "config/programsize.h"
#include "session/synthesissession.h"
#include "sweep/sweepview.h"
#include "version.h"
#include "widgets/configeditor.h"
#include "widgets/configform.h"
#include "widgets/exportdialog.h"
#include "widgets/layouteditor.h"
#include "widgets/mainwindow.h"
#include "widgets/overviewview.h"
#include "widgets/resultview.h"
#include "widgets/simulatedialog.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QIcon>
#include <QImage>
#include <QPixmap>
#include <QTimer>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace {

/// --help, --version and --check-config run without a display, so they get a QCoreApplication.
bool needsDisplay(int argc, char** argv)
{
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg(argv[i]);
        if (arg == "--check-config" || arg.starts_with("--check-config=") || arg == "-h" || arg == "--help"
            || arg == "--help-all" || arg == "-v" || arg == "--version")
            return false;
    }
    return true;
}

/// Whether Qt can open a window at all. Without a display, QApplication aborts inside Qt ("Could not load the Qt
/// platform plugin xcb ... Reinstalling the application may fix this problem", SIGABRT), which sends a user on a
/// headless machine to reinstall. A platform named by QT_QPA_PLATFORM or -platform (offscreen, vnc, ...) is the
/// user's explicit choice: Qt is trusted with it.
bool platformAvailable(int argc, char** argv)
{
    for (const char* variable : { "DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM" }) {
        const char* value = std::getenv(variable);
        if (value && *value)
            return true;
    }
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg(argv[i]);
        if (arg == "-platform" || arg == "--platform")
            return true;
    }
    return false;
}

void printNoDisplay()
{
    std::fprintf(stderr,
        "stagecraft-gui: no display (neither DISPLAY nor WAYLAND_DISPLAY is set), so no window can open.\n"
        "  Run it in a desktop session, or under a virtual X server (Debian packages xvfb, xauth):\n"
        "    xvfb-run -a stagecraft-gui [CONFIG]\n"
        "  Screenshots need no X server: QT_QPA_PLATFORM=offscreen stagecraft-gui CONFIG --screenshot out.png\n"
        "  The same model's numbers without a window: stagecraft report CONFIG\n");
}

/// Prints every diagnostic as file:line:col: severity: key: message; exit code 2 when there is an error.
int checkConfig(const QString& path, const QStringList& overrides)
{
    std::vector<std::string> sets;
    for (const QString& set : overrides)
        sets.push_back(set.toStdString());
    const stagecraft::ConfigResult result = stagecraft::loadConfigOrPreset(path.toStdString(), sets);
    for (const stagecraft::Diagnostic& d : result.diagnostics)
        std::fprintf(stderr, "%s\n", d.toString().c_str());
    if (!result.config)
        return 2;
    std::printf(
        "%s: ok (world size %lld)\n", qPrintable(path), static_cast<long long>(result.config->parallelism.worldSize()));
    return 0;
}

QIcon applicationIcon()
{
    QIcon icon;
    for (int size : { 16, 32, 48, 64, 128, 256 })
        icon.addFile(QStringLiteral(":/icons/stagecraft-%1.png").arg(size), QSize(size, size));
    return icon;
}

bool parseSize(const QString& text, QSize& size)
{
    const QStringList parts = text.split(QLatin1Char('x'));
    bool okWidth = false;
    bool okHeight = false;
    if (parts.size() == 2)
        size = QSize(parts[0].toInt(&okWidth), parts[1].toInt(&okHeight));
    return okWidth && okHeight && size.width() > 0 && size.height() > 0;
}

} // namespace

int main(int argc, char** argv)
{
    // The views synthesize with micro-batches compressed (SynthesisSession): validation limits the nodes that builds;
    // exports still synthesize every node and refuse a plan too large for that.
    stagecraft::setValidateCompressedProgramSize(true);
    QCoreApplication::setOrganizationName(QStringLiteral("Stagecraft"));
    QCoreApplication::setApplicationName(QStringLiteral("stagecraft-gui"));
    QCoreApplication::setApplicationVersion(QString::fromLatin1(stagecraft::versionString()));
    std::unique_ptr<QCoreApplication> app;
    if (needsDisplay(argc, argv)) {
        if (!platformAvailable(argc, argv)) {
            printNoDisplay();
            return 2;
        }
        app = std::make_unique<QApplication>(argc, argv);
    } else {
        app = std::make_unique<QCoreApplication>(argc, argv);
    }

    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("Stagecraft: synthesize and explore the per-GPU execution traces of distributed LLM training."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("config"),
        QStringLiteral("A YAML config file or a built-in preset name (default: \"default\")."),
        QStringLiteral("[CONFIG]"));
    const QCommandLineOption checkOption(QStringLiteral("check-config"),
        QStringLiteral("Check <file> (or a preset name), print its diagnostics as file:line:col and exit: 0 when "
                       "valid, 2 on errors. Needs no display."),
        QStringLiteral("file"));
    const QCommandLineOption screenshotOption(QStringLiteral("screenshot"),
        QStringLiteral("After the first result is shown, save the window as a PNG to <path> and quit."),
        QStringLiteral("path"));
    const QCommandLineOption tabOption(
        QStringLiteral("tab"), QStringLiteral("Start on tab <name> (overview, report, ...)."), QStringLiteral("name"));
    const QCommandLineOption sizeOption(QStringLiteral("size"),
        QStringLiteral("Window size for --screenshot, WIDTHxHEIGHT (default 1440x900)."), QStringLiteral("size"),
        QStringLiteral("1440x900"));
    const QCommandLineOption setOption(QStringLiteral("set"),
        QStringLiteral("Override a config field, e.g. --set parallelism.tp=4 (repeatable; dotted YAML keys)."),
        QStringLiteral("key=value"));
    const QCommandLineOption configTabOption(QStringLiteral("config-tab"),
        QStringLiteral("Start the configuration panel on tab <name>: form or yaml."), QStringLiteral("name"));
    const QCommandLineOption editOption(QStringLiteral("edit"),
        QStringLiteral("With --screenshot: after the first result, edit a form field as a user would "
                       "(repeatable), and take the screenshot after the next synthesis, good or failed."),
        QStringLiteral("key=value"));
    const QCommandLineOption exportOption(QStringLiteral("export-dialog"),
        QStringLiteral("With --screenshot: after the first result, export the trace from the Export dialog into "
                       "<dir> and take the screenshot of the dialog with its summary."),
        QStringLiteral("dir"));
    const QCommandLineOption simulateOption(QStringLiteral("simulate"),
        QStringLiteral("With --export-dialog: after the export, simulate the trace set with the ASTRA-sim <binary> "
                       "(Simulate with ASTRA-sim...) and take the screenshot of the simulation with its result."),
        QStringLiteral("binary"));
    const QCommandLineOption importHfOption(QStringLiteral("import-hf"),
        QStringLiteral("After opening CONFIG, replace its model with the one mapped from the Hugging Face "
                       "config.json <file> (File > Import Hugging Face Config...)."),
        QStringLiteral("file"));
    QCommandLineOption pinOption(QStringLiteral("pin-baseline"),
        QStringLiteral("With --screenshot and --edit: pin the first result, once its estimate is in, as the baseline "
                       "(Edit > Pin as Baseline) before the edits, so the Overview compares the two plans."));
    // Hidden until the command-line reference in README.md lists it (tests/core/tst_docs compares the two).
    pinOption.setFlags(QCommandLineOption::HiddenFromHelp);
    QCommandLineOption memoryAxisOption(QStringLiteral("memory-axis"),
        QStringLiteral("Start the Memory tab's x axis on <axis>: step or time (the estimated time)."),
        QStringLiteral("axis"));
    memoryAxisOption.setFlags(QCommandLineOption::HiddenFromHelp);
    QCommandLineOption layoutDialogOption(QStringLiteral("layout-dialog"),
        QStringLiteral("With --screenshot: after the first result, open Edit > Pipeline Layout and take the "
                       "screenshot of the editor."));
    layoutDialogOption.setFlags(QCommandLineOption::HiddenFromHelp);
    parser.addOptions({ setOption, checkOption, screenshotOption, tabOption, configTabOption, editOption, sizeOption,
        exportOption, simulateOption, importHfOption, pinOption, memoryAxisOption, layoutDialogOption });
    parser.process(*app);

    if (parser.isSet(checkOption))
        return checkConfig(parser.value(checkOption), parser.values(setOption));
    if (parser.positionalArguments().size() > 1) {
        std::fprintf(stderr, "stagecraft-gui: expected at most one CONFIG\n");
        return 2;
    }

    auto* guiApp = static_cast<QApplication*>(app.get());
    QGuiApplication::setApplicationDisplayName(QStringLiteral("Stagecraft"));
    QGuiApplication::setDesktopFileName(QStringLiteral("stagecraft-gui"));
    guiApp->setWindowIcon(applicationIcon());

    const bool screenshot = parser.isSet(screenshotOption);
    stagecraft::MainWindow window(/*persistSettings=*/!screenshot);
    if (screenshot) {
        QSize size;
        if (!parseSize(parser.value(sizeOption), size)) {
            std::fprintf(stderr, "stagecraft-gui: --size expects WIDTHxHEIGHT, found %s\n",
                qPrintable(parser.value(sizeOption)));
            return 2;
        }
        window.resize(size);
    } else {
        window.restoreSettings();
    }
    if (parser.isSet(tabOption) && !window.showTab(parser.value(tabOption))) {
        std::fprintf(stderr, "stagecraft-gui: no tab \"%s\" (tabs: %s)\n", qPrintable(parser.value(tabOption)),
            qPrintable(window.tabNames().join(QStringLiteral(", "))));
        return 2;
    }
    if (parser.isSet(configTabOption) && !window.configEditor()->showTab(parser.value(configTabOption))) {
        std::fprintf(stderr, "stagecraft-gui: --config-tab expects form or yaml, found %s\n",
            qPrintable(parser.value(configTabOption)));
        return 2;
    }
    if (parser.isSet(memoryAxisOption)) {
        const QString axis = parser.value(memoryAxisOption);
        if (axis != QLatin1String("step") && axis != QLatin1String("time")) {
            std::fprintf(stderr, "stagecraft-gui: --memory-axis expects step or time, found %s\n", qPrintable(axis));
            return 2;
        }
        if (auto* memory = window.findChild<stagecraft::MemoryView*>())
            memory->setXAxis(
                axis == QLatin1String("time") ? stagecraft::MemoryView::TimeAxis : stagecraft::MemoryView::StepAxis);
    }
    const QString config = parser.positionalArguments().value(0, QStringLiteral("default"));
    QString error;
    if (!window.openConfigOrPreset(config, parser.values(setOption), &error)) {
        std::fprintf(stderr, "%s\n", qPrintable(error));
        return 2;
    }
    if (parser.isSet(importHfOption))
        window.importHfConfig(parser.value(importHfOption)); // problems are shown in the window

    if (screenshot) {
        const QString path = parser.value(screenshotOption);
        const QStringList edits = parser.values(editOption);
        const QString exportDir = parser.value(exportOption);
        const QString simulateWith = parser.value(simulateOption);
        const bool pin = parser.isSet(pinOption);
        const bool layoutDialog = parser.isSet(layoutDialogOption);
        if (!simulateWith.isEmpty() && exportDir.isEmpty()) {
            std::fprintf(stderr, "stagecraft-gui: --simulate needs --export-dialog DIR\n");
            return 2;
        }
        auto grab = [&window, path] {
            // Let the views lay out and paint before grabbing.
            auto grabNow = [&window, path] {
                QTimer::singleShot(500, &window, [&window, path] {
                    const bool saved = window.grab().toImage().save(path, "PNG");
                    if (!saved)
                        std::fprintf(stderr, "stagecraft-gui: cannot write %s\n", qPrintable(path));
                    QCoreApplication::exit(saved ? 0 : 1);
                });
            };
            // The Sweep tab shows a sweep only when asked: run one.
            stagecraft::ResultView* view = window.currentResultView();
            if (auto* sweep = qobject_cast<stagecraft::SweepView*>(view); sweep && !sweep->runSweep()) {
                std::fprintf(stderr, "stagecraft-gui: the sweep did not start\n");
                QCoreApplication::exit(1);
                return;
            }
            // A tab that finishes its work after the result arrives (a layout, an estimate...): wait for it.
            auto whenSettled = [&window, view, grabNow] {
                if (view && !view->isSettled())
                    QObject::connect(
                        view, &stagecraft::ResultView::settled, &window, grabNow, Qt::SingleShotConnection);
                else
                    grabNow();
            };
            // A document opened with its baseline synthesizes that again: the tab compares with it once it is in.
            if (window.isSynthesizingBaseline())
                QObject::connect(
                    &window, &stagecraft::MainWindow::baselineShown, &window, whenSettled, Qt::SingleShotConnection);
            else
                whenSettled();
        };
        QObject::connect(
            &window, &stagecraft::MainWindow::resultShown, &window,
            [&window, edits, grab, exportDir, simulateWith, path, pin, layoutDialog] {
                if (layoutDialog) {
                    stagecraft::LayoutEditorDialog* dialog = window.openLayoutEditor();
                    QTimer::singleShot(500, dialog, [dialog, path] {
                        const bool saved = dialog->grab().toImage().save(path, "PNG");
                        if (!saved)
                            std::fprintf(stderr, "stagecraft-gui: cannot write %s\n", qPrintable(path));
                        QCoreApplication::exit(saved ? 0 : 1);
                    });
                    return;
                }
                if (!exportDir.isEmpty()) {
                    stagecraft::ExportDialog* dialog = window.openExportDialog();
                    dialog->setDirectory(exportDir);
                    dialog->setReplaceExisting(true);
                    if (!simulateWith.isEmpty()) {
                        dialog->setAstraSimBinary(simulateWith);
                        QObject::connect(
                            dialog, &stagecraft::ExportDialog::exportFinished, dialog, [dialog, path](bool ok) {
                                stagecraft::SimulateDialog* simulation = ok ? dialog->openSimulateDialog() : nullptr;
                                if (!simulation) {
                                    std::fprintf(stderr, "stagecraft-gui: cannot simulate: %s\n",
                                        qPrintable(ok ? dialog->simulateUnavailableReason() : dialog->resultText()));
                                    QCoreApplication::exit(1);
                                    return;
                                }
                                QObject::connect(simulation, &stagecraft::SimulateDialog::simulationFinished,
                                    simulation, [simulation, path](bool passed) {
                                        QTimer::singleShot(300, simulation, [simulation, path, passed] {
                                            const bool saved = simulation->grab().toImage().save(path, "PNG");
                                            if (!saved)
                                                std::fprintf(
                                                    stderr, "stagecraft-gui: cannot write %s\n", qPrintable(path));
                                            if (!passed)
                                                std::fprintf(stderr, "stagecraft-gui: %s\n",
                                                    qPrintable(simulation->statusText()));
                                            QCoreApplication::exit(saved && passed ? 0 : 1);
                                        });
                                    });
                            });
                        dialog->startExport();
                        return;
                    }
                    QObject::connect(
                        dialog, &stagecraft::ExportDialog::exportFinished, dialog, [dialog, path](bool ok) {
                            QTimer::singleShot(300, dialog, [dialog, path, ok] {
                                const bool saved = dialog->grab().toImage().save(path, "PNG");
                                if (!saved)
                                    std::fprintf(stderr, "stagecraft-gui: cannot write %s\n", qPrintable(path));
                                if (!ok)
                                    std::fprintf(stderr, "stagecraft-gui: %s\n", qPrintable(dialog->resultText()));
                                QCoreApplication::exit(saved && ok ? 0 : 1);
                            });
                        });
                    dialog->startExport();
                    return;
                }
                if (edits.isEmpty()) {
                    grab();
                    return;
                }
                auto applyEdits = [&window, edits, grab, pin] {
                    if (pin)
                        window.pinBaseline();
                    QObject::connect(window.session(), &stagecraft::SynthesisSession::synthesisFinished, &window, grab,
                        Qt::SingleShotConnection);
                    QObject::connect(window.session(), &stagecraft::SynthesisSession::synthesisFailed, &window, grab,
                        Qt::SingleShotConnection);
                    for (const QString& edit : edits) {
                        const QString key = edit.section(QLatin1Char('='), 0, 0);
                        const QString value = edit.section(QLatin1Char('='), 1);
                        if (!window.configEditor()->form()->setFieldText(key, value)) {
                            std::fprintf(
                                stderr, "stagecraft-gui: --edit %s: no such field or value\n", qPrintable(edit));
                            QCoreApplication::exit(2);
                        }
                    }
                };
                // The baseline is pinned with its estimate: wait for the Overview to settle.
                stagecraft::ResultView* overview = window.overviewView();
                if (pin && !overview->isSettled())
                    QObject::connect(
                        overview, &stagecraft::ResultView::settled, &window, applyEdits, Qt::SingleShotConnection);
                else
                    applyEdits();
            },
            Qt::SingleShotConnection);
        if (edits.isEmpty()) {
            QObject::connect(window.session(), &stagecraft::SynthesisSession::synthesisFailed, &window,
                [](const QList<stagecraft::Diagnostic>& diagnostics) {
                    for (const stagecraft::Diagnostic& d : diagnostics)
                        std::fprintf(stderr, "%s\n", d.toString().c_str());
                    QCoreApplication::exit(1);
                });
        }
        QTimer::singleShot(180'000, &window, [] {
            std::fprintf(stderr, "stagecraft-gui: no result within 180 s; no screenshot taken\n");
            QCoreApplication::exit(1);
        });
    }
    window.show();
    return app->exec();
}
