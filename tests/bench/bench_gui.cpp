// SPDX-License-Identifier: MIT
// GUI latency: from a config edit to every view showing the new result, in the real MainWindow (offscreen), for
// llama3-70b on 16,384 GPUs (dp 256, tp 8, pp 8). The edit toggles training.recompute between selective and none,
// which keeps the world and re-synthesizes every class. Measured per visible tab, because the Memory, Graph and
// Communication tabs finish their own work (down-sampling, layout, the rank matrix) in workers after the result
// arrives (the Overview its step-time estimate); the time ends when that work is on screen (ResultView::settled())
// and the window has repainted. The edit debounce (150 ms by default, a deliberate pause while the user types) is set
// to 0 so the figure is the work itself.
#include "benchfigure.h"
#include "config/configloader.h"
#include "session/configdocument.h"
#include "widgets/mainwindow.h"
#include "widgets/resultview.h"

#include <QApplication>
#include <QEventLoop>
#include <QTimer>
#include <chrono>
#include <cstdio>
#include <memory>

using namespace stagecraft;

namespace {

// Every key of the plan is stated: the preset's own plan (64 GPUs, cp 2, interleaved) is not this one.
const std::vector<std::string> kPlan { "parallelism.dp=256", "parallelism.tp=8", "parallelism.pp=8", "parallelism.cp=1",
    "parallelism.schedule=1f1b", "parallelism.virtual_stages=1", "parallelism.sequence_parallel=true",
    "training.global_batch=2048", "training.recompute=selective", "training.main_grad_dtype=fp32",
    "training.grad_reduce_dtype=fp32" };

/// Waits for `signal` of `sender` (at most 60 s); false on timeout.
template <typename Sender, typename Signal> bool waitFor(Sender* sender, Signal signal)
{
    QEventLoop loop;
    bool fired = false;
    QObject::connect(sender, signal, &loop, [&] {
        fired = true;
        loop.quit();
    });
    QTimer::singleShot(60'000, &loop, &QEventLoop::quit);
    loop.exec();
    return fired;
}

struct Window
{
    MainWindow window { false };
    Config configs[2];

    Window()
    {
        window.resize(1600, 1000);
        window.setSynthesisDelayMs(0);
        window.show();
        const ConfigResult loaded = loadConfigOrPreset("llama3-70b", kPlan);
        if (!loaded.config)
            std::abort();
        configs[0] = *loaded.config;
        configs[1] = configs[0];
        configs[1].training.recompute = Recompute::None;
        QString error;
        if (!window.openConfigOrPreset(QStringLiteral("llama3-70b"),
                { QStringLiteral("parallelism.dp=256"), QStringLiteral("parallelism.tp=8"),
                    QStringLiteral("parallelism.pp=8"), QStringLiteral("parallelism.cp=1"),
                    QStringLiteral("parallelism.schedule=1f1b"), QStringLiteral("parallelism.virtual_stages=1"),
                    QStringLiteral("parallelism.sequence_parallel=true"), QStringLiteral("training.global_batch=2048"),
                    QStringLiteral("training.recompute=selective"), QStringLiteral("training.main_grad_dtype=fp32"),
                    QStringLiteral("training.grad_reduce_dtype=fp32") },
                &error)
            || !waitFor(&window, &MainWindow::resultShown))
            std::abort();
    }
};

// Created on first use, destroyed in main() while the QApplication still exists.
std::unique_ptr<Window> g_window;

Window& window()
{
    if (!g_window)
        g_window = std::make_unique<Window>();
    return *g_window;
}

void editToViews(benchmark::State& state, const char* tab, const char* figure)
{
    Window& w = window();
    if (!w.window.showTab(QString::fromLatin1(tab)))
        std::abort();
    QCoreApplication::processEvents();
    int flip = 0;
    for (auto _ : state) {
        flip ^= 1;
        const auto start = std::chrono::steady_clock::now();
        w.window.document()->edit(w.configs[flip], QStringLiteral("bench"));
        if (!waitFor(&w.window, &MainWindow::resultShown))
            std::abort();
        // The tab's own asynchronous work, when it has some, ends with settled().
        ResultView* view = w.window.currentResultView();
        if (!view->isSettled() && !waitFor(view, &ResultView::settled))
            std::abort();
        w.window.repaint();
        state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    bench::publishNsPerItem(state, figure, "ms", 1'000'000);
}

void BM_EditToOverview(benchmark::State& state)
{
    editToViews(state, "overview", "gui_edit_to_overview_llama3_70b_16384_ms");
}
void BM_EditToMemory(benchmark::State& state)
{
    editToViews(state, "memory", "gui_edit_to_memory_view_llama3_70b_16384_ms");
}
void BM_EditToGraph(benchmark::State& state)
{
    editToViews(state, "graph", "gui_edit_to_graph_view_llama3_70b_16384_ms");
}
void BM_EditToCommunication(benchmark::State& state)
{
    editToViews(state, "communication", "gui_edit_to_communication_view_llama3_70b_16384_ms");
}
BENCHMARK(BM_EditToOverview)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(10);
BENCHMARK(BM_EditToMemory)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(10);
BENCHMARK(BM_EditToGraph)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(10);
BENCHMARK(BM_EditToCommunication)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(10);

} // namespace

int main(int argc, char** argv)
{
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    g_window.reset();
    benchmark::Shutdown();
    return 0;
}
