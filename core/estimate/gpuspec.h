// SPDX-License-Identifier: MIT
#pragma once

#include "config/config.h"
#include "config/gpupresets.h" // gpuPresetNames()

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stagecraft {

/// One GPU model for the step-time estimate: dense peak FLOP/s per datatype (0 where the GPU has no such mode),
/// HBM capacity and bandwidth. Built-in presets come from resources/gpus/*.yaml, each citing its datasheet.
/// Plain value type.
struct GpuSpec
{
    std::string name; ///< preset name, e.g. "h100-sxm"
    std::string summary; ///< first comment line of the preset file
    double fp32Flops = 0; ///< dense FLOP/s (1 FLOP = one add or one multiply)
    double tf32Flops = 0;
    double bf16Flops = 0;
    double fp16Flops = 0;
    double fp8Flops = 0;
    int64_t hbmBytes = 0; ///< capacity in bytes (the datasheet's GB read as GiB)
    double hbmBytesPerS = 0; ///< memory bandwidth in bytes/s (the datasheet's GB/s = 1e9 bytes/s)

    // Kernel efficiencies of the step-time estimate (the preset file's `kernels:` section cites each).
    int64_t smCount = 0; ///< streaming multiprocessors: one GEMM tile runs on each at a time (wave quantization)
    int64_t gemmTile = 128; ///< side of the output tile of a large GEMM kernel (tile quantization)
    int64_t gemmKOverhead = 64; ///< K-depth a GEMM loses to its prologue and epilogue (efficiency K / (K + this))
    double gemmEfficiency = 0; ///< fraction of dense peak the best large GEMM reaches
    double gemmFp8Efficiency = 0; ///< the same for an FP8 GEMM, of the fp8 peak; 0 = no FP8 training
    double flashForwardEfficiency = 0; ///< fraction of dense peak of the FlashAttention forward kernel
    double flashBackwardEfficiency = 0; ///< of its backward kernel
    double hbmEfficiency = 0; ///< fraction of HBM bandwidth a memory-bound kernel reaches

    /// Dense peak FLOP/s for the compute dtype of `precision` (fp32 -> FP32 without tensor cores; fp16/bf16 ->
    /// the tensor-core figure; fp8 -> bf16's, the dtype of everything but its FP8 GEMMs). 0 when undefined.
    double peakFlops(Precision precision) const;
};

/// The built-in preset `name` (e.g. "h100-sxm"), or nullopt when there is none. Thread-safe.
std::optional<GpuSpec> gpuPreset(std::string_view name);

/// "unknown GPU \"x\" (cluster.gpu); known GPUs: a100-80gb, b200, h100-sxm, h200" (plus a did-you-mean): the
/// message for a name that gpuPreset() does not know.
std::string unknownGpuMessage(std::string_view name);

/// Parses one GPU preset document (the format of resources/gpus/*.yaml: name, dense_tflops.{fp32,tf32,bf16,
/// fp16,fp8}, hbm_gib, hbm_bandwidth_gbps, kernels.{sm_count, gemm_tile, gemm_k_overhead, gemm_efficiency,
/// flash_forward_efficiency, flash_backward_efficiency, hbm_efficiency, and optionally gemm_fp8_efficiency}). Returns
/// nullopt and sets `error` on malformed or missing fields. Never throws.
std::optional<GpuSpec> parseGpuSpec(std::string_view yamlText, std::string& error);

} // namespace stagecraft
