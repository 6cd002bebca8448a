// SPDX-License-Identifier: MIT
#include "program/program.h"

namespace stagecraft {

const char* toString(NodeKind k)
{
    switch (k) {
    case NodeKind::Compute:
        return "compute";
    case NodeKind::Collective:
        return "collective";
    case NodeKind::Send:
        return "send";
    case NodeKind::Recv:
        return "recv";
    }
    return "?";
}

const char* toString(MemoryCategory c)
{
    switch (c) {
    case MemoryCategory::Weights:
        return "weights";
    case MemoryCategory::Gradients:
        return "gradients";
    case MemoryCategory::Optimizer:
        return "optimizer";
    case MemoryCategory::Activations:
        return "activations";
    case MemoryCategory::Other:
        return "other";
    case MemoryCategory::KvCache:
        return "kv_cache";
    }
    return "?";
}

} // namespace stagecraft
