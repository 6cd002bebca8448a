// SPDX-License-Identifier: MIT
// MoE beyond uniform routing: the hottest rank under routing imbalance and capacity, expert tensor parallelism
// (expert_tp) folded into tp, and their validation.
#include "config/configloader.h"
#include "synthesis/synthesis.h"
#include "synthhelpers.h"

#include <QtTest>
#include <algorithm>

using namespace stagecraft;
using namespace stagecraft::test;

namespace {

/// The tiny preset (h 256, seq 128) as an 8-layer MoE: 4 experts, top-2, expert FFN 512, no shared expert.
std::vector<std::string> tinyMoe()
{
    return { "model.layers=8", "model.family=moe", "model.experts=4", "model.top_k=2", "model.expert_ffn_hidden=512",
        "training.global_batch=16", "training.micro_batch=2" };
}

std::vector<std::string> plan(int dp, int tp, int ep, bool sp = false)
{
    return { "parallelism.dp=" + std::to_string(dp), "parallelism.tp=" + std::to_string(tp),
        "parallelism.ep=" + std::to_string(ep),
        std::string("parallelism.sequence_parallel=") + (sp ? "true" : "false") };
}

const ProgramNode* node(const ClassProgram& p, const std::string& name)
{
    for (const ProgramNode& n : p.nodes)
        if (n.name == name)
            return &n;
    return nullptr;
}

int64_t tensorBytes(const SynthesisResult& r, const std::string& name)
{
    const ModelGraph& g = *r.graph;
    for (size_t t = 0; t < g.tensors.size(); ++t)
        if (g.tensors[t].name == name)
            return r.plan->tensorBytes[t];
    qFatal("no tensor %s", name.c_str());
    return 0;
}

/// Collectives of layer `layer`, micro-batch `mb`, whose name contains `needle`.
std::vector<const ProgramNode*> collectives(const ClassProgram& p, int layer, int mb, const std::string& needle)
{
    std::vector<const ProgramNode*> out;
    for (const ProgramNode& n : p.nodes)
        if (n.kind == NodeKind::Collective && n.layer == layer && n.microBatch == mb
            && n.name.str().find(needle) != std::string::npos)
            out.push_back(&n);
    return out;
}

bool hasWarning(const SynthesisResult& r, const std::string& needle)
{
    return std::any_of(r.warnings.begin(), r.warnings.end(),
        [&](const Diagnostic& d) { return d.message.find(needle) != std::string::npos; });
}

} // namespace

class TestMoe : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void hottestRank_data()
    {
        QTest::addColumn<QString>("imbalance");
        QTest::addColumn<QString>("capacity");
        QTest::addColumn<int>("tokens");
        // dp 2, ep 2: a global micro-batch of 2*2 sequences of 128 tokens, top-2 over 4 experts, gives every expert
        // 4*128*2/4 = 256 tokens on uniform routing, and each rank holds 2 of the experts. The hottest rank's experts
        // receive min(f, c) * 256 (Megatron drops what exceeds the capacity), at most min(ep, experts/top_k) = 2
        // times the mean (then they receive every token of the micro-batch).
        QTest::newRow("uniform") << QStringLiteral("1") << QStringLiteral("0") << 256;
        QTest::newRow("imbalance 1.5") << QStringLiteral("1.5") << QStringLiteral("0") << 384;
        QTest::newRow("imbalance 1.75 capped at 1.25") << QStringLiteral("1.75") << QStringLiteral("1.25") << 320;
        QTest::newRow("capacity 0.5 drops half") << QStringLiteral("1") << QStringLiteral("0.5") << 128;
        QTest::newRow("imbalance 3 exceeds all tokens") << QStringLiteral("3") << QStringLiteral("0") << 512;
    }

    void hottestRank()
    {
        QFETCH(QString, imbalance);
        QFETCH(QString, capacity);
        QFETCH(int, tokens);
        const std::vector<std::string> base = tinyMoe() + plan(2, 1, 2);
        auto uniform = synth("tiny", base);
        auto r = synth("tiny",
            base
                + std::vector<std::string> { "model.moe_routing_imbalance=" + imbalance.toStdString(),
                    "model.moe_capacity_factor=" + capacity.toStdString() });
        const ClassProgram& p = r->classes[0];
        const int64_t h = 256, fe = 512, localExperts = 2, t = tokens;

        // Expert GEMM of the hottest rank: 2 FLOPs per multiply-add over its 2 experts x t tokens x h x fe.
        const ProgramNode* gate = node(p, "mb0/L2.moe.experts.gate");
        QVERIFY(gate);
        QCOMPARE(gate->flops, 2 * localExperts * t * h * fe);
        // Expert activations follow the load: the gate output holds 2 experts x t tokens x fe bf16 values.
        QCOMPARE(tensorBytes(*r, "L2.moe.experts.gate"), localExperts * t * fe * 2);
        // Dispatch and combine all-to-alls carry what the hottest rank receives: 2 experts x t tokens x h bf16
        // (262,144 bytes uniform: b*s*top_k*h*2 = 2*128*2*256*2, GShard's dispatched tokens); forward and backward.
        int a2a = 0;
        for (const ProgramNode* n : collectives(p, 2, 0, "moe")) {
            if (n->collective != CollectiveType::AllToAll)
                continue;
            ++a2a;
            QCOMPARE(n->bytes, localExperts * t * h * 2);
        }
        QCOMPARE(a2a, 4);

        // The rank's FLOPs grow by what its experts' extra tokens cost. Per MoE layer and micro-batch, each routed
        // token of a local expert costs fe*(18h + 15) + h: three GEMMs of 2*h*fe forward and twice that backward
        // (18*h*fe), SwiGLU 5 forward + 10 backward per FFN element, and the sum of the gate and up input
        // gradients (1 per hidden element). 8 MoE layers, 16/(2*2) = 4 micro-batches.
        const int64_t perToken = fe * (18 * h + 15) + h;
        const int64_t extraTokens = localExperts * (t - 256);
        QCOMPARE(r->summaries[0].flops - uniform->summaries[0].flops, extraTokens * perToken * 8 * 4);

        // The model's totals stay uniform: parameters, and the model FLOPs of MFU count the useful work.
        QCOMPARE(r->cost.params, uniform->cost.params);
        QCOMPARE(r->cost.flopsPerIteration, uniform->cost.flopsPerIteration);
        QCOMPARE(hasWarning(*r, "exceeds what the experts of one rank can receive"), tokens == 512);
        QCOMPARE(hasWarning(*r, "not modelled yet"), false);
    }

    void imbalanceWithoutExpertParallelism()
    {
        // ep 1: every rank holds all experts and receives every routed token, however they spread over the
        // experts, so the imbalance changes nothing on the rank (min(ep, experts/top_k) = 1).
        const std::vector<std::string> base = tinyMoe() + plan(2, 1, 1);
        auto uniform = synth("tiny", base);
        auto r = synth("tiny", base + std::vector<std::string> { "model.moe_routing_imbalance=2" });
        QCOMPARE(r->summaries[0].flops, uniform->summaries[0].flops);
        QCOMPARE(r->summaries[0].peakBytes, uniform->summaries[0].peakBytes);
    }

    void expertTensorParallelism()
    {
        // dp 4 = ep 2 x edp 2, tp 2 with sequence parallelism. Global micro-batch 2*4 sequences: an expert receives
        // 8*128*2/4 = 512 tokens, 512/edp = 256 on its expert-data-parallel rank.
        const std::vector<std::string> base = tinyMoe() + plan(4, 2, 2, true);
        auto split = synth("tiny", base);
        auto whole = synth("tiny", base + std::vector<std::string> { "parallelism.expert_tp=1" });
        const ClassProgram& ps = split->classes[0];
        const ClassProgram& pw = whole->classes[0];

        // Expert weights per rank: 2 local experts x h 256 x fe 512, split by tp=2 or whole (expert_tp 1).
        QCOMPARE(tensorBytes(*split, "L2.moe.experts.gate.weight"), int64_t(2) * 256 * 512 / 2 * 2);
        QCOMPARE(tensorBytes(*whole, "L2.moe.experts.gate.weight"), int64_t(2) * 256 * 512 * 2);
        // 8 layers x 3 expert weights, each 2*256*256 parameters more: bf16 weights, fp32 main gradients.
        QCOMPARE(whole->summaries[0].weightBytes - split->summaries[0].weightBytes, int64_t(8) * 3 * 2 * 256 * 256 * 2);
        QCOMPARE(
            whole->summaries[0].gradientBytes - split->summaries[0].gradientBytes, int64_t(8) * 3 * 2 * 256 * 256 * 4);

        // Same expert work per rank: half the FFN of 256 tokens per expert, or the whole FFN of the rank's 128
        // (its sequence-parallel share, 256/tp): 2 FLOPs x 2 experts x 256 x h x fe/2 either way.
        const int64_t gemm = int64_t(2) * 2 * 256 * 256 * 256;
        QCOMPARE(node(ps, "mb0/L2.moe.experts.gate")->flops, gemm);
        QCOMPARE(node(pw, "mb0/L2.moe.experts.gate")->flops, gemm);
        QCOMPARE(tensorBytes(*whole, "L2.moe.experts.gate"), int64_t(2) * 128 * 512 * 2);

        // Split experts gather the tokens over tp after the dispatch all-to-all and reduce-scatter the partial
        // expert output before the combine (Megatron's AlltoAll dispatcher: A2A(EP) -> AG(TP), RS(TP) -> A2A(EP));
        // whole experts need neither, and the all-to-all moves the rank's own tokens: b*s/tp*top_k*h bf16.
        int splitTp = 0, splitA2a = 0, wholeTp = 0, wholeA2a = 0;
        for (const ProgramNode* n : collectives(ps, 2, 0, "moe")) {
            splitTp += n->mask == axisBit(Axis::Tp);
            splitA2a += n->collective == CollectiveType::AllToAll;
        }
        for (const ProgramNode* n : collectives(pw, 2, 0, "moe")) {
            wholeTp += (n->mask & axisBit(Axis::Tp)) != 0;
            if (n->collective == CollectiveType::AllToAll) {
                ++wholeA2a;
                QCOMPARE(n->bytes, int64_t(2) * 128 / 2 * 2 * 256 * 2);
            }
        }
        // Split: forward AG + RS; backward AG of the output gradient, RS of the input gradient, and the tokens
        // dispatched and gathered again for the weight gradients (gathers are redone per pass, as Megatron-LM
        // re-gathers sequence-parallel inputs in backward). Whole experts keep their dispatched tokens.
        QCOMPARE(splitTp, 5);
        QCOMPARE(splitA2a, 5);
        QCOMPARE(wholeTp, 0);
        QCOMPARE(wholeA2a, 4);

        // Expert gradients reduce over the ranks holding the same shard: edp (2) for split experts, edp x tp (4)
        // for whole ones; fp32, 3 weights of 2*256*fe/etp parameters each.
        auto gradReduction = [](const ClassProgram& p, AxisMask mask) -> const ProgramNode* {
            for (const ProgramNode& n : p.nodes)
                if (n.kind == NodeKind::Collective && n.name.str().rfind("grads:L2", 0) == 0 && n.mask == mask)
                    return &n;
            return nullptr;
        };
        const ProgramNode* rs = gradReduction(ps, axisBit(Axis::Edp));
        const ProgramNode* rw = gradReduction(pw, axisBit(Axis::Edp) | axisBit(Axis::Tp));
        QVERIFY(rs && rw);
        QCOMPARE(rs->collective, CollectiveType::AllReduce);
        QCOMPARE(rs->bytes, int64_t(3) * 2 * 256 * 256 * 4);
        QCOMPARE(rw->collective, CollectiveType::AllReduce);
        QCOMPARE(rw->bytes, int64_t(3) * 2 * 256 * 512 * 4);
        QVERIFY(!gradReduction(pw, axisBit(Axis::Edp)));

        // Parameters and model FLOPs do not depend on the layout.
        QCOMPARE(whole->cost.params, split->cost.params);
        QCOMPARE(whole->cost.flopsPerIteration, split->cost.flopsPerIteration);
    }

    void expertTpValidation_data()
    {
        QTest::addColumn<int>("expertTp");
        QTest::addColumn<QString>("reason"); // empty: valid
        QTest::newRow("0 = tp") << 0 << QString();
        QTest::newRow("1 whole experts") << 1 << QString();
        QTest::newRow("4 = tp") << 4 << QString();
        QTest::newRow("3 does not divide") << 3 << QStringLiteral("expert_tp=3 does not divide tp=4");
        QTest::newRow("8 does not divide") << 8 << QStringLiteral("expert_tp=8 does not divide tp=4");
        QTest::newRow("2 sub-group") << 2 << QStringLiteral("expert_tp=2 with tp=4 is not supported");
    }

    void expertTpValidation()
    {
        QFETCH(int, expertTp);
        QFETCH(QString, reason);
        const std::string yaml = "model:\n"
                                 "  preset: tiny\n"
                                 "  family: moe\n"
                                 "  experts: 4\n"
                                 "  top_k: 2\n"
                                 "  expert_ffn_hidden: 512\n"
                                 "parallelism:\n"
                                 "  expert_tp: "
            + std::to_string(expertTp)
            + "\n"
              "  tp: 4\n"
              "  dp: 2\n"
              "  ep: 2\n"
              "training:\n"
              "  global_batch: 8\n";
        const ConfigResult result = loadConfigText(yaml, "etp.yaml");
        const auto it = std::find_if(result.diagnostics.begin(), result.diagnostics.end(),
            [](const Diagnostic& d) { return d.keyPath == "parallelism.expert_tp"; });
        if (reason.isEmpty()) {
            QVERIFY(result.config);
            QVERIFY(it == result.diagnostics.end());
            return;
        }
        QVERIFY(!result.config);
        QVERIFY(it != result.diagnostics.end());
        QCOMPARE(it->severity, Severity::Error);
        QCOMPARE(it->file, std::string("etp.yaml"));
        QCOMPARE(it->line, 8); // the value of expert_tp
        QCOMPARE(it->column, 14);
        QVERIFY2(it->message.find(reason.toStdString()) != std::string::npos, it->message.c_str());
    }
};

QTEST_GUILESS_MAIN(TestMoe)
#include "tst_moe.moc"
