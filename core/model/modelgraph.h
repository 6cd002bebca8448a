// SPDX-License-Identifier: MIT
#pragma once

#include "config/config.h"
#include "model/op.h"
#include "model/tensor.h"

#include <map>
#include <memory>
#include <vector>

namespace stagecraft {

/// The symbolic tensor graph of one training iteration on one logical device, for ONE global micro-batch
/// (forward and backward) plus the optimizer step. Shapes and costs are expressions in ModelSymbols; bind them
/// with modelBinding() (single device) or a sharded binding. Immutable once built; share it as
/// std::shared_ptr<const ModelGraph> across threads.
///
/// Op order: forward ops in execution order, then backward ops in execution order (reverse layer order),
/// then one optimizer op per weight. Every op's inputs are produced by earlier ops or are weights / inputs.
class ModelGraph
{
public:
    Family family = Family::Llama;
    int32_t layers = 0;
    Precision precision = Precision::Bf16;
    bool causalMask = true;
    bool tiedEmbeddings = false;
    bool sharedExpert = false;
    /// The structural choices the graph was built with (ModelConfig fields that change ops, not extents).
    AttentionKernel attention = AttentionKernel::Flash;
    bool qkNorm = false;
    bool qkvBias = false;
    bool mla = false;
    bool qLora = false;
    int32_t firstDenseLayers = 0;
    int32_t mtpModules = 0; ///< multi-token prediction modules: layers `layers`+1 .. `layers`+mtpModules
    /// Inference graphs (buildInferenceGraph): forward only, no weight gradients and no optimizer ops. Ops and
    /// tensors carry their phase in `step` (0 the prefill, k decode step k); phases follow each other in op order.
    bool inference = false;
    bool prefill = false; ///< the graph starts with a prefill over the prompt (Seq)
    int32_t decodeSteps = 0; ///< decode steps after it (one token per sequence each: Token)
    KvCacheDtype kvCacheDtype = KvCacheDtype::Bf16;

    std::vector<Tensor> tensors;
    std::vector<Op> ops;
    std::vector<TensorId> weights; ///< trainable parameters, in creation order
    std::vector<TensorId> weightGrads; ///< weightGrads[i] is the gradient of weights[i]
    int32_t firstBackwardOp = 0;
    int32_t firstOptimizerOp = 0;

    /// Totals computed once when the graph is built (a synthesis evaluates them, it does not rebuild them).
    Expr parameters; ///< sum of the main model's weights' numels (the MTP modules' own weights excluded)
    Expr mtpParameters; ///< the MTP modules' own weights (they share the embedding and the output head)
    Expr forwardFlops, backwardFlops, optimizerFlops; ///< per pass, one global micro-batch
    Expr fullRecomputeFlops; ///< forward FLOPs re-run under `full` recompute
    /// Forward FLOPs of the ops in recompute modules, by their Op::modules mask: `selective` re-runs the masks that
    /// meet training.recompute_modules.
    std::map<uint8_t, Expr> moduleRecomputeFlops;
    /// Backward FLOPs that re-run forward work inside a kernel: the scores a fused (flash) attention backward
    /// recomputes. Hardware FLOPs, not model FLOPs (MFU leaves them out, HFU counts them).
    Expr kernelRecomputeFlops;
    std::vector<int32_t> weightSlot; ///< per tensor: index into `weights`, -1 for non-weights

    const Tensor& tensor(TensorId id) const
    {
        return tensors[static_cast<size_t>(id.value)];
    }
    /// Index into `weights` of a weight tensor, -1 if `id` is not a weight.
    int weightIndex(TensorId id) const;
    /// Sum of the numels of the main model's weights (the unsharded parameter count, MTP modules excluded).
    Expr parameterCount() const;
    /// Sum of op FLOPs of one pass over the graph restricted to `pass`.
    Expr flops(Pass pass) const;
    /// Whether `op` writes weight gradients only (a backward GEMM's weight part: a split backward's W).
    bool writesOnlyWeightGradients(const Op& op) const;
};

/// Builds the graph for a model. Throws std::invalid_argument for a family the builder cannot handle (never for
/// validated configs). Deterministic: the same inputs give the same graph, tensor and op order included.
std::shared_ptr<const ModelGraph> buildModelGraph(const ModelConfig& model, Precision precision);

/// The forward-only graph of serving one pipeline micro-batch of requests (Batch sequences): a prefill over the
/// prompt (Seq tokens, causal flash attention writing the KV cache, logits of the last position only) when
/// `inference.phases` includes it, then decodeSteps(inference) decode steps of one token per sequence (Token),
/// step k attending over the Seq + k cached positions. Weights are shared by all phases; there are no gradients,
/// no optimizer ops and no loss. KV-cache tensors (role KvCache): GQA keys and values, 2*kv_heads*head_dim
/// elements per token and layer; MLA the normalized latent and the rotary key, kv_lora_rank + qk_rope_head_dim,
/// whose decode steps use the absorbed form (W_UK folded into the query, W_UV applied after attention). Without
/// the prefill the prompt's cache is a KvCache tensor that no op produces (resident). MTP modules are left out.
/// Deterministic; throws std::invalid_argument as buildModelGraph does.
std::shared_ptr<const ModelGraph> buildInferenceGraph(
    const ModelConfig& model, Precision precision, const InferenceConfig& inference);

} // namespace stagecraft
