// SPDX-License-Identifier: MIT
#include "interruptguard.h"

#include <atomic>
#include <csignal>

namespace stagecraft::cli {

namespace {

    std::atomic<int> s_signal { 0 };
    constexpr int kSignals[] = { SIGINT, SIGTERM, SIGHUP };
    struct sigaction s_old[3] {};

    extern "C" void onInterrupt(int sig)
    {
        int none = 0;
        s_signal.compare_exchange_strong(none, sig);
    }

} // namespace

InterruptGuard::InterruptGuard()
{
    s_signal = 0;
    struct sigaction action
    {
    };
    action.sa_handler = onInterrupt;
    sigemptyset(&action.sa_mask);
    for (size_t i = 0; i < 3; ++i)
        sigaction(kSignals[i], &action, &s_old[i]);
}

InterruptGuard::~InterruptGuard()
{
    for (size_t i = 0; i < 3; ++i)
        sigaction(kSignals[i], &s_old[i], nullptr);
}

int InterruptGuard::signal()
{
    return s_signal.load();
}

} // namespace stagecraft::cli
