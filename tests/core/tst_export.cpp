// SPDX-License-Identifier: MIT
// Chakra export: round trip, golden dump, determinism, per-rank patches, interrupted exports, safe output.
#include "chakra/chakrainspect.h"
#include "chakra/chakrareader.h"
#include "config/configloader.h"
#include "export/traceexporter.h"
#include "synthhelpers.h"

#include <QtTest>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

using namespace stagecraft;
using namespace stagecraft::test;
namespace fs = std::filesystem;

namespace {

/// Canonical text of a rank trace for golden files: one line per node, attributes in file order.
std::string dumpTrace(const ChakraTrace& t)
{
    std::ostringstream out;
    out << "version " << t.metadata.version << "\n";
    for (const ChakraNode& n : t.nodes) {
        out << n.id << ' ' << chakraNodeTypeName(n.type) << ' ' << n.name << " data=[";
        for (size_t i = 0; i < n.dataDeps.size(); ++i)
            out << (i ? "," : "") << n.dataDeps[i];
        out << "] ctrl=[";
        for (size_t i = 0; i < n.ctrlDeps.size(); ++i)
            out << (i ? "," : "") << n.ctrlDeps[i];
        out << "]";
        for (const ChakraAttribute& a : n.attrs) {
            out << ' ' << a.name << '=';
            if (const std::string* s = a.stringValue())
                out << '"' << *s << '"';
            else if (auto v = a.toInt64())
                out << *v;
        }
        out << "\n";
    }
    return out.str();
}

const std::vector<std::string> kTiny3d { "parallelism.dp=2", "parallelism.tp=2", "parallelism.pp=2" };

} // namespace

class TestExport : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void roundTrip_data()
    {
        QTest::addColumn<QString>("sets");
        QTest::newRow("dp2-tp2-pp2") << QStringLiteral("parallelism.dp=2;parallelism.tp=2;parallelism.pp=2");
        QTest::newRow("tp2-sp-zero3") << QStringLiteral(
            "parallelism.dp=2;parallelism.tp=2;parallelism.sequence_parallel=true;parallelism.zero=3");
        QTest::newRow("moe-ep2-cp2") << QStringLiteral(
            "model.family=moe;model.experts=4;model.top_k=2;model.expert_ffn_hidden=512;"
            "parallelism.dp=2;parallelism.ep=2;parallelism.cp=2");
        QTest::newRow("interleaved-full-recompute")
            << QStringLiteral("model.layers=4;parallelism.pp=2;parallelism.schedule=interleaved;"
                              "parallelism.virtual_stages=2;training.recompute=full");
    }

    void roundTrip()
    {
        // Write -> read back -> the same nodes the program produced for each rank; the set passes inspect.
        QFETCH(QString, sets);
        std::vector<std::string> s;
        for (const QString& x : sets.split(QLatin1Char(';')))
            s.push_back(x.toStdString());
        auto r = synth("tiny", s);
        TempDir dir;
        ExportOptions options;
        options.directory = dir.path() / "out";
        options.name = "w";
        options.threads = 2;
        const ExportSummary sum = exportTrace(*r, options);
        QCOMPARE(sum.files, r->worldSize());
        QVERIFY(sum.wroteGroups);
        for (int64_t rank = 0; rank < r->worldSize(); ++rank) {
            ChakraReadResult read = readChakraFile(options.directory / ("w." + std::to_string(rank) + ".et"));
            QVERIFY2(read.trace.has_value(), read.error.c_str());
            const int32_t cls = r->classOf(RankId { rank });
            QCOMPARE(read.trace->metadata, traceMetadata(*r, cls));
            // The stated peak is the report's memory peak of the rank's class.
            QCOMPARE(read.trace->metadata.attr("peak_memory_bytes")->toInt64(),
                std::optional<int64_t>(r->summaries[static_cast<size_t>(cls)].peakBytes));
            QVERIFY(read.trace->nodes == rankTraceNodes(*r, RankId { rank }, options));
            // The export patches pre-encoded class records per rank; its bytes equal a plain protobuf
            // serialization of the rank's node list.
            ChakraTrace plain;
            plain.metadata = traceMetadata(*r, cls);
            plain.nodes = rankTraceNodes(*r, RankId { rank }, options);
            QVERIFY(readFile(options.directory / ("w." + std::to_string(rank) + ".et")) == serializeChakraTrace(plain));
            const TraceSummary ts = inspectTrace(*read.trace);
            QVERIFY(ts.denseIds);
            QVERIFY(ts.topologicalOrder);
            QVERIFY(ts.acyclic);
            QCOMPARE(ts.count(FindingSeverity::Error), size_t(0));
        }
        const TraceSetSummary set = inspectTraceSet(options.directory, "w");
        QCOMPARE(set.count(FindingSeverity::Error), size_t(0));
        QCOMPARE(set.worldSize, int(r->worldSize()));
    }

    void randomPlansInspectClean()
    {
        // 30 valid plans drawn at random (fixed seed) over every axis the tiny models take: each exported set,
        // half of them with tensor lists, has no error in `inspect`, replay checks included (no node escapes its
        // schedule phase, no unread output, the replay's tensor peak within 1 % of the report's).
        std::mt19937 rng(20261201);
        auto pick = [&](std::initializer_list<const char*> v) {
            return std::string(*(v.begin() + std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)));
        };
        int valid = 0, drawn = 0;
        while (valid < 30) {
            QVERIFY2(++drawn < 2000, "too few valid plans among the draws");
            const bool moe = pick({ "dense", "moe" }) == "moe";
            std::vector<std::string> s = { "model.layers=" + pick({ "2", "3", "4" }),
                "parallelism.dp=" + pick({ "1", "2", "4" }), "parallelism.tp=" + pick({ "1", "2" }),
                "parallelism.pp=" + pick({ "1", "2", "3" }), "parallelism.cp=" + pick({ "1", "2" }),
                "parallelism.zero=" + pick({ "0", "1", "2", "3" }),
                "parallelism.sequence_parallel=" + pick({ "true", "false" }),
                "training.recompute=" + pick({ "none", "selective", "full" }),
                "parallelism.schedule=" + pick({ "1f1b", "gpipe", "interleaved" }),
                "training.global_batch=" + pick({ "8", "16" }), "training.micro_batch=" + pick({ "1", "2" }) };
            if (moe)
                s = s
                    + std::vector<std::string> { "model.family=moe", "model.experts=4", "model.top_k=2",
                          "model.expert_ffn_hidden=256", "parallelism.ep=" + pick({ "1", "2" }) };
            if (std::find(s.begin(), s.end(), "parallelism.schedule=interleaved") != s.end())
                s.push_back("parallelism.virtual_stages=2");
            ConfigResult loaded = loadConfigOrPreset("tiny", s);
            if (!loaded.config)
                continue;
            SynthesisOutcome out = synthesize(*loaded.config);
            if (!out.result || out.result->worldSize() > 64)
                continue;
            ++valid;
            TempDir dir;
            ExportOptions options;
            options.directory = dir.path() / "out";
            options.name = "w";
            options.threads = 2;
            options.tensorLists = valid % 2 == 0;
            options.ctrlDepsAsData = valid % 3 == 0;
            exportTrace(*out.result, options);
            const TraceSetSummary set = inspectTraceSet(options.directory, "w");
            std::string plan;
            for (const std::string& x : s)
                plan += x + " ";
            std::string errors;
            for (const TraceFinding& f : set.findings)
                if (f.severity == FindingSeverity::Error)
                    errors += f.check + ": " + f.message + "\n";
            QVERIFY2(set.count(FindingSeverity::Error) == 0, (plan + "\n" + errors).c_str());
            QCOMPARE(set.worldSize, int(out.result->worldSize()));
        }
    }

    void golden()
    {
        // The tiny preset at dp 2, tp 2, pp 2, first and last stage, reviewed by hand once. UPDATE_GOLDEN=1
        // rewrites it; a mismatch writes <name>.actual beside it.
        auto r = synth("tiny", kTiny3d);
        ExportOptions options;
        std::string text;
        for (int64_t rank : { 0, 7 }) {
            ChakraTrace t;
            t.metadata = traceMetadata();
            t.nodes = rankTraceNodes(*r, RankId { rank }, options);
            text += "# rank " + std::to_string(rank) + "\n" + dumpTrace(t);
        }
        const fs::path golden = fs::path(STAGECRAFT_TEST_DATA) / "export" / "tiny-dp2tp2pp2.txt";
        if (qEnvironmentVariableIsSet("UPDATE_GOLDEN")) {
            fs::create_directories(golden.parent_path());
            std::ofstream(golden) << text;
        }
        const std::string expected = readFile(golden);
        if (expected != text) {
            const fs::path actual = golden.string() + ".actual";
            std::ofstream(actual) << text;
            const std::string diff = "diff -u " + golden.string() + " " + actual.string();
            QVERIFY(std::system(diff.c_str()) >= 0);
            QFAIL("golden mismatch; run with UPDATE_GOLDEN=1 after reviewing the diff");
        }
    }

    void byteIdenticalAcrossRunsAndThreads()
    {
        auto a = synth("tiny", kTiny3d);
        auto b = synth("tiny", kTiny3d);
        TempDir dir;
        ExportOptions o1, o2;
        o1.directory = dir.path() / "a";
        o2.directory = dir.path() / "b";
        o1.name = o2.name = "w";
        o1.threads = 1;
        o2.threads = 2;
        exportTrace(*a, o1);
        exportTrace(*b, o2);
        for (int64_t rank = 0; rank < 8; ++rank) {
            const std::string f = "w." + std::to_string(rank) + ".et";
            QVERIFY(readFile(o1.directory / f) == readFile(o2.directory / f));
        }
        QVERIFY(readFile(o1.directory / "w.json") == readFile(o2.directory / "w.json"));
    }

    void ranksOfOneClassDifferOnlyInPatches()
    {
        // Ranks 0..3 form stage 0. Their node lists are equal once pg_name, comm_src and comm_dst are removed,
        // and those differ where the groups and peers differ.
        auto r = synth("tiny", kTiny3d);
        ExportOptions options;
        auto strip = [](std::vector<ChakraNode> nodes) {
            for (ChakraNode& n : nodes)
                std::erase_if(n.attrs, [](const ChakraAttribute& a) {
                    return a.name == "pg_name" || a.name == "comm_src" || a.name == "comm_dst";
                });
            return nodes;
        };
        const auto n0 = rankTraceNodes(*r, RankId { 0 }, options);
        const auto n1 = rankTraceNodes(*r, RankId { 1 }, options);
        QVERIFY(strip(n0) == strip(n1));
        QVERIFY(n0 != n1);
        int differing = 0;
        for (size_t i = 0; i < n0.size(); ++i)
            if (!(n0[i] == n1[i])) {
                ++differing;
                QVERIFY(n0[i].type == ChakraNodeType::CommColl || n0[i].type == ChakraNodeType::CommSend
                    || n0[i].type == ChakraNodeType::CommRecv);
            }
        QVERIFY(differing > 0);
    }

    void interruptedExportLeavesNoPartialFile()
    {
        // A child process exports a larger trace set and is killed (SIGKILL, no cleanup) part-way. Every
        // <name>.<rank>.et that exists afterwards is complete: it reads back whole and equals the rank's nodes.
        auto r = synth("tiny",
            { "model.layers=8", "parallelism.dp=8", "parallelism.tp=2", "parallelism.pp=2", "training.global_batch=64",
                "training.micro_batch=2" });
        TempDir dir;
        ExportOptions options;
        options.directory = dir.path() / "out";
        options.name = "w";
        const pid_t child = fork();
        QVERIFY(child >= 0);
        if (child == 0) {
            for (;;) { // keep exporting until killed
                ExportOptions o = options;
                o.force = true;
                exportTrace(*r, o);
            }
        }
        // Wait (up to 60 s, sanitizer builds are slow) until the child committed a file, then let it write on
        // a little and kill it while it is in the middle of the set.
        auto committed = [&] {
            std::error_code ec;
            for (const fs::directory_entry& e : fs::directory_iterator(options.directory, ec))
                if (e.path().filename().string()[0] != '.' && e.path().extension() == ".et")
                    return true;
            return false;
        };
        for (int i = 0; i < 3000 && !committed(); ++i)
            usleep(20 * 1000);
        usleep(30 * 1000);
        kill(child, SIGKILL);
        int status = 0;
        waitpid(child, &status, 0);
        QVERIFY(WIFSIGNALED(status));
        int complete = 0;
        for (const fs::directory_entry& e : fs::directory_iterator(options.directory)) {
            const std::string file = e.path().filename().string();
            if (file.size() < 3 || file.substr(file.size() - 3) != ".et" || file[0] == '.')
                continue;
            const int64_t rank = std::stoll(file.substr(2, file.size() - 5));
            ChakraReadResult read = readChakraFile(e.path());
            QVERIFY2(read.trace.has_value(), read.error.c_str());
            QVERIFY(read.trace->nodes == rankTraceNodes(*r, RankId { rank }, options));
            ++complete;
        }
        QVERIFY(complete > 0);
        // A new export cleans the killed run's temporary files up (they are ours) and completes the set.
        ExportOptions again = options;
        again.force = true;
        exportTrace(*r, again);
        for (const fs::directory_entry& e : fs::directory_iterator(options.directory))
            QVERIFY2(e.path().filename().string()[0] != '.', e.path().c_str());
    }

    void refusesUnsafeOutput()
    {
        auto r = synth("tiny", {});
        TempDir dir;
        ExportOptions options;
        options.directory = dir.path();
        for (const char* bad : { "../x", "a/b", "..", "" }) {
            options.name = bad;
            QVERIFY_THROWS_EXCEPTION(ExportError, exportTrace(*r, options));
        }
        // A second export of the same name is refused without force; unrelated files are left alone.
        options.name = "w";
        std::ofstream(dir.path() / "notes.txt") << "mine";
        exportTrace(*r, options);
        QVERIFY_THROWS_EXCEPTION(ExportError, exportTrace(*r, options));
        options.force = true;
        exportTrace(*r, options);
        QCOMPARE(readFile(dir.path() / "notes.txt"), std::string("mine"));
        // A range outside the world is refused.
        options.firstRank = 0;
        options.endRank = 5;
        QVERIFY_THROWS_EXCEPTION(ExportError, exportTrace(*r, options));
    }

    void writesTheResolvedConfig()
    {
        // <name>.yaml next to the groups: the resolved config, which loads back to the same Config (what
        // `stagecraft simulate` re-synthesizes). It is ours: a later export of the name refuses it without force.
        auto r = synth("tiny", kTiny3d);
        TempDir dir;
        ExportOptions options;
        options.directory = dir.path();
        options.name = "w";
        const ExportSummary sum = exportTrace(*r, options);
        QCOMPARE(sum.configPath, dir.path() / "w.yaml");
        const ConfigResult reloaded = loadConfigFile((dir.path() / "w.yaml").string());
        QVERIFY(reloaded.config);
        QVERIFY(*reloaded.config == r->config);
        for (const fs::directory_entry& e : fs::directory_iterator(dir.path()))
            if (e.path().filename() != "w.yaml")
                fs::remove(e.path());
        QVERIFY_THROWS_EXCEPTION(ExportError, exportTrace(*r, options));
        // A range that does not start at rank 0 writes neither the groups nor the config.
        options.force = true;
        options.firstRank = 4;
        QVERIFY(exportTrace(*r, options).configPath.empty());
        // Never through a symbolic link.
        options.firstRank = 0;
        fs::remove(dir.path() / "w.yaml");
        fs::create_symlink(dir.path() / "elsewhere.yaml", dir.path() / "w.yaml");
        QVERIFY_THROWS_EXCEPTION(ExportError, exportTrace(*r, options)); // refused before anything is written
        QVERIFY(!fs::exists(dir.path() / "elsewhere.yaml"));
    }

    void rankRangesComposeTheWholeSet()
    {
        // --ranks A:B shards: writing 0:3 and 3:8 separately gives the same files as one export.
        auto r = synth("tiny", kTiny3d);
        TempDir dir;
        ExportOptions whole, part;
        whole.directory = dir.path() / "whole";
        part.directory = dir.path() / "parts";
        whole.name = part.name = "w";
        exportTrace(*r, whole);
        part.firstRank = 0;
        part.endRank = 3;
        QVERIFY(exportTrace(*r, part).wroteGroups);
        part.firstRank = 3;
        part.endRank = 8; // another job of the array: the files of 0:3 are not a conflict
        QVERIFY(!exportTrace(*r, part).wroteGroups);
        for (int64_t rank = 0; rank < 8; ++rank) {
            const std::string f = "w." + std::to_string(rank) + ".et";
            QVERIFY(readFile(whole.directory / f) == readFile(part.directory / f));
        }
    }

    void replaceOwnTellsOursFromOthers_data()
    {
        QTest::addColumn<QString>("file"); // planted in the output directory before the export
        QTest::addColumn<QString>("source"); // "ours:<file>" (our export of the same plan), "stage:<file>", "text:..."
        QTest::addColumn<QString>("rankExtension");
        QTest::addColumn<QString>("refusal"); // empty: the planted file is replaced
        QTest::newRow("our rank file") << "w.0.et"
                                       << "ours:w.0.et"
                                       << ""
                                       << "";
        QTest::newRow("our group JSON") << "w.json"
                                        << "ours:w.json"
                                        << ""
                                        << "";
        QTest::newRow("our JSON trace at a .json rank path") << "w.0.json"
                                                             << "ours-json:w.0.json"
                                                             << ".json"
                                                             << "";
        // STAGE's metadata schema is "symbolic_tensor_network" (tests/data/chakra/stage/README.md).
        QTest::newRow("STAGE rank file") << "w.0.et"
                                         << "stage:workload.0.et"
                                         << ""
                                         << "schema is \"symbolic_tensor_network\"";
        QTest::newRow("STAGE group JSON") << "w.json"
                                          << "stage:workload.json"
                                          << ""
                                          << "its layout is not the one Stagecraft writes";
        QTest::newRow("our group JSON edited") << "w.json"
                                               << "ours+:w.json"
                                               << ""
                                               << "its layout is not the one Stagecraft writes";
        QTest::newRow("not a trace") << "w.0.et"
                                     << "text:hello"
                                     << ""
                                     << "it is not a Chakra trace";
        // A file of our name with another ending (.json beside .et) is not a file this export writes: it is
        // neither a conflict nor replaced (see otherEndingIsLeftAlone).
    }

    void otherEndingIsLeftAlone()
    {
        auto r = synth("tiny", {});
        TempDir dir;
        ExportOptions options;
        options.name = "w";
        options.directory = dir.path() / "json";
        options.format = ChakraFileFormat::Json;
        exportTrace(*r, options);
        const fs::path out = dir.path() / "out";
        fs::create_directory(out);
        const std::string planted = readFile(dir.path() / "json" / "w.0.json");
        std::ofstream(out / "w.0.json", std::ios::binary) << planted;
        options.directory = out;
        options.format = ChakraFileFormat::Protobuf;
        for (bool replaceOwn : { false, true }) {
            options.replaceOwn = replaceOwn;
            options.force = !replaceOwn;
            const ExportSummary sum = exportTrace(*r, options);
            // The .et, the group file and the config of the first run.
            QCOMPARE(sum.replaced, int64_t(replaceOwn ? 3 : 0));
            QCOMPARE(readFile(out / "w.0.json"), planted);
            QVERIFY(fs::exists(out / "w.0.et"));
        }
    }

    void replaceOwnTellsOursFromOthers()
    {
        QFETCH(QString, file);
        QFETCH(QString, source);
        QFETCH(QString, rankExtension);
        QFETCH(QString, refusal);
        auto r = synth("tiny", {});
        TempDir dir;
        ExportOptions options;
        options.name = "w";
        options.directory = dir.path() / "ours";
        exportTrace(*r, options);
        options.directory = dir.path() / "ours-json";
        options.format = ChakraFileFormat::Json;
        exportTrace(*r, options);

        const fs::path out = dir.path() / "out";
        fs::create_directory(out);
        const std::string kind = source.section(QLatin1Char(':'), 0, 0).toStdString();
        const std::string name = source.section(QLatin1Char(':'), 1).toStdString();
        std::string planted;
        if (kind == "text")
            planted = name;
        else if (kind == "stage")
            planted = readFile(fs::path(STAGECRAFT_TEST_DATA) / "chakra/stage/llama-dp2tp2pp2" / name);
        else
            planted = readFile(dir.path() / (kind == "ours+" ? "ours" : kind) / name) + (kind == "ours+" ? " " : "");
        QVERIFY(!planted.empty());
        std::ofstream(out / file.toStdString(), std::ios::binary) << planted;

        options.directory = out;
        options.format = ChakraFileFormat::Protobuf;
        options.replaceOwn = true;
        options.rankExtension = rankExtension.toStdString();
        if (!refusal.isEmpty()) {
            try {
                exportTrace(*r, options);
                QFAIL("the export was not refused");
            } catch (const ExportError& e) {
                QVERIFY2(QString::fromUtf8(e.what()).contains(refusal), e.what());
                QVERIFY2(QString::fromUtf8(e.what()).contains(file), e.what());
            }
            QCOMPARE(readFile(out / file.toStdString()), planted);
            QCOMPARE(std::distance(fs::directory_iterator(out), fs::directory_iterator()), 1L);
            return;
        }
        const ExportSummary sum = exportTrace(*r, options);
        QCOMPARE(sum.replaced, int64_t(1));
        // The planted file now holds what this export writes: our protobuf rank file, our group JSON.
        const std::string written = file == QLatin1String("w.json") ? "w.json" : "w.0.et";
        QCOMPARE(readFile(out / file.toStdString()), readFile(dir.path() / "ours" / written));
    }

    void replaceOwnNamesAForeignFileFirst()
    {
        // A file of another tool is the one to name, even beside a file of ours with another ending.
        auto r = synth("tiny", {});
        TempDir dir;
        ExportOptions options;
        options.name = "w";
        options.directory = dir.path();
        options.format = ChakraFileFormat::Json;
        exportTrace(*r, options); // w.0.json, w.json: not overwritten by a protobuf export
        const fs::path stage = fs::path(STAGECRAFT_TEST_DATA) / "chakra/stage/llama-dp2tp2pp2/workload.0.et";
        fs::copy_file(stage, dir.path() / "w.0.et");
        options.format = ChakraFileFormat::Protobuf;
        options.replaceOwn = true;
        try {
            exportTrace(*r, options);
            QFAIL("the export was not refused");
        } catch (const ExportError& e) {
            QVERIFY2(QString::fromUtf8(e.what()).startsWith(QString::fromStdString(
                         "'" + (dir.path() / "w.0.et").string() + "' was not written by Stagecraft")),
                e.what());
        }
        QCOMPARE(readFile(dir.path() / "w.0.et"), readFile(stage));
    }
};

QTEST_GUILESS_MAIN(TestExport)
#include "tst_export.moc"
