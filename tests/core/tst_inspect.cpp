// SPDX-License-Identifier: MIT
// `inspect` on whole trace sets: rank classes, the ranks reported, the same summary for any thread count, and
// the summary text and JSON of small sets written by Stagecraft's export or by hand.
#include "chakra/chakrainspect.h"
#include "chakra/chakrawriter.h"
#include "export/traceexporter.h"
#include "synthhelpers.h"

#include <QProcess>
#include <QtTest>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

using namespace stagecraft;
using namespace stagecraft::test;
namespace fs = std::filesystem;

namespace {

/// Exports the tiny preset with `sets` into `dir` as w.<rank>.et and w.json.
std::shared_ptr<const SynthesisResult> exportTiny(const fs::path& dir, const std::vector<std::string>& sets)
{
    auto r = synth("tiny", sets);
    ExportOptions options;
    options.directory = dir;
    options.name = "w";
    options.threads = 2;
    exportTrace(*r, options);
    return r;
}

/// The lines of `text` between the line starting with `header` and the next empty line (header excluded).
std::vector<std::string> block(const std::string& text, const std::string& header)
{
    std::istringstream in(text);
    std::string line;
    std::vector<std::string> out;
    bool inside = false;
    while (std::getline(in, line)) {
        if (!inside && line.rfind(header, 0) == 0) {
            inside = true;
            continue;
        }
        if (inside && line.empty())
            break;
        if (inside)
            out.push_back(line);
    }
    return out;
}

/// The whitespace-separated cells of a table row.
std::vector<std::string> cells(const std::string& row)
{
    std::istringstream in(row);
    std::vector<std::string> out;
    for (std::string c; in >> c;)
        out.push_back(c);
    return out;
}

ChakraNode comp(uint64_t id, std::vector<uint64_t> deps = {})
{
    ChakraNode n;
    n.id = id;
    n.name = "c" + std::to_string(id);
    n.type = ChakraNodeType::Comp;
    n.dataDeps = std::move(deps);
    n.durationMicros = 5;
    n.attrs = { chakraNumOps(100), chakraTensorSize(64), chakraOpType("M") };
    return n;
}

ChakraNode allReduce(uint64_t id, int group, std::vector<uint64_t> deps)
{
    ChakraNode n;
    n.id = id;
    n.name = "ar" + std::to_string(id);
    n.type = ChakraNodeType::CommColl;
    n.dataDeps = std::move(deps);
    n.attrs = { chakraCommType(ChakraCollective::AllReduce), chakraCommSize(1024), chakraPgName(group),
        chakraIsCpuOp(false) };
    return n;
}

/// A hand-made set of `world` ranks in one all-reduce group: every rank computes, all-reduces and computes; the
/// odd ranks compute once more at the end, so even and odd ranks are two classes.
void writeParitySet(const fs::path& dir, int world)
{
    fs::create_directories(dir);
    std::vector<int> all;
    for (int r = 0; r < world; ++r) {
        ChakraTrace t;
        t.metadata.version = "0.0.4";
        t.nodes = { comp(0), allReduce(1, 1, { 0 }), comp(2, { 1 }) };
        if (r % 2 == 1)
            t.nodes.push_back(comp(3, { 2 }));
        writeChakraTrace(dir / ("p." + std::to_string(r) + ".et"), t);
        all.push_back(r);
    }
    writeCommGroups(dir / "p.json", { { 1, all } });
}

} // namespace

class TestInspect : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void servingTensorListsHoldTheSchedulesMemory_data()
    {
        QTest::addColumn<QStringList>("sets");
        const QStringList serving { QStringLiteral("workload=inference"), QStringLiteral("inference.batch=4"),
            QStringLiteral("inference.prompt_tokens=64"), QStringLiteral("inference.output_tokens=16") };
        QTest::newRow("prefill only") << (serving + QStringList { QStringLiteral("inference.phases=prefill") });
        QTest::newRow("decode only") << (serving + QStringList { QStringLiteral("inference.phases=decode") });
        QTest::newRow("both, tp2") << (serving + QStringList { QStringLiteral("parallelism.tp=2") });
        QTest::newRow("both, pp2") << (serving + QStringList { QStringLiteral("parallelism.pp=2") });
    }

    void servingTensorListsHoldTheSchedulesMemory()
    {
        // A tensor-lifetime tracker (ASTRA-sim's track-local-mem) keeps a tensor from its first writer (or the
        // start, for one read before any write) to its last reader. The serving programs keep the weights and the
        // cache to their end and return the last sampled token to the host, so no tensor is written without a
        // reader and the replay's peak in schedule order (communication taking no time) is the report's peak on
        // every rank: inspect's replay-memory-peak check, an error beyond 1 %, finds nothing. (A prefill reads
        // each weight once: without the trailing reads the replay kept 84 % of the peak.)
        QFETCH(QStringList, sets);
        TempDir dir;
        auto r = synth("tiny", toOverrides(sets));
        ExportOptions options;
        options.directory = dir.path();
        options.name = "w";
        options.tensorLists = true;
        exportTrace(*r, options);
        const TraceSetSummary s = inspectTraceSet(dir.path());
        QCOMPARE(s.count(FindingSeverity::Error), size_t(0));
        QCOMPARE(s.ranks.size(), size_t(r->worldSize()));
        for (int rank = 0; rank < r->worldSize(); ++rank) {
            const TraceSummary t = inspectTraceFile(dir.path() / ("w." + std::to_string(rank) + ".et"));
            QCOMPARE(t.unreadOutputs, uint64_t(0));
            QCOMPARE(t.count(FindingSeverity::Error), size_t(0));
            QCOMPARE(t.statedPeakBytes.value_or(-1),
                r->summaries[static_cast<size_t>(r->classOf(RankId { rank }))].peakBytes);
            // The as-run replay (with its illustrative rates) may hold a tensor longer, never shorter.
            QVERIFY(t.replayTensorPeakBytes.has_value());
            QVERIFY(int64_t(*t.replayTensorPeakBytes) >= *t.statedPeakBytes);
        }
    }

    void rankClasses_data()
    {
        QTest::addColumn<QStringList>("sets");
        QTest::addColumn<int>("dp");
        QTest::addColumn<int>("tp");
        QTest::addColumn<int>("pp");
        // Stagecraft writes one program per pipeline stage, and the first and the last stage differ (embedding,
        // loss); with pp micro-batches or more in flight every stage holds a different number of activations
        // (1F1B), so its stated peak differs too. So the classes are the pp stages of dp*tp ranks each.
        QTest::newRow("dp2 tp2 pp2") << QStringList { QStringLiteral("parallelism.dp=2"),
            QStringLiteral("parallelism.tp=2"), QStringLiteral("parallelism.pp=2") }
                                     << 2 << 2 << 2;
        QTest::newRow("dp4") << QStringList { QStringLiteral("parallelism.dp=4"),
            QStringLiteral("training.global_batch=8") }
                             << 4 << 1 << 1;
        QTest::newRow("dp2 pp4, 8 micro-batches") << QStringList { QStringLiteral("parallelism.dp=2"),
            QStringLiteral("parallelism.pp=4"), QStringLiteral("model.layers=4"),
            QStringLiteral("training.global_batch=32"), QStringLiteral("training.micro_batch=2") }
                                                  << 2 << 1 << 4;
    }

    void rankClasses()
    {
        QFETCH(QStringList, sets);
        QFETCH(int, dp);
        QFETCH(int, tp);
        QFETCH(int, pp);
        TempDir dir;
        const auto r = exportTiny(dir.path(), toOverrides(sets));
        const int world = dp * tp * pp;
        const TraceSetSummary s = inspectTraceSet(dir.path());
        QCOMPARE(s.worldSize, world);
        QCOMPARE(s.ranks.size(), size_t(world));
        QCOMPARE(s.count(FindingSeverity::Error), size_t(0));
        QCOMPARE(s.classes.size(), size_t(pp));
        for (int stage = 0; stage < pp; ++stage) {
            const RankClass& c = s.classes[static_cast<size_t>(stage)];
            QCOMPARE(c.ranks.size(), size_t(dp * tp));
            QCOMPARE(c.ranksWithFindings, size_t(0));
            for (int rank : c.ranks)
                QCOMPARE(r->classOf(RankId { rank }), stage); // the plan's stage of the rank
        }
        for (const RankInspection& ri : s.ranks)
            QCOMPARE(ri.rankClass, r->classOf(RankId { ri.rank }));

        // The text: one row per class, no rank rows, the rule said once.
        const std::string text = summaryToText(s);
        QVERIFY2(
            text.find("rank classes: " + std::to_string(pp) + " (ranks alike: ") != std::string::npos, text.c_str());
        const auto rows = block(text, "rank classes:");
        QCOMPARE(rows.size(), size_t(pp) + 1); // header + classes
        QCOMPARE(cells(rows[0]).front(), std::string("class"));
        for (int stage = 0; stage < pp; ++stage) {
            const auto row = cells(rows[static_cast<size_t>(stage) + 1]);
            QCOMPARE(row[0], std::to_string(stage));
            QCOMPARE(row[1], std::to_string(dp * tp));
        }
        QVERIFY2(text.find("ranks with errors or warnings: none") != std::string::npos, text.c_str());
        QVERIFY(block(text, "ranks:").empty());

        // --all: every rank, and the collectives per group.
        const std::string all = summaryToText(s, true);
        const auto rankRows = block(all, "ranks:");
        QCOMPARE(rankRows.size(), size_t(world) + 1);
        for (int rank = 0; rank < world; ++rank) {
            const auto row = cells(rankRows[static_cast<size_t>(rank) + 1]);
            QCOMPARE(row[0], std::to_string(rank));
            QCOMPARE(row[1], std::to_string(r->classOf(RankId { rank })));
        }
        QVERIFY(all.find("collectives (all ranks):") != std::string::npos);

        // JSON: every rank with its class, the classes with their ranks as runs.
        const auto j = summaryToJson(s);
        QCOMPARE(j["ranks"].size(), size_t(world));
        QCOMPARE(j["rank_classes"].size(), size_t(pp));
        size_t listed = 0;
        for (const auto& c : j["rank_classes"]) {
            for (const auto& run : c["ranks"])
                listed += run[1].get<size_t>() - run[0].get<size_t>() + 1;
        }
        QCOMPARE(listed, size_t(world));
        QCOMPARE(j["ranks"][world - 1]["class"].get<int>(), pp - 1);
    }

    void sameSummaryForAnyThreadCount()
    {
        TempDir dir;
        exportTiny(dir.path(), { "parallelism.dp=2", "parallelism.tp=2", "parallelism.pp=2" });
        // A broken rank in the middle, so that findings are merged across ranks too.
        fs::resize_file(dir.path() / "w.5.et", fs::file_size(dir.path() / "w.5.et") / 2);
        const TraceSetSummary one = inspectTraceSet(dir.path(), "w", 1);
        for (unsigned threads : { 2u, 3u, 8u, 0u }) {
            const TraceSetSummary many = inspectTraceSet(dir.path(), "w", threads);
            QVERIFY(summaryToJson(many) == summaryToJson(one));
            QCOMPARE(summaryToText(many, true), summaryToText(one, true));
        }
    }

    void brokenRankIsReported()
    {
        TempDir dir;
        exportTiny(dir.path(), { "parallelism.dp=2", "parallelism.tp=2", "parallelism.pp=2" });
        const fs::path broken = dir.path() / "w.6.et";
        fs::resize_file(broken, fs::file_size(broken) - 3); // cuts the last record
        const TraceSetSummary s = inspectTraceSet(dir.path());
        QCOMPARE(s.worldSize, 8);
        QCOMPARE(s.ranks[6].rankClass, -1);
        QVERIFY(!s.ranks[6].readError.empty());
        // The message names the file, the record and its byte offset.
        QVERIFY2(s.ranks[6].readError.find("w.6.et: record ") != std::string::npos, s.ranks[6].readError.c_str());
        QVERIFY2(s.ranks[6].readError.find("at byte offset") != std::string::npos, s.ranks[6].readError.c_str());
        // Two stages of 4 ranks; rank 6 (stage 1) cannot join a class.
        QCOMPARE(s.classes.size(), size_t(2));
        QCOMPARE(s.classes[0].ranks, (std::vector<int> { 0, 1, 2, 3 }));
        QCOMPARE(s.classes[1].ranks, (std::vector<int> { 4, 5, 7 }));

        const std::string text = summaryToText(s);
        QVERIFY2(
            text.find("ranks with errors or warnings: 1 of 8 (every rank: --all)") != std::string::npos, text.c_str());
        const auto rows = block(text, "ranks with errors or warnings:");
        QCOMPARE(rows.size(), size_t(2)); // header + rank 6
        QCOMPARE(cells(rows[1]), (std::vector<std::string> { "6", "-", "unreadable", "0", "0", "0" }));
        QVERIFY(text.find("error [read-error] " + s.ranks[6].readError) != std::string::npos);
    }

    void evenlySpacedClasses()
    {
        TempDir dir;
        writeParitySet(dir.path(), 8);
        const TraceSetSummary s = inspectTraceSet(dir.path());
        QVERIFY2(s.count(FindingSeverity::Error) == 0, summaryToText(s).c_str());
        QCOMPARE(s.classes.size(), size_t(2));
        QCOMPARE(s.classes[0].ranks, (std::vector<int> { 0, 2, 4, 6 }));
        QCOMPARE(s.classes[0].nodes, uint64_t(3));
        QCOMPARE(s.classes[1].ranks, (std::vector<int> { 1, 3, 5, 7 }));
        QCOMPARE(s.classes[1].nodes, uint64_t(4));
        QCOMPARE(s.classes[1].collectives, uint64_t(1));
        const auto rows = block(summaryToText(s), "rank classes:");
        QCOMPARE(rows.size(), size_t(3));
        QCOMPARE(cells(rows[1]),
            (std::vector<std::string> { "0", "4", "0-6", "step", "2", std::to_string(s.classes[0].minFileBytes), "3",
                "1", "0", "0", "0", "0" }));
        QCOMPARE(cells(rows[2])[2], std::string("1-7"));
        // The collectives summed per type: one group, 8 all-reduces.
        const auto colls = block(summaryToText(s), "collectives (all ranks, per type");
        QCOMPARE(colls.size(), size_t(2));
        QCOMPARE(cells(colls[1]), (std::vector<std::string> { "ALL_REDUCE", "1", "8", "8192" }));
    }

    void manyRanksWithFindingsAreCut()
    {
        // 120 ranks whose files hold no node: each is an error, and the text lists the first 100 of them.
        TempDir dir;
        std::vector<int> all;
        for (int r = 0; r < 120; ++r) {
            ChakraTrace t;
            t.metadata.version = "0.0.4";
            writeChakraTrace(dir.path() / ("e." + std::to_string(r) + ".et"), t);
        }
        const TraceSetSummary s = inspectTraceSet(dir.path());
        QCOMPARE(s.classes.size(), size_t(1));
        QCOMPARE(s.classes[0].ranksWithFindings, size_t(120));
        const std::string text = summaryToText(s);
        QVERIFY2(text.find("ranks with errors or warnings: 120 of 120, the first 100 (every rank: --all)")
                != std::string::npos,
            text.c_str());
        QCOMPARE(block(text, "ranks with errors or warnings:").size(), size_t(101));
        QCOMPARE(block(summaryToText(s, true), "ranks:").size(), size_t(121));
    }

    void commandLine()
    {
        TempDir dir;
        writeParitySet(dir.path(), 4);
        auto run = [](const QStringList& args) {
            QProcess p;
            p.start(QStringLiteral(STAGECRAFT_CLI), args);
            p.waitForFinished(60000);
            return std::make_pair(p.exitCode(), p.readAllStandardOutput().toStdString());
        };
        const QString path = QString::fromStdString(dir.path().string());
        const auto [code, text] = run({ QStringLiteral("inspect"), path });
        QCOMPARE(code, 0);
        QCOMPARE(block(text, "rank classes:").size(), size_t(3));
        QVERIFY(block(text, "ranks:").empty());
        const auto [allCode, all] = run({ QStringLiteral("inspect"), path, QStringLiteral("--all"),
            QStringLiteral("--threads"), QStringLiteral("3") });
        QCOMPARE(allCode, 0);
        QCOMPARE(block(all, "ranks:").size(), size_t(5));
        const auto [jsonCode, json] = run({ QStringLiteral("inspect"), path, QStringLiteral("--json") });
        QCOMPARE(jsonCode, 0);
        const auto j = nlohmann::json::parse(json);
        QCOMPARE(j["ranks"].size(), size_t(4));
        QCOMPARE(j["rank_classes"].size(), size_t(2));
        QCOMPARE(j["rank_classes"][1]["ranks"], nlohmann::json::parse("[[1, 1], [3, 3]]"));
    }
};

QTEST_GUILESS_MAIN(TestInspect)
#include "tst_inspect.moc"
