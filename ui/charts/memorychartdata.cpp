// SPDX-License-Identifier: MIT
#include "charts/memorychartdata.h"

#include "session/outputsaver.h"
#include "synthesis/synthesis.h"

#include <algorithm>

namespace stagecraft {

namespace {

    constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
    constexpr double kMiB = 1024.0 * 1024.0;
    static_assert(kMemoryChartCategories == kMemoryCategoryCount);

    std::vector<int64_t> totalsOf(const MemoryTimeline& timeline)
    {
        std::vector<int64_t> totals(timeline.series.size());
        for (size_t i = 0; i < totals.size(); ++i)
            totals[i] = timeline.total(i);
        return totals;
    }

} // namespace

std::vector<int64_t> maximaSampleIndices(const std::vector<int64_t>& values, int maxPoints)
{
    const int64_t n = static_cast<int64_t>(values.size());
    const int64_t buckets = std::min<int64_t>(n, std::max(maxPoints, 1));
    std::vector<int64_t> kept;
    kept.reserve(static_cast<size_t>(buckets));
    for (int64_t b = 0; b < buckets; ++b) {
        // Bucket b covers [b*n/buckets, (b+1)*n/buckets): contiguous, non-empty, sizes differ by at most one.
        const int64_t begin = b * n / buckets;
        const int64_t end = (b + 1) * n / buckets;
        int64_t best = begin;
        for (int64_t i = begin + 1; i < end; ++i)
            if (values[static_cast<size_t>(i)] > values[static_cast<size_t>(best)])
                best = i;
        kept.push_back(best);
    }
    return kept;
}

MemoryChartData buildMemoryChartData(const SynthesisResult& result, int classIndex, int compareClass, int maxPoints)
{
    MemoryChartData data;
    if (classIndex < 0 || static_cast<size_t>(classIndex) >= result.memory.size())
        return data;
    data.classIndex = classIndex;
    const MemoryTimeline& timeline = result.memory[static_cast<size_t>(classIndex)];
    const ClassProgram& program = result.classes[static_cast<size_t>(classIndex)];
    data.steps = static_cast<int64_t>(timeline.series.size());
    data.peakBytes = timeline.peakBytes;
    data.peakStep = timeline.peakStep;
    if (data.peakStep >= 0 && static_cast<size_t>(data.peakStep) < program.nodes.size())
        data.peakNode = QString::fromStdString(program.nodes[static_cast<size_t>(data.peakStep)].name);
    if (!timeline.series.empty())
        data.categoryMinBytes = timeline.series.front();
    for (const CategoryBytes& bytes : timeline.series)
        for (size_t c = 0; c < kMemoryChartCategories; ++c) {
            data.categoryMaxBytes[c] = std::max(data.categoryMaxBytes[c], bytes[c]);
            data.categoryMinBytes[c] = std::min(data.categoryMinBytes[c], bytes[c]);
        }
    const MemoryTimeline* other = compareClass >= 0 && static_cast<size_t>(compareClass) < result.memory.size()
        ? &result.memory[static_cast<size_t>(compareClass)]
        : nullptr;
    if (std::max(timeline.peakBytes, other ? other->peakBytes : 0) < static_cast<int64_t>(kGiB)) {
        data.unitBytes = kMiB;
        data.unitName = QStringLiteral("MiB");
    }

    // One sample set for all five stacked series: the bucket maxima of the total. Keeping each category's own
    // maxima instead would stack values from different steps into a top above the real peak.
    const std::vector<int64_t> kept = maximaSampleIndices(totalsOf(timeline), maxPoints);
    for (auto& series : data.upper)
        series.reserve(static_cast<qsizetype>(kept.size()));
    for (int64_t step : kept) {
        const CategoryBytes& bytes = timeline.series[static_cast<size_t>(step)];
        int64_t cumulative = 0;
        for (size_t c = 0; c < kMemoryChartCategories; ++c) {
            cumulative += bytes[c];
            data.upper[c].append(QPointF(static_cast<double>(step), static_cast<double>(cumulative) / data.unitBytes));
        }
    }

    if (other) {
        data.compareClass = compareClass;
        data.compareSteps = static_cast<int64_t>(other->series.size());
        data.comparePeakBytes = other->peakBytes;
        data.comparePeakStep = other->peakStep;
        const std::vector<int64_t> totals = totalsOf(*other);
        const std::vector<int64_t> keptOther =
            maximaSampleIndices(totals, std::max(1, maxPoints * kMaxMemoryCompareChartPoints / kMaxMemoryChartPoints));
        data.compareTotal.reserve(static_cast<qsizetype>(keptOther.size()));
        for (int64_t step : keptOther)
            data.compareTotal.append(QPointF(
                static_cast<double>(step), static_cast<double>(totals[static_cast<size_t>(step)]) / data.unitBytes));
    }
    return data;
}

QByteArray memoryCsv(const MemoryTimeline& timeline)
{
    QByteArray csv;
    csv.reserve(static_cast<qsizetype>(timeline.series.size()) * 64 + 64);
    csv += "step,weights,gradients,optimizer,activations,other,total\n";
    for (size_t i = 0; i < timeline.series.size(); ++i) {
        csv += QByteArray::number(static_cast<qint64>(i));
        int64_t total = 0;
        for (int64_t bytes : timeline.series[i]) {
            csv += ',';
            csv += QByteArray::number(static_cast<qint64>(bytes));
            total += bytes;
        }
        csv += ',';
        csv += QByteArray::number(static_cast<qint64>(total));
        csv += '\n';
    }
    return csv;
}

bool saveMemoryCsv(const QString& path, const MemoryTimeline& timeline, QString* error)
{
    return saveOutputFile(path, memoryCsv(timeline), error);
}

} // namespace stagecraft
