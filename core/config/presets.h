// SPDX-License-Identifier: MIT
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stagecraft {

/// Names of the built-in presets (the files of resources/presets, embedded at build time), sorted.
/// Thread-safe; the list never changes at run time.
std::vector<std::string> presetNames();

/// The YAML text of preset `name`, or nullopt when there is no such preset. The view points to static storage.
std::optional<std::string_view> presetText(std::string_view name);

/// One-line description of preset `name` (the first comment line of its file), or "" when unknown.
std::string presetSummary(std::string_view name);

/// The whole leading comment of preset `name`'s file: what it is, its source and the plan's citation, one line per
/// comment line with the "# " removed and lines of a sentence kept apart; "" when unknown.
std::string presetDescription(std::string_view name);

} // namespace stagecraft
