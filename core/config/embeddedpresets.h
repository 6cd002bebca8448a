// SPDX-License-Identifier: MIT
#pragma once

#include <span>

namespace stagecraft::detail {

/// One preset file from resources/presets, compiled into the binary by core/embedyaml.cmake.
struct EmbeddedPreset
{
    const char* name; ///< file name without ".yaml"
    const char* text; ///< the whole YAML file, NUL-terminated
};

/// All embedded presets, sorted by name. Static storage; thread-safe.
std::span<const EmbeddedPreset> embeddedPresets();

} // namespace stagecraft::detail
