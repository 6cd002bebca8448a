// SPDX-License-Identifier: MIT
#include "session/synthesissession.h"

#include <QLoggingCategory>
#include <QPromise>
#include <QThread>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <cmath>
#include <exception>

Q_LOGGING_CATEGORY(lcSession, "stagecraft.session", QtInfoMsg)

namespace stagecraft {

namespace {

    constexpr int kProgressMax = 1000;
    constexpr int kProgressStep = 5; // 0.5 %: finer steps only flood the GUI thread with events

    /// The core's progress interface backed by the run's promise. Lives on the worker's stack.
    class PromiseProgress final : public ProgressSink
    {
    public:
        explicit PromiseProgress(QPromise<SynthesisOutcome>& promise)
            : m_promise(promise)
        {
        }

        void report(double fraction, const char* stage) override
        {
            const int permille = std::clamp(static_cast<int>(std::lround(fraction * kProgressMax)), 0, kProgressMax);
            if (permille < m_lastPermille + kProgressStep && permille != kProgressMax)
                return;
            m_lastPermille = permille;
            m_promise.setProgressValueAndText(permille, QString::fromUtf8(stage ? stage : ""));
        }

        bool cancelled() const override
        {
            return m_promise.isCanceled();
        }

    private:
        QPromise<SynthesisOutcome>& m_promise;
        int m_lastPermille = -kProgressStep;
    };

    SynthesisOutcome internalError(const std::string& what)
    {
        SynthesisOutcome outcome;
        outcome.diagnostics.push_back({ Severity::Error, {}, 0, 0, {}, "internal error during synthesis: " + what });
        return outcome;
    }

    /// The worker. Touches only its by-value arguments and the promise.
    void runSynthesis(QPromise<SynthesisOutcome>& promise, const Config& config,
        const std::shared_ptr<const ModelGraph>& graphCache, bool compress)
    {
        promise.setProgressRange(0, kProgressMax);
        PromiseProgress progress(promise);
        SynthesisOutcome outcome;
        try {
            // The interactive path: repeated micro-batches stay one steady state plus the schedule (exports
            // synthesize in full, see exportTrace()).
            SynthesisOptions options;
            options.compressMicroBatches = compress;
            outcome = synthesize(config, &progress, graphCache, options);
        } catch (const std::exception& e) {
            outcome = internalError(e.what());
        } catch (...) {
            outcome = internalError("unknown exception");
        }
        if (promise.isCanceled())
            outcome.cancelled = true;
        promise.addResult(std::move(outcome));
    }

} // namespace

SynthesisSession::SynthesisSession(QObject* parent)
    : QObject(parent)
{
    // Two threads: a superseding run starts at once while the cancelled one winds down.
    m_pool.setMaxThreadCount(std::clamp(QThread::idealThreadCount(), 1, 2));
    connect(&m_watcher, &QFutureWatcherBase::finished, this, &SynthesisSession::onFinished);
    connect(&m_watcher, &QFutureWatcherBase::progressValueChanged, this, [this](int value) {
        if (m_running && m_watchedGeneration == m_generation)
            Q_EMIT progressChanged(value, m_watcher.progressText());
    });
}

SynthesisSession::~SynthesisSession()
{
    // The workers own copies of their inputs; cancelling lets m_pool's destructor join them quickly.
    m_watcher.disconnect(this);
    m_watcher.future().cancel();
}

void SynthesisSession::start(const Config& config)
{
    if (m_running)
        m_watcher.future().cancel();
    ++m_generation;
    m_watchedGeneration = m_generation;
    m_running = true;
    m_clock.start();
    qCDebug(lcSession) << "start generation" << m_generation << "world" << config.parallelism.worldSize();
    // Arguments are decay-copied into the task: the worker never reads GUI state.
    m_watcher.setFuture(QtConcurrent::run(&m_pool, runSynthesis, config, m_graphCache, m_compress));
    Q_EMIT synthesisStarted();
}

void SynthesisSession::cancel()
{
    if (!m_running)
        return;
    m_watcher.future().cancel();
    ++m_generation;
    m_running = false;
    Q_EMIT cancelled();
}

void SynthesisSession::setCompressMicroBatches(bool compress)
{
    m_compress = compress;
}

bool SynthesisSession::compressMicroBatches() const
{
    return m_compress;
}

bool SynthesisSession::isRunning() const
{
    return m_running;
}

quint64 SynthesisSession::generation() const
{
    return m_generation;
}

std::shared_ptr<const SynthesisResult> SynthesisSession::lastResult() const
{
    return m_lastResult;
}

qint64 SynthesisSession::lastDurationMs() const
{
    return m_lastDurationMs;
}

void SynthesisSession::onFinished()
{
    const QFuture<SynthesisOutcome> future = m_watcher.future();
    if (m_watchedGeneration != m_generation) {
        qCDebug(lcSession) << "dropping outcome of stale generation" << m_watchedGeneration;
        return;
    }
    m_running = false;
    if (future.isCanceled() || future.resultCount() == 0) {
        Q_EMIT cancelled();
        return;
    }
    SynthesisOutcome outcome = future.result();
    if (outcome.cancelled) {
        Q_EMIT cancelled();
        return;
    }
    m_lastDurationMs = m_clock.elapsed();
    if (outcome.result) {
        m_lastResult = outcome.result;
        if (outcome.result->graph)
            m_graphCache = outcome.result->graph;
        qCDebug(lcSession) << "generation" << m_generation << "finished in" << m_lastDurationMs << "ms";
        Q_EMIT synthesisFinished(outcome.result);
        return;
    }
    if (outcome.diagnostics.empty())
        outcome = internalError("synthesis returned neither a result nor a diagnostic");
    qCDebug(lcSession) << "generation" << m_generation << "failed with" << outcome.diagnostics.size() << "diagnostics";
    Q_EMIT synthesisFailed(QList<Diagnostic>(outcome.diagnostics.begin(), outcome.diagnostics.end()));
}

} // namespace stagecraft
