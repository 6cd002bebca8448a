// SPDX-License-Identifier: MIT
#pragma once

#include "config/config.h"
#include "config/confignode.h"
#include "config/diagnostic.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace stagecraft {

/// Where each key of a loaded config was given: the YAML tree the config was read from, after presets and
/// `--set` overrides were applied onto it. Immutable; thread-safe to read.
class ConfigLocations
{
public:
    /// `fileName` names the file for keys that are not in the tree; `root` is the resolved tree.
    ConfigLocations(std::string fileName, ConfigNode root);

    /// The location of the value at the dotted `keyPath`; else of the key of the nearest enclosing section that
    /// exists; else {fileName, 0, 0}.
    /// `exact` (optional) tells whether the value itself was found.
    SourceLocation find(std::string_view keyPath, bool* exact = nullptr) const;

private:
    std::string m_fileName;
    ConfigNode m_root;
};

/// Gives every diagnostic without a file (one from validateConfig or synthesize) the location of its key path in
/// `config` (its origin); leaves the others as they are. Does nothing for a config without an origin.
void anchorDiagnostics(const Config& config, std::vector<Diagnostic>& diagnostics);

} // namespace stagecraft
