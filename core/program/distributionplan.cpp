// SPDX-License-Identifier: MIT
#include "program/distributionplan.h"

#include "model/modelcost.h"
#include "program/inputbytes.h"

#include <algorithm>
#include <array>
#include <limits>

namespace stagecraft {

namespace {

    __extension__ typedef __int128 Int128;

    /// Exact value of a constant rational expression as num/den.
    /// The value of a per-point cost as a fraction: a constant, or an expression in the model symbols (the head
    /// sizes of the fused attention kernel).
    void rationalOf(const Expr& e, const Binding& binding, int64_t& num, int64_t& den)
    {
        EvalResult r = e.evaluate(binding);
        if (r.ok()) {
            num = r.value;
            den = 1;
        } else {
            num = r.num;
            den = r.den > 0 ? r.den : 1;
        }
    }

    int64_t clampToInt64(Int128 v)
    {
        if (v > std::numeric_limits<int64_t>::max())
            return std::numeric_limits<int64_t>::max();
        return static_cast<int64_t>(v);
    }

} // namespace

int64_t inputBytes(const DistributionPlan& plan, size_t opIndex, size_t k)
{
    const ModelGraph& g = *plan.graph;
    const Op& op = g.ops[opIndex];
    const TensorId tensor = op.inputs[k].tensor;
    if (g.inference && op.kind == OpKind::Embedding && !op.outputs.empty()
        && g.tensor(tensor).role == TensorRole::Weight)
        return plan.tensorBytes[static_cast<size_t>(op.outputs[0].tensor.value)];
    const Layout& layout = plan.inputLayouts[opIndex][k];
    if (layout == plan.tensorLayout[static_cast<size_t>(tensor.value)]) // read as stored: its tensorBytes
        return plan.tensorBytes[static_cast<size_t>(tensor.value)];
    return plan.localBytes(tensor, layout);
}

int64_t DistributionPlan::localBytes(TensorId id, const Layout& layout) const
{
    const Tensor& t = graph->tensor(id);
    // The divisor of every dimension (its split axes' degrees) and the flat shard, in one pass over the axes. On
    // the stack for any real tensor (a SmallVector filled by push_back cost 0.9 % more instructions in a sweep).
    std::array<int64_t, 8> onStack;
    std::vector<int64_t> onHeap;
    int64_t* divisor = onStack.data();
    if (t.dims.size() > onStack.size()) {
        onHeap.resize(t.dims.size());
        divisor = onHeap.data();
    }
    std::fill_n(divisor, t.dims.size(), int64_t { 1 });
    int64_t shard = 1;
    for (int a = 0; a < kSpatialAxisCount; ++a) {
        const AxisLayout& al = layout.axes[static_cast<size_t>(a)];
        if (al.state == AxisState::FlatShard)
            shard *= mesh.degree(static_cast<Axis>(a));
        else if (al.state == AxisState::Split && al.dim >= 0 && static_cast<size_t>(al.dim) < t.dims.size())
            divisor[static_cast<size_t>(al.dim)] *= mesh.degree(static_cast<Axis>(a));
    }
    auto localExtent = [&](size_t d) { return (extents.global(t.dims[d]) + divisor[d] - 1) / divisor[d]; };
    // In int64 while nothing overflows (every real tensor), else again in 128 bits.
    int64_t numel64 = 1;
    bool fits = shard > 0;
    for (size_t d = 0; d < t.dims.size() && fits; ++d) {
        const int64_t local = localExtent(d);
        fits = local >= 0 && !__builtin_mul_overflow(numel64, local, &numel64);
    }
    int64_t bytes = 0;
    if (fits && numel64 <= INT64_MAX - shard
        && !__builtin_mul_overflow((numel64 + shard - 1) / shard, int64_t { elementBytes(id) }, &bytes))
        return bytes;
    Int128 numel = 1;
    for (size_t d = 0; d < t.dims.size(); ++d)
        numel *= localExtent(d);
    numel = (numel + shard - 1) / shard;
    return clampToInt64(numel * elementBytes(id));
}

int DistributionPlan::elementBytes(TensorId id) const
{
    const Tensor& t = graph->tensor(id);
    if (t.role == TensorRole::WeightGrad)
        return bytesPerElement(config.training.mainGradDtype);
    return dtypeBytes(t.dtype);
}

double hottestExpertLoad(const Config& config)
{
    const ModelConfig& m = config.model;
    if (m.family != Family::Moe || m.experts <= 0 || m.topK <= 0)
        return 1;
    double load = m.moeRoutingImbalance;
    if (m.moeCapacityFactor > 0)
        load = std::min(load, m.moeCapacityFactor);
    const double reachable = std::min(static_cast<double>(std::max<int64_t>(1, config.parallelism.ep)),
        static_cast<double>(m.experts) / static_cast<double>(m.topK));
    return std::min(load, reachable);
}

std::optional<DistributionPlan> planDistribution(
    const Config& config, std::shared_ptr<const ModelGraph> graph, std::string& error)
{
    const Mesh mesh(config.parallelism);
    const ShardingStrategy strategy(config, mesh);
    const Binding binding = modelBinding(config, true);
    std::optional<ExtentTable> extents = ExtentTable::evaluate(strategy, *graph, binding, error);
    if (!extents)
        return std::nullopt;
    // The program is the hottest rank's (see hottestExpertLoad): every tensor and op over the routed tokens of an
    // expert follows its load, on the token side as well, because the dispatch/combine all-to-all that connects
    // the two sides has one size per rank in the trace, which must carry what that rank receives.
    if (const double load = hottestExpertLoad(config); load != 1) {
        extents->scale(Index::Capacity, load);
        extents->scale(Index::TokenCapacity, load);
    }

    DistributionPlan plan;
    plan.config = config;
    plan.graph = graph;
    plan.mesh = mesh;
    plan.strategy = strategy;
    plan.extents = *extents;
    plan.stages = StagePlan::forConfig(config);
    plan.microBatches = static_cast<int32_t>(microBatchesPerIteration(config));
    const ModelGraph& g = *graph;
    const size_t tensorCount = g.tensors.size();
    const size_t opCount = g.ops.size();
    plan.tensorLayout.assign(tensorCount, Layout {});
    plan.tensorBytes.assign(tensorCount, 0);
    plan.producerOp.assign(tensorCount, -1);
    plan.remoteStages.assign(tensorCount, {});
    plan.opFlops.assign(opCount, 0);
    plan.opBytes.assign(opCount, 0);
    plan.opReplication.assign(opCount, 1);
    plan.inputLayouts.assign(opCount, {});
    plan.opChunk.assign(opCount, 0);

    // Weights live in the layout of their first forward use; ZeRO-3 shards them flat over their data axes.
    std::vector<bool> homeSet(tensorCount, false);
    for (const Op& op : g.ops) {
        if (op.pass != Pass::Forward)
            continue;
        for (const Operand& in : op.inputs) {
            const size_t t = static_cast<size_t>(in.tensor.value);
            // A KV cache that no op produces (decode without a prefill) is held as its first reader expects it;
            // one that an op produces takes that op's layout below.
            const bool cache = g.tensors[t].role == TensorRole::KvCache;
            if ((g.tensors[t].role != TensorRole::Weight && !cache) || homeSet[t])
                continue;
            Layout home = strategy.operandLayout(op.region, in.labels);
            if (strategy.zeroStage() >= 3 && !cache) {
                const AxisMask data = strategy.weightDataMask(g.tensors[t]);
                for (int a = 0; a < kSpatialAxisCount; ++a)
                    if (data & (1u << a))
                        home.axes[static_cast<size_t>(a)] = AxisLayout { AxisState::FlatShard, -1 };
            }
            plan.tensorLayout[t] = home;
            homeSet[t] = true;
        }
    }

    for (size_t i = 0; i < opCount; ++i) {
        const Op& op = g.ops[i];
        plan.opChunk[i] = op.head ? plan.stages.lossChunk() : plan.stages.chunkOfLayer(op.layer);
        // Expected input layouts; an add consumes partial sums as they are when every input is partial.
        std::vector<Layout>& expected = plan.inputLayouts[i];
        for (const Operand& in : op.inputs)
            expected.push_back(strategy.operandLayout(op.region, in.labels));
        // Only gradient sums: a forward residual add reduces its inputs first, so the residual stream is never a
        // partial sum (under sequence parallelism it stays sequence-split, as in Megatron-LM).
        AxisMask addPartial = 0;
        if (op.kind == OpKind::Add && op.pass == Pass::Backward) {
            for (int a = 0; a < kSpatialAxisCount; ++a) {
                bool all = true;
                for (const Operand& in : op.inputs) {
                    const Tensor& t = g.tensor(in.tensor);
                    if (t.role == TensorRole::Weight
                        || plan.tensorLayout[static_cast<size_t>(in.tensor.value)].axes[static_cast<size_t>(a)].state
                            != AxisState::Partial)
                        all = false;
                }
                if (all)
                    addPartial |= static_cast<AxisMask>(1u << a);
            }
            for (Layout& l : expected)
                for (int a = 0; a < kSpatialAxisCount; ++a)
                    if (addPartial & (1u << a))
                        l.axes[static_cast<size_t>(a)] = AxisLayout { AxisState::Partial, -1 };
        }
        // Outputs: produced layouts (weights keep their home layout, gradients are produced like any value).
        for (size_t k = 0; k < op.outputs.size(); ++k) {
            const size_t t = static_cast<size_t>(op.outputs[k].tensor.value);
            if (g.tensors[t].role == TensorRole::Weight)
                continue;
            if (plan.producerOp[t] >= 0)
                continue; // weight gradients have several writers; the first defines the layout
            Layout l = strategy.producedLayout(op, k);
            for (int a = 0; a < kSpatialAxisCount; ++a)
                if (addPartial & (1u << a))
                    l.axes[static_cast<size_t>(a)] = AxisLayout { AxisState::Partial, -1 };
            plan.tensorLayout[t] = l;
            plan.producerOp[t] = static_cast<int32_t>(i);
        }
        // Local cost: FLOPs over the local iteration space, bytes over the local operands.
        int64_t num = 0, den = 1;
        rationalOf(op.flopsPerPoint, binding, num, den);
        Int128 points = 1;
        for (Index idx : op.space)
            points *= plan.extents.local(op.region, idx);
        plan.opFlops[i] = clampToInt64(points * num / den);
        for (int a = 0; a < kSpatialAxisCount; ++a) {
            bool splits = false;
            for (Index idx : op.space)
                splits = splits || (strategy.splitMask(op.region, idx) & (1u << a));
            if (!splits)
                plan.opReplication[i] *= mesh.degree(static_cast<Axis>(a));
        }
    }
    for (size_t t = 0; t < tensorCount; ++t)
        plan.tensorBytes[t] = plan.localBytes(TensorId { static_cast<int32_t>(t) }, plan.tensorLayout[t]);
    for (size_t i = 0; i < opCount; ++i) {
        const Op& op = g.ops[i];
        int64_t bytes = 0;
        for (size_t k = 0; k < op.inputs.size(); ++k)
            bytes += inputBytes(plan, i, k);
        for (const Operand& out : op.outputs)
            bytes += plan.tensorBytes[static_cast<size_t>(out.tensor.value)];
        plan.opBytes[i] = bytes;
    }
    // Which other stages read each tensor (send/recv at the cuts).
    for (size_t i = 0; i < opCount; ++i) {
        const Op& op = g.ops[i];
        if (op.pass == Pass::Optimizer)
            continue;
        const int32_t stage = plan.stages.stageOfChunk(plan.opChunk[i]);
        for (const Operand& in : op.inputs) {
            const size_t t = static_cast<size_t>(in.tensor.value);
            const int32_t producer = plan.producerOp[t];
            if (producer < 0)
                continue;
            const int32_t producerStage = plan.stages.stageOfChunk(plan.opChunk[static_cast<size_t>(producer)]);
            std::vector<int32_t>& remote = plan.remoteStages[t];
            if (producerStage != stage && std::find(remote.begin(), remote.end(), stage) == remote.end())
                remote.push_back(stage);
        }
    }
    return plan;
}

int32_t p2pTag(const DistributionPlan& plan, int32_t tensor, int32_t microBatch)
{
    return tensor * std::max<int32_t>(1, plan.microBatches) + microBatch;
}

} // namespace stagecraft
