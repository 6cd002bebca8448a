// SPDX-License-Identifier: MIT
#include "config/diagnostic.h"

#include "output/messagetext.h"

#include <algorithm>

namespace stagecraft {

std::string Diagnostic::toString() const
{
    // Every part may hold bytes from outside (a path, a key, a quoted value): escaped, so no input can drive the
    // terminal or start a line of its own.
    std::string out = file.empty() ? std::string("<input>") : escapedText(file);
    if (line > 0) {
        out += ':' + std::to_string(line);
        if (column > 0)
            out += ':' + std::to_string(column);
    }
    out += severity == Severity::Error ? ": error: " : severity == Severity::Warning ? ": warning: " : ": note: ";
    if (!keyPath.empty())
        out += escapedText(keyPath) + ": ";
    out += escapedText(message);
    return out;
}

bool hasErrors(const std::vector<Diagnostic>& diagnostics)
{
    return std::any_of(
        diagnostics.begin(), diagnostics.end(), [](const Diagnostic& d) { return d.severity == Severity::Error; });
}

std::string quotedText(std::string_view text)
{
    std::string out = "\"";
    for (const char c : text) {
        if (c == '"' || c == '\\')
            out += '\\';
        out += c;
    }
    return out + "\"";
}

} // namespace stagecraft
