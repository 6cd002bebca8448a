// SPDX-License-Identifier: MIT
// Internal to core_chakra: conversion between the plain model (chakratrace.h) and the generated protobuf
// classes. Not for use outside core/chakra (the generated header is a private include of core_chakra).
#pragma once

#include "chakra/chakratrace.h"
#include "chakra/et_def.pb.h"

#include <string>
#include <string_view>

namespace stagecraft::chakraproto {

/// Strict UTF-8 (no overlong forms, no surrogates, at most U+10FFFF), as protobuf requires of proto3
/// `string` fields: a file with anything else is rejected by Chakra's Python reader.
bool isValidUtf8(std::string_view s);

/// Fills `out` (cleared first). Returns an empty string, or a message naming the attribute whose value does
/// not match its kind or the string field that is not valid UTF-8.
std::string toProto(const ChakraNode& node, ChakraProtoMsg::Node* out);
std::string toProto(const ChakraMetadata& metadata, ChakraProtoMsg::GlobalMetadata* out);

ChakraNode fromProto(const ChakraProtoMsg::Node& node);
ChakraMetadata fromProto(const ChakraProtoMsg::GlobalMetadata& metadata);

} // namespace stagecraft::chakraproto
