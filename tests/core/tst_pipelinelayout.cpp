// SPDX-License-Identifier: MIT
// parallelism.pipeline_layout: Megatron-Core's --pipeline-model-parallel-layout syntax, its checks, errors that point
// at the character, the stage plans it makes, and the shorthands (first/last stage layers, the embedding and loss
// counted as layers) as layouts.
#include "config/configloader.h"
#include "config/pipelinelayout.h"
#include "config/programsize.h"
#include "program/stageplan.h"
#include "synthhelpers.h"

#include <QtTest>

using namespace stagecraft;
using namespace stagecraft::test;

namespace {

QString chunksText(const PipelineLayout& layout)
{
    QStringList chunks;
    for (const auto& c : layout.chunks) {
        QString s;
        for (LayoutItem i : c)
            s += QLatin1Char(layoutChar(i));
        chunks << s;
    }
    return chunks.join(QLatin1Char('|'));
}

QString sizes(const StagePlan& plan)
{
    QStringList out;
    for (int32_t g = 0; g < plan.chunkCount(); ++g)
        out << QString::number(plan.chunkLayers(g));
    return out.join(QLatin1Char(','));
}

} // namespace

class TestPipelineLayout : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void parse_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("chunks");
        QTest::addColumn<QString>("printed");
        // The two examples of Megatron-Core (pipeline_parallel_layer_layout.py parse_str_to_list's docstring, and
        // the --pipeline-model-parallel-layout help in training/arguments.py, commit d98e8a64).
        QString deepseek = QStringLiteral("Ettt");
        for (int i = 0; i < 29; ++i)
            deepseek += QStringLiteral("|tt");
        deepseek += QStringLiteral("|m|L");
        QTest::newRow("docstring") << QStringLiteral("Ettt|(tt|)*29,m|L") << deepseek
                                   << QStringLiteral("Ettt|(tt|)*29m|L");
        QTest::newRow("help") << QStringLiteral("E|(t|)*3,m|m||L") << QStringLiteral("E|t|t|t|m|m||L")
                              << QStringLiteral("E|t|t|t|m|m||L");
        QTest::newRow("star on one item")
            << QStringLiteral("Et*4|t*4L") << QStringLiteral("Etttt|ttttL") << QStringLiteral("Et*4|t*4L");
        QTest::newRow("commas are cosmetic")
            << QStringLiteral("E,t,t|t,t,L") << QStringLiteral("Ett|ttL") << QStringLiteral("Ett|ttL");
        // Megatron-Core unrolls a group first and X*N after (parse_str_to_list's two patterns, in that order), so
        // X*N may stand inside a group; the printer writes that form for runs of equal long chunks.
        QTest::newRow("star inside a group")
            << QStringLiteral("Et*4|(t*4|)*3t*4L") << QStringLiteral("Etttt|tttt|tttt|tttt|ttttL")
            << QStringLiteral("Et*4|(t*4|)*3t*4L");
        QTest::newRow("zero repeats") << QStringLiteral("Et(t|)*0|tL") << QStringLiteral("Et|tL")
                                      << QStringLiteral("Et|tL");
    }

    void parse()
    {
        QFETCH(QString, text);
        QFETCH(QString, chunks);
        QFETCH(QString, printed);
        LayoutError error;
        const std::optional<PipelineLayout> layout = PipelineLayout::parse(text.toStdString(), error);
        QVERIFY2(layout, error.message.c_str());
        QCOMPARE(chunksText(*layout), chunks);
        QCOMPARE(QString::fromStdString(layout->toString()), printed);
        // What the printer writes reads back the same.
        const std::optional<PipelineLayout> again = PipelineLayout::parse(layout->toString(), error);
        QVERIFY(again && *again == *layout);
    }

    void syntaxErrors_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<int>("offset");
        QTest::addColumn<QString>("reason");
        QTest::newRow("unknown") << QStringLiteral("Et|tx|L") << 4 << QStringLiteral("unknown character 'x'");
        QTest::newRow("space") << QStringLiteral("Et| t|L") << 3 << QStringLiteral("unknown character ' '");
        QTest::newRow("control byte") << QStringLiteral("Et\x1b|L") << 2 << QStringLiteral("byte 0x1b");
        QTest::newRow("unclosed") << QStringLiteral("E(tt|L") << 1 << QStringLiteral("is not closed");
        QTest::newRow("nested") << QStringLiteral("E((t)*2)*2|L") << 2 << QStringLiteral("do not nest");
        QTest::newRow("group without repeats") << QStringLiteral("E(tt)|L") << 1 << QStringLiteral("followed by *N");
        QTest::newRow("star without number")
            << QStringLiteral("Et*|L") << 2 << QStringLiteral("expected a number of repeats");
        QTest::newRow("star first") << QStringLiteral("*3") << 0 << QStringLiteral("there is none");
        QTest::newRow("stray paren") << QStringLiteral("Et)|L") << 2 << QStringLiteral("without an opening");
        QTest::newRow("chained stars") << QStringLiteral("Et*2*3|L") << 4 << QStringLiteral("'*N*M'");
        QTest::newRow("huge") << QStringLiteral("E(t|)*9999999999|L") << 5 << QStringLiteral("at most 1,048,576");
    }

    void syntaxErrors()
    {
        QFETCH(QString, text);
        QFETCH(int, offset);
        QFETCH(QString, reason);
        LayoutError error;
        QVERIFY(!PipelineLayout::parse(text.toStdString(), error));
        QCOMPARE(int(error.offset), offset);
        QVERIFY2(QString::fromStdString(error.message).contains(reason), error.message.c_str());
    }

    void checks_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<int>("layers");
        QTest::addColumn<int>("mtp");
        QTest::addColumn<int>("pp");
        QTest::addColumn<int>("offset"); // -1: accepted
        QTest::addColumn<QString>("reason");
        QTest::newRow("fits") << QStringLiteral("Ett|ttL") << 4 << 0 << 2 << -1 << QString();
        QTest::newRow("empty leading chunk") << QStringLiteral("|Ett|tt|L") << 4 << 0 << 2 << -1 << QString();
        QTest::newRow("chunks not a multiple of pp")
            << QStringLiteral("Et|t|tL") << 3 << 0 << 2 << 0 << QStringLiteral("3 chunks");
        QTest::newRow("decoder count") << QStringLiteral("Ett|ttL") << 6 << 0 << 2 << 0
                                       << QStringLiteral("4 decoder layers (t), the model has layers=6");
        QTest::newRow("embedding not first")
            << QStringLiteral("tE|ttL") << 3 << 0 << 2 << 0 << QStringLiteral("first item must be the embedding");
        QTest::newRow("loss not last") << QStringLiteral("Et|tLt") << 3 << 0 << 2 << 5
                                       << QStringLiteral("last item must be the loss");
        QTest::newRow("two embeddings") << QStringLiteral("Et|EtL") << 2 << 0 << 2 << 3
                                        << QStringLiteral("a second embedding");
        QTest::newRow("decoder after mtp")
            << QStringLiteral("Et|mtL") << 2 << 1 << 2 << 4 << QStringLiteral("after an MTP module");
        // pp 2, 4 chunks: chunk 1 is stage 1's first virtual stage; MTP must be in a rank's last one.
        QTest::newRow("mtp not in the last virtual stage")
            << QStringLiteral("Et|tm||L") << 2 << 1 << 2 << 4 << QStringLiteral("last virtual stage of a rank");
        QTest::newRow("mtp count") << QStringLiteral("Et|tmL") << 2 << 2 << 2 << 4
                                   << QStringLiteral("1 MTP modules (m), the model has mtp_modules=2");
    }

    void checks()
    {
        QFETCH(QString, text);
        QFETCH(int, layers);
        QFETCH(int, mtp);
        QFETCH(int, pp);
        QFETCH(int, offset);
        QFETCH(QString, reason);
        LayoutError error;
        const std::optional<PipelineLayout> layout = PipelineLayout::parse(text.toStdString(), error);
        QVERIFY(layout);
        const std::optional<LayoutError> problem = checkLayout(*layout, layers, mtp, pp);
        if (offset < 0) {
            QVERIFY2(!problem, problem ? problem->message.c_str() : "");
            return;
        }
        QVERIFY(problem);
        QCOMPARE(int(problem->offset), offset);
        QVERIFY2(QString::fromStdString(problem->message).contains(reason), problem->message.c_str());
    }

    void errorPointsAtTheCharacter_data()
    {
        QTest::addColumn<QString>("line"); // the parallelism line with the layout
        QTest::addColumn<int>("column");
        QTest::addColumn<QString>("reason");
        // `  pipeline_layout: "Et*2|tx|L"`: the quote is column 20, the 'x' (offset 6) column 21 + 6 = 27.
        QTest::newRow("quoted") << QStringLiteral("  pipeline_layout: \"Et*2|tx|L\"\n") << 27
                                << QStringLiteral("unknown character 'x'");
        // Plain: 'E' is column 20; the 't' after the MTP module (offset 4) is column 24.
        QTest::newRow("plain, fit") << QStringLiteral("  pipeline_layout: Et|mtL\n") << 24
                                    << QStringLiteral("after an MTP module");
    }

    void errorPointsAtTheCharacter()
    {
        QFETCH(QString, line);
        QFETCH(int, column);
        QFETCH(QString, reason);
        const std::string yaml = "model:\n  preset: tiny\n  layers: 2\n  mtp_modules: 1\ntraining:\n  global_batch: 8\n"
                                 "parallelism:\n  pp: 2\n"
            + line.toStdString();
        const ConfigResult loaded = loadConfigText(yaml, "plan.yaml");
        QVERIFY(!loaded.config);
        bool found = false;
        for (const Diagnostic& d : loaded.diagnostics)
            if (d.keyPath == "parallelism.pipeline_layout") {
                found = true;
                QCOMPARE(d.file, std::string("plan.yaml"));
                QCOMPARE(d.line, 9);
                QCOMPARE(d.column, column);
                QVERIFY2(QString::fromStdString(d.message).contains(reason), d.message.c_str());
            }
        QVERIFY(found);
    }

    void stagePlanOfLayout()
    {
        // DeepSeek-V3 as Megatron-Core's docstring lays it out: 61 layers and one MTP module on pp 16 x 2 chunks.
        LayoutError error;
        const std::optional<PipelineLayout> layout = PipelineLayout::parse("Ettt|(tt|)*29,m|L", error);
        QVERIFY(layout && !checkLayout(*layout, 61, 1, 16));
        const StagePlan plan(*layout, 16);
        QCOMPARE(plan.virtualStages(), 2);
        QCOMPARE(plan.chunkCount(), 32);
        QCOMPARE(plan.chunkLayers(0), 3);
        for (int g = 1; g < 30; ++g)
            QCOMPARE(plan.chunkLayers(g), 2);
        QCOMPARE(plan.chunkLayers(30), 0);
        QCOMPARE(plan.chunkLayers(31), 0);
        QCOMPARE(plan.chunkOfLayer(-1), 0); // the embedding
        QCOMPARE(plan.chunkOfLayer(60), 29); // the last decoder layer: 3 + 28 * 2 = 59 before chunk 29
        QCOMPARE(plan.chunkOfLayer(61), 31); // the loss
        QCOMPARE(plan.chunkOfLayer(62), 30); // MTP module 1
        QCOMPARE(plan.stageOfChunk(30), 14);
        QCOMPARE(plan.localChunk(30), 1);
        // Stage 0 holds chunks 0 and 16: 3 + 2 layers.
        QCOMPARE(plan.stageLayers(0), 5);
        QVERIFY(plan.splitApplied());
    }

    void shorthandsAreLayouts_data()
    {
        QTest::addColumn<QString>("shorthand"); // parallelism keys
        QTest::addColumn<QString>("layout");
        QTest::addColumn<int>("layers");
        // Llama 3 405B (arXiv:2407.21783 §3.3.2) on pp 16 with 4 virtual stages and the embedding and the loss
        // counted as layers: 128 slots, 2 per chunk; the first chunk E t, the last t L.
        QTest::newRow("405B-shaped, v4") << QStringLiteral(
            "  pp: 16\n  schedule: interleaved\n  virtual_stages: 4\n  account_for_embedding_in_pipeline_split: true\n"
            "  account_for_loss_in_pipeline_split: true\n")
                                         << QStringLiteral("Et|(tt|)*62tL") << 126;
        QTest::newRow("first/last stage layers")
            << QStringLiteral("  pp: 4\n  first_stage_layers: 1\n  last_stage_layers: 1\n")
            << QStringLiteral("Et|tt|tt|tL") << 6;
        QTest::newRow("even") << QStringLiteral("  pp: 2\n") << QStringLiteral("Ettt|tttL") << 6;
    }

    void shorthandsAreLayouts()
    {
        // The shorthand and the layout it stands for give the same stage plan.
        QFETCH(QString, shorthand);
        QFETCH(QString, layout);
        QFETCH(int, layers);
        auto yaml = [&](const std::string& parallelism) {
            return "model:\n  preset: tiny\n  layers: " + std::to_string(layers)
                + "\ntraining:\n  global_batch: 64\nparallelism:\n" + parallelism;
        };
        const ConfigResult a = loadConfigText(yaml(shorthand.toStdString()), "a.yaml");
        QVERIFY(a.config);
        QString keys = shorthand;
        keys.remove(
            QRegularExpression(QStringLiteral("  (account_for|first_stage|last_stage|virtual_stages)[^\n]*\n")));
        const ConfigResult b = loadConfigText(
            yaml(keys.toStdString() + "  pipeline_layout: \"" + layout.toStdString() + "\"\n"), "b.yaml");
        for (const Diagnostic& d : b.diagnostics)
            qWarning("%s", d.toString().c_str());
        QVERIFY(b.config);
        const StagePlan pa = StagePlan::forConfig(*a.config), pb = StagePlan::forConfig(*b.config);
        QCOMPARE(QString::fromStdString(pa.layout().toString()), layout);
        QCOMPARE(sizes(pa), sizes(pb));
        QCOMPARE(pa.virtualStages(), pb.virtualStages());
        QCOMPARE(pa.lossChunk(), pb.lossChunk());
    }

    /// The program-size limit bounds the largest stage (config/programsize.h largestStageLayers()), computed from
    /// the config alone; it must be the layers that stage really holds in the stage plan.
    void largestStageLayers_data()
    {
        QTest::addColumn<QString>("parallelism");
        QTest::addColumn<int>("layers");
        QTest::addColumn<int>("largest"); // by hand
        QTest::newRow("even, 80 on pp 8") << QStringLiteral("  pp: 8\n") << 80 << 10; // 80 / 8
        QTest::newRow("even, 81 on pp 8") << QStringLiteral("  pp: 8\n") << 81 << 11; // ceil(81 / 8)
        // 80 - 2 - 2 = 76 over 2 middle stages: 38
        QTest::newRow("first/last 2") << QStringLiteral("  pp: 4\n  first_stage_layers: 2\n  last_stage_layers: 2\n")
                                      << 80 << 38;
        // (126 + 2) slots / 16 = 8 a stage; the first and last hold 7 layers and a slot
        QTest::newRow("405B account-for, v4")
            << QStringLiteral("  pp: 16\n  schedule: interleaved\n  virtual_stages: 4\n"
                              "  account_for_embedding_in_pipeline_split: true\n"
                              "  account_for_loss_in_pipeline_split: true\n")
            << 126 << 8;
        // E|(t|)*126L: 128 one-slot chunks on 16 stages; stage 1 holds chunks 1, 17, ..., 113: 8 layers
        QTest::newRow("405B layout") << QStringLiteral("  pp: 16\n  schedule: interleaved\n"
                                                       "  pipeline_layout: \"E|(t|)*126L\"\n")
                                     << 126 << 8;
        // Uneven interleaved chunks: stage 0 holds Et and t (2), stage 1 tt and tL (3)
        QTest::newRow("uneven chunks") << QStringLiteral("  pp: 2\n  schedule: interleaved\n"
                                                         "  pipeline_layout: \"Et|tt|t|tL\"\n")
                                       << 5 << 3;
        // DualPipe: a stage holds its chunk and the mirror one: 8 / 4 x 2
        QTest::newRow("dualpipe") << QStringLiteral("  pp: 4\n  schedule: dualpipe\n") << 8 << 4;
    }

    void largestStageLayers()
    {
        QFETCH(QString, parallelism);
        QFETCH(int, layers);
        QFETCH(int, largest);
        const ConfigResult r = loadConfigText("model:\n  preset: tiny\n  layers: " + std::to_string(layers)
                + "\ntraining:\n  global_batch: 64\nparallelism:\n" + parallelism.toStdString(),
            "l.yaml");
        for (const Diagnostic& d : r.diagnostics)
            if (d.severity == Severity::Error)
                qWarning("%s", d.toString().c_str());
        QVERIFY(r.config);
        QCOMPARE(stagecraft::largestStageLayers(*r.config), int64_t(largest));
        const StagePlan plan = StagePlan::forConfig(*r.config);
        int64_t most = 0;
        for (int32_t stage = 0; stage < int32_t(r.config->parallelism.pp); ++stage)
            most = std::max<int64_t>(most, plan.stageLayers(stage));
        QCOMPARE(most, int64_t(largest));
    }

    void layoutSynthesizesLikeItsShorthand()
    {
        // The tiny model on pp 2 x 2 chunks, embedding and loss counted as layers: (6 + 2) / 4 = 2 slots a chunk.
        // The layout written out synthesizes the same programs (every class's nodes, FLOPs and peak memory).
        const std::vector<std::string> common { "model.layers=6", "training.global_batch=8", "parallelism.pp=2",
            "parallelism.schedule=interleaved" };
        std::vector<std::string> a = common, b = common;
        a.insert(a.end(),
            { "parallelism.virtual_stages=2", "parallelism.account_for_embedding_in_pipeline_split=true",
                "parallelism.account_for_loss_in_pipeline_split=true" });
        b.push_back("parallelism.pipeline_layout=Et|tt|tt|tL");
        const auto ra = synth("tiny", a), rb = synth("tiny", b);
        QCOMPARE(ra->classes.size(), rb->classes.size());
        for (size_t c = 0; c < ra->classes.size(); ++c) {
            QCOMPARE(ra->summaries[c].nodes, rb->summaries[c].nodes);
            QCOMPARE(ra->summaries[c].flops, rb->summaries[c].flops);
            QCOMPARE(ra->summaries[c].peakBytes, rb->summaries[c].peakBytes);
        }
    }
};

QTEST_GUILESS_MAIN(TestPipelineLayout)
#include "tst_pipelinelayout.moc"
