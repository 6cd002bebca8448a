// SPDX-License-Identifier: MIT
#pragma once

#include "synthesis/progress.h"

#include <QObject>
#include <atomic>

namespace stagecraft {

/// The core's ProgressSink for a sweep running in a worker: report() emits progressed() (queued to receivers on the
/// GUI thread, throttled to 0.5 % steps), cancelled() reads an atomic flag that cancel() sets from any thread.
/// Lives on the GUI thread; the worker only calls report() and cancelled(), so the owner must keep it alive until
/// the worker has returned.
class SweepProgress : public QObject, public ProgressSink
{
    Q_OBJECT
public:
    explicit SweepProgress(QObject* parent = nullptr);
    ~SweepProgress() override;

    void report(double fraction, const char* stage) override;
    bool cancelled() const override;
    void cancel();

Q_SIGNALS:
    /// `fraction` in [0, 1]. Emitted from the worker thread.
    void progressed(double fraction);

private:
    std::atomic<bool> m_cancelled { false };
    std::atomic<int> m_lastStep { -1 };
};

} // namespace stagecraft
