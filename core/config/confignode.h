// SPDX-License-Identifier: MIT
#pragma once

#include "config/diagnostic.h"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stagecraft {

/// Where a config key or value came from. `line`/`column` are 1-based; 0 means unknown (command line).
struct SourceLocation
{
    std::string file;
    int line = 0;
    int column = 0;
    bool quoted = false; ///< a quoted scalar: `column` is its opening quote, its text starts one further
};

/// A parsed YAML document as a plain tree in which every key and value remembers its source (config file,
/// preset, or command line). The config loader parses with yaml-cpp, converts to this tree, applies `--set`
/// overrides and presets onto it, then reads the Config from it. Plain value type.
struct ConfigNode
{
    enum class Kind
    {
        Null,
        Scalar,
        Sequence,
        Map
    };
    struct Entry;

    Kind kind = Kind::Null;
    std::string scalar; ///< text of a Scalar (quotes removed)
    std::vector<ConfigNode> items; ///< elements of a Sequence
    std::vector<Entry> entries; ///< pairs of a Map in document order; duplicate keys are kept
    SourceLocation location; ///< where the value starts

    /// First entry of a Map with this key, or nullptr (also for non-maps).
    const Entry* findEntry(std::string_view key) const;
    Entry* findEntry(std::string_view key);
    /// Sets the location of this node and of all nodes below it (keys included).
    void relocate(const SourceLocation& where);
};

struct ConfigNode::Entry
{
    std::string key;
    SourceLocation keyLocation;
    ConfigNode value;
};

/// Largest config text accepted, in bytes. yaml-cpp 0.7 takes up to about 950 bytes of memory per input byte
/// (the worst shape found: `{,,,...}`, every comma a pair of two null nodes; peak RSS of YAML::Load on 256 KiB of
/// it, measured with /usr/bin/time -v, 243 MB over an empty input), so a text at this limit stays far below
/// 100 MB; real configs are a few KB (the largest example, 2 KB).
inline constexpr size_t kMaxConfigBytes = 64 * 1024;

/// Largest number of nodes of a parsed config, aliases expanded (an alias can make a small text expand
/// exponentially). A real config has about 60.
inline constexpr int kMaxConfigNodes = 10000;

/// Parses YAML text into a tree whose locations name `fileName`. On malformed YAML returns nullopt and appends one
/// diagnostic with the parser's position converted to 1-based. Also reported as errors, before yaml-cpp sees the
/// text: a text longer than kMaxConfigBytes, and a quoted value that does not close on its line (at its opening
/// quote); after parsing: a second YAML document (at its `---`), non-scalar keys, more than kMaxConfigNodes
/// nodes and nesting deeper than 64 levels (e.g. a recursive alias). Never throws.
std::optional<ConfigNode> parseConfigYaml(
    std::string_view text, const std::string& fileName, std::vector<Diagnostic>& diagnostics);

/// Applies one `--set` assignment "dotted.key.path=value" onto `root` (the value is parsed as YAML, so
/// "[dp,tp,cp,ep,pp]" is a list). Missing sections are created. Every node it sets is located at
/// {"<command line>", 0, 0}. On a malformed assignment appends a diagnostic and returns false. Never throws.
bool applyConfigOverride(ConfigNode& root, std::string_view assignment, std::vector<Diagnostic>& diagnostics);

/// File name used for diagnostics about values that came from `--set`.
inline constexpr const char* kCommandLineFile = "<command line>";

} // namespace stagecraft
