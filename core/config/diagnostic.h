// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace stagecraft {

enum class Severity
{
    Error,
    Warning,
    Note
};

/// One problem found in a config (or other user input). `line` and `column` are 1-based; 0 means unknown
/// (e.g. a value that came from a command-line flag). `keyPath` is the dotted YAML path
/// ("parallelism.tp"); empty when the problem is not tied to a key (malformed YAML).
struct Diagnostic
{
    Severity severity = Severity::Error;
    std::string file;
    int line = 0;
    int column = 0;
    std::string keyPath;
    std::string message;
    /// Characters into the key's value text that the problem concerns (a character of a layout string): added to
    /// the value's column when the diagnostic is anchored at its key (anchorDiagnostics).
    int columnOffset = -1; ///< -1: the value as a whole

    /// "file:line:col: error: key: message" (the CLI and tests rely on this exact shape), one line: control bytes
    /// and invalid UTF-8 in any part are escaped (escapedText(), output/messagetext.h).
    std::string toString() const;
};

bool hasErrors(const std::vector<Diagnostic>& diagnostics);

/// `text` in double quotes with `"` and `\` escaped, as messages show a user's value ("found \"x\"").
std::string quotedText(std::string_view text);

} // namespace stagecraft
