// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <string>

namespace stagecraft {

/// How readBoundedFile() names the file in its messages.
struct BoundedFileKind
{
    std::string noun; ///< "config file": "cannot open the config file: ..."
    std::string expected; ///< "a YAML config file": "is a directory, expected a YAML config file (a regular file)"
    std::string limitFor; ///< "a config": "... larger than the limit of N bytes (64 KiB) for a config"
};

/// Reads the regular file at `path` into `text`, at most `maxBytes`: returns "" on success, else the problem as a
/// message. A FIFO, device, socket or directory is refused without blocking (the file is opened O_NONBLOCK and
/// checked again after opening, as it may have been replaced); reading stops past the limit whatever size stat()
/// gave (files in /proc say 0). Never throws except std::bad_alloc; reentrant.
std::string readBoundedFile(const std::string& path, size_t maxBytes, const BoundedFileKind& kind, std::string& text);

} // namespace stagecraft
