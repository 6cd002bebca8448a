// SPDX-License-Identifier: MIT
#pragma once

#include <QWidget>
#include <memory>

namespace stagecraft {

struct SynthesisResult;

/// A tab of the main window that shows a synthesis result (overview, report; graph, memory, communication...).
/// MainWindow::addResultView() registers one; the window hands every new result to all of them.
///
/// A view that finishes its work after setResult() (a layout, a down-sampling, an estimate in a worker) is not
/// settled until that work is on screen: isSettled() is false meanwhile and settled() follows. Screenshots and
/// benchmarks wait for it: `if (!view->isSettled()) connect(view, &ResultView::settled, ...)`.
class ResultView : public QWidget
{
    Q_OBJECT
public:
    using QWidget::QWidget;
    ~ResultView() override = default;

    /// Shows `result` (never null). Called on the GUI thread; the view keeps the pointer as long as it needs it.
    virtual void setResult(std::shared_ptr<const SynthesisResult> result) = 0;
    /// True while the shown result is older than the current config (a run is failing); the view may say so.
    virtual void setStale(bool stale)
    {
        Q_UNUSED(stale);
    }
    /// The plan pinned as the baseline (Edit > Pin as Baseline; null: none). Views that compare plans show it
    /// next to the current result (the Overview's table, the Sweep's marker).
    virtual void setBaseline(std::shared_ptr<const SynthesisResult> baseline)
    {
        Q_UNUSED(baseline);
    }
    /// False while work for the shown result (or the latest request of the view's controls) is still running.
    virtual bool isSettled() const
    {
        return true;
    }

Q_SIGNALS:
    /// The view's work has finished and is on screen: isSettled() is true again.
    void settled();
};

} // namespace stagecraft
