// SPDX-License-Identifier: MIT
// Pipeline stage plans: Megatron-LM's uneven splits (first/last stage layers, the embedding and the loss counted
// as layers, with and without virtual stages), the validator's errors for impossible splits, and the decoder
// layers that the synthesized stage programs really hold.
#include "config/configloader.h"
#include "program/stageplan.h"
#include "synthhelpers.h"

#include <QtTest>
#include <map>
#include <set>

using namespace stagecraft;
using namespace stagecraft::test;

namespace {

QString joined(const std::vector<int32_t>& values)
{
    QStringList parts;
    for (int32_t x : values)
        parts << QString::number(x);
    return parts.join(QLatin1Char(','));
}

std::vector<int32_t> chunkSizes(const StagePlan& plan)
{
    std::vector<int32_t> out;
    for (int32_t g = 0; g < plan.chunkCount(); ++g)
        out.push_back(plan.chunkLayers(g));
    return out;
}

std::string dump(const std::vector<Diagnostic>& diagnostics)
{
    std::string out;
    for (const Diagnostic& d : diagnostics)
        out += d.toString() + "\n";
    return out;
}

/// The tiny preset (llama, 8 heads, 4 KV heads) with a given depth and enough micro-batches (8) for the
/// interleaved schedule on up to 8 stages.
std::string tinyYaml(int layers, const std::string& parallelism)
{
    return "model:\n  preset: tiny\n  layers: " + std::to_string(layers)
        + "\ntraining:\n  global_batch: 8\n  micro_batch: 1\nparallelism:\n" + parallelism;
}

} // namespace

class TestStagePlan : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void layerRanges_data()
    {
        QTest::addColumn<int>("layers");
        QTest::addColumn<int>("pp");
        QTest::addColumn<int>("v");
        QTest::addColumn<int>("first");
        QTest::addColumn<int>("last");
        QTest::addColumn<bool>("embedding");
        QTest::addColumn<bool>("loss");
        QTest::addColumn<QString>("chunks"); // decoder layers per global chunk g (stage g % pp, local chunk g / pp)
        QTest::addColumn<bool>("applied");

        // Llama 3 405B (arXiv:2407.21783 §3.3.2: "we reduce one Transformer layer each from the first and the
        // last stages"): 126 layers on pp16, 7 on the first and 7 on the last stage; 126 - 14 = 112 layers over the
        // 14 middle stages = 8 each.
        QTest::newRow("llama3-405b pp16 7+7")
            << 126 << 16 << 1 << 7 << 7 << false << false << QStringLiteral("7,8,8,8,8,8,8,8,8,8,8,8,8,8,8,7") << true;
        // First only: the last stage is a middle stage. (10 - 2) / 2 = 4.
        QTest::newRow("first only") << 10 << 3 << 1 << 2 << 0 << false << false << QStringLiteral("2,4,4") << true;
        // Last only: (10 - 1) / 3 = 3 on stages 0-2.
        QTest::newRow("last only") << 10 << 4 << 1 << 0 << 1 << false << false << QStringLiteral("3,3,3,1") << true;
        // pp 2 with both ends given: no middle stage, 4 + 6 = 10.
        QTest::newRow("pp2 both ends") << 10 << 2 << 1 << 4 << 6 << false << false << QStringLiteral("4,6") << true;
        // Both flags: (30 + 2) / 4 = 8 slots per stage; the first and last give one slot to the embedding / loss.
        QTest::newRow("30 layers pp4 embedding+loss")
            << 30 << 4 << 1 << 0 << 0 << true << true << QStringLiteral("7,8,8,7") << true;
        // (31 + 1) / 4 = 8: the embedding takes a slot on stage 0 only.
        QTest::newRow("31 layers pp4 embedding")
            << 31 << 4 << 1 << 0 << 0 << true << false << QStringLiteral("7,8,8,8") << true;
        QTest::newRow("31 layers pp4 loss")
            << 31 << 4 << 1 << 0 << 0 << false << true << QStringLiteral("8,8,8,7") << true;
        // (3 + 1) / 4 = 1 slot per stage: stage 0 holds the embedding alone (Megatron-LM allows 0 decoder layers).
        QTest::newRow("embedding-only stage")
            << 3 << 4 << 1 << 0 << 0 << true << false << QStringLiteral("0,1,1,1") << true;
        // Interleaved, first 2 and last 2 over v = 2: each chunk of an end stage holds 2 / 2 = 1 layer; the middle
        // stages hold (20 - 4) / 2 = 8 each, 8 / 2 = 4 per chunk. Global chunks of virtual stage 0 come first.
        QTest::newRow("interleaved v2 first/last")
            << 20 << 4 << 2 << 2 << 2 << false << false << QStringLiteral("1,4,4,1,1,4,4,1") << true;
        // Interleaved with both flags: (14 + 2) / (4 * 2) = 2 slots per chunk; only the very first chunk (stage 0,
        // virtual stage 0) loses a slot to the embedding and only the very last (stage 3, virtual stage 1) to the
        // loss, as in Megatron-LM's get_num_layers_to_build.
        QTest::newRow("interleaved v2 embedding+loss")
            << 14 << 4 << 2 << 0 << 0 << true << true << QStringLiteral("1,2,2,2,2,2,2,1") << true;
        // The even split keeps Stagecraft's remainder-first rule (10 = 4 + 3 + 3).
        QTest::newRow("even remainder") << 10 << 3 << 1 << 0 << 0 << false << false << QStringLiteral("4,3,3") << false;
        // Impossible (10 - 3 = 7 middle layers over 2 stages): the even split, and the validator says why.
        QTest::newRow("impossible falls back")
            << 10 << 3 << 1 << 3 << 0 << false << false << QStringLiteral("4,3,3") << false;
    }

    void layerRanges()
    {
        QFETCH(int, layers);
        QFETCH(int, pp);
        QFETCH(int, v);
        QFETCH(int, first);
        QFETCH(int, last);
        QFETCH(bool, embedding);
        QFETCH(bool, loss);
        QFETCH(QString, chunks);
        QFETCH(bool, applied);

        const StagePlan plan(layers, pp, v, PipelineSplit { first, last, embedding, loss });
        QCOMPARE(plan.chunkCount(), pp * v);
        QCOMPARE(joined(chunkSizes(plan)), chunks);
        QCOMPARE(plan.splitApplied(), applied);
        // Consecutive ranges covering [0, layers), every layer in the chunk whose range holds it.
        QCOMPARE(plan.firstLayer(0), 0);
        QCOMPARE(plan.endLayer(plan.chunkCount() - 1), layers);
        for (int32_t g = 0; g < plan.chunkCount(); ++g)
            for (int32_t l = plan.firstLayer(g); l < plan.endLayer(g); ++l)
                QCOMPARE(plan.chunkOfLayer(l), g);
        QCOMPARE(plan.chunkOfLayer(-1), 0);
        QCOMPARE(plan.chunkOfLayer(layers), plan.chunkCount() - 1);
        int32_t total = 0;
        for (int32_t s = 0; s < pp; ++s)
            total += plan.stageLayers(s);
        QCOMPARE(total, layers);
    }

    void forConfig()
    {
        // The config's keys reach the plan; virtual stages count only with the interleaved schedule.
        Config config;
        config.model.layers = 126;
        config.parallelism.pp = 16;
        config.parallelism.firstStageLayers = 7;
        config.parallelism.lastStageLayers = 7;
        config.parallelism.virtualStages = 2; // 1f1b: ignored
        const StagePlan plan = StagePlan::forConfig(config);
        QCOMPARE(plan.virtualStages(), 1);
        QCOMPARE(plan.stageLayers(0), 7);
        QCOMPARE(plan.stageLayers(1), 8);
        QCOMPARE(plan.stageLayers(15), 7);
    }

    void balancedLayout_data()
    {
        QTest::addColumn<int>("layers");
        QTest::addColumn<int>("mtp");
        QTest::addColumn<int>("pp");
        QTest::addColumn<int>("v");
        QTest::addColumn<QString>("slotCounts"); // per global chunk: decoder layers + E + MTP + L
        QTest::addColumn<QString>("layout"); // the chunks, each item one character
        // 9 layers + E + L = 11 slots on 4 x 2 chunks: 1 each, 3 extra; the extras go to one chunk of each of
        // stages 2, 1 and 3 (middle stages from the last, then the last stage), the later local chunk: global
        // chunks 1 * 4 + 2 = 6, 5 and 7.
        QTest::newRow("9 layers pp4 v2") << 9 << 0 << 4 << 2 << "1,1,1,1,1,2,2,2"
                                         << "E|t|t|t|t|tt|tt|tL";
        // DeepSeek-V3's 61 layers with its MTP module on pp 8: 64 slots, 8 per stage, no extra.
        QTest::newRow("61 layers + MTP pp8") << 61 << 1 << 8 << 1 << "8,8,8,8,8,8,8,8"
                                             << "Ettttttt|tttttttt|tttttttt|tttttttt|tttttttt|tttttttt|tttttttt|"
                                                "ttttttmL";
        // 61 layers without MTP on pp 8: 63 slots, 7 each and 7 extra to stages 6, 5, 4, 3, 2, 1, 7: the first
        // stage (embedding) keeps 7 slots.
        QTest::newRow("61 layers pp8") << 61 << 0 << 8 << 1 << "7,8,8,8,8,8,8,8"
                                       << "Etttttt|tttttttt|tttttttt|tttttttt|tttttttt|tttttttt|tttttttt|tttttttL";
        // 80 layers on pp 4 x 3 = 12 chunks: 82 slots, 6 each, 10 extra: round 0 gives local chunk 2 of stages
        // 2, 1, 3, 0 (global 10, 9, 11, 8), round 1 local chunk 1 (6, 5, 7, 4), round 2 local chunk 0 of stages 2
        // and 1 (2, 1).
        QTest::newRow("80 layers pp4 v3") << 80 << 0 << 4 << 3 << "6,7,7,6,7,7,7,7,7,7,7,7"
                                          << "Ettttt|ttttttt|ttttttt|tttttt|ttttttt|ttttttt|ttttttt|ttttttt|ttttttt|"
                                             "ttttttt|ttttttt|ttttttL";
    }

    void balancedLayout()
    {
        QFETCH(int, layers);
        QFETCH(int, mtp);
        QFETCH(int, pp);
        QFETCH(int, v);
        QFETCH(QString, slotCounts);
        QFETCH(QString, layout);
        const std::optional<PipelineLayout> made = stagecraft::balancedLayout(layers, mtp, pp, v);
        QVERIFY(made);
        QStringList sizes, chunks;
        for (const auto& chunk : made->chunks) {
            sizes << QString::number(chunk.size());
            QString text;
            for (LayoutItem item : chunk)
                text += QLatin1Char(layoutChar(item));
            chunks << text;
        }
        QCOMPARE(sizes.join(QLatin1Char(',')), slotCounts);
        QCOMPARE(chunks.join(QLatin1Char('|')), layout);
        // What the printer makes parses back to the same chunks and fits the model and pipeline.
        LayoutError error;
        const std::optional<PipelineLayout> parsed = PipelineLayout::parse(made->toString(), error);
        QVERIFY2(parsed, error.message.c_str());
        QVERIFY(*parsed == *made);
        QVERIFY(!checkLayout(*made, layers, mtp, pp));
    }

    void balancedLayoutRefusesTooManyChunks()
    {
        // 5 layers + E + L = 7 slots cannot fill 8 chunks; 6 slots on 2 x 3 chunks leave the last chunk one slot,
        // too few for an MTP module and the loss.
        QVERIFY(!stagecraft::balancedLayout(5, 0, 8, 1));
        QVERIFY(!stagecraft::balancedLayout(3, 1, 2, 3));
        QVERIFY(stagecraft::balancedLayout(4, 0, 2, 3));
    }

    void validation_data()
    {
        QTest::addColumn<QString>("parallelism"); // YAML lines of the parallelism section
        QTest::addColumn<int>("layers");
        QTest::addColumn<QString>("keyPath"); // "" = no error
        QTest::addColumn<QString>("reason");

        QTest::newRow("llama3-405b shape")
            << QStringLiteral("  pp: 16\n  first_stage_layers: 7\n  last_stage_layers: 7\n") << 126 << QString()
            << QString();
        QTest::newRow("both flags pp4") << QStringLiteral(
            "  pp: 4\n  account_for_embedding_in_pipeline_split: true\n  account_for_loss_in_pipeline_split: true\n")
                                        << 30 << QString() << QString();
        // 14 layers on 4 * 2 chunks were rejected before; with both flags 14 + 2 = 16 = 8 * 2.
        QTest::newRow("interleaved with flags")
            << QStringLiteral("  pp: 4\n  schedule: interleaved\n  virtual_stages: 2\n"
                              "  account_for_embedding_in_pipeline_split: true\n"
                              "  account_for_loss_in_pipeline_split: true\n")
            << 14 << QString() << QString();
        // 12 layers on pp4 v2 without a split: 12 % 8 != 0; with 2 + 2 at the ends, 8 / 2 middle = 4, 4 / 2 = 2.
        QTest::newRow("interleaved with first/last")
            << QStringLiteral("  pp: 4\n  schedule: interleaved\n  virtual_stages: 2\n  first_stage_layers: 2\n"
                              "  last_stage_layers: 2\n")
            << 12 << QString() << QString();
        QTest::newRow("interleaved even, not divisible")
            << QStringLiteral("  pp: 4\n  schedule: interleaved\n  virtual_stages: 2\n") << 12
            << QStringLiteral("parallelism.virtual_stages")
            << QStringLiteral("layers=12 divisible by pp*virtual_stages = 4*2 = 8");
        QTest::newRow("first+last > layers")
            << QStringLiteral("  pp: 4\n  first_stage_layers: 6\n  last_stage_layers: 6\n") << 10
            << QStringLiteral("parallelism.last_stage_layers")
            << QStringLiteral("first_stage_layers + last_stage_layers = 6+6 = 12 exceeds layers=10");
        QTest::newRow("first > layers") << QStringLiteral("  pp: 4\n  first_stage_layers: 11\n") << 10
                                        << QStringLiteral("parallelism.first_stage_layers")
                                        << QStringLiteral("first_stage_layers=11 exceeds layers=10");
        // (10 - 3) = 7 layers over the 2 middle stages of pp 3.
        QTest::newRow("middle not divisible")
            << QStringLiteral("  pp: 3\n  first_stage_layers: 3\n") << 10
            << QStringLiteral("parallelism.first_stage_layers")
            << QStringLiteral("the 7 layers left by first_stage_layers=3 and last_stage_layers=0 are not divisible by "
                              "the 2 middle stages (pp=3)");
        QTest::newRow("no layer for the middle")
            << QStringLiteral("  pp: 3\n  first_stage_layers: 5\n  last_stage_layers: 5\n") << 10
            << QStringLiteral("parallelism.last_stage_layers")
            << QStringLiteral("first_stage_layers + last_stage_layers = 10 leave no layer for the 1 middle stage");
        QTest::newRow("pp2 ends short") << QStringLiteral("  pp: 2\n  first_stage_layers: 4\n  last_stage_layers: 4\n")
                                        << 10 << QStringLiteral("parallelism.last_stage_layers")
                                        << QStringLiteral(
                                               "first_stage_layers + last_stage_layers must equal layers=10");
        QTest::newRow("pp1") << QStringLiteral("  pp: 1\n  first_stage_layers: 4\n") << 10
                             << QStringLiteral("parallelism.first_stage_layers")
                             << QStringLiteral("first_stage_layers needs pipeline stages to split; pp=1");
        QTest::newRow("flag with first")
            << QStringLiteral("  pp: 4\n  first_stage_layers: 1\n  account_for_loss_in_pipeline_split: true\n") << 10
            << QStringLiteral("parallelism.account_for_loss_in_pipeline_split")
            << QStringLiteral("account_for_loss_in_pipeline_split cannot be combined with first_stage_layers");
        // 10 + 1 = 11 slots on 4 stages.
        QTest::newRow("embedding flag not divisible")
            << QStringLiteral("  pp: 4\n  account_for_embedding_in_pipeline_split: true\n") << 10
            << QStringLiteral("parallelism.account_for_embedding_in_pipeline_split")
            << QStringLiteral("with the embedding counted as a layer, layers=10 + 1 = 11 must be divisible by pp=4");
        // 12 + 2 = 14 slots on 4 * 2 chunks.
        QTest::newRow("flags interleaved not divisible")
            << QStringLiteral("  pp: 4\n  schedule: interleaved\n  virtual_stages: 2\n"
                              "  account_for_embedding_in_pipeline_split: true\n"
                              "  account_for_loss_in_pipeline_split: true\n")
            << 12 << QStringLiteral("parallelism.account_for_embedding_in_pipeline_split")
            << QStringLiteral("layers=12 + 2 = 14 must be divisible by pp*virtual_stages = 4*2 = 8");
        // First 3 over v = 2 chunks (last 4: 2 per chunk; middle (15 - 7) / 2 = 4: 2 per chunk).
        QTest::newRow("first not divisible by v")
            << QStringLiteral("  pp: 4\n  schedule: interleaved\n  virtual_stages: 2\n  first_stage_layers: 3\n"
                              "  last_stage_layers: 4\n")
            << 15 << QStringLiteral("parallelism.first_stage_layers")
            << QStringLiteral("first_stage_layers=3 is not divisible by virtual_stages=2");
        // (14 - 2 - 2) / 2 = 5 layers per middle stage over v = 2.
        QTest::newRow("middle not divisible by v")
            << QStringLiteral("  pp: 4\n  schedule: interleaved\n  virtual_stages: 2\n  first_stage_layers: 2\n"
                              "  last_stage_layers: 2\n")
            << 14 << QStringLiteral("parallelism.virtual_stages")
            << QStringLiteral("the 5 layers of each middle stage are not divisible by virtual_stages=2");
    }

    void validation()
    {
        QFETCH(QString, parallelism);
        QFETCH(int, layers);
        QFETCH(QString, keyPath);
        QFETCH(QString, reason);

        const std::string text = tinyYaml(layers, parallelism.toStdString());
        const ConfigResult result = loadConfigText(text, "split.yaml");
        std::vector<const Diagnostic*> errors;
        for (const Diagnostic& d : result.diagnostics)
            if (d.severity == Severity::Error)
                errors.push_back(&d);
        if (keyPath.isEmpty()) {
            QVERIFY2(errors.empty(), dump(result.diagnostics).c_str());
            QVERIFY(result.config);
            return;
        }
        QVERIFY(!result.config);
        QCOMPARE(int(errors.size()), 1);
        const Diagnostic& d = *errors.front();
        QCOMPARE(QString::fromStdString(d.keyPath), keyPath);
        QVERIFY2(QString::fromStdString(d.message).contains(reason), d.message.c_str());
        // Anchored at the key's value in the file: its line, and the column after "key: " (1-based).
        const std::string leaf = d.keyPath.substr(d.keyPath.find('.') + 1);
        const std::string needle = "\n  " + leaf + ": ";
        const size_t at = text.find(needle);
        QVERIFY2(at != std::string::npos, needle.c_str());
        const int line = int(std::count(text.begin(), text.begin() + long(at) + 1, '\n')) + 1;
        QCOMPARE(QString::fromStdString(d.file), QStringLiteral("split.yaml"));
        QCOMPARE(d.line, line);
        QCOMPARE(d.column, int(needle.size()));
    }

    void programsFollowTheSplit_data()
    {
        QTest::addColumn<QString>("sets");
        QTest::addColumn<int>("layers");
        QTest::addColumn<QString>("stages"); // decoder layers per (stage, local chunk), "s0c0,s0c1|s1c0,..."

        // 10 layers, pp 4, 1 + 1 at the ends: (10 - 2) / 2 = 4 on each middle stage.
        QTest::newRow("pp4 first/last") << QStringLiteral("parallelism.pp=4;parallelism.first_stage_layers=1;"
                                                          "parallelism.last_stage_layers=1")
                                        << 10 << QStringLiteral("1|4|4|1");
        // 6 layers, pp 4, both flags: (6 + 2) / 4 = 2 slots per stage, minus the embedding and the loss.
        QTest::newRow("pp4 embedding+loss")
            << QStringLiteral("parallelism.pp=4;parallelism.account_for_embedding_in_pipeline_split=true;"
                              "parallelism.account_for_loss_in_pipeline_split=true")
            << 6 << QStringLiteral("1|2|2|1");
        // 12 layers, pp 4, v 2, 2 + 2 at the ends: end chunks 2 / 2 = 1, middle chunks (12 - 4) / 2 / 2 = 2.
        QTest::newRow("pp4 v2 first/last")
            << QStringLiteral("parallelism.pp=4;parallelism.schedule=interleaved;parallelism.virtual_stages=2;"
                              "parallelism.first_stage_layers=2;parallelism.last_stage_layers=2")
            << 12 << QStringLiteral("1,1|2,2|2,2|1,1");
    }

    void programsFollowTheSplit()
    {
        QFETCH(QString, sets);
        QFETCH(int, layers);
        QFETCH(QString, stages);

        std::vector<std::string> overrides { "model.layers=" + std::to_string(layers), "training.global_batch=8",
            "training.micro_batch=1" };
        for (const QString& s : sets.split(QLatin1Char(';')))
            overrides.push_back(s.toStdString());
        const auto result = synth("tiny", overrides);
        const QStringList expected = stages.split(QLatin1Char('|'));
        QCOMPARE(qsizetype(result->classes.size()), expected.size());

        // Forward compute nodes of micro-batch 0 by (stage, chunk, layer), read from the programs.
        std::map<int32_t, int64_t> perLayer; // layer -> forward compute nodes (over all stages)
        int32_t nextLayer = 0;
        bool embeddingSeen = false, headSeen = false;
        for (size_t s = 0; s < result->classes.size(); ++s) {
            std::map<int32_t, std::set<int32_t>> chunkLayers;
            for (const ProgramNode& n : result->classes[s].nodes) {
                if (n.kind != NodeKind::Compute || n.pass != Pass::Forward || n.recompute || n.microBatch != 0)
                    continue;
                if (n.layer < 0) {
                    QCOMPARE(int(s), 0); // the embedding on the first stage
                    embeddingSeen = true;
                } else if (n.layer >= layers) {
                    QCOMPARE(s, result->classes.size() - 1); // final norm, LM head, loss on the last
                    headSeen = true;
                } else {
                    chunkLayers[n.chunk].insert(n.layer);
                    ++perLayer[n.layer];
                }
            }
            QStringList counts;
            for (const auto& [chunk, set] : chunkLayers)
                counts << QString::number(set.size());
            QCOMPARE(counts.join(QLatin1Char(',')), expected[qsizetype(s)]);
            // Local chunk 0 of every stage continues where the previous stage's chunk 0 ended (virtual stage 0
            // holds layers 0 .. L/v - 1 in stage order).
            if (!chunkLayers.empty() && !chunkLayers.begin()->second.empty()) {
                QCOMPARE(*chunkLayers.begin()->second.begin(), nextLayer);
                nextLayer = *chunkLayers.begin()->second.rbegin() + 1;
            }
        }
        QVERIFY(embeddingSeen);
        QVERIFY(headSeen);
        // Every decoder layer is built once, with the same ops wherever it sits.
        QCOMPARE(int(perLayer.size()), layers);
        for (const auto& [layer, count] : perLayer)
            QCOMPARE(count, perLayer.begin()->second);
    }
};

QTEST_GUILESS_MAIN(TestStagePlan)
#include "tst_stageplan.moc"
