// SPDX-License-Identifier: MIT
#include "config/presets.h"

#include "config/embeddedpresets.h"

#include <algorithm>

namespace stagecraft {

std::vector<std::string> presetNames()
{
    std::vector<std::string> names;
    for (const detail::EmbeddedPreset& preset : detail::embeddedPresets())
        names.emplace_back(preset.name);
    std::sort(names.begin(), names.end());
    return names;
}

std::optional<std::string_view> presetText(std::string_view name)
{
    for (const detail::EmbeddedPreset& preset : detail::embeddedPresets()) {
        if (name == preset.name)
            return std::string_view(preset.text);
    }
    return std::nullopt;
}

std::string presetSummary(std::string_view name)
{
    const std::optional<std::string_view> text = presetText(name);
    if (!text)
        return {};
    std::string_view rest = *text;
    while (!rest.empty()) {
        const size_t end = rest.find('\n');
        std::string_view line = rest.substr(0, end);
        rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
        const size_t first = line.find_first_not_of(" \t");
        if (first == std::string_view::npos)
            continue;
        line.remove_prefix(first);
        if (line.front() != '#')
            return {};
        line.remove_prefix(1);
        while (!line.empty() && (line.front() == ' ' || line.front() == '\t'))
            line.remove_prefix(1);
        while (!line.empty() && (line.back() == ' ' || line.back() == '\r'))
            line.remove_suffix(1);
        return std::string(line);
    }
    return {};
}

std::string presetDescription(std::string_view name)
{
    const std::optional<std::string_view> text = presetText(name);
    if (!text)
        return {};
    std::string out;
    std::string_view rest = *text;
    while (!rest.empty()) {
        const size_t end = rest.find('\n');
        std::string_view line = rest.substr(0, end);
        rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
        const size_t first = line.find_first_not_of(" \t");
        if (first == std::string_view::npos)
            continue;
        line.remove_prefix(first);
        if (line.front() != '#')
            break;
        line.remove_prefix(1);
        if (!line.empty() && line.front() == ' ')
            line.remove_prefix(1);
        while (!line.empty() && (line.back() == ' ' || line.back() == '\r'))
            line.remove_suffix(1);
        if (!out.empty())
            out += '\n';
        out += line;
    }
    return out;
}

} // namespace stagecraft
