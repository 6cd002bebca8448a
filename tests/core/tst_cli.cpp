// SPDX-License-Identifier: MIT
// The stagecraft command line, run as a user would: exit codes, messages, STAGE's flags, files written.
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSet>
#include <QTemporaryDir>
#include <QtTest>

namespace {

struct Run
{
    int exitCode = -1;
    QString out;
    QString err;
};

Run stagecraft(const QStringList& args, const QString& workDir = {})
{
    QProcess p;
    if (!workDir.isEmpty())
        p.setWorkingDirectory(workDir);
    p.start(QStringLiteral(STAGECRAFT_CLI), args);
    if (!p.waitForFinished(120000))
        qFatal("stagecraft did not finish");
    return { p.exitCode(), QString::fromUtf8(p.readAllStandardOutput()), QString::fromUtf8(p.readAllStandardError()) };
}

/// An executable shell script at `path` running `body`.
QString script(const QString& path, const QByteArray& body)
{
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        qFatal("cannot write %s", qPrintable(path));
    file.write("#!/bin/sh\n" + body);
    file.close();
    file.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    return path;
}

} // namespace

class TestCli : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void reportJsonContract()
    {
        // DESIGN.md §4 keys; tiny's 1,705,216 parameters are derived by hand in tst_model.
        const Run r = stagecraft({ QStringLiteral("report"), QStringLiteral("tiny"), QStringLiteral("--dp"),
            QStringLiteral("2"), QStringLiteral("--pp"), QStringLiteral("2"), QStringLiteral("--json") });
        QCOMPARE(r.exitCode, 0);
        const QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QCOMPARE(j.value(QLatin1String("world_size")).toInteger(), 4);
        QCOMPARE(j.value(QLatin1String("params")).toInteger(), 1705216);
        QVERIFY(j.value(QLatin1String("flops_per_iteration")).toDouble() > 0);
        QVERIFY(j.contains(QLatin1String("config")));
        const auto classes = j.value(QLatin1String("classes")).toArray();
        QCOMPARE(classes.size(), 2);
        for (const auto& c : classes) {
            const QJsonObject o = c.toObject();
            for (const char* key : { "ranks", "example_rank", "stage", "flops", "nodes", "comm_bytes", "memory_bytes" })
                QVERIFY2(o.contains(QLatin1String(key)), key);
            QCOMPARE(o.value(QLatin1String("ranks")).toInteger(), 2);
            for (const char* key : { "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send", "recv" })
                QVERIFY2(o.value(QLatin1String("comm_bytes")).toObject().contains(QLatin1String(key)), key);
            for (const char* key : { "weights", "gradients", "optimizer", "activations_peak", "peak" })
                QVERIFY2(o.value(QLatin1String("memory_bytes")).toObject().contains(QLatin1String(key)), key);
        }
    }

    void exitCodes_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("message");
        QTest::newRow("no such config") << QStringList { QStringLiteral("report"), QStringLiteral("nosuch") } << 2
                                        << QStringLiteral("no such config file or preset");
        QTest::newRow("tp does not divide heads") << QStringList { QStringLiteral("report"), QStringLiteral("tiny"),
            QStringLiteral("--tp"), QStringLiteral("3") }
                                                  << 2 << QStringLiteral("tp=3 does not divide heads=8");
        QTest::newRow("unknown flag") << QStringList { QStringLiteral("report"), QStringLiteral("tiny"),
            QStringLiteral("--bogus") }
                                      << 2 << QStringLiteral("bogus");
        QTest::newRow("bad --set key") << QStringList { QStringLiteral("report"), QStringLiteral("tiny"),
            QStringLiteral("--set"), QStringLiteral("parallelism.tpp=2") }
                                       << 2 << QStringLiteral("did you mean");
        QTest::newRow("rank outside world") << QStringList { QStringLiteral("report"), QStringLiteral("tiny"),
            QStringLiteral("--rank"), QStringLiteral("9") }
                                            << 2 << QStringLiteral("outside 0..0");
        QTest::newRow("synth without --out")
            << QStringList { QStringLiteral("synth"), QStringLiteral("tiny") } << 2 << QStringLiteral("--out");
        QTest::newRow("inspect missing file")
            << QStringList { QStringLiteral("inspect"), QStringLiteral("/nonexistent.et") } << 2
            << QStringLiteral("no such file");
    }

    void exitCodes()
    {
        QFETCH(QStringList, args);
        QFETCH(int, exitCode);
        QFETCH(QString, message);
        const Run r = stagecraft(args);
        QCOMPARE(r.exitCode, exitCode);
        QVERIFY2(r.err.contains(message) || r.out.contains(message), qPrintable(r.err + r.out));
    }

    void stageCommandLine()
    {
        // The STAGE command line of ../shared/data/stage-traces/llama-dp2tp2pp2, unchanged: 8 rank files named by
        // --output_name's %d pattern, workload.json and workload.yaml (the resolved config), and the set passes our
        // own inspect.
        QTemporaryDir dir;
        const Run r = stagecraft({ QStringLiteral("synth"), QStringLiteral("--model_type"), QStringLiteral("llama"),
            QStringLiteral("--dp"), QStringLiteral("2"), QStringLiteral("--tp"), QStringLiteral("2"),
            QStringLiteral("--pp"), QStringLiteral("2"), QStringLiteral("--num_stacks"), QStringLiteral("2"),
            QStringLiteral("--dmodel"), QStringLiteral("256"), QStringLiteral("--dff"), QStringLiteral("512"),
            QStringLiteral("--head"), QStringLiteral("8"), QStringLiteral("--kvhead"), QStringLiteral("4"),
            QStringLiteral("--seq"), QStringLiteral("128"), QStringLiteral("--batch"), QStringLiteral("4"),
            QStringLiteral("--micro_batch"), QStringLiteral("2"), QStringLiteral("--output_dir"), dir.path(),
            QStringLiteral("--output_name"), QStringLiteral("workload.%d.et") });
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QStringList files = QDir(dir.path()).entryList(QDir::Files, QDir::Name);
        QCOMPARE(files.size(), 10);
        for (int rank = 0; rank < 8; ++rank)
            QVERIFY(files.contains(QStringLiteral("workload.%1.et").arg(rank)));
        QVERIFY(files.contains(QStringLiteral("workload.json")));
        QVERIFY(files.contains(QStringLiteral("workload.yaml")));
        const Run inspect = stagecraft({ QStringLiteral("inspect"), dir.path() });
        QVERIFY2(inspect.exitCode == 0, qPrintable(inspect.out));
        QVERIFY(inspect.out.contains(QLatin1String("0 errors")));
    }

    void stageMoeCommandLine()
    {
        // STAGE multiplies the world by ep: --dp 2 --ep 2 gives 4 rank files (DESIGN.md §2), as STAGE's moe-dp2ep2.
        QTemporaryDir dir;
        const Run r = stagecraft({ QStringLiteral("synth"), QStringLiteral("--model_type"), QStringLiteral("moe"),
            QStringLiteral("--dp"), QStringLiteral("2"), QStringLiteral("--ep"), QStringLiteral("2"),
            QStringLiteral("--num_stacks"), QStringLiteral("2"), QStringLiteral("--dmodel"), QStringLiteral("256"),
            QStringLiteral("--dff"), QStringLiteral("512"), QStringLiteral("--head"), QStringLiteral("8"),
            QStringLiteral("--kvhead"), QStringLiteral("4"), QStringLiteral("--seq"), QStringLiteral("128"),
            QStringLiteral("--batch"), QStringLiteral("4"), QStringLiteral("--micro_batch"), QStringLiteral("2"),
            QStringLiteral("--experts"), QStringLiteral("4"), QStringLiteral("--kexperts"), QStringLiteral("2"),
            QStringLiteral("--output_dir"), dir.path() });
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QCOMPARE(QDir(dir.path()).entryList({ QStringLiteral("workload.*.et") }, QDir::Files).size(), 4);
    }

    void inspectCorruptFile()
    {
        // A truncated varint: a clear error, exit 2, no crash.
        QTemporaryDir dir;
        QFile f(dir.filePath(QStringLiteral("bad.et")));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray("\xff\xff", 2));
        f.close();
        const Run r = stagecraft({ QStringLiteral("inspect"), f.fileName() });
        QCOMPARE(r.exitCode, 2);
        QVERIFY(!r.err.isEmpty() || r.out.contains(QLatin1String("error")));
    }

    void rankSummary()
    {
        // Rank 5 of dp2 tp2 pp2 (Megatron order tp fastest): tp 1, dp 0, pp 1; its tp group is {4, 5} and its
        // pipeline peer is rank 1.
        const Run r = stagecraft({ QStringLiteral("report"), QStringLiteral("tiny"), QStringLiteral("--dp"),
            QStringLiteral("2"), QStringLiteral("--tp"), QStringLiteral("2"), QStringLiteral("--pp"),
            QStringLiteral("2"), QStringLiteral("--rank"), QStringLiteral("5") });
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.out.contains(QLatin1String("tp 1, cp 0, ep 0, edp 0, pp 1")));
        QVERIFY(r.out.contains(QLatin1String("2 ranks: 4 5")));
        QVERIFY(r.out.contains(QLatin1String("send to rank 1")));
        QVERIFY(r.out.contains(QLatin1String("recv from rank 1")));
    }
    void reportChromeTrace()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath(QStringLiteral("trace.json"));
        const QStringList plan { QStringLiteral("report"), QStringLiteral("tiny"), QStringLiteral("--dp"),
            QStringLiteral("2"), QStringLiteral("--pp"), QStringLiteral("2") };
        // The flag works beside --json: stdout stays the report, the trace goes to the file.
        const Run r =
            stagecraft(plan + QStringList { QStringLiteral("--json"), QStringLiteral("--chrome-trace"), path });
        QCOMPARE(r.exitCode, 0);
        const QJsonObject report = QJsonDocument::fromJson(r.out.toUtf8()).object();
        const QJsonArray classes = report.value(QLatin1String("classes")).toArray();
        QCOMPARE(classes.size(), 2);
        // Every node that occupies a stream is one complete event: all nodes but the recvs (report counts).
        qint64 scheduled = 0;
        for (const QJsonValue& c : classes) {
            const QJsonObject o = c.toObject();
            scheduled += o.value(QLatin1String("nodes")).toInteger()
                - o.value(QLatin1String("comm_count")).toObject().value(QLatin1String("recv")).toInteger();
        }
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonObject trace = QJsonDocument::fromJson(f.readAll()).object();
        qint64 complete = 0;
        QSet<int> pids;
        for (const QJsonValue& v : trace.value(QLatin1String("traceEvents")).toArray()) {
            const QJsonObject e = v.toObject();
            if (e.value(QLatin1String("ph")).toString() != QLatin1String("X"))
                continue;
            ++complete;
            pids.insert(e.value(QLatin1String("pid")).toInt());
            QVERIFY(e.contains(QLatin1String("ts")) && e.contains(QLatin1String("dur")));
            QVERIFY(e.value(QLatin1String("ts")).toDouble() >= 0);
            QVERIFY(e.value(QLatin1String("dur")).toDouble() >= 0);
        }
        QCOMPARE(complete, scheduled);
        QCOMPARE(pids, (QSet<int> { 0, 1 }));

        // With --rank, only that rank's stage: rank 3 = dp 1 + 2 * pp 1 is stage 1.
        const QString one = dir.filePath(QStringLiteral("rank3.json"));
        QCOMPARE(
            stagecraft(plan
                + QStringList { QStringLiteral("--rank"), QStringLiteral("3"), QStringLiteral("--chrome-trace"), one })
                .exitCode,
            0);
        QFile g(one);
        QVERIFY(g.open(QIODevice::ReadOnly));
        pids.clear();
        for (const QJsonValue& v :
            QJsonDocument::fromJson(g.readAll()).object().value(QLatin1String("traceEvents")).toArray())
            pids.insert(v.toObject().value(QLatin1String("pid")).toInt());
        QCOMPARE(pids, QSet<int> { 1 });

        // Failures exit 2 and say why; no file is left behind.
        const QString missing = dir.filePath(QStringLiteral("no/such/dir/trace.json"));
        const Run bad = stagecraft(plan + QStringList { QStringLiteral("--chrome-trace"), missing });
        QCOMPARE(bad.exitCode, 2);
        QVERIFY2(bad.err.contains(missing), qPrintable(bad.err));
        QVERIFY(!QFile::exists(missing));
        const Run noGpu = stagecraft(plan
            + QStringList { QStringLiteral("--set"), QStringLiteral("cluster.gpu=v100"),
                QStringLiteral("--chrome-trace"), dir.filePath(QStringLiteral("v100.json")) });
        QCOMPARE(noGpu.exitCode, 2);
        QVERIFY2(noGpu.err.contains(QLatin1String("unknown GPU \"v100\"")), qPrintable(noGpu.err));
        QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("v100.json"))));
    }

    void simulate()
    {
        // simulate with stand-in simulators (shell scripts printing ASTRA-sim's lines): a pass, a stall, bad input.
        QTemporaryDir dir;
        const QString traces = dir.filePath(QStringLiteral("traces"));
        const Run synth = stagecraft({ QStringLiteral("synth"), QStringLiteral("tiny"), QStringLiteral("--dp"),
            QStringLiteral("2"), QStringLiteral("--tp"), QStringLiteral("2"), QStringLiteral("--pp"),
            QStringLiteral("2"), QStringLiteral("--out"), traces, QStringLiteral("-q") });
        QVERIFY2(synth.exitCode == 0, qPrintable(synth.err));
        const QString pass = script(dir.filePath(QStringLiteral("pass")),
            "r=0\nwhile [ $r -lt 8 ]; do echo \"sys[$r] finished, $((1000 + 10 * r)) cycles, exposed communication "
            "$((100 + r)) cycles.\"; r=$((r + 1)); done\n");
        const QString stall = script(dir.filePath(QStringLiteral("stall")),
            "echo 'sys[1] finished, 5 cycles, exposed communication 0 cycles.'\n");

        const Run ok = stagecraft({ QStringLiteral("simulate"), traces, QStringLiteral("--astrasim"), pass });
        QVERIFY2(ok.exitCode == 0, qPrintable(ok.err + ok.out));
        QVERIFY2(ok.out.startsWith(QLatin1String("ASTRA-sim: PASS, 8/8 ranks finished")), qPrintable(ok.out));
        // Ranks 4-7 are pipeline stage 1 (pp is the outermost axis); the stand-in's rank 7 finishes last.
        QVERIFY2(ok.out.contains(QLatin1String("slowest rank: 7 (stage 1)")), qPrintable(ok.out));
        QVERIFY(QFile::exists(traces + QStringLiteral("/tiny.astrasim/cmd.sh")));

        const Run json = stagecraft(
            { QStringLiteral("simulate"), traces, QStringLiteral("--astrasim"), pass, QStringLiteral("--json") });
        QCOMPARE(json.exitCode, 0);
        const QJsonObject j = QJsonDocument::fromJson(json.out.toUtf8()).object();
        QCOMPARE(j.value(QLatin1String("passed")).toBool(), true);
        QCOMPARE(j.value(QLatin1String("ranks")).toArray().size(), 8);
        QCOMPARE(j.value(QLatin1String("stages")).toArray().size(), 2);
        QCOMPARE(j.value(QLatin1String("slowest_rank")).toInteger(), 7);
        QCOMPARE(j.value(QLatin1String("iteration_ns")).toDouble(), 1070.0);

        const Run failed = stagecraft({ QStringLiteral("simulate"), traces, QStringLiteral("--astrasim"), stall });
        QCOMPARE(failed.exitCode, 1);
        QVERIFY2(failed.out.contains(QLatin1String("FAIL, 1/8 ranks finished; missing ranks 0, 2-7")),
            qPrintable(failed.out));

        struct Bad
        {
            QStringList args;
            QString message;
        };
        QDir().mkpath(dir.filePath(QStringLiteral("empty")));
        const std::vector<Bad> bad {
            { { QStringLiteral("simulate"), dir.filePath(QStringLiteral("nowhere")), QStringLiteral("--astrasim"),
                  pass },
                QStringLiteral("is not a folder") },
            { { QStringLiteral("simulate"), dir.filePath(QStringLiteral("empty")), QStringLiteral("--astrasim"), pass },
                QStringLiteral("holds no trace set") },
            { { QStringLiteral("simulate"), traces, QStringLiteral("--astrasim"),
                  dir.filePath(QStringLiteral("no-such-simulator")) },
                QStringLiteral("not found") },
            { { QStringLiteral("simulate"), traces, QStringLiteral("--astrasim"), pass, QStringLiteral("--tp"),
                  QStringLiteral("4") },
                QStringLiteral("the config describes 16 ranks but the trace set 'tiny' has 8 rank files") },
            { { QStringLiteral("simulate"), traces, QStringLiteral("--astrasim"), pass, QStringLiteral("--track-mem") },
                QStringLiteral("--tensor-lists") },
        };
        for (const Bad& b : bad) {
            const Run r = stagecraft(b.args);
            QCOMPARE(r.exitCode, 2);
            QVERIFY2(
                r.err.contains(b.message), qPrintable(b.args.join(QLatin1Char(' ')) + QStringLiteral(": ") + r.err));
        }
        // Without <name>.yaml the config must be given.
        QVERIFY(QFile::remove(traces + QStringLiteral("/tiny.yaml")));
        const Run noConfig = stagecraft({ QStringLiteral("simulate"), traces, QStringLiteral("--astrasim"), pass });
        QCOMPARE(noConfig.exitCode, 2);
        QVERIFY2(
            noConfig.err.contains(QLatin1String("tiny.yaml not found: give the config")), qPrintable(noConfig.err));
        const Run explicitConfig = stagecraft({ QStringLiteral("simulate"), traces, QStringLiteral("--astrasim"), pass,
            QStringLiteral("--config"), QStringLiteral("tiny"), QStringLiteral("--dp"), QStringLiteral("2"),
            QStringLiteral("--tp"), QStringLiteral("2"), QStringLiteral("--pp"), QStringLiteral("2") });
        QVERIFY2(explicitConfig.exitCode == 0, qPrintable(explicitConfig.err));
        QVERIFY2(explicitConfig.err.contains(QLatin1String("warning: parallelism.dp")), qPrintable(explicitConfig.err));
    }

    void simulateWithAstraSim()
    {
        const QString binary = qEnvironmentVariable("STAGECRAFT_ASTRASIM");
        if (binary.isEmpty())
            QSKIP("set STAGECRAFT_ASTRASIM to ASTRA-sim's AstraSim_Analytical_Congestion_Unaware to run this test");
        QTemporaryDir dir;
        const Run synth =
            stagecraft({ QStringLiteral("synth"), QStringLiteral("tiny"), QStringLiteral("--dp"), QStringLiteral("2"),
                QStringLiteral("--tp"), QStringLiteral("2"), QStringLiteral("--pp"), QStringLiteral("2"),
                QStringLiteral("--set"), QStringLiteral("training.global_batch=16"), QStringLiteral("--set"),
                QStringLiteral("training.micro_batch=1"), QStringLiteral("--out"), dir.path(), QStringLiteral("-q") });
        QVERIFY2(synth.exitCode == 0, qPrintable(synth.err));
        const Run r = stagecraft({ QStringLiteral("simulate"), dir.path(), QStringLiteral("--astrasim"), binary });
        QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
        QVERIFY2(r.out.startsWith(QLatin1String("ASTRA-sim: PASS, 8/8 ranks finished")), qPrintable(r.out));
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
