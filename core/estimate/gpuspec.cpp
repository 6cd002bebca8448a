// SPDX-License-Identifier: MIT
#include "estimate/gpuspec.h"

#include <algorithm>
#include <cmath>
#include <yaml-cpp/yaml.h>

namespace stagecraft {

double GpuSpec::peakFlops(Precision precision) const
{
    switch (precision) {
    case Precision::Fp32:
        return fp32Flops;
    case Precision::Fp16:
        return fp16Flops;
    case Precision::Bf16:
    case Precision::Fp8: // the FP8 GEMMs run at fp8Flops (kernelmodel.h); every other op in bf16
        return bf16Flops;
    }
    return 0;
}

namespace {

    std::string firstCommentLine(std::string_view text)
    {
        const size_t end = text.find('\n');
        std::string_view line = text.substr(0, end);
        if (line.empty() || line.front() != '#')
            return {};
        line.remove_prefix(1);
        while (!line.empty() && (line.front() == ' ' || line.front() == '\t'))
            line.remove_prefix(1);
        while (!line.empty() && (line.back() == ' ' || line.back() == '\r'))
            line.remove_suffix(1);
        return std::string(line);
    }

    bool readNumber(const YAML::Node& parent, const char* key, bool required, double& out, std::string& error)
    {
        const YAML::Node node = parent[key];
        if (!node) {
            if (required)
                error = std::string("missing key ") + key;
            return !required;
        }
        try {
            out = node.as<double>();
        } catch (const YAML::Exception&) {
            error = std::string(key) + ": expected a number";
            return false;
        }
        if (!std::isfinite(out) || out < 0) {
            error = std::string(key) + ": expected a non-negative number";
            return false;
        }
        return true;
    }

} // namespace

std::optional<GpuSpec> parseGpuSpec(std::string_view yamlText, std::string& error)
{
    try {
        const YAML::Node root = YAML::Load(std::string(yamlText));
        if (!root.IsMap()) {
            error = "expected a mapping";
            return std::nullopt;
        }
        GpuSpec spec;
        spec.summary = firstCommentLine(yamlText);
        if (!root["name"] || !root["name"].IsScalar()) {
            error = "missing key name";
            return std::nullopt;
        }
        spec.name = root["name"].as<std::string>();
        const YAML::Node flops = root["dense_tflops"];
        if (!flops || !flops.IsMap()) {
            error = "missing mapping dense_tflops";
            return std::nullopt;
        }
        for (const auto& entry : flops) {
            const std::string key = entry.first.as<std::string>();
            if (key != "fp32" && key != "tf32" && key != "bf16" && key != "fp16" && key != "fp8") {
                error = "dense_tflops." + key + ": unknown datatype (expected fp32, tf32, bf16, fp16, fp8)";
                return std::nullopt;
            }
        }
        double fp32 = 0, tf32 = 0, bf16 = 0, fp16 = 0, fp8 = 0, hbmGib = 0, hbmGbps = 0;
        if (!readNumber(flops, "fp32", true, fp32, error) || !readNumber(flops, "tf32", false, tf32, error)
            || !readNumber(flops, "bf16", true, bf16, error) || !readNumber(flops, "fp16", true, fp16, error)
            || !readNumber(flops, "fp8", false, fp8, error) || !readNumber(root, "hbm_gib", true, hbmGib, error)
            || !readNumber(root, "hbm_bandwidth_gbps", true, hbmGbps, error))
            return std::nullopt;
        if (hbmGib <= 0 || hbmGbps <= 0 || fp32 <= 0 || bf16 <= 0 || fp16 <= 0) {
            error = "peak FLOP/s (fp32, bf16, fp16), hbm_gib and hbm_bandwidth_gbps must be positive";
            return std::nullopt;
        }
        spec.fp32Flops = fp32 * 1e12;
        spec.tf32Flops = tf32 * 1e12;
        spec.bf16Flops = bf16 * 1e12;
        spec.fp16Flops = fp16 * 1e12;
        spec.fp8Flops = fp8 * 1e12;
        spec.hbmBytes = static_cast<int64_t>(std::llround(hbmGib * 1073741824.0));
        spec.hbmBytesPerS = hbmGbps * 1e9;
        const YAML::Node kernels = root["kernels"];
        if (!kernels || !kernels.IsMap()) {
            error = "missing mapping kernels";
            return std::nullopt;
        }
        double sm = 0, tile = 0, kOverhead = 0;
        if (!readNumber(kernels, "sm_count", true, sm, error) || !readNumber(kernels, "gemm_tile", true, tile, error)
            || !readNumber(kernels, "gemm_k_overhead", true, kOverhead, error)
            || !readNumber(kernels, "gemm_efficiency", true, spec.gemmEfficiency, error)
            || !readNumber(kernels, "flash_forward_efficiency", true, spec.flashForwardEfficiency, error)
            || !readNumber(kernels, "flash_backward_efficiency", true, spec.flashBackwardEfficiency, error)
            || !readNumber(kernels, "hbm_efficiency", true, spec.hbmEfficiency, error)
            || !readNumber(kernels, "gemm_fp8_efficiency", false, spec.gemmFp8Efficiency, error))
            return std::nullopt;
        if (spec.gemmFp8Efficiency < 0 || spec.gemmFp8Efficiency > 1 || (spec.gemmFp8Efficiency > 0 && fp8 <= 0)) {
            error = "kernels.gemm_fp8_efficiency must be in (0, 1], and only for a GPU with an fp8 peak";
            return std::nullopt;
        }
        for (double f :
            { spec.gemmEfficiency, spec.flashForwardEfficiency, spec.flashBackwardEfficiency, spec.hbmEfficiency })
            if (!(f > 0 && f <= 1)) {
                error = "kernels: efficiencies must be in (0, 1]";
                return std::nullopt;
            }
        if (sm < 1 || sm > 1e6 || tile < 1 || tile > 4096 || kOverhead > 1e6) {
            error = "kernels: sm_count and gemm_tile must be positive (and plausible)";
            return std::nullopt;
        }
        spec.smCount = static_cast<int64_t>(sm);
        spec.gemmTile = static_cast<int64_t>(tile);
        spec.gemmKOverhead = static_cast<int64_t>(kOverhead);
        return spec;
    } catch (const YAML::Exception& e) {
        error = e.what();
        return std::nullopt;
    }
}

std::optional<GpuSpec> gpuPreset(std::string_view name)
{
    const std::optional<std::string_view> text = gpuPresetText(name);
    if (!text)
        return std::nullopt;
    std::string error;
    std::optional<GpuSpec> spec = parseGpuSpec(*text, error);
    if (spec)
        spec->name = std::string(name); // the file name is the key users type
    return spec;
}

std::string unknownGpuMessage(std::string_view name)
{
    // After `unknown GPU "NAME"`, whatever NAME holds.
    std::string text = unknownGpuText(name);
    return text.insert(std::string_view("unknown GPU \"").size() + name.size() + 1, " (cluster.gpu)");
}

} // namespace stagecraft
