// SPDX-License-Identifier: MIT
#pragma once

namespace stagecraft::cli {

/// While it lives, SIGINT, SIGTERM and SIGHUP do not end the process at once: they are recorded, and long work
/// (an export, a simulator run) polls signal() through its progress sink's cancelled() and stops cleanly: an
/// export keeps the old set, a simulator's process group is killed. Restores the previous handlers when it goes.
/// One at a time.
class InterruptGuard
{
public:
    InterruptGuard();
    ~InterruptGuard();
    InterruptGuard(const InterruptGuard&) = delete;
    InterruptGuard& operator=(const InterruptGuard&) = delete;

    /// The first signal received since construction, 0 for none. Async-signal-safe to call.
    static int signal();
    /// The exit code of a process ended by `sig` (128 + sig, as a shell reports it).
    static int exitCodeFor(int sig)
    {
        return 128 + sig;
    }
};

} // namespace stagecraft::cli
