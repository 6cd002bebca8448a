// SPDX-License-Identifier: MIT
#include "sweep/sweepprogress.h"

#include <algorithm>
#include <cmath>

namespace stagecraft {

SweepProgress::SweepProgress(QObject* parent)
    : QObject(parent)
{
}

SweepProgress::~SweepProgress() = default;

void SweepProgress::report(double fraction, const char* stage)
{
    Q_UNUSED(stage);
    fraction = std::clamp(fraction, 0.0, 1.0);
    const int step = static_cast<int>(std::floor(fraction * 200)); // 0.5 % steps
    int last = m_lastStep.load();
    while (step > last) {
        if (m_lastStep.compare_exchange_weak(last, step)) {
            Q_EMIT progressed(fraction);
            return;
        }
    }
}

bool SweepProgress::cancelled() const
{
    return m_cancelled.load();
}

void SweepProgress::cancel()
{
    m_cancelled.store(true);
}

} // namespace stagecraft
