// SPDX-License-Identifier: MIT
#include "sharding/shardingstrategy.h"

#include "model/modelsymbols.h"

#include <algorithm>
#include <cmath>

namespace stagecraft {

namespace {
    constexpr AxisMask kTp = axisBit(Axis::Tp);
    constexpr AxisMask kCp = axisBit(Axis::Cp);
    constexpr AxisMask kEp = axisBit(Axis::Ep);
    constexpr AxisMask kEdp = axisBit(Axis::Edp);
    constexpr int kRegionCount = 7;

    constexpr size_t idx(Index i)
    {
        return static_cast<size_t>(i);
    }
    constexpr size_t idx(Region r)
    {
        return static_cast<size_t>(r);
    }
} // namespace

ShardingStrategy::ShardingStrategy(const Config& config, const Mesh& mesh)
    : m_zero(config.parallelism.zero)
    , m_wholeExperts(
          config.model.family == Family::Moe && config.parallelism.expertTp == 1 && mesh.degree(Axis::Tp) > 1)
{
    const bool sp = config.parallelism.sequenceParallel;
    // Expert tensor parallelism 1 (Megatron-LM's parallel folding, expert_tensor_parallel_size=1): each tp rank
    // holds whole experts of its ep shard and runs them on its own share of the tokens, so the expert side splits
    // the routed tokens over tp instead of the expert FFN.
    const AxisMask expertFfnSplit = m_wholeExperts ? AxisMask(0) : kTp;
    for (int r = 0; r < kRegionCount; ++r) {
        auto& s = m_split[static_cast<size_t>(r)];
        const Region region = static_cast<Region>(r);
        s[idx(Index::Batch)] = kDpMask;
        s[idx(Index::Seq)] = kCp;
        if (sp && (region == Region::Sequence || region == Region::Router))
            s[idx(Index::Seq)] |= kTp;
        if (region == Region::Attention) {
            s[idx(Index::Heads)] = kTp;
            s[idx(Index::KVHeads)] = kTp;
        }
        if (region == Region::Mlp) {
            s[idx(Index::Ffn)] = kTp;
            s[idx(Index::SharedFfn)] = kTp;
        }
        if (region == Region::Vocab)
            s[idx(Index::Vocab)] = kTp;
        if (region == Region::Expert) {
            s[idx(Index::Experts)] = kEp;
            s[idx(Index::ExpertFfn)] = expertFfnSplit;
            s[idx(Index::Capacity)] = kEdp | kCp | (m_wholeExperts ? kTp : AxisMask(0));
            s[idx(Index::TokenCapacity)] = s[idx(Index::Capacity)];
        }
        if (region == Region::Router) {
            s[idx(Index::Capacity)] = kDpMask | kCp | (sp ? kTp : AxisMask(0));
            // A decode step's one token per sequence is never split over tp (no sequence parallelism), nor its
            // routed tokens on the token side.
            s[idx(Index::TokenCapacity)] = kDpMask | kCp;
        }
    }
    // The optimizer region sees weights in their home layouts; its split table is the union of the model
    // regions' weight splits (Heads, KVHeads, Ffn, SharedFfn, Vocab, Experts, ExpertFfn), batch-free.
    auto& opt = m_split[idx(Region::Optimizer)];
    opt = {};
    opt[idx(Index::Heads)] = kTp;
    opt[idx(Index::KVHeads)] = kTp;
    opt[idx(Index::Ffn)] = kTp;
    opt[idx(Index::SharedFfn)] = kTp;
    opt[idx(Index::Vocab)] = kTp;
    opt[idx(Index::Experts)] = kEp;
    opt[idx(Index::ExpertFfn)] = expertFfnSplit;
    opt[idx(Index::Seq)] = kCp | (sp ? kTp : AxisMask(0)); // the position embedding (gpt) lives in Sequence
}

Layout ShardingStrategy::operandLayout(Region region, const std::vector<Index>& labels) const
{
    Layout l;
    for (size_t d = 0; d < labels.size(); ++d) {
        const AxisMask m = splitMask(region, labels[d]);
        for (int a = 0; a < kSpatialAxisCount; ++a) {
            if (!(m & (1u << a)))
                continue;
            AxisLayout& al = l.axes[static_cast<size_t>(a)];
            if (al.state == AxisState::Replicated)
                al = AxisLayout { AxisState::Split, static_cast<int8_t>(d) };
        }
    }
    return l;
}

Layout ShardingStrategy::producedLayout(const Op& op, size_t outputIndex) const
{
    const Operand& out = op.outputs[outputIndex];
    Layout l = operandLayout(op.region, out.labels);
    switch (op.kind) {
    case OpKind::Dispatch:
    case OpKind::Combine:
    case OpKind::Softmax:
    case OpKind::Rope:
    case OpKind::Activation:
    case OpKind::Dropout:
    case OpKind::Optimizer:
        return l; // permutations and pointwise kinds reduce nothing across ranks
    default:
        break;
    }
    auto present = [&](Index i) { return std::find(out.labels.begin(), out.labels.end(), i) != out.labels.end(); };
    AxisMask partial = 0;
    for (Index i : op.space) {
        if (present(i))
            continue;
        if (i == Index::Heads && present(Index::KVHeads))
            continue; // grouped-query attention: query heads map onto their KV head, both split alike
        partial |= splitMask(op.region, i);
    }
    for (int a = 0; a < kSpatialAxisCount; ++a)
        if (partial & (1u << a))
            l.axes[static_cast<size_t>(a)] = AxisLayout { AxisState::Partial, -1 };
    return l;
}

AxisMask ShardingStrategy::weightDataMask(const Tensor& weight) const
{
    // Whole experts are replicated over tp as well: their gradients reduce over every rank holding the same shard.
    if (weight.isExpertWeight)
        return kEdp | kCp | (m_wholeExperts ? kTp : AxisMask(0));
    return kDpMask | kCp;
}

ShardingStrategy::Divisors ShardingStrategy::localExtentDivisors(Region region, Index index) const
{
    const auto& s = ModelSymbols::get();
    const AxisMask m = splitMask(region, index);
    Divisors out;
    auto add = [&out](SymbolId id) { out.symbols[static_cast<size_t>(out.count++)] = id; };
    if (m & kTp)
        add(s.tp);
    if (m & kCp)
        add(s.cp);
    if ((m & kDpMask) == kDpMask)
        add(s.dp);
    else if (m & kEp)
        add(s.ep);
    else if (m & kEdp)
        add(s.edp);
    return out;
}

Expr ShardingStrategy::localExtentExpr(Region region, Index index) const
{
    const Divisors d = localExtentDivisors(region, index);
    Expr divisor(1);
    for (int k = 0; k < d.count; ++k)
        divisor *= Expr::symbol(d.symbols[static_cast<size_t>(k)]);
    return indexExtent(index) / divisor;
}

std::optional<ExtentTable> ExtentTable::evaluate(
    const ShardingStrategy& strategy, const ModelGraph& graph, const Binding& binding, std::string& error)
{
    std::array<bool, kIndexCount> used {};
    for (const Op& op : graph.ops) {
        for (Index i : op.space)
            used[idx(i)] = true;
        for (const Operand& o : op.inputs)
            for (Index i : o.labels)
                used[idx(i)] = true;
    }
    // Which indices each region's ops use: a split that does not divide an extent is an error only where an op
    // of that region uses it (a decode-only graph has Seq in its resident caches alone, never in the sequence-
    // parallel regions).
    std::array<std::array<bool, kIndexCount>, kRegionCount> usedIn {};
    for (const Op& op : graph.ops) {
        auto& u = usedIn[idx(op.region)];
        for (Index i : op.space)
            u[idx(i)] = true;
        for (const Operand& o : op.inputs)
            for (Index i : o.labels)
                u[idx(i)] = true;
        for (const Operand& o : op.outputs)
            for (Index i : o.labels)
                u[idx(i)] = true;
    }
    ExtentTable t;
    for (int i = 0; i < kIndexCount; ++i) {
        if (!used[static_cast<size_t>(i)])
            continue;
        const Expr& e = indexExtent(static_cast<Index>(i));
        EvalResult r = e.evaluate(binding);
        if (!r.ok()) {
            error = describeEvalError(e, r);
            return std::nullopt;
        }
        t.m_global[static_cast<size_t>(i)] = r.value;
    }
    for (int reg = 0; reg < kRegionCount; ++reg) {
        for (int i = 0; i < kIndexCount; ++i) {
            if (!used[static_cast<size_t>(i)])
                continue;
            // The exact quotient global / degrees when it is an integer (what evaluating the expression gives);
            // otherwise the expression is evaluated for its error message.
            const ShardingStrategy::Divisors d =
                strategy.localExtentDivisors(static_cast<Region>(reg), static_cast<Index>(i));
            int64_t divisor = 1;
            for (int k = 0; k < d.count; ++k) {
                const SymbolId id = d.symbols[static_cast<size_t>(k)];
                const bool fits = binding.isBound(id) && binding.value(id) > 0 && binding.value(id) <= INT32_MAX;
                divisor = fits && divisor <= INT32_MAX ? divisor * binding.value(id) : 0;
            }
            const int64_t global = t.m_global[static_cast<size_t>(i)];
            if (divisor > 0 && global >= 0 && global % divisor == 0) {
                t.m_local[static_cast<size_t>(reg)][static_cast<size_t>(i)] = global / divisor;
                continue;
            }
            const Expr e = strategy.localExtentExpr(static_cast<Region>(reg), static_cast<Index>(i));
            EvalResult r = e.evaluate(binding);
            if (!r.ok() && !usedIn[static_cast<size_t>(reg)][static_cast<size_t>(i)])
                continue; // no op of the region splits it: left 0
            if (!r.ok()) {
                error = describeEvalError(e, r);
                return std::nullopt;
            }
            t.m_local[static_cast<size_t>(reg)][static_cast<size_t>(i)] = r.value;
        }
    }
    return t;
}

void ExtentTable::scale(Index index, double factor)
{
    auto scaled = [factor](int64_t v) {
        // The slack absorbs the rounding of factors such as 1.1 (1.1 * 10 is 11.000000000000002 in binary).
        return static_cast<int64_t>(std::ceil(static_cast<double>(v) * factor - 1e-9));
    };
    m_global[idx(index)] = scaled(m_global[idx(index)]);
    for (auto& region : m_local)
        region[idx(index)] = scaled(region[idx(index)]);
}

} // namespace stagecraft
