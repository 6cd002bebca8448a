// SPDX-License-Identifier: MIT
#include "model/op.h"

namespace stagecraft {

const char* toString(OpKind k)
{
    switch (k) {
    case OpKind::MatMul:
        return "matmul";
    case OpKind::AttentionScores:
        return "attention_scores";
    case OpKind::AttentionContext:
        return "attention_context";
    case OpKind::FlashAttention:
        return "flash_attention";
    case OpKind::Softmax:
        return "softmax";
    case OpKind::Norm:
        return "norm";
    case OpKind::Rope:
        return "rope";
    case OpKind::Activation:
        return "activation";
    case OpKind::Dropout:
        return "dropout";
    case OpKind::Add:
        return "add";
    case OpKind::Embedding:
        return "embedding";
    case OpKind::CrossEntropy:
        return "cross_entropy";
    case OpKind::Router:
        return "router";
    case OpKind::Dispatch:
        return "dispatch";
    case OpKind::Combine:
        return "combine";
    case OpKind::Optimizer:
        return "optimizer";
    case OpKind::Sample:
        return "sample";
    }
    return "?";
}

const char* toString(Pass p)
{
    switch (p) {
    case Pass::Forward:
        return "forward";
    case Pass::Backward:
        return "backward";
    case Pass::Optimizer:
        return "optimizer";
    }
    return "?";
}

const char* toString(Region r)
{
    switch (r) {
    case Region::Sequence:
        return "sequence";
    case Region::Attention:
        return "attention";
    case Region::Mlp:
        return "mlp";
    case Region::Router:
        return "router";
    case Region::Expert:
        return "expert";
    case Region::Vocab:
        return "vocab";
    case Region::Optimizer:
        return "optimizer";
    }
    return "?";
}

Expr Op::flops() const
{
    Expr f = flopsPerPoint;
    if (f.isZero())
        return f;
    for (Index i : space)
        f *= indexExtent(i);
    return f;
}

} // namespace stagecraft
