// SPDX-License-Identifier: MIT
// "Any preset plan opens instantly" (issue 17, item 12): for one shipped preset, with its own plan or with a
// single-GPU plan (dp = tp = pp = cp = ep = 1, so micro-batches = global_batch / micro_batch), the time from the
// config edit to the result view settled, for each result tab in turn (the slowest is printed), and the process's
// peak RSS. One plan per process, so that the peak is
// that plan's: tests/bench/run starts it once per preset and plan and prints the figures.
//
// Usage: bench_presets --list                       prints the preset names
//        bench_presets PRESET own|single [--full] [--tab NAME]   prints "<ms> <peak MB> <ok|failed|refused>"
// --full turns the session's micro-batch compression off: every node synthesized, as before issue 17 item 12.
// --tab times only that tab (e.g. overview).
// The real MainWindow (offscreen) first shows the tiny preset (8 sequences) on every tab; then, per tab, with that tab
// shown, the document is edited to the plan (as picking a preset or typing a value does) and timed until the view has
// settled (its own worker work on screen) and the window repainted, and edited back. The edit debounce is 0. A
// plan that fails (e.g. the FLOPs of one iteration on one GPU leave int64) ends when its diagnostics are shown.
#include "config/configloader.h"
#include "config/presets.h"
#include "config/programsize.h"
#include "session/configdocument.h"
#include "session/synthesissession.h"
#include "widgets/mainwindow.h"
#include "widgets/resultview.h"

#include <QApplication>
#include <QEventLoop>
#include <QTimer>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <sys/resource.h>

using namespace stagecraft;

namespace {

/// Runs the event loop until `done()` holds or 120 s pass; false on timeout.
template <typename Done> bool waitUntil(Done done)
{
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (!done()) {
        if (std::chrono::steady_clock::now() > limit)
            return false;
        QEventLoop loop;
        QTimer::singleShot(1, &loop, &QEventLoop::quit);
        loop.exec();
    }
    return true;
}

} // namespace

int main(int argc, char** argv)
{
    qputenv("QT_QPA_PLATFORM", "offscreen");
    if (argc == 2 && std::strcmp(argv[1], "--list") == 0) {
        for (const std::string& name : presetNames())
            std::printf("%s\n", name.c_str());
        return 0;
    }
    bool full = false;
    QString onlyTab;
    bool badArgs = argc < 3 || (std::strcmp(argv[2], "own") != 0 && std::strcmp(argv[2], "single") != 0);
    for (int i = 3; i < argc && !badArgs; ++i) {
        if (std::strcmp(argv[i], "--full") == 0)
            full = true;
        else if (std::strcmp(argv[i], "--tab") == 0 && i + 1 < argc)
            onlyTab = QString::fromLocal8Bit(argv[++i]);
        else
            badArgs = true;
    }
    if (badArgs) {
        std::fprintf(stderr, "usage: bench_presets --list | PRESET own|single [--full] [--tab NAME]\n");
        return 2;
    }
    QApplication app(argc, argv);
    setValidateCompressedProgramSize(!full); // as stagecraft-gui's main() does
    std::vector<std::string> sets;
    if (std::strcmp(argv[2], "single") == 0)
        sets = { "parallelism.dp=1", "parallelism.tp=1", "parallelism.pp=1", "parallelism.cp=1", "parallelism.ep=1",
            "parallelism.first_stage_layers=0", "parallelism.last_stage_layers=0",
            "parallelism.account_for_embedding_in_pipeline_split=false",
            "parallelism.account_for_loss_in_pipeline_split=false" };
    const ConfigResult loaded = loadConfigOrPreset(argv[1], sets);
    if (!loaded.config) {
        // What the config editor would show (e.g. the node limit without compression): nothing is synthesized.
        for (const Diagnostic& d : loaded.diagnostics)
            std::fprintf(stderr, "%s\n", d.toString().c_str());
        std::printf("0 0 refused\n");
        return 0;
    }

    MainWindow window(false);
    window.resize(1600, 1000);
    window.setSynthesisDelayMs(0);
    window.session()->setCompressMicroBatches(!full);
    window.show();
    int results = 0, failures = 0;
    QObject::connect(&window, &MainWindow::resultShown, [&] { ++results; });
    QObject::connect(window.session(), &SynthesisSession::synthesisFailed, [&] { ++failures; });
    QString error;
    // The tiny preset with 8 sequences, so that it differs from every plan measured (the tiny one included).
    if (!window.openConfigOrPreset(QStringLiteral("tiny"), { QStringLiteral("training.global_batch=8") }, &error)
        || !waitUntil([&] { return results > 0; })) {
        std::fprintf(stderr, "the tiny preset did not open: %s\n", qPrintable(error));
        return 1;
    }
    const QStringList tabs = window.tabNames();
    auto settleAllTabs = [&] {
        for (const QString& tab : tabs) {
            window.showTab(tab);
            ResultView* view = window.currentResultView();
            if (view && !waitUntil([&] { return view->isSettled(); }))
                return false;
        }
        return true;
    };
    if (!settleAllTabs())
        return 1;

    // For each result tab: with the tiny preset shown on that tab, edit the document to the plan and time until
    // the tab has settled (what a user looking at that tab waits for); then edit back (not timed). The figure is
    // the slowest tab.
    const ConfigResult tiny = loadConfigOrPreset("tiny", { "training.global_batch=8" });
    double slowestMs = 0;
    bool ok = true;
    for (const QString& tab : tabs) {
        if (!onlyTab.isEmpty() && tab != onlyTab)
            continue;
        window.showTab(tab);
        ResultView* view = window.currentResultView();
        if (view && !waitUntil([&] { return view->isSettled(); }))
            return 1;
        const int resultsBefore = results, failuresBefore = failures;
        const auto start = std::chrono::steady_clock::now();
        window.document()->edit(*loaded.config, QStringLiteral("bench"));
        if (!waitUntil([&] { return results > resultsBefore || failures > failuresBefore; })) {
            std::fprintf(stderr, "no result within 120 s\n");
            return 1;
        }
        ok = results > resultsBefore;
        const double resultMs =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        view = window.currentResultView();
        if (ok && view && !waitUntil([&] { return view->isSettled(); })) {
            std::fprintf(stderr, "the %s view did not settle within 120 s\n", qPrintable(tab));
            return 1;
        }
        window.repaint();
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        std::fprintf(stderr, "  %s: result %.0f ms (synthesis %lld ms), settled %.0f ms\n", qPrintable(tab), resultMs,
            static_cast<long long>(window.session()->lastDurationMs()), ms);
        slowestMs = std::max(slowestMs, ms);
        if (!ok)
            break; // a failure shows the same diagnostics on every tab
        const int back = results;
        window.document()->edit(*tiny.config, QStringLiteral("bench"));
        if (!waitUntil([&] { return results > back && (!view || view->isSettled()); }))
            return 1;
    }
    rusage usage {};
    getrusage(RUSAGE_SELF, &usage);
    std::printf("%.0f %.0f %s\n", slowestMs, static_cast<double>(usage.ru_maxrss) / 1024.0, ok ? "ok" : "failed");
    return 0;
}
