// SPDX-License-Identifier: MIT
// JSON rendering of Chakra trace objects (used by ChakraFileWriter's JSON format and by `inspect` dumps).
#pragma once

#include "chakra/chakratrace.h"

#include <nlohmann/json_fwd.hpp>

namespace stagecraft {

/// A node as a JSON object with the protobuf field names, in schema order:
/// {"id": 3, "name": "...", "type": "COMP_NODE", "ctrl_deps": [], "data_deps": [1, 2], "start_time_micros": 0,
///  "duration_micros": 0, "inputs": {"values": ..., "shapes": ..., "types": ...} (only if present), "outputs": ...,
///  "attr": [{"name": "num_ops", "int64_val": 123}, {"name": "inputs", "string_list": ["x", "64"]}, ...]}.
/// An attribute carries one key named after its oneof member (chakraAttrKindName()), none if unset; lists are
/// plain arrays, bytes are base64 strings, 64-bit integers are exact JSON integers; NaN and infinities
/// become null (JSON has no such numbers). A type outside the schema is written as its number.
/// An attribute with a non-empty doc string gets "doc_string". Pure function; thread-safe.
nlohmann::ordered_json chakraNodeToJson(const ChakraNode& node);
/// {"version": "...", "attr": [...]}, attributes as in chakraNodeToJson().
nlohmann::ordered_json chakraMetadataToJson(const ChakraMetadata& metadata);
/// {"name": ..., "<kind>": value}.
nlohmann::ordered_json chakraAttributeToJson(const ChakraAttribute& attr);

} // namespace stagecraft
