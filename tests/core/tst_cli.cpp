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
#include <sys/stat.h>

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

    void badInput_data()
    {
        // Every bad config or flag: exit 2, one line naming the file (or flag), line and column, key and reason.
        // "%bad/" is tests/data/config/bad/; "%big" a 10 MB one-line list and "%fifo" a FIFO, made by the test.
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        const QString gpus = QStringLiteral("unknown GPU \"h100\"; known GPUs: a100-80gb, b200, h100-sxm, h200; "
                                            "did you mean 'h100-sxm'?");
        auto row = [](const char* name, const char* args, const QString& message) {
            QTest::newRow(name) << QString::fromUtf8(args).split(QLatin1Char(' ')) << message;
        };
        row("unknown GPU, report", "report %bad/unknown_gpu.yaml",
            QStringLiteral("unknown_gpu.yaml:6:8: error: cluster.gpu: ") + gpus);
        row("unknown GPU, sweep", "sweep %bad/unknown_gpu.yaml --gpus 8",
            QStringLiteral("unknown_gpu.yaml:6:8: error: cluster.gpu: ") + gpus);
        row("unknown GPU, sweep --gpu", "sweep tiny --gpus 8 --gpu h100",
            QStringLiteral("<command line>: error: cluster.gpu: ") + gpus);
        row("open quote, last line", "report %bad/quote_last_line.yaml",
            QStringLiteral("quote_last_line.yaml:5:7: error: name: unterminated quoted string"));
        row("open quote, mid file", "synth %bad/quote_mid_file.yaml --out %tmp",
            QStringLiteral("quote_mid_file.yaml:4:8: error: cluster.gpu: unterminated quoted string"));
        row("second document", "report %bad/second_document.yaml",
            QStringLiteral("second_document.yaml:5:1: error: a second YAML document starts here"));
        row("name with a tab", "report %bad/name_tab.yaml",
            QStringLiteral("name_tab.yaml:1:7: error: name: the name contains the control character 0x09 (a tab)"));
        row("name of dots", "synth %bad/name_dot.yaml --out %tmp",
            QStringLiteral("name_dot.yaml:1:7: error: name: name \".\" must not be only dots"));
        // 218 = kMaxNameBytes + 1, from 255 - 38 (configvalidator.h).
        row("--name too long", qPrintable(QStringLiteral("report tiny --name ") + QString(218, QLatin1Char('n'))),
            QStringLiteral("<command line>: error: name: the name is 218 bytes, more than the 217"));
        // Found by synthesis, not by the validator: still at the key, with the key's value.
        row("overflow in synthesis", "report %bad/overflow_hidden.yaml",
            QStringLiteral("overflow_hidden.yaml:5:11: error: model.hidden: hidden=2000000000 is too large: "));
        row("overflow in synthesis, synth", "synth %bad/overflow_hidden.yaml --out %tmp",
            QStringLiteral("overflow_hidden.yaml:5:11: error: model.hidden: hidden=2000000000 is too large: "));
        row("10 MB file", "report %big",
            QStringLiteral("big.yaml: error: the config file is larger than the limit of 65536 bytes (64 KiB)"));
        row("endless device", "report /dev/zero",
            QStringLiteral("/dev/zero: error: is a character device, expected a YAML config file"));
        row("FIFO", "report %fifo", QStringLiteral("pipe.yaml: error: is a FIFO (named pipe)"));
        row("--gpus 0", "sweep tiny --gpus 0", QStringLiteral("--gpus: 0 is out of range: expected 1 \u2026 16777216"));
        row("--dp past int64", "report tiny --dp 99999999999999999999",
            QStringLiteral("--dp: 99999999999999999999 is out of range: expected 1 \u2026 2147483647"));
        row("--dp not a number", "report tiny --dp 0x10",
            QStringLiteral("--dp: expected an integer 1 \u2026 2147483647, found \"0x10\""));
        // Decimal, not CLI11's octal: 010 is dp=10 (tiny: global_batch 4, micro_batch 2).
        row("--dp 010", "report tiny --dp 010", QStringLiteral("micro_batch*dp = 2*10 = 20"));
        row("--zero 4", "report tiny --zero 4", QStringLiteral("--zero: 4 is out of range: expected 0 \u2026 3"));
        row("--rank past int64", "report tiny --rank 99999999999999999999",
            QStringLiteral("--rank: 99999999999999999999 is out of range: expected 0 \u2026 16777215"));
    }

    void badInput()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        for (QString& arg : args) {
            if (arg == QLatin1String("%big")) {
                // python3 -c "print('[' + '1,'*5000000 + '1]')" > big.yaml
                arg = dir.filePath(QStringLiteral("big.yaml"));
                QFile f(arg);
                QVERIFY(f.open(QIODevice::WriteOnly));
                f.write("[" + QByteArray("1,").repeated(5000000) + "1]\n");
            } else if (arg == QLatin1String("%fifo")) {
                arg = dir.filePath(QStringLiteral("pipe.yaml"));
                QCOMPARE(::mkfifo(QFile::encodeName(arg).constData(), 0600), 0);
            } else if (arg == QLatin1String("%tmp")) {
                arg = dir.filePath(QStringLiteral("out"));
            } else if (arg.startsWith(QLatin1String("%bad/"))) {
                arg = QStringLiteral(STAGECRAFT_TEST_DATA "/config/bad/") + arg.mid(5);
            }
        }
        const Run r = stagecraft(args);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
        QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("out")))); // nothing written
    }

    void stageCommandLine()
    {
        // The STAGE command line of ../shared/data/stage-traces/llama-dp2tp2pp2, unchanged: 8 rank files named by
        // --output_name's %d pattern and workload.json, and the set passes our own inspect.
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
        QCOMPARE(files.size(), 9);
        for (int rank = 0; rank < 8; ++rank)
            QVERIFY(files.contains(QStringLiteral("workload.%1.et").arg(rank)));
        QVERIFY(files.contains(QStringLiteral("workload.json")));
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
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
