// SPDX-License-Identifier: MIT
// The model graph: parameter counts against published figures, graph structure, and cost invariants.
#include "config/configloader.h"
#include "model/modelcost.h"
#include "model/modelgraph.h"

#include <QtTest>

using namespace stagecraft;

class TestModel : public QObject
{
    Q_OBJECT

private:
    static Config preset(const char* name)
    {
        ConfigResult r = loadConfigOrPreset(name);
        if (!r.config) {
            for (const Diagnostic& d : r.diagnostics)
                qWarning("%s", d.toString().c_str());
            qFatal("preset %s does not load", name);
        }
        return *r.config;
    }

    static ModelCost cost(const Config& c)
    {
        auto graph = buildModelGraph(c.model, c.training.precision);
        ModelCost out;
        std::string error;
        if (!computeModelCost(*graph, c, out, error))
            qFatal("cost failed: %s", error.c_str());
        return out;
    }

private Q_SLOTS:
    void presetParameters_data()
    {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<qint64>("published");
        // Exact counts: the total of the safetensors shards on each model card (Hugging Face "Model size"
        // rounds them: 6.74B, 8.03B, 70.6B, 406B, 46.7B).
        QTest::newRow("llama2-7b") << "llama2-7b" << qint64(6'738'415'616); // meta-llama/Llama-2-7b-hf
        QTest::newRow("llama3-8b") << "llama3-8b" << qint64(8'030'261'248); // meta-llama/Meta-Llama-3-8B
        QTest::newRow("llama3-70b") << "llama3-70b" << qint64(70'553'706'496); // meta-llama/Meta-Llama-3-70B
        QTest::newRow("llama3-405b") << "llama3-405b" << qint64(405'853'388'800); // meta-llama/Llama-3.1-405B
        QTest::newRow("mixtral-8x7b") << "mixtral-8x7b" << qint64(46'702'792'704); // mistralai/Mixtral-8x7B-v0.1
        // GPT-3 175B: Brown et al. 2020 publish only "175.0B" (Table 2.1). Narayanan et al. 2021 (SC'21) §5.1
        // count this architecture as P = 12*l*h^2 * (1 + 13/(12h) + (V + s)/(12*l*h)) with l = 96, h = 12288,
        // V = 50257, s = 2048: 173,946,175,488 + 15,335,424 + 642,723,840 = 174,604,234,752. That formula
        // leaves out the final LayerNorm (weight and bias, 2h = 24,576), which the model has.
        QTest::newRow("gpt3-175b") << "gpt3-175b" << qint64(174'604'234'752 + 2 * 12288);
        // tiny (llama, l=2, h=256, ffn=512, heads=8, kv_heads=4, vocab=1024), by hand: head_dim 32, kv dim 128;
        // per layer q 256*256 + k,v 2*256*128 + o 256*256 + mlp 3*256*512 + 2 norms 2*256 = 590,336;
        // 2 layers 1,180,672; embedding + untied head 2*1024*256 = 524,288; final norm 256 => 1,705,216.
        QTest::newRow("tiny") << "tiny" << qint64(1'705'216);
    }

    void presetParameters()
    {
        QFETCH(QString, preset);
        QFETCH(qint64, published);
        const Config c = TestModel::preset(preset.toUtf8().constData());
        QCOMPARE(cost(c).params, published);
    }

    void gpt3RoundsToPublished()
    {
        // Brown et al. 2020, Table 2.1: 175.0B parameters (rounded to 0.1B).
        const double params = static_cast<double>(cost(preset("gpt3-175b")).params);
        QVERIFY(std::abs(params - 175.0e9) < 0.5e9);
    }

    void mixtralActiveParameters()
    {
        // Jiang et al. 2024 (Mixtral of Experts): "13B active parameters" per token (12.9B): the total minus
        // the 6 of 8 experts a token does not use: 46,702,792,704 - 32 layers * 6 * 3*4096*14336.
        const Config c = preset("mixtral-8x7b");
        const int64_t unused = 32LL * 6 * 3 * 4096 * 14336;
        const int64_t active = cost(c).params - unused;
        QCOMPARE(active, qint64(12'879'925'248));
    }

    void graphStructure()
    {
        // llama: per layer 2 RMSNorm weights + q, k, v, o + gate, up, down = 9 weights; plus embedding, final
        // norm and untied head = 3.
        const Config c = preset("tiny");
        auto g = buildModelGraph(c.model, c.training.precision);
        QCOMPARE(static_cast<int>(g->weights.size()), 2 * 9 + 3);
        QCOMPARE(g->weights.size(), g->weightGrads.size());
        // One optimizer op per weight, after every backward op.
        QCOMPARE(static_cast<int>(g->ops.size()) - g->firstOptimizerOp, static_cast<int>(g->weights.size()));
        // Every op input is a weight, an input, or produced by an earlier op (topological order).
        std::vector<bool> produced(g->tensors.size(), false);
        for (const Op& op : g->ops) {
            for (const Operand& in : op.inputs) {
                const Tensor& t = g->tensor(in.tensor);
                const bool external =
                    t.role == TensorRole::Weight || t.role == TensorRole::Input || t.role == TensorRole::WeightGrad;
                QVERIFY2(external || produced[static_cast<size_t>(in.tensor.value)],
                    (op.name + " reads " + t.name + " before it is produced").c_str());
                QCOMPARE(in.labels.size(), t.dims.size());
            }
            for (const Operand& out : op.outputs)
                produced[static_cast<size_t>(out.tensor.value)] = true;
        }
        // Every weight gradient is produced by some backward op.
        for (TensorId wg : g->weightGrads)
            QVERIFY2(produced[static_cast<size_t>(wg.value)], g->tensor(wg).name.c_str());
    }

    void gptHasBiasesAndPositionEmbedding()
    {
        // gpt: per layer 2 LayerNorms (weight + bias) + q, k, v, o, fc1, fc2 (weight + bias) = 16; plus token
        // and position embeddings and the final LayerNorm (2); the head is tied to the token embedding.
        Config c = preset("gpt3-175b");
        c.model.layers = 2;
        auto g = buildModelGraph(c.model, c.training.precision);
        QCOMPARE(static_cast<int>(g->weights.size()), 2 * 16 + 2 + 2);
    }

    void embeddingIsAGather()
    {
        // STAGE defect 2: the embedding must cost no matmul FLOPs (a gather), and its backward is a
        // scatter-add of B*S*h elements with no gradient for the token ids.
        const Config c = preset("tiny");
        auto g = buildModelGraph(c.model, c.training.precision);
        const Binding b = modelBinding(c);
        int seen = 0;
        for (const Op& op : g->ops) {
            if (op.kind != OpKind::Embedding)
                continue;
            ++seen;
            const int64_t flops = op.flops().evaluate(b).value;
            const int64_t tokensTimesHidden = c.training.microBatch * c.model.seqLen * c.model.hidden;
            QCOMPARE(flops, op.pass == Pass::Forward ? 0 : tokensTimesHidden);
            QCOMPARE(op.outputs.size(), size_t(1));
        }
        QCOMPARE(seen, 2);
    }
};

QTEST_GUILESS_MAIN(TestModel)
#include "tst_model.moc"
