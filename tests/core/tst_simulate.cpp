// SPDX-License-Identifier: MIT
// ASTRA-sim configs from a Config (values against the unit conversions written out here), the output parser on a
// real captured run, the four pass criteria, the runner with stand-in simulators (shell scripts: pass, fail,
// hang, cancel), the run folder's safety rules, and, when STAGECRAFT_ASTRASIM names the binary, a real run.
#include "config/configloader.h"
#include "estimate/stepestimate.h"
#include "export/traceexporter.h"
#include "simulate/astrasimconfig.h"
#include "simulate/astrasimoutput.h"
#include "simulate/astrasimrunner.h"
#include "simulate/simulationcomparison.h"
#include "synthhelpers.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QtTest>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

using namespace stagecraft;
using namespace stagecraft::test;
namespace fs = std::filesystem;

namespace {

// ASTRA-sim's units, from its sources: the system layer multiplies peak-perf by 1e12 and local-mem-bw by 1e9
// (Sys::initialize_sys); the analytical network reads bandwidth "GB/s" as 2^30 bytes/s (bw_GBps_to_Bpns); a
// switch message takes two hops.
constexpr double kTera = 1e12;
constexpr double kGiga = 1e9;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr int kSwitchHops = 2;

/// An executable shell script standing in for the simulator.
fs::path writeScript(const fs::path& path, const std::string& body)
{
    std::ofstream(path) << "#!/bin/sh\n" << body;
    ::chmod(path.c_str(), 0755);
    return path;
}

/// A stand-in that records its arguments and reports every rank finished (finish 1000 + 10 r, exposed 100 + r).
std::string passingBody(int ranks)
{
    return "printf '%s\\n' \"$@\" > \"$(dirname \"$0\")/args.txt\"\n"
           "pwd > \"$(dirname \"$0\")/cwd.txt\"\n"
           "r=0\nwhile [ $r -lt "
        + std::to_string(ranks)
        + " ]; do\n"
          "  echo \"[2026-01-01 00:00:00.000] [workload] [info] sys[$r] finished, $((1000 + 10 * r)) cycles, "
          "exposed communication $((100 + r)) cycles.\"\n"
          "  r=$((r + 1))\ndone\n";
}

Config worldConfig(int64_t world, int64_t gpusPerNode)
{
    Config c;
    c.parallelism.dp = world;
    c.cluster.gpusPerNode = gpusPerNode;
    return c;
}

/// Cancels as soon as `path` exists.
class CancelWhenFileExists final : public ProgressSink
{
public:
    explicit CancelWhenFileExists(fs::path path)
        : m_path(std::move(path))
    {
    }
    void report(double, const char*) override { }
    bool cancelled() const override
    {
        return fs::exists(m_path);
    }

private:
    fs::path m_path;
};

/// The tiny preset on dp 2 x tp 2 x pp 2 with 16 micro-batches of one sequence: the plan the real run uses.
const std::vector<std::string> kTinyRun { "parallelism.dp=2", "parallelism.tp=2", "parallelism.pp=2",
    "training.global_batch=16", "training.micro_batch=1" };

} // namespace

class TestSimulate : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void systemConfig_data()
    {
        QTest::addColumn<QString>("gpu");
        QTest::addColumn<QString>("precision");
        QTest::addColumn<double>("denseTflops"); // the preset's datasheet figure for the precision
        QTest::addColumn<double>("hbmGBps");
        QTest::newRow("h100 bf16") << QStringLiteral("h100-sxm") << QStringLiteral("bf16") << 989.5 << 3350.0;
        QTest::newRow("h100 fp32") << QStringLiteral("h100-sxm") << QStringLiteral("fp32") << 67.0 << 3350.0;
        QTest::newRow("a100 fp16") << QStringLiteral("a100-80gb") << QStringLiteral("fp16") << 312.0 << 2039.0;
        QTest::newRow("b200 bf16") << QStringLiteral("b200") << QStringLiteral("bf16") << 2250.0 << 8000.0;
    }

    void systemConfig()
    {
        // peak-perf = dense peak x compute efficiency in TFLOP/s; local-mem-bw = HBM bandwidth in GB/s (1e9).
        QFETCH(QString, gpu);
        QFETCH(QString, precision);
        QFETCH(double, denseTflops);
        QFETCH(double, hbmGBps);
        ConfigResult loaded = loadConfigOrPreset("tiny",
            { "parallelism.dp=16", "training.global_batch=16", "training.micro_batch=1",
                "cluster.gpu=" + gpu.toStdString(), "training.precision=" + precision.toStdString() });
        QVERIFY(loaded.config);
        const std::optional<GpuSpec> spec = gpuPreset(gpu.toStdString());
        QVERIFY(spec);
        EstimateOptions options;
        options.flatComputeEfficiency = 0.4;
        std::string error;
        const std::optional<AstraSimSetup> setup = astraSimSetup(*loaded.config, *spec, options, false, error);
        QVERIFY2(setup, error.c_str());
        const double expectedPeak = denseTflops * kTera * 0.4 / kTera;
        QCOMPARE(setup->peakPerfTflops, expectedPeak);
        QCOMPARE(setup->localMemBwGBps, hbmGBps * kGiga / kGiga);

        const QJsonObject j = QJsonDocument::fromJson(QByteArray::fromStdString(astraSimSystemJson(*setup))).object();
        QCOMPARE(j.value(QLatin1String("peak-perf")).toDouble(), expectedPeak);
        QCOMPARE(j.value(QLatin1String("local-mem-bw")).toDouble(), hbmGBps);
        QCOMPARE(j.value(QLatin1String("roofline-enabled")).toInt(), 1);
        QVERIFY(!j.contains(QLatin1String("track-local-mem")));
        // 16 ranks on 8-GPU nodes: two dimensions, ring collectives and direct all-to-all in each.
        for (const char* key :
            { "all-reduce-implementation", "reduce-scatter-implementation", "all-gather-implementation" })
            QCOMPARE(
                j.value(QLatin1String(key)).toArray(), QJsonArray({ QStringLiteral("ring"), QStringLiteral("ring") }));
        QCOMPARE(j.value(QLatin1String("all-to-all-implementation")).toArray(),
            QJsonArray({ QStringLiteral("direct"), QStringLiteral("direct") }));
        QVERIFY(j.value(QLatin1String("preferred-dataset-splits")).toInt() >= 1);

        const std::optional<AstraSimSetup> tracked = astraSimSetup(*loaded.config, *spec, options, true, error);
        const QJsonObject t = QJsonDocument::fromJson(QByteArray::fromStdString(astraSimSystemJson(*tracked))).object();
        QCOMPARE(t.value(QLatin1String("track-local-mem")).toInt(), 1);
    }

    void networkDimensions_data()
    {
        QTest::addColumn<int>("world");
        QTest::addColumn<int>("gpusPerNode");
        QTest::addColumn<QList<int>>("npus");
        QTest::addColumn<QList<double>>("bandwidthGbps"); // ours as achieved, decimal GB/s per GPU
        QTest::addColumn<QList<double>>("latencyUs"); // ours, per step
        // The default cluster (a DGX H100): 450 GB/s inside a node at 0.8 of it = 360, 50 across at 0.9 = 45;
        // 5 us / 10 us per step.
        QTest::newRow("8 NPUs, one node") << 8 << 8 << QList<int> { 8 } << QList<double> { 360 } << QList<double> { 5 };
        QTest::newRow("16 NPUs, 2 nodes")
            << 16 << 8 << QList<int> { 8, 2 } << QList<double> { 360, 45 } << QList<double> { 5, 10 };
        QTest::newRow("64 NPUs, 8 nodes")
            << 64 << 8 << QList<int> { 8, 8 } << QList<double> { 360, 45 } << QList<double> { 5, 10 };
        QTest::newRow("4 NPUs in an 8-GPU node")
            << 4 << 8 << QList<int> { 4 } << QList<double> { 360 } << QList<double> { 5 };
        QTest::newRow("4 single-GPU nodes")
            << 4 << 1 << QList<int> { 4 } << QList<double> { 45 } << QList<double> { 10 };
    }

    void networkDimensions()
    {
        QFETCH(int, world);
        QFETCH(int, gpusPerNode);
        QFETCH(QList<int>, npus);
        QFETCH(QList<double>, bandwidthGbps);
        QFETCH(QList<double>, latencyUs);
        const Config config = worldConfig(world, gpusPerNode);
        std::string error;
        const std::optional<AstraSimSetup> setup = astraSimSetup(config, *gpuPreset("h100-sxm"), {}, false, error);
        QVERIFY2(setup, error.c_str());
        QCOMPARE(setup->npus, world);
        const YAML::Node yaml = YAML::Load(astraSimNetworkYaml(*setup));
        QCOMPARE(yaml["npus_count"].size(), size_t(npus.size()));
        int64_t product = 1;
        for (qsizetype d = 0; d < npus.size(); ++d) {
            QCOMPARE(yaml["topology"][d].as<std::string>(), std::string("Switch"));
            QCOMPARE(yaml["npus_count"][d].as<int>(), npus[d]);
            // ASTRA-sim's "GB/s" is 2^30 bytes/s: our GB/s x 1e9 / 2^30.
            QCOMPARE(yaml["bandwidth"][d].as<double>(), bandwidthGbps[d] * kGiga / kGiB);
            // Per hop: our per-transfer latency in ns over the switch's two hops.
            QCOMPARE(yaml["latency"][d].as<double>(), latencyUs[d] * 1000 / kSwitchHops);
            product *= npus[d];
        }
        QCOMPARE(product, int64_t(world));
        const QJsonObject j = QJsonDocument::fromJson(QByteArray::fromStdString(astraSimSystemJson(*setup))).object();
        QCOMPARE(j.value(QLatin1String("all-reduce-implementation")).toArray().size(), npus.size());
        QCOMPARE(QJsonDocument::fromJson(QByteArray::fromStdString(astraSimMemoryJson()))
                     .object()
                     .value(QLatin1String("memory-type"))
                     .toString(),
            QStringLiteral("NO_MEMORY_EXPANSION"));
    }

    void refusesWhatAstraSimCannotModel_data()
    {
        QTest::addColumn<int>("world");
        QTest::addColumn<int>("gpusPerNode");
        QTest::addColumn<bool>("noBf16");
        QTest::addColumn<QString>("message");
        QTest::newRow("one rank") << 1 << 8 << false << QStringLiteral("needs at least 2 NPUs");
        QTest::newRow("12 ranks on 8-GPU nodes")
            << 12 << 8 << false << QStringLiteral("is not a multiple of cluster.gpus_per_node 8");
        QTest::newRow("no peak for bf16") << 8 << 8 << true << QStringLiteral("no peak FLOP/s for precision bf16");
    }

    void refusesWhatAstraSimCannotModel()
    {
        QFETCH(int, world);
        QFETCH(int, gpusPerNode);
        QFETCH(bool, noBf16);
        QFETCH(QString, message);
        GpuSpec gpu = *gpuPreset("h100-sxm");
        if (noBf16)
            gpu.bf16Flops = 0;
        std::string error;
        QVERIFY(!astraSimSetup(worldConfig(world, gpusPerNode), gpu, {}, false, error));
        QVERIFY2(QString::fromStdString(error).contains(message), error.c_str());
    }

    void parsesACapturedRun()
    {
        // stdout of a real run: the tiny preset on dp 2 x tp 2 x pp 2 (8 ranks) with memory tracking. The
        // expected figures come from an independent reading of the same text with regular expressions.
        const QString path = QStringLiteral(STAGECRAFT_TEST_DATA "/simulate/tiny-dp2-tp2-pp2.stdout.txt");
        QFile file(path);
        QVERIFY2(file.open(QIODevice::ReadOnly), qPrintable(path));
        const QByteArray bytes = file.readAll();
        const QString text = QString::fromUtf8(bytes);
        static const QRegularExpression finished(
            QStringLiteral("sys\\[(\\d+)\\] finished, (\\d+) cycles, exposed communication (\\d+) cycles\\."));
        static const QRegularExpression memory(
            QStringLiteral("sys\\[(\\d+)\\] peak memory usage: ([0-9.]+) (B|KB|MB|GB)"));
        std::map<int64_t, std::pair<uint64_t, uint64_t>> expected;
        for (auto it = finished.globalMatch(text); it.hasNext();) {
            const auto m = it.next();
            expected[m.captured(1).toLongLong()] = { m.captured(2).toULongLong(), m.captured(3).toULongLong() };
        }
        std::map<int64_t, double> expectedMemory;
        for (auto it = memory.globalMatch(text); it.hasNext();) {
            const auto m = it.next();
            const int power =
                QStringList({ QStringLiteral("B"), QStringLiteral("KB"), QStringLiteral("MB"), QStringLiteral("GB") })
                    .indexOf(m.captured(3));
            expectedMemory[m.captured(1).toLongLong()] = m.captured(2).toDouble() * std::pow(1024.0, power);
        }
        QCOMPARE(expected.size(), size_t(8));
        QCOMPARE(expectedMemory.size(), size_t(8));

        const AstraSimOutput out = parseAstraSimOutput(std::string_view(bytes.constData(), size_t(bytes.size())));
        QCOMPARE(out.finished.size(), size_t(8));
        for (const AstraSimFinishLine& f : out.finished) {
            QVERIFY(expected.count(f.rank));
            QCOMPARE(f.finishCycles, expected[f.rank].first);
            QCOMPARE(f.exposedCycles, expected[f.rank].second);
            QVERIFY(f.exposedCycles <= f.finishCycles);
        }
        QCOMPARE(out.peakMemoryBytes.size(), size_t(8));
        for (const auto& [rank, bytesPeak] : out.peakMemoryBytes)
            QCOMPARE(bytesPeak, expectedMemory[rank]);
        QVERIFY(out.errorLines.empty());
        QVERIFY(!out.tailLines.empty());
        QVERIFY(!out.tailLines.back().starts_with("[20")); // the log timestamp is removed
        const AstraSimVerdict v = judgeAstraSimRun(out, AstraSimExit {}, 8, true);
        QVERIFY2(v.passed, v.reason.c_str());
        QCOMPARE(v.finishedRanks, 8);
    }

    void passCriteria_data()
    {
        QTest::addColumn<QString>("output");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<bool>("timedOut");
        QTest::addColumn<bool>("trackMem");
        QTest::addColumn<QString>("reason"); // empty: passes
        const QString all = QStringLiteral("sys[0] finished, 10 cycles, exposed communication 1 cycles.\n"
                                           "sys[1] finished, 20 cycles, exposed communication 2 cycles.\n"
                                           "sys[2] finished, 30 cycles, exposed communication 3 cycles.\n");
        QTest::newRow("all ranks") << all << 0 << false << false << QString();
        QTest::newRow("exit code") << all << 1 << false << false << QStringLiteral("3/3 ranks finished; exit code 1");
        QTest::newRow("timeout") << all << 0 << true << false << QStringLiteral("timed out after 2 s");
        QTest::newRow("missing rank") << QStringLiteral("sys[0] finished, 10 cycles, exposed communication 1 cycles.\n")
                                      << 0 << false << false << QStringLiteral("1/3 ranks finished; missing ranks 1-2");
        QTest::newRow("twice") << all + QStringLiteral("sys[1] finished, 21 cycles, exposed communication 2 cycles.\n")
                               << 0 << false << false << QStringLiteral("rank 1 reported finishing more than once");
        QTest::newRow("unknown rank") << all
                + QStringLiteral("sys[7] finished, 21 cycles, exposed communication 2 cycles.\n")
                                      << 0 << false << false << QStringLiteral("unexpected rank 7");
        QTest::newRow("critical") << all + QStringLiteral("[2026-01-01 00:00:00.000] [workload] [critical] oops\n") << 0
                                  << false << false << QStringLiteral("1 error line");
        QTest::newRow("terminate") << QStringLiteral(
            "terminate called after throwing an instance of 'x'\n  what():  y\n")
                                   << 0 << false << false
                                   << QStringLiteral("0/3 ranks finished; missing ranks 0-2; 2 error lines");
        QTest::newRow("assertion") << all + QStringLiteral("a.cc:3: f: Assertion `x' failed.\n") << 0 << false << false
                                   << QStringLiteral("1 error line");
        QTest::newRow("memory lines missing")
            << all << 0 << false << true << QStringLiteral("no peak memory line for ranks 0-2");
    }

    void passCriteria()
    {
        QFETCH(QString, output);
        QFETCH(int, exitCode);
        QFETCH(bool, timedOut);
        QFETCH(bool, trackMem);
        QFETCH(QString, reason);
        AstraSimExit exit;
        exit.exitCode = exitCode;
        exit.timedOut = timedOut;
        exit.timeoutS = 2;
        const AstraSimVerdict v = judgeAstraSimRun(parseAstraSimOutput(output.toStdString()), exit, 3, trackMem);
        QCOMPARE(v.passed, reason.isEmpty());
        QVERIFY2(QString::fromStdString(v.reason).contains(reason), v.reason.c_str());
        if (!v.passed)
            QVERIFY(!v.relevantLines.empty());
    }

    void findsTheTraceSet()
    {
        auto r = synth("tiny", { "parallelism.dp=2" });
        TempDir dir;
        ExportOptions options;
        options.directory = dir.path();
        options.name = "w";
        exportTrace(*r, options);
        std::string error;
        std::optional<TraceSet> t = findTraceSet(dir.path(), "", error);
        QVERIFY2(t, error.c_str());
        QCOMPARE(t->name, std::string("w"));
        QCOMPARE(t->ranks, 2);
        QCOMPARE(t->groupsPath, dir.path() / "w.json");
        QCOMPARE(t->configPath, dir.path() / "w.yaml");
        QVERIFY(!findTraceSet(dir.path(), "other", error));
        QVERIFY2(error.find("no trace files other.<rank>.et") != std::string::npos, error.c_str());
        // A second set: the name is needed; a gap in the ranks is refused.
        options.name = "v";
        exportTrace(*r, options);
        QVERIFY(!findTraceSet(dir.path(), "", error));
        QVERIFY2(error.find("several trace sets (v, w)") != std::string::npos, error.c_str());
        fs::remove(dir.path() / "v.0.et");
        QVERIFY(!findTraceSet(dir.path(), "v", error));
        QVERIFY2(error.find("rank 0 is missing") != std::string::npos, error.c_str());
        QVERIFY(!findTraceSet(dir.path() / "nowhere", "", error));
    }

    void runsAStandInAndWritesTheRunFolder()
    {
        auto r = synth("tiny", { "parallelism.dp=2", "parallelism.pp=2" });
        TempDir dir;
        ExportOptions options;
        options.directory = dir.path() / "traces";
        options.name = "w";
        exportTrace(*r, options);
        std::string error;
        const TraceSet traces = *findTraceSet(options.directory, "w", error);
        const AstraSimSetup setup = *astraSimSetup(r->config, *gpuPreset("h100-sxm"), {}, false, error);
        const fs::path fake = writeScript(dir.path() / "fake-astrasim", passingBody(4));
        AstraSimRunOptions run;
        run.binary = fake.string();
        const AstraSimResult sim = runAstraSim(traces, setup, run);
        QVERIFY2(sim.passed, sim.reason.c_str());
        QCOMPARE(sim.status, AstraSimStatus::Passed);
        QCOMPARE(sim.ranks.size(), size_t(4));
        for (const AstraSimRankResult& rank : sim.ranks) {
            QCOMPARE(rank.finishNs, 1000.0 + 10.0 * double(rank.rank));
            QCOMPARE(rank.exposedCommunicationNs, 100.0 + double(rank.rank));
        }
        // The simulator ran in the run folder with ASTRA-sim's own option names and our files.
        const fs::path runDir = options.directory / "w.astrasim";
        QCOMPARE(sim.files.runDirectory, runDir);
        QCOMPARE(readFile(dir.path() / "cwd.txt"), runDir.string() + "\n");
        const std::string args = readFile(dir.path() / "args.txt");
        const std::string expectedArgs = "--workload-configuration=" + (options.directory / "w").string()
            + "\n--comm-group-configuration=" + (options.directory / "w.json").string() + "\n--system-configuration="
            + (runDir / "system.json").string() + "\n--remote-memory-configuration=" + (runDir / "memory.json").string()
            + "\n--network-configuration=" + (runDir / "network.yml").string()
            + "\n--logging-folder=" + (runDir / "log").string() + "\n";
        QCOMPARE(args, expectedArgs);
        QCOMPARE(readFile(runDir / "system.json"), astraSimSystemJson(setup));
        QCOMPARE(readFile(runDir / "network.yml"), astraSimNetworkYaml(setup));
        QCOMPARE(readFile(runDir / "memory.json"), astraSimMemoryJson());
        QVERIFY(readFile(runDir / "stdout.txt").find("sys[3] finished") != std::string::npos);
        QVERIFY(fs::exists(runDir / "stderr.txt"));
        struct stat st
        {
        };
        QCOMPARE(::stat((runDir / "cmd.sh").c_str(), &st), 0);
        QVERIFY(st.st_mode & S_IXUSR);
        const std::string script = readFile(runDir / "cmd.sh");
        QVERIFY(script.starts_with("#!/bin/sh\n"));
        QVERIFY(script.find("'" + fake.string() + "'") != std::string::npos);
        for (const fs::directory_entry& e : fs::directory_iterator(runDir))
            QVERIFY2(e.path().filename().string()[0] != '.', e.path().c_str()); // no temporary left

        // cmd.sh repeats the run by hand: the stand-in records the same arguments again.
        fs::remove(dir.path() / "args.txt");
        QCOMPARE(std::system(("'" + (runDir / "cmd.sh").string() + "' > /dev/null").c_str()), 0);
        QCOMPARE(readFile(dir.path() / "args.txt"), expectedArgs);

        // The comparison groups the ranks by stage: the slowest rank of stage s is the highest rank of the stage.
        StepEstimate estimate;
        QVERIFY(estimateStep(*r, *gpuPreset("h100-sxm"), {}, estimate, error));
        const SimulationComparison c = compareWithEstimate(*r, estimate, sim);
        QCOMPARE(c.stages.size(), size_t(2));
        for (const StageComparison& s : c.stages) {
            int64_t slowest = -1;
            for (int64_t rank = 0; rank < 4; ++rank)
                if (r->classOf(RankId { rank }) == s.stage)
                    slowest = rank;
            QCOMPARE(s.slowestRank, slowest);
            QCOMPARE(s.simulatedFinishNs, 1000.0 + 10.0 * double(slowest));
            QCOMPARE(s.simulatedExposedNs, 100.0 + double(slowest));
            const ClassEstimate& e = estimate.classes[size_t(s.stage)];
            QCOMPARE(s.estimatedFinishNs, e.stepTimeS * 1e9);
            QCOMPARE(s.estimatedExposedNs, (e.stepTimeS - e.computeTimeS) * 1e9);
            QCOMPARE(s.finishRatio, s.simulatedFinishNs / s.estimatedFinishNs);
        }
        QCOMPARE(c.slowestRank, 3);
        const std::string text = simulationText(sim, &c);
        QVERIFY2(text.starts_with("ASTRA-sim: PASS, 4/4 ranks finished"), text.c_str());
        QVERIFY(text.find("slowest rank: 3") != std::string::npos);
        QCOMPARE(simulationJson(sim, &c)["stages"].size(), size_t(2));
    }

    void judgesFailingStandIns_data()
    {
        QTest::addColumn<QString>("body");
        QTest::addColumn<double>("timeoutS");
        QTest::addColumn<QString>("reason");
        QTest::newRow("exit code and critical line") << QStringLiteral(
            "echo 'sys[0] finished, 5 cycles, exposed communication 0 cycles.'\n"
            "echo '[2026-01-01 00:00:00.000] [workload] [critical] communicator group 9 not found'\n"
            "exit 3\n") << 30.0 << QStringLiteral("1/2 ranks finished; exit code 3; missing rank 1; 1 error line");
        QTest::newRow("stall: exit 0, a rank missing")
            << QStringLiteral("echo 'sys[1] finished, 5 cycles, exposed communication 0 cycles.'\n") << 30.0
            << QStringLiteral("1/2 ranks finished; missing rank 0");
        QTest::newRow("hangs") << QStringLiteral("sleep 30\n") << 0.5 << QStringLiteral("timed out after 0.5 s");
        QTest::newRow("ignores SIGTERM") << QStringLiteral("trap '' TERM\nsleep 30\n") << 0.3
                                         << QStringLiteral("timed out after 0.3 s");
        QTest::newRow("killed") << QStringLiteral("kill -SEGV $$\n") << 30.0 << QStringLiteral("killed by signal 11");
    }

    void judgesFailingStandIns()
    {
        QFETCH(QString, body);
        QFETCH(double, timeoutS);
        QFETCH(QString, reason);
        auto r = synth("tiny", { "parallelism.dp=2" });
        TempDir dir;
        ExportOptions options;
        options.directory = dir.path();
        options.name = "w";
        exportTrace(*r, options);
        std::string error;
        const TraceSet traces = *findTraceSet(dir.path(), "w", error);
        const AstraSimSetup setup = *astraSimSetup(r->config, *gpuPreset("h100-sxm"), {}, false, error);
        AstraSimRunOptions run;
        run.binary = writeScript(dir.path() / "fake", body.toStdString()).string();
        run.timeoutS = timeoutS;
        const auto start = std::chrono::steady_clock::now();
        const AstraSimResult sim = runAstraSim(traces, setup, run);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        QCOMPARE(sim.status, AstraSimStatus::Failed);
        QVERIFY2(QString::fromStdString(sim.reason).contains(reason), sim.reason.c_str());
        if (body.contains(QLatin1String("echo"))) // what it printed is shown
            QVERIFY(!sim.relevantLines.empty());
        // A hang ends at the time limit (plus the two-second grace for a process that ignores SIGTERM).
        QVERIFY2(seconds < timeoutS + 4, qPrintable(QString::number(seconds)));
        QVERIFY(fs::exists(dir.path() / "w.astrasim" / "stdout.txt"));
    }

    void cancelKillsTheProcessGroup()
    {
        auto r = synth("tiny", { "parallelism.dp=2" });
        TempDir dir;
        ExportOptions options;
        options.directory = dir.path();
        options.name = "w";
        exportTrace(*r, options);
        std::string error;
        const TraceSet traces = *findTraceSet(dir.path(), "w", error);
        const AstraSimSetup setup = *astraSimSetup(r->config, *gpuPreset("h100-sxm"), {}, false, error);
        // The stand-in starts a grandchild in its group; both must be gone after the cancel.
        const fs::path pidFile = dir.path() / "child.pid";
        AstraSimRunOptions run;
        run.binary = writeScript(dir.path() / "fake",
            "sleep 60 &\necho $! > '" + pidFile.string() + ".tmp' && mv '" + pidFile.string() + ".tmp' '"
                + pidFile.string() + "'\nwait\n")
                         .string();
        CancelWhenFileExists cancel(pidFile);
        const auto start = std::chrono::steady_clock::now();
        const AstraSimResult sim = runAstraSim(traces, setup, run, &cancel);
        QCOMPARE(sim.status, AstraSimStatus::Cancelled);
        QVERIFY(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
        QVERIFY(fs::exists(pidFile));
        const pid_t child = static_cast<pid_t>(std::stol(readFile(pidFile)));
        QTRY_VERIFY_WITH_TIMEOUT(::kill(child, 0) != 0, 3000);
    }

    void refusesBadInput()
    {
        auto r = synth("tiny", { "parallelism.dp=2" });
        TempDir dir;
        ExportOptions options;
        options.directory = dir.path();
        options.name = "w";
        exportTrace(*r, options);
        std::string error;
        const TraceSet traces = *findTraceSet(dir.path(), "w", error);
        const AstraSimSetup setup = *astraSimSetup(r->config, *gpuPreset("h100-sxm"), {}, false, error);
        AstraSimRunOptions run;
        run.binary = (dir.path() / "no-such-binary").string();
        AstraSimResult sim = runAstraSim(traces, setup, run);
        QCOMPARE(sim.status, AstraSimStatus::BadInput);
        QVERIFY2(sim.reason.find("not found") != std::string::npos, sim.reason.c_str());
        run.binary = (dir.path() / "w.json").string(); // exists, not executable
        QVERIFY(runAstraSim(traces, setup, run).reason.find("not an executable") != std::string::npos);

        run.binary = writeScript(dir.path() / "fake", passingBody(2)).string();
        AstraSimSetup other = setup;
        other.npus = 4;
        QVERIFY(runAstraSim(traces, other, run).reason.find("has 2 rank files but the config describes 4")
            != std::string::npos);
        AstraSimSetup tracked = setup;
        tracked.trackLocalMem = true; // the export has no tensor lists
        sim = runAstraSim(traces, tracked, run);
        QCOMPARE(sim.status, AstraSimStatus::BadInput);
        QVERIFY2(sim.reason.find("--tensor-lists") != std::string::npos, sim.reason.c_str());

        // Never through a symbolic link: not as the run folder, not as one of its files.
        const fs::path elsewhere = dir.path() / "elsewhere";
        fs::create_directory(elsewhere);
        fs::create_directory_symlink(elsewhere, dir.path() / "w.astrasim");
        sim = runAstraSim(traces, setup, run);
        QCOMPARE(sim.status, AstraSimStatus::BadInput);
        QVERIFY2(sim.reason.find("symbolic link") != std::string::npos, sim.reason.c_str());
        QVERIFY(fs::is_empty(elsewhere));
        fs::remove(dir.path() / "w.astrasim");
        fs::create_directory(dir.path() / "w.astrasim");
        fs::create_symlink(elsewhere / "target.json", dir.path() / "w.astrasim" / "system.json");
        sim = runAstraSim(traces, setup, run);
        QCOMPARE(sim.status, AstraSimStatus::BadInput);
        QVERIFY2(sim.reason.find("not a regular file (a symbolic link)") != std::string::npos, sim.reason.c_str());
        QVERIFY(!fs::exists(elsewhere / "target.json"));
    }

    void realAstraSim()
    {
        // The real simulator on the tiny plan: every rank finishes, and its times sit near our estimate.
        const QByteArray binary = qgetenv("STAGECRAFT_ASTRASIM");
        if (binary.isEmpty())
            QSKIP("set STAGECRAFT_ASTRASIM to ASTRA-sim's AstraSim_Analytical_Congestion_Unaware to run this test");
        auto r = synth("tiny", kTinyRun);
        QCOMPARE(r->worldSize(), 8);
        TempDir dir;
        ExportOptions options;
        options.directory = dir.path();
        options.name = "tiny";
        options.tensorLists = true;
        exportTrace(*r, options);
        std::string error;
        const std::optional<TraceSet> traces = findTraceSet(dir.path(), "", error);
        QVERIFY2(traces, error.c_str());
        const GpuSpec gpu = *gpuPreset(r->config.cluster.gpu);
        for (const bool track : { false, true }) {
            const std::optional<AstraSimSetup> setup = astraSimSetup(r->config, gpu, {}, track, error);
            QVERIFY2(setup, error.c_str());
            AstraSimRunOptions run;
            run.binary = binary.toStdString();
            run.timeoutS = 120;
            const AstraSimResult sim = runAstraSim(*traces, *setup, run);
            for (const std::string& line : sim.relevantLines)
                qWarning("%s", line.c_str());
            QVERIFY2(sim.passed, sim.reason.c_str());
            QCOMPARE(sim.ranks.size(), size_t(8));
            for (const AstraSimRankResult& rank : sim.ranks) {
                QVERIFY(rank.finishNs > 0);
                QVERIFY(rank.exposedCommunicationNs <= rank.finishNs);
                QCOMPARE(rank.peakMemoryBytes.has_value(), track);
            }
            StepEstimate estimate;
            QVERIFY(estimateStep(*r, gpu, {}, estimate, error));
            const SimulationComparison c = compareWithEstimate(*r, estimate, sim);
            qInfo("%s", simulationText(sim, &c).c_str());
            // Both model the same roofline and bandwidths; ASTRA-sim pays latency per ring step, so it is slower,
            // but not by an order of magnitude.
            QVERIFY2(c.iterationRatio > 0.5 && c.iterationRatio < 3, qPrintable(QString::number(c.iterationRatio)));
        }
    }
};

QTEST_GUILESS_MAIN(TestSimulate)
#include "tst_simulate.moc"
