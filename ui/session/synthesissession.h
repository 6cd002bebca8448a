// SPDX-License-Identifier: MIT
#pragma once

#include "config/config.h"
#include "config/diagnostic.h"
#include "synthesis/synthesis.h"

#include <QElapsedTimer>
#include <QFutureWatcher>
#include <QList>
#include <QObject>
#include <QThreadPool>
#include <memory>

namespace stagecraft {

/// Runs core synthesize() off the GUI thread (STYLE.md §2). Lives on the GUI thread; every signal is emitted
/// there. A newer start() supersedes an older run: the older one is cancelled and its outcome never delivered.
class SynthesisSession : public QObject
{
    Q_OBJECT
public:
    explicit SynthesisSession(QObject* parent = nullptr);
    ~SynthesisSession() override;

    /// Copies `config` and starts synthesizing it in the session's private pool; cancels a run still going.
    void start(const Config& config);
    /// Cancels the run in flight (if any) and emits cancelled(); its outcome is dropped.
    void cancel();

    /// Whether runs build only the micro-batches the schedule needs (SynthesisOptions::compressMicroBatches, the
    /// default: the views show a compressed schedule and say so) or every node. Applies from the next start().
    void setCompressMicroBatches(bool compress);
    bool compressMicroBatches() const;

    bool isRunning() const;
    /// Incremented by every start() and cancel(); outcomes of older generations are dropped.
    quint64 generation() const;
    /// The last result delivered by synthesisFinished(), or null.
    std::shared_ptr<const SynthesisResult> lastResult() const;
    /// Wall time of the last delivered run, from start() to its outcome on the GUI thread, in ms.
    qint64 lastDurationMs() const;

Q_SIGNALS:
    void synthesisStarted();
    /// `permille` in [0, 1000]; `stage` is the core's label of the current step.
    void progressChanged(int permille, const QString& stage);
    void synthesisFinished(std::shared_ptr<const stagecraft::SynthesisResult> result);
    void synthesisFailed(const QList<stagecraft::Diagnostic>& diagnostics);
    void cancelled();

private:
    void onFinished();

    QThreadPool m_pool;
    QFutureWatcher<SynthesisOutcome> m_watcher;
    quint64 m_generation = 0;
    quint64 m_watchedGeneration = 0; ///< generation of the future m_watcher follows
    bool m_running = false;
    bool m_compress = true;
    QElapsedTimer m_clock;
    qint64 m_lastDurationMs = 0;
    std::shared_ptr<const SynthesisResult> m_lastResult;
    std::shared_ptr<const ModelGraph> m_graphCache; ///< reused by the next run when the model is unchanged
};

} // namespace stagecraft
