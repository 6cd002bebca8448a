// SPDX-License-Identifier: MIT
#pragma once

#include "config/topologyconfig.h"

#include <string>
#include <string_view>
#include <vector>

namespace stagecraft {

/// The figures of topology preset `name` (cluster.topology.preset), with TopologyConfig::preset set to `name`;
/// null when there is none. Every figure's source is cited in topologypresets.cpp. Thread-safe.
const TopologyConfig* topologyPreset(std::string_view name);

/// The preset names, in the table's order.
std::vector<std::string> topologyPresetNames();

/// "unknown topology preset \"x\"; known presets: ..." (plus a did-you-mean).
std::string unknownTopologyPresetText(std::string_view name);

} // namespace stagecraft
