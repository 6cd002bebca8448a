// SPDX-License-Identifier: MIT
// libFuzzer target: config.json text -> Hugging Face import. Every input must become either a model (whose keys
// read back through the YAML loader to the same model, when the loader accepts them) or errors that explain
// themselves at a position inside the text. Any crash, sanitizer report, leak, timeout or abort() is a bug.
#include "config/configloader.h"
#include "config/configwriter.h"
#include "config/hfimport.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

void check(bool condition)
{
    if (!condition)
        std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const std::string fileName = "fuzz.json";
    const stagecraft::HfImport imported = stagecraft::importHfConfigText(text, fileName);
    const int lines = int(std::count(text.begin(), text.end(), '\n')) + 1;
    for (const stagecraft::Diagnostic& d : imported.diagnostics) {
        check(!d.message.empty());
        check(d.file == fileName);
        check(d.line >= 0 && d.line <= lines && d.column >= 0);
        // Without a position only a file refused whole: over the size limit, or binary or not starting like JSON
        // (described in one "not a Hugging Face config.json" error, never quoted).
        const bool refusedWhole =
            imported.diagnostics.size() == 1 && d.message.rfind("not a Hugging Face config.json: ", 0) == 0;
        check(d.line > 0 || size > stagecraft::kMaxHfConfigBytes || refusedWhole);
    }
    check(imported.model.has_value() != stagecraft::hasErrors(imported.diagnostics));
    if (!imported.model)
        return 0;
    check(!imported.architecture.empty());
    check(imported.modelKeys.kind == stagecraft::ConfigNode::Kind::Map && !imported.modelKeys.entries.empty());
    stagecraft::Config config;
    config.model = *imported.model;
    config.training.globalBatch = 1;
    const stagecraft::ConfigResult reloaded = stagecraft::loadConfigText(stagecraft::toYaml(config), "fuzz.yaml");
    if (reloaded.config)
        check(reloaded.config->model == *imported.model);
    return 0;
}
