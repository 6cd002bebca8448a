// SPDX-License-Identifier: MIT
#pragma once

#include "base/smallvector.h"
#include "mesh/mesh.h"
#include "model/op.h"
#include "program/nodename.h"
#include "sharding/layout.h"

#include <cstdint>
#include <string>
#include <vector>

namespace stagecraft {

enum class NodeKind : uint8_t
{
    Compute,
    Collective,
    Send,
    Recv
};
const char* toString(NodeKind k);

/// Strong index into ClassProgram::nodes.
struct NodeId
{
    uint32_t value = 0;
    friend bool operator==(NodeId, NodeId) = default;
    friend auto operator<=>(NodeId, NodeId) = default;
};

/// What a buffer holds, for the memory timeline.
enum class MemoryCategory : uint8_t
{
    Weights,
    Gradients,
    Optimizer,
    Activations,
    Other,
    KvCache ///< inference: keys and values kept for later positions, allocated in whole blocks of block_size tokens
};
inline constexpr int kMemoryCategoryCount = 6;
const char* toString(MemoryCategory c);

/// A value a program produces or holds: a local tensor instance (per micro-batch), a communication output, or
/// a resident state. Bytes are per rank.
struct Buffer
{
    int32_t tensor = -1; ///< model-graph tensor, -1 for none
    int32_t microBatch : 27 = -1; ///< -1: not per micro-batch (the node limit keeps micro-batches far below 2^26)
    MemoryCategory category : 4 = MemoryCategory::Activations;
    bool resident : 1 = false; ///< alive for the whole iteration (weights, gradients, optimizer state)
    int64_t bytes = 0;
};
static_assert(sizeof(Buffer) == 16, "a program holds about one buffer per node");

/// One node of a rank class's program. Compute nodes carry FLOPs and bytes of memory traffic; collectives their
/// type, axis mask (the communicator group is resolved per rank) and comm_size in bytes (Chakra's meaning, see
/// Relayout); send/recv the peer pipeline stage and a deterministic tag. Dependencies point to earlier nodes.
struct ProgramNode
{
    // Ordered by size so that the node packs into 112 bytes; a program has up to a million of them.
    int64_t flops = 0;
    int64_t bytes = 0; ///< compute: bytes read and written; communication: comm_size
    NodeName name;
    SmallVector<NodeId, 3> dataDeps;
    SmallVector<NodeId, 2> ctrlDeps;
    SmallVector<int32_t, 3> reads; ///< buffer ids
    SmallVector<int32_t, 2> writes; ///< buffer ids
    int32_t op = -1; ///< model-graph op (compute nodes)
    int32_t layer = -1;
    int32_t microBatch = -1; ///< -1 for per-iteration work (gradient reduction, optimizer)
    int32_t tag = 0; ///< send/recv
    int16_t chunk = 0; ///< virtual pipeline chunk
    int16_t peerStage = -1; ///< send/recv (pipeline stages are at most 65535: the estimate refuses more)
    NodeKind kind = NodeKind::Compute;
    Pass pass = Pass::Forward;
    bool recompute = false; ///< a forward op re-run before its backward
    CollectiveType collective = CollectiveType::AllReduce;
    AxisMask mask = 0;
};
static_assert(sizeof(ProgramNode) == 112, "keep the node compact: see the field order");

/// The program shared by every rank of one class (one pipeline stage). Ranks differ only in the communicator
/// groups of collectives and the peers of send/recv, which are resolved from the mesh at export time.
struct ClassProgram
{
    int32_t stage = 0;
    int64_t rankCount = 0;
    RankId exampleRank {};
    std::vector<ProgramNode> nodes;
    std::vector<Buffer> buffers;
};

} // namespace stagecraft
