// SPDX-License-Identifier: MIT
#pragma once

#include "config/config.h"
#include "model/tensor.h"

#include <string>
#include <vector>

namespace stagecraft {

enum class OpKind : uint8_t
{
    MatMul, ///< einsum contraction (linear layers, expert FFNs, LM head)
    AttentionScores, ///< Q K^T over the head dim: the S^2 term
    AttentionContext, ///< P V over the key positions: the S^2 term
    FlashAttention, ///< fused softmax(Q K^T) V (FlashAttention): no S x S tensor, keeps the log-sum-exp
    Softmax,
    Norm, ///< LayerNorm (gpt) or RMSNorm (llama, moe)
    Rope,
    Activation, ///< GeLU (gpt) or SwiGLU's silu(gate)*up (llama, moe)
    Dropout,
    Add, ///< residual add or gradient accumulation
    Embedding, ///< gather of rows (forward) / scatter-add (backward); no matmul
    CrossEntropy, ///< softmax cross-entropy over the vocabulary
    Router, ///< MoE router softmax + top-k
    Dispatch, ///< MoE: permute tokens to their experts (forward) / un-permute gradients
    Combine, ///< MoE: weighted sum of the top-k expert outputs
    Optimizer, ///< Adam update of one parameter
    Sample, ///< inference: the next token from the logits (softmax and a pick over the vocabulary)
};
const char* toString(OpKind k);

enum class Pass : uint8_t
{
    Forward,
    Backward,
    Optimizer
};
const char* toString(Pass p);

/// Where an op sits, which decides how the sharding strategy splits its indices (e.g. Seq is split by tp only in
/// Sequence regions under sequence parallelism; Heads and Ffn are split by tp in Attention and Mlp regions).
enum class Region : uint8_t
{
    Sequence, ///< norms, residual adds, dropout outside attention/MLP: the sequence-parallel region
    Attention, ///< projections and the attention kernel
    Mlp, ///< dense FFN / shared expert
    Router, ///< MoE router and token dispatch/combine on the token side
    Expert, ///< routed-expert FFN
    Vocab, ///< embedding, LM head, loss
    Optimizer, ///< optimizer step
};
const char* toString(Region r);

/// Whether `recompute: full` re-runs a forward op before its backward (`selective` goes by Op::modules).
enum class RecomputeClass : uint8_t
{
    Never, ///< never recomputed (embedding, head, loss)
    Full, ///< inside a decoder layer: recomputed under `full`
};

/// One operand of an op: a tensor and the index labels this op uses for its dims (same length as the tensor's
/// dims). The labels, mapped through the op's region, give the layout the op expects; they may differ from the
/// producer's labels (K is produced with Seq and consumed by the attention kernel as SeqKV).
struct Operand
{
    TensorId tensor;
    std::vector<Index> labels;
};

/// One op of the single-device graph. FLOPs = flopsPerPoint * product of the extents of `space`; under
/// sharding each extent is divided by the mesh axes that split its index in `region`. An output is a partial
/// sum over the axes that split a space index absent from that output's labels (a contraction over a split
/// dim), which is where reductions come from.
struct Op
{
    OpKind kind = OpKind::MatMul;
    std::string name; ///< e.g. "L3.mlp.up.fwd"
    Pass pass = Pass::Forward;
    int32_t layer = -1; ///< as Tensor::layer
    Region region = Region::Sequence;
    RecomputeClass recompute = RecomputeClass::Never;
    /// Forward ops: the recompute modules (config.h, recompute_module bits) this op belongs to; 0 = none.
    uint8_t modules = 0;
    std::vector<Operand> inputs;
    std::vector<Operand> outputs;
    std::vector<Index> space; ///< iteration space
    Expr flopsPerPoint; ///< FLOPs per point of the space (2 for a multiply-add)
    /// Of flopsPerPoint, the part that re-runs forward work inside the kernel (flash attention's backward
    /// recomputes the scores): hardware FLOPs that are not model FLOPs. Zero for every other op.
    Expr kernelRecomputePerPoint;
    int32_t forwardOp = -1; ///< backward ops: index of the forward op they differentiate
    int32_t step = 0; ///< inference: 0 the prefill, k >= 1 decode step k (training: 0)
    /// The output head and its loss, of the main model or of an MTP module (and their backward): these run in the
    /// pipeline chunk of the loss, as Megatron-Core computes an MTP module's logits and loss on the last stage.
    bool head = false;

    /// Global (single-device) FLOPs of one execution.
    Expr flops() const;
};

/// With training.precision fp8, the GEMMs that run in FP8 (forward, and the data- and weight-gradient GEMMs of
/// their backward): Transformer Engine's linear layers, i.e. the attention and MLP projections, the experts and
/// MTP's projection. The embedding, the output head and the router stay in 16 bits and attention in bf16, as
/// DeepSeek-V3's report (§3.3.1) keeps "the embedding module, the output head, MoE gating modules, normalization
/// operators, and attention operators" in their original precision and Megatron-LM's output layer is no TE layer.
inline bool fp8Gemm(const Op& op)
{
    return op.kind == OpKind::MatMul && op.region != Region::Vocab && op.region != Region::Router;
}

/// Whether the training config's recompute policy re-runs forward op `f` before its backward.
inline bool recomputes(const TrainingConfig& t, const Op& f)
{
    if (t.recompute == Recompute::Full)
        return f.recompute != RecomputeClass::Never;
    return t.recompute == Recompute::Selective && (f.modules & t.recomputeModules) != 0;
}
/// Whether `f` is recomputed only by output-discarding modules (recompute_module::kOutputDiscarding): then its
/// output is not kept after the forward, and its consumers' backward reads the recomputed value.
inline bool recomputeDiscardsOutput(const TrainingConfig& t, const Op& f)
{
    if (t.recompute != Recompute::Selective)
        return false;
    const uint8_t chosen = f.modules & t.recomputeModules;
    return chosen != 0 && (chosen & ~recompute_module::kOutputDiscarding) == 0;
}

} // namespace stagecraft
