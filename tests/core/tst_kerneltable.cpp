// SPDX-License-Identifier: MIT
// Kernel tables from PyTorch profiler traces (stagecraft calibrate) and their use by the estimate
// (cluster.kernel_table). Expected times are independent computations with Python's json module on the same
// HolisticTraceAnalysis traces (tests/data/kineto/README.md), quoted where used; interpolated values are the
// linear-interpolation formula on numbers chosen here.
#include "estimate/costmodel.h"
#include "estimate/kernelcalibration.h"
#include "estimate/kernelsources.h"
#include "estimate/kerneltable.h"
#include "estimate/stepestimate.h"
#include "estimate/tracecompare.h"
#include "kineto/kinetoreader.h"
#include "program/distributionplan.h"
#include "synthhelpers.h"

#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <fstream>
#include <map>

using namespace stagecraft;
namespace fs = std::filesystem;

namespace {
const fs::path s_data = fs::path(STAGECRAFT_TEST_DATA) / "kineto";

KernelTable calibrate(const char* file, CalibrationSummary& summary)
{
    const KinetoReadResult r = readKinetoFile(s_data / file);
    if (!r.ok())
        qFatal("%s", r.error.c_str());
    static std::vector<KinetoTrace> keep;
    keep.push_back(*r.trace);
    return calibrateKernelTable({ &keep.back() }, "a100-sxm", summary);
}
} // namespace

class TestKernelTable : public QObject
{
    Q_OBJECT

private slots:
    void gemmTimesFromATrace_data();
    void gemmTimesFromATrace();
    void collectiveTimesFromATrace();
    void interpolation();
    void yamlRoundTrip();
    void badTables_data();
    void badTables();
    void estimateUsesTheTable();
    void compareWithAMeasuredStep();
    void compareRealTrace();
};

void TestKernelTable::gemmTimesFromATrace_data()
{
    QTest::addColumn<qint64>("batch");
    QTest::addColumn<qint64>("m");
    QTest::addColumn<qint64>("n");
    QTest::addColumn<qint64>("k");
    QTest::addColumn<double>("medianUs");
    QTest::addColumn<qint64>("samples");
    // sampled_rank-0.json.gz, by an independent Python script (json + a stack sweep per thread over cpu_op and
    // cuda_runtime events; each kernel's launch -> innermost op -> up to 4 parents to the first aten::mm / addmm /
    // bmm / baddbmm / linear with "Input Dims"; kernel durations summed per op execution; grouped by (type, batch,
    // M, N, K) from the dims, addmm's after the bias; statistics.median). It printed "377 163" (op executions,
    // shapes) and, for the shapes with the most executions:
    //   ('float', 1, 2048, 3906, 512) 8 150.0
    //   ('float', 1, 125, 320, 2048) 8 29.0
    //   ('float', 1, 2048, 320, 125) 8 22.5
    //   ('float', 1, 2048, 125, 320) 7 36.0
    //   ('float', 1, 2048, 18030, 110) 7 264.0
    //   ('float', 1, 2048, 160, 32) 6 45.5
    QTest::newRow("2048x3906x512") << qint64(1) << qint64(2048) << qint64(3906) << qint64(512) << 150.0 << qint64(8);
    QTest::newRow("125x320x2048") << qint64(1) << qint64(125) << qint64(320) << qint64(2048) << 29.0 << qint64(8);
    QTest::newRow("2048x320x125") << qint64(1) << qint64(2048) << qint64(320) << qint64(125) << 22.5 << qint64(8);
    QTest::newRow("2048x125x320") << qint64(1) << qint64(2048) << qint64(125) << qint64(320) << 36.0 << qint64(7);
    QTest::newRow("2048x18030x110") << qint64(1) << qint64(2048) << qint64(18030) << qint64(110) << 264.0 << qint64(7);
    QTest::newRow("2048x160x32") << qint64(1) << qint64(2048) << qint64(160) << qint64(32) << 45.5 << qint64(6);
}

void TestKernelTable::gemmTimesFromATrace()
{
    QFETCH(qint64, batch);
    QFETCH(qint64, m);
    QFETCH(qint64, n);
    QFETCH(qint64, k);
    QFETCH(double, medianUs);
    QFETCH(qint64, samples);
    CalibrationSummary summary;
    const KernelTable table = calibrate("sampled_rank-0.json.gz", summary);
    QCOMPARE(summary.gemmOps, int64_t(377));
    QCOMPARE(table.gemm.size(), size_t(163));
    // The same shape estimated from the table: the trace's median within 2 % (the issue's bar; it is exact here).
    const TableLookup found = lookupGemm(table, "fp32", GemmShape { m, n, k, batch });
    QCOMPARE(found.match, TableMatch::Exact);
    QVERIFY2(std::fabs(found.timeS * 1e6 - medianUs) <= 0.02 * medianUs, std::to_string(found.timeS * 1e6).c_str());
    const auto it = std::find_if(table.gemm.begin(), table.gemm.end(),
        [&](const KernelTableGemm& e) { return e.m == m && e.n == n && e.k == k && e.batch == batch; });
    QVERIFY(it != table.gemm.end());
    QCOMPARE(it->samples, int64_t(samples));
}

void TestKernelTable::collectiveTimesFromATrace()
{
    // nccl_data.json.gz: python3 -c "import json,gzip,collections,statistics; e=json.load(gzip.open(
    //   'nccl_data.json.gz','rt'))['traceEvents']; k=[x for x in e if x.get('cat')=='kernel' and 'nccl' in
    //   x['name'].lower()]; S=collections.defaultdict(list)
    //   for x in k: a=x['args']; S[(a['Collective name'],a['In msg nelems']*4,a['Group size'],a['dtype'])].append(
    //     x['dur'])
    //   for kk,v in sorted(S.items()): print(kk,len(v),statistics.median(v))"
    // printed (4 bytes a Float element):
    //   ('allreduce', 8196000, 2, 'Float') 3 3306.963
    //   ('allreduce', 9724160, 2, 'Float') 3 2028.293
    //   ('allreduce', 26255360, 2, 'Float') 3 2621.533
    //   ('allreduce', 26550272, 2, 'Float') 3 2417.184
    //   ('allreduce', 31502336, 2, 'Float') 3 2673.916
    //   ('broadcast', 212, 2, 'Long') 3 7.775
    //   ('broadcast', 212480, 2, 'Float') 3 30.848
    CalibrationSummary summary;
    const KernelTable table = calibrate("nccl_data.json.gz", summary);
    QCOMPARE(table.collectives.size(), size_t(5));
    QCOMPARE(summary.collectiveKernels, int64_t(21));
    QCOMPARE(summary.otherCollectives, int64_t(6)); // the broadcasts
    const std::pair<int64_t, double> expected[] = { { 8196000, 3306.963 }, { 9724160, 2028.293 },
        { 26255360, 2621.533 }, { 26550272, 2417.184 }, { 31502336, 2673.916 } };
    for (const auto& [bytes, us] : expected) {
        const TableLookup found = lookupCollective(table, "all_reduce", bytes, 2);
        QCOMPARE(found.match, TableMatch::Exact);
        QVERIFY(std::fabs(found.timeS * 1e6 - us) <= 1e-6 * us);
    }
    // Between two measured sizes, linear: 9724160 + (26255360 - 9724160) / 2 = 17989760 bytes
    // -> (2028.293 + 2621.533) / 2 = 2324.913 us.
    const TableLookup between = lookupCollective(table, "all_reduce", 17989760, 2);
    QCOMPARE(between.match, TableMatch::Interpolated);
    QVERIFY(std::fabs(between.timeS * 1e6 - 2324.913) < 1e-6);
    QCOMPARE(lookupCollective(table, "all_reduce", 17989760, 4).match, TableMatch::None); // another group size
    QCOMPARE(lookupCollective(table, "all_reduce", 100, 2).match, TableMatch::None); // below the smallest: model
}

void TestKernelTable::interpolation()
{
    KernelTable t;
    t.gemm = { { "bf16", 1, 1024, 4096, 4096, 100, 1 }, { "bf16", 1, 4096, 4096, 4096, 400, 1 },
        { "bf16", 1, 2048, 4096, 1024, 50, 1 } };
    t.attention = { { "bf16", false, 1, 2048, 32, 128, 300, 1 }, { "bf16", false, 1, 8192, 32, 128, 4800, 1 } };
    t.elementwise = { { 1000, 10, 1 }, { 3000, 20, 1 } };
    // m = 2048 between 1024 (100 us) and 4096 (400 us): 100 + (2048 - 1024) / (4096 - 1024) * 300 = 200 us.
    TableLookup r = lookupGemm(t, "bf16", GemmShape { 2048, 4096, 4096, 1 });
    QCOMPARE(r.match, TableMatch::Interpolated);
    QVERIFY(std::fabs(r.timeS - 200e-6) < 1e-12);
    // k between 1024 (50 us) and 4096 at m = 2048? No entry at (2048, 4096, 4096): along k only one point -> model.
    QCOMPARE(lookupGemm(t, "bf16", GemmShape { 2048, 4096, 2048, 1 }).match, TableMatch::None);
    QCOMPARE(lookupGemm(t, "fp16", GemmShape { 1024, 4096, 4096, 1 }).match, TableMatch::None); // another dtype
    QCOMPARE(lookupGemm(t, "bf16", GemmShape { 8192, 4096, 4096, 1 }).match, TableMatch::None); // no extrapolation
    // Attention, linear in batch * seq^2: seq 4096 -> x = 16.8M between 4.19M (300) and 67.1M (4800):
    // 300 + (4096^2 - 2048^2) / (8192^2 - 2048^2) * 4500 = 300 + 12582912 / 62914560 * 4500 = 1200 us.
    r = lookupAttention(t, "bf16", false, 1, 4096, 32, 128);
    QCOMPARE(r.match, TableMatch::Interpolated);
    QVERIFY(std::fabs(r.timeS - 1200e-6) < 1e-12);
    QCOMPARE(lookupAttention(t, "bf16", true, 1, 4096, 32, 128).match, TableMatch::None); // no backward entries
    // Elementwise 2000 bytes: (10 + 20) / 2 = 15 us.
    r = lookupElementwise(t, 2000);
    QCOMPARE(r.match, TableMatch::Interpolated);
    QVERIFY(std::fabs(r.timeS - 15e-6) < 1e-12);
    QCOMPARE(lookupElementwise(t, 1000).match, TableMatch::Exact);
}

void TestKernelTable::yamlRoundTrip()
{
    CalibrationSummary summary;
    const KernelTable table = calibrate("sampled_rank-0.json.gz", summary);
    QTemporaryDir dir;
    const fs::path p = fs::path(dir.path().toStdString()) / "table.yaml";
    std::ofstream(p) << kernelTableYaml(table);
    KernelTable back;
    std::string error;
    QVERIFY2(readKernelTable(p, back, error), error.c_str());
    QCOMPARE(back.gpu, std::string("a100-sxm"));
    QCOMPARE(back.gemm.size(), table.gemm.size());
    QCOMPARE(back.elementwise.size(), table.elementwise.size());
    for (size_t i = 0; i < table.gemm.size(); ++i) {
        QCOMPARE(back.gemm[i].m, table.gemm[i].m);
        QCOMPARE(back.gemm[i].samples, table.gemm[i].samples);
        QVERIFY(std::fabs(back.gemm[i].timeUs - table.gemm[i].timeUs) <= 1e-8 * table.gemm[i].timeUs);
    }
}

void TestKernelTable::badTables_data()
{
    QTest::addColumn<QString>("yaml");
    QTest::addColumn<QString>("error");
    QTest::newRow("not a table") << "a: 1\n"
                                 << ":1:1: not a kernel table";
    QTest::newRow("version") << "kernel_table: 2\n"
                             << ":1:15: kernel_table: format version 1 expected, found \"2\"";
    QTest::newRow("negative time")
        << "kernel_table: 1\ngemm:\n  - {dtype: bf16, batch: 1, m: 1, n: 2, k: 3, time_us: -4, samples: 1}\n"
        << ":3:56: time_us: expected a time in microseconds > 0, found \"-4\"";
    QTest::newRow("m not an integer")
        << "kernel_table: 1\ngemm:\n  - {dtype: bf16, batch: 1, m: x, n: 2, k: 3, time_us: 4, samples: 1}\n"
        << ":3:32: m: expected an integer >= 1, found \"x\"";
    QTest::newRow("unknown collective")
        << "kernel_table: 1\ncollectives:\n  - {collective: gossip, bytes: 1, group: 2, time_us: 4, samples: 1}\n"
        << ":3:18: collective: expected all_reduce, all_gather, reduce_scatter or all_to_all, found \"gossip\"";
    QTest::newRow("bad yaml") << "kernel_table: 1\ngemm: [\n"
                              << ":3:1: invalid YAML:";
}

void TestKernelTable::badTables()
{
    QFETCH(QString, yaml);
    QFETCH(QString, error);
    QTemporaryDir dir;
    const fs::path p = fs::path(dir.path().toStdString()) / "t.yaml";
    std::ofstream(p) << yaml.toStdString();
    KernelTable t;
    std::string message;
    QVERIFY(!readKernelTable(p, t, message));
    QVERIFY2(message.rfind(p.string() + error.toStdString(), 0) == 0, message.c_str());
}

void TestKernelTable::estimateUsesTheTable()
{
    // tiny (resources/presets/tiny.yaml): hidden 256, vocab 1024, seq_len 128, bf16. With micro_batch 1 and
    // global_batch 4 on one GPU, 4 micro-batches; the LM head's forward GEMM is M = 1 x 128 tokens, N = 1024 (vocab),
    // K = 256 (hidden), one node per micro-batch. A table holding only that shape, at 100 us, times those 4 nodes
    // and leaves every other node to the model.
    QTemporaryDir dir;
    const fs::path p = fs::path(dir.path().toStdString()) / "t.yaml";
    std::ofstream(p) << "kernel_table: 1\ngpu: h100-sxm\ngemm:\n"
                        "  - {dtype: bf16, batch: 1, m: 128, n: 1024, k: 256, time_us: 100, samples: 1}\n";
    const auto result = test::synth("tiny",
        { "training.micro_batch=1", "training.global_batch=4", "parallelism.dp=1", "parallelism.tp=1",
            "parallelism.pp=1", "cluster.kernel_table=" + p.string() });
    std::string error;
    const std::optional<GpuSpec> gpu = gpuForConfig(result->config, error);
    QVERIFY(gpu);
    HardwareRates rates;
    QVERIFY2(planRates(*result, *gpu, {}, rates, error), error.c_str());
    const ModelGraph& g = *result->plan->graph;
    int64_t gemmNodes = 0, headNodes = 0;
    for (const ClassProgram& program : result->classes) {
        const CommPlacement placement(result->mesh(), program.exampleRank, result->config.cluster.gpusPerNode);
        for (const ProgramNode& n : program.nodes) {
            if (n.kind != NodeKind::Compute || n.op < 0)
                continue;
            const Op& op = g.ops[size_t(n.op)];
            if (op.kind != OpKind::MatMul && op.kind != OpKind::AttentionScores && op.kind != OpKind::AttentionContext)
                continue;
            ++gemmNodes;
            const GemmShape s = gemmShapeOf(op, *result->plan);
            if (s.m == 128 && s.n == 1024 && s.k == 256 && s.batch == 1) {
                ++headNodes;
                // 100 us measured + the kernel launch gap every compute node gets (cluster.kernel_launch_us, 2 us).
                QVERIFY(std::fabs(nodeTimeS(n, rates, placement, n.peerStage) - 102e-6) < 1e-12);
            }
        }
    }
    QCOMPARE(headNodes, int64_t(4));
    StepEstimate est;
    QVERIFY2(estimateStep(*result, *gpu, {}, est, error), error.c_str());
    const KernelSourceCounts& k = est.kernelSources;
    QCOMPARE(k.table, p.string());
    QCOMPARE(k.measured[size_t(OpTimeClass::Gemm)], int64_t(4));
    QCOMPARE(k.interpolated[size_t(OpTimeClass::Gemm)], int64_t(0));
    QCOMPARE(k.modelled[size_t(OpTimeClass::Gemm)], gemmNodes - 4);
    QCOMPARE(k.measured[size_t(OpTimeClass::Attention)] + k.measured[size_t(OpTimeClass::Elementwise)], int64_t(0));
    QVERIFY(kernelSourcesText(k).find("GEMM: 4 / 0 / " + std::to_string(gemmNodes - 4)) != std::string::npos);
    // A table that cannot be read is an error of the estimate, naming the key.
    const auto broken = test::synth("tiny", { "cluster.kernel_table=" + (p.parent_path() / "missing.yaml").string() });
    QVERIFY(!planRates(*broken, *gpu, {}, rates, error));
    QVERIFY2(error.rfind("cluster.kernel_table: ", 0) == 0, error.c_str());
}

void TestKernelTable::compareWithAMeasuredStep()
{
    // A hand-made trace of one profiled step (times in us): a GEMM kernel [100, 150), an elementwise kernel
    // [150, 160), an all-reduce [140, 180) on another stream, and a kernel launched in the next step (not counted).
    // Measured: step = 180 - 100 = 80 us; GEMM 50, elementwise 10, all_reduce 40; the all-reduce is under compute
    // for [140, 160), so 20 us of it are exposed.
    const std::string json = R"({"distributedInfo": {"rank": 0}, "traceEvents": [
 {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 1000},
 {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "pid": 1, "tid": 1, "ts": 1000, "dur": 1000},
 {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 5},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 11, "dur": 1,
  "args": {"correlation": 1}},
 {"ph": "X", "cat": "cpu_op", "name": "aten::add_", "pid": 1, "tid": 1, "ts": 20, "dur": 5},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 21, "dur": 1,
  "args": {"correlation": 2}},
 {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1, "ts": 30, "dur": 5,
  "args": {"Collective name": "allreduce", "In msg nelems": 1024, "Group size": 2, "dtype": "Float"}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 31, "dur": 1,
  "args": {"correlation": 3}},
 {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1010, "dur": 5},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1011, "dur": 1,
  "args": {"correlation": 4}},
 {"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16", "pid": 0, "tid": 7, "ts": 100, "dur": 50,
  "args": {"correlation": 1, "stream": 7}},
 {"ph": "X", "cat": "kernel", "name": "void at::native::vectorized_elementwise_kernel<4>", "pid": 0, "tid": 7,
  "ts": 150, "dur": 10, "args": {"correlation": 2, "stream": 7}},
 {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float", "pid": 0, "tid": 20, "ts": 140,
  "dur": 40, "args": {"correlation": 3, "stream": 20}},
 {"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16", "pid": 0, "tid": 7, "ts": 1100, "dur": 50,
  "args": {"correlation": 4, "stream": 7}}
]})";
    const KinetoReadResult read = readKinetoBytes(json, "step.json");
    QVERIFY2(read.ok(), read.error.c_str());
    const auto result = test::synth("tiny", { "parallelism.dp=2", "parallelism.tp=1", "parallelism.pp=1" });
    std::string error;
    const std::optional<GpuSpec> gpu = gpuForConfig(result->config, error);
    StepEstimate estimate;
    EstimateSchedule schedule;
    QVERIFY2(estimateStep(*result, *gpu, {}, estimate, error, &schedule), error.c_str());
    TraceComparison c;
    QVERIFY2(compareTrace(*read.trace, *result, estimate, schedule, -1, 0, c, error), error.c_str());
    QCOMPARE(c.iteration, std::string("ProfilerStep#1"));
    QCOMPARE(c.iterations, int64_t(2));
    QVERIFY(std::fabs(c.measuredStepS - 80e-6) < 1e-12);
    QVERIFY(std::fabs(c.measuredExposedCommunicationS - 20e-6) < 1e-12);
    QCOMPARE(c.spans.size(), size_t(3));
    std::map<std::string, std::pair<double, int64_t>> measured;
    for (const KindComparison& k : c.kinds)
        measured[k.kind] = { k.measuredS, k.measuredCount };
    QVERIFY(std::fabs(measured["GEMM"].first - 50e-6) < 1e-12);
    QCOMPARE(measured["GEMM"].second, int64_t(1));
    QVERIFY(std::fabs(measured["elementwise"].first - 10e-6) < 1e-12);
    QVERIFY(std::fabs(measured["all_reduce"].first - 40e-6) < 1e-12);
    // Ours: the class's step and exposed communication as the estimate has them.
    QCOMPARE(c.syntheticStepS, estimate.classes[0].stepTimeS);
    QCOMPARE(c.syntheticExposedCommunicationS, estimate.classes[0].exposedCommunicationS);
    // Largest |ours - measured| first.
    for (size_t i = 1; i < c.kinds.size(); ++i)
        QVERIFY(std::fabs(c.kinds[i - 1].differenceS()) >= std::fabs(c.kinds[i].differenceS()));
    // The second step holds only the later GEMM.
    QVERIFY(compareTrace(*read.trace, *result, estimate, schedule, -1, 1, c, error));
    QCOMPARE(c.spans.size(), size_t(1));
    QVERIFY(!compareTrace(*read.trace, *result, estimate, schedule, -1, 2, c, error));
    QCOMPARE(error, std::string("iteration 2 does not exist: the trace has 2 (ProfilerStep annotations)"));
    QVERIFY(!compareTrace(*read.trace, *result, estimate, schedule, 99, 0, c, error));
}

void TestKernelTable::compareRealTrace()
{
    // sampled_rank-0.json.gz's last step, by an independent python3 script (the linking of gemmTimesFromATrace_data;
    // GPU kernels, copies and sets whose launching op starts inside the last "ProfilerStep#" annotation, unlinked
    // ones by their own start): it printed "2 ProfilerStep#552 602 5 615601.0" (steps, the last one's name, its
    // GPU activities, NCCL kernels among them, first start to last end in us).
    const KinetoReadResult read = readKinetoFile(s_data / "sampled_rank-0.json.gz");
    QVERIFY2(read.ok(), read.error.c_str());
    const auto result = test::synth("tiny", {});
    std::string error;
    const std::optional<GpuSpec> gpu = gpuForConfig(result->config, error);
    StepEstimate estimate;
    EstimateSchedule schedule;
    QVERIFY2(estimateStep(*result, *gpu, {}, estimate, error, &schedule), error.c_str());
    TraceComparison c;
    QVERIFY2(compareTrace(*read.trace, *result, estimate, schedule, -1, -1, c, error), error.c_str());
    QCOMPARE(c.iterations, int64_t(2));
    QCOMPARE(c.iteration, std::string("ProfilerStep#552"));
    QCOMPARE(c.spans.size(), size_t(602));
    int64_t nccl = 0;
    for (const MeasuredSpan& s : c.spans)
        nccl += read.trace->nameOf(read.trace->events[size_t(s.event)]).find("nccl") != std::string::npos;
    QCOMPARE(nccl, int64_t(5));
    QVERIFY(std::fabs(c.measuredStepS - 615601e-6) < 1e-9);
    QVERIFY(comparisonText(c).find("GEMM") != std::string::npos);
}

QTEST_GUILESS_MAIN(TestKernelTable)
#include "tst_kerneltable.moc"
