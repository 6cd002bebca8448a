// SPDX-License-Identifier: MIT
// Kernel times measured on the user's own hardware (`stagecraft calibrate`, estimate/kernelcalibration.h), and
// their lookup by the estimate (config key cluster.kernel_table). Each entry is the median GPU time of one op
// kind at one shape; a shape between two measured ones along one dimension is interpolated linearly; anything
// else falls back to the model (kernelmodel.h, costmodel.h).
//
// The file is YAML:
//   kernel_table: 1                       # format version
//   gpu: h100-sxm                         # what calibrate's --gpu named
//   device: NVIDIA H100 80GB HBM3         # deviceProperties[0].name of the trace, when it had one
//   sources: [rank0.json.gz, ...]
//   gemm: [{dtype: bf16, batch: 1, m: 8192, n: 12288, k: 4096, time_us: 812.5, samples: 24}, ...]
//   attention: [{dtype: bf16, pass: forward, batch: 1, seq: 8192, heads: 32, head_dim: 128, time_us: ..., ...}]
//   elementwise: [{bytes: 201326592, time_us: 71.2, samples: 96}, ...]
//   collectives: [{collective: all_reduce, bytes: 26550272, group: 8, time_us: 140.3, samples: 4}, ...]
#pragma once

#include "estimate/kernelmodel.h"
#include "kineto/torchdtype.h"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace stagecraft {

struct KernelTableGemm
{
    std::string dtype; ///< fp32, bf16, fp16, fp8, fp64
    int64_t batch = 1, m = 1, n = 1, k = 1;
    double timeUs = 0;
    int64_t samples = 0;
};

struct KernelTableAttention
{
    std::string dtype;
    bool backward = false;
    int64_t batch = 1, seq = 1, heads = 1, headDim = 1;
    double timeUs = 0;
    int64_t samples = 0;
};

struct KernelTableElementwise
{
    int64_t bytes = 0; ///< read and written (inputs plus an output the size of the largest input)
    double timeUs = 0;
    int64_t samples = 0;
};

struct KernelTableCollective
{
    std::string collective; ///< all_reduce, all_gather, reduce_scatter, all_to_all
    int64_t bytes = 0; ///< in Chakra's meaning (costmodel.h collectiveTimeS): all-gather's input shard, else the input
    int64_t group = 0; ///< ranks in the communicator
    double timeUs = 0;
    int64_t samples = 0;
};

struct KernelTable
{
    std::string gpu;
    std::string device;
    std::vector<std::string> sources;
    std::vector<KernelTableGemm> gemm;
    std::vector<KernelTableAttention> attention;
    std::vector<KernelTableElementwise> elementwise;
    std::vector<KernelTableCollective> collectives;
};

/// How a lookup was answered.
enum class TableMatch : uint8_t
{
    None, ///< not in the table: the model times it
    Exact,
    Interpolated ///< between two measured shapes along one dimension
};

struct TableLookup
{
    TableMatch match = TableMatch::None;
    double timeS = 0;
};

/// Exact (dtype, batch, m, n, k); else linear in one of m, n or k between the nearest measured shapes below and
/// above with the other dimensions equal (m first: the token count is what changes between configs).
TableLookup lookupGemm(const KernelTable& table, const std::string& dtype, const GemmShape& shape);
/// Exact; else linear in batch x seq^2 (the work of the S x S scores) with dtype, pass, heads and head_dim equal.
TableLookup lookupAttention(const KernelTable& table, const std::string& dtype, bool backward, int64_t batch,
    int64_t seq, int64_t heads, int64_t headDim);
/// Exact bytes; else linear in bytes between the nearest measured sizes.
TableLookup lookupElementwise(const KernelTable& table, int64_t bytes);
/// Exact (collective, group, bytes); else linear in bytes with the collective and group equal.
TableLookup lookupCollective(const KernelTable& table, const std::string& collective, int64_t bytes, int64_t group);

/// The table as YAML text (the format above).
std::string kernelTableYaml(const KernelTable& table);
/// Reads a table file (at most 64 MiB). False with `error` = "file:line:col: message" on any problem.
bool readKernelTable(const std::filesystem::path& path, KernelTable& table, std::string& error);
/// readKernelTable() through a process-wide cache keyed by path, size and modification time (a sweep estimates
/// hundreds of plans with one table). Thread-safe. Null with `error` set on failure.
std::shared_ptr<const KernelTable> cachedKernelTable(const std::filesystem::path& path, std::string& error);

/// PyTorch's collective names ("allreduce", "_allgather_base", "reduce_scatter_tensor", "all_to_allv", ...) as
/// all_reduce, all_gather, reduce_scatter, all_to_all; "" for others (send/recv, broadcast, barrier).
std::string normalizedCollective(std::string_view torchName);

} // namespace stagecraft
