// SPDX-License-Identifier: MIT
#pragma once

#include "synthesis/progress.h"

#include <QPromise>
#include <algorithm>
#include <cmath>
#include <functional>

namespace stagecraft {

/// The core's ProgressSink backed by a worker's QPromise: report() sets the promise's progress value to
/// round(fraction * steps) (only when it changes, so the GUI thread sees at most `steps` updates), cancelled()
/// reads the promise's cancel flag. Lives on the worker's stack; the promise must outlive it.
class PromiseProgress final : public ProgressSink
{
public:
    template <typename T>
    PromiseProgress(QPromise<T>& promise, int steps)
        : m_cancelled([&promise] { return promise.isCanceled(); })
        , m_report([&promise](int value) { promise.setProgressValue(value); })
        , m_steps(std::max(1, steps))
    {
    }

    void report(double fraction, const char*) override
    {
        const int value = std::clamp(static_cast<int>(std::lround(fraction * m_steps)), 0, m_steps);
        if (value == m_last)
            return;
        m_last = value;
        m_report(value);
    }

    bool cancelled() const override
    {
        return m_cancelled();
    }

private:
    std::function<bool()> m_cancelled;
    std::function<void(int)> m_report;
    int m_steps;
    int m_last = -1;
};

} // namespace stagecraft
