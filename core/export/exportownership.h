// SPDX-License-Identifier: MIT
// Telling files an earlier Stagecraft export wrote from anyone else's, so that a rerun may replace its own files
// (and only those) without --force.
#pragma once

#include <filesystem>
#include <string>

namespace stagecraft {

/// The `schema` attribute value prefix of the GlobalMetadata Stagecraft writes ("stagecraft <version>").
inline constexpr const char* kStagecraftSchemaPrefix = "stagecraft ";

/// Why the rank file `path` is not one a Stagecraft export wrote, or an empty string when it is one: its
/// GlobalMetadata (protobuf, or the first line of our JSON trace format) carries a string attribute `schema`
/// that starts with "stagecraft " (any version). Reads only the metadata record. Never throws; thread-safe.
std::string whyNotStagecraftRankFile(const std::filesystem::path& path);

/// Why `path` is not a communicator-group JSON a Stagecraft export wrote, or an empty string when it is one:
/// its bytes equal commGroupsText() of the groups it holds (STAGE's file, or one edited by hand, differs in
/// layout). Never throws; thread-safe.
std::string whyNotStagecraftGroupsFile(const std::filesystem::path& path);

/// Why `path` is not a resolved config a Stagecraft export wrote (`<name>.yaml`, toYaml()), or an empty string
/// when it is one: its first line is toYaml()'s header comment. Never throws; thread-safe.
std::string whyNotStagecraftConfigFile(const std::filesystem::path& path);

} // namespace stagecraft
