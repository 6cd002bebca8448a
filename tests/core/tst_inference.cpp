// SPDX-License-Identifier: MIT
// Inference workloads (issue #18, phase 1): the `workload` key and the `inference` section.
#include "config/config.h"
#include "config/configloader.h"
#include "config/configvalidator.h"
#include "config/configwriter.h"
#include "config/diagnostic.h"

#include <QTest>
#include <algorithm>
#include <string>
#include <vector>

using namespace stagecraft;

namespace {

QString qs(std::string_view text)
{
    return QString::fromUtf8(text.data(), qsizetype(text.size()));
}

QString dump(const std::vector<Diagnostic>& diagnostics)
{
    QString out;
    for (const Diagnostic& d : diagnostics)
        out += QLatin1String("\n  ") + qs(d.toString());
    return out;
}

/// A serving config of the tiny preset's model, as a user would write it (line numbers matter to the tests).
const char* const kServing = R"(name: tiny-serving
workload: inference
model:
  preset: tiny
inference:
  batch: 8
  prompt_tokens: 64
  output_tokens: 32
  phases: both
  decode_steps: 3
  kv_cache_dtype: fp8
  block_size: 16
parallelism:
  tp: 2
  pp: 2
)";

} // namespace

class TestInference : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void loadsServingConfig()
    {
        const ConfigResult r = loadConfigText(kServing, "serving.yaml");
        QVERIFY2(r.config, qPrintable(dump(r.diagnostics)));
        QVERIFY2(r.diagnostics.empty(), qPrintable(dump(r.diagnostics)));
        const Config& c = *r.config;
        QCOMPARE(c.workload, Workload::Inference);
        QCOMPARE(c.inference.batch, int64_t(8));
        QCOMPARE(c.inference.promptTokens, int64_t(64));
        QCOMPARE(c.inference.outputTokens, int64_t(32));
        QCOMPARE(c.inference.phases, InferencePhases::Both);
        QCOMPARE(c.inference.decodeSteps, int64_t(3));
        QCOMPARE(c.inference.kvCacheDtype, KvCacheDtype::Fp8);
        QCOMPARE(c.inference.blockSize, int64_t(16));
        QCOMPARE(decodeSteps(c.inference), int64_t(3));
        QCOMPARE(promptTokens(c), int64_t(64));
    }

    void defaults()
    {
        // Without the section: one sequence of model.seq_len tokens, 128 output tokens of which 4 decode steps are
        // written (min(4, output_tokens - 1)), bf16 cache in blocks of 16. No training section is needed.
        const ConfigResult r = loadConfigText("workload: inference\nmodel:\n  preset: tiny\n", "defaults.yaml");
        QVERIFY2(r.config, qPrintable(dump(r.diagnostics)));
        QCOMPARE(r.config->inference, InferenceConfig {});
        QCOMPARE(promptTokens(*r.config), r.config->model.seqLen);
        QCOMPARE(decodeSteps(r.config->inference), int64_t(4));
        InferenceConfig few;
        few.outputTokens = 3;
        QCOMPARE(decodeSteps(few), int64_t(2));
        few.phases = InferencePhases::Prefill;
        QCOMPARE(decodeSteps(few), int64_t(0));
        // A training config is unchanged by the new keys: workload defaults to training.
        const ConfigResult tiny = loadConfigOrPreset("tiny");
        QVERIFY(tiny.config);
        QCOMPARE(tiny.config->workload, Workload::Training);
    }

    void errors_data()
    {
        QTest::addColumn<QString>("from");
        QTest::addColumn<QString>("to");
        QTest::addColumn<int>("line");
        QTest::addColumn<int>("column");
        QTest::addColumn<QString>("keyPath");
        QTest::addColumn<QString>("reason");
        auto row = [](const char* name, const char* from, const char* to, int line, int column, const char* key,
                       const char* reason) {
            QTest::newRow(name) << QString::fromUtf8(from) << QString::fromUtf8(to) << line << column
                                << QString::fromUtf8(key) << QString::fromUtf8(reason);
        };
        // Parse errors point at the value; semantic errors at the key's value too (anchored by the loader).
        row("workload", "workload: inference", "workload: serving", 2, 11, "workload",
            "expected one of training, inference, found \"serving\"");
        row("batch zero", "batch: 8", "batch: 0", 6, 10, "inference.batch", "expected a positive integer, found 0");
        row("phases", "phases: both", "phases: decoding", 9, 11, "inference.phases",
            "expected one of prefill, decode, both, found \"decoding\"");
        row("kv dtype", "kv_cache_dtype: fp8", "kv_cache_dtype: int4", 11, 19, "inference.kv_cache_dtype",
            "expected one of bf16, fp8, found \"int4\"");
        row("block size", "block_size: 16", "block_size: -16", 12, 15, "inference.block_size",
            "expected a positive integer, found -16");
        row("unknown key", "block_size: 16", "block_sz: 16", 12, 3, "inference.block_sz",
            "unknown key 'block_sz' in inference");
        row("batch not divisible", "batch: 8", "batch: 5", 6, 10, "inference.batch",
            "batch=5 is not divisible by dp*pp = 1*2 = 2");
        row("decode steps", "decode_steps: 3", "decode_steps: 40", 10, 17, "inference.decode_steps",
            "decode_steps=40 exceeds output_tokens - 1 = 31");
        row("one output token", "output_tokens: 32", "output_tokens: 1", 8, 18, "inference.output_tokens",
            "phases both needs output_tokens >= 2");
        row("cp with decode", "pp: 2", "pp: 2\n  cp: 2", 16, 7, "parallelism.cp",
            "decode steps of one token are not context-parallel here");
        row("zero", "pp: 2", "pp: 2\n  zero: 1", 16, 9, "parallelism.zero", "inference holds its weights whole");
        row("interleaved", "pp: 2", "pp: 2\n  schedule: interleaved\n  virtual_stages: 2", 17, 19,
            "parallelism.virtual_stages", "the interleaved schedule (virtual_stages > 1) is for training");
        row("recompute", "parallelism:", "training:\n  recompute: full\nparallelism:", 14, 14, "training.recompute",
            "inference has no backward, expected none");
    }

    void errors()
    {
        QFETCH(QString, from);
        QFETCH(QString, to);
        QFETCH(int, line);
        QFETCH(int, column);
        QFETCH(QString, keyPath);
        QFETCH(QString, reason);
        std::string yaml = kServing;
        const size_t at = yaml.find(from.toStdString());
        QVERIFY(at != std::string::npos);
        yaml.replace(at, size_t(from.size()), to.toStdString());
        const ConfigResult r = loadConfigText(yaml, "bad-serving.yaml");
        QVERIFY(!r.config);
        const auto it = std::find_if(r.diagnostics.begin(), r.diagnostics.end(), [&](const Diagnostic& d) {
            return d.keyPath == keyPath.toStdString() && d.message.find(reason.toStdString()) != std::string::npos;
        });
        QVERIFY2(it != r.diagnostics.end(), qPrintable(dump(r.diagnostics)));
        QCOMPARE(it->severity, Severity::Error);
        QCOMPARE(it->file, std::string("bad-serving.yaml"));
        QCOMPARE(it->line, line);
        QCOMPARE(it->column, column);
        // The CLI form: file:line:col: error: message.
        QVERIFY2(qs(it->toString()).startsWith(QStringLiteral("bad-serving.yaml:%1:%2: error: ").arg(line).arg(column)),
            qPrintable(qs(it->toString())));
    }

    void roundTrip_data()
    {
        QTest::addColumn<QString>("yaml");
        QTest::newRow("serving") << qs(kServing);
        QTest::newRow("prefill only, cp2")
            << QStringLiteral("workload: inference\nmodel:\n  preset: tiny\ninference:\n  phases: prefill\n"
                              "  batch: 2\nparallelism:\n  cp: 2\n  tp: 2\n  sequence_parallel: true\n");
        QTest::newRow("decode only") << QStringLiteral(
            "workload: inference\nmodel:\n  preset: tiny\ninference:\n  phases: decode\n  batch: 4\n"
            "  output_tokens: 9\n  block_size: 32\n");
    }

    void roundTrip()
    {
        // toYaml() writes every inference key (and no training.global_batch, which serving does not use); the
        // loader reads it back to the same config and the same text.
        QFETCH(QString, yaml);
        const ConfigResult first = loadConfigText(yaml.toStdString(), "first.yaml");
        QVERIFY2(first.config, qPrintable(dump(first.diagnostics)));
        const std::string written = toYaml(*first.config);
        QVERIFY(written.find("\nworkload: inference\n") != std::string::npos);
        QVERIFY(written.find("global_batch") == std::string::npos);
        const ConfigResult second = loadConfigText(written, "second.yaml");
        QVERIFY2(second.config && second.diagnostics.empty(), qPrintable(dump(second.diagnostics) + qs(written)));
        QVERIFY(*second.config == *first.config);
        QCOMPARE(qs(toYaml(*second.config)), qs(written));
    }
};

QTEST_GUILESS_MAIN(TestInference)
#include "tst_inference.moc"
