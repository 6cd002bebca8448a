// SPDX-License-Identifier: MIT
#include "export/atomictextfile.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace stagecraft {

namespace {

    std::atomic<unsigned> s_counter { 0 };

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
    const std::filesystem::path dir = path.parent_path();
    const std::string base = "." + path.filename().string() + ".tmp-" + std::to_string(::getpid()) + "-";
    std::filesystem::path tmp;
    int fd = -1;
    for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
        tmp = dir / (base + std::to_string(s_counter++));
        fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, static_cast<mode_t>(mode));
        if (fd < 0 && errno != EEXIST) {
            error = systemError("cannot create a temporary file for " + quoted(path), errno);
            return false;
        }
    }
    if (fd < 0) {
        error = "cannot create a temporary file for " + quoted(path) + ": too many stale temporary files";
        return false;
    }
    int writeErr = 0;
    while (!text.empty() && writeErr == 0) {
        const ssize_t n = ::write(fd, text.data(), text.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            writeErr = n < 0 ? errno : EIO;
        else
            text.remove_prefix(static_cast<size_t>(n));
    }
    if (::close(fd) != 0 && writeErr == 0)
        writeErr = errno;
    if (writeErr != 0) {
        error = systemError("cannot write " + quoted(tmp), writeErr);
        ::unlink(tmp.c_str());
        return false;
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        error = systemError("cannot rename " + quoted(tmp) + " to " + quoted(path), errno);
        ::unlink(tmp.c_str());
        return false;
    }
    return true;
}

} // namespace stagecraft
