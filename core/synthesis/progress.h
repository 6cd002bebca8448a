// SPDX-License-Identifier: MIT
#pragma once

namespace stagecraft {

/// Progress and cancellation, passed into long core work. The core calls it; it never knows who listens
/// (a terminal, a QPromise in the GUI's worker). Implementations must be callable from the worker thread.
class ProgressSink
{
public:
    virtual ~ProgressSink() = default;
    /// `fraction` in [0, 1]; `stage` is a short static label ("building stage 3 of 8").
    virtual void report(double fraction, const char* stage) = 0;
    /// Polled between units of work; true stops the work early (the result is then discarded).
    virtual bool cancelled() const = 0;
};

} // namespace stagecraft
