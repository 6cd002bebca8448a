// SPDX-License-Identifier: MIT
// Which source timed each op of an estimate: the kernel table measured on the user's hardware
// (cluster.kernel_table, estimate/kerneltable.h) or the model (kernelmodel.h, costmodel.h).
#pragma once

#include "estimate/costmodel.h"
#include "estimate/kerneltable.h"
#include "model/op.h"

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace stagecraft {

struct SynthesisResult;

/// The op classes a kernel table can time, and the rest.
enum class OpTimeClass : uint8_t
{
    Gemm, ///< MatMul, AttentionScores, AttentionContext
    Attention, ///< FlashAttention
    Elementwise, ///< Add, Activation, Dropout
    OtherCompute, ///< norms, softmax, RoPE, embedding, loss, MoE routing, optimizer: always modelled
    Collective,
    Count
};
const char* toString(OpTimeClass c);
OpTimeClass timeClassOf(OpKind kind);

/// The table's dtype name of an op's kernels under `precision` (FP8 training: the FP8 GEMMs fp8, the rest bf16).
std::string kernelDtype(const Op& op, Precision precision);

/// Per op of `plan`'s graph the measured time of one execution, seconds, or -1 when the table does not hold its
/// shape; `match` receives how each was found. Collectives are looked up per node (nodeTimeS).
std::vector<double> measuredOpTimes(
    const DistributionPlan& plan, const KernelTable& table, Precision precision, std::vector<TableMatch>& match);

/// `rates` with the measured op times and the table (for collectives) of `table`. Never throws but std::bad_alloc.
HardwareRates withKernelTable(
    HardwareRates rates, const DistributionPlan& plan, std::shared_ptr<const KernelTable> table, Precision precision);

/// Program nodes (of every rank class's example rank) per op class and source.
struct KernelSourceCounts
{
    std::string table; ///< the table's path; empty = no table (everything modelled)
    std::array<int64_t, size_t(OpTimeClass::Count)> measured {}, interpolated {}, modelled {};

    bool used() const
    {
        return !table.empty();
    }
    int64_t total(OpTimeClass c) const
    {
        return measured[size_t(c)] + interpolated[size_t(c)] + modelled[size_t(c)];
    }
};

/// Counts the nodes of `result` by source under `rates` (withKernelTable()).
KernelSourceCounts countKernelSources(const SynthesisResult& result, const HardwareRates& rates);

/// "kernel table t.yaml: GEMM 96 measured, 32 interpolated, 0 modelled; attention ..." (one line per class), or
/// "all op times modelled (no cluster.kernel_table)".
std::string kernelSourcesText(const KernelSourceCounts& counts);
/// {"table": path|null, "classes": [{"class", "measured", "interpolated", "modelled"}]}.
nlohmann::ordered_json kernelSourcesJson(const KernelSourceCounts& counts);

/// The table's name of a collective type: all_reduce, all_gather, reduce_scatter, all_to_all.
const char* tableCollectiveName(CollectiveType type);

} // namespace stagecraft
