// SPDX-License-Identifier: MIT
#include "model/modelgraph.h"

#include "model/modelsymbols.h"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>

namespace stagecraft {

// FLOPs per element of the non-matmul ops. Matmuls count 2 per multiply-add (the convention of Narayanan et al.
// 2021 and PaLM appendix B); for pointwise work we count arithmetic operations per element as a fused kernel
// would execute them. These are our convention, small next to the matmuls (O(1/h) of the total).
namespace flopcost {
    constexpr int64_t kMultiplyAdd = 2;
    constexpr int64_t kLayerNormFwd = 8; // mean, variance, normalize, scale, shift
    constexpr int64_t kRmsNormFwd = 4; // square-sum, rsqrt scale, weight
    constexpr int64_t kSoftmaxFwd = 5; // max, subtract, exp, sum, divide
    constexpr int64_t kSoftmaxBwd = 4;
    constexpr int64_t kGeluFwd = 8; // tanh approximation
    constexpr int64_t kGeluBwd = 16;
    constexpr int64_t kSwigluFwd = 5; // silu(g) * u
    constexpr int64_t kSwigluBwd = 10;
    constexpr int64_t kRope = 3; // x*cos + rotate(x)*sin
    constexpr int64_t kDropout = 1;
    constexpr int64_t kCrossEntropyFwd = 4; // max, exp, sum (log-sum-exp stats over the vocabulary)
    constexpr int64_t kCrossEntropyBwd = 3; // softmax - one-hot, scale
    constexpr int64_t kRouterFwd = 5; // softmax + top-k selection over experts
    constexpr int64_t kRouterBwd = 4;
    constexpr int64_t kCombine = 2; // weighted sum of the top-k expert outputs
    constexpr int64_t kAdam = 12; // two moment updates, bias correction, sqrt, divide, update
    constexpr int64_t kSample = 5; // softmax over the vocabulary and the pick of the next token
} // namespace flopcost

int ModelGraph::weightIndex(TensorId id) const
{
    if (id.value < 0 || static_cast<size_t>(id.value) >= weightSlot.size())
        return -1;
    return weightSlot[static_cast<size_t>(id.value)];
}

bool ModelGraph::writesOnlyWeightGradients(const Op& op) const
{
    return !op.outputs.empty() && std::all_of(op.outputs.begin(), op.outputs.end(), [this](const Operand& out) {
        return tensor(out.tensor).role == TensorRole::WeightGrad;
    });
}

Expr ModelGraph::parameterCount() const
{
    return parameters;
}

Expr ModelGraph::flops(Pass pass) const
{
    switch (pass) {
    case Pass::Forward:
        return forwardFlops;
    case Pass::Backward:
        return backwardFlops;
    case Pass::Optimizer:
        return optimizerFlops;
    }
    return {};
}

namespace {

    using Labels = std::vector<Index>;
    using I = Index;

    Expr constant(int64_t v)
    {
        return Expr(v);
    }

    /// Builds the forward graph with small helpers, then derives backward from per-kind rules.
    class Builder
    {
    public:
        Builder(const ModelConfig& model, Precision precision)
            : m_model(model)
        {
            m_graph = std::make_shared<ModelGraph>();
            m_graph->family = model.family;
            m_graph->layers = static_cast<int32_t>(model.layers);
            m_graph->precision = precision;
            m_graph->causalMask = model.causalMask;
            m_graph->tiedEmbeddings = model.tiedEmbeddings;
            m_graph->sharedExpert = model.family == Family::Moe && model.sharedExpertFfnHidden > 0;
            m_graph->attention = model.attention;
            m_graph->qkNorm = model.qkNorm;
            m_graph->qkvBias = model.qkvBias;
            m_graph->mla = usesMla(model);
            m_graph->qLora = model.qLoraRank > 0;
            m_graph->firstDenseLayers = static_cast<int32_t>(model.firstDenseLayers);
            m_graph->mtpModules = static_cast<int32_t>(std::max<int64_t>(0, model.mtpModules));
            m_act = precision == Precision::Fp32 ? DType::F32 : precision == Precision::Fp16 ? DType::F16 : DType::BF16;
        }

        std::shared_ptr<const ModelGraph> build();
        std::shared_ptr<const ModelGraph> buildInference(const InferenceConfig& inference);

    private:
        ModelGraph& g()
        {
            return *m_graph;
        }

        TensorId newTensor(
            std::string name, Labels dims, TensorRole role, int32_t layer, DType dtype, bool requiresGrad)
        {
            Tensor t;
            t.name = role == TensorRole::Weight ? std::move(name) : m_phasePrefix + name;
            t.step = m_step;
            t.dims = std::move(dims);
            t.role = role;
            t.layer = layer;
            t.dtype = dtype;
            t.requiresGrad = requiresGrad;
            g().tensors.push_back(std::move(t));
            return TensorId { static_cast<int32_t>(g().tensors.size() - 1) };
        }

        TensorId weight(const std::string& name, Labels dims, bool expert = false)
        {
            if (m_inference) {
                // Serving: every phase uses the same weights, and no gradient exists.
                if (auto it = m_weightByName.find(name); it != m_weightByName.end())
                    return it->second;
                TensorId id = newTensor(name, std::move(dims), TensorRole::Weight, m_layer, m_act, false);
                g().tensors[static_cast<size_t>(id.value)].isExpertWeight = expert;
                g().weights.push_back(id);
                g().weightSlot.resize(g().tensors.size(), -1);
                g().weightSlot[static_cast<size_t>(id.value)] = static_cast<int32_t>(g().weights.size() - 1);
                m_weightByName.emplace(name, id);
                return id;
            }
            TensorId id = newTensor(name, std::move(dims), TensorRole::Weight, m_layer, m_act, true);
            g().tensors[static_cast<size_t>(id.value)].isExpertWeight = expert;
            g().weights.push_back(id);
            g().weightSlot.resize(g().tensors.size(), -1);
            g().weightSlot[static_cast<size_t>(id.value)] = static_cast<int32_t>(g().weights.size() - 1);
            TensorId grad = newTensor("d:" + name, g().tensor(id).dims, TensorRole::WeightGrad, m_layer, m_act, false);
            g().tensors[static_cast<size_t>(grad.value)].gradOf = id;
            g().tensors[static_cast<size_t>(grad.value)].isExpertWeight = expert;
            g().weightGrads.push_back(grad);
            return id;
        }

        Operand in(TensorId t) const
        {
            return Operand { t, g_const().tensor(t).dims };
        }
        Operand in(TensorId t, Labels labels) const
        {
            return Operand { t, std::move(labels) };
        }
        const ModelGraph& g_const() const
        {
            return *m_graph;
        }

        int addOp(OpKind kind, std::string name, Region region, std::vector<Operand> inputs,
            std::vector<Operand> outputs, Labels space, Expr flopsPerPoint, Pass pass = Pass::Forward)
        {
            Op op;
            op.kind = kind;
            op.name = m_phasePrefix + name;
            op.step = m_step;
            op.pass = pass;
            op.layer = m_layer;
            op.region = region;
            op.recompute = pass == Pass::Forward ? m_recompute : RecomputeClass::Never;
            op.modules = pass == Pass::Forward ? m_modules : 0;
            op.inputs = std::move(inputs);
            op.outputs = std::move(outputs);
            op.space = std::move(space);
            op.flopsPerPoint = std::move(flopsPerPoint);
            g().ops.push_back(std::move(op));
            return static_cast<int>(g().ops.size() - 1);
        }

        /// Forward op with one new activation output whose dims are `outDims`.
        TensorId fwd(OpKind kind, const std::string& name, Region region, std::vector<Operand> inputs, Labels outDims,
            Labels space, Expr flopsPerPoint, DType dtype)
        {
            TensorId out = newTensor(name, outDims, TensorRole::Activation, m_layer, dtype, true);
            addOp(kind, name, region, std::move(inputs), { Operand { out, outDims } }, std::move(space),
                std::move(flopsPerPoint));
            return out;
        }
        TensorId fwd(OpKind kind, const std::string& name, Region region, std::vector<Operand> inputs, Labels outDims,
            Labels space, Expr flopsPerPoint)
        {
            return fwd(kind, name, region, std::move(inputs), std::move(outDims), std::move(space),
                std::move(flopsPerPoint), m_act);
        }

        /// out[outLabels] = x[xLabels] . w[wLabels], contracting the labels absent from the output.
        TensorId matmul(const std::string& name, Region region, Operand x, TensorId w, Labels outDims)
        {
            Labels space = x.labels;
            for (Index i : g().tensor(w).dims)
                if (std::find(space.begin(), space.end(), i) == space.end())
                    space.push_back(i);
            return fwd(OpKind::MatMul, name, region, { std::move(x), in(w) }, std::move(outDims), std::move(space),
                constant(flopcost::kMultiplyAdd));
        }

        TensorId norm(const std::string& name, TensorId x)
        {
            return norm(name, x, Region::Sequence, { I::Hidden });
        }
        /// A norm over the last dims of x with a weight of `weightDims` (LayerNorm with bias for gpt).
        TensorId norm(const std::string& name, TensorId x, Region region, Labels weightDims)
        {
            const bool layerNorm = m_model.family == Family::Gpt;
            std::vector<Operand> inputs { in(x), in(weight(name + ".weight", weightDims)) };
            if (layerNorm)
                inputs.push_back(in(weight(name + ".bias", weightDims)));
            const Labels dims = g().tensor(x).dims; // a copy: weight() may reallocate the tensor list
            return fwd(OpKind::Norm, name, region, std::move(inputs), dims, dims,
                constant(layerNorm ? flopcost::kLayerNormFwd : flopcost::kRmsNormFwd));
        }

        /// Adds recompute modules (recompute_module bits) to the forward ops built while it lives.
        class ModuleScope
        {
        public:
            ModuleScope(Builder& b, uint8_t modules)
                : m_builder(b)
                , m_saved(b.m_modules)
            {
                b.m_modules |= modules;
            }
            ~ModuleScope()
            {
                m_builder.m_modules = m_saved;
            }
            ModuleScope(const ModuleScope&) = delete;
            ModuleScope& operator=(const ModuleScope&) = delete;

        private:
            Builder& m_builder;
            uint8_t m_saved;
        };

        /// A decoder layer's input or pre-MLP norm: Megatron's `layernorm` recompute module.
        TensorId layerNorm(const std::string& name, TensorId x)
        {
            ModuleScope module(*this, recompute_module::kLayernorm);
            return norm(name, x);
        }

        TensorId dropout(const std::string& name, Region region, TensorId x)
        {
            if (m_inference)
                return x; // no dropout when serving
            const Labels dims = g().tensor(x).dims;
            TensorId out = newTensor(name, dims, TensorRole::Activation, m_layer, m_act, true);
            TensorId mask = newTensor(name + ".mask", dims, TensorRole::Mask, m_layer, DType::U8, false);
            addOp(OpKind::Dropout, name, region, { in(x) }, { Operand { out, dims }, Operand { mask, dims } }, dims,
                constant(flopcost::kDropout));
            return out;
        }

        TensorId add(const std::string& name, Region region, TensorId a, Operand b)
        {
            const Labels dims = g().tensor(a).dims;
            return fwd(OpKind::Add, name, region, { in(a), std::move(b) }, dims, dims, constant(1));
        }

        /// A linear layer with an optional bias (gpt); the bias add is fused into the matmul kernel.
        TensorId linear(const std::string& name, Region region, Operand x, Labels wDims, Labels outDims)
        {
            return linear(
                name, region, std::move(x), std::move(wDims), std::move(outDims), m_model.family == Family::Gpt);
        }
        TensorId linear(const std::string& name, Region region, Operand x, Labels wDims, Labels outDims, bool bias)
        {
            TensorId w = weight(name + ".weight", std::move(wDims));
            TensorId y = matmul(name, region, std::move(x), w, outDims);
            if (bias) {
                Labels biasDims(outDims.begin() + 2, outDims.end()); // the output features
                TensorId b = weight(name + ".bias", biasDims);
                g().ops.back().inputs.push_back(in(b));
            }
            return y;
        }

        /// Per-point cost terms of core attention over (batch, heads, seq, seq_kv): FLOPs per multiply-add (1 for a
        /// causal kernel, which does half the S x S work), the share of softmax work done (1/2 causal), and the
        /// q/k and v head sizes (MLA adds the RoPE part to q/k). Only the fused kernel skips the masked half: eager
        /// attention computes every score with a batched GEMM and masks it afterwards (Megatron-LM's baddbmm, its
        /// masked softmax and the bmm with V), so it does the full S x S work whatever the mask.
        struct AttentionCost
        {
            Expr mac, half, qkDim, vDim;
        };
        AttentionCost attentionCost() const
        {
            const auto& sym = ModelSymbols::get();
            const bool skipsMasked = m_model.causalMask && m_model.attention == AttentionKernel::Flash;
            AttentionCost c;
            c.mac = skipsMasked ? Expr(1) : constant(flopcost::kMultiplyAdd);
            c.half = skipsMasked ? Expr(1) / Expr(2) : Expr(1);
            c.qkDim = Expr::symbol(sym.dhead);
            if (usesMla(m_model))
                c.qkDim += Expr::symbol(sym.drope);
            c.vDim = Expr::symbol(sym.dvhead);
            return c;
        }

        TensorId attention(TensorId x);
        TensorId decodeAttention(TensorId x);
        /// MLA's query heads from the normed hidden state `xn` of the phase's positions (m_seq): the part without
        /// RoPE and the rotated RoPE part, through the compressed query when q_lora_rank > 0.
        std::pair<TensorId, TensorId> mlaQuery(const std::string& p, TensorId xn);
        /// Marks `keys` and `values` (MLA: the latent and the rotary key) as this layer's KV cache of this phase.
        void cache(TensorId keys, TensorId values);
        /// How a decode step's attention reads a cache tensor: as it was written. The prompt's positions keep their
        /// Seq label, which the Attention region splits over cp only, and validation keeps cp at 1 for decode.
        Operand cacheRead(TensorId t) const
        {
            return in(t);
        }
        void inferenceHead(TensorId x);
        TensorId decoderLayer(TensorId x);
        void headAndLoss(const std::string& prefix, TensorId xf, TensorId headWeight, bool tiedHead);
        /// A dense MLP: a layer's (recompute module `mlp`) or the shared expert (`shared_experts`).
        TensorId denseMlp(const std::string& prefix, TensorId x, Index ffn, Region region, uint8_t module);
        TensorId moeMlp(TensorId x);
        void differentiate();
        void optimizer();
        /// FP8 training: the activations that only FP8 GEMMs read are kept in FP8, and the weights they read get
        /// FP8 copies (Tensor::fp8Copies).
        void storeGemmInputsInFp8();

        // Gradient bookkeeping for the reverse sweep.
        TensorId finalGrad(TensorId t, Region fallbackRegion);
        void contribute(TensorId t, TensorId grad, Region region);

        const ModelConfig& m_model;
        std::shared_ptr<ModelGraph> m_graph;
        DType m_act = DType::BF16;
        // Inference (buildInference): the phase being built and what it reads.
        bool m_inference = false;
        int32_t m_step = 0; ///< 0 the prefill (and training), k decode step k
        std::string m_phasePrefix; ///< "prefill/", "decode<k>/" on op and activation names; "" in training
        Index m_seq = I::Seq; ///< the positions of the phase: Seq, or Token in a decode step
        Index m_capacity = I::Capacity; ///< tokens routed to an expert: Capacity, or TokenCapacity in a decode step
        DType m_cacheDtype = DType::BF16;
        std::unordered_map<std::string, TensorId> m_weightByName;
        std::unordered_map<int32_t, std::vector<TensorId>> m_cacheKeys, m_cacheValues; ///< layer -> per phase
        TensorId m_nextTokens {}; ///< the token each sequence feeds to the next decode step
        int32_t m_layer = -1;
        RecomputeClass m_recompute = RecomputeClass::Never;
        uint8_t m_modules = 0; ///< recompute modules of the ops being built (ModuleScope)

        struct Contribution
        {
            TensorId grad;
            Region region;
        };
        std::unordered_map<int32_t, std::vector<Contribution>> m_contributions;
        std::unordered_map<int32_t, TensorId> m_finalGrads;
    };

    void Builder::cache(TensorId keys, TensorId values)
    {
        // The projection writes the cache in its dtype (a quantizing fp8 cache fuses the cast into that write).
        for (TensorId t : { keys, values }) {
            Tensor& tensor = g().tensors[static_cast<size_t>(t.value)];
            tensor.role = TensorRole::KvCache;
            tensor.dtype = m_cacheDtype;
        }
        m_cacheKeys[m_layer].push_back(keys);
        m_cacheValues[m_layer].push_back(values);
    }

    std::pair<TensorId, TensorId> Builder::mlaQuery(const std::string& p, TensorId xn)
    {
        const Labels qd { I::Batch, m_seq, I::Heads, I::HeadDim };
        const Labels qr { I::Batch, m_seq, I::Heads, I::RopeDim };
        Operand qIn = in(xn);
        Labels qW { I::Hidden };
        if (m_model.qLoraRank > 0) {
            TensorId qa = linear(
                p + ".q_a", Region::Attention, in(xn), { I::Hidden, I::QLora }, { I::Batch, m_seq, I::QLora }, false);
            qIn = in(norm(p + ".q_a_norm", qa, Region::Attention, { I::QLora }));
            qW = { I::QLora };
        }
        const Index qSrc = qW.front();
        ModuleScope upProjection(*this, recompute_module::kMlaUpProj);
        TensorId qn = linear(p + ".q_nope", Region::Attention, qIn, { qSrc, I::Heads, I::HeadDim }, qd, false);
        TensorId qp = linear(p + ".q_rope", Region::Attention, qIn, { qSrc, I::Heads, I::RopeDim }, qr, false);
        qp = fwd(OpKind::Rope, p + ".rope_q", Region::Attention, { in(qp) }, qr, qr, constant(flopcost::kRope));
        return { qn, qp };
    }

    TensorId Builder::decodeAttention(TensorId x)
    {
        // One new position per sequence against the cache of the Seq + k positions before and including it.
        const auto& sym = ModelSymbols::get();
        const std::string p = "L" + std::to_string(m_layer) + ".attn";
        const bool gpt = m_model.family == Family::Gpt;
        const bool mla = usesMla(m_model);
        const bool bias = gpt || m_model.qkvBias;
        const Expr context = Expr::symbol(sym.seq) + Expr(m_step);
        TensorId xn = layerNorm(p + ".norm", x);
        const Labels qd { I::Batch, I::Token, I::Heads, I::HeadDim };
        const Labels kd { I::Batch, I::Token, I::KVHeads, I::HeadDim };
        const Labels vd { I::Batch, I::Token, I::KVHeads, I::VHeadDim };
        const Labels ctxDims { I::Batch, I::Token, I::Heads, I::VHeadDim };
        const Labels space { I::Batch, I::Heads, I::Token };
        std::vector<Operand> inputs;
        auto readCache = [&] {
            for (TensorId t : m_cacheKeys[m_layer])
                inputs.push_back(cacheRead(t));
            for (TensorId t : m_cacheValues[m_layer])
                inputs.push_back(cacheRead(t));
        };
        // Decode only: the prompt's cache is resident when the first step runs (no op of these programs made it).
        auto promptCache = [&](const std::string& name, Labels dims) {
            return newTensor(p + name, std::move(dims), TensorRole::KvCache, m_layer, m_cacheDtype, false);
        };
        const bool havePrompt = !m_cacheKeys[m_layer].empty();
        TensorId ctx;
        if (mla) {
            // Absorbed MLA (DeepSeek-V2 section 2.1.2): scores q_nope^T W_UK c = (W_UK^T q_nope)^T c, so W_UK
            // turns each query head into the latent space once (2*H*Dn*Dkvlora FLOPs per token) instead of
            // expanding every cached latent into keys; the context is taken in latent space and W_UV maps it to
            // the value heads after attention (2*H*Dkvlora*Dvhead). Per cached position and head the kernel does
            // Dkvlora + Drope multiply-adds for the score and Dkvlora for the context.
            const auto [qn, qp] = mlaQuery(p, xn);
            if (!havePrompt) {
                m_cacheKeys[m_layer].push_back(promptCache(".kv_cache", { I::Batch, I::Seq, I::KVLora }));
                m_cacheValues[m_layer].push_back(promptCache(".k_rope_cache", { I::Batch, I::Seq, I::RopeDim }));
            }
            TensorId ckv = linear(p + ".kv_a", Region::Attention, in(xn), { I::Hidden, I::KVLora },
                { I::Batch, I::Token, I::KVLora }, false);
            const Labels kr { I::Batch, I::Token, I::RopeDim };
            TensorId kp = linear(p + ".k_rope", Region::Attention, in(xn), { I::Hidden, I::RopeDim }, kr, false);
            kp = fwd(OpKind::Rope, p + ".rope_k", Region::Attention, { in(kp) }, kr, kr, constant(flopcost::kRope));
            TensorId ckvn = norm(p + ".kv_a_norm", ckv, Region::Attention, { I::KVLora });
            cache(ckvn, kp);
            const Labels latent { I::Batch, I::Token, I::Heads, I::KVLora };
            TensorId wuk = weight(p + ".k_nope.weight", { I::KVLora, I::KVHeads, I::HeadDim });
            TensorId ql = fwd(OpKind::MatMul, p + ".q_absorb", Region::Attention,
                { in(qn), in(wuk, { I::KVLora, I::Heads, I::HeadDim }) }, latent,
                { I::Batch, I::Token, I::Heads, I::HeadDim, I::KVLora }, constant(flopcost::kMultiplyAdd));
            inputs = { in(ql), in(qp) };
            readCache();
            const Expr kvLora = Expr::symbol(sym.dkvlora);
            TensorId cl = newTensor(p + ".flash", latent, TensorRole::Activation, m_layer, m_act, false);
            addOp(OpKind::FlashAttention, p + ".flash", Region::Attention, std::move(inputs),
                { Operand { cl, latent } }, space,
                context
                    * (constant(flopcost::kMultiplyAdd) * (kvLora + Expr::symbol(sym.drope) + kvLora)
                        + constant(flopcost::kSoftmaxFwd)));
            TensorId wuv = weight(p + ".v.weight", { I::KVLora, I::KVHeads, I::VHeadDim });
            ctx = fwd(OpKind::MatMul, p + ".v_absorb", Region::Attention,
                { in(cl), in(wuv, { I::KVLora, I::Heads, I::VHeadDim }) }, ctxDims,
                { I::Batch, I::Token, I::Heads, I::KVLora, I::VHeadDim }, constant(flopcost::kMultiplyAdd));
        } else {
            TensorId q = linear(p + ".q", Region::Attention, in(xn), { I::Hidden, I::Heads, I::HeadDim }, qd, bias);
            if (!havePrompt) {
                m_cacheKeys[m_layer].push_back(promptCache(".k_cache", { I::Batch, I::Seq, I::KVHeads, I::HeadDim }));
                m_cacheValues[m_layer].push_back(
                    promptCache(".v_cache", { I::Batch, I::Seq, I::KVHeads, I::VHeadDim }));
            }
            TensorId k = linear(p + ".k", Region::Attention, in(xn), { I::Hidden, I::KVHeads, I::HeadDim }, kd, bias);
            TensorId v = linear(p + ".v", Region::Attention, in(xn), { I::Hidden, I::KVHeads, I::VHeadDim }, vd, bias);
            if (m_model.qkNorm) {
                q = norm(p + ".q_norm", q, Region::Attention, { I::HeadDim });
                k = norm(p + ".k_norm", k, Region::Attention, { I::HeadDim });
            }
            if (!gpt) {
                q = fwd(OpKind::Rope, p + ".rope_q", Region::Attention, { in(q) }, qd, qd, constant(flopcost::kRope));
                k = fwd(OpKind::Rope, p + ".rope_k", Region::Attention, { in(k) }, kd, kd, constant(flopcost::kRope));
            }
            cache(k, v);
            inputs = { in(q) };
            readCache();
            // Per cached position and query head: q.k over the head dim and p*v over the value dim, and the
            // softmax of one score. No causal half: the one query sees every cached position.
            const AttentionCost c = attentionCost();
            ctx = newTensor(p + ".flash", ctxDims, TensorRole::Activation, m_layer, m_act, false);
            addOp(OpKind::FlashAttention, p + ".flash", Region::Attention, std::move(inputs),
                { Operand { ctx, ctxDims } }, space,
                context * (constant(flopcost::kMultiplyAdd) * (c.qkDim + c.vDim) + constant(flopcost::kSoftmaxFwd)));
        }
        TensorId o = linear(p + ".o", Region::Attention, in(ctx), { I::Heads, I::VHeadDim, I::Hidden },
            { I::Batch, I::Token, I::Hidden }, gpt);
        return add(p + ".residual", Region::Sequence, x, in(o));
    }

    TensorId Builder::attention(TensorId x)
    {
        if (m_step > 0)
            return decodeAttention(x);
        const std::string p = "L" + std::to_string(m_layer) + ".attn";
        const bool gpt = m_model.family == Family::Gpt;
        const bool mla = usesMla(m_model);
        const bool bias = gpt || m_model.qkvBias;
        TensorId xn = layerNorm(p + ".norm", x);
        const Labels qd { I::Batch, m_seq, I::Heads, I::HeadDim };
        const Labels kd { I::Batch, m_seq, I::KVHeads, I::HeadDim };
        const Labels vd { I::Batch, m_seq, I::KVHeads, I::VHeadDim };
        const Labels kvSeq { I::Batch, I::SeqKV, I::KVHeads, I::HeadDim };
        const Labels vSeq { I::Batch, I::SeqKV, I::KVHeads, I::VHeadDim };
        // Multi-head latent attention (DeepSeek-V2 §2.1, DeepSeek-V3 §2.1.1): the query comes from a low-rank
        // latent (q_lora_rank), keys and values are projected up per head from a shared kv_lora_rank latent, and
        // a decoupled RoPE part of qk_rope_head_dim: per-head for the query, one key head shared by all heads.
        // The down projections are not split by tensor parallelism (Megatron-LM runs them duplicated).
        std::vector<Operand> queries, keys;
        TensorId v;
        if (mla) {
            const auto [qn, qp] = mlaQuery(p, xn);
            TensorId ckv = linear(p + ".kv_a", Region::Attention, in(xn), { I::Hidden, I::KVLora },
                { I::Batch, m_seq, I::KVLora }, false);
            const Labels kr { I::Batch, m_seq, I::RopeDim };
            TensorId kp = linear(p + ".k_rope", Region::Attention, in(xn), { I::Hidden, I::RopeDim }, kr, false);
            TensorId ckvn = norm(p + ".kv_a_norm", ckv, Region::Attention, { I::KVLora });
            // The kv up-projection and the RoPE of the key: Megatron's `mla_up_proj` recompute module.
            ModuleScope upProjection(*this, recompute_module::kMlaUpProj);
            kp = fwd(OpKind::Rope, p + ".rope_k", Region::Attention, { in(kp) }, kr, kr, constant(flopcost::kRope));
            // MLA has as many key/value heads as query heads (KVHead = Head).
            TensorId kn =
                linear(p + ".k_nope", Region::Attention, in(ckvn), { I::KVLora, I::KVHeads, I::HeadDim }, kd, false);
            v = linear(p + ".v", Region::Attention, in(ckvn), { I::KVLora, I::KVHeads, I::VHeadDim }, vd, false);
            queries = { in(qn), in(qp) };
            keys = { in(kn, kvSeq), in(kp, { I::Batch, I::SeqKV, I::RopeDim }) };
            if (m_inference)
                cache(ckvn, kp); // what MLA caches: the latent and the shared rotary key
        } else {
            TensorId q = linear(p + ".q", Region::Attention, in(xn), { I::Hidden, I::Heads, I::HeadDim }, qd, bias);
            TensorId k = linear(p + ".k", Region::Attention, in(xn), { I::Hidden, I::KVHeads, I::HeadDim }, kd, bias);
            v = linear(p + ".v", Region::Attention, in(xn), { I::Hidden, I::KVHeads, I::VHeadDim }, vd, bias);
            if (m_model.qkNorm) {
                // Qwen3: RMSNorm over each head's dims, one weight of head_dim shared by the heads.
                q = norm(p + ".q_norm", q, Region::Attention, { I::HeadDim });
                k = norm(p + ".k_norm", k, Region::Attention, { I::HeadDim });
            }
            if (!gpt) {
                q = fwd(OpKind::Rope, p + ".rope_q", Region::Attention, { in(q) }, qd, qd, constant(flopcost::kRope));
                k = fwd(OpKind::Rope, p + ".rope_k", Region::Attention, { in(k) }, kd, kd, constant(flopcost::kRope));
            }
            queries = { in(q) };
            keys = { in(k, kvSeq) };
            if (m_inference)
                cache(k, v);
        }
        // Core attention: Q K^T, softmax, (dropout), P V. The S x S work; a causal kernel does half of it.
        std::optional<ModuleScope> coreAttention(std::in_place, *this, recompute_module::kCoreAttn);
        const AttentionCost cost = attentionCost();
        const Expr& mac = cost.mac;
        const Expr& causalHalf = cost.half;
        const Labels ctxDims { I::Batch, m_seq, I::Heads, I::VHeadDim };
        TensorId ctx;
        if (m_model.attention == AttentionKernel::Flash) {
            // One fused kernel (Dao et al. 2022, FlashAttention; Dao 2023, FlashAttention-2): the scores stay in
            // on-chip memory; it keeps its output and the fp32 log-sum-exp per query row for the backward.
            std::vector<Operand> inputs = queries;
            inputs.insert(inputs.end(), keys.begin(), keys.end());
            inputs.push_back(in(v, vSeq));
            ctx = newTensor(p + ".flash", ctxDims, TensorRole::Activation, m_layer, m_act, true);
            const Labels lseDims { I::Batch, I::Heads, m_seq };
            TensorId lse = newTensor(p + ".flash.lse", lseDims, TensorRole::Activation, m_layer, DType::F32, false);
            addOp(OpKind::FlashAttention, p + ".flash", Region::Attention, std::move(inputs),
                { Operand { ctx, ctxDims }, Operand { lse, lseDims } }, { I::Batch, I::Heads, m_seq, I::SeqKV },
                mac * (cost.qkDim + cost.vDim) + causalHalf * constant(flopcost::kSoftmaxFwd));
        } else {
            const Labels scoreDims { I::Batch, I::Heads, m_seq, I::SeqKV };
            TensorId scores = fwd(OpKind::AttentionScores, p + ".scores", Region::Attention,
                { queries.front(), keys.front() }, scoreDims, { I::Batch, I::Heads, m_seq, I::SeqKV, I::HeadDim }, mac);
            TensorId probs = fwd(OpKind::Softmax, p + ".softmax", Region::Attention, { in(scores) }, scoreDims,
                scoreDims, causalHalf * constant(flopcost::kSoftmaxFwd));
            if (gpt)
                probs = dropout(p + ".attn_dropout", Region::Attention, probs);
            ctx = fwd(OpKind::AttentionContext, p + ".context", Region::Attention, { in(probs), in(v, vSeq) }, ctxDims,
                { I::Batch, I::Heads, m_seq, I::SeqKV, I::VHeadDim }, mac);
        }
        coreAttention.reset();
        TensorId o = linear(p + ".o", Region::Attention, in(ctx), { I::Heads, I::VHeadDim, I::Hidden },
            { I::Batch, m_seq, I::Hidden }, gpt);
        if (gpt)
            o = dropout(p + ".dropout", Region::Sequence, o);
        return add(p + ".residual", Region::Sequence, x, in(o));
    }

    TensorId Builder::decoderLayer(TensorId x)
    {
        m_recompute = RecomputeClass::Full;
        x = attention(x);
        const std::string p = "L" + std::to_string(m_layer);
        TensorId xn = layerNorm(p + ".mlp.norm", x);
        // An MTP module's layer (index >= layers) has the structure of the model's last layer.
        const bool moeLayer = m_model.family == Family::Moe && m_layer >= m_model.firstDenseLayers;
        TensorId y = moeLayer ? moeMlp(xn) : denseMlp(p + ".mlp", xn, I::Ffn, Region::Mlp, recompute_module::kMlp);
        if (m_model.family == Family::Gpt)
            y = dropout(p + ".mlp.dropout", Region::Sequence, y);
        return add(p + ".mlp.residual", Region::Sequence, x, in(y));
    }

    void Builder::headAndLoss(const std::string& prefix, TensorId xf, TensorId headWeight, bool tiedHead)
    {
        const Labels tokenDims { I::Batch, I::Seq };
        const Labels logitDims { I::Batch, I::Seq, I::Vocab };
        const size_t firstHeadOp = g().ops.size();
        TensorId logits;
        if (tiedHead)
            logits = fwd(OpKind::MatMul, prefix + "lm_head", Region::Vocab, { in(xf), in(headWeight) }, logitDims,
                { I::Batch, I::Seq, I::Hidden, I::Vocab }, constant(flopcost::kMultiplyAdd));
        else
            logits = matmul(prefix + "lm_head", Region::Vocab, in(xf), headWeight, logitDims);
        TensorId labels = newTensor(prefix + "labels", tokenDims, TensorRole::Input, m_layer, DType::I32, false);
        // Vocab-parallel cross-entropy as Megatron-LM computes it (tensor_parallel/cross_entropy.py): the row
        // maximum, the target's logit and the sum of exp(logit - max) are each a reduction over the vocab
        // shards (three all-reduces over tp: max, and two sums); the per-token loss needs all three complete.
        const Labels vocabSpace { I::Batch, I::Seq, I::Vocab };
        TensorId rowMax = fwd(OpKind::CrossEntropy, prefix + "loss.max", Region::Vocab, { in(logits) }, tokenDims,
            vocabSpace, Expr(1), DType::F32);
        TensorId target = fwd(OpKind::CrossEntropy, prefix + "loss.target", Region::Vocab, { in(logits), in(labels) },
            tokenDims, vocabSpace, Expr(0), DType::F32);
        TensorId sumExp = fwd(OpKind::CrossEntropy, prefix + "loss.sum_exp", Region::Vocab, { in(logits), in(rowMax) },
            tokenDims, vocabSpace, constant(flopcost::kCrossEntropyFwd - 1), DType::F32);
        TensorId loss = newTensor(prefix + "loss", tokenDims, TensorRole::Loss, m_layer, DType::F32, false);
        addOp(OpKind::CrossEntropy, prefix + "loss", Region::Vocab, { in(rowMax), in(target), in(sumExp) },
            { Operand { loss, tokenDims } }, tokenDims, Expr(1));
        for (size_t i = firstHeadOp; i < g().ops.size(); ++i)
            g().ops[i].head = true;
    }

    TensorId Builder::denseMlp(const std::string& p, TensorId xn, Index ffn, Region region, uint8_t module)
    {
        ModuleScope scope(*this, module);
        const Labels hidden { I::Batch, m_seq, ffn };
        if (m_model.family == Family::Gpt) {
            TensorId h = linear(p + ".fc1", region, in(xn), { I::Hidden, ffn }, hidden);
            TensorId a =
                fwd(OpKind::Activation, p + ".gelu", region, { in(h) }, hidden, hidden, constant(flopcost::kGeluFwd));
            return linear(p + ".fc2", region, in(a), { ffn, I::Hidden }, { I::Batch, m_seq, I::Hidden });
        }
        TensorId gate = linear(p + ".gate", region, in(xn), { I::Hidden, ffn }, hidden);
        TensorId up = linear(p + ".up", region, in(xn), { I::Hidden, ffn }, hidden);
        TensorId a = fwd(OpKind::Activation, p + ".swiglu", region, { in(gate), in(up) }, hidden, hidden,
            constant(flopcost::kSwigluFwd));
        return linear(p + ".down", region, in(a), { ffn, I::Hidden }, { I::Batch, m_seq, I::Hidden });
    }

    TensorId Builder::moeMlp(TensorId xn)
    {
        const std::string p = "L" + std::to_string(m_layer) + ".moe";
        ModuleScope scope(*this, recompute_module::kMoe);
        const Labels tokens { I::Batch, m_seq, I::Hidden };
        TensorId wr = weight(p + ".router.weight", { I::Hidden, I::Experts });
        TensorId logits = matmul(p + ".router", Region::Router, in(xn), wr, { I::Batch, m_seq, I::Experts });
        TensorId probs = fwd(OpKind::Router, p + ".topk", Region::Router, { in(logits) }, { I::Batch, m_seq, I::TopK },
            { I::Batch, m_seq, I::Experts }, constant(flopcost::kRouterFwd), DType::F32);
        // Tokens are permuted to their experts; an expert receives Batch*Seq*KExperts/Experts tokens on average
        // (the graph is the mean; a distribution plan scales Capacity to the hottest rank's load).
        const Labels routed { I::Experts, m_capacity, I::Hidden };
        TensorId xe = fwd(OpKind::Dispatch, p + ".dispatch", Region::Router,
            { in(xn), in(probs, { I::Batch, m_seq, I::TopK }) }, routed, routed, Expr(0));
        const Labels eh { I::Experts, m_capacity, I::ExpertFfn };
        TensorId w1 = weight(p + ".experts.gate.weight", { I::Experts, I::Hidden, I::ExpertFfn }, true);
        TensorId w3 = weight(p + ".experts.up.weight", { I::Experts, I::Hidden, I::ExpertFfn }, true);
        TensorId w2 = weight(p + ".experts.down.weight", { I::Experts, I::ExpertFfn, I::Hidden }, true);
        TensorId gate = matmul(p + ".experts.gate", Region::Expert, in(xe), w1, eh);
        TensorId up = matmul(p + ".experts.up", Region::Expert, in(xe), w3, eh);
        TensorId a;
        {
            ModuleScope activation(*this, recompute_module::kMoeAct);
            a = fwd(OpKind::Activation, p + ".experts.swiglu", Region::Expert, { in(gate), in(up) }, eh, eh,
                constant(flopcost::kSwigluFwd));
        }
        TensorId ye = matmul(p + ".experts.down", Region::Expert, in(a), w2, routed);
        TensorId y = fwd(OpKind::Combine, p + ".combine", Region::Router, { in(ye), in(probs) }, tokens,
            { I::Batch, m_seq, I::TopK, I::Hidden }, constant(flopcost::kCombine));
        if (m_model.sharedExpertFfnHidden > 0) {
            TensorId shared = denseMlp(p + ".shared", xn, I::SharedFfn, Region::Mlp, recompute_module::kSharedExperts);
            y = add(p + ".shared_add", Region::Sequence, y, in(shared));
        }
        return y;
    }

    void Builder::inferenceHead(TensorId x)
    {
        // Serving computes the logits of the next token only: of the last prompt position in the prefill, of the
        // one position in a decode step. The last position's hidden state is on one rank of a sequence-parallel
        // or context-parallel group; its copy to the others (Batch*hidden elements) is left out.
        const Labels act { I::Batch, I::Token, I::Hidden };
        if (m_seq == I::Seq)
            x = fwd(OpKind::Add, "last_position", Region::Sequence, { in(x) }, act, act, Expr(0));
        TensorId xf = norm("final_norm", x, Region::Sequence, { I::Hidden });
        const Labels logitDims { I::Batch, I::Token, I::Vocab };
        TensorId logits;
        if (m_model.tiedEmbeddings) {
            TensorId wemb = weight("embedding.weight", { I::Vocab, I::Hidden });
            logits = fwd(OpKind::MatMul, "lm_head", Region::Vocab, { in(xf), in(wemb) }, logitDims,
                { I::Batch, I::Token, I::Hidden, I::Vocab }, constant(flopcost::kMultiplyAdd));
        } else {
            logits =
                matmul("lm_head", Region::Vocab, in(xf), weight("lm_head.weight", { I::Hidden, I::Vocab }), logitDims);
        }
        // The sampler reads the whole vocabulary: the vocab-parallel logits are gathered over tp first (as vLLM's
        // LogitsProcessor does), which the Sequence region's unsplit Vocab makes an all-gather.
        m_nextTokens = fwd(OpKind::Sample, "sample", Region::Sequence, { in(logits) }, { I::Batch, I::Token },
            { I::Batch, I::Token, I::Vocab }, constant(flopcost::kSample), DType::I32);
    }

    std::shared_ptr<const ModelGraph> Builder::buildInference(const InferenceConfig& inference)
    {
        if (m_model.layers <= 0)
            throw std::invalid_argument("model has no layers");
        m_inference = true;
        m_cacheDtype = inference.kvCacheDtype == KvCacheDtype::Fp8 ? DType::F8 : m_act;
        ModelGraph& graph = *m_graph;
        graph.inference = true;
        graph.prefill = runsPrefill(inference);
        graph.decodeSteps = static_cast<int32_t>(decodeSteps(inference));
        graph.kvCacheDtype = inference.kvCacheDtype;
        graph.mtpModules = 0;
        const bool gpt = m_model.family == Family::Gpt;
        for (int32_t step = graph.prefill ? 0 : 1; step <= graph.decodeSteps; ++step) {
            m_step = step;
            m_phasePrefix = step == 0 ? "prefill/" : "decode" + std::to_string(step) + "/";
            m_seq = step == 0 ? I::Seq : I::Token;
            m_capacity = step == 0 ? I::Capacity : I::TokenCapacity;
            const Labels tokenDims { I::Batch, m_seq };
            const Labels act { I::Batch, m_seq, I::Hidden };
            m_layer = -1;
            // A decode step feeds the token the step before sampled (a pipeline sends it back to the first stage).
            TensorId tokens = m_nextTokens.valid()
                ? m_nextTokens
                : newTensor("tokens", tokenDims, TensorRole::Input, -1, DType::I32, false);
            TensorId wemb = weight("embedding.weight", { I::Vocab, I::Hidden });
            TensorId x = fwd(OpKind::Embedding, "embedding", Region::Vocab, { in(wemb), in(tokens, tokenDims) }, act,
                { I::Batch, m_seq, I::Hidden, I::Vocab }, Expr(0));
            if (gpt) // a decode step reads one row of the position table; the add is over its one position
                x = add("embedding.add_position", Region::Sequence, x,
                    in(weight("position_embedding.weight", { I::Seq, I::Hidden })));
            for (int32_t l = 0; l < graph.layers; ++l) {
                m_layer = l;
                x = decoderLayer(x);
            }
            m_layer = graph.layers;
            inferenceHead(x);
        }
        graph.weightSlot.resize(graph.tensors.size(), -1);
        for (TensorId w : graph.weights)
            graph.parameters += graph.tensor(w).numel();
        graph.firstBackwardOp = static_cast<int32_t>(graph.ops.size());
        graph.firstOptimizerOp = graph.firstBackwardOp;
        for (const Op& op : graph.ops)
            graph.forwardFlops += op.flops();
        return m_graph;
    }

    std::shared_ptr<const ModelGraph> Builder::build()
    {
        if (m_model.layers <= 0)
            throw std::invalid_argument("model has no layers");
        const bool gpt = m_model.family == Family::Gpt;
        const Labels tokenDims { I::Batch, I::Seq };
        const Labels act { I::Batch, I::Seq, I::Hidden };

        // Embedding: a gather of rows, no matmul. Vocab is in the iteration space with zero cost so that a vocab
        // split makes the output a partial sum (Megatron's vocab-parallel embedding).
        m_layer = -1;
        TensorId tokens = newTensor("tokens", tokenDims, TensorRole::Input, -1, DType::I32, false);
        TensorId wemb = weight("embedding.weight", { I::Vocab, I::Hidden });
        TensorId x = fwd(OpKind::Embedding, "embedding", Region::Vocab, { in(wemb), in(tokens) }, act,
            { I::Batch, I::Seq, I::Hidden, I::Vocab }, Expr(0));
        if (gpt) {
            TensorId wpos = weight("position_embedding.weight", { I::Seq, I::Hidden });
            x = add("embedding.add_position", Region::Sequence, x, in(wpos));
            x = dropout("embedding.dropout", Region::Sequence, x);
        }

        for (int32_t l = 0; l < m_graph->layers; ++l) {
            m_layer = l;
            x = decoderLayer(x);
        }

        m_layer = m_graph->layers;
        m_recompute = RecomputeClass::Never;
        TensorId xf = norm("final_norm", x);
        const TensorId head = m_model.tiedEmbeddings ? wemb : weight("lm_head.weight", { I::Hidden, I::Vocab });
        headAndLoss("", xf, head, m_model.tiedEmbeddings);

        // Multi-token prediction (DeepSeek-V3 section 2.2): module k predicts the token k+1 ahead from the hidden
        // state of depth k-1 (the main model's last hidden state for k = 1) and the embedding of token i+k:
        // h' = M [RMSNorm(h); RMSNorm(Emb(t_i+k))], M of h x 2h, then one decoder layer like the model's last, its
        // own final norm (Megatron-LM's MTP final_layernorm, shared_head.norm in the checkpoint) and the shared
        // output head with its cross-entropy. Module k is layer L+k, after the main loss, on the last stage.
        for (int32_t k = 1; k <= m_graph->mtpModules; ++k) {
            m_layer = m_graph->layers + k;
            m_recompute = RecomputeClass::Never;
            const std::string p = "mtp" + std::to_string(k);
            TensorId next = newTensor(p + ".tokens", tokenDims, TensorRole::Input, m_layer, DType::I32, false);
            TensorId e = fwd(OpKind::Embedding, p + ".embedding", Region::Vocab, { in(wemb), in(next) }, act,
                { I::Batch, I::Seq, I::Hidden, I::Vocab }, Expr(0));
            m_recompute = RecomputeClass::Full;
            TensorId en = norm(p + ".enorm", e);
            TensorId hn = norm(p + ".hnorm", x);
            // The concatenation times M is the sum of its two halves' products (a concatenation costs nothing).
            // Megatron-LM splits M over tp by columns and gathers its output; here it is a sequence-parallel
            // region op (same FLOPs per rank under sequence parallelism, the whole 2h x h weight on every tp rank).
            const Labels projIn { I::Batch, I::Seq, I::HiddenIn };
            TensorId pe =
                linear(p + ".eh_proj.e", Region::Sequence, in(en, projIn), { I::HiddenIn, I::Hidden }, act, false);
            TensorId ph =
                linear(p + ".eh_proj.h", Region::Sequence, in(hn, projIn), { I::HiddenIn, I::Hidden }, act, false);
            x = add(p + ".eh_proj", Region::Sequence, pe, in(ph));
            x = decoderLayer(x);
            m_recompute = RecomputeClass::Never;
            headAndLoss(p + ".", norm(p + ".final_norm", x), head, m_model.tiedEmbeddings);
        }

        m_graph->firstBackwardOp = static_cast<int32_t>(m_graph->ops.size());
        differentiate();
        if (m_graph->precision == Precision::Fp8)
            storeGemmInputsInFp8(); // after the backward: its readers count too, its gradients stay 16-bit
        m_graph->firstOptimizerOp = static_cast<int32_t>(m_graph->ops.size());
        for (int32_t i = m_graph->firstBackwardOp; i < m_graph->firstOptimizerOp; ++i) {
            Op& op = m_graph->ops[static_cast<size_t>(i)];
            if (op.forwardOp >= 0)
                op.head = m_graph->ops[static_cast<size_t>(op.forwardOp)].head;
        }
        optimizer();

        ModelGraph& g = *m_graph;
        g.weightSlot.resize(g.tensors.size(), -1);
        for (size_t i = 0; i < g.weights.size(); ++i) {
            const Tensor& w = g.tensors[static_cast<size_t>(g.weights[i].value)];
            (w.layer > g.layers ? g.mtpParameters : g.parameters) += w.numel();
        }
        for (const Op& op : g.ops) {
            const Expr f = op.flops();
            Expr& total = op.pass == Pass::Forward ? g.forwardFlops
                : op.pass == Pass::Backward        ? g.backwardFlops
                                                   : g.optimizerFlops;
            total += f;
            if (op.pass == Pass::Forward && op.recompute != RecomputeClass::Never)
                g.fullRecomputeFlops += f;
            if (op.pass == Pass::Forward && op.modules != 0)
                g.moduleRecomputeFlops[op.modules] += f;
            if (!op.kernelRecomputePerPoint.isZero()) {
                Expr recomputed = op.kernelRecomputePerPoint;
                for (Index i : op.space)
                    recomputed *= indexExtent(i);
                g.kernelRecomputeFlops += recomputed;
            }
        }
        return m_graph;
    }

    void Builder::contribute(TensorId t, TensorId grad, Region region)
    {
        m_contributions[t.value].push_back(Contribution { grad, region });
    }

    TensorId Builder::finalGrad(TensorId t, Region fallbackRegion)
    {
        if (auto it = m_finalGrads.find(t.value); it != m_finalGrads.end())
            return it->second;
        auto it = m_contributions.find(t.value);
        if (it == m_contributions.end() || it->second.empty())
            return TensorId {};
        const std::vector<Contribution>& parts = it->second;
        TensorId result = parts.front().grad;
        if (parts.size() > 1) {
            // Sum in the contributors' region when they agree, so that partial sums add up before any reduction
            // (one all-reduce of dX after the Q, K and V backward matmuls, not three).
            Region region = parts.front().region;
            for (const Contribution& c : parts)
                if (c.region != region)
                    region = fallbackRegion;
            const Tensor src = g().tensor(t); // a copy: newTensor() may reallocate the tensor list
            result = newTensor("d:" + src.name, src.dims, TensorRole::ActivationGrad, src.layer, src.dtype, false);
            std::vector<Operand> inputs;
            for (const Contribution& c : parts)
                inputs.push_back(in(c.grad, src.dims));
            // The sum runs where its contributions are produced (the consuming layer), so a gradient crossing a
            // pipeline cut is sent once, summed.
            const int32_t savedLayer = m_layer;
            m_layer = src.layer;
            for (const Contribution& c : parts)
                m_layer = std::max(m_layer, g().tensor(c.grad).layer);
            addOp(OpKind::Add, "d:" + src.name + ".sum", region, std::move(inputs), { Operand { result, src.dims } },
                src.dims, Expr(static_cast<int64_t>(parts.size() - 1)), Pass::Backward);
            m_layer = savedLayer;
        }
        m_finalGrads[t.value] = result;
        return result;
    }

    void Builder::differentiate()
    {
        const int32_t forwardCount = m_graph->firstBackwardOp;
        for (int32_t idx = forwardCount - 1; idx >= 0; --idx) {
            const Op fop = g().ops[static_cast<size_t>(idx)]; // copy: ops grows below
            m_layer = fop.layer;
            auto gradFor = [&](const Operand& x, const std::string& suffix) -> Operand {
                const Tensor& t = g().tensor(x.tensor);
                if (t.role == TensorRole::Weight) {
                    const TensorId wg = g().weightGrads[static_cast<size_t>(g().weightIndex(x.tensor))];
                    return Operand { wg, x.labels };
                }
                TensorId d =
                    newTensor("d:" + t.name + suffix, t.dims, TensorRole::ActivationGrad, fop.layer, t.dtype, false);
                return Operand { d, x.labels };
            };
            auto needsGrad = [&](const Operand& x) { return g().tensor(x.tensor).requiresGrad; };
            auto record = [&](const Operand& x, const Operand& grad) {
                if (g().tensor(x.tensor).role != TensorRole::Weight)
                    contribute(x.tensor, grad.tensor, fop.region);
            };
            auto emit = [&](const std::string& suffix, std::vector<Operand> inputs, std::vector<Operand> outputs,
                            Expr flopsPerPoint) {
                int i = addOp(fop.kind, fop.name + suffix, fop.region, std::move(inputs), std::move(outputs), fop.space,
                    std::move(flopsPerPoint), Pass::Backward);
                g().ops[static_cast<size_t>(i)].forwardOp = idx;
            };

            if (fop.kind == OpKind::CrossEntropy) {
                // The loss is the seed of backward: d logits = softmax(logits) - one-hot, from the saved logits and
                // the complete maximum and sum of exp. The statistics ops and the per-token loss have no backward
                // of their own; this one runs where the sum of exp was made.
                const std::string_view statName = "loss.sum_exp"; // of the main loss or an MTP module's
                if (fop.name.size() < statName.size()
                    || fop.name.compare(fop.name.size() - statName.size(), statName.size(), statName) != 0)
                    continue;
                const Operand& logits = fop.inputs[0];
                const Op& lossOp = g().ops[static_cast<size_t>(idx + 1)];
                const Op& targetOp = g().ops[static_cast<size_t>(idx - 1)];
                Operand d = gradFor(logits, "");
                emit(".bwd", { logits, lossOp.inputs[0], lossOp.inputs[2], targetOp.inputs[1] }, { d },
                    constant(flopcost::kCrossEntropyBwd));
                record(logits, d);
                continue;
            }

            // Gradients of this op's outputs; an op none of whose outputs received a gradient has no backward.
            std::vector<Operand> dys;
            for (const Operand& y : fop.outputs) {
                if (g().tensor(y.tensor).role == TensorRole::Mask)
                    continue;
                TensorId dy = finalGrad(y.tensor, fop.region);
                if (dy.valid())
                    dys.push_back(Operand { dy, y.labels });
            }
            if (dys.empty())
                continue;
            const Operand& dy = dys.front();

            if (fop.kind == OpKind::FlashAttention) {
                // The fused backward (FlashAttention-2, Algorithm 2) re-runs Q K^T and the softmax from the saved
                // log-sum-exp, then computes dV = P^T dO, dP = dO V^T, dQ = dS K and dK = dS^T Q: per point of
                // the (batch, heads, seq, seq_kv) space 3 q/k-sized and 2 v-sized multiply-adds. Only the first
                // of them and the softmax are recompute; the rest is the model's 2x-forward backward.
                const AttentionCost c = attentionCost();
                std::vector<Operand> inputs { dy };
                inputs.insert(inputs.end(), fop.inputs.begin(), fop.inputs.end());
                inputs.push_back(fop.outputs[0]);
                inputs.push_back(fop.outputs[1]);
                std::vector<Operand> outs;
                std::vector<std::pair<Operand, Operand>> recorded;
                for (const Operand& x : fop.inputs) {
                    if (!needsGrad(x))
                        continue;
                    Operand dx = gradFor(x, ".flash");
                    outs.push_back(dx);
                    recorded.emplace_back(x, dx);
                }
                const int i =
                    addOp(fop.kind, fop.name + ".bwd", fop.region, std::move(inputs), std::move(outs), fop.space,
                        c.mac * (Expr(3) * c.qkDim + Expr(2) * c.vDim)
                            + c.half * constant(flopcost::kSoftmaxFwd + flopcost::kSoftmaxBwd),
                        Pass::Backward);
                Op& bop = g().ops[static_cast<size_t>(i)];
                bop.forwardOp = idx;
                bop.kernelRecomputePerPoint = c.mac * c.qkDim + c.half * constant(flopcost::kSoftmaxFwd);
                for (auto& [x, dx] : recorded)
                    record(x, dx);
                continue;
            }

            switch (fop.kind) {
            case OpKind::MatMul:
            case OpKind::AttentionScores:
            case OpKind::AttentionContext: {
                // y = a . b  =>  da = dy . b,  db = a . dy, each with the forward's iteration space and cost.
                // A fused bias (third input) gets its gradient as a reduction of dy inside the weight-grad kernel.
                const Operand& a = fop.inputs[0];
                const Operand& b = fop.inputs[1];
                if (needsGrad(a)) {
                    Operand da = gradFor(a, "." + fop.name.substr(fop.name.rfind('.') + 1));
                    emit(".bwd_input", { dy, b }, { da }, fop.flopsPerPoint);
                    record(a, da);
                }
                if (needsGrad(b)) {
                    Operand db = gradFor(b, "." + fop.name.substr(fop.name.rfind('.') + 1));
                    std::vector<Operand> outs { db };
                    if (fop.inputs.size() > 2)
                        outs.push_back(gradFor(fop.inputs[2], ""));
                    emit(".bwd_weight", { a, dy }, std::move(outs), fop.flopsPerPoint);
                    record(b, db);
                }
                break;
            }
            case OpKind::Add: {
                // Same-shaped inputs receive dy itself; a broadcast input (position embedding) gets dy summed over
                // the indices it lacks.
                for (const Operand& x : fop.inputs) {
                    if (!needsGrad(x))
                        continue;
                    if (x.labels == dy.labels && g().tensor(x.tensor).role != TensorRole::Weight) {
                        contribute(x.tensor, dy.tensor, fop.region);
                        continue;
                    }
                    Operand dx = gradFor(x, "");
                    emit(".bwd", { dy }, { dx }, Expr(1));
                    record(x, dx);
                }
                break;
            }
            case OpKind::Embedding: {
                // Scatter-add of dy rows into the (vocab-sharded) table; no gradient for the token ids.
                Operand dw = gradFor(fop.inputs[0], "");
                int i = addOp(OpKind::Embedding, fop.name + ".bwd", fop.region, { dy, fop.inputs[1] }, { dw },
                    { I::Batch, I::Seq, I::Hidden }, Expr(1), Pass::Backward);
                g().ops[static_cast<size_t>(i)].forwardOp = idx;
                break;
            }
            default: {
                // Pointwise and row-wise ops: one backward kernel reading dy and the tensors the kind saves,
                // writing the gradients of every differentiable input.
                std::vector<Operand> inputs { dy };
                Expr cost = fop.flopsPerPoint * Expr(2);
                std::vector<bool> differentiable(fop.inputs.size(), true);
                switch (fop.kind) {
                case OpKind::Norm:
                    inputs.push_back(fop.inputs[0]);
                    inputs.push_back(fop.inputs[1]);
                    break;
                case OpKind::Softmax:
                    inputs.push_back(fop.outputs[0]);
                    cost = fop.flopsPerPoint * Expr(flopcost::kSoftmaxBwd) / Expr(flopcost::kSoftmaxFwd);
                    break;
                case OpKind::Activation:
                    for (const Operand& x : fop.inputs)
                        inputs.push_back(x);
                    cost = Expr(m_model.family == Family::Gpt ? flopcost::kGeluBwd : flopcost::kSwigluBwd);
                    break;
                case OpKind::Dropout:
                    inputs.push_back(fop.outputs[1]); // the mask
                    cost = Expr(flopcost::kDropout);
                    break;
                case OpKind::Rope:
                    cost = Expr(flopcost::kRope);
                    break;
                case OpKind::Router:
                    inputs.push_back(fop.outputs[0]);
                    cost = Expr(flopcost::kRouterBwd);
                    break;
                case OpKind::Dispatch:
                    differentiable[1] = false; // routing indices
                    cost = Expr(0);
                    break;
                case OpKind::Combine:
                    inputs.push_back(fop.inputs[0]);
                    inputs.push_back(fop.inputs[1]);
                    cost = Expr(2 * flopcost::kCombine);
                    break;
                default:
                    break;
                }
                std::vector<Operand> outs;
                std::vector<std::pair<Operand, Operand>> recorded;
                for (size_t k = 0; k < fop.inputs.size(); ++k) {
                    const Operand& x = fop.inputs[k];
                    if (!differentiable[k] || !needsGrad(x))
                        continue;
                    Operand dx = gradFor(x, "." + fop.name.substr(fop.name.rfind('.') + 1));
                    outs.push_back(dx);
                    recorded.emplace_back(x, dx);
                }
                if (outs.empty())
                    break;
                emit(".bwd", std::move(inputs), std::move(outs), std::move(cost));
                for (auto& [x, dx] : recorded)
                    record(x, dx);
                break;
            }
            }
        }
    }

    void Builder::optimizer()
    {
        for (size_t i = 0; i < g().weights.size(); ++i) {
            const TensorId w = g().weights[i];
            const Tensor& t = g().tensor(w);
            m_layer = t.layer;
            Operand wo = in(w);
            addOp(OpKind::Optimizer, t.name + ".adam", Region::Optimizer, { wo, in(g().weightGrads[i]) }, { wo },
                t.dims, Expr(flopcost::kAdam), Pass::Optimizer);
        }
    }

    void Builder::storeGemmInputsInFp8()
    {
        // Transformer Engine quantizes a linear layer's input to FP8 for its GEMM and saves the FP8 copy for the
        // backward (TE's Linear and LayerNormLinear; DeepSeek-V3 report §3.3.3, "cache the activations in FP8 for
        // the backward pass of the Linear operator"); a norm or activation feeding only linear layers writes FP8
        // directly (TE's fused LayerNormLinear, LayerNormMLP). So an activation whose every reader is an FP8 GEMM
        // lives in FP8 (1 byte), also on the wire of a sequence-parallel all-gather before it. One read by another
        // op as well, forward or backward (the attention output, which the flash backward reads), stays bf16, its
        // FP8 copy left out. The expert dispatch stays bf16 (Megatron-Core's moe_dispatch_fwd_dtype default,
        // transformer_config.py at d98e8a64): the tokens are quantized after the all-to-all. Runs after the
        // backward is built, so the activation gradients keep the 16-bit dtype the data-gradient GEMMs write.
        ModelGraph& graph = g();
        const size_t n = graph.tensors.size();
        std::vector<int32_t> gemmReads(n, 0), otherReads(n, 0);
        std::vector<OpKind> producer(n, OpKind::Add);
        for (const Op& op : graph.ops) {
            if (op.pass == Pass::Optimizer)
                continue;
            for (const Operand& x : op.inputs)
                ++(fp8Gemm(op) ? gemmReads : otherReads)[static_cast<size_t>(x.tensor.value)];
            for (const Operand& y : op.outputs)
                producer[static_cast<size_t>(y.tensor.value)] = op.kind;
        }
        for (size_t t = 0; t < n; ++t) {
            Tensor& tensor = graph.tensors[t];
            if (gemmReads[t] == 0)
                continue;
            if (tensor.role == TensorRole::Weight)
                tensor.fp8Copies = true;
            else if (tensor.role == TensorRole::Activation && otherReads[t] == 0 && tensor.dtype == m_act
                && producer[t] != OpKind::Dispatch)
                tensor.dtype = DType::F8;
        }
    }

} // namespace

std::shared_ptr<const ModelGraph> buildModelGraph(const ModelConfig& model, Precision precision)
{
    return Builder(model, precision).build();
}

std::shared_ptr<const ModelGraph> buildInferenceGraph(
    const ModelConfig& model, Precision precision, const InferenceConfig& inference)
{
    return Builder(model, precision).buildInference(inference);
}

} // namespace stagecraft
