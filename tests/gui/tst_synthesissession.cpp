// SPDX-License-Identifier: MIT
// SynthesisSession: finish, failure, cancel and superseded runs (STYLE.md §2), observed through its signals.
#include "config/configloader.h"
#include "session/synthesissession.h"

#include <QSignalSpy>
#include <QtTest>

using namespace stagecraft;

namespace {

constexpr int kTimeoutMs = 60'000;

Config tiny(const std::vector<std::string>& overrides = {})
{
    const ConfigResult loaded = loadConfigOrPreset("tiny", overrides);
    if (!loaded.config)
        qFatal("tiny does not load");
    return *loaded.config;
}

/// A config the validator rejects: the tiny preset has 8 heads, and tp = 3 does not divide them.
Config tinyWithBadTp()
{
    Config config = tiny();
    config.parallelism.tp = 3;
    return config;
}

/// A run long enough to still be going when the test cancels or supersedes it: llama3-405b on 2,304 GPUs
/// (tp 8, pp 18 of 7 layers each, dp 16: 128 micro-batches per replica); the core polls for cancellation
/// between pipeline stages.
Config large()
{
    const ConfigResult loaded = loadConfigOrPreset("llama3-405b",
        { "parallelism.tp=8", "parallelism.pp=18", "parallelism.dp=16", "parallelism.pipeline_layout=\"\"",
            "parallelism.schedule=1f1b", "parallelism.virtual_stages=1" });
    if (!loaded.config)
        qFatal("llama3-405b does not load");
    return *loaded.config;
}

std::shared_ptr<const SynthesisResult> resultOf(const QSignalSpy& spy, int index = 0)
{
    return spy.at(index).at(0).value<std::shared_ptr<const SynthesisResult>>();
}

} // namespace

class TestSynthesisSession : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void finishes()
    {
        SynthesisSession session;
        QSignalSpy started(&session, &SynthesisSession::synthesisStarted);
        QSignalSpy finished(&session, &SynthesisSession::synthesisFinished);
        QSignalSpy failed(&session, &SynthesisSession::synthesisFailed);
        QSignalSpy progress(&session, &SynthesisSession::progressChanged);
        // tiny with dp 2, tp 2: world 4.
        session.start(tiny({ "parallelism.dp=2", "parallelism.tp=2" }));
        QCOMPARE(started.count(), 1);
        QVERIFY(session.isRunning());
        QVERIFY(finished.wait(kTimeoutMs));
        QCOMPARE(failed.count(), 0);
        const auto result = resultOf(finished);
        QVERIFY(result);
        QCOMPARE(result->worldSize(), int64_t(4));
        QCOMPARE(result->config.parallelism.tp, int64_t(2));
        QCOMPARE(session.lastResult(), result);
        QVERIFY(!session.isRunning());
        for (const QList<QVariant>& args : std::as_const(progress)) {
            QVERIFY(args.at(0).toInt() >= 0);
            QVERIFY(args.at(0).toInt() <= 1000);
        }
    }

    void fails()
    {
        SynthesisSession session;
        QSignalSpy finished(&session, &SynthesisSession::synthesisFinished);
        QSignalSpy failed(&session, &SynthesisSession::synthesisFailed);
        session.start(tinyWithBadTp());
        QVERIFY(failed.wait(kTimeoutMs));
        QCOMPARE(finished.count(), 0);
        const auto diagnostics = failed.at(0).at(0).value<QList<Diagnostic>>();
        const auto tp = std::find_if(diagnostics.begin(), diagnostics.end(),
            [](const Diagnostic& d) { return d.keyPath == "parallelism.tp" && d.severity == Severity::Error; });
        QVERIFY(tp != diagnostics.end());
        QVERIFY2(tp->message.find("does not divide heads=8") != std::string::npos, tp->message.c_str());
        QVERIFY(!session.isRunning());
        QVERIFY(!session.lastResult());
    }

    void failureKeepsLastResult()
    {
        SynthesisSession session;
        QSignalSpy finished(&session, &SynthesisSession::synthesisFinished);
        QSignalSpy failed(&session, &SynthesisSession::synthesisFailed);
        session.start(tiny());
        QVERIFY(finished.wait(kTimeoutMs));
        const auto good = resultOf(finished);
        session.start(tinyWithBadTp());
        QVERIFY(failed.wait(kTimeoutMs));
        QCOMPARE(session.lastResult(), good);
    }

    void cancels()
    {
        SynthesisSession session;
        QSignalSpy finished(&session, &SynthesisSession::synthesisFinished);
        QSignalSpy cancelled(&session, &SynthesisSession::cancelled);
        const quint64 before = session.generation();
        session.start(large());
        session.cancel();
        QCOMPARE(cancelled.count(), 1);
        QVERIFY(!session.isRunning());
        QVERIFY(session.generation() > before + 1);
        // A cancel with nothing running is a no-op.
        session.cancel();
        QCOMPARE(cancelled.count(), 1);
        // The next run is delivered; the cancelled one never is.
        session.start(tiny());
        QVERIFY(finished.wait(kTimeoutMs));
        QCOMPARE(finished.count(), 1);
        QCOMPARE(resultOf(finished)->worldSize(), int64_t(1));
        QVERIFY(!finished.wait(500));
        QCOMPARE(finished.count(), 1);
        QCOMPARE(cancelled.count(), 1);
    }

    void supersededRunIsDropped()
    {
        SynthesisSession session;
        QSignalSpy started(&session, &SynthesisSession::synthesisStarted);
        QSignalSpy finished(&session, &SynthesisSession::synthesisFinished);
        QSignalSpy cancelled(&session, &SynthesisSession::cancelled);
        const quint64 before = session.generation();
        session.start(large()); // A
        session.start(tiny({ "parallelism.dp=2" })); // B, world 2
        QCOMPARE(started.count(), 2);
        QCOMPARE(session.generation(), before + 2);
        QVERIFY(finished.wait(kTimeoutMs));
        QCOMPARE(resultOf(finished)->worldSize(), int64_t(2));
        // A was superseded, not cancelled by the user: no cancelled(), and its outcome never arrives.
        QVERIFY(!finished.wait(1000));
        QCOMPARE(finished.count(), 1);
        QCOMPARE(cancelled.count(), 0);
    }

    void quickSuccessionDeliversOnlyTheLast()
    {
        // Five edits in a row, as a user dragging a spin box: only the last config's result arrives.
        SynthesisSession session;
        QSignalSpy finished(&session, &SynthesisSession::synthesisFinished);
        for (int dp : { 1, 2 })
            for (int tp : { 1, 2 })
                session.start(tiny({ "parallelism.dp=" + std::to_string(dp), "parallelism.tp=" + std::to_string(tp) }));
        session.start(tiny({ "parallelism.tp=4" }));
        QVERIFY(finished.wait(kTimeoutMs));
        QVERIFY(!finished.wait(500));
        QCOMPARE(finished.count(), 1);
        QCOMPARE(resultOf(finished)->config.parallelism.tp, int64_t(4));
        QCOMPARE(resultOf(finished)->worldSize(), int64_t(4));
    }
};

QTEST_MAIN(TestSynthesisSession)
#include "tst_synthesissession.moc"
