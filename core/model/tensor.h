// SPDX-License-Identifier: MIT
#pragma once

#include "symbolic/expr.h"

#include <cstdint>
#include <string>
#include <vector>

namespace stagecraft {

/// Element types. Sizes in bytes via dtypeBytes().
enum class DType : uint8_t
{
    F32,
    F16,
    BF16,
    I32,
    U8,
    F8 ///< an 8-bit float (the fp8 KV cache)
};
int dtypeBytes(DType t);
const char* toString(DType t);

/// Named logical dimensions (einsum index labels). Every tensor dimension and every op's iteration space is a
/// list of these; a sharding strategy maps (op region, index) to the mesh axes that split it, which is how
/// local layouts and collectives are derived rather than written per variant.
enum class Index : uint8_t
{
    Batch, ///< sequences of the micro-batch: Batch
    Seq, ///< query / token position: Seq
    SeqKV, ///< key / value position in attention: Seq (never split by tp; gathered across cp)
    Hidden, ///< Dmodel
    HeadDim, ///< Dhead: per-head size of q and k (MLA: the part without RoPE)
    Heads, ///< Head
    KVHeads, ///< KVHead
    Ffn, ///< Dff
    Vocab, ///< Dvocal
    Experts, ///< Experts
    Capacity, ///< tokens routed to one expert: Batch*Seq*KExperts/Experts, the mean (see hottestExpertLoad())
    ExpertFfn, ///< DffExpert
    SharedFfn, ///< DffShared
    TopK, ///< KExperts
    VHeadDim, ///< Dvhead: per-head size of v (Dhead except with MLA)
    QLora, ///< Dqlora: MLA compressed query rank
    KVLora, ///< Dkvlora: MLA compressed key/value latent rank
    RopeDim, ///< Drope: MLA per-head q/k size with RoPE
    HiddenIn, ///< Dmodel as the contracted input of a hidden-to-hidden projection (MTP's eh_proj); never split
    Token, ///< 1: the one position an inference decode step (or the prefill's head) runs per sequence; never split
    TokenCapacity, ///< tokens routed to one expert in a decode step: Batch*KExperts/Experts (Capacity at Seq = 1)
};
inline constexpr int kIndexCount = 21;
const char* toString(Index i);
/// Global extent of an index as an expression in the model symbols.
const Expr& indexExtent(Index i);

enum class TensorRole : uint8_t
{
    Input, ///< token ids / labels, read from the data loader
    Activation, ///< forward value
    Weight, ///< trainable parameter (compute copy)
    WeightGrad, ///< gradient of a weight, accumulated over micro-batches
    ActivationGrad, ///< gradient of an activation
    Mask, ///< dropout mask kept for backward
    Loss, ///< per-token loss
    KvCache, ///< inference: keys and values (MLA: the latent and the rotary key) kept for later positions
};
const char* toString(TensorRole r);

/// Strong index into ModelGraph::tensors.
struct TensorId
{
    int32_t value = -1;
    bool valid() const
    {
        return value >= 0;
    }
    friend bool operator==(TensorId, TensorId) = default;
    friend auto operator<=>(TensorId, TensorId) = default;
};

/// A tensor of the single-device model graph. Its global shape is the extents of its dims.
struct Tensor
{
    std::string name; ///< e.g. "L3.attn.q"
    std::vector<Index> dims;
    DType dtype = DType::BF16;
    TensorRole role = TensorRole::Activation;
    int32_t layer = -1; ///< -1 embedding, 0..L-1 decoder layers, L the final norm / head / loss, L+k MTP module k
    bool requiresGrad = false; ///< a gradient flows into it in backward
    bool isExpertWeight = false; ///< MoE routed-expert parameter (reduced over edp, not dp)
    /// FP8 training: a weight that FP8 GEMMs read, of which Transformer Engine keeps FP8 copies (row- and
    /// column-wise) beside the bf16 weight for the whole iteration.
    bool fp8Copies = false;
    TensorId gradOf {}; ///< for gradients: the tensor this is the gradient of
    int32_t step = 0; ///< inference: 0 the prefill, k >= 1 decode step k (its position is prompt + k - 1)

    std::vector<Expr> shape() const;
    /// Product of the global extents.
    Expr numel() const;
};

} // namespace stagecraft
