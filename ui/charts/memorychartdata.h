// SPDX-License-Identifier: MIT
#pragma once

#include <QByteArray>
#include <QList>
#include <QPointF>
#include <QString>
#include <array>
#include <cstdint>
#include <vector>

namespace stagecraft {

struct MemoryTimeline;
struct SynthesisResult;

/// STYLE §3: a memory chart series carries at most this many points.
inline constexpr int kMaxMemoryChartPoints = 2000;
/// The comparison outline carries a quarter of that: its envelope survives (each kept point is its bucket's
/// maximum) and the hit-test stroke Qt Charts builds for a line series costs 4x less.
inline constexpr int kMaxMemoryCompareChartPoints = kMaxMemoryChartPoints / 4;
/// The memory categories in chart order, bottom to top (MemoryCategory values: weights, gradients, optimizer,
/// activations, other).
inline constexpr int kMemoryChartCategories = 5;

/// The samples to keep when reducing `values` to at most `maxPoints` points: the indices are split into
/// `maxPoints` buckets of consecutive indices (sizes differ by at most one) and each bucket keeps the index of its
/// largest value (the first one on ties), so the global maximum always survives. Returns every index when
/// values.size() <= maxPoints. Ascending. maxPoints < 1 is treated as 1.
std::vector<int64_t> maximaSampleIndices(const std::vector<int64_t>& values, int maxPoints);

/// Everything the memory chart shows for one rank class, computed off the GUI thread (plain values only).
/// Bytes are per rank; chart coordinates are x = step (program node index), y = bytes / unitBytes: GiB (2^30
/// bytes) when the larger peak reaches 1 GiB, else MiB (2^20 bytes), so that small workloads stay readable.
struct MemoryChartData
{
    double unitBytes = 1024.0 * 1024.0 * 1024.0;
    QString unitName = QStringLiteral("GiB");
    int classIndex = -1;
    int compareClass = -1; ///< -1: no comparison
    int64_t steps = 0; ///< node count of the class's program
    /// Cumulative tops of the stacked areas: upper[c] at a sample = sum of categories 0..c. All five lists share
    /// the same x values (the steps kept by maximaSampleIndices over the total, so upper[4] keeps the maxima).
    std::array<QList<QPointF>, kMemoryChartCategories> upper;
    std::array<int64_t, kMemoryChartCategories> categoryMaxBytes {}; ///< max over all steps of each category
    std::array<int64_t, kMemoryChartCategories> categoryMinBytes {}; ///< min over all steps of each category
    int64_t peakBytes = 0;
    int64_t peakStep = 0;
    QString peakNode; ///< name of the program node running at the peak
    int64_t compareSteps = 0;
    QList<QPointF> compareTotal; ///< total of `compareClass`, down-sampled the same way
    int64_t comparePeakBytes = 0;
    int64_t comparePeakStep = 0;
};

/// Down-samples class `classIndex` (and, when compareClass >= 0, the total of that class) to at most `maxPoints`
/// points per series. Pure function of its inputs; safe to call from a worker thread.
MemoryChartData buildMemoryChartData(
    const SynthesisResult& result, int classIndex, int compareClass, int maxPoints = kMaxMemoryChartPoints);

/// The full-resolution timeline as CSV: a header line "step,weights,gradients,optimizer,activations,other,total"
/// and one line per step with bytes as integers.
QByteArray memoryCsv(const MemoryTimeline& timeline);

/// Writes memoryCsv() to `path` through a temporary file renamed into place (QSaveFile), so a reader never sees
/// a half-written file. Returns false and sets `error` (when given) on failure.
bool saveMemoryCsv(const QString& path, const MemoryTimeline& timeline, QString* error = nullptr);

} // namespace stagecraft
