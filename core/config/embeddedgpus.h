// SPDX-License-Identifier: MIT
#pragma once

#include <span>

namespace stagecraft::detail {

/// One GPU preset file from resources/gpus, compiled into the binary by core/embedyaml.cmake.
struct EmbeddedGpu
{
    const char* name; ///< file name without ".yaml"
    const char* text; ///< the whole YAML file, NUL-terminated
};

/// All embedded GPU presets, sorted by name. Static storage; thread-safe.
std::span<const EmbeddedGpu> embeddedGpus();

} // namespace stagecraft::detail
