// SPDX-License-Identifier: MIT
// Multi-token prediction (DeepSeek-V3 section 2.2): the modules' own parameters reported apart, their FLOPs in the
// totals, their place on the last pipeline stage, and DeepSeek-V3's 685B checkpoint.
#include "config/configloader.h"
#include "model/modelcost.h"
#include "synthesis/synthesis.h"
#include "synthhelpers.h"

#include <QtTest>
#include <algorithm>

using namespace stagecraft;
using namespace stagecraft::test;

namespace {

ModelCost modelCost(const std::string& preset, const std::vector<std::string>& sets)
{
    ConfigResult loaded = loadConfigOrPreset(preset, sets);
    if (!loaded.config)
        qFatal("config %s does not load", preset.c_str());
    const auto graph = buildModelGraph(loaded.config->model, loaded.config->training.precision);
    ModelCost cost;
    std::string error;
    if (!computeModelCost(*graph, *loaded.config, cost, error))
        qFatal("cost failed: %s", error.c_str());
    return cost;
}

bool hasNode(const ClassProgram& p, const std::string& needle)
{
    return std::any_of(p.nodes.begin(), p.nodes.end(),
        [&](const ProgramNode& n) { return n.name.str().find(needle) != std::string::npos; });
}

} // namespace

class TestMtp : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void parametersReportedApart()
    {
        // The tiny preset (h 256, 8 heads and 4 KV heads of 32, vocab 1024) as an MoE of 4 experts of 512, top-2.
        // One MTP module's own weights: enorm, hnorm and final norm 3*256 = 768; eh_proj 2*256*256 = 131,072;
        // its decoder layer: attention norm 256, q 256*8*32 = 65,536, k and v 2*256*4*32 = 65,536, o 8*32*256 =
        // 65,536, MLP norm 256, router 256*4 = 1,024, experts 4*3*256*512 = 1,572,864 => 1,771,008.
        // Total 768 + 131,072 + 1,771,008 = 1,902,848. The embedding and the output head are the model's.
        const std::vector<std::string> moe { "model.family=moe", "model.experts=4", "model.top_k=2",
            "model.expert_ffn_hidden=512" };
        auto without = synth("tiny", moe);
        auto with = synth("tiny", moe + std::vector<std::string> { "model.mtp_modules=1" });
        QCOMPARE(with->cost.params, without->cost.params);
        QCOMPARE(with->cost.mtpParams, int64_t(1'902'848));
        QCOMPARE(without->cost.mtpParams, int64_t(0));
        auto two = synth("tiny", moe + std::vector<std::string> { "model.mtp_modules=2" });
        QCOMPARE(two->cost.mtpParams, 2 * int64_t(1'902'848));
        QVERIFY(std::none_of(with->warnings.begin(), with->warnings.end(),
            [](const Diagnostic& d) { return d.keyPath == "model.mtp_modules"; }));
    }

    void deepseekV3Checkpoint()
    {
        // DeepSeek-V3 (h 7168, vocab 129280; counts derived in tst_hfimport): main model 671,026,404,352 (the
        // report's 671B); the MTP module's own weights are 2 norms 14,336 + eh_proj 2*7168*7168 = 102,760,448 + one
        // MoE layer 11,507,286,016 + its final norm 7,168 = 11,610,067,968 (deepseek-ai/DeepSeek-V3
        // README_WEIGHTS.md: "11.5B unique parameters, excluding the shared 0.9B Embedding and 0.9B output Head").
        // (A smaller batch keeps the program of the preset's plan with an MTP module under the node limit; it changes
        // no parameter.)
        const ModelCost cost = modelCost("deepseek-v3", { "model.mtp_modules=1", "training.global_batch=4096" });
        QCOMPARE(cost.params, int64_t(671'026'404'352));
        QCOMPARE(cost.mtpParams, int64_t(11'610'067'968));
        // The Hugging Face checkpoint stores its own copies of the embedding and the head for layer 61
        // (embed_tokens, shared_head.head): 2*129280*7168 = 1,853,358,080, so its MTP part is 13,463,426,048 and the
        // whole 684,489,830,400. The card (deepseek-ai/DeepSeek-V3 README.md) rounds the parts: "685B, which
        // includes 671B of the Main Model weights and 14B of the Multi-Token Prediction (MTP) Module weights".
        const int64_t copies = int64_t(2) * 129280 * 7168;
        QCOMPARE(cost.mtpParams + copies, int64_t(13'463'426'048));
        QCOMPARE(cost.params + cost.mtpParams + copies, int64_t(684'489'830'400));
    }

    void flopsPerToken()
    {
        // Dense tiny llama on one rank: h 256, ffn 512, 8 heads of 32 (4 KV heads), vocab 1024, seq 128, causal
        // flash attention; 4 sequences of 128 = 512 tokens per iteration. One module adds, per token, 6*N matmul
        // FLOPs (2 forward, 4 backward) for its matmul weights and the shared head N = eh_proj 2*256*256 = 131,072
        // + q, k, v, o 196,608 + gate, up, down 3*256*512 = 393,216 + head 256*1024 = 262,144 = 983,040, plus
        // attention over the 128 keys of 8 heads: forward (32 + 32) multiply-adds at 1 FLOP each (causal: half of
        // 2) + 5/2 softmax, backward 3*32 + 2*32 + 9/2 (FlashAttention-2 with the recomputed scores): 231 per
        // query-key pair, 8*128*231 = 236,544 per token.
        auto without = synth("tiny", {});
        auto with = synth("tiny", { "model.mtp_modules=1" });
        const int64_t perToken = 6 * int64_t(983'040) + 8 * 128 * 231;
        QCOMPARE(with->summaries[0].matmulFlops - without->summaries[0].matmulFlops, 512 * perToken);
        // The model's FLOPs include the modules (their norms, adds and losses too), as the rank's do.
        QCOMPARE(with->cost.flopsPerIteration - without->cost.flopsPerIteration,
            static_cast<double>(with->summaries[0].flops - without->summaries[0].flops));
        QVERIFY(with->cost.flopsPerIteration - without->cost.flopsPerIteration > 512.0 * perToken);
    }

    void lastPipelineStage()
    {
        // The modules run after the main loss on the last stage; the embedding they share is held there too.
        auto r = synth("tiny", { "model.layers=8", "model.mtp_modules=1", "parallelism.pp=2" });
        QVERIFY(!hasNode(r->classes[0], "mtp1."));
        QVERIFY(hasNode(r->classes[1], "mtp1.eh_proj"));
        QVERIFY(hasNode(r->classes[1], "mtp1.loss"));
        QVERIFY(hasNode(r->classes[1], "L9.attn")); // the module's decoder layer is layer L+1 = 9
        QVERIFY(std::any_of(r->warnings.begin(), r->warnings.end(),
            [](const Diagnostic& d) { return d.keyPath == "model.mtp_modules"; }));
    }
};

QTEST_GUILESS_MAIN(TestMtp)
#include "tst_mtp.moc"
