// SPDX-License-Identifier: MIT
#pragma once

#include <QByteArray>
#include <QList>
#include <QPointF>
#include <QString>
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

namespace stagecraft {

struct MemoryClassTimes;
struct MemoryTimeline;
struct MemoryTimes;
struct SynthesisResult;

/// STYLE §3: a memory chart series carries at most this many points.
inline constexpr int kMaxMemoryChartPoints = 2000;
/// The comparison outline carries a quarter of that: its envelope survives (each kept point is its bucket's
/// maximum) and the hit-test stroke Qt Charts builds for a line series costs 4x less.
inline constexpr int kMaxMemoryCompareChartPoints = kMaxMemoryChartPoints / 4;
/// The memory categories in chart order, bottom to top (MemoryCategory values: weights, gradients, optimizer,
/// activations, other, kv_cache).
inline constexpr int kMemoryChartCategories = 6;

/// The samples to keep when reducing `values` to at most `maxPoints` points: the indices are split into
/// `maxPoints` buckets of consecutive indices (sizes differ by at most one) and each bucket keeps the index of its
/// largest value (the first one on ties), so the global maximum always survives. Returns every index when
/// values.size() <= maxPoints. Ascending. maxPoints < 1 is treated as 1.
std::vector<int64_t> maximaSampleIndices(const std::vector<int64_t>& values, int maxPoints);

/// Everything the memory chart shows for one rank class, computed off the GUI thread (plain values only).
/// Bytes are per rank; y = bytes / unitBytes: GiB (2^30 bytes) when the largest peak reaches 1 GiB, else MiB
/// (2^20 bytes), so that small workloads stay readable. x is the step (program node index), or on the time axis the
/// estimated start of the step's node in ms (MemoryClassTimes, the Timeline tab's clock). On the time axis every
/// kept sample is a level held until the next one (two points: its start and the next sample's start; the last
/// holds until the rank's estimated finish), since the memory of a step lasts while its node runs.
struct MemoryChartData
{
    double unitBytes = 1024.0 * 1024.0 * 1024.0;
    QString unitName = QStringLiteral("GiB");
    int classIndex = -1;
    int compareClass = -1; ///< -1: no comparison
    int64_t steps = 0; ///< node count of the class's program
    bool timeAxis = false; ///< x = estimated time in ms, else step
    /// A compressed result's kept micro-batches and the iteration's (both 0 for a full result): the x axis then
    /// covers only the kept ones, and its title says so.
    qint64 keptMicroBatches = 0;
    qint64 microBatches = 0;
    double xMax = 1; ///< the right end of the x axis: the last step, or the latest estimated finish in ms
    /// The shown class's times (time axis only): maps a step to its x and an x back to the step running there.
    std::shared_ptr<const MemoryClassTimes> times;
    /// Cumulative tops of the stacked areas: upper[c] at a sample = sum of categories 0..c. All five lists share
    /// the same x values (the steps kept by maximaSampleIndices over the total, so upper[4] keeps the maxima).
    std::array<QList<QPointF>, kMemoryChartCategories> upper;
    std::array<int64_t, kMemoryChartCategories> categoryMaxBytes {}; ///< max over all steps of each category
    std::array<int64_t, kMemoryChartCategories> categoryMinBytes {}; ///< min over all steps of each category
    int64_t peakBytes = 0;
    int64_t peakStep = 0;
    double peakX = 0; ///< x of the peak: peakStep, or its node's estimated start in ms
    QString peakNode; ///< name of the program node running at the peak
    int64_t compareSteps = 0;
    QList<QPointF> compareTotal; ///< total of `compareClass`, down-sampled the same way
    int64_t comparePeakBytes = 0;
    int64_t comparePeakStep = 0;
    double comparePeakX = 0;
    /// The pinned baseline's total, of its class `baselineClass` (-1: none drawn), down-sampled like compareTotal
    /// and on the same axis.
    int baselineClass = -1;
    int64_t baselineSteps = 0;
    QList<QPointF> baselineTotal;
    int64_t baselinePeakBytes = 0;
    int64_t baselinePeakStep = 0;
    double baselinePeakX = 0;
    QString baselinePeakNode;
    QString baselineMissing; ///< why a baseline that was asked for is not drawn (no estimate on the time axis)
    /// Serving: the class's weights plus its KV cache when every sequence has sampled its last token
    /// (generationKvCacheBytes()): where the resident memory ends after the generation's decode steps, which the
    /// programs hold only the first of. 0 for training.
    int64_t generationEndBytes = 0;
    qint64 generationEndToken = 0; ///< prompt + output_tokens - 1: the positions cached at the last token
};

/// What buildMemoryChartData() draws. Copies of shared, immutable inputs: a worker may keep it.
struct MemoryChartRequest
{
    int classIndex = 0;
    int compareClass = -1; ///< a second class of the same result, drawn as a line (-1: none)
    /// The estimate's times of the result (computeMemoryTimes()): when set and ok, x is time in ms; else step.
    std::shared_ptr<const MemoryTimes> times;
    std::shared_ptr<const SynthesisResult> baseline; ///< the pinned baseline (null: none)
    int baselineClass = -1; ///< class of `baseline` drawn as a dashed line (-1: none)
    std::shared_ptr<const MemoryTimes> baselineTimes; ///< needed on the time axis; else the baseline is not drawn
    int maxPoints = kMaxMemoryChartPoints;
};

/// Down-samples class `classIndex` (and, when compareClass >= 0, the total of that class) to at most `maxPoints`
/// points per series. Pure function of its inputs; safe to call from a worker thread.
MemoryChartData buildMemoryChartData(
    const SynthesisResult& result, int classIndex, int compareClass, int maxPoints = kMaxMemoryChartPoints);
/// The same for a whole request: the time axis and the baseline's line as well.
MemoryChartData buildMemoryChartData(const SynthesisResult& result, const MemoryChartRequest& request);

/// The full-resolution timeline as CSV: a header line "step,weights,gradients,optimizer,activations,other,total"
/// (with ",kv_cache" before ",total" when the timeline holds a KV cache) and one line per step with bytes as
/// integers.
QByteArray memoryCsv(const MemoryTimeline& timeline);

/// Writes memoryCsv() to `path` through a temporary file renamed into place (QSaveFile), so a reader never sees
/// a half-written file. Returns false and sets `error` (when given) on failure.
bool saveMemoryCsv(const QString& path, const MemoryTimeline& timeline, QString* error = nullptr);

} // namespace stagecraft
