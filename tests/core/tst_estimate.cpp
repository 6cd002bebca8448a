// SPDX-License-Identifier: MIT
// Step-time estimate: GPU presets against their datasheets, the ring cost of collectives, the roofline of
// compute, communicator placement, pipeline bubbles against Narayanan et al. 2021 §2.2, and the exposed gradient
// reduction of pure data parallelism computed by hand.
#include "config/configloader.h"
#include "estimate/chrometrace.h"
#include "estimate/costmodel.h"
#include "estimate/gpuspec.h"
#include "estimate/kernelmodel.h"
#include "estimate/stepestimate.h"
#include "model/modelcost.h"
#include "synthesis/synthesis.h"
#include "synthhelpers.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <cstring>
#include <map>
#include <stdexcept>

using namespace stagecraft;
using namespace stagecraft::test;

namespace {

/// A GPU whose compute time is exactly FLOPs / peak: memory traffic costs nothing.
GpuSpec computeOnlyGpu(double peakFlops)
{
    GpuSpec g;
    g.name = "test-gpu";
    g.fp32Flops = g.bf16Flops = g.fp16Flops = peakFlops;
    g.hbmBytes = int64_t(1) << 50;
    g.hbmBytesPerS = 1e30;
    return g;
}

StepEstimate estimate(const SynthesisResult& r, const GpuSpec& gpu, const EstimateOptions& options)
{
    StepEstimate e;
    std::string error;
    if (!estimateStep(r, gpu, options, e, error))
        qFatal("estimate failed: %s", error.c_str());
    return e;
}

bool near(double actual, double expected, double relative)
{
    return std::abs(actual - expected) <= relative * std::abs(expected);
}

QString mismatch(double actual, double expected)
{
    return QStringLiteral("actual %1 expected %2").arg(actual, 0, 'g', 10).arg(expected, 0, 'g', 10);
}

/// The time of `node` on the example rank of `program` computed by hand from the cost model's formulas
/// (costmodel.h: flat roofline compute at options.flatComputeEfficiency; ring collectives in the nccl-tests
/// bus-bandwidth convention at the link's bandwidth times its efficiency, ceil(log2 n) latency steps; p2p =
/// bytes / B + one latency), with every group and peer inside one node (`intra`) or each member in its own node.
double handNodeTime(
    const SynthesisResult& r, const ProgramNode& node, const GpuSpec& gpu, const EstimateOptions& options, bool intra)
{
    const ClusterConfig& cl = r.config.cluster;
    const double peak = gpu.bf16Flops; // tiny trains in bf16
    const double bandwidth = intra ? cl.intraNodeBandwidthGbps * 1e9 * cl.intraNodeEfficiency
                                   : cl.interNodeBandwidthGbps * 1e9 * cl.interNodeEfficiency;
    const double latency = (intra ? cl.intraNodeLatencyUs : cl.interNodeLatencyUs) * 1e-6;
    const double bytes = static_cast<double>(node.bytes);
    switch (node.kind) {
    case NodeKind::Compute:
        return std::max(
            static_cast<double>(node.flops) / (peak * options.flatComputeEfficiency), bytes / gpu.hbmBytesPerS);
    case NodeKind::Collective: {
        double n = 1; // members of the group: the product of the degrees of the mask's axes
        for (int a = 0; a < kAxisCount; ++a)
            if (node.mask & (1u << a))
                n *= static_cast<double>(r.mesh().degree(static_cast<Axis>(a)));
        if (n <= 1)
            return 0;
        const double steps = std::ceil(std::log2(n));
        switch (node.collective) {
        case CollectiveType::AllReduce:
            return 2 * (n - 1) / n * bytes / bandwidth + steps * latency;
        case CollectiveType::AllGather:
            return (n - 1) * bytes / bandwidth + steps * latency;
        case CollectiveType::ReduceScatter:
        case CollectiveType::AllToAll:
            return (n - 1) / n * bytes / bandwidth + steps * latency;
        }
        return -1;
    }
    case NodeKind::Send:
        return bytes / bandwidth + latency;
    case NodeKind::Recv:
        return 0;
    }
    return -1;
}

bool closeTo(double actual, double expected)
{
    return std::abs(actual - expected) <= 1e-9 * std::abs(expected) + 1e-18;
}

} // namespace

class TestEstimate : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void gpuPresets_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<double>("bf16Tflops");
        QTest::addColumn<double>("fp32Tflops");
        QTest::addColumn<double>("fp8Tflops");
        QTest::addColumn<double>("hbmGib");
        QTest::addColumn<double>("hbmGBps");
        // NVIDIA A100 datasheet, A100 80GB SXM: BF16 312 TFLOPS dense (624 sparse), FP32 19.5, no FP8,
        // 80 GB HBM2e, 2,039 GB/s.
        QTest::newRow("a100-80gb") << QStringLiteral("a100-80gb") << 312.0 << 19.5 << 0.0 << 80.0 << 2039.0;
        // NVIDIA H100 datasheet, H100 SXM: BF16 1,979 TFLOPS with sparsity -> 989.5 dense; FP32 67; FP8 3,958
        // sparse -> 1,979 dense; 80 GB HBM3, 3.35 TB/s.
        QTest::newRow("h100-sxm") << QStringLiteral("h100-sxm") << 989.5 << 67.0 << 1979.0 << 80.0 << 3350.0;
        // NVIDIA H200 datasheet: the H100's compute, 141 GB HBM3e, 4.8 TB/s.
        QTest::newRow("h200") << QStringLiteral("h200") << 989.5 << 67.0 << 1979.0 << 141.0 << 4800.0;
        // NVIDIA HGX B200 per GPU: BF16 4.5 PFLOPS sparse -> 2.25 dense, FP8 9 -> 4.5, FP32 75 TFLOPS;
        // DGX B200: 1,440 GB and 64 TB/s for 8 GPUs -> 180 GB, 8 TB/s.
        QTest::newRow("b200") << QStringLiteral("b200") << 2250.0 << 75.0 << 4500.0 << 180.0 << 8000.0;
    }

    void gpuPresets()
    {
        QFETCH(QString, name);
        QFETCH(double, bf16Tflops);
        QFETCH(double, fp32Tflops);
        QFETCH(double, fp8Tflops);
        QFETCH(double, hbmGib);
        QFETCH(double, hbmGBps);
        const std::optional<GpuSpec> gpu = gpuPreset(name.toStdString());
        QVERIFY(gpu);
        QCOMPARE(gpu->name, name.toStdString());
        QVERIFY(!gpu->summary.empty());
        QCOMPARE(gpu->peakFlops(Precision::Bf16), bf16Tflops * 1e12);
        QCOMPARE(gpu->peakFlops(Precision::Fp16), bf16Tflops * 1e12); // fp16 and bf16 tensor cores match
        QCOMPARE(gpu->peakFlops(Precision::Fp32), fp32Tflops * 1e12);
        QCOMPARE(gpu->fp8Flops, fp8Tflops * 1e12);
        QCOMPARE(gpu->hbmBytes, static_cast<int64_t>(hbmGib * 1073741824.0));
        QCOMPARE(gpu->hbmBytesPerS, hbmGBps * 1e9);
    }

    void unknownGpu()
    {
        QVERIFY(!gpuPreset("h100"));
        const std::vector<std::string> names = gpuPresetNames();
        QCOMPARE(names, (std::vector<std::string> { "a100-80gb", "b200", "h100-sxm", "h200" }));
        Config config;
        config.cluster.gpu = "v100";
        std::string error;
        QVERIFY(!gpuForConfig(config, error));
        QCOMPARE(error, std::string("unknown GPU \"v100\" (cluster.gpu); known GPUs: a100-80gb, b200, h100-sxm, h200"));
    }

    void malformedGpuSpec_data()
    {
        QTest::addColumn<QString>("yaml");
        QTest::addColumn<QString>("error");
        QTest::newRow("no bf16") << QStringLiteral(
            "name: x\ndense_tflops: {fp32: 1, fp16: 2}\nhbm_gib: 1\nhbm_bandwidth_gbps: 1\n")
                                 << QStringLiteral("missing key bf16");
        QTest::newRow("unknown dtype")
            << QStringLiteral("name: x\ndense_tflops: {fp32: 1, bf16: 2, fp16: 2, "
                              "int4: 9}\nhbm_gib: 1\nhbm_bandwidth_gbps: 1\n")
            << QStringLiteral("dense_tflops.int4: unknown datatype (expected fp32, tf32, bf16, fp16, fp8)");
        QTest::newRow("text") << QStringLiteral(
            "name: x\ndense_tflops: {fp32: 1, bf16: fast, fp16: 2}\nhbm_gib: 1\nhbm_bandwidth_gbps: 1\n")
                              << QStringLiteral("bf16: expected a number");
    }

    void malformedGpuSpec()
    {
        QFETCH(QString, yaml);
        QFETCH(QString, error);
        std::string message;
        QVERIFY(!parseGpuSpec(yaml.toStdString(), message));
        QCOMPARE(QString::fromStdString(message), error);
    }

    void collectiveCost_data()
    {
        QTest::addColumn<int>("type");
        QTest::addColumn<qint64>("bytes");
        QTest::addColumn<qint64>("n");
        QTest::addColumn<double>("expected");
        // Ring algorithms (Thakur et al. 2005; the nccl-tests bus-bandwidth convention): per GPU, an all-reduce of
        // S bytes moves 2(n-1)/n * S, an all-gather or reduce-scatter (n-1)/n of the full buffer, an all-to-all
        // (n-1)/n * S. B = 100 GB/s, latency 7 us.
        const double b = 100e9, lat = 7e-6;
        const qint64 s = 1 << 30;
        for (qint64 n : { 2, 4, 8, 64 }) {
            const double k = double(n - 1) / double(n);
            const std::string suffix = "-n" + std::to_string(n);
            QTest::newRow(("all_reduce" + suffix).c_str())
                << int(CollectiveType::AllReduce) << s << n << 2 * k * s / b + lat;
            // comm_size of an all-gather is the input shard: the full buffer is n * S.
            QTest::newRow(("all_gather" + suffix).c_str())
                << int(CollectiveType::AllGather) << s << n << k * double(n * s) / b + lat;
            QTest::newRow(("reduce_scatter" + suffix).c_str())
                << int(CollectiveType::ReduceScatter) << s << n << k * s / b + lat;
            QTest::newRow(("all_to_all" + suffix).c_str())
                << int(CollectiveType::AllToAll) << s << n << k * s / b + lat;
        }
        QTest::newRow("group of one") << int(CollectiveType::AllReduce) << s << qint64(1) << 0.0;
    }

    void collectiveCost()
    {
        QFETCH(int, type);
        QFETCH(qint64, bytes);
        QFETCH(qint64, n);
        QFETCH(double, expected);
        const double actual = collectiveTimeS(static_cast<CollectiveType>(type), bytes, n, 100e9, 7e-6);
        QVERIFY2(near(actual, expected, 1e-12), qPrintable(mismatch(actual, expected)));
    }

    void roofline_data()
    {
        QTest::addColumn<qint64>("flops");
        QTest::addColumn<qint64>("bytes");
        QTest::addColumn<double>("expected");
        // Williams et al. 2009 roofline: time = max(FLOPs / (peak * efficiency), bytes / bandwidth). H100 SXM
        // bf16: 989.5e12 FLOP/s at the best measured GEMM's 0.801 of it (792.1 of 989 TFLOPS, the maximum
        // achievable matmul table of Bekman's "Machine Learning Engineering", as resources/gpus/h100-sxm.yaml
        // cites), and 3.35e12 B/s at the preset's assumed 0.85 of it for memory-bound kernels.
        const double flopsRate = 989.5e12 * 0.801, bytesRate = 3.35e12 * 0.85;
        QTest::newRow("matmul 8192^3") << qint64(2) * 8192 * 8192 * 8192 << qint64(3) * 8192 * 8192 * 2
                                       << 2.0 * 8192 * 8192 * 8192 / flopsRate;
        QTest::newRow("elementwise 1 GiB") << qint64(1) << (qint64(1) << 30) << double(int64_t(1) << 30) / bytesRate;
    }

    void roofline()
    {
        QFETCH(qint64, flops);
        QFETCH(qint64, bytes);
        QFETCH(double, expected);
        Config config;
        config.training.precision = Precision::Bf16;
        const HardwareRates rates = hardwareRates(config, *gpuPreset("h100-sxm"), EstimateOptions {});
        const double actual = computeTimeS(flops, bytes, rates);
        QVERIFY2(near(actual, expected, 1e-12), qPrintable(mismatch(actual, expected)));
    }

    void placement_data()
    {
        QTest::addColumn<int>("tp");
        QTest::addColumn<int>("dp");
        QTest::addColumn<int>("gpusPerNode");
        QTest::addColumn<bool>("tpIntra");
        QTest::addColumn<bool>("dpIntra");
        // Rank order [tp, cp, ep, dp, pp]: rank = tp_coord + tp * dp_coord. Rank 0's tp group is ranks 0..tp-1,
        // its dp group 0, tp, 2tp, ... (tp*(dp-1)); a group is intra-node when all members share rank / gpn.
        QTest::newRow("tp8 in an 8-GPU node") << 8 << 2 << 8 << true << false;
        QTest::newRow("tp8 over 4-GPU nodes") << 8 << 2 << 4 << false << false;
        QTest::newRow("tp2 dp4 in 8") << 2 << 4 << 8 << true << true;
        QTest::newRow("tp2 dp4 in 4") << 2 << 4 << 4 << true << false;
    }

    void placement()
    {
        QFETCH(int, tp);
        QFETCH(int, dp);
        QFETCH(int, gpusPerNode);
        QFETCH(bool, tpIntra);
        QFETCH(bool, dpIntra);
        ParallelismConfig p;
        p.tp = tp;
        p.dp = dp;
        const Mesh mesh(p);
        const CommPlacement placement(mesh, RankId { 0 }, gpusPerNode);
        QCOMPARE(placement.intraNode(axisBit(Axis::Tp)), tpIntra);
        QCOMPARE(placement.intraNode(kDpMask), dpIntra);
        QCOMPARE(placement.groupSize(kDpMask), int64_t(dp));
    }

    void clusterPresets_data()
    {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<QString>("gpu");
        QTest::addColumn<qint64>("perNode");
        QTest::addColumn<double>("intra");
        QTest::addColumn<double>("inter");
        QTest::addColumn<double>("intraEfficiency");
        // Per GPU and direction: NVLink 3 600 GB/s bidirectional (A100 datasheet) / 2; 8 HDR 200 Gb/s NICs per
        // DGX A100 (datasheet), one per GPU = 25 GB/s; all_reduce_perf reaches 208 of 300 GB/s on 8 NVLink A100s
        // (NVIDIA/nccl-tests issue #178): 0.69.
        QTest::newRow("dgx-a100") << QStringLiteral("dgx-a100") << QStringLiteral("a100-80gb") << qint64(8) << 300.0
                                  << 25.0 << 0.69;
        // NVLink 4 900 GB/s bidirectional (H100 datasheet) / 2; 8 NDR 400 Gb/s NICs (DGX H100 datasheet).
        QTest::newRow("dgx-h100") << QStringLiteral("dgx-h100") << QStringLiteral("h100-sxm") << qint64(8) << 450.0
                                  << 50.0 << 0.8;
        QTest::newRow("dgx-h200") << QStringLiteral("dgx-h200") << QStringLiteral("h200") << qint64(8) << 450.0 << 50.0
                                  << 0.8;
        // 72 GPUs in one NVLink 5 domain, 1.8 TB/s bidirectional per GPU (GB200 NVL72 datasheet) / 2.
        QTest::newRow("gb200-nvl72") << QStringLiteral("gb200-nvl72") << QStringLiteral("b200") << qint64(72) << 900.0
                                     << 50.0 << 0.8;
    }

    void clusterPresets()
    {
        QFETCH(QString, preset);
        QFETCH(QString, gpu);
        QFETCH(qint64, perNode);
        QFETCH(double, intra);
        QFETCH(double, inter);
        QFETCH(double, intraEfficiency);
        // A preset sets every cluster key; a key given with it overrides its figure and only that. (The
        // llama3-8b preset's cluster section names only its preset.)
        const ConfigResult loaded = loadConfigOrPreset(
            "llama3-8b", { "cluster.preset=" + preset.toStdString(), "cluster.inter_node_efficiency=0.5" });
        QVERIFY(loaded.config);
        const ClusterConfig& c = loaded.config->cluster;
        QCOMPARE(QString::fromStdString(c.preset), preset);
        QCOMPARE(QString::fromStdString(c.gpu), gpu);
        QCOMPARE(c.gpusPerNode, perNode);
        QCOMPARE(c.intraNodeBandwidthGbps, intra);
        QCOMPARE(c.interNodeBandwidthGbps, inter);
        QCOMPARE(c.intraNodeEfficiency, intraEfficiency);
        QCOMPARE(c.interNodeEfficiency, 0.5);
    }

    void unknownClusterPreset()
    {
        const ConfigResult loaded = loadConfigText(
            "model:\n  preset: tiny\ntraining:\n  global_batch: 8\ncluster:\n  preset: dgx-a10\n", "c.yaml");
        QVERIFY(!loaded.config);
        QVERIFY(!loaded.diagnostics.empty());
        QCOMPARE(QString::fromStdString(loaded.diagnostics.front().toString()),
            QStringLiteral("c.yaml:6:11: error: cluster.preset: unknown cluster preset \"dgx-a10\"; known presets: "
                           "dgx-a100, dgx-h100, dgx-h200, gb200-nvl72; did you mean 'dgx-a100'?"));
    }

    void gemmEfficiency_data()
    {
        QTest::addColumn<qint64>("m");
        QTest::addColumn<qint64>("n");
        QTest::addColumn<qint64>("k");
        QTest::addColumn<qint64>("batch");
        QTest::addColumn<double>("expected");
        // A100 (108 SMs, 128-wide tiles, K0 = 64, best GEMM 0.859 of peak: resources/gpus/a100-80gb.yaml). By
        // NVIDIA's "Matrix Multiplication Background User's Guide": tiles = ceil(m/128) ceil(n/128) batch; the
        // last wave runs tiles mod 108 of 108 SMs; a partly filled tile wastes its empty part.
        // The shape the best GEMM was measured at: 54 x 128 = 6912 tiles = 64 full waves, k = 2048: the maximum.
        QTest::newRow("6912x16384x2048") << qint64(6912) << qint64(16384) << qint64(2048) << qint64(1) << 0.859;
        // 16 x 18 = 288 tiles: 3 waves of 108 hold 324, 288/324 = 0.889 used; k = 2304 > 2048: no depth loss.
        QTest::newRow("2048x2304x2304") << qint64(2048) << qint64(2304) << qint64(2304) << qint64(1)
                                        << 0.859 * 288.0 / 324.0;
        // Attention scores of 24 heads, head dim 96: 16 x 16 x 24 = 6144 tiles (56.9 waves: 6144/(57*108));
        // depth (96/160) / (2048/2112).
        QTest::newRow("scores 24x2048x2048x96") << qint64(2048) << qint64(2048) << qint64(96) << qint64(24)
                                                << 0.859 * 6144.0 / (57.0 * 108.0) * (96.0 / 160.0) / (2048.0 / 2112.0);
        // A 200 x 200 output fills 40,000 of 4 tiles' 65,536 elements; 4 tiles on 108 SMs split k = 8192 into
        // floor(108 / 4) = 27 parts (at most k / (4 * 65) = 31): 108 units in one wave.
        QTest::newRow("200x200x8192") << qint64(200) << qint64(200) << qint64(8192) << qint64(1)
                                      << 0.859 * 40000.0 / 65536.0;
    }

    void gemmEfficiency()
    {
        QFETCH(qint64, m);
        QFETCH(qint64, n);
        QFETCH(qint64, k);
        QFETCH(qint64, batch);
        QFETCH(double, expected);
        const GpuSpec gpu = *gpuPreset("a100-80gb");
        QCOMPARE(gpu.smCount, int64_t(108));
        const double actual = stagecraft::gemmEfficiency(GemmShape { m, n, k, batch }, gpu, gpu.gemmEfficiency);
        QVERIFY2(near(actual, expected, 1e-12), qPrintable(mismatch(actual, expected)));
    }

    void fp8GemmRates()
    {
        // FP8 training on an H100 SXM: the linear layers' GEMMs (forward and backward) run at the datasheet's FP8
        // dense peak, 1,979 TFLOPS, times the FP8 GEMM efficiency 0.779 (1,541 TFLOPS measured on H800 SXM,
        // TileLang benchmark/matmul_fp8/README.md); the output head, the router and flash attention stay at the
        // BF16 figures (989.5 TFLOPS, 0.801). The shape factor is the same for both precisions, so an FP8 GEMM's
        // rate is the BF16 one times (1979 * 0.779) / (989.5 * 0.801).
        const GpuSpec gpu = *gpuPreset("h100-sxm");
        QCOMPARE(gpu.fp8Flops, 1979e12);
        QCOMPARE(gpu.gemmFp8Efficiency, 0.779);
        auto plan = [](const char* precision) {
            return synth("llama3-8b",
                { "model.layers=2", "training.global_batch=1", "training.micro_batch=1",
                    std::string("training.precision=") + precision, "parallelism.dp=1", "parallelism.tp=1",
                    "parallelism.pp=1", "parallelism.cp=1", "parallelism.zero=0", "parallelism.schedule=1f1b",
                    "parallelism.virtual_stages=1", "parallelism.sequence_parallel=false" });
        };
        auto bf16 = plan("bf16"), fp8 = plan("fp8");
        QVERIFY(bf16 && fp8);
        const HardwareRates rb = withOpRates(hardwareRates(bf16->config, gpu, {}), *bf16->plan, gpu, {});
        const HardwareRates rf = withOpRates(hardwareRates(fp8->config, gpu, {}), *fp8->plan, gpu, {});
        QCOMPARE(rf.peakFlops, 989.5e12); // MFU and the ops outside FP8 GEMMs count against the BF16 peak
        const ModelGraph& g = *fp8->plan->graph;
        int fp8Ops = 0, bf16Ops = 0;
        for (size_t i = 0; i < g.ops.size(); ++i) {
            const Op& op = g.ops[i];
            if (op.kind != OpKind::MatMul && op.kind != OpKind::FlashAttention)
                continue;
            const double ratio = (*rf.opFlopRate)[i] / (*rb.opFlopRate)[i];
            const bool linear = op.kind == OpKind::MatMul && op.region != Region::Vocab && op.region != Region::Router;
            const double expected = linear ? (1979.0 * 0.779) / (989.5 * 0.801) : 1.0;
            QVERIFY2(near(ratio, expected, 1e-12),
                qPrintable(QString::fromStdString(op.name) + QStringLiteral(": ") + mismatch(ratio, expected)));
            ++(linear ? fp8Ops : bf16Ops);
        }
        // Per layer 7 linear layers (q, k, v, o, gate, up, down), each a forward and two backward GEMMs.
        QCOMPARE(fp8Ops, 2 * 7 * 3);
        QVERIFY(bf16Ops > 0); // the output head and flash attention
        // A GPU without FP8 tensor cores has no rate for fp8 training.
        const GpuSpec a100 = *gpuPreset("a100-80gb");
        QCOMPARE(hardwareRates(fp8->config, a100, {}).peakFlops, 0.0);
    }

    void hierarchicalCollective_data()
    {
        QTest::addColumn<int>("type");
        QTest::addColumn<qint64>("n");
        QTest::addColumn<qint64>("perNode");
        QTest::addColumn<double>("expected");
        // S = 1 GiB, NVLink 100 GB/s, network 10 GB/s (achieved), 2 us / 9 us a step. 16 GPUs as 2 nodes of 8:
        // all-reduce = reduce-scatter in the node (7/8 S over NVLink) + all-reduce of S/8 per rail across the 2
        // nodes (2 * 1/2 * S/8 over the NIC) + all-gather in the node (7/8 S); latency 3 + 1 steps.
        const double s = double(1 << 30), bi = 100e9, be = 10e9, li = 2e-6, le = 9e-6;
        QTest::newRow("all-reduce 2x8") << int(CollectiveType::AllReduce) << qint64(16) << qint64(8)
                                        << 2 * 7.0 / 8 * s / bi + 2 * 0.5 * (s / 8) / be + 3 * li + le;
        QTest::newRow("reduce-scatter 2x8") << int(CollectiveType::ReduceScatter) << qint64(16) << qint64(8)
                                            << 7.0 / 8 * s / bi + 0.5 * (s / 8) / be + 3 * li + le;
        // All-gather of a shard S: across the 2 nodes first (S over the NIC), then 2 S among the 8 (7 * 2 S).
        QTest::newRow("all-gather 2x8") << int(CollectiveType::AllGather) << qint64(16) << qint64(8)
                                        << s / be + 7 * 2 * s / bi + 3 * li + le;
        // All-to-all: 8/16 of S leaves the node over the NIC, 7/16 stays on NVLink, at the same time.
        QTest::newRow("all-to-all 2x8") << int(CollectiveType::AllToAll) << qint64(16) << qint64(8)
                                        << std::max(8.0 / 16 * s / be, 7.0 / 16 * s / bi) + 3 * li + le;
        // One GPU per node: the ring over the network; all in one node: the ring over NVLink.
        QTest::newRow("all-reduce 4x1") << int(CollectiveType::AllReduce) << qint64(4) << qint64(1)
                                        << 2 * 3.0 / 4 * s / be + 2 * le;
        QTest::newRow("all-reduce 1x8") << int(CollectiveType::AllReduce) << qint64(8) << qint64(8)
                                        << 2 * 7.0 / 8 * s / bi + 3 * li;
    }

    void hierarchicalCollective()
    {
        QFETCH(int, type);
        QFETCH(qint64, n);
        QFETCH(qint64, perNode);
        QFETCH(double, expected);
        HardwareRates rates;
        rates.intraNodeBytesPerS = 100e9;
        rates.interNodeBytesPerS = 10e9;
        rates.intraNodeLatencyS = 2e-6;
        rates.interNodeLatencyS = 9e-6;
        const double actual =
            hierarchicalCollectiveTimeS(static_cast<CollectiveType>(type), int64_t(1) << 30, n, perNode, rates);
        QVERIFY2(near(actual, expected, 1e-12), qPrintable(mismatch(actual, expected)));
    }

    void overlapSwitches_data()
    {
        QTest::addColumn<QStringList>("plan");
        QTest::addColumn<QString>("overlap");
        // Each switch lets communication run behind compute, so turning it on never lengthens the iteration and,
        // on a plan where that communication is on the critical path, shortens it.
        // Data parallelism across nodes, a bucket per layer: the reduction of the early layers' gradients can run
        // while the later layers' backward computes.
        QTest::newRow("overlap_grad_reduce")
            << QStringList { QStringLiteral("parallelism.dp=4"), QStringLiteral("model.layers=8"),
                   QStringLiteral("training.global_batch=4"), QStringLiteral("cluster.gpus_per_node=1") }
            << QStringLiteral("parallelism.overlap_grad_reduce");
        // ZeRO-1 gathers the updated parameters after the optimizer; overlapped, the next forward hides them.
        QTest::newRow("overlap_param_gather")
            << QStringList { QStringLiteral("parallelism.dp=4"), QStringLiteral("parallelism.zero=1"),
                   QStringLiteral("training.global_batch=4"), QStringLiteral("cluster.gpus_per_node=1") }
            << QStringLiteral("parallelism.overlap_param_gather");
        QTest::newRow("tp_comm_overlap") << QStringList { QStringLiteral("parallelism.tp=4"),
            QStringLiteral("training.global_batch=2"), QStringLiteral("cluster.gpus_per_node=1") }
                                         << QStringLiteral("parallelism.tp_comm_overlap");
        QTest::newRow("overlap_p2p_comm") << QStringList { QStringLiteral("parallelism.pp=2"),
            QStringLiteral("training.global_batch=8"), QStringLiteral("cluster.gpus_per_node=1") }
                                          << QStringLiteral("parallelism.overlap_p2p_comm");
    }

    void overlapSwitches()
    {
        QFETCH(QStringList, plan);
        QFETCH(QString, overlap);
        const std::vector<std::string> base = toOverrides(plan) + std::vector<std::string> { "training.micro_batch=1" };
        const GpuSpec gpu = *gpuPreset("h100-sxm");
        const StepEstimate off =
            estimate(*synth("tiny", base + std::vector<std::string> { overlap.toStdString() + "=false" }), gpu,
                EstimateOptions {});
        const StepEstimate on =
            estimate(*synth("tiny", base + std::vector<std::string> { overlap.toStdString() + "=true" }), gpu,
                EstimateOptions {});
        QVERIFY2(on.iterationTimeS < off.iterationTimeS, qPrintable(mismatch(on.iterationTimeS, off.iterationTimeS)));
        // The same kernels run either way.
        QVERIFY(near(on.classes[0].flops, off.classes[0].flops, 1e-12));
    }

    void unfusedGradientAccumulation()
    {
        // Without gradient-accumulation fusion (Megatron-LM 2021), every micro-batch adds each weight gradient to
        // the main gradient in a kernel of its own: it reads the new gradient and the main gradient and writes
        // the main gradient, 3 x 4 bytes per parameter at fp32, at HBM speed (3.35 TB/s x 0.85 on the H100).
        const std::vector<std::string> base { "training.global_batch=4", "training.micro_batch=1" };
        auto fused = synth("tiny", base + std::vector<std::string> { "training.gradient_accumulation_fusion=true" });
        auto unfused = synth("tiny", base + std::vector<std::string> { "training.gradient_accumulation_fusion=false" });
        const GpuSpec gpu = *gpuPreset("h100-sxm");
        const double extra = estimate(*unfused, gpu, EstimateOptions {}).classes[0].computeTimeS
            - estimate(*fused, gpu, EstimateOptions {}).classes[0].computeTimeS;
        const double params = 1'705'216.0; // the tiny Llama's parameters (dataParallelExposedReduction)
        const double expected = 4 * 3 * 4 * params / (3.35e12 * 0.85);
        QVERIFY2(near(extra, expected, 1e-9), qPrintable(mismatch(extra, expected)));
    }

    void uncovered_data()
    {
        QTest::addColumn<QVector<double>>("a");
        QTest::addColumn<QVector<double>>("b");
        QTest::addColumn<double>("expected");
        // Interval arithmetic: |A \ B| for lists of [start, end) pairs.
        QTest::newRow("disjoint") << QVector<double> { 0, 1 } << QVector<double> { 2, 3 } << 1.0;
        QTest::newRow("covered") << QVector<double> { 1, 2 } << QVector<double> { 0, 3 } << 0.0;
        QTest::newRow("partial both sides") << QVector<double> { 0, 4, 6, 9 } << QVector<double> { 1, 2, 3, 7 } << 4.0;
        QTest::newRow("b spans two") << QVector<double> { 0, 2, 3, 5 } << QVector<double> { 1, 4 } << 2.0;
    }

    void uncovered()
    {
        QFETCH(QVector<double>, a);
        QFETCH(QVector<double>, b);
        QFETCH(double, expected);
        auto pairs = [](const QVector<double>& v) {
            std::vector<std::pair<double, double>> out;
            for (int i = 0; i + 1 < v.size(); i += 2)
                out.emplace_back(v[i], v[i + 1]);
            return out;
        };
        QCOMPARE(uncoveredTime(pairs(a), pairs(b)), expected);
    }

    void pipelineBubble_data()
    {
        QTest::addColumn<QString>("schedule");
        QTest::addColumn<int>("p");
        QTest::addColumn<int>("m");
        QTest::addColumn<int>("v");
        QTest::addColumn<double>("expected");
        // Narayanan et al. 2021 §2.2: with equal stages, GPipe and 1F1B idle (p-1)(tf+tb) of an iteration of
        // (m+p-1)(tf+tb), a fraction (p-1)/(m+p-1); the interleaved schedule with v chunks per stage shrinks the
        // bubble to (p-1)/v (tf+tb), a fraction (p-1)/(v*m+p-1).
        for (auto [p, m] : { std::pair { 2, 4 }, std::pair { 4, 8 }, std::pair { 4, 16 }, std::pair { 8, 8 } }) {
            const double bubble = double(p - 1) / double(m + p - 1);
            const std::string tag = "p" + std::to_string(p) + "-m" + std::to_string(m);
            QTest::newRow(("gpipe-" + tag).c_str()) << QStringLiteral("gpipe") << p << m << 1 << bubble;
            QTest::newRow(("1f1b-" + tag).c_str()) << QStringLiteral("1f1b") << p << m << 1 << bubble;
        }
        for (auto [p, m, v] : { std::tuple { 2, 4, 2 }, std::tuple { 4, 8, 2 }, std::tuple { 4, 8, 4 } })
            QTest::newRow(qPrintable(QStringLiteral("interleaved-p%1-m%2-v%3").arg(p).arg(m).arg(v)))
                << QStringLiteral("interleaved") << p << m << v << double(p - 1) / double(v * m + p - 1);
    }

    void pipelineBubble()
    {
        QFETCH(QString, schedule);
        QFETCH(int, p);
        QFETCH(int, m);
        QFETCH(int, v);
        QFETCH(double, expected);
        // Equal work per chunk: 8 decoder layers per chunk dominate; the stage-specific extras are small by
        // construction: the LM head over a 128-token vocabulary costs 2*H*V = 65,536 FLOPs per token against a
        // layer's ~6.8e6 (SwiGLU FFN 4096: 6*H*F = 6.3e6, attention projections 2*H*(2H + 2*kv*d) = 0.39e6), under
        // 0.15 % of a chunk; the embedding is a gather (no FLOPs). Communication is made negligible (1e12 GB/s, no
        // latency) and memory traffic free, so each node costs FLOPs / peak and stages are equal to within that.
        const int layers = 8 * p * v;
        auto r = synth("tiny",
            { "model.layers=" + std::to_string(layers), "model.vocab=128", "model.ffn_hidden=4096", "model.seq_len=512",
                "training.global_batch=" + std::to_string(m), "training.micro_batch=1",
                "parallelism.pp=" + std::to_string(p), "parallelism.schedule=" + schedule.toStdString(),
                "parallelism.virtual_stages=" + std::to_string(v), "cluster.intra_node_bandwidth_gbps=1e12",
                "cluster.inter_node_bandwidth_gbps=1e12", "cluster.intra_node_latency_us=0",
                "cluster.inter_node_latency_us=0" });
        EstimateOptions options;
        options.flatComputeEfficiency = 1;
        const StepEstimate e = estimate(*r, computeOnlyGpu(1e15), options);
        QCOMPARE(int(e.classes.size()), p);
        for (const ClassEstimate& c : e.classes)
            QVERIFY2(near(c.bubbleFraction, expected, 0.01),
                qPrintable(QStringLiteral("stage %1: ").arg(c.stage) + mismatch(c.bubbleFraction, expected)));
    }

    void splitBackwardBubble_data()
    {
        QTest::addColumn<QString>("schedule");
        QTest::addColumn<int>("p");
        QTest::addColumn<int>("m");
        // deepseek-ai/DualPipe README, "Pipeline Bubbles and Memory Usage Comparison" (F: a forward chunk, B: a
        // full backward chunk, W: its weight part, F&B: a forward and a backward chunk overlapped):
        //   1F1B (PP-1)(F+B); ZB1P (PP-1)(F+B-2W); DualPipe and DualPipeV (PP/2-1)(F&B+B-3W).
        // The table compares the methods on one model cut into PP chunks: DualPipe runs it on PP ranks (two chunks
        // each, 2x the parameters), DualPipeV on PP/2 ranks (two chunks each, 1x), so with p ranks DualPipeV's
        // bubble is (p-1)(F&B+B-3W) in its own chunk's times. The formulas take the input-gradient part B - W to
        // cost F (the zero-bubble paper's T_F = T_B = T_W), as a layer of GEMMs does; the layers here are nearly
        // all GEMM (sequence 128: attention is 1 % of a layer's FLOPs).
        // The schedules' own assertions: DualPipe needs an even m >= 2 PP, DualPipeV m >= 2 PP.
        for (auto [p, m] :
            { std::pair { 4, 8 }, std::pair { 4, 10 }, std::pair { 4, 20 }, std::pair { 8, 16 }, std::pair { 8, 20 } })
            for (const char* schedule : { "1f1b", "zb1p", "dualpipe", "dualpipev" })
                QTest::newRow(qPrintable(QStringLiteral("%1-p%2-m%3").arg(QLatin1String(schedule)).arg(p).arg(m)))
                    << QString::fromLatin1(schedule) << p << m;
    }

    void splitBackwardBubble()
    {
        QFETCH(QString, schedule);
        QFETCH(int, p);
        QFETCH(int, m);
        // As pipelineBubble: communication and memory traffic free, so a node costs FLOPs / peak; 8 decoder layers
        // of hidden 1024 and FFN 4096 per chunk over 64 positions, nearly all GEMM (B - W is F to 0.3 %), and a head
        // of 16 words. F, B and W are the times of one chunk's forward, backward and weight-gradient ops, read off
        // the programs' nodes. DualPipe's pairs wait for the inputs of both passes (dualpipe.py, as the programs do:
        // without that wait the bubble comes out at half the table's).
        const bool dualV = schedule == QLatin1String("dualpipev");
        const int layers = 8 * p * (dualV ? 2 : 1); // DualPipeV cuts the model into 2 PP chunks
        auto r = synth("tiny",
            { "model.layers=" + std::to_string(layers), "model.vocab=16", "model.hidden=1024", "model.ffn_hidden=4096",
                "model.seq_len=64", "training.global_batch=" + std::to_string(m), "training.micro_batch=1",
                "parallelism.pp=" + std::to_string(p), "parallelism.schedule=" + schedule.toStdString(),
                "parallelism.virtual_stages=1", "cluster.intra_node_bandwidth_gbps=1e12",
                "cluster.inter_node_bandwidth_gbps=1e12", "cluster.intra_node_latency_us=0",
                "cluster.inter_node_latency_us=0" });
        QVERIFY(r);
        const double peak = 1e15;
        EstimateOptions options;
        options.flatComputeEfficiency = 1;
        const StepEstimate e = estimate(*r, computeOnlyGpu(peak), options);
        QCOMPARE(int(e.classes.size()), p);
        const ModelGraph& g = *r->plan->graph;
        // A middle stage's chunk (stage 1, its first chunk, micro-batch 0): no embedding, no head.
        const ClassProgram& middle = r->classes[1];
        double f = 0, b = 0, w = 0;
        for (const ProgramNode& n : middle.nodes) {
            if (n.kind != NodeKind::Compute || n.microBatch != 0 || n.chunk != 0 || n.op < 0)
                continue;
            const double t = static_cast<double>(n.flops) / peak;
            if (n.pass == Pass::Forward && !n.recompute)
                f += t;
            else if (n.pass == Pass::Backward) {
                b += t;
                if (g.writesOnlyWeightGradients(g.ops[static_cast<size_t>(n.op)]))
                    w += t;
            }
        }
        QVERIFY(f > 0 && b > f && w > 0 && w < b);
        double expected = 0;
        if (schedule == QLatin1String("1f1b"))
            expected = (p - 1) * (f + b);
        else if (schedule == QLatin1String("zb1p"))
            expected = (p - 1) * (f + b - 2 * w);
        else // one compute stream: an overlapped pair computes F + B, the overlap hides its all-to-all only
            expected = (dualV ? p - 1 : p / 2 - 1) * ((f + b) + b - 3 * w);
        // The bubble as the table counts it: the pipeline period (the estimate's pipelineTimeS, the end of the last
        // pipeline pass) less the F, B and W work of a stage. The table assumes equal stages; the last stage also
        // runs the final norm, the head and the loss, and the others wait for it, so the period is the bubble plus
        // the work of the busiest stage. (bubbleFraction would also count a stage's optimizer step as busy when the
        // stage finishes early, as ZB-H1's last stage does.)
        double busiest = 0;
        for (const ClassProgram& program : r->classes) {
            double work = 0;
            for (const ProgramNode& n : program.nodes)
                if (n.kind == NodeKind::Compute && n.op >= 0 && n.microBatch >= 0)
                    work += static_cast<double>(n.flops) / peak;
            busiest = std::max(busiest, work);
        }
        const double bubble = e.pipelineTimeS - busiest;
        QVERIFY2(near(bubble, expected, 0.01),
            qPrintable(QStringLiteral("F %1 B %2 W %3: ").arg(f).arg(b).arg(w) + mismatch(bubble, expected)));
    }

    void dataParallelExposedReduction_data()
    {
        QTest::addColumn<int>("dp");
        QTest::addColumn<double>("efficiency");
        QTest::newRow("dp2") << 2 << 1.0;
        QTest::newRow("dp4") << 4 << 1.0;
        QTest::newRow("dp8-half-efficiency") << 8 << 0.5;
    }

    void dataParallelExposedReduction()
    {
        QFETCH(int, dp);
        QFETCH(double, efficiency);
        // Pure data parallelism, one micro-batch per replica, ZeRO 0, one gradient bucket for the whole model
        // (gradient_bucket_mb above the model size): the compute stream runs forward, backward, then waits for the
        // single all-reduce of all gradients, then runs the optimizer. Nothing overlaps the reduction, so the
        // step is compute time + all-reduce time, and the reduction is entirely exposed.
        auto r = synth("tiny",
            { "parallelism.dp=" + std::to_string(dp), "training.global_batch=" + std::to_string(dp),
                "training.micro_batch=1", "parallelism.zero=0", "parallelism.gradient_bucket_mb=100000",
                "cluster.gpus_per_node=8", "cluster.intra_node_bandwidth_gbps=100", "cluster.intra_node_efficiency=1",
                "cluster.intra_node_latency_us=3" });
        const double peak = 1e12, bandwidth = 100e9, latency = 3e-6;
        EstimateOptions options;
        options.flatComputeEfficiency = efficiency;
        const StepEstimate e = estimate(*r, computeOnlyGpu(peak), options);

        // Parameters of the tiny Llama (H 256, F 512, V 1024, 2 layers, 8 heads of 32, 4 KV heads; Touvron et al.
        // 2023 architecture): embedding V*H, per layer two RMSNorm weights 2H, QKV H*(H + 2*4*32), output H*H,
        // SwiGLU 3*H*F; final norm H; untied head H*V.
        const double h = 256, f = 512, vocab = 1024, layers = 2;
        const double params = vocab * h + layers * (2 * h + h * (h + 2 * 4 * 32) + h * h + 3 * h * f) + h + h * vocab;
        QCOMPARE(params, 1'705'216.0);
        // Gradients reduced in fp32 (training.grad_reduce_dtype default, as Megatron-LM does under bf16): 4 bytes
        // per parameter, one ring all-reduce over dp ranks within a node.
        // Latency: ceil(log2 dp) steps (NCCL's tree depth for small messages).
        const double reduction = 2.0 * (dp - 1) / dp * (4 * params) / bandwidth + std::ceil(std::log2(dp)) * latency;
        // FLOPs of one rank: its 1/dp share of the iteration's forward and backward (with the scores the flash
        // attention backward recomputes), and the whole Adam step (ZeRO 0: 12 FLOPs per parameter, unsharded).
        const ModelCost& cost = r->cost;
        const double rankFlops = static_cast<double>(cost.microBatches)
                * (double(cost.forwardFlopsPerMicroBatch) + double(cost.backwardFlopsPerMicroBatch)
                    + double(cost.recomputeFlopsPerMicroBatch))
                / dp
            + 12 * params;
        QCOMPARE(double(cost.optimizerFlops), 12 * params);
        const double compute = rankFlops / (peak * efficiency);
        const ClassEstimate& c = e.classes[0];
        QVERIFY2(near(c.computeTimeS, compute, 1e-9), qPrintable(mismatch(c.computeTimeS, compute)));
        QVERIFY2(near(c.communicationTimeS, reduction, 1e-9), qPrintable(mismatch(c.communicationTimeS, reduction)));
        QVERIFY2(
            near(c.exposedCommunicationS, reduction, 1e-9), qPrintable(mismatch(c.exposedCommunicationS, reduction)));
        QVERIFY2(near(e.iterationTimeS, compute + reduction, 1e-9),
            qPrintable(mismatch(e.iterationTimeS, compute + reduction)));
        // MFU (PaLM appendix B): model FLOPs (forward + backward, no optimizer) / (world * peak * step).
        const double modelFlops = static_cast<double>(cost.microBatches)
            * (double(cost.forwardFlopsPerMicroBatch) + double(cost.backwardFlopsPerMicroBatch));
        const double mfu = modelFlops / (dp * peak * (compute + reduction));
        QVERIFY2(near(e.mfu, mfu, 1e-9), qPrintable(mismatch(e.mfu, mfu)));
    }

    void estimateJsonMirrorsTheEstimate()
    {
        auto r = synth("tiny", { "parallelism.pp=2", "training.global_batch=8", "training.micro_batch=1" });
        const StepEstimate e = estimate(*r, *gpuPreset("h100-sxm"), EstimateOptions {});
        const nlohmann::ordered_json j = estimateJson(e);
        QCOMPARE(j["gpu"].get<std::string>(), std::string("h100-sxm"));
        QCOMPARE(j["classes"].size(), size_t(2));
        double slowest = 0;
        for (const auto& c : j["classes"])
            slowest = std::max(slowest, c["step_time_s"].get<double>());
        QCOMPARE(j["iteration_time_s"].get<double>(), slowest);
        QVERIFY(j["classes"][0].contains("exposed_communication_s"));
        QVERIFY(j["classes"][0].contains("bubble_fraction"));
    }

    void scheduleFollowsTheModel_data()
    {
        QTest::addColumn<QStringList>("sets");
        QTest::addColumn<bool>("intra");
        QTest::addColumn<bool>("pipelined");
        // Eight GPUs per node hold the whole (at most 8-rank) world: every group and peer is intra-node. One GPU
        // per node puts every group of two or more members and every pipeline peer across nodes.
        QTest::newRow("dp2-pp2-1f1b") << QStringList { QStringLiteral("parallelism.dp=2"),
            QStringLiteral("parallelism.pp=2"), QStringLiteral("training.global_batch=8"),
            QStringLiteral("training.micro_batch=1") }
                                      << true << true;
        QTest::newRow("tp2-sp-pp2-gpipe-inter") << QStringList { QStringLiteral("parallelism.tp=2"),
            QStringLiteral("parallelism.sequence_parallel=true"), QStringLiteral("parallelism.pp=2"),
            QStringLiteral("parallelism.schedule=gpipe"), QStringLiteral("training.global_batch=4"),
            QStringLiteral("training.micro_batch=1"), QStringLiteral("cluster.gpus_per_node=1") }
                                                << false << true;
        QTest::newRow("dp4-zero3-inter") << QStringList { QStringLiteral("parallelism.dp=4"),
            QStringLiteral("parallelism.zero=3"), QStringLiteral("training.global_batch=8"),
            QStringLiteral("training.micro_batch=1"), QStringLiteral("cluster.gpus_per_node=1") }
                                         << false << false;
        QTest::newRow("interleaved-pp2-v2") << QStringList { QStringLiteral("model.layers=4"),
            QStringLiteral("parallelism.pp=2"), QStringLiteral("parallelism.schedule=interleaved"),
            QStringLiteral("parallelism.virtual_stages=2"), QStringLiteral("parallelism.dp=2"),
            QStringLiteral("training.global_batch=8"), QStringLiteral("training.micro_batch=1") }
                                            << true << true;
        QTest::newRow("dp2-pp2-every-overlap") << QStringList { QStringLiteral("parallelism.dp=2"),
            QStringLiteral("parallelism.pp=2"), QStringLiteral("training.global_batch=8"),
            QStringLiteral("training.micro_batch=1"), QStringLiteral("parallelism.overlap_p2p_comm=true"),
            QStringLiteral("parallelism.overlap_grad_reduce=true") }
                                               << true << true;
    }

    void scheduleFollowsTheModel()
    {
        QFETCH(QStringList, sets);
        QFETCH(bool, intra);
        QFETCH(bool, pipelined);
        const std::vector<std::string> overrides = toOverrides(sets);
        const GpuSpec gpu = *gpuPreset("h100-sxm");
        EstimateOptions options;
        options.flatComputeEfficiency = 0.5;
        auto r = synth("tiny",
            overrides
                + std::vector<std::string> { "cluster.intra_node_latency_us=4", "cluster.inter_node_latency_us=11" });
        const bool overlapP2p = r->config.parallelism.overlapP2pComm;
        const bool overlapGrads = r->config.parallelism.overlapGradReduce;
        StepEstimate e;
        EstimateSchedule schedule;
        std::string error;
        QVERIFY2(estimateStep(*r, gpu, options, e, error, &schedule), error.c_str());
        QCOMPARE(schedule.classes.size(), r->classes.size());

        size_t collectives = 0, sends = 0, recvs = 0;
        for (size_t c = 0; c < r->classes.size(); ++c) {
            const ClassProgram& program = r->classes[c];
            const std::vector<ScheduledNode>& nodes = schedule.classes[c];
            QCOMPARE(nodes.size(), program.nodes.size());
            // Streams: compute, collectives, data-parallel collectives, point-to-point; a blocking send (no
            // overlap_p2p_comm) holds the compute stream. Without overlap_grad_reduce the per-iteration gradient
            // reduction waits for the stage's last backward kernel.
            double lastEnd[5] = { 0, 0, 0, 0, 0 };
            double maxEnd = 0, computeBusy = 0, lastBackwardEnd = 0;
            size_t lastBackward = nodes.size();
            for (size_t i = 0; i < nodes.size(); ++i)
                if (program.nodes[i].kind == NodeKind::Compute && program.nodes[i].pass == Pass::Backward)
                    lastBackward = i;
            if (lastBackward < nodes.size())
                lastBackwardEnd = nodes[lastBackward].endS;
            for (size_t i = 0; i < nodes.size(); ++i) {
                const ScheduledNode& s = nodes[i];
                const ProgramNode& n = program.nodes[i];
                const QString where =
                    QStringLiteral("stage %1 node %2 (%3)").arg(c).arg(i).arg(QString::fromStdString(n.name));
                QCOMPARE(s.node, uint32_t(i));
                const bool dataParallel = n.kind == NodeKind::Collective && (n.mask & kDpMask) != 0
                    && n.collective != CollectiveType::AllToAll;
                const ScheduleStream expectedStream = n.kind == NodeKind::Compute ? ScheduleStream::Compute
                    : n.kind == NodeKind::Recv                                    ? ScheduleStream::None
                    : n.kind == NodeKind::Send                                    ? ScheduleStream::PointToPoint
                    : dataParallel                                                ? ScheduleStream::DataParallel
                                                                                  : ScheduleStream::Communication;
                QVERIFY2(s.stream == expectedStream, qPrintable(where));
                collectives += n.kind == NodeKind::Collective;
                sends += n.kind == NodeKind::Send;
                recvs += n.kind == NodeKind::Recv;
                // Duration = the node's modelled time, computed by hand.
                const double expected = handNodeTime(*r, n, gpu, options, intra);
                QVERIFY2(closeTo(s.endS - s.startS, expected),
                    qPrintable(where + QStringLiteral(": ") + mismatch(s.endS - s.startS, expected)));
                // As soon as possible: at the latest end among its dependencies, the stream's previous node and,
                // for a recv, the matching send on the peer stage; never before any of them.
                double ready = 0;
                for (NodeId d : n.dataDeps)
                    ready = std::max(ready, nodes[d.value].endS);
                for (NodeId d : n.ctrlDeps)
                    ready = std::max(ready, nodes[d.value].endS);
                if (!overlapGrads && dataParallel && n.pass == Pass::Backward && n.microBatch < 0 && i < lastBackward)
                    ready = std::max(ready, lastBackwardEnd);
                if (s.stream != ScheduleStream::None) {
                    const int stream = s.stream == ScheduleStream::PointToPoint && !overlapP2p
                        ? static_cast<int>(ScheduleStream::Compute)
                        : static_cast<int>(s.stream);
                    QVERIFY2(s.startS >= lastEnd[stream], qPrintable(where + QStringLiteral(" overlaps its stream")));
                    ready = std::max(ready, lastEnd[stream]);
                    lastEnd[stream] = s.endS;
                }
                if (n.kind == NodeKind::Recv) {
                    const ClassProgram& peer = r->classes[static_cast<size_t>(n.peerStage)];
                    int matches = 0;
                    for (size_t k = 0; k < peer.nodes.size(); ++k) {
                        const ProgramNode& p = peer.nodes[k];
                        if (p.kind == NodeKind::Send && p.peerStage == program.stage && p.tag == n.tag) {
                            ++matches;
                            ready = std::max(ready, schedule.classes[static_cast<size_t>(n.peerStage)][k].endS);
                        }
                    }
                    QVERIFY2(matches == 1, qPrintable(where));
                }
                QVERIFY2(s.startS == ready, qPrintable(where + QStringLiteral(": start ") + mismatch(s.startS, ready)));
                maxEnd = std::max(maxEnd, s.endS);
                if (n.kind == NodeKind::Compute)
                    computeBusy += s.endS - s.startS;
            }
            QCOMPARE(maxEnd, e.classes[c].stepTimeS);
            QVERIFY2(closeTo(computeBusy, e.classes[c].computeTimeS),
                qPrintable(mismatch(computeBusy, e.classes[c].computeTimeS)));
        }
        // The plans exercise what they are meant to: collectives everywhere, point-to-point when pipelined.
        QVERIFY(collectives > 0);
        QCOMPARE(sends > 0, pipelined);
        QCOMPARE(recvs, sends);
    }

    void scheduleIsOptional()
    {
        auto r = synth("tiny", { "parallelism.pp=2", "training.global_batch=8", "training.micro_batch=1" });
        const GpuSpec gpu = *gpuPreset("h100-sxm");
        StepEstimate without, with;
        EstimateSchedule schedule;
        std::string error;
        QVERIFY(estimateStep(*r, gpu, EstimateOptions {}, without, error));
        QVERIFY(estimateStep(*r, gpu, EstimateOptions {}, with, error, &schedule));
        QCOMPARE(with.iterationTimeS, without.iterationTimeS);
        QCOMPARE(with.mfu, without.mfu);
        // On failure (no peak for the precision) the schedule is left as it was.
        EstimateSchedule untouched;
        untouched.classes = { { ScheduledNode { 7, 1, 2, ScheduleStream::Compute } } };
        QVERIFY(!estimateStep(*r, computeOnlyGpu(0), EstimateOptions {}, with, error, &untouched));
        QVERIFY(error.find("no peak") != std::string::npos);
        QCOMPARE(untouched.classes.size(), size_t(1));
        QCOMPARE(untouched.classes[0].size(), size_t(1));
        QCOMPARE(untouched.classes[0][0].node, uint32_t(7));
    }

    void chromeTrace_data()
    {
        QTest::addColumn<int>("stage");
        QTest::newRow("all stages") << -1;
        QTest::newRow("stage 0") << 0;
        QTest::newRow("stage 1") << 1;
    }

    void chromeTrace()
    {
        QFETCH(int, stage);
        auto r = synth(
            "tiny", { "parallelism.dp=2", "parallelism.pp=2", "training.global_batch=8", "training.micro_batch=1" });
        StepEstimate e;
        EstimateSchedule schedule;
        std::string error;
        QVERIFY2(estimateStep(*r, *gpuPreset("h100-sxm"), EstimateOptions {}, e, error, &schedule), error.c_str());
        const nlohmann::ordered_json j =
            chromeTraceJson(*r, e, schedule, stage < 0 ? std::nullopt : std::optional<int>(stage));
        QVERIFY(j.contains("traceEvents"));
        // rank_order tp, cp, ep, dp, pp with dp 2, pp 2: rank = dp + 2 * pp, so stage s holds ranks 2s and 2s+1,
        // and stage 0's rank 0 sends to rank 2 (same dp coordinate, stage 1).
        const std::map<int, std::string> processNames { { 0, "stage 0 (ranks 0-1)" }, { 1, "stage 1 (ranks 2-3)" } };
        std::map<int, size_t> expectedEvents;
        for (size_t c = 0; c < r->classes.size(); ++c)
            if (stage < 0 || stage == int(c))
                for (const ProgramNode& n : r->classes[c].nodes)
                    expectedEvents[int(c)] += n.kind != NodeKind::Recv;
        std::map<int, size_t> events;
        std::map<int, std::string> names;
        std::map<std::pair<int, int>, std::string> threads;
        for (const auto& ev : j["traceEvents"]) {
            const int pid = ev["pid"].get<int>();
            const int tid = ev["tid"].get<int>();
            if (ev["ph"] == "M") {
                if (ev["name"] == "process_name")
                    names[pid] = ev["args"]["name"].get<std::string>();
                if (ev["name"] == "thread_name")
                    threads[{ pid, tid }] = ev["args"]["name"].get<std::string>();
                continue;
            }
            QCOMPARE(ev["ph"].get<std::string>(), std::string("X"));
            ++events[pid];
            const uint32_t index = ev["args"]["node"].get<uint32_t>();
            const ScheduledNode& s = schedule.classes[size_t(pid)][index];
            const ProgramNode& n = r->classes[size_t(pid)].nodes[index];
            QCOMPARE(ev["name"].get<std::string>(), n.name);
            QCOMPARE(ev["cat"].get<std::string>(), std::string(toString(n.kind)));
            QCOMPARE(ev["ts"].get<double>(), s.startS * 1e6); // microseconds
            QVERIFY(closeTo(ev["dur"].get<double>(), (s.endS - s.startS) * 1e6));
            QCOMPARE(tid, n.kind == NodeKind::Compute ? 0 : 1);
            if (n.kind == NodeKind::Compute) {
                QCOMPARE(ev["args"]["flops"].get<int64_t>(), n.flops);
                QCOMPARE(ev["args"]["pass"].get<std::string>(), std::string(toString(n.pass)));
            } else if (n.kind == NodeKind::Collective) {
                QCOMPARE(ev["args"]["collective"].get<std::string>(), std::string(toString(n.collective)));
                QCOMPARE(ev["args"]["comm_bytes"].get<int64_t>(), n.bytes);
                QCOMPARE(ev["args"]["group_size"].get<int64_t>(),
                    int64_t(2)); // dp is the only axis of degree > 1 in a stage
            } else {
                QCOMPARE(ev["args"]["peer_stage"].get<int>(), 1 - pid);
                QCOMPARE(ev["args"]["peer_rank"].get<int64_t>(), int64_t(2 * (1 - pid)));
            }
        }
        QCOMPARE(events, expectedEvents);
        for (const auto& [pid, count] : expectedEvents) {
            QCOMPARE(names[pid], processNames.at(pid));
            QCOMPARE(threads[std::make_pair(pid, 0)], std::string("compute"));
            QCOMPARE(threads[std::make_pair(pid, 1)], std::string("communication"));
        }
        QCOMPARE(names.size(), expectedEvents.size());
        QCOMPARE(j["otherData"]["iteration_time_s"].get<double>(), e.iterationTimeS);
    }

    void rankRanges_data()
    {
        QTest::addColumn<QList<qint64>>("ranks");
        QTest::addColumn<QString>("text");
        QTest::newRow("none") << QList<qint64> {} << QStringLiteral("no ranks");
        QTest::newRow("one") << QList<qint64> { 5 } << QStringLiteral("rank 5");
        QTest::newRow("pair apart") << QList<qint64> { 0, 2 } << QStringLiteral("ranks 0, 2");
        QTest::newRow("one range") << QList<qint64> { 4, 5, 6, 7 } << QStringLiteral("ranks 4-7");
        QTest::newRow("four ranges") << QList<qint64> { 0, 1, 4, 5, 8, 9, 12 }
                                     << QStringLiteral("ranks 0-1, 4-5, 8-9, 12");
        QTest::newRow("truncated") << QList<qint64> { 0, 1, 4, 5, 8, 9, 12, 13, 16 }
                                   << QStringLiteral("ranks 0-1, 4-5, 8-9, 12-13, \u2026, 9 ranks");
    }

    void rankRanges()
    {
        QFETCH(QList<qint64>, ranks);
        QFETCH(QString, text);
        QCOMPARE(QString::fromStdString(rankRangeText(std::vector<int64_t>(ranks.begin(), ranks.end()))), text);
    }

    void writeChromeTraceFile()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath(QStringLiteral("trace.json"));
        QFile old(path);
        QVERIFY(old.open(QIODevice::WriteOnly));
        old.write("old contents");
        old.close();
        const nlohmann::ordered_json j = { { "traceEvents", nlohmann::ordered_json::array({ { { "ph", "X" } } }) } };
        writeChromeTrace(path.toStdString(), j);
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), QByteArray(R"({"traceEvents":[{"ph":"X"}]})"));
        // The temporary file was renamed: nothing else is left in the directory.
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden), QStringList { QStringLiteral("trace.json") });

        const std::string missing = dir.filePath(QStringLiteral("no/such/dir/trace.json")).toStdString();
        try {
            writeChromeTrace(missing, j);
            QFAIL("writing into a missing directory succeeded");
        } catch (const std::runtime_error& e) {
            const std::string what = e.what();
            QVERIFY2(what.find(missing) != std::string::npos, e.what());
            QVERIFY2(what.find(std::strerror(ENOENT)) != std::string::npos, e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestEstimate)
#include "tst_estimate.moc"
