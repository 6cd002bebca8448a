// SPDX-License-Identifier: MIT
#include "charts/memorychartdata.h"

#include "charts/memorytimes.h"
#include "estimate/servingestimate.h"
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

    QString nodeName(const ClassProgram& program, int64_t step)
    {
        if (step < 0 || static_cast<size_t>(step) >= program.nodes.size())
            return {};
        return QString::fromStdString(program.nodes[static_cast<size_t>(step)].name);
    }

    /// x of `step`: the step itself, or its node's estimated start in ms.
    double xOf(const MemoryClassTimes* times, int64_t step)
    {
        if (!times)
            return static_cast<double>(step);
        if (step < 0 || static_cast<size_t>(step) >= times->startS.size())
            return 0;
        return times->startS[static_cast<size_t>(step)] * 1000.0;
    }

    /// The steps a series keeps and where each is drawn: from x0 (the step, or its start in ms) to x1 (time axis
    /// only: the next kept step's start; the last one holds until the rank's finish).
    struct SampledSteps
    {
        std::vector<int64_t> steps;
        std::vector<double> x0;
        std::vector<double> x1;
    };

    SampledSteps sampleSteps(const std::vector<int64_t>& totals, const MemoryClassTimes* times, int maxPoints)
    {
        SampledSteps sampled;
        if (!times || times->byStart.size() != totals.size()) {
            sampled.steps = maximaSampleIndices(totals, maxPoints);
            for (int64_t step : sampled.steps)
                sampled.x0.push_back(static_cast<double>(step));
            return sampled;
        }
        // In start order, two points per kept step (the level and where it ends) within maxPoints.
        std::vector<int64_t> inOrder(totals.size());
        for (size_t k = 0; k < totals.size(); ++k)
            inOrder[k] = totals[static_cast<size_t>(times->byStart[k])];
        const std::vector<int64_t> kept = maximaSampleIndices(inOrder, std::max(1, maxPoints / 2));
        for (size_t j = 0; j < kept.size(); ++j) {
            const int64_t step = times->byStart[static_cast<size_t>(kept[j])];
            sampled.steps.push_back(step);
            sampled.x0.push_back(xOf(times, step));
            sampled.x1.push_back(j + 1 < kept.size() ? xOf(times, times->byStart[static_cast<size_t>(kept[j + 1])])
                                                     : times->finishS * 1000.0);
        }
        return sampled;
    }

    QList<QPointF> totalLine(const MemoryTimeline& timeline, const MemoryClassTimes* times, int maxPoints, double unit)
    {
        const std::vector<int64_t> totals = totalsOf(timeline);
        const SampledSteps kept = sampleSteps(totals, times, maxPoints);
        QList<QPointF> line;
        line.reserve(static_cast<qsizetype>(kept.steps.size() * (times ? 2 : 1)));
        for (size_t k = 0; k < kept.steps.size(); ++k) {
            const double y = static_cast<double>(totals[static_cast<size_t>(kept.steps[k])]) / unit;
            line.append(QPointF(kept.x0[k], y));
            if (!kept.x1.empty())
                line.append(QPointF(kept.x1[k], y));
        }
        return line;
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
    MemoryChartRequest request;
    request.classIndex = classIndex;
    request.compareClass = compareClass;
    request.maxPoints = maxPoints;
    return buildMemoryChartData(result, request);
}

MemoryChartData buildMemoryChartData(const SynthesisResult& result, const MemoryChartRequest& request)
{
    MemoryChartData data;
    const int classIndex = request.classIndex;
    const int maxPoints = request.maxPoints;
    if (classIndex < 0 || static_cast<size_t>(classIndex) >= result.memory.size())
        return data;
    data.classIndex = classIndex;
    const MemoryTimeline& timeline = result.memory[static_cast<size_t>(classIndex)];
    const ClassProgram& program = result.classes[static_cast<size_t>(classIndex)];
    data.steps = static_cast<int64_t>(timeline.series.size());
    data.peakBytes = timeline.peakBytes;
    data.peakStep = timeline.peakStep;
    data.peakNode = nodeName(program, data.peakStep);
    if (isInference(result.config) && runsDecode(result.config.inference)
        && static_cast<size_t>(classIndex) < result.summaries.size()) {
        data.generationEndBytes = result.summaries[static_cast<size_t>(classIndex)].weightBytes
            + generationKvCacheBytes(result, static_cast<size_t>(classIndex));
        data.generationEndToken = promptTokens(result.config) + result.config.inference.outputTokens - 1;
    }
    if (!timeline.series.empty())
        data.categoryMinBytes = timeline.series.front();
    for (const CategoryBytes& bytes : timeline.series)
        for (size_t c = 0; c < kMemoryChartCategories; ++c) {
            data.categoryMaxBytes[c] = std::max(data.categoryMaxBytes[c], bytes[c]);
            data.categoryMinBytes[c] = std::min(data.categoryMinBytes[c], bytes[c]);
        }
    const int compareClass = request.compareClass;
    const MemoryTimeline* other = compareClass >= 0 && static_cast<size_t>(compareClass) < result.memory.size()
        ? &result.memory[static_cast<size_t>(compareClass)]
        : nullptr;

    const MemoryTimes* times = request.times && request.times->ok ? request.times.get() : nullptr;
    data.timeAxis = times && static_cast<size_t>(classIndex) < times->classes.size();
    if (result.compression) {
        data.keptMicroBatches = result.compression->keptMicroBatches;
        data.microBatches = result.compression->microBatches;
    }
    if (data.timeAxis)
        data.times = times->classes[static_cast<size_t>(classIndex)];
    auto classTimes = [](const MemoryTimes* t, int c) -> const MemoryClassTimes* {
        return t && c >= 0 && static_cast<size_t>(c) < t->classes.size() ? t->classes[static_cast<size_t>(c)].get()
                                                                         : nullptr;
    };

    const SynthesisResult* baseline = request.baseline.get();
    const int baselineClass = request.baselineClass;
    const MemoryTimeline* baselineTimeline =
        baseline && baselineClass >= 0 && static_cast<size_t>(baselineClass) < baseline->memory.size()
        ? &baseline->memory[static_cast<size_t>(baselineClass)]
        : nullptr;
    const MemoryClassTimes* baselineTimes = nullptr;
    if (baselineTimeline && data.timeAxis) {
        const MemoryTimes* bt = request.baselineTimes.get();
        baselineTimes = bt && bt->ok ? classTimes(bt, baselineClass) : nullptr;
        if (!baselineTimes) {
            data.baselineMissing =
                !bt ? QStringLiteral("its estimate is still running") : QStringLiteral("no estimate: ") + bt->error;
            baselineTimeline = nullptr;
        }
    }

    int64_t largest = std::max(timeline.peakBytes, data.generationEndBytes);
    if (other)
        largest = std::max(largest, other->peakBytes);
    if (baselineTimeline)
        largest = std::max(largest, baselineTimeline->peakBytes);
    if (largest < static_cast<int64_t>(kGiB)) {
        data.unitBytes = kMiB;
        data.unitName = QStringLiteral("MiB");
    }

    // One sample set for all five stacked series: the bucket maxima of the total. Keeping each category's own
    // maxima instead would stack values from different steps into a top above the real peak.
    const SampledSteps kept = sampleSteps(totalsOf(timeline), data.times.get(), maxPoints);
    for (auto& series : data.upper)
        series.reserve(static_cast<qsizetype>(kept.steps.size() * (data.timeAxis ? 2 : 1)));
    for (size_t k = 0; k < kept.steps.size(); ++k) {
        const CategoryBytes& bytes = timeline.series[static_cast<size_t>(kept.steps[k])];
        int64_t cumulative = 0;
        for (size_t c = 0; c < kMemoryChartCategories; ++c) {
            cumulative += bytes[c];
            const double y = static_cast<double>(cumulative) / data.unitBytes;
            data.upper[c].append(QPointF(kept.x0[k], y));
            if (data.timeAxis)
                data.upper[c].append(QPointF(kept.x1[k], y));
        }
    }
    data.peakX = xOf(data.times.get(), data.peakStep);
    data.xMax =
        data.timeAxis ? data.times->finishS * 1000.0 : static_cast<double>(std::max<int64_t>(data.steps, 2) - 1);

    const int lineMaxPoints = std::max(1, maxPoints * kMaxMemoryCompareChartPoints / kMaxMemoryChartPoints);
    if (other) {
        const MemoryClassTimes* otherTimes = data.timeAxis ? classTimes(times, compareClass) : nullptr;
        data.compareClass = compareClass;
        data.compareSteps = static_cast<int64_t>(other->series.size());
        data.comparePeakBytes = other->peakBytes;
        data.comparePeakStep = other->peakStep;
        data.comparePeakX = xOf(otherTimes, other->peakStep);
        data.compareTotal = totalLine(*other, otherTimes, lineMaxPoints, data.unitBytes);
        data.xMax = std::max(data.xMax,
            otherTimes ? otherTimes->finishS * 1000.0
                       : static_cast<double>(std::max<int64_t>(data.compareSteps, 2) - 1));
    }
    if (baselineTimeline) {
        data.baselineClass = baselineClass;
        data.baselineSteps = static_cast<int64_t>(baselineTimeline->series.size());
        data.baselinePeakBytes = baselineTimeline->peakBytes;
        data.baselinePeakStep = baselineTimeline->peakStep;
        data.baselinePeakX = xOf(baselineTimes, baselineTimeline->peakStep);
        data.baselinePeakNode = nodeName(baseline->classes[static_cast<size_t>(baselineClass)], data.baselinePeakStep);
        data.baselineTotal = totalLine(*baselineTimeline, baselineTimes, lineMaxPoints, data.unitBytes);
        data.xMax = std::max(data.xMax,
            baselineTimes ? baselineTimes->finishS * 1000.0
                          : static_cast<double>(std::max<int64_t>(data.baselineSteps, 2) - 1));
    }
    return data;
}

QByteArray memoryCsv(const MemoryTimeline& timeline)
{
    QByteArray csv;
    csv.reserve(static_cast<qsizetype>(timeline.series.size()) * 64 + 64);
    // The kv_cache column only for a timeline that has a KV cache (inference): training files keep their columns.
    const auto cacheColumn = static_cast<size_t>(MemoryCategory::KvCache);
    const bool cache = std::any_of(timeline.series.begin(), timeline.series.end(),
        [&](const CategoryBytes& live) { return live[cacheColumn] != 0; });
    csv += cache ? "step,weights,gradients,optimizer,activations,other,kv_cache,total\n"
                 : "step,weights,gradients,optimizer,activations,other,total\n";
    for (size_t i = 0; i < timeline.series.size(); ++i) {
        csv += QByteArray::number(static_cast<qint64>(i));
        int64_t total = 0;
        for (size_t c = 0; c < timeline.series[i].size(); ++c) {
            const int64_t bytes = timeline.series[i][c];
            if (c == cacheColumn && !cache)
                continue;
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
