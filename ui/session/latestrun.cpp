// SPDX-License-Identifier: MIT
#include "session/latestrun.h"

namespace stagecraft {

LatestRun::LatestRun(QObject* parent)
    : QObject(parent)
{
    m_pool.setMaxThreadCount(1);
}

LatestRun::~LatestRun()
{
    // Queued runs skip their work; the running one holds its own copies: wait so it does not outlive the pool.
    m_latest->store(0);
    m_pool.waitForDone();
}

void LatestRun::cancel()
{
    m_latest->store(++m_generation);
    if (!m_running)
        return;
    m_running = false;
    Q_EMIT settled();
}

bool LatestRun::isRunning() const
{
    return m_running;
}

bool LatestRun::finish(quint64 generation)
{
    if (generation != m_generation)
        return false;
    m_running = false;
    return true;
}

} // namespace stagecraft
