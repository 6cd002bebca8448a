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
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

using namespace stagecraft;
using namespace stagecraft::test;
namespace fs = std::filesystem;

namespace {

std::string readFile(const fs::path& p)
{
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

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

class TempDir
{
public:
    TempDir()
    {
        char pattern[] = "/tmp/stagecraft-test-XXXXXX";
        m_path = mkdtemp(pattern);
    }
    ~TempDir()
    {
        std::error_code ec;
        fs::remove_all(m_path, ec);
    }
    const fs::path& path() const
    {
        return m_path;
    }

private:
    fs::path m_path;
};

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
            QCOMPARE(read.trace->metadata, traceMetadata());
            QVERIFY(read.trace->nodes == rankTraceNodes(*r, RankId { rank }, options));
            // The export patches pre-encoded class records per rank; its bytes equal a plain protobuf
            // serialization of the rank's node list.
            ChakraTrace plain;
            plain.metadata = traceMetadata();
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
        QVERIFY_THROWS_EXCEPTION(ChakraWriteError, exportTrace(*r, options));
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
};

QTEST_GUILESS_MAIN(TestExport)
#include "tst_export.moc"
