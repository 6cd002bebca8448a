// SPDX-License-Identifier: MIT
// LatestRun: the latest run applies, superseded and cancelled ones are dropped (a queued one never runs its work),
// settled() follows the latest apply or a cancel.
#include "session/latestrun.h"

#include <QSemaphore>
#include <QSignalSpy>
#include <QtTest>
#include <atomic>
#include <memory>

using namespace stagecraft;

namespace {

constexpr int kTimeoutMs = 10'000;

} // namespace

class TestLatestRun : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void appliesOnTheGuiThread()
    {
        LatestRun run;
        QSignalSpy settled(&run, &LatestRun::settled);
        int applied = 0;
        QThread* appliedOn = nullptr;
        run.start([] { return 42; },
            [&](int value) {
                applied = value;
                appliedOn = QThread::currentThread();
                QVERIFY(!run.isRunning()); // listeners of apply's signals see a settled run
            });
        QVERIFY(run.isRunning());
        QVERIFY(settled.wait(kTimeoutMs));
        QCOMPARE(settled.count(), 1);
        QCOMPARE(applied, 42);
        QCOMPARE(appliedOn, QThread::currentThread());
        QVERIFY(!run.isRunning());
    }

    void latestWins()
    {
        LatestRun run;
        QSignalSpy settled(&run, &LatestRun::settled);
        QSemaphore began;
        QSemaphore gate;
        auto worked = std::make_shared<std::atomic<int>>(0);
        QList<int> applied;
        QList<int> dropped;
        // The first run holds the worker until the others are queued: the second never runs its work.
        for (int i = 1; i <= 3; ++i) {
            run.start(
                [i, &began, &gate, worked] {
                    if (i == 1) {
                        began.release();
                        gate.acquire();
                    }
                    worked->fetch_add(1);
                    return i;
                },
                [&](int value) { applied << value; },
                [&](const std::optional<int>& value) { dropped << value.value_or(0); });
            if (i == 1)
                QVERIFY(began.tryAcquire(1, kTimeoutMs));
        }
        gate.release();
        QVERIFY(settled.wait(kTimeoutMs));
        QTRY_COMPARE_WITH_TIMEOUT(dropped.size(), 2, kTimeoutMs);
        QCOMPARE(applied, QList<int> { 3 });
        QCOMPARE(settled.count(), 1);
        // Run 1 was running when superseded: it returned its value. Run 2 was queued: it skipped its work.
        QCOMPARE(dropped, (QList<int> { 1, 0 }));
        QCOMPARE(worked->load(), 2);
    }

    void cancelDropsTheRunningOne()
    {
        LatestRun run;
        QSignalSpy settled(&run, &LatestRun::settled);
        QSemaphore began;
        QSemaphore gate;
        bool applied = false;
        bool droppedWithValue = false;
        run.start(
            [&began, &gate] {
                began.release();
                gate.acquire();
                return 1;
            },
            [&](int) { applied = true; },
            [&](const std::optional<int>& value) { droppedWithValue = value.has_value(); });
        QVERIFY(began.tryAcquire(1, kTimeoutMs)); // cancelled while running: it still returns its value
        run.cancel();
        QVERIFY(!run.isRunning());
        QCOMPARE(settled.count(), 1); // at once: the view shows what it showed before
        gate.release();
        QTRY_VERIFY_WITH_TIMEOUT(droppedWithValue, kTimeoutMs);
        QVERIFY(!applied);
        QCOMPARE(settled.count(), 1);
        run.cancel(); // nothing running: no signal
        QCOMPARE(settled.count(), 1);
    }

    void applyMayStartTheNextRun()
    {
        LatestRun run;
        QSignalSpy settled(&run, &LatestRun::settled);
        QList<int> applied;
        run.start([] { return 1; },
            [&](int value) {
                applied << value;
                run.start([] { return 2; }, [&](int next) { applied << next; });
            });
        QTRY_COMPARE_WITH_TIMEOUT(applied.size(), 2, kTimeoutMs);
        QCOMPARE(applied, (QList<int> { 1, 2 }));
        QCOMPARE(settled.count(), 1); // only the last one settles
    }

    void destructionWaitsForTheWorker()
    {
        auto finished = std::make_shared<std::atomic<bool>>(false);
        QSemaphore began;
        {
            LatestRun run;
            run.start(
                [finished, &began] {
                    began.release();
                    QThread::msleep(50);
                    finished->store(true);
                    return 0;
                },
                [](int) { QFAIL("a destroyed run never applies"); });
            QVERIFY(began.tryAcquire(1, kTimeoutMs));
        }
        QVERIFY(finished->load());
        QTest::qWait(20); // no callback fires after the run is gone
    }
};

QTEST_MAIN(TestLatestRun)
#include "tst_latestrun.moc"
