// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace stagecraft {

/// One key of the YAML config (DESIGN.md section 2), for documentation and for tools that list the keys.
struct ConfigKeyInfo
{
    std::string_view path; ///< dotted path, e.g. "parallelism.dp"; a section's keys follow the section order
    /// The default as toYaml() writes it for a default-constructed Config (strings without quotes); empty for a
    /// required key and for model.preset (no preset).
    std::string_view defaultValue;
    /// The loader reports a missing key unless model.preset provides it (the model keys) or the family does not
    /// use it (gpt: kv_heads). Required keys have no default.
    bool required = false;
    std::string_view meaning; ///< one or two sentences: what the value means, its unit and its constraints
};

/// Every key the config loader accepts, in the canonical order of toYaml(): name, model.*, training.*,
/// parallelism.*, cluster.*. Static storage; thread-safe. Kept in step with the loader by tests/core/tst_docs.cpp
/// (the loader's unknown-key diagnostics list the keys it accepts, and toYaml() writes them all).
const std::vector<ConfigKeyInfo>& configKeys();

/// The dotted paths of configKeys(), same order.
std::vector<std::string> configKeyPaths();

} // namespace stagecraft
