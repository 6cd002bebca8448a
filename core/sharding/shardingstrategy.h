// SPDX-License-Identifier: MIT
#pragma once

#include "config/config.h"
#include "mesh/mesh.h"
#include "model/modelgraph.h"
#include "sharding/layout.h"

#include <array>
#include <optional>
#include <string>

namespace stagecraft {

/// The parallelism plan as a sharding strategy: which mesh axes split which index in which region, and how
/// weights, gradients and optimizer state are held (ZeRO stage). Layouts of every operand follow from it, so no
/// layout is written per variant. Immutable; thread-safe.
///
/// Rules (Megatron-LM's, the reference for each):
/// - Batch is split over dp (= ep x edp), Seq over cp everywhere; with sequence parallelism Seq is also split
///   over tp in the Sequence and Router regions (norms, residuals, dropout, router), not inside attention/MLP.
/// - Heads and KV heads (Attention), Ffn and SharedFfn (Mlp), ExpertFfn (Expert) and Vocab (Vocab) over tp.
/// - SeqKV (keys/values inside attention) is never split: under cp, K and V are gathered.
/// - Token (an inference decode step's one position) is never split; its routed tokens (TokenCapacity) are split
///   like Capacity, without tp on the token side.
/// - Experts over ep in the Expert region; tokens routed to experts (Capacity) over dp and cp on the token side
///   (Router) and over edp and cp on the expert side, so dispatch and combine are all-to-alls over ep.
/// - With parallelism.expert_tp = 1 < tp (Megatron-LM's MoE parallel folding with expert_tensor_parallel_size 1)
///   ExpertFfn is not split: each tp rank holds whole experts and Capacity is split over tp on the expert side
///   too, so no tp collective runs around the experts and expert gradients reduce over edp, cp and tp. expert_tp
///   between 1 and tp is rejected by validation (the mesh has no sub-group of tp).
/// - A weight's home layout is its layout in its first forward use; with ZeRO-3 it is additionally a flat shard
///   over its data-parallel axes (dp and cp for dense weights, edp and cp for experts, and tp for whole experts).
class ShardingStrategy
{
public:
    ShardingStrategy() = default;
    ShardingStrategy(const Config& config, const Mesh& mesh);

    AxisMask splitMask(Region region, Index index) const
    {
        return m_split[static_cast<size_t>(region)][static_cast<size_t>(index)];
    }
    /// Layout of an operand with `labels` as an op in `region` expects it (no partial sums).
    Layout operandLayout(Region region, const std::vector<Index>& labels) const;
    /// Layout an op produces for its output `outputIndex`, before any Add propagation: the operand layout plus
    /// partial sums over the axes that split a contracted index.
    Layout producedLayout(const Op& op, size_t outputIndex) const;
    /// The axes over which a weight is replicated for data parallelism (and sharded by ZeRO).
    AxisMask weightDataMask(const Tensor& weight) const;
    int zeroStage() const
    {
        return m_zero;
    }

    /// Symbolic local extent of an index in a region, e.g. Seq/(cp*tp).
    Expr localExtentExpr(Region region, Index index) const;
    /// The mesh degrees localExtentExpr() divides by: the first `count` of `symbols`.
    struct Divisors
    {
        std::array<SymbolId, 3> symbols {};
        int count = 0;
    };
    Divisors localExtentDivisors(Region region, Index index) const;

private:
    std::array<std::array<AxisMask, kIndexCount>, 7> m_split {};
    int m_zero = 0;
    bool m_wholeExperts = false; ///< expert_tp = 1 < tp: routed experts are not split by tp
};

/// Integer values of every global extent and every (region, index) local extent for one plan, evaluated once
/// from the symbolic expressions. A non-integer or overflowing extent is an error naming the expression and the
/// values ("Head/tp = 32/3 is not an integer").
class ExtentTable
{
public:
    /// Indices that `graph` does not use (experts in a dense model) are left at 0 and never fail.
    static std::optional<ExtentTable> evaluate(
        const ShardingStrategy& strategy, const ModelGraph& graph, const Binding& binding, std::string& error);

    int64_t global(Index i) const
    {
        return m_global[static_cast<size_t>(i)];
    }
    int64_t local(Region r, Index i) const
    {
        return m_local[static_cast<size_t>(r)][static_cast<size_t>(i)];
    }
    /// Multiplies the global extent of `index` and its local extent in every region by `factor` (> 0), rounding
    /// up: the tokens the hottest rank's experts receive when routing is not uniform (see hottestExpertLoad()).
    void scale(Index index, double factor);

private:
    std::array<int64_t, kIndexCount> m_global {};
    std::array<std::array<int64_t, kIndexCount>, 7> m_local {};
};

} // namespace stagecraft
