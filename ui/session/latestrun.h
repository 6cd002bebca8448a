// SPDX-License-Identifier: MIT
#pragma once

#include <QFutureWatcher>
#include <QObject>
#include <QThreadPool>
#include <QtConcurrent/QtConcurrentRun>
#include <atomic>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

namespace stagecraft {

/// "Latest run wins" for a view's background work: a private one-thread pool, a generation counter and a
/// QFutureWatcher per run. start(work, apply) runs `work()` in the worker and, on the GUI thread, `apply(result)` when
/// it finishes, unless a newer start() or a cancel() came in between; such a superseded run is dropped (and one that
/// has not begun never runs). settled() follows the apply of the latest run, or a cancel() of a running one.
///
/// `work` gets copies only (the shared, immutable result and plain values) and touches no QObject. It should not
/// throw: a run whose work threw has no result and counts as dropped.
///
/// Keep it as a member of the view, so it is destroyed (waiting for a running task) before the widget and no
/// callback outlives the view:
///
///     LatestRun m_run;
///     m_run.start([result = m_result] { return buildData(*result); }, [this](Data data) { show(data); });
class LatestRun : public QObject
{
    Q_OBJECT
public:
    explicit LatestRun(QObject* parent = nullptr);
    ~LatestRun() override;

    /// Runs `work` (a callable returning a value) in the worker; `apply(value)` runs on the GUI thread if this is
    /// still the latest run when it finishes. `dropped(std::optional<value>)`, when given, runs instead for a run
    /// that was superseded or cancelled (the value when the work got to return one).
    template <typename Work, typename Apply, typename Dropped = std::nullptr_t>
    void start(Work work, Apply apply, Dropped dropped = nullptr);
    /// Drops every run in flight: none of them applies. Emits settled() when one was running.
    void cancel();
    /// True from start() until the latest run is applied or cancelled.
    bool isRunning() const;

Q_SIGNALS:
    /// The latest run has been applied (or cancelled) and no newer one is running.
    void settled();

private:
    /// Marks `generation` done; true when it is the latest run.
    bool finish(quint64 generation);

    QThreadPool m_pool;
    quint64 m_generation = 0;
    /// m_generation, for the worker: a queued run that is no longer the latest skips its work.
    std::shared_ptr<std::atomic<quint64>> m_latest = std::make_shared<std::atomic<quint64>>(0);
    bool m_running = false;
};

template <typename Work, typename Apply, typename Dropped>
void LatestRun::start(Work work, Apply apply, Dropped dropped)
{
    using Result = std::invoke_result_t<Work&>;
    const quint64 generation = ++m_generation;
    m_latest->store(generation);
    m_running = true;
    // A run superseded before it began skips its work; one already running finishes and is dropped.
    auto task = [work = std::move(work), generation, latest = m_latest]() mutable -> std::optional<Result> {
        if (latest->load() != generation)
            return std::nullopt;
        return work();
    };
    auto* watcher = new QFutureWatcher<std::optional<Result>>(this);
    connect(watcher, &QFutureWatcherBase::finished, this,
        [this, watcher, generation, apply = std::move(apply), dropped = std::move(dropped)]() mutable {
            watcher->deleteLater();
            QFuture<std::optional<Result>> future = watcher->future();
            std::optional<Result> value = future.resultCount() > 0 ? future.takeResult() : std::nullopt;
            const bool latest = finish(generation);
            if (latest && value) {
                apply(std::move(*value));
                // apply() may have started the next run: then that one settles.
                if (generation == m_generation)
                    Q_EMIT settled();
                return;
            }
            if constexpr (!std::is_null_pointer_v<Dropped>)
                dropped(std::move(value));
            if (latest)
                Q_EMIT settled();
        });
    watcher->setFuture(QtConcurrent::run(&m_pool, std::move(task)));
}

} // namespace stagecraft
