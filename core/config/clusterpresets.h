// SPDX-License-Identifier: MIT
#pragma once

#include "config/config.h"

#include <string>
#include <string_view>
#include <vector>

namespace stagecraft {

/// The figures of cluster preset `name` (cluster.preset: dgx-a100, dgx-h100, dgx-h200, gb200-nvl72), with
/// ClusterConfig::preset set to `name`; null when there is none. Each figure's source is in clusterpresets.cpp.
/// Thread-safe.
const ClusterConfig* clusterPreset(std::string_view name);

/// The preset names, sorted.
std::vector<std::string> clusterPresetNames();

/// "unknown cluster preset \"x\"; known presets: dgx-a100, ..." (plus a did-you-mean).
std::string unknownClusterPresetText(std::string_view name);

} // namespace stagecraft
