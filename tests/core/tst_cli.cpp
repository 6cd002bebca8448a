// SPDX-License-Identifier: MIT
// The stagecraft command line, run as a user would: exit codes, messages, STAGE's flags, files written.
// STAGE's facts come from ../shared/spec/stage-method.md (cited per test) and its own trace sets in
// tests/data/chakra/stage/ (README.md there: the command lines that made them).
#include "chakra/chakrareader.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QSet>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <bit>
#include <map>
#include <set>
#include <sys/stat.h>
#include <vector>

using stagecraft::ChakraNode;
using stagecraft::ChakraNodeType;
using stagecraft::ChakraReadResult;
using stagecraft::readChakraFile;

namespace {

struct Run
{
    int exitCode = -1;
    QString out;
    QString err;
};

Run runStagecraft(const QStringList& args, const QString& workDir = {})
{
    QProcess p;
    if (!workDir.isEmpty())
        p.setWorkingDirectory(workDir);
    p.start(QStringLiteral(STAGECRAFT_CLI), args);
    if (!p.waitForFinished(120000))
        qFatal("stagecraft did not finish");
    return { p.exitCode(), QString::fromUtf8(p.readAllStandardOutput()), QString::fromUtf8(p.readAllStandardError()) };
}

const QString s_stageData = QStringLiteral(STAGECRAFT_TEST_DATA "/chakra/stage");

QStringList args(std::initializer_list<const char*> list)
{
    QStringList out;
    for (const char* a : list)
        out << QString::fromUtf8(a);
    return out;
}

/// The flags of STAGE's llama-dp2tp2pp2 set, verbatim from tests/data/chakra/stage/README.md.
QStringList stageLlamaFlags()
{
    return args({ "--model_type", "llama", "--dp", "2", "--tp", "2", "--pp", "2", "--num_stacks", "2", "--dmodel",
        "256", "--dff", "512", "--head", "8", "--kvhead", "4", "--seq", "128", "--batch", "4", "--micro_batch", "2" });
}

/// The flags of STAGE's moe-dp2ep2 set, verbatim from tests/data/chakra/stage/README.md.
QStringList stageMoeFlags()
{
    return args({ "--model_type", "moe", "--dp", "2", "--ep", "2", "--num_stacks", "2", "--dmodel", "256", "--dff",
        "512", "--head", "8", "--kvhead", "4", "--seq", "128", "--batch", "4", "--micro_batch", "2", "--experts", "4",
        "--kexperts", "2" });
}

/// `synth` in STAGE mode: the flags, then --output_dir DIR --output_name PATTERN.
Run stageSynth(const QStringList& flags, const QString& dir, const QString& pattern = QStringLiteral("workload.%d.et"))
{
    return runStagecraft(QStringList { QStringLiteral("synth") } + flags
        + QStringList { QStringLiteral("--output_dir"), dir, QStringLiteral("--output_name"), pattern });
}

QByteArray fileBytes(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return f.readAll();
}

using MemberSets = std::set<std::vector<int>>;

/// Communicator groups of a set: pg_name -> members (ascending), from its group JSON.
std::map<std::string, std::vector<int>> readGroups(const QString& path)
{
    std::map<std::string, std::vector<int>> out;
    const QJsonObject o = QJsonDocument::fromJson(fileBytes(path)).object();
    for (auto it = o.begin(); it != o.end(); ++it) {
        std::vector<int>& members = out[it.key().toStdString()];
        for (const QJsonValue& v : it.value().toArray())
            members.push_back(v.toInt());
        std::sort(members.begin(), members.end());
    }
    return out;
}

/// What a rank file's communication uses: per comm_type, the member sets of the groups its collectives run
/// in (key -1: all types together), and the peers of its sends and recvs.
struct RankComm
{
    std::map<int64_t, MemberSets> groups;
    std::set<int64_t> peers;
    QString error;
};

RankComm rankComm(const QString& rankFile, const std::map<std::string, std::vector<int>>& groups)
{
    RankComm out;
    const ChakraReadResult r = readChakraFile(rankFile.toStdString());
    if (!r.ok()) {
        out.error = QString::fromStdString(r.error);
        return out;
    }
    for (const ChakraNode& n : r.trace->nodes) {
        if (n.type == ChakraNodeType::CommColl) {
            const std::string pg = n.stringAttr("pg_name").value_or("");
            const auto g = groups.find(pg);
            if (g == groups.end()) {
                out.error = rankFile + QStringLiteral(": pg_name '") + QString::fromStdString(pg)
                    + QStringLiteral("' is not in the group JSON");
                return out;
            }
            out.groups[-1].insert(g->second);
            out.groups[n.intAttr("comm_type").value_or(-1)].insert(g->second);
        } else if (n.type == ChakraNodeType::CommSend) {
            out.peers.insert(n.intAttr("comm_dst").value_or(-1));
        } else if (n.type == ChakraNodeType::CommRecv) {
            out.peers.insert(n.intAttr("comm_src").value_or(-1));
        }
    }
    return out;
}

/// `sets` with every member set that is the product of several of `factors` (groups of `rank` over different
/// axes) replaced by those factors: our one all-reduce over dp x tp is STAGE's chain AR(dp) -> AR(tp) over the same
/// ranks (stage-method.md §2 "Chaining"). A rank is linear in its coordinates, so the product of groups
/// G1..Gk of `rank` is { rank + sum(gi - rank) }.
MemberSets factored(const MemberSets& sets, const MemberSets& factors, int rank)
{
    const std::vector<std::vector<int>> f(factors.begin(), factors.end());
    MemberSets out;
    for (const std::vector<int>& s : sets) {
        unsigned match = 0;
        for (unsigned mask = 1; mask < (1u << f.size()) && match == 0; ++mask) {
            if (std::popcount(mask) < 2)
                continue;
            std::set<int> product { rank };
            for (size_t i = 0; i < f.size(); ++i) {
                if (!(mask & (1u << i)))
                    continue;
                std::set<int> next;
                for (int p : product)
                    for (int g : f[i])
                        next.insert(p + g - rank);
                product = std::move(next);
            }
            if (std::vector<int>(product.begin(), product.end()) == s)
                match = mask;
        }
        if (match == 0)
            out.insert(s);
        for (size_t i = 0; i < f.size(); ++i)
            if (match & (1u << i))
                out.insert(f[i]);
    }
    return out;
}

QString describe(const MemberSets& sets)
{
    QStringList parts;
    for (const std::vector<int>& s : sets) {
        QStringList members;
        for (int m : s)
            members << QString::number(m);
        parts << QStringLiteral("{") + members.join(QLatin1Char(',')) + QStringLiteral("}");
    }
    return parts.join(QLatin1Char(' '));
}

/// Chakra comm_type values (spec/chakra-et.md): ALL_REDUCE 0, ALL_GATHER 2, ALL_TO_ALL 6, REDUCE_SCATTER 7.
constexpr int64_t kAllGather = 2, kAllToAll = 6, kReduceScatter = 7, kAnyType = -1;

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
        const Run r = runStagecraft({ QStringLiteral("report"), QStringLiteral("tiny"), QStringLiteral("--dp"),
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

    void sweepSchedules()
    {
        // --schedules replaces the pipeline schedules a sweep tries: with gpipe alone every pp > 1 plan is GPipe
        // and every pp = 1 plan 1F1B, each with one virtual stage; tiny on 4 GPUs has plans of both kinds.
        const Run r = runStagecraft(
            args({ "sweep", "tiny", "--gpus", "4", "--schedules", "gpipe", "--micro-batches", "1", "--json" }));
        QCOMPARE(r.exitCode, 0);
        const QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
        int pipelined = 0, flat = 0;
        for (const char* list : { "ranked", "rejected" })
            for (const auto& plan : j.value(QLatin1String(list)).toArray()) {
                const QJsonObject o = plan.toObject();
                const bool pp = o.value(QLatin1String("pp")).toInteger() > 1;
                QCOMPARE(o.value(QLatin1String("schedule")).toString(),
                    pp ? QStringLiteral("gpipe") : QStringLiteral("1f1b"));
                QCOMPARE(o.value(QLatin1String("virtual_stages")).toInteger(), 1);
                (pp ? pipelined : flat) += 1;
            }
        QVERIFY(pipelined > 0 && flat > 0);
    }

    void servingReportJson()
    {
        // report --json of a serving config: the estimate holds the serving figures (keys of
        // resources/docs/report-json.md), consistent with their definitions: tokens/s per GPU =
        // batch * output_tokens / (TTFT + (output_tokens - 1) * TPOT) / world, TPOT the mean of the first and last
        // decode step, the decode step's HBM-bound time its bytes over 3350 GB/s * 0.85 (h100-sxm).
        const Run r = runStagecraft(args({ "report", "llama3-70b-serving", "--json" }));
        QCOMPARE(r.exitCode, 0);
        const QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
        const QJsonObject e = j.value(QLatin1String("estimate")).toObject();
        for (const char* key : { "gpu", "ttft_s", "tpot_s", "tpot_first_s", "tpot_last_s", "generation_time_s",
                 "tokens_per_s", "tokens_per_s_per_replica", "tokens_per_s_per_gpu", "decode_tokens_per_s_per_gpu",
                 "max_sequences", "generation_peak_bytes", "decode", "assumptions" })
            QVERIFY2(e.contains(QLatin1String(key)), key);
        const double ttft = e.value(QLatin1String("ttft_s")).toDouble();
        const double tpot = e.value(QLatin1String("tpot_s")).toDouble();
        QVERIFY(ttft > 0 && tpot > 0);
        QCOMPARE(tpot,
            (e.value(QLatin1String("tpot_first_s")).toDouble() + e.value(QLatin1String("tpot_last_s")).toDouble()) / 2);
        QCOMPARE(e.value(QLatin1String("tokens_per_s_per_gpu")).toDouble(), 64.0 * 256 / (ttft + 255 * tpot) / 8);
        const QJsonObject last =
            e.value(QLatin1String("decode")).toObject().value(QLatin1String("last_step")).toObject();
        QCOMPARE(last.value(QLatin1String("context_tokens")).toInteger(), 2048 + 256 - 1);
        QCOMPARE(last.value(QLatin1String("hbm_time_s")).toDouble(),
            double(last.value(QLatin1String("bytes")).toInteger()) / (3350e9 * 0.85));
        QVERIFY(e.value(QLatin1String("assumptions")).toObject().contains(QLatin1String("hbm_efficiency")));
        const QJsonObject c = j.value(QLatin1String("classes")).toArray().at(0).toObject();
        for (const char* key : { "kv_cache_bytes", "kv_cache_bytes_per_sequence", "generation_kv_cache_bytes",
                 "generation_peak_bytes", "max_sequences_per_replica", "decode_bytes_per_step", "decode_hbm_time_s" })
            QVERIFY2(c.contains(QLatin1String(key)), key);
        // 80 layers * 1 KV head of 128 per rank * 2 * 2 bytes * 2304 positions (2303 in blocks of 16).
        QCOMPARE(c.value(QLatin1String("kv_cache_bytes_per_sequence")).toInteger(), qint64(80) * 512 * 2304);
    }

    void servingSweep()
    {
        // sweep --tpot-ms on a serving config: the plans over the limit are rejected with reason_key "tpot" and
        // their TPOT above it; the ranked ones are under it, by tokens/s per GPU, highest first.
        const Run r =
            runStagecraft(args({ "sweep", "llama3-70b-serving", "--gpus", "8", "--tpot-ms", "25", "--json" }));
        QCOMPARE(r.exitCode, 0);
        const QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QCOMPARE(j.value(QLatin1String("workload")).toString(), QStringLiteral("inference"));
        QCOMPARE(j.value(QLatin1String("tpot_limit_s")).toDouble(), 0.025);
        const QJsonArray ranked = j.value(QLatin1String("ranked")).toArray();
        QVERIFY(!ranked.isEmpty());
        double previous = 1e300;
        for (const auto& plan : ranked) {
            const QJsonObject o = plan.toObject();
            QVERIFY(o.value(QLatin1String("tpot_s")).toDouble() <= 0.025);
            const double rate = o.value(QLatin1String("tokens_per_s_per_gpu")).toDouble();
            QVERIFY(rate <= previous);
            previous = rate;
        }
        int overLimit = 0;
        for (const auto& plan : j.value(QLatin1String("rejected")).toArray()) {
            const QJsonObject o = plan.toObject();
            if (o.value(QLatin1String("reason_key")).toString() != QLatin1String("tpot"))
                continue;
            QVERIFY(o.value(QLatin1String("tpot_s")).toDouble() > 0.025);
            ++overLimit;
        }
        QVERIFY(overLimit > 0);
        // The text table names the limit.
        const Run text = runStagecraft(args({ "sweep", "llama3-70b-serving", "--gpus", "8", "--tpot-ms", "25" }));
        QCOMPARE(text.exitCode, 0);
        QVERIFY2(text.out.contains(QStringLiteral("under a time per output token of 25.000 ms")), qPrintable(text.out));
    }

    void servingPresetsAreListed()
    {
        const Run r = runStagecraft(args({ "presets" }));
        QCOMPARE(r.exitCode, 0);
        for (const char* name : { "llama3-70b-serving", "deepseek-v3-serving" })
            QVERIFY2(r.out.contains(QRegularExpression(QStringLiteral("^%1 +Serving ").arg(QLatin1String(name)),
                         QRegularExpression::MultilineOption)),
                qPrintable(r.out));
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
        // The command line names its flag for the program-size limit (the GUI's message does not).
        QTest::newRow("program size") << QStringList { QStringLiteral("report"), QStringLiteral("tiny"),
            QStringLiteral("--layers"), QStringLiteral("2147483647") }
                                      << 2
                                      << QStringLiteral("1,000,000 per stage; use fewer layers per stage or "
                                                        "fewer micro-batches per rank (global_batch / "
                                                        "(micro_batch * dp)), or raise the limit with --max-nodes");
        // Published plans over the limit in full are reported from folded programs (tst_calibration compares the
        // figures with a full synthesis).
        QTest::newRow("Megatron-LM GPT-3 example") << QStringList { QStringLiteral("report"),
            QStringLiteral(STAGECRAFT_SOURCE_DIR "/tests/data/config/published/megatron-gpt3-175b-2021.yaml") }
                                                   << 0 << QStringLiteral("per iteration, MFU");
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
        const Run r = runStagecraft(args);
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
        row("--schedules unknown", "sweep tiny --gpus 4 --schedules 1f1b,zb",
            QStringLiteral("--schedules: expected 1f1b, gpipe, interleaved:V (V virtual stages per rank), zb1p, "
                           "dualpipe or dualpipev, found \"zb\""));
        row("--schedules interleaved:1", "sweep tiny --gpus 4 --schedules interleaved:1",
            QStringLiteral("--schedules: interleaved needs its virtual stages per rank, 2 to 1024"));
        row("--dp past int64", "report tiny --dp 99999999999999999999",
            QStringLiteral("--dp: 99999999999999999999 is out of range: expected 1 \u2026 2147483647"));
        row("--dp not a number", "report tiny --dp 0x10",
            QStringLiteral("--dp: expected an integer 1 \u2026 2147483647, found \"0x10\""));
        // Decimal, not CLI11's octal: 010 is dp=10 (tiny: global_batch 4, micro_batch 2).
        row("--dp 010", "report tiny --dp 010", QStringLiteral("micro_batch*dp = 2*10 = 20"));
        row("--zero 4", "report tiny --zero 4", QStringLiteral("--zero: 4 is out of range: expected 0 \u2026 3"));
        row("--tpot-ms 0", "sweep llama3-70b-serving --gpus 8 --tpot-ms 0",
            QStringLiteral("--tpot-ms: 0 is out of range: expected more than 0 and at most 1000000 milliseconds"));
        for (const char* value : { "abc", "nan", "inf", "-5", "1e3" })
            QTest::newRow(qPrintable(QStringLiteral("--tpot-ms %1").arg(QLatin1String(value))))
                << QStringList { QStringLiteral("sweep"), QStringLiteral("llama3-70b-serving"),
                       QStringLiteral("--gpus"), QStringLiteral("8"), QStringLiteral("--tpot-ms"),
                       QLatin1String(value) }
                << QStringLiteral(
                       "--tpot-ms: expected a time in milliseconds, a number such as 50 or 12.5, found \"%1\"")
                       .arg(QLatin1String(value));
        row("--tpot-ms on a training config", "sweep tiny --gpus 2 --tpot-ms 50",
            QStringLiteral("--tpot-ms limits serving plans; tiny is a training config"));
        row("--serving-iteration not a number", "synth llama3-70b-serving --serving-iteration 7x --out %tmp",
            QStringLiteral("--serving-iteration '7x': expected an iteration number from 0 or `longest`"));
        row("--serving-iteration on a training config", "synth tiny --serving-iteration 0 --out %tmp",
            QStringLiteral("--serving-iteration needs a serving config (workload: inference)"));
        // tiny served as one batch of 4 x 64 tokens with 16 output tokens: 1 prefill + 15 decode steps.
        row("--serving-iteration past the end",
            "synth tiny --set workload=inference --set inference.batch=4 --set inference.prompt_tokens=64 --set "
            "inference.output_tokens=16 --set parallelism.zero=0 --serving-iteration 16 --out %tmp",
            QStringLiteral("replica 0 ran 16 iterations (0 to 15); iteration 16 is past its end"));
        row("--window without --serving-iteration", "synth tiny --window 2 --out %tmp",
            QStringLiteral("--window needs --serving-iteration"));
        row("--precisions unknown", "sweep tiny --gpus 2 --precisions bf16,fp4",
            QStringLiteral("--precisions: expected fp32, fp16, bf16 or fp8, found \"fp4\""));
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
        const Run r = runStagecraft(args);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
        QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("out")))); // nothing written
    }

    void stageCommandLine()
    {
        // The STAGE command line of ../shared/data/stage-traces/llama-dp2tp2pp2, unchanged: 8 rank files named by
        // --output_name's %d pattern, workload.json and workload.yaml (the resolved config), and the set passes our
        // own inspect.
        QTemporaryDir dir;
        const Run r = runStagecraft({ QStringLiteral("synth"), QStringLiteral("--model_type"), QStringLiteral("llama"),
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
        const Run inspect = runStagecraft({ QStringLiteral("inspect"), dir.path() });
        QVERIFY2(inspect.exitCode == 0, qPrintable(inspect.out));
        QVERIFY(inspect.out.contains(QLatin1String("0 errors")));
    }

    void stageMoeCommandLine()
    {
        // STAGE multiplies the world by ep: --dp 2 --ep 2 gives 4 rank files (DESIGN.md §2), as STAGE's moe-dp2ep2.
        QTemporaryDir dir;
        const Run r = runStagecraft({ QStringLiteral("synth"), QStringLiteral("--model_type"), QStringLiteral("moe"),
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

    void stageGroupsMatchStage_data()
    {
        QTest::addColumn<QString>("set");
        QTest::addColumn<int>("world");
        QTest::addColumn<QList<int>>("types");
        // llama dp2 tp2 pp2: every group (dp for the gradient all-reduces, tp for TP+SP) and, to pin which is
        // which, the groups of the all-gathers and reduce-scatters (tp only, stage-method.md §3 "TP+SP").
        QTest::newRow("llama-dp2tp2pp2") << QStringLiteral("llama-dp2tp2pp2") << 8
                                         << QList<int> { int(kAnyType), int(kAllGather), int(kReduceScatter) };
        // moe dp2 ep2: the all-to-alls run in STAGE's ep group, e varying with stride dp (§3 rank numbering).
        // Only those: our attention is data-parallel over all 4 ranks where STAGE replicates it across ep
        // (DESIGN.md §2), so the all-reduce groups differ by design.
        QTest::newRow("moe-dp2ep2") << QStringLiteral("moe-dp2ep2") << 4 << QList<int> { int(kAllToAll) };
    }

    void stageGroupsMatchStage()
    {
        // STAGE's command line for each of its trace sets, run through our synth: for every rank, the member
        // sets of the communicator groups its collectives use equal those in STAGE's own rank file (a group of
        // ours over two axes counted as its two one-axis groups, see factored()).
        QFETCH(QString, set);
        QFETCH(int, world);
        QFETCH(QList<int>, types);
        QTemporaryDir dir;
        const Run r =
            stageSynth(set.startsWith(QLatin1String("llama")) ? stageLlamaFlags() : stageMoeFlags(), dir.path());
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QString stageDir = s_stageData + QLatin1Char('/') + set;
        const auto ourGroups = readGroups(dir.filePath(QStringLiteral("workload.json")));
        const auto stageGroups = readGroups(stageDir + QStringLiteral("/workload.json"));
        QCOMPARE(QDir(dir.path()).entryList({ QStringLiteral("workload.*.et") }, QDir::Files).size(), world);
        for (int rank = 0; rank < world; ++rank) {
            const QString file = QStringLiteral("workload.%1.et").arg(rank);
            const RankComm ours = rankComm(dir.filePath(file), ourGroups);
            const RankComm theirs = rankComm(stageDir + QLatin1Char('/') + file, stageGroups);
            QVERIFY2(ours.error.isEmpty(), qPrintable(ours.error));
            QVERIFY2(theirs.error.isEmpty(), qPrintable(theirs.error));
            for (int type : types) {
                const MemberSets b = theirs.groups.count(type) ? theirs.groups.at(type) : MemberSets {};
                const MemberSets a = factored(ours.groups.count(type) ? ours.groups.at(type) : MemberSets {}, b, rank);
                QVERIFY2(!b.empty(), qPrintable(file + QStringLiteral(": STAGE uses no group for this type")));
                QVERIFY2(a == b,
                    qPrintable(QStringLiteral("%1 comm_type %2: ours %3, STAGE %4")
                                   .arg(file)
                                   .arg(type)
                                   .arg(describe(a), describe(b))));
            }
            // Pipeline peers too (llama: the same d, t on the other stage).
            QVERIFY2(ours.peers == theirs.peers, qPrintable(file));
        }
    }

    void stageMoeRankCoordinates()
    {
        // A MoE STAGE command with every axis > 1 but cp: dp 2, tp 2, ep 2, pp 2 = 16 ranks. STAGE numbers
        // rank = d + dp*(t + tp*(c + cp*(e + ep*s))) (stage-method.md §3), so rank r has
        // d = r % 2, t = r / 2 % 2, e = r / 4 % 2, s = r / 8. Its collectives then run in groups of ranks that
        // differ from r in exactly the axis of the collective: all-to-all (dispatch/combine) in e, the
        // sequence-parallel all-gathers and reduce-scatters in t (experts use TP+SP inside, §3 "EP"); its
        // sends and recvs go to the same (d, t, e) on the other stage.
        QTemporaryDir dir;
        const Run r =
            stageSynth(args({ "--model_type", "moe", "--dp", "2", "--tp", "2", "--ep", "2", "--pp", "2", "--num_stacks",
                           "2", "--dmodel", "256", "--dff", "512", "--head", "8", "--kvhead", "4", "--seq", "128",
                           "--batch", "4", "--micro_batch", "2", "--experts", "4", "--kexperts", "2" }),
                dir.path());
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const int dp = 2, tp = 2, ep = 2, pp = 2, world = dp * tp * ep * pp;
        QCOMPARE(QDir(dir.path()).entryList({ QStringLiteral("workload.*.et") }, QDir::Files).size(), world);
        auto rankOf = [&](int d, int t, int e, int s) { return d + dp * (t + tp * (e + ep * s)); };
        const auto groups = readGroups(dir.filePath(QStringLiteral("workload.json")));
        for (int rank = 0; rank < world; ++rank) {
            const int d = rank % dp, t = rank / dp % tp, e = rank / (dp * tp) % ep, s = rank / (dp * tp * ep);
            RankComm c = rankComm(dir.filePath(QStringLiteral("workload.%1.et").arg(rank)), groups);
            QVERIFY2(c.error.isEmpty(), qPrintable(c.error));
            const MemberSets epGroup { { rankOf(d, t, 0, s), rankOf(d, t, 1, s) } };
            const MemberSets tpGroup { { rankOf(d, 0, e, s), rankOf(d, 1, e, s) } };
            QCOMPARE(describe(c.groups[kAllToAll]), describe(epGroup));
            QCOMPARE(describe(c.groups[kAllGather]), describe(tpGroup));
            QCOMPARE(describe(c.groups[kReduceScatter]), describe(tpGroup));
            QCOMPARE(c.peers, (std::set<int64_t> { rankOf(d, t, e, 1 - s) }));
        }
    }

    void stageRerunReplacesOwnFiles()
    {
        // A STAGE script rerun into the same folder: our files of that name are replaced without --force
        // (as STAGE overwrites), and nothing else: not a note of the user, not a rank file beyond this world.
        QTemporaryDir dir;
        QStringList first = stageLlamaFlags();
        first[first.indexOf(QStringLiteral("--dmodel")) + 1] = QStringLiteral("512"); // other content, same names
        QCOMPARE(stageSynth(first, dir.path()).exitCode, 0);
        QFile::copy(dir.filePath(QStringLiteral("workload.0.et")), dir.filePath(QStringLiteral("workload.8.et")));
        const QByteArray stale = fileBytes(dir.filePath(QStringLiteral("workload.8.et")));
        QFile notes(dir.filePath(QStringLiteral("notes.txt")));
        QVERIFY(notes.open(QIODevice::WriteOnly));
        notes.write("mine");
        notes.close();

        const Run again = stageSynth(stageLlamaFlags(), dir.path());
        QVERIFY2(again.exitCode == 0, qPrintable(again.err));
        // 8 rank files + workload.json (stage-method.md §3: dp*tp*pp = 8 ranks).
        QVERIFY2(
            again.err.contains(QLatin1String("replaced 10 file(s) of an earlier Stagecraft export named 'workload'")),
            qPrintable(again.err));
        QCOMPARE(fileBytes(notes.fileName()), QByteArray("mine"));
        QCOMPARE(fileBytes(dir.filePath(QStringLiteral("workload.8.et"))), stale);
        // The replaced files are exactly those of a fresh run of the second command.
        QTemporaryDir fresh;
        QCOMPARE(stageSynth(stageLlamaFlags(), fresh.path()).exitCode, 0);
        const QStringList written = QDir(fresh.path()).entryList(QDir::Files, QDir::Name);
        QCOMPARE(written.size(), 10); // 8 rank files, the groups, the resolved config
        for (const QString& f : written)
            QVERIFY2(fileBytes(dir.filePath(f)) == fileBytes(fresh.filePath(f)), qPrintable(f));

        // Our own command line keeps refusing without --force.
        QTemporaryDir own;
        const QStringList tiny = args({ "synth", "tiny", "--out" }) + QStringList { own.path() };
        QCOMPARE(runStagecraft(tiny).exitCode, 0);
        const Run refused = runStagecraft(tiny);
        QCOMPARE(refused.exitCode, 2);
        QVERIFY2(refused.err.contains(QLatin1String("use --force")), qPrintable(refused.err));
    }

    void stageForeignFileIsLeftAlone_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("reason");
        // STAGE's own files (schema "symbolic_tensor_network"; its group JSON is laid out on one line).
        QTest::newRow("STAGE rank file") << QStringLiteral("workload.3.et")
                                         << QStringLiteral("schema is \"symbolic_tensor_network\"");
        QTest::newRow("STAGE group JSON")
            << QStringLiteral("workload.json") << QStringLiteral("not the one Stagecraft writes");
    }

    void stageForeignFileIsLeftAlone()
    {
        // A file named like one of ours that Stagecraft did not write is never replaced without --force: the
        // command exits 2 naming it and writes nothing; with --force it is replaced.
        QFETCH(QString, file);
        QFETCH(QString, reason);
        QTemporaryDir dir;
        const QString path = dir.filePath(file);
        QVERIFY(QFile::copy(s_stageData + QStringLiteral("/llama-dp2tp2pp2/") + file, path));
        const QByteArray before = fileBytes(path);
        const Run r = stageSynth(stageLlamaFlags(), dir.path());
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(
            r.err.startsWith(QLatin1String("stagecraft: '") + path + QLatin1String("' was not written by Stagecraft")),
            qPrintable(r.err));
        QVERIFY2(r.err.contains(reason), qPrintable(r.err));
        QVERIFY2(r.err.contains(QLatin1String("--force")), qPrintable(r.err));
        QCOMPARE(fileBytes(path), before);
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden), QStringList { file });

        const Run forced = stageSynth(stageLlamaFlags() + QStringList { QStringLiteral("--force") }, dir.path());
        QVERIFY2(forced.exitCode == 0, qPrintable(forced.err));
        QVERIFY(fileBytes(path) != before);
    }

    void stageJsonNamePattern()
    {
        // STAGE writes protobuf whatever --output_name ends with (stage-method.md §4: "rank r writes
        // <pattern % r>. Always v0.0.4 protobuf"), and names the groups <pattern minus ".%d"> = workload.json.
        QTemporaryDir dir;
        const Run r = stageSynth(stageLlamaFlags(), dir.path(), QStringLiteral("workload.%d.json"));
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.err.contains(QLatin1String("protobuf despite the .json ending")), qPrintable(r.err));
        QCOMPARE(r.err.count(QLatin1Char('\n')), 1);
        QStringList expected { QStringLiteral("workload.json"), QStringLiteral("workload.yaml") };
        for (int rank = 0; rank < 8; ++rank)
            expected << QStringLiteral("workload.%1.json").arg(rank);
        expected.sort();
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files, QDir::Name), expected);
        const auto groups = readGroups(dir.filePath(QStringLiteral("workload.json")));
        QVERIFY(!groups.empty());
        for (int rank = 0; rank < 8; ++rank) {
            const ChakraReadResult t =
                readChakraFile(dir.filePath(QStringLiteral("workload.%1.json").arg(rank)).toStdString());
            QVERIFY2(t.ok(), t.error.c_str());
            QVERIFY(!t.trace->nodes.empty());
            QVERIFY(t.trace->metadata.attr("schema")->stringValue()->rfind("stagecraft ", 0) == 0);
        }
        // A rerun replaces them like the .et files.
        const Run again = stageSynth(stageLlamaFlags(), dir.path(), QStringLiteral("workload.%d.json"));
        QVERIFY2(again.exitCode == 0, qPrintable(again.err));
        QVERIFY2(again.err.contains(QLatin1String("replaced 10 file(s)")), qPrintable(again.err));
    }

    void stageBadNamePatterns_data()
    {
        QTest::addColumn<QString>("pattern");
        QTest::newRow("%d not before the ending") << QStringLiteral("workload%d.et");
        QTest::newRow("other ending") << QStringLiteral("workload.%d.pb");
        QTest::newRow("no name") << QStringLiteral(".%d.json");
    }

    void stageBadNamePatterns()
    {
        QFETCH(QString, pattern);
        QTemporaryDir dir;
        const Run r = stageSynth(stageLlamaFlags(), dir.path(), pattern);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(
            r.err.contains(QLatin1String("only patterns of the form NAME.%d.et or NAME.%d.json")), qPrintable(r.err));
        QVERIFY(QDir(dir.path()).isEmpty());
    }

    void calibrateAndCompare()
    {
        // calibrate -> a table the report reads back (cluster.kernel_table) -> compare-trace, on a real trace
        // (tests/data/kineto/README.md). sampled_rank-0's GEMMs: 163 shapes (tst_kerneltable gemmTimesFromATrace).
        QTemporaryDir dir;
        const QString trace = QStringLiteral(STAGECRAFT_TEST_DATA "/kineto/sampled_rank-0.json.gz");
        const QString table = dir.filePath(QStringLiteral("table.yaml"));
        Run r = runStagecraft({ QStringLiteral("calibrate"), trace, QStringLiteral("--gpu"),
            QStringLiteral("a100-80gb"), QStringLiteral("-o"), table });
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.err.contains(QLatin1String("op executions -> 163 shapes")), qPrintable(r.err));
        QVERIFY(QFile::exists(table));
        r = runStagecraft({ QStringLiteral("report"), QStringLiteral("tiny"), QStringLiteral("--set"),
            QStringLiteral("cluster.kernel_table=") + table });
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.out.contains(QLatin1String("op times from kernel table ") + table), qPrintable(r.out));
        r = runStagecraft({ QStringLiteral("report"), QStringLiteral("tiny") });
        QVERIFY(r.out.contains(QLatin1String("op times: all modelled (no cluster.kernel_table)")));
        r = runStagecraft({ QStringLiteral("compare-trace"), trace, QStringLiteral("tiny") });
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.out.contains(QLatin1String("ProfilerStep#552 of 2 profiled steps")), qPrintable(r.out));
        QVERIFY(r.out.contains(QLatin1String("exposed communication")));
        // Errors: an unknown GPU, a file that is no trace, a missing table.
        r = runStagecraft({ QStringLiteral("calibrate"), trace, QStringLiteral("--gpu"), QStringLiteral("nope"),
            QStringLiteral("-o"), table });
        QCOMPARE(r.exitCode, 2);
        r = runStagecraft({ QStringLiteral("compare-trace"), QStringLiteral(STAGECRAFT_TEST_DATA "/kineto/README.md"),
            QStringLiteral("tiny") });
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(QLatin1String("README.md:1:2: invalid JSON")), qPrintable(r.err));
        r = runStagecraft({ QStringLiteral("report"), QStringLiteral("tiny"), QStringLiteral("--set"),
            QStringLiteral("cluster.kernel_table=") + dir.filePath(QStringLiteral("missing.yaml")) });
        QVERIFY2(r.out.contains(QLatin1String("cluster.kernel_table: "))
                || r.err.contains(QLatin1String("cluster.kernel_table: ")),
            qPrintable(r.out + r.err));
    }

    void inspectCorruptFile()
    {
        // A truncated varint: a clear error, exit 2, no crash.
        QTemporaryDir dir;
        QFile f(dir.filePath(QStringLiteral("bad.et")));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray("\xff\xff", 2));
        f.close();
        const Run r = runStagecraft({ QStringLiteral("inspect"), f.fileName() });
        QCOMPARE(r.exitCode, 2);
        QVERIFY(!r.err.isEmpty() || r.out.contains(QLatin1String("error")));
    }

    void rankSummary()
    {
        // Rank 5 of dp2 tp2 pp2 (Megatron order tp fastest): tp 1, dp 0, pp 1; its tp group is {4, 5} and its
        // pipeline peer is rank 1.
        const Run r = runStagecraft({ QStringLiteral("report"), QStringLiteral("tiny"), QStringLiteral("--dp"),
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
            runStagecraft(plan + QStringList { QStringLiteral("--json"), QStringLiteral("--chrome-trace"), path });
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
            runStagecraft(plan
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
        const Run bad = runStagecraft(plan + QStringList { QStringLiteral("--chrome-trace"), missing });
        QCOMPARE(bad.exitCode, 2);
        QVERIFY2(bad.err.contains(missing), qPrintable(bad.err));
        QVERIFY(!QFile::exists(missing));
        const Run noGpu = runStagecraft(plan
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
        const Run synth = runStagecraft({ QStringLiteral("synth"), QStringLiteral("tiny"), QStringLiteral("--dp"),
            QStringLiteral("2"), QStringLiteral("--tp"), QStringLiteral("2"), QStringLiteral("--pp"),
            QStringLiteral("2"), QStringLiteral("--out"), traces, QStringLiteral("-q") });
        QVERIFY2(synth.exitCode == 0, qPrintable(synth.err));
        // Finish times of about a second: above the roofline's lower bound for these traces (simulate refuses a
        // run that finishes before its compute nodes could, see checkSimulatedTimes()).
        const QString pass = script(dir.filePath(QStringLiteral("pass")),
            "r=0\nwhile [ $r -lt 8 ]; do echo \"sys[$r] finished, $((1000000000 + 10 * r)) cycles, exposed "
            "communication $((100 + r)) cycles.\"; r=$((r + 1)); done\n");
        const QString stall = script(dir.filePath(QStringLiteral("stall")),
            "echo 'sys[1] finished, 5 cycles, exposed communication 0 cycles.'\n");

        const Run ok = runStagecraft({ QStringLiteral("simulate"), traces, QStringLiteral("--astrasim"), pass });
        QVERIFY2(ok.exitCode == 0, qPrintable(ok.err + ok.out));
        QVERIFY2(ok.out.startsWith(QLatin1String("ASTRA-sim: PASS, 8/8 ranks finished")), qPrintable(ok.out));
        // Ranks 4-7 are pipeline stage 1 (pp is the outermost axis); the stand-in's rank 7 finishes last.
        QVERIFY2(ok.out.contains(QLatin1String("slowest rank: 7 (stage 1)")), qPrintable(ok.out));
        QVERIFY(QFile::exists(traces + QStringLiteral("/tiny.astrasim/cmd.sh")));

        const Run json = runStagecraft(
            { QStringLiteral("simulate"), traces, QStringLiteral("--astrasim"), pass, QStringLiteral("--json") });
        QCOMPARE(json.exitCode, 0);
        const QJsonObject j = QJsonDocument::fromJson(json.out.toUtf8()).object();
        QCOMPARE(j.value(QLatin1String("passed")).toBool(), true);
        QCOMPARE(j.value(QLatin1String("ranks")).toArray().size(), 8);
        QCOMPARE(j.value(QLatin1String("stages")).toArray().size(), 2);
        QCOMPARE(j.value(QLatin1String("slowest_rank")).toInteger(), 7);
        QCOMPARE(j.value(QLatin1String("iteration_ns")).toDouble(), 1000000070.0);

        const Run failed = runStagecraft({ QStringLiteral("simulate"), traces, QStringLiteral("--astrasim"), stall });
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
            const Run r = runStagecraft(b.args);
            QCOMPARE(r.exitCode, 2);
            QVERIFY2(
                r.err.contains(b.message), qPrintable(b.args.join(QLatin1Char(' ')) + QStringLiteral(": ") + r.err));
        }
        // Without <name>.yaml the config must be given.
        QVERIFY(QFile::remove(traces + QStringLiteral("/tiny.yaml")));
        const Run noConfig = runStagecraft({ QStringLiteral("simulate"), traces, QStringLiteral("--astrasim"), pass });
        QCOMPARE(noConfig.exitCode, 2);
        QVERIFY2(
            noConfig.err.contains(QLatin1String("tiny.yaml not found: give the config")), qPrintable(noConfig.err));
        const Run explicitConfig = runStagecraft({ QStringLiteral("simulate"), traces, QStringLiteral("--astrasim"),
            pass, QStringLiteral("--config"), QStringLiteral("tiny"), QStringLiteral("--dp"), QStringLiteral("2"),
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
        const Run synth = runStagecraft(
            { QStringLiteral("synth"), QStringLiteral("tiny"), QStringLiteral("--dp"), QStringLiteral("2"),
                QStringLiteral("--tp"), QStringLiteral("2"), QStringLiteral("--pp"), QStringLiteral("2"),
                QStringLiteral("--set"), QStringLiteral("training.global_batch=16"), QStringLiteral("--set"),
                QStringLiteral("training.micro_batch=1"), QStringLiteral("--out"), dir.path(), QStringLiteral("-q") });
        QVERIFY2(synth.exitCode == 0, qPrintable(synth.err));
        const Run r = runStagecraft({ QStringLiteral("simulate"), dir.path(), QStringLiteral("--astrasim"), binary });
        QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
        QVERIFY2(r.out.startsWith(QLatin1String("ASTRA-sim: PASS, 8/8 ranks finished")), qPrintable(r.out));
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
