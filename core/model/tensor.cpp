// SPDX-License-Identifier: MIT
#include "model/tensor.h"

#include "model/modelsymbols.h"

#include <array>

namespace stagecraft {

int dtypeBytes(DType t)
{
    switch (t) {
    case DType::F32:
    case DType::I32:
        return 4;
    case DType::F16:
    case DType::BF16:
        return 2;
    case DType::U8:
    case DType::F8:
        return 1;
    }
    return 0;
}

const char* toString(DType t)
{
    switch (t) {
    case DType::F32:
        return "fp32";
    case DType::F16:
        return "fp16";
    case DType::BF16:
        return "bf16";
    case DType::I32:
        return "int32";
    case DType::U8:
        return "uint8";
    case DType::F8:
        return "fp8";
    }
    return "?";
}

const char* toString(Index i)
{
    static constexpr std::array<const char*, kIndexCount> names { "batch", "seq", "seq_kv", "hidden", "head_dim",
        "heads", "kv_heads", "ffn", "vocab", "experts", "capacity", "expert_ffn", "shared_ffn", "top_k", "v_head_dim",
        "q_lora", "kv_lora", "rope_dim", "hidden_in", "token", "token_capacity" };
    return names[static_cast<size_t>(i)];
}

const Expr& indexExtent(Index i)
{
    static const std::array<Expr, kIndexCount> extents = [] {
        const auto& s = ModelSymbols::get();
        const Expr batch = Expr::symbol(s.batch), seq = Expr::symbol(s.seq), dmodel = Expr::symbol(s.dmodel);
        const Expr head = Expr::symbol(s.head), experts = Expr::symbol(s.experts);
        const Expr topK = Expr::symbol(s.kexperts);
        return std::array<Expr, kIndexCount> {
            batch,
            seq,
            seq,
            dmodel,
            Expr::symbol(s.dhead),
            head,
            Expr::symbol(s.kvhead),
            Expr::symbol(s.dff),
            Expr::symbol(s.dvocal),
            experts,
            batch * seq * topK / experts,
            Expr::symbol(s.dffExpert),
            Expr::symbol(s.dffShared),
            topK,
            Expr::symbol(s.dvhead),
            Expr::symbol(s.dqlora),
            Expr::symbol(s.dkvlora),
            Expr::symbol(s.drope),
            dmodel,
            Expr(1),
            batch * topK / experts,
        };
    }();
    return extents[static_cast<size_t>(i)];
}

const char* toString(TensorRole r)
{
    switch (r) {
    case TensorRole::Input:
        return "input";
    case TensorRole::Activation:
        return "activation";
    case TensorRole::Weight:
        return "weight";
    case TensorRole::WeightGrad:
        return "weight_grad";
    case TensorRole::ActivationGrad:
        return "activation_grad";
    case TensorRole::Mask:
        return "mask";
    case TensorRole::Loss:
        return "loss";
    case TensorRole::KvCache:
        return "kv_cache";
    }
    return "?";
}

std::vector<Expr> Tensor::shape() const
{
    std::vector<Expr> out;
    out.reserve(dims.size());
    for (Index d : dims)
        out.push_back(indexExtent(d));
    return out;
}

Expr Tensor::numel() const
{
    Expr n(1);
    for (Index d : dims)
        n *= indexExtent(d);
    return n;
}

} // namespace stagecraft
