// SPDX-License-Identifier: MIT
#include "config/gpupresets.h"

#include "config/embeddedgpus.h"
#include "config/suggestion.h"

#include <algorithm>

namespace stagecraft {

std::vector<std::string> gpuPresetNames()
{
    std::vector<std::string> names;
    for (const detail::EmbeddedGpu& gpu : detail::embeddedGpus())
        names.emplace_back(gpu.name);
    std::sort(names.begin(), names.end());
    return names;
}

std::optional<std::string_view> gpuPresetText(std::string_view name)
{
    for (const detail::EmbeddedGpu& gpu : detail::embeddedGpus()) {
        if (name == gpu.name)
            return std::string_view(gpu.text);
    }
    return std::nullopt;
}

std::string unknownGpuText(std::string_view name)
{
    const std::vector<std::string> names = gpuPresetNames();
    std::string known;
    for (const std::string& n : names)
        known += (known.empty() ? "" : ", ") + n;
    return "unknown GPU \"" + std::string(name) + "\"; known GPUs: " + known
        + didYouMean(name, std::vector<std::string_view>(names.begin(), names.end()));
}

} // namespace stagecraft
