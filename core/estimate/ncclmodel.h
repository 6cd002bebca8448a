// SPDX-License-Identifier: MIT
#pragma once

#include "estimate/fabric.h"
#include "sharding/layout.h"

#include <cstdint>

namespace stagecraft {

/// NCCL's algorithms (NVIDIA/nccl src/graph/tuning.cc), plus Direct: all-to-all and send/receive, which NCCL runs as
/// point-to-point transfers.
enum class NcclAlgorithm : uint8_t
{
    Ring,
    Tree,
    Nvls,
    NvlsTree,
    Pat,
    Direct
};
inline constexpr int kNcclAlgorithmCount = 6;
/// NCCL's protocols.
enum class NcclProtocol : uint8_t
{
    Simple,
    Ll128,
    Ll
};
/// "ring", "tree", "nvls", "nvls_tree", "pat", "direct"; "simple", "ll128", "ll".
const char* toString(NcclAlgorithm a);
const char* toString(NcclProtocol p);

/// What one collective costs on a fabric and how NCCL runs it.
struct CollectivePrice
{
    double timeS = 0;
    NcclAlgorithm algorithm = NcclAlgorithm::Ring;
    NcclProtocol protocol = NcclProtocol::Simple;
    FabricLevel level = FabricLevel::NvLink; ///< the highest level its traffic crosses
};

/// The time of a collective as NCCL chooses and runs it over a group of `span` on `fabric`, seconds, with
/// `commSizeBytes` in Chakra's meaning (the all-gather's input shard, the others' whole buffer). NCCL's tuner
/// (NVIDIA/nccl src/graph/tuning.cc at 5067397c) prices every enabled (algorithm, protocol) pair as latency + size /
/// bandwidth and takes the fastest; so does this, with the candidates:
/// - ring (all-reduce, all-gather, reduce-scatter): 2(n-1) or n-1 steps; its bus bandwidth is the NVLink rate
///   within a domain and, across domains, the least of the members of a domain (leaf group, pod) times their NIC
///   share at that level: every ring channel leaves a domain once, on the NIC of one of its GPUs;
/// - tree (all-reduce): NCCL's double binary tree, moving 2 S per GPU at 0.92 of that bandwidth, latency
///   2 (ppn-1) intra steps + 2 log2(nodes) network steps;
/// - NVLS (NVLink SHARP, within one domain, when the GPU has it): each GPU sends S into the switch and reads S/n
///   back, (1 + 1/n) S at the NVLink rate times NCCL's NVLS efficiency; NVLS tree across domains: that, pipelined
///   with a tree of S/k per NIC;
/// - PAT (all-gather, reduce-scatter, one GPU per domain): 0.75 of the ring's bandwidth over the whole buffer, a
///   logarithmic latency;
/// - protocols Simple, LL128 (0.92 of the bandwidth) and LL (half, capped at NCCL's llMaxBw), with NCCL's base and
///   per-hop latencies (tuning.cc `baseLatencies`, `hwLatencies`).
/// All-to-all (Direct): every GPU's (n-1)/n S leaves as point-to-point flows; the flows of one collective share each
/// link, so the time is the largest over the levels of the bytes crossing it per GPU over its per-GPU capacity:
/// (k-1)/n S on NVLink, (n-k)/n S on the NIC, (n - perLeaf)/n S on the leaf uplinks, (n - perPod)/n S between
/// pods. `forced` (0..5 as NcclAlgorithm) restricts the choice to one algorithm, as NCCL_ALGO does; -1 = NCCL's
/// choice. A group of one costs nothing. Thread-safe; no allocation.
CollectivePrice priceCollective(
    CollectiveType type, int64_t commSizeBytes, const GroupSpan& span, const Fabric& fabric, int forced = -1);

/// A point-to-point transfer of `bytes` crossing up to `level`: bytes over the per-GPU capacity of that level plus
/// NCCL's ring latency of one step there.
CollectivePrice priceTransfer(int64_t bytes, FabricLevel level, const Fabric& fabric);

/// nccl-tests' bus bandwidth (doc/PERFORMANCE.md) of a collective of nccl-tests size `sizeBytes` (all-reduce and
/// all-to-all: the buffer; all-gather: the output; reduce-scatter: the input) among n ranks taking `timeS`:
/// algbw = size / time, times 2(n-1)/n for all-reduce and (n-1)/n for the others. Bytes/s.
double ncclTestsBusBandwidth(CollectiveType type, double sizeBytes, int64_t n, double timeS);

} // namespace stagecraft
