// SPDX-License-Identifier: MIT
#include "config/configlocations.h"

#include <utility>

namespace stagecraft {

ConfigLocations::ConfigLocations(std::string fileName, ConfigNode root)
    : m_fileName(std::move(fileName))
    , m_root(std::move(root))
{
}

SourceLocation ConfigLocations::find(std::string_view keyPath, bool* exact) const
{
    if (exact)
        *exact = false;
    SourceLocation best { m_fileName, 0, 0 };
    const ConfigNode* node = &m_root;
    size_t start = 0;
    while (node->kind == ConfigNode::Kind::Map) {
        const size_t dot = keyPath.find('.', start);
        const std::string_view key =
            keyPath.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
        const ConfigNode::Entry* entry = node->findEntry(key);
        if (!entry)
            break;
        if (dot == std::string_view::npos) {
            if (exact)
                *exact = true;
            return entry->value.location;
        }
        best = entry->keyLocation;
        node = &entry->value;
        start = dot + 1;
    }
    return best;
}

void anchorDiagnostics(const Config& config, std::vector<Diagnostic>& diagnostics)
{
    if (!config.origin.locations)
        return;
    for (Diagnostic& d : diagnostics) {
        if (!d.file.empty())
            continue;
        bool exact = false;
        const SourceLocation where = config.origin.locations->find(d.keyPath, &exact);
        d.file = where.file;
        d.line = where.line;
        d.column = where.column;
        if (d.column > 0 && exact && d.columnOffset >= 0)
            d.column += (where.quoted ? 1 : 0) + d.columnOffset;
    }
}

} // namespace stagecraft
