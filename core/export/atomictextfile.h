// SPDX-License-Identifier: MIT
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace stagecraft {

/// Writes `text` to `path` through a temporary file next to it (`.<file name>.tmp-<pid>-<n>`, created
/// exclusively) that is renamed onto `path` when complete, so no reader ever sees a half-written file. Refuses to
/// replace anything at `path` that is not a regular file (a symbolic link, a folder, a device). `mode` is the
/// new file's permission bits before the umask. Returns false and sets `error` (naming the file and the system's
/// reason) on failure, leaving no temporary file. Never throws; thread-safe.
bool writeTextFileAtomically(
    const std::filesystem::path& path, std::string_view text, std::string& error, unsigned mode = 0666);

} // namespace stagecraft
