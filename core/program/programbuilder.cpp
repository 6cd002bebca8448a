// SPDX-License-Identifier: MIT
// Builds one rank class's program from a DistributionPlan: schedule units in order, op instances per
// micro-batch, collectives on layout changes, send/recv at stage cuts, gradient reduction and optimizer.
#include "config/programsize.h"
#include "program/distributionplan.h"

#include <algorithm>
#include <bit>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <unordered_map>

namespace stagecraft {

namespace {

    constexpr uint32_t kNoNode = UINT32_MAX;

    enum class Phase : uint8_t
    {
        Forward,
        Recompute,
        Backward,
        Optimizer
    };

    struct Value
    {
        uint32_t node = kNoNode; ///< producing node, kNoNode for resident state
        int32_t buffer = -1;
    };

    /// (tensor, micro-batch) -> Value, open addressing with linear probing. The builder looks a value up for
    /// every operand it emits; std::unordered_map spent a heap node per entry and a fifth of the build's time.
    class ValueMap
    {
    public:
        const Value* find(int64_t key) const
        {
            if (m_slots.empty())
                return nullptr;
            for (size_t i = slotOf(key);; i = (i + 1) & (m_slots.size() - 1)) {
                const Slot& s = m_slots[i];
                if (s.key == key)
                    return &s.value;
                if (s.key == kEmpty)
                    return nullptr;
            }
        }
        /// Room for `n` keys without growing (a map that grows rehashes every key at each doubling).
        void reserve(size_t n)
        {
            const size_t size = std::bit_ceil(std::max<size_t>(64, 2 * n));
            if (size > m_slots.size())
                rehash(size);
        }
        Value& operator[](int64_t key)
        {
            if (2 * (m_count + 1) > m_slots.size())
                rehash(std::max<size_t>(64, 2 * m_slots.size()));
            size_t i = slotOf(key);
            while (m_slots[i].key != key && m_slots[i].key != kEmpty)
                i = (i + 1) & (m_slots.size() - 1);
            if (m_slots[i].key == kEmpty) {
                m_slots[i].key = key;
                ++m_count;
            }
            return m_slots[i].value;
        }

    private:
        static constexpr int64_t kEmpty = -1; ///< keys are non-negative (tensor << 32 | micro-batch)
        struct Slot
        {
            int64_t key = kEmpty;
            Value value;
        };
        size_t slotOf(int64_t key) const
        {
            // Fibonacci hashing: the top bits of the product spread the (tensor, micro-batch) fields.
            return static_cast<size_t>((static_cast<uint64_t>(key) * 0x9E3779B97F4A7C15ull) >> m_shift);
        }
        void rehash(size_t size)
        {
            std::vector<Slot> old = std::move(m_slots);
            m_slots.assign(size, Slot {});
            m_shift = 64 - std::countr_zero(size);
            m_count = 0;
            for (const Slot& s : old)
                if (s.key != kEmpty)
                    (*this)[s.key] = s.value;
        }
        std::vector<Slot> m_slots; ///< size a power of two, at most half full
        size_t m_count = 0;
        int m_shift = 64; ///< 64 - log2(size)
    };

    uint64_t layoutHash(const Layout& l)
    {
        uint64_t h = 0;
        for (const AxisLayout& a : l.axes)
            h = h * 64 + static_cast<uint64_t>(a.state) * 16 + static_cast<uint64_t>(a.dim + 1);
        return h;
    }

    MemoryCategory categoryOf(TensorRole role)
    {
        switch (role) {
        case TensorRole::Weight:
            return MemoryCategory::Weights;
        case TensorRole::WeightGrad:
            return MemoryCategory::Gradients;
        case TensorRole::Activation:
        case TensorRole::Mask:
        case TensorRole::Input:
            return MemoryCategory::Activations;
        case TensorRole::ActivationGrad:
        case TensorRole::Loss:
            return MemoryCategory::Other;
        case TensorRole::KvCache:
            return MemoryCategory::KvCache;
        }
        return MemoryCategory::Other;
    }

    class StageBuilder
    {
    public:
        StageBuilder(const DistributionPlan& plan, int32_t stage, bool names)
            : P(plan)
            , G(*plan.graph)
            , m_stage(stage)
            , m_zero(plan.strategy.zeroStage())
            , m_names(names)
            , m_accumulateUnsharded(m_zero >= 2 && !plan.config.parallelism.reduceGradientsPerMicroBatch)
        {
            m_program.stage = stage;
            m_opSuffix.assign(G.ops.size() * 2, nullptr);
            m_program.rankCount = plan.mesh.worldSize() / plan.mesh.degree(Axis::Pp);
            m_program.exampleRank = plan.mesh.withCoordinate(RankId { 0 }, Axis::Pp, stage);
            // Room for the whole program at once: growing by doubling would hold the old and the new array
            // together (1.5x to 3x the nodes at the moment of the copy). The estimate is an upper bound, and the
            // pages of a large reservation that are never written are never resident.
            const auto estimate = static_cast<size_t>(estimatedStageNodes(plan.config, plan.stages.stageLayers(stage)));
            const size_t cap = size_t(1) << 26; // a wrong estimate must not reserve more than ~8 GB
            m_program.nodes.reserve(std::min(estimate, cap));
            m_program.buffers.reserve(std::min(estimate + estimate / 4, cap)); // ~1.15 buffers per node measured
        }

        ClassProgram build(const std::vector<ScheduleUnit>* givenOrder, std::vector<uint32_t>* unitStarts);

    private:
        /// Inference: the prefill and then each decode step, every pipeline micro-batch in turn; no backward,
        /// no gradient reduction, no optimizer.
        void buildInference();
        /// Bytes a rank allocates for KV-cache tensor `tensor` (one pipeline micro-batch): the prompt's positions
        /// rounded up to whole blocks of inference.block_size per sequence; a decode step's one position a new
        /// block when it starts one (position prompt + k - 1 a multiple of the block), else nothing.
        int64_t cacheAllocationBytes(int32_t tensor) const;
        // --- node and buffer helpers -------------------------------------------------------------------------
        /// Appends a node in schedule order. A consumer that runs every node as soon as its dependencies are done
        /// (ASTRA-sim) must still run it here: every node waits, directly or through its dependencies, for the
        /// compute node that precedes it in the program. Compute nodes thereby form one chain (the GPU's compute
        /// stream), and a collective, send or recv cannot start before the work the schedule puts ahead of it.
        uint32_t addNode(ProgramNode node)
        {
            std::sort(node.dataDeps.begin(), node.dataDeps.end());
            node.dataDeps.erase(std::unique(node.dataDeps.begin(), node.dataDeps.end()), node.dataDeps.end());
            // m_anchor[i]: the latest compute node that node i waits for (itself for a compute node). Because the
            // compute nodes are chained, waiting for compute node c means waiting for every compute node before c.
            int64_t anchor = -1;
            for (NodeId d : node.dataDeps)
                anchor = std::max(anchor, m_anchor[d.value]);
            for (NodeId d : node.ctrlDeps)
                anchor = std::max(anchor, m_anchor[d.value]);
            if (m_lastCompute != kNoNode && anchor < static_cast<int64_t>(m_lastCompute)) {
                node.ctrlDeps.push_back(NodeId { m_lastCompute });
                anchor = m_lastCompute;
            }
            const auto index = static_cast<uint32_t>(m_program.nodes.size());
            if (node.kind == NodeKind::Compute && !m_reductionBarrier.empty()
                && node.microBatch != m_reductionBarrierMicroBatch) {
                // ZeRO-2/3: a micro-batch's backward ends by waiting for its gradient reductions (DeepSpeed's
                // reduce epilogue, FSDP's post-backward callback), so its transient gradients are freed before
                // the next micro-batch runs; the next compute node waits for them.
                for (uint32_t r : m_reductionBarrier)
                    node.ctrlDeps.push_back(NodeId { r });
                m_reductionBarrier.clear();
            }
            if (node.kind == NodeKind::Compute && !m_gate.empty()) {
                for (uint32_t g : m_gate)
                    node.ctrlDeps.push_back(NodeId { g });
                m_gate.clear();
            }
            if (node.kind == NodeKind::Compute) {
                anchor = index;
                m_lastCompute = index;
            }
            m_anchor.push_back(anchor);
            m_program.nodes.push_back(std::move(node));
            return index;
        }
        int32_t addBuffer(int32_t tensor, int32_t microBatch, int64_t bytes, MemoryCategory category, bool resident)
        {
            m_program.buffers.push_back(Buffer { .tensor = tensor,
                .microBatch = microBatch,
                .category = category,
                .resident = resident,
                .bytes = bytes });
            return static_cast<int32_t>(m_program.buffers.size() - 1);
        }
        template <typename List> static void addDep(List& deps, uint32_t node)
        {
            if (node != kNoNode)
                deps.push_back(NodeId { node });
        }
        static int64_t key(int32_t tensor, int32_t microBatch)
        {
            return (int64_t(tensor) << 32) | static_cast<uint32_t>(microBatch);
        }
        std::string prefix(int32_t microBatch) const
        {
            return microBatch >= 0 ? "mb" + std::to_string(microBatch) + "/" : std::string();
        }
        /// The interned name of op `opIndex` ("L3.attn.qkv", with "[recompute]" for its recomputation), made once
        /// per op: every micro-batch names it the same.
        const std::string* opSuffix(int32_t opIndex, bool recompute)
        {
            auto& slot = m_opSuffix[static_cast<size_t>(opIndex) * 2 + (recompute ? 1 : 0)];
            if (!slot) {
                const std::string& name = G.ops[static_cast<size_t>(opIndex)].name;
                slot = NodeName::intern(recompute ? name + "[recompute]" : name);
            }
            return slot;
        }

        // --- values ------------------------------------------------------------------------------------------
        Value lookup(int32_t tensor, int32_t microBatch, bool preferRecomputed);
        bool recomputes(const Op& forwardOp) const;
        /// Whether `op`, run in `phase`, reads the recomputed value of input `tensor` (when there is one).
        bool readsRecomputed(const Op& op, int32_t tensor, Phase phase) const;
        /// `src`, a value of `tensor` in its home layout (DistributionPlan::tensorLayout), brought into `to`.
        Value relayout(
            int32_t tensor, int32_t microBatch, Value src, const Layout& to, Phase phase, MemoryCategory category);
        Value gatheredWeights(int32_t weight, const Layout& expected, int32_t microBatch, Phase phase);
        /// planRelayout() of `tensor` from its home layout (DistributionPlan::tensorLayout, whose local bytes are
        /// tensorBytes) to `to`, memoized: an op's inputs are relaid the same way for every micro-batch and pass.
        const std::vector<Relayout>& homeRelayout(int32_t tensor, const Layout& to);
        /// The nodes of `steps`, the first after `deps` reading `reads`, each after the one before; the last writes
        /// `finalWrites` (when given) or a new buffer. The lists are the node's own types: no allocation per call.
        void emitChain(std::span<const Relayout> steps, SmallVector<NodeId, 3> deps, SmallVector<int32_t, 3> reads,
            const std::string& name, int32_t layer, int32_t microBatch, Pass pass, MemoryCategory category,
            const SmallVector<int32_t, 2>& finalWrites, int32_t tensor, uint32_t& lastNode, int32_t& lastBuffer);

        // --- emission ----------------------------------------------------------------------------------------
        void emitUnit(const ScheduleUnit& unit);
        /// The ops of a unit with the phase each runs in.
        std::vector<std::pair<int32_t, Phase>> unitSteps(const ScheduleUnit& unit) const;
        void emitSteps(const std::vector<std::pair<int32_t, Phase>>& steps, size_t from, size_t to, int32_t microBatch,
            int32_t localChunk);
        /// A forward and a backward of other micro-batches, interleaved at their expert all-to-alls.
        void emitPair(const ScheduleUnit& forward, const ScheduleUnit& backward);
        /// Whether an input of the op arrives through an all-to-all (memoized).
        bool readsAllToAll(int32_t opIndex);
        /// Emits the receives and collectives that bring the op's inputs into the layouts it reads, not the op.
        /// Makes the inputs of op `opIndex` ready (receives and relayouts) ahead of the op; returns their nodes.
        std::vector<uint32_t> issueInputs(int32_t opIndex, int32_t microBatch, Phase phase);
        /// DualPipe's overlapped pair starts when the inputs of both its passes are in: receives the backward
        /// unit's inputs now and makes the next compute node wait for them (m_gate).
        void gatePairOnBackwardInputs(const ScheduleUnit& backward);
        /// The physical stage of a stage of the forward direction, for micro-batch `microBatch`: under DualPipe the
        /// reverse direction's micro-batches run chunk g on stage pp-1-g.
        int32_t physicalStage(int32_t stage, int32_t microBatch) const
        {
            const bool reverse = P.stages.placement() == ChunkPlacement::Mirror && microBatch >= P.microBatches / 2;
            return reverse ? P.stages.pp() - 1 - stage : stage;
        }
        void prefetchNextLayer(const std::vector<std::pair<int32_t, Phase>>& steps, size_t at, int32_t microBatch);
        void readUnreadOutputs();
        void emitOp(int32_t opIndex, int32_t microBatch, int32_t chunk, Phase phase);
        void reduceGradients(int32_t layer, int32_t microBatch, bool iterationDone);
        void addToGradientBucket(int32_t layer, int32_t microBatch);
        void flushGradientBucket(int32_t microBatch);
        void emitDeferredReductions();
        void emitOptimizer();
        /// Memory traffic of the optimizer step beyond Adam's own reads and writes, for `optimizerBytes` of state.
        int64_t mixedPrecisionStepBytes(int32_t w, int64_t optimizerBytes) const;

        int weightSlot(int32_t weightTensor) const
        {
            return G.weightIndex(TensorId { weightTensor });
        }
        void ensureResident(int32_t weightTensor);
        Layout optimizerGradLayout(int32_t weightTensor) const;
        int64_t dataGroupSize(int32_t weightTensor) const
        {
            return P.mesh.groupSize(P.strategy.weightDataMask(G.tensor(TensorId { weightTensor })));
        }

        const DistributionPlan& P;
        const ModelGraph& G;
        const int32_t m_stage;
        const int m_zero;
        const bool m_names; ///< name the nodes (an estimate that reads no names skips building them)
        /// ZeRO >= 2 with parallelism.reduce_gradients_per_microbatch false: one unsharded gradient per weight,
        /// accumulated over the micro-batches and reduce-scattered once (key micro-batch -1 in m_transientGrad).
        const bool m_accumulateUnsharded;
        ClassProgram m_program;

        ValueMap m_values; ///< (tensor, micro-batch) -> current value on this stage
        ValueMap m_recomputed; ///< (tensor, micro-batch) -> value re-run before backward
        /// relayout()'s key (source buffer, target layout, pass) -> the relaid value. Its low 3 bits (the pass, 0-4)
        /// are never all set, so it is never ValueMap's empty key -1, whatever the buffer.
        ValueMap m_relayouts;
        /// homeRelayout(): (tensor << 32 | layoutHash(to)) -> the collectives (node-based: references stay valid).
        std::unordered_map<uint64_t, std::vector<Relayout>> m_homeRelayouts;
        std::map<std::tuple<int32_t, AxisMask, int, int32_t>, Value> m_weightGathers; ///< (layer, mask, pass, mb)
        std::map<std::pair<int32_t, int>, uint32_t> m_firstComputeOfLayer; ///< (layer, pass) in the current unit
        /// The key emitOp() last offered m_firstComputeOfLayer (which holds it since): ops of one layer come in a
        /// row, so most offers are this key again.
        std::pair<int32_t, int> m_lastFirstComputeKey { INT32_MIN, -1 };
        void clearFirstComputes()
        {
            m_firstComputeOfLayer.clear();
            m_lastFirstComputeKey = { INT32_MIN, -1 };
        }
        std::map<std::pair<int32_t, int>, uint32_t> m_lastGatherOfPass; ///< chains the per-layer gathers
        std::vector<const std::string*> m_opSuffix; ///< per op and recompute flag: opSuffix(), null until first asked
        std::vector<uint8_t> m_weightOnly; ///< per op: a backward op all of whose outputs are weight gradients (W)
        std::vector<int8_t> m_readsAllToAll; ///< per op: readsAllToAll(), -1 until asked

        // Per weight slot: resident buffers on this stage (-1 when the weight is not used here).
        std::vector<int32_t> m_weightBuffer, m_gradBuffer, m_optimizerBuffer;
        std::vector<int32_t> m_fp8CopyBuffer; ///< per weight slot: Transformer Engine's FP8 copies, -1 for none
        /// Per weight slot: the collectives of its gradient reduction (flushGradientBucket), once planned.
        std::vector<std::optional<std::vector<Relayout>>> m_gradReduceSteps;
        std::vector<int32_t> m_stageWeights; ///< weight tensors used on this stage, in graph order
        std::unordered_map<int32_t, std::vector<int32_t>> m_weightsOfLayer; ///< layer -> its m_stageWeights, in order
        std::vector<int32_t> m_stageIndex; ///< weight slot -> position in m_stageWeights

        // Gradient reduction bookkeeping.
        std::vector<std::vector<int32_t>> m_chunkForward, m_chunkBackward; ///< op indices per local chunk
        /// Per op index: the layers of the weights whose gradients it writes (empty for every other op).
        std::unordered_map<int32_t, std::vector<int32_t>> m_gradLayersOf;
        std::map<int32_t, int32_t> m_gradWritersPerLayer; ///< weight layer -> ops on this stage writing its grads
        /// (weight layer, micro-batch) -> grad-writing ops still to run: at 0 the layer's gradients of that
        /// micro-batch are complete, whatever order the schedule ran its B and W parts in.
        std::map<std::pair<int32_t, int32_t>, int32_t> m_gradWritesLeft;
        std::map<int32_t, int32_t> m_microBatchesDone; ///< weight layer -> micro-batches whose gradients are complete
        std::map<int32_t, int32_t> m_microBatchesExpected; ///< weight layer -> micro-batches that write them here
        /// (op layer, micro-batch) -> nodes writing gradients, until the reduction that waits for them is emitted.
        std::map<std::pair<int32_t, int32_t>, std::vector<uint32_t>> m_gradWriters;
        std::map<int32_t, std::vector<uint32_t>> m_finalGradWriters; ///< layer -> writers of its completing mb
        std::map<std::pair<int32_t, int32_t>, int32_t> m_transientGrad; ///< (weight, mb) -> buffer (ZeRO 2/3)
        std::vector<std::pair<int32_t, int32_t>> m_pendingLayers; ///< (layer, micro-batch) in the current bucket
        /// flushGradientBucket()'s scratch, kept between buckets: one merged chain per (type, mask) signature.
        struct BucketGroup
        {
            uint64_t signature = 0;
            std::vector<Relayout> steps;
            std::vector<int32_t> reads, writes;
        };
        std::vector<BucketGroup> m_bucketGroups;
        std::vector<int32_t> m_bucketWeights;
        /// Without overlap_grad_reduce (ZeRO 0/1), the layers whose iteration reduction waits for the end of the
        /// backward, in the order their gradients completed, with the nodes that wrote them.
        std::vector<std::pair<int32_t, int32_t>> m_deferredReductions; ///< (layer, completing micro-batch)
        std::vector<NodeId> m_reductionCtrlDeps; ///< extra waits of each reduction chain's first node
        int64_t m_pendingBytes = 0;
        std::map<int32_t, std::vector<uint32_t>> m_reductionNodes; ///< layer -> final reduction nodes
        uint32_t m_lastCompute = kNoNode; ///< the compute node added last
        std::vector<uint32_t> m_gate; ///< nodes the next compute node waits for (control dependencies), then cleared
        std::vector<uint32_t> m_reductionBarrier; ///< ZeRO-2/3 gradient reductions the next micro-batch waits for
        int32_t m_reductionBarrierMicroBatch = -1;
        std::vector<int64_t> m_anchor; ///< per node: the latest compute node it waits for, -1 for none
    };

    int64_t StageBuilder::cacheAllocationBytes(int32_t tensor) const
    {
        const Tensor& t = G.tensor(TensorId { tensor });
        const int64_t bytes = P.tensorBytes[static_cast<size_t>(tensor)];
        const int64_t block = std::max<int64_t>(1, P.config.inference.blockSize);
        if (std::find(t.dims.begin(), t.dims.end(), Index::Seq) != t.dims.end()) {
            // The prompt's positions on this rank (prompt / cp) in whole blocks.
            const int64_t tokens = std::max<int64_t>(1, P.extents.local(Region::Attention, Index::Seq));
            return bytes / tokens * ((tokens + block - 1) / block * block);
        }
        const int64_t position = promptTokens(P.config) + t.step - 1;
        return position % block == 0 ? bytes * block : 0;
    }

    void StageBuilder::ensureResident(int32_t w)
    {
        const int slot = weightSlot(w);
        if (m_weightBuffer[static_cast<size_t>(slot)] >= 0)
            return;
        const Tensor& t = G.tensor(TensorId { w });
        const int64_t homeBytes = P.tensorBytes[static_cast<size_t>(w)];
        if (G.inference) { // serving holds the weights only: no gradients, no optimizer state
            m_weightBuffer[static_cast<size_t>(slot)] = addBuffer(w, -1, homeBytes, MemoryCategory::Weights, true);
            m_stageIndex[static_cast<size_t>(slot)] = static_cast<int32_t>(m_stageWeights.size());
            m_stageWeights.push_back(w);
            m_weightsOfLayer[t.layer].push_back(w);
            return;
        }
        Layout unsharded = P.tensorLayout[static_cast<size_t>(w)];
        for (AxisLayout& a : unsharded.axes)
            if (a.state == AxisState::FlatShard)
                a = AxisLayout {};
        const int64_t fullBytes = P.localBytes(TensorId { w }, unsharded);
        const int64_t n = dataGroupSize(w);
        const int64_t elems = fullBytes / dtypeBytes(t.dtype);
        const int64_t optElems = m_zero >= 1 ? (elems + n - 1) / n : elems;
        // Mixed precision: fp32 master weights + two fp32 Adam moments (12 bytes per parameter, ZeRO §3);
        // fp32 training keeps only the two moments beside the fp32 weights.
        const int64_t optBytesPerParam = t.dtype == DType::F32 ? 8 : 12;
        // The gradient buffer holds the main gradients (training.main_grad_dtype, fp32 by default as in Megatron-LM,
        // whatever the weights' dtype); ZeRO >= 2 keeps only this rank's shard of it.
        const TensorId grad = G.weightGrads[static_cast<size_t>(slot)];
        const int64_t gradElems = m_zero >= 2 ? (elems + n - 1) / n : elems;
        const int64_t gradBytes = gradElems * P.elementBytes(grad);
        m_weightBuffer[static_cast<size_t>(slot)] = addBuffer(w, -1, homeBytes, MemoryCategory::Weights, true);
        // FP8 training: Transformer Engine caches the FP8 cast of a GEMM's weight for all micro-batches of the
        // iteration, row-wise for the forward and column-wise (transposed) for the data-gradient GEMM, as Hopper's
        // FP8 tensor cores take only the TN layout: 2 bytes per element beside the bf16 weight. Under ZeRO 3 the
        // cast is of a gathered weight and is transient: left out.
        if (t.fp8Copies && m_zero < 3)
            m_fp8CopyBuffer[static_cast<size_t>(slot)] = addBuffer(w, -1, 2 * elems, MemoryCategory::Weights, true);
        m_gradBuffer[static_cast<size_t>(slot)] = addBuffer(grad.value, -1, gradBytes, MemoryCategory::Gradients, true);
        m_optimizerBuffer[static_cast<size_t>(slot)] =
            addBuffer(w, -1, optElems * optBytesPerParam, MemoryCategory::Optimizer, true);
        m_stageIndex[static_cast<size_t>(slot)] = static_cast<int32_t>(m_stageWeights.size());
        m_stageWeights.push_back(w);
        m_weightsOfLayer[t.layer].push_back(w);
    }

    Layout StageBuilder::optimizerGradLayout(int32_t w) const
    {
        Layout l = P.tensorLayout[static_cast<size_t>(w)];
        const AxisMask data = P.strategy.weightDataMask(G.tensor(TensorId { w }));
        for (int a = 0; a < kSpatialAxisCount; ++a)
            if (data & (1u << a))
                l.axes[static_cast<size_t>(a)] =
                    m_zero >= 2 ? AxisLayout { AxisState::FlatShard, -1 } : AxisLayout { AxisState::Replicated, -1 };
        return l;
    }

    bool StageBuilder::recomputes(const Op& f) const
    {
        return stagecraft::recomputes(P.config.training, f);
    }

    bool StageBuilder::readsRecomputed(const Op& op, int32_t tensor, Phase phase) const
    {
        if (phase == Phase::Recompute)
            return true;
        if (phase != Phase::Backward)
            return false;
        if (op.forwardOp >= 0 && recomputes(G.ops[static_cast<size_t>(op.forwardOp)]))
            return true;
        // An output-discarding module (layernorm, mla_up_proj, moe_act) keeps no output: the backward of its
        // consumers reads the recomputed one.
        const int32_t producer = P.producerOp[static_cast<size_t>(tensor)];
        if (producer < 0)
            return false;
        const Op& p = G.ops[static_cast<size_t>(producer)];
        return p.pass == Pass::Forward && recomputes(p) && recomputeDiscardsOutput(P.config.training, p);
    }

    Value StageBuilder::lookup(int32_t tensor, int32_t microBatch, bool preferRecomputed)
    {
        if (preferRecomputed)
            if (const Value* v = m_recomputed.find(key(tensor, microBatch)))
                return *v;
        if (const Value* v = m_values.find(key(tensor, microBatch)))
            return *v;
        const int32_t producer = P.producerOp[static_cast<size_t>(tensor)];
        if (producer < 0 && G.tensor(TensorId { tensor }).role == TensorRole::KvCache) {
            // Decode without a prefill: the prompt's cache is there from the start, like the weights.
            const int32_t buf =
                addBuffer(tensor, microBatch, cacheAllocationBytes(tensor), MemoryCategory::KvCache, true);
            Value v { kNoNode, buf };
            m_values[key(tensor, microBatch)] = v;
            return v;
        }
        if (producer < 0)
            throw std::logic_error("no producer for tensor " + G.tensor(TensorId { tensor }).name);
        const int32_t producerStage =
            physicalStage(P.stages.stageOfChunk(P.opChunk[static_cast<size_t>(producer)]), microBatch);
        if (producerStage == m_stage)
            throw std::logic_error("tensor " + G.tensor(TensorId { tensor }).name + " read before it is produced");
        // Produced on another stage: receive it (the producer's stage sends it with the same tag).
        const Tensor& t = G.tensor(TensorId { tensor });
        ProgramNode n;
        n.kind = NodeKind::Recv;
        n.pass = t.role == TensorRole::ActivationGrad ? Pass::Backward : Pass::Forward;
        n.layer = t.layer;
        n.microBatch = microBatch;
        n.peerStage = static_cast<int16_t>(producerStage); // the validator keeps pp*v <= 32767
        n.tag = p2pTag(P, tensor, microBatch);
        n.bytes = P.tensorBytes[static_cast<size_t>(tensor)];
        if (m_names)
            n.name = prefix(microBatch) + "recv:" + t.name + "<-stage" + std::to_string(producerStage);
        const int32_t buf = addBuffer(tensor, microBatch, n.bytes, categoryOf(t.role), false);
        n.writes.push_back(buf);
        Value v { addNode(std::move(n)), buf };
        m_values[key(tensor, microBatch)] = v;
        return v;
    }

    void StageBuilder::emitChain(std::span<const Relayout> steps, SmallVector<NodeId, 3> deps,
        SmallVector<int32_t, 3> reads, const std::string& name, int32_t layer, int32_t microBatch, Pass pass,
        MemoryCategory category, const SmallVector<int32_t, 2>& finalWrites, int32_t tensor, uint32_t& lastNode,
        int32_t& lastBuffer)
    {
        for (size_t s = 0; s < steps.size(); ++s) {
            const Relayout& r = steps[s];
            ProgramNode n;
            n.kind = NodeKind::Collective;
            n.pass = pass;
            n.collective = r.type;
            n.mask = r.mask;
            n.layer = layer;
            n.microBatch = microBatch;
            n.bytes = r.inputBytes;
            if (m_names)
                n.name = name + ":" + toString(r.type) + "(" + axisMaskName(r.mask) + ")";
            n.dataDeps = deps;
            n.reads = reads;
            const bool last = s + 1 == steps.size();
            if (last && !finalWrites.empty()) {
                n.writes = finalWrites;
                lastBuffer = finalWrites.front();
            } else {
                lastBuffer = addBuffer(tensor, microBatch, r.outputBytes, category, false);
                n.writes.push_back(lastBuffer);
            }
            lastNode = addNode(std::move(n));
            deps = { NodeId { lastNode } };
            reads = { lastBuffer };
        }
    }

    Value StageBuilder::relayout(
        int32_t tensor, int32_t microBatch, Value src, const Layout& to, Phase phase, MemoryCategory category)
    {
        if (P.tensorLayout[static_cast<size_t>(tensor)] == to)
            return src;
        const std::vector<Relayout>& steps = homeRelayout(tensor, to);
        if (steps.empty())
            return src;
        // Reductions and all-to-alls are kept and reused by later passes (same size: Megatron-LM keeps the
        // dispatched MoE tokens); all-gathers are redone per pass, as
        // Megatron-LM re-gathers sequence-parallel inputs in backward instead of keeping them.
        const bool gathers = std::any_of(
            steps.begin(), steps.end(), [](const Relayout& r) { return r.type == CollectiveType::AllGather; });
        // (source buffer, target layout, pass or none) packed: layoutHash() has 6 bits per axis, the pass 3.
        static_assert(kSpatialAxisCount * 6 + 3 <= 32, "relayout key fields overlap");
        const uint64_t k = (static_cast<uint64_t>(static_cast<uint32_t>(src.buffer)) << 32) | (layoutHash(to) << 3)
            | static_cast<uint64_t>(gathers ? static_cast<int>(phase) + 1 : 0);
        if (const Value* done = m_relayouts.find(static_cast<int64_t>(k)))
            return *done;
        const Tensor& t = G.tensor(TensorId { tensor });
        SmallVector<NodeId, 3> deps;
        addDep(deps, src.node);
        Value out;
        const Pass pass = phase == Phase::Backward ? Pass::Backward : Pass::Forward;
        const size_t first = m_program.nodes.size();
        emitChain(steps, std::move(deps), { src.buffer }, m_names ? prefix(microBatch) + t.name : std::string(),
            t.layer, microBatch, pass, category, {}, tensor, out.node, out.buffer);
        if (phase == Phase::Recompute)
            for (size_t i = first; i < m_program.nodes.size(); ++i)
                m_program.nodes[i].recompute = true;
        m_relayouts[static_cast<int64_t>(k)] = out;
        return out;
    }

    const std::vector<Relayout>& StageBuilder::homeRelayout(int32_t tensor, const Layout& to)
    {
        const uint64_t k = (static_cast<uint64_t>(static_cast<uint32_t>(tensor)) << 32) | layoutHash(to);
        auto [it, inserted] = m_homeRelayouts.try_emplace(k);
        if (inserted)
            it->second = planRelayout(
                P.tensorLayout[static_cast<size_t>(tensor)], to, P.tensorBytes[static_cast<size_t>(tensor)], P.mesh);
        return it->second;
    }

    Value StageBuilder::gatheredWeights(int32_t weight, const Layout& expected, int32_t microBatch, Phase phase)
    {
        const Tensor& wt = G.tensor(TensorId { weight });
        const std::vector<Relayout>& probe = homeRelayout(weight, expected);
        if (probe.empty())
            return Value { kNoNode, m_weightBuffer[static_cast<size_t>(weightSlot(weight))] };
        // FSDP: one gather per layer (all of its weights with the same data axes) per pass and micro-batch; the
        // recompute pass and the backward share one gather.
        const AxisMask mask = probe.front().mask;
        const int passKey = phase == Phase::Forward ? 0 : 1;
        const auto k = std::make_tuple(wt.layer, mask, passKey, microBatch);
        if (auto it = m_weightGathers.find(k); it != m_weightGathers.end())
            return it->second;
        int64_t inBytes = 0, outBytes = 0;
        std::vector<int32_t> reads;
        for (int32_t w : m_weightsOfLayer[wt.layer]) {
            const Tensor& t = G.tensor(TensorId { w });
            if (P.strategy.weightDataMask(t) != P.strategy.weightDataMask(wt))
                continue;
            Layout full = P.tensorLayout[static_cast<size_t>(w)];
            for (AxisLayout& a : full.axes)
                if (a.state == AxisState::FlatShard)
                    a = AxisLayout {};
            inBytes += P.tensorBytes[static_cast<size_t>(w)];
            outBytes += P.localBytes(TensorId { w }, full);
            reads.push_back(m_weightBuffer[static_cast<size_t>(weightSlot(w))]);
        }
        SmallVector<NodeId, 3> deps;
        // Prefetch at most one layer ahead: the gather of layer l waits for the previous gather of this pass and
        // for the first compute of the layer before it.
        const int pk = passKey * 100000 + microBatch;
        if (auto it = m_lastGatherOfPass.find({ pk, 0 }); it != m_lastGatherOfPass.end())
            addDep(deps, it->second);
        const int32_t previousLayer = phase == Phase::Forward ? wt.layer - 1 : wt.layer + 1;
        if (auto it = m_firstComputeOfLayer.find({ previousLayer, passKey }); it != m_firstComputeOfLayer.end())
            addDep(deps, it->second);
        Value out;
        const Relayout gather[] = { Relayout { CollectiveType::AllGather, mask, inBytes, outBytes } };
        emitChain(gather, std::move(deps), reads,
            m_names ? prefix(microBatch) + "L" + std::to_string(wt.layer) + ".weights" : std::string(), wt.layer,
            microBatch, phase == Phase::Forward ? Pass::Forward : Pass::Backward, MemoryCategory::Weights, {}, -1,
            out.node, out.buffer);
        m_lastGatherOfPass[{ pk, 0 }] = out.node;
        m_weightGathers[k] = out;
        return out;
    }

    void StageBuilder::emitOp(int32_t opIndex, int32_t microBatch, int32_t chunk, Phase phase)
    {
        const Op& op = G.ops[static_cast<size_t>(opIndex)];
        ProgramNode n;
        n.kind = NodeKind::Compute;
        n.pass = op.pass;
        n.recompute = phase == Phase::Recompute;
        n.op = opIndex;
        n.layer = op.layer;
        n.microBatch = microBatch;
        n.chunk = static_cast<int16_t>(chunk);
        n.flops = P.opFlops[static_cast<size_t>(opIndex)];
        n.bytes = P.opBytes[static_cast<size_t>(opIndex)];
        if (m_names)
            n.name = NodeName(microBatch, opSuffix(opIndex, phase == Phase::Recompute));
        for (size_t k = 0; k < op.inputs.size(); ++k) {
            const int32_t t = op.inputs[k].tensor.value;
            const Tensor& tensor = G.tensor(TensorId { t });
            const Layout& expected = P.inputLayouts[static_cast<size_t>(opIndex)][k];
            if (tensor.role == TensorRole::Input)
                continue;
            if (tensor.role == TensorRole::Weight) {
                ensureResident(t);
                Value v = gatheredWeights(t, expected, microBatch, phase);
                addDep(n.dataDeps, v.node);
                n.reads.push_back(v.buffer);
                // An FP8 GEMM reads the weight's FP8 copy (row-wise forward, column-wise for the data gradient).
                if (const int32_t copy = m_fp8CopyBuffer[static_cast<size_t>(weightSlot(t))]; copy >= 0 && fp8Gemm(op))
                    n.reads.push_back(copy);
                continue;
            }
            // A recomputed op, and the backward of one, read recomputed values; every other op reads the values the
            // forward pass kept (a checkpointed region's output stays stored: its consumer saved it).
            const bool preferRecomputed = readsRecomputed(op, t, phase);
            Value v = lookup(t, microBatch, preferRecomputed);
            // A relayout's output is a transient copy, also of a KV cache (the keys a cp prefill gathers).
            const MemoryCategory copied =
                tensor.role == TensorRole::KvCache ? MemoryCategory::Activations : categoryOf(tensor.role);
            v = relayout(t, microBatch, v, expected, phase, copied);
            addDep(n.dataDeps, v.node);
            n.reads.push_back(v.buffer);
        }
        struct Produced
        {
            int32_t tensor, buffer;
        };
        SmallVector<Produced, 4> produced;
        bool writesGrad = false;
        for (const Operand& out : op.outputs) {
            const int32_t t = out.tensor.value;
            const Tensor& tensor = G.tensor(out.tensor);
            if (tensor.role == TensorRole::WeightGrad) {
                writesGrad = true;
                const int32_t w = tensor.gradOf.value;
                ensureResident(w);
                if (m_zero >= 2) {
                    // The full local gradient exists per micro-batch until its reduce-scatter into the shard; or,
                    // accumulated unsharded, from the first micro-batch's backward to the one reduce-scatter after
                    // the last.
                    const int32_t mb = m_accumulateUnsharded ? -1 : microBatch;
                    auto [it, inserted] = m_transientGrad.try_emplace({ w, mb }, -1);
                    if (inserted) {
                        // A weight gradient's bytes are at the main gradients' width (DistributionPlan::elementBytes).
                        it->second =
                            addBuffer(t, mb, P.tensorBytes[static_cast<size_t>(t)], MemoryCategory::Gradients, false);
                    }
                    n.writes.push_back(it->second);
                } else {
                    n.writes.push_back(m_gradBuffer[static_cast<size_t>(weightSlot(w))]);
                }
                continue;
            }
            const int64_t bytes =
                tensor.role == TensorRole::KvCache ? cacheAllocationBytes(t) : P.tensorBytes[static_cast<size_t>(t)];
            const int32_t buf = addBuffer(t, microBatch, bytes, categoryOf(tensor.role), false);
            n.writes.push_back(buf);
            produced.push_back(Produced { t, buf });
        }
        const uint32_t node = addNode(std::move(n));
        const int passKey = phase == Phase::Forward ? 0 : 1;
        if (const std::pair<int32_t, int> firstKey { op.layer, passKey }; firstKey != m_lastFirstComputeKey) {
            m_firstComputeOfLayer.try_emplace(firstKey, node);
            m_lastFirstComputeKey = firstKey;
        }
        for (const auto [t, buf] : produced) {
            (phase == Phase::Recompute ? m_recomputed : m_values)[key(t, microBatch)] = Value { node, buf };
            if (phase == Phase::Recompute)
                continue;
            for (int32_t logicalDst : P.remoteStages[static_cast<size_t>(t)]) {
                const int32_t dst = physicalStage(logicalDst, microBatch);
                const Tensor& tensor = G.tensor(TensorId { t });
                ProgramNode s;
                s.kind = NodeKind::Send;
                s.pass = op.pass;
                s.layer = op.layer;
                s.microBatch = microBatch;
                s.chunk = static_cast<int16_t>(chunk);
                s.peerStage = static_cast<int16_t>(dst);
                s.tag = p2pTag(P, t, microBatch);
                s.bytes = P.tensorBytes[static_cast<size_t>(t)];
                if (m_names)
                    s.name = prefix(microBatch) + "send:" + tensor.name + "->stage" + std::to_string(dst);
                s.dataDeps.push_back(NodeId { node });
                s.reads.push_back(buf);
                addNode(std::move(s));
            }
        }
        if (writesGrad && phase == Phase::Backward) {
            m_gradWriters[{ op.layer, microBatch }].push_back(node);
            // A layer's weights are complete for this micro-batch after the last of their writers ran.
            if (auto it = m_gradLayersOf.find(opIndex); it != m_gradLayersOf.end())
                for (int32_t layer : it->second) {
                    auto [left, inserted] = m_gradWritesLeft.try_emplace({ layer, microBatch }, 0);
                    if (inserted)
                        left->second = m_gradWritersPerLayer[layer];
                    if (--left->second == 0) {
                        m_gradWritesLeft.erase(left);
                        const bool iterationDone = ++m_microBatchesDone[layer] == m_microBatchesExpected[layer];
                        if (iterationDone)
                            m_finalGradWriters[layer] = m_gradWriters[{ layer, microBatch }];
                        reduceGradients(layer, microBatch, iterationDone);
                    }
                }
        }
    }

    void StageBuilder::reduceGradients(int32_t layer, int32_t microBatch, bool iterationDone)
    {
        // ZeRO 0/1 reduce once per iteration, after the last micro-batch (the last to complete the layer: with a
        // split backward its W may come after later micro-batches' backwards); ZeRO 2/3 reduce-scatter every
        // micro-batch into the resident shard (as DeepSpeed and FSDP do), so the full gradient never outlives its
        // micro-batch.
        if ((m_zero < 2 || m_accumulateUnsharded) && !iterationDone)
            return;
        if (m_zero < 2 && !P.config.parallelism.overlapGradReduce) {
            // Megatron-LM without --overlap-grad-reduce reduces the gradients once the whole backward, its last
            // pipeline send included, has returned (finalize_model_grads): emitDeferredReductions() emits them.
            m_deferredReductions.emplace_back(layer, microBatch);
            return;
        }
        addToGradientBucket(layer, microBatch);
    }

    void StageBuilder::addToGradientBucket(int32_t layer, int32_t microBatch)
    {
        // The bucket fills with the bytes it will reduce (training.grad_reduce_dtype), as Megatron-LM's buckets are
        // slices of the buffer it reduces.
        m_pendingLayers.emplace_back(layer, microBatch);
        for (int32_t w : m_weightsOfLayer[layer]) {
            const TensorId grad = G.weightGrads[static_cast<size_t>(weightSlot(w))];
            m_pendingBytes += P.gradReduceBytes(grad, P.tensorBytes[static_cast<size_t>(grad.value)]);
        }
        const int64_t bucket = P.config.parallelism.gradientBucketBytes;
        if (m_zero >= 2 || bucket <= 0 || m_pendingBytes >= bucket)
            flushGradientBucket(microBatch);
    }

    void StageBuilder::flushGradientBucket(int32_t microBatch)
    {
        if (m_pendingLayers.empty())
            return;
        // Group the bucket's gradients by the collective chain they need; one merged chain per group, in the
        // order of the chains' keys: (type, mask) steps packed 16 bits a step from the top (planRelayout() gives at
        // most one step per collective type, four), each step + 1 so that a shorter chain sorts first. The groups
        // and lists are members reused from bucket to bucket (their capacity stays).
        size_t groupCount = 0;
        std::vector<int32_t>& bucketWeights = m_bucketWeights; // the pending layers' weights, in graph order
        bucketWeights.clear();
        for (auto [layer, mb] : m_pendingLayers) {
            const std::vector<int32_t>& ws = m_weightsOfLayer[layer];
            bucketWeights.insert(bucketWeights.end(), ws.begin(), ws.end());
        }
        std::sort(bucketWeights.begin(), bucketWeights.end(), [&](int32_t a, int32_t b) {
            return m_stageIndex[static_cast<size_t>(weightSlot(a))] < m_stageIndex[static_cast<size_t>(weightSlot(b))];
        });
        bucketWeights.erase(std::unique(bucketWeights.begin(), bucketWeights.end()), bucketWeights.end());
        for (int32_t w : bucketWeights) {
            const int slot = weightSlot(w);
            const int32_t grad = G.weightGrads[static_cast<size_t>(slot)].value;
            // The collective moves the gradient's elements at training.grad_reduce_dtype, not at the main-gradient
            // width they are accumulated in (Megatron-LM reduces in fp32 unless --grad-reduce-in-bf16). The same
            // for every micro-batch: planned once per weight.
            std::optional<std::vector<Relayout>>& planned = m_gradReduceSteps[static_cast<size_t>(slot)];
            if (!planned)
                planned = planRelayout(P.tensorLayout[static_cast<size_t>(grad)], optimizerGradLayout(w),
                    P.gradReduceBytes(TensorId { grad }, P.tensorBytes[static_cast<size_t>(grad)]), P.mesh);
            const std::vector<Relayout>& steps = *planned;
            if (steps.empty())
                continue;
            static_assert(sizeof(AxisMask) == 1, "a step's key is its type and mask in 16 bits");
            if (steps.size() > 4)
                throw std::logic_error("a gradient reduction of more than four collectives");
            uint64_t signature = 0;
            for (size_t k = 0; k < steps.size(); ++k)
                signature |= ((static_cast<uint64_t>(steps[k].type) << 8 | steps[k].mask) + 1) << (48 - 16 * k);
            size_t at = 0;
            while (at < groupCount && m_bucketGroups[at].signature != signature)
                ++at;
            if (at == groupCount) {
                if (groupCount == m_bucketGroups.size())
                    m_bucketGroups.emplace_back();
                BucketGroup& fresh = m_bucketGroups[groupCount++];
                fresh.signature = signature;
                fresh.steps.assign(steps.begin(), steps.end());
                fresh.reads.clear();
                fresh.writes.clear();
            } else {
                BucketGroup& g = m_bucketGroups[at];
                for (size_t s = 0; s < steps.size(); ++s) {
                    g.steps[s].inputBytes += steps[s].inputBytes;
                    g.steps[s].outputBytes += steps[s].outputBytes;
                }
            }
            BucketGroup& g = m_bucketGroups[at];
            if (m_zero >= 2)
                g.reads.push_back(m_transientGrad.at({ w, m_accumulateUnsharded ? -1 : microBatch }));
            else
                g.reads.push_back(m_gradBuffer[static_cast<size_t>(slot)]);
            g.writes.push_back(m_gradBuffer[static_cast<size_t>(slot)]);
        }
        std::sort(m_bucketGroups.begin(), m_bucketGroups.begin() + static_cast<std::ptrdiff_t>(groupCount),
            [](const BucketGroup& a, const BucketGroup& b) { return a.signature < b.signature; });
        std::vector<NodeId> deps;
        for (auto [layer, mb] : m_pendingLayers)
            for (uint32_t node : m_gradWriters[{ layer, mb }])
                deps.push_back(NodeId { node });
        const int32_t firstLayer = m_pendingLayers.front().first;
        std::string name = m_names ? "grads:L" + std::to_string(firstLayer) : std::string();
        if (m_names && m_pendingLayers.size() > 1)
            name += "-L" + std::to_string(m_pendingLayers.back().first);
        for (size_t gi = 0; gi < groupCount; ++gi) {
            const BucketGroup& g = m_bucketGroups[gi];
            uint32_t last = kNoNode;
            int32_t lastBuffer = -1;
            const size_t first = m_program.nodes.size();
            // A reduction per micro-batch carries its micro-batch; once per iteration, none.
            const int32_t reductionMb = m_zero >= 2 && !m_accumulateUnsharded ? microBatch : -1;
            emitChain(g.steps, deps, g.reads, m_names ? prefix(reductionMb) + name : name, firstLayer, reductionMb,
                Pass::Backward, MemoryCategory::Gradients, g.writes, -1, last, lastBuffer);
            if (first < m_program.nodes.size())
                for (NodeId d : m_reductionCtrlDeps)
                    m_program.nodes[first].ctrlDeps.push_back(d);
            for (auto [layer, mb] : m_pendingLayers)
                m_reductionNodes[layer].push_back(last);
            if (m_zero >= 2 && !m_accumulateUnsharded) {
                if (m_reductionBarrierMicroBatch != microBatch)
                    m_reductionBarrier.clear();
                m_reductionBarrier.push_back(last);
                m_reductionBarrierMicroBatch = microBatch;
            }
        }
        for (auto [layer, mb] : m_pendingLayers)
            m_gradWriters.erase({ layer, mb });
        m_pendingLayers.clear();
        m_pendingBytes = 0;
    }

    void StageBuilder::emitDeferredReductions()
    {
        if (m_deferredReductions.empty())
            return;
        // Each chain waits for the last compute node (addNode chains every node after it) and, as Megatron's
        // blocking sends return only once sent, for the sends after it: the last stage's final gradient send.
        if (!P.config.parallelism.overlapP2pComm)
            for (uint32_t i = m_lastCompute == kNoNode ? 0 : m_lastCompute + 1; i < m_program.nodes.size(); ++i)
                if (m_program.nodes[i].kind == NodeKind::Send)
                    m_reductionCtrlDeps.push_back(NodeId { i });
        for (auto [layer, mb] : m_deferredReductions)
            addToGradientBucket(layer, mb);
        flushGradientBucket(P.microBatches - 1);
        m_deferredReductions.clear();
        m_reductionCtrlDeps.clear();
    }

    int64_t StageBuilder::mixedPrecisionStepBytes(int32_t w, int64_t optimizerBytes) const
    {
        // Megatron-LM's optimizer step around Adam (optimizer/optimizer.py, MixedPrecisionOptimizer.step and
        // clip_grads.py), per parameter of the shard it updates: the main gradients are made fp32 (a copy when
        // training.main_grad_dtype is 16-bit: read them, write fp32), unscaled and checked for inf/NaN under fp16's
        // loss scaling (read and write fp32), read once more for the gradient norm of --clip-grad (1.0 by default),
        // and after Adam the fp32 master weights are read to write the 16-bit model weights. Adam's state, the
        // gradient read and the weight write are counted by the caller.
        const bool mixed = G.tensor(TensorId { w }).dtype != DType::F32;
        const int64_t params = optimizerBytes / (mixed ? 12 : 8); // see ensureResident: 12 or 8 bytes a parameter
        const int64_t mainGradBytes = P.elementBytes(G.weightGrads[static_cast<size_t>(weightSlot(w))]);
        int64_t perParam = mixed ? 4 : mainGradBytes; // the gradient norm's read
        if (mixed) {
            perParam += 4; // the master weights read for the model-weight copy
            if (mainGradBytes < 4)
                perParam += mainGradBytes + 4;
            if (P.config.training.precision == Precision::Fp16)
                perParam += 8;
        }
        return params * perParam;
    }

    void StageBuilder::emitOptimizer()
    {
        // One fused optimizer step per layer on this stage, after that layer's gradients are reduced; ZeRO 1/2 then
        // all-gather the updated parameter shards back into the replicated weights.
        std::map<int32_t, std::vector<int32_t>> byLayer;
        for (int32_t w : m_stageWeights)
            byLayer[G.tensor(TensorId { w }).layer].push_back(w);
        for (auto& [layer, weights] : byLayer) {
            ProgramNode n;
            n.kind = NodeKind::Compute;
            n.pass = Pass::Optimizer;
            n.layer = layer;
            if (m_names)
                n.name = "optimizer:L" + std::to_string(layer);
            int64_t flops = 0, bytes = 0;
            for (int32_t w : weights) {
                const int slot = weightSlot(w);
                const int32_t opIndex = G.firstOptimizerOp + slot;
                const int64_t n1 = m_zero >= 1 ? dataGroupSize(w) : 1;
                flops += (P.opFlops[static_cast<size_t>(opIndex)] + n1 - 1) / n1;
                const int64_t optimizerBytes =
                    m_program.buffers[static_cast<size_t>(m_optimizerBuffer[static_cast<size_t>(slot)])].bytes;
                bytes += optimizerBytes * 2
                    + m_program.buffers[static_cast<size_t>(m_gradBuffer[static_cast<size_t>(slot)])].bytes
                    + m_program.buffers[static_cast<size_t>(m_weightBuffer[static_cast<size_t>(slot)])].bytes
                    + mixedPrecisionStepBytes(w, optimizerBytes);
                n.reads.push_back(m_gradBuffer[static_cast<size_t>(slot)]);
                n.reads.push_back(m_optimizerBuffer[static_cast<size_t>(slot)]);
                n.writes.push_back(m_optimizerBuffer[static_cast<size_t>(slot)]);
                n.writes.push_back(m_weightBuffer[static_cast<size_t>(slot)]);
            }
            n.flops = flops;
            n.bytes = bytes;
            for (uint32_t r : m_reductionNodes[layer])
                addDep(n.dataDeps, r);
            if (m_reductionNodes[layer].empty())
                for (uint32_t w : m_finalGradWriters[layer])
                    addDep(n.dataDeps, w);
            const uint32_t opt = addNode(std::move(n));
            if (m_zero != 1 && m_zero != 2)
                continue;
            std::map<AxisMask, std::pair<Relayout, std::vector<int32_t>>> gathers;
            for (int32_t w : weights) {
                const AxisMask data = P.strategy.weightDataMask(G.tensor(TensorId { w }));
                if (P.mesh.groupSize(data) <= 1)
                    continue;
                const int64_t full = P.tensorBytes[static_cast<size_t>(w)];
                const int64_t shard = (full + P.mesh.groupSize(data) - 1) / P.mesh.groupSize(data);
                auto& [r, writes] =
                    gathers
                        .try_emplace(data, Relayout { CollectiveType::AllGather, data, 0, 0 }, std::vector<int32_t> {})
                        .first->second;
                r.inputBytes += shard;
                r.outputBytes += full;
                writes.push_back(m_weightBuffer[static_cast<size_t>(weightSlot(w))]);
            }
            for (auto& [mask, g] : gathers) {
                uint32_t last = kNoNode;
                int32_t buf = -1;
                emitChain(std::span<const Relayout>(&g.first, 1), { NodeId { opt } }, g.second,
                    m_names ? "params:L" + std::to_string(layer) : std::string(), layer, -1, Pass::Optimizer,
                    MemoryCategory::Weights, g.second, -1, last, buf);
            }
        }
    }

    std::vector<std::pair<int32_t, Phase>> StageBuilder::unitSteps(const ScheduleUnit& unit) const
    {
        // The unit's ops in schedule order. Backward: each layer's forward is recomputed right before that layer's
        // backward (checkpointed layers), so only one layer's recomputed activations are alive at a time. A split
        // backward's B leaves out the ops that only write weight gradients; its W runs just those.
        std::vector<std::pair<int32_t, Phase>> steps;
        const std::vector<int32_t>& forward = m_chunkForward[static_cast<size_t>(unit.localChunk)];
        if (unit.pass == UnitPass::Forward) {
            for (int32_t op : forward)
                steps.emplace_back(op, Phase::Forward);
            return steps;
        }
        const std::vector<int32_t>& backward = m_chunkBackward[static_cast<size_t>(unit.localChunk)];
        if (unit.pass == UnitPass::BackwardWeight) {
            for (int32_t op : backward)
                if (m_weightOnly[static_cast<size_t>(op)])
                    steps.emplace_back(op, Phase::Backward);
            return steps;
        }
        std::map<int32_t, std::vector<int32_t>> recomputedOps; // layer -> its forward ops to re-run
        for (int32_t op : forward)
            if (recomputes(G.ops[static_cast<size_t>(op)]))
                recomputedOps[G.ops[static_cast<size_t>(op)].layer].push_back(op);
        for (int32_t op : backward) {
            if (unit.pass == UnitPass::BackwardInput && m_weightOnly[static_cast<size_t>(op)])
                continue;
            const int32_t layer = G.ops[static_cast<size_t>(op)].layer;
            if (auto it = recomputedOps.find(layer); it != recomputedOps.end()) {
                for (int32_t f : it->second)
                    steps.emplace_back(f, Phase::Recompute);
                recomputedOps.erase(it);
            }
            steps.emplace_back(op, Phase::Backward);
        }
        return steps;
    }

    void StageBuilder::emitSteps(const std::vector<std::pair<int32_t, Phase>>& steps, size_t from, size_t to,
        int32_t microBatch, int32_t localChunk)
    {
        for (size_t i = from; i < to; ++i) {
            emitOp(steps[i].first, microBatch, localChunk, steps[i].second);
            const int32_t layer = G.ops[static_cast<size_t>(steps[i].first)].layer;
            const bool startsLayer = i == 0 || G.ops[static_cast<size_t>(steps[i - 1].first)].layer != layer;
            if (m_zero >= 3 && startsLayer)
                prefetchNextLayer(steps, i, microBatch);
        }
    }

    void StageBuilder::emitUnit(const ScheduleUnit& unit)
    {
        clearFirstComputes();
        const std::vector<std::pair<int32_t, Phase>> steps = unitSteps(unit);
        emitSteps(steps, 0, steps.size(), unit.microBatch, unit.localChunk);
        if (unit.backward())
            flushGradientBucket(unit.microBatch);
    }

    bool StageBuilder::readsAllToAll(int32_t opIndex)
    {
        int8_t& known = m_readsAllToAll[static_cast<size_t>(opIndex)];
        if (known < 0) {
            known = 0;
            const Op& op = G.ops[static_cast<size_t>(opIndex)];
            for (size_t k = 0; k < op.inputs.size() && known == 0; ++k) {
                const int32_t t = op.inputs[k].tensor.value;
                const TensorRole role = G.tensor(TensorId { t }).role;
                if (role == TensorRole::Input || role == TensorRole::Weight)
                    continue;
                const Layout& from = P.tensorLayout[static_cast<size_t>(t)];
                const Layout& to = P.inputLayouts[static_cast<size_t>(opIndex)][k];
                if (from == to)
                    continue;
                for (const Relayout& r : planRelayout(from, to, P.tensorBytes[static_cast<size_t>(t)], P.mesh))
                    if (r.type == CollectiveType::AllToAll)
                        known = 1;
            }
        }
        return known == 1;
    }

    std::vector<uint32_t> StageBuilder::issueInputs(int32_t opIndex, int32_t microBatch, Phase phase)
    {
        std::vector<uint32_t> nodes;
        const Op& op = G.ops[static_cast<size_t>(opIndex)];
        for (size_t k = 0; k < op.inputs.size(); ++k) {
            const int32_t t = op.inputs[k].tensor.value;
            const Tensor& tensor = G.tensor(TensorId { t });
            if (tensor.role == TensorRole::Input || tensor.role == TensorRole::Weight)
                continue;
            const bool preferRecomputed = readsRecomputed(op, t, phase);
            const Value v = lookup(t, microBatch, preferRecomputed);
            const MemoryCategory copied =
                tensor.role == TensorRole::KvCache ? MemoryCategory::Activations : categoryOf(tensor.role);
            const Value ready =
                relayout(t, microBatch, v, P.inputLayouts[static_cast<size_t>(opIndex)][k], phase, copied);
            if (ready.node != kNoNode)
                nodes.push_back(ready.node);
        }
        return nodes;
    }

    void StageBuilder::gatePairOnBackwardInputs(const ScheduleUnit& backward)
    {
        // deepseek-ai/DualPipe (dualpipe.py at 3da1bbea, _forward_backward_chunk): the pair receives the forward's
        // and the backward's inputs and waits for both before it computes either. The backward's first op that is
        // no recomputation reads the gradient the next stage sends.
        for (const auto& [op, phase] : unitSteps(backward))
            if (phase == Phase::Backward) {
                m_gate = issueInputs(op, backward.microBatch, phase);
                return;
            }
    }

    void StageBuilder::emitPair(const ScheduleUnit& forward, const ScheduleUnit& backward)
    {
        // An overlapped forward-backward pair (DeepSeek-V3 report §3.2.1, Figure 4; Megatron-Core's combined 1F1B
        // step): the two passes are cut before every op that waits for an expert all-to-all and run piece by piece
        // in turn. Before switching, the all-to-all the next piece waits for is issued, right after the compute
        // that produced its input, so it runs on the communication stream while the other pass computes.
        clearFirstComputes();
        const std::vector<std::pair<int32_t, Phase>> f = unitSteps(forward), b = unitSteps(backward);
        size_t fi = 0, bi = 0;
        auto piece = [&](const std::vector<std::pair<int32_t, Phase>>& steps, size_t& at, const ScheduleUnit& unit) {
            size_t end = at + 1;
            while (end < steps.size() && !readsAllToAll(steps[end].first))
                ++end;
            emitSteps(steps, at, end, unit.microBatch, unit.localChunk);
            at = end;
            if (at < steps.size())
                issueInputs(steps[at].first, unit.microBatch, steps[at].second);
        };
        while (fi < f.size() || bi < b.size()) {
            if (fi < f.size())
                piece(f, fi, forward);
            if (bi < b.size())
                piece(b, bi, backward);
        }
        flushGradientBucket(backward.microBatch);
    }

    void StageBuilder::prefetchNextLayer(const std::vector<std::pair<int32_t, Phase>>& steps, size_t at, int32_t mb)
    {
        // FSDP prefetch: once layer l has started, the weights of the layer the schedule runs next are gathered,
        // so the gather overlaps layer l and waits for nothing later than its start.
        const int32_t layer = G.ops[static_cast<size_t>(steps[at].first)].layer;
        size_t j = at + 1;
        while (j < steps.size() && G.ops[static_cast<size_t>(steps[j].first)].layer == layer)
            ++j;
        if (j == steps.size())
            return;
        const int32_t next = G.ops[static_cast<size_t>(steps[j].first)].layer;
        for (; j < steps.size() && G.ops[static_cast<size_t>(steps[j].first)].layer == next; ++j) {
            const auto [opIndex, phase] = steps[j];
            const Op& op = G.ops[static_cast<size_t>(opIndex)];
            for (size_t k = 0; k < op.inputs.size(); ++k)
                if (G.tensor(op.inputs[k].tensor).role == TensorRole::Weight)
                    gatheredWeights(
                        op.inputs[k].tensor.value, P.inputLayouts[static_cast<size_t>(opIndex)][k], mb, phase);
        }
    }

    void StageBuilder::readUnreadOutputs()
    {
        // Every value has a reader: a consumer that tracks tensor lifetimes (ASTRA-sim's track-local-mem) keeps a
        // value alive until its last reader, and one without a reader to the end of the iteration. A recomputed
        // value nobody reads (the output of a checkpointed layer's last op, or a context that the backward takes
        // from the forward) is held by autograd until the backward of the op that made it; any other unread value
        // until the next compute node, which waits for its writer through the compute chain.
        std::vector<ProgramNode>& nodes = m_program.nodes;
        std::vector<uint8_t> isRead(m_program.buffers.size(), 0);
        for (const ProgramNode& n : nodes)
            for (int32_t b : n.reads)
                isRead[static_cast<size_t>(b)] = 1;
        std::vector<uint32_t> nextCompute(nodes.size(), kNoNode);
        for (size_t i = nodes.size(); i-- > 1;)
            nextCompute[i - 1] = nodes[i].kind == NodeKind::Compute ? static_cast<uint32_t>(i) : nextCompute[i];
        // (forward op, micro-batch) -> its first backward node: the sorted (key, node) pairs, the first of a key
        // is the earliest node.
        auto backwardKey = [](int32_t forwardOp, int32_t microBatch) {
            return static_cast<uint64_t>(static_cast<uint32_t>(forwardOp)) << 32 | static_cast<uint32_t>(microBatch);
        };
        std::vector<std::pair<uint64_t, uint32_t>> backwardOf;
        for (size_t i = 0; i < nodes.size(); ++i) {
            const ProgramNode& n = nodes[i];
            if (n.kind == NodeKind::Compute && n.pass == Pass::Backward && n.op >= 0) {
                const int32_t f = G.ops[static_cast<size_t>(n.op)].forwardOp;
                if (f >= 0)
                    backwardOf.emplace_back(backwardKey(f, n.microBatch), static_cast<uint32_t>(i));
            }
        }
        std::sort(backwardOf.begin(), backwardOf.end());
        auto firstBackward = [&](int32_t forwardOp, int32_t microBatch) -> uint32_t {
            const uint64_t k = backwardKey(forwardOp, microBatch);
            const auto it = std::lower_bound(backwardOf.begin(), backwardOf.end(), std::make_pair(k, uint32_t { 0 }));
            return it != backwardOf.end() && it->first == k ? it->second : kNoNode;
        };
        for (size_t i = 0; i < nodes.size(); ++i) {
            if (nodes[i].kind != NodeKind::Compute)
                continue;
            const auto writes = nodes[i].writes; // a copy: the loop appends to nodes[reader]
            for (int32_t b : writes) {
                const Buffer& buf = m_program.buffers[static_cast<size_t>(b)];
                if (buf.resident || isRead[static_cast<size_t>(b)])
                    continue;
                uint32_t reader = nextCompute[i];
                if (nodes[i].recompute)
                    if (const uint32_t b = firstBackward(nodes[i].op, nodes[i].microBatch); b != kNoNode && b > i)
                        reader = b;
                if (reader == kNoNode) {
                    // Serving's last sampled token leaves the GPU (the engine returns it): not a value the programs
                    // hold. Training has no such value; a write without a later compute node stays as it is.
                    if (G.inference)
                        nodes[i].writes.erase(
                            std::remove(nodes[i].writes.begin(), nodes[i].writes.end(), b), nodes[i].writes.end());
                    continue;
                }
                nodes[reader].reads.push_back(b);
                isRead[static_cast<size_t>(b)] = 1;
            }
        }
    }

    void StageBuilder::buildInference()
    {
        // Phase-major: the prefill of every micro-batch, then decode step 1 of every micro-batch, and so on. With
        // pp micro-batches each stage works on one while the others are on the other stages, and a micro-batch's
        // next step starts once its sampled token is back on the first stage.
        std::vector<std::vector<int32_t>> byStep(static_cast<size_t>(G.decodeSteps) + 1);
        for (int32_t op : m_chunkForward.front())
            byStep[static_cast<size_t>(G.ops[static_cast<size_t>(op)].step)].push_back(op);
        for (const std::vector<int32_t>& ops : byStep) {
            for (int32_t mb = 0; mb < P.microBatches; ++mb) {
                clearFirstComputes();
                for (int32_t op : ops)
                    emitOp(op, mb, 0, Phase::Forward);
            }
        }
        readUnreadOutputs();
        // The cache and the weights are kept to the end of the programs (a serving engine frees a cache when its
        // request finishes, the weights never): the last node (a pipeline send, or the last compute) reads every
        // cache block and every resident buffer, so the timeline holds all of them at the end, and so does a
        // consumer that tracks tensor lifetimes from the trace's tensor lists (ASTRA-sim's track-local-mem keeps a
        // tensor only until its last reader: a prefill reads each weight once).
        if (m_program.nodes.empty())
            return;
        ProgramNode& last = m_program.nodes.back();
        for (size_t b = 0; b < m_program.buffers.size(); ++b)
            if (m_program.buffers[b].category == MemoryCategory::KvCache || m_program.buffers[b].resident)
                last.reads.push_back(static_cast<int32_t>(b));
    }

    ClassProgram StageBuilder::build(const std::vector<ScheduleUnit>* givenOrder, std::vector<uint32_t>* unitStarts)
    {
        const size_t weightCount = G.weights.size();
        m_weightBuffer.assign(weightCount, -1);
        m_fp8CopyBuffer.assign(weightCount, -1);
        m_gradReduceSteps.assign(weightCount, std::nullopt);
        m_gradBuffer.assign(weightCount, -1);
        m_optimizerBuffer.assign(weightCount, -1);
        m_stageIndex.assign(weightCount, -1);
        const int32_t locals = P.stages.localChunks();
        m_chunkForward.assign(static_cast<size_t>(locals), {});
        m_chunkBackward.assign(static_cast<size_t>(locals), {});
        m_weightOnly.assign(G.ops.size(), 0);
        m_readsAllToAll.assign(G.ops.size(), -1);
        std::vector<int32_t> localOfChunk(static_cast<size_t>(P.stages.chunkCount()), -1);
        for (int32_t local = 0; local < locals; ++local)
            localOfChunk[static_cast<size_t>(P.stages.chunkOf(m_stage, local))] = local;
        std::map<int32_t, int32_t> localOfLayer; // weight layer -> the local chunk whose backward writes its grads
        for (size_t i = 0; i < G.ops.size(); ++i) {
            const Op& op = G.ops[i];
            const int32_t chunk = P.opChunk[i];
            if (op.pass == Pass::Optimizer || localOfChunk[static_cast<size_t>(chunk)] < 0)
                continue;
            const size_t local = static_cast<size_t>(localOfChunk[static_cast<size_t>(chunk)]);
            // Every weight this stage touches is resident from the start (per-layer gathers merge all of a layer's).
            for (const Operand& in : op.inputs)
                if (G.tensor(in.tensor).role == TensorRole::Weight)
                    ensureResident(in.tensor.value);
            for (const Operand& out : op.outputs)
                if (G.tensor(out.tensor).role == TensorRole::WeightGrad)
                    ensureResident(G.tensor(out.tensor).gradOf.value);
            if (op.pass == Pass::Forward) {
                m_chunkForward[local].push_back(static_cast<int32_t>(i));
            } else {
                m_chunkBackward[local].push_back(static_cast<int32_t>(i));
                std::vector<int32_t>& layers = m_gradLayersOf[static_cast<int32_t>(i)];
                for (const Operand& out : op.outputs) {
                    const Tensor& t = G.tensor(out.tensor);
                    if (t.role == TensorRole::WeightGrad) {
                        const int32_t layer = G.tensor(t.gradOf).layer;
                        if (std::find(layers.begin(), layers.end(), layer) == layers.end()) {
                            layers.push_back(layer);
                            ++m_gradWritersPerLayer[layer];
                            localOfLayer[layer] = static_cast<int32_t>(local);
                        }
                    }
                }
                m_weightOnly[i] = G.writesOnlyWeightGradients(op) ? 1 : 0;
                if (layers.empty())
                    m_gradLayersOf.erase(static_cast<int32_t>(i));
            }
        }
        if (G.inference) {
            buildInference();
            return std::move(m_program);
        }
        std::vector<ScheduleUnit> ownOrder;
        if (!givenOrder) {
            ScheduleShape shape = scheduleShapeOf(P.config);
            shape.microBatches = P.microBatches;
            ownOrder = scheduleOrder(shape, m_stage);
        }
        const std::vector<ScheduleUnit>& order = givenOrder ? *givenOrder : ownOrder;
        if (order.empty())
            throw std::logic_error("the schedule refuses this plan (the validator should have said why)");
        // A layer's gradients are complete for the iteration once every micro-batch that runs its chunk here has
        // written them (under DualPipe a chunk runs the micro-batches of one direction).
        std::vector<std::set<int32_t>> microBatchesOfLocal(static_cast<size_t>(locals));
        for (const ScheduleUnit& unit : order)
            if (unit.backward())
                microBatchesOfLocal[static_cast<size_t>(unit.localChunk)].insert(unit.microBatch);
        for (auto [layer, local] : localOfLayer)
            m_microBatchesExpected[layer] =
                static_cast<int32_t>(microBatchesOfLocal[static_cast<size_t>(local)].size());
        const bool overlapPairs = P.config.parallelism.overlapMoeExpertParallelComm;
        const bool dualPipe =
            P.config.parallelism.schedule == Schedule::DualPipe || P.config.parallelism.schedule == Schedule::DualPipeV;
        // Room for a value per op of the order's units that writes one (all but the backward ops that write only
        // weight gradients: a W unit writes none), instead of reinserting every key at each doubling of the map.
        std::vector<size_t> valueOps(static_cast<size_t>(locals) * 2, 0); // (local chunk, backward)
        for (size_t local = 0; local < static_cast<size_t>(locals); ++local) {
            valueOps[2 * local] = m_chunkForward[local].size();
            for (int32_t op : m_chunkBackward[local])
                valueOps[2 * local + 1] += m_weightOnly[static_cast<size_t>(op)] ? 0 : 1;
        }
        size_t valuesWritten = 0;
        for (const ScheduleUnit& unit : order)
            if (unit.pass != UnitPass::BackwardWeight)
                valuesWritten += valueOps[2 * static_cast<size_t>(unit.localChunk) + (unit.backward() ? 1 : 0)];
        m_values.reserve(valuesWritten);
        if (unitStarts)
            unitStarts->assign(order.size(), 0);
        for (size_t k = 0; k < order.size(); ++k) {
            if (unitStarts)
                (*unitStarts)[k] = static_cast<uint32_t>(m_program.nodes.size());
            if (dualPipe && order[k].pairedWithNext && k + 1 < order.size())
                gatePairOnBackwardInputs(order[k + 1]);
            if (overlapPairs && order[k].pairedWithNext && k + 1 < order.size()) {
                emitPair(order[k], order[k + 1]);
                ++k;
                if (unitStarts) // the pair's nodes interleave: all count as the first unit's
                    (*unitStarts)[k] = static_cast<uint32_t>(m_program.nodes.size());
                continue;
            }
            emitUnit(order[k]);
        }
        emitDeferredReductions();
        emitOptimizer();
        readUnreadOutputs();
        return std::move(m_program);
    }

} // namespace

ClassProgram buildClassProgram(const DistributionPlan& plan, int32_t stage, bool names,
    const std::vector<ScheduleUnit>* order, std::vector<uint32_t>* unitStarts)
{
    return StageBuilder(plan, stage, names).build(order, unitStarts);
}

} // namespace stagecraft
