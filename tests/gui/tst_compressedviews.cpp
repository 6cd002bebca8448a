// SPDX-License-Identifier: MIT
// The views that sum a result's programs themselves (the Communication tab's rank matrix and group table) must
// show the full iteration for a compressed result (issue 17 item 12): each is built from the full synthesis and from
// the compressed one of the same plan and compared, cell by cell. Bytes are doubles summed in another order (the
// compressed side weights kept and probe programs): 1e-9 relative; counts are integers: equal.
#include "config/configloader.h"
#include "heatmap/commmatrix.h"
#include "models/groupsmodel.h"
#include "synthesis/synthesis.h"

#include <QAbstractItemModelTester>
#include <QtTest>
#include <cmath>

using namespace stagecraft;

namespace {

std::shared_ptr<const SynthesisResult> run(const std::vector<std::string>& sets, bool compress)
{
    ConfigResult loaded = loadConfigOrPreset("llama3-8b", sets);
    if (!loaded.config)
        qFatal("config does not load");
    SynthesisOptions options;
    options.compressMicroBatches = compress;
    SynthesisOutcome out = synthesize(*loaded.config, nullptr, nullptr, options);
    if (!out.result)
        qFatal("synthesis failed");
    return out.result;
}

// pp 2 x tp 2 x dp 2, 1F1B, 40 micro-batches per rank (6 kept): TP collectives, sends and the DP reduction.
const std::vector<std::string> kPlan { "model.layers=4", "parallelism.pp=2", "parallelism.tp=2", "parallelism.dp=2",
    "parallelism.cp=1", "parallelism.ep=1", "parallelism.zero=1", "parallelism.schedule=1f1b",
    "parallelism.virtual_stages=1", "parallelism.sequence_parallel=true", "training.global_batch=80" };

} // namespace

class TestCompressedViews : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void commMatrixMatchesFull()
    {
        const auto full = run(kPlan, false);
        const auto compressed = run(kPlan, true);
        QVERIFY(compressed->compressed());
        const CommMatrix a = buildCommMatrix(*full, CommMatrixOptions {});
        const CommMatrix b = buildCommMatrix(*compressed, CommMatrixOptions {});
        QCOMPARE(b.units, a.units);
        QCOMPARE(b.bytes.size(), a.bytes.size());
        QVERIFY(a.total > 0);
        for (size_t i = 0; i < a.bytes.size(); ++i) {
            QVERIFY2(std::abs(a.bytes[i] - b.bytes[i]) <= 1e-9 * std::max(1.0, std::abs(a.bytes[i])),
                qPrintable(QStringLiteral("cell %1: %2 vs %3")
                               .arg(i)
                               .arg(a.bytes[i], 0, 'g', 17)
                               .arg(b.bytes[i], 0, 'g', 17)));
            for (size_t k = 0; k < a.byKind[i].size(); ++k)
                QVERIFY(std::abs(a.byKind[i][k] - b.byKind[i][k]) <= 1e-9 * std::max(1.0, std::abs(a.byKind[i][k])));
        }
        QVERIFY(std::abs(a.total - b.total) <= 1e-9 * a.total);
    }

    void groupTableMatchesFull()
    {
        GroupsModel full, compressed;
        QAbstractItemModelTester tester(&compressed);
        full.setResult(run(kPlan, false));
        compressed.setResult(run(kPlan, true));
        QCOMPARE(compressed.rowCount(), full.rowCount());
        QVERIFY(full.rowCount() > 0);
        for (int row = 0; row < full.rowCount(); ++row)
            for (int column : { int(GroupsModel::CollectivesColumn), int(GroupsModel::BytesColumn) })
                QCOMPARE(compressed.index(row, column).data(GroupsModel::RawValueRole),
                    full.index(row, column).data(GroupsModel::RawValueRole));
    }
};

QTEST_GUILESS_MAIN(TestCompressedViews)
#include "tst_compressedviews.moc"
