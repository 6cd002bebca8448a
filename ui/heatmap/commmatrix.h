// SPDX-License-Identifier: MIT
#pragma once

#include <QImage>
#include <QString>
#include <array>
#include <cstdint>
#include <vector>

namespace stagecraft {

struct SynthesisResult;
class LogColorScale;

/// What the communication heatmap attributes to sender -> receiver pairs.
enum class CommKind : uint8_t
{
    AllReduce,
    AllGather,
    ReduceScatter,
    AllToAll,
    SendRecv
};
inline constexpr int kCommKindCount = 5;
/// "all-reduce", "all-gather", "reduce-scatter", "all-to-all", "send/recv".
QString commKindName(CommKind kind);

/// The resolution of the matrix: one cell row/column per rank, per node (cluster.gpus_per_node consecutive
/// ranks), or per coordinate of one mesh axis (all ranks sharing that coordinate).
enum class CommGrouping : uint8_t
{
    Rank,
    Node,
    TpRank,
    CpRank,
    EpRank,
    DpReplica, ///< the edp coordinate: the data-parallel replica (expert-data-parallel when ep > 1)
    Stage ///< the pp coordinate
};
inline constexpr int kCommGroupingCount = 7;
/// "rank", "node", "tp rank", "cp rank", "ep rank", "dp replica", "stage": the unit name of a grouping.
QString commGroupingName(CommGrouping grouping);

/// Matrices above this many units per side are not offered (memory grows with the square).
inline constexpr int64_t kMaxCommUnits = 512;
/// Ranks are shown one by one up to this world size (STYLE §3: ~256), nodes up to kMaxCommUnits.
inline constexpr int64_t kDefaultRankLimit = 256;

struct CommMatrixOptions
{
    CommGrouping grouping = CommGrouping::Rank;
    uint8_t kinds = 0x1f; ///< bit i: CommKind i is counted
    /// Bit i: Axis i (tp, cp, ep, edp, pp) is shown. A collective counts when every axis of its group is shown;
    /// send/recv counts when pp is shown.
    uint8_t axes = 0x1f;
    friend bool operator==(const CommMatrixOptions&, const CommMatrixOptions&) = default;
};

/// Bytes sent per iteration between display units (row = sender, column = receiver), attributed to pairs by the
/// communication algorithm: ring for all-reduce, all-gather and reduce-scatter (each member of a group of n sends to
/// its successor in ring order 2(n-1)/n * S, (n-1) * S and (n-1)/n * S for the summed comm_size S: the buffer for
/// all-reduce, the shard for all-gather, the full input for reduce-scatter); all-to-all pairwise (S/n to each other
/// member); send from the sender to its peer. Plain value; built by buildCommMatrix() on any thread.
struct CommMatrix
{
    CommMatrixOptions options;
    int64_t units = 0;
    int64_t world = 0;
    int64_t ranksPerUnit = 1; ///< for Node: gpus_per_node; for an axis grouping: world / degree
    std::vector<double> bytes; ///< units * units, row-major
    std::vector<std::array<double, kCommKindCount>> byKind; ///< units * units, per CommKind
    std::array<double, kCommKindCount> kindTotals {};
    double total = 0;
    double maxCell = 0;
    double minNonZeroCell = 0;

    double at(int64_t row, int64_t column) const
    {
        return bytes[static_cast<size_t>(row * units + column)];
    }
    const std::array<double, kCommKindCount>& kindsAt(int64_t row, int64_t column) const
    {
        return byKind[static_cast<size_t>(row * units + column)];
    }
    /// "rank 3", "node 0", "stage 1", "dp replica 5".
    QString unitLabel(int64_t unit) const;
    /// "rank 3 -> rank 4: 1.25 GiB (all-reduce 1.00 GiB, send/recv 256.00 MiB)"; "within node 0: ..." on the
    /// diagonal of a grouped matrix.
    QString cellText(int64_t row, int64_t column) const;
};

/// Number of display units of `grouping` for `result` (ranks, nodes rounded up, or the axis degree).
int64_t commUnitCount(const SynthesisResult& result, CommGrouping grouping);
/// The display unit of `rank` under `grouping` (the rank, rank / gpus_per_node, or the rank's axis coordinate).
int64_t commUnitOf(const SynthesisResult& result, CommGrouping grouping, int64_t rank);
/// Whether a grouping makes sense: at most kMaxCommUnits units, and more than one for an axis grouping.
bool commGroupingAvailable(const SynthesisResult& result, CommGrouping grouping);
/// Ranks when the world is at most kDefaultRankLimit, else nodes when at most kMaxCommUnits, else stages (or the
/// first available axis).
CommGrouping defaultCommGrouping(const SynthesisResult& result);

/// Builds the matrix in O(classes * nodes + world * distinct masks (* group size for all-to-all) + world * stages):
/// the per-class byte totals per (mask, type) and per peer stage are summed once, then every group of every mask
/// adds its members' contributions. Never touches Qt objects other than QString; safe on a worker thread.
/// Returns units == 0 when the grouping is not available.
CommMatrix buildCommMatrix(const SynthesisResult& result, const CommMatrixOptions& options);

/// One pixel per cell: zero cells `background`, others scale.color(bytes). RGB32. Safe on a worker thread.
QImage renderCommMatrixImage(const CommMatrix& matrix, const LogColorScale& scale, QColor background);

} // namespace stagecraft
