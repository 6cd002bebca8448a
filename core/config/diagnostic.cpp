// SPDX-License-Identifier: MIT
#include "config/diagnostic.h"

#include <algorithm>

namespace stagecraft {

std::string Diagnostic::toString() const
{
    std::string out = file.empty() ? std::string("<input>") : file;
    if (line > 0) {
        out += ':' + std::to_string(line);
        if (column > 0)
            out += ':' + std::to_string(column);
    }
    out += severity == Severity::Error ? ": error: " : severity == Severity::Warning ? ": warning: " : ": note: ";
    if (!keyPath.empty())
        out += keyPath + ": ";
    out += message;
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
