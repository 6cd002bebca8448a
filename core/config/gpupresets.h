// SPDX-License-Identifier: MIT
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stagecraft {

/// Names of the built-in GPU presets (the files of resources/gpus, embedded at build time), sorted: the values
/// `cluster.gpu` accepts. Thread-safe; the list never changes at run time.
std::vector<std::string> gpuPresetNames();

/// The YAML text of GPU preset `name` (parsed by estimate/gpuspec.h parseGpuSpec), or nullopt when there is no
/// such preset. The view points to static storage.
std::optional<std::string_view> gpuPresetText(std::string_view name);

/// "unknown GPU \"x\"; known GPUs: a100-80gb, b200, h100-sxm, h200", plus "; did you mean 'h100-sxm'?" when a
/// known name is close to (or starts with) `name`.
std::string unknownGpuText(std::string_view name);

} // namespace stagecraft
