// SPDX-License-Identifier: MIT
#pragma once

#include "config/config.h"

#include <string>
#include <string_view>

namespace stagecraft {

/// The config as a complete YAML document with every key of DESIGN.md section 2 (defaults included), in the
/// canonical key order. Loading it back gives an equal Config: loadConfigText(toYaml(c), ...).config == c.
/// `model.preset` is written when set, so reloading needs that preset to exist. Pure function; thread-safe.
std::string toYaml(const Config& config);

/// `text` as a YAML double-quoted scalar: always a string, whatever it holds ("yes", "1e3", "a #b", "!tag x",
/// "~", a newline, a control byte): `"` and `\` escaped, \n, \t, other control bytes as \xHH. For every string a
/// config document or an override is built from. Pure.
std::string yamlQuoted(std::string_view text);

/// Shortest decimal text that reads back as exactly `value` ("900", "0.5", "1e+06"); "nan"/"inf" otherwise.
std::string formatNumber(double value);

} // namespace stagecraft
