// SPDX-License-Identifier: MIT
#include "export/atomictextfile.h"

#include "output/outputfile.h"

#include <cerrno>
#include <cstring>
#include <sys/stat.h>

namespace stagecraft {

namespace {

    std::string quoted(const std::filesystem::path& p)
    {
        return "'" + p.string() + "'";
    }

    std::string systemError(const std::string& what, int err)
    {
        return what + ": " + std::strerror(err);
    }

} // namespace

bool writeTextFileAtomically(
    const std::filesystem::path& path, std::string_view text, std::string& error, unsigned mode)
{
    if (path.filename().empty()) {
        error = "output path " + quoted(path) + " names no file";
        return false;
    }
    struct stat st
    {
    };
    if (::lstat(path.c_str(), &st) == 0) {
        if (!S_ISREG(st.st_mode)) {
            error = "refusing to replace " + quoted(path) + ": it is not a regular file"
                + (S_ISLNK(st.st_mode) ? " (a symbolic link)" : "");
            return false;
        }
    } else if (errno != ENOENT) {
        error = systemError("cannot inspect " + quoted(path), errno);
        return false;
    }
    try {
        replaceFileAtomically(path.string(), text, mode);
    } catch (const OutputError& e) {
        error = e.what();
        return false;
    }
    return true;
}

} // namespace stagecraft
