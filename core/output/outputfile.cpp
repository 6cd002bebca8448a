// SPDX-License-Identifier: MIT
#include "output/outputfile.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

namespace stagecraft {

namespace {

    std::string quoted(const std::string& s)
    {
        return "\"" + s + "\"";
    }

    [[noreturn]] void fail(const std::string& what, int err)
    {
        throw OutputError(what + (err ? std::string(": ") + std::strerror(err) : std::string()));
    }

    void writeAll(int fd, std::string_view bytes, const std::string& what)
    {
        const char* data = bytes.data();
        size_t left = bytes.size();
        while (left > 0) {
            const ssize_t n = ::write(fd, data, left);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0 && errno == EAGAIN) {
                // A non-blocking FIFO whose reader is slow: wait for room.
                ::usleep(1000);
                continue;
            }
            if (n <= 0)
                fail("cannot write " + what, n < 0 ? errno : EIO);
            data += n;
            left -= static_cast<size_t>(n);
        }
    }

    void writeStream(const std::string& path, std::string_view bytes)
    {
        if (path == "-") {
            writeAll(STDOUT_FILENO, bytes, "to standard output");
            return;
        }
        // O_NONBLOCK: opening a FIFO nobody reads fails at once (ENXIO) instead of waiting forever. No O_CREAT,
        // no O_TRUNC: the entry is written into, never made or replaced.
        const int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0) {
            if (errno == ENXIO)
                fail("cannot write " + quoted(path) + ": it is a FIFO with no reader", 0);
            fail("cannot open " + quoted(path), errno);
        }
        try {
            writeAll(fd, bytes, quoted(path));
        } catch (...) {
            ::close(fd);
            throw;
        }
        ::close(fd);
    }

} // namespace

void replaceFileAtomically(const std::string& target, std::string_view bytes, unsigned mode)
{
    namespace fs = std::filesystem;
    const fs::path final(target);
    if (final.filename().empty())
        fail("cannot write " + quoted(target) + ": not a file name", 0);
    const fs::path dir = final.has_parent_path() ? final.parent_path() : fs::path(".");
    // The temporary name is ours (pid + counter, O_EXCL) and short enough for any final name that fits.
    static std::atomic<uint64_t> s_counter { 0 };
    std::string base = "." + final.filename().string();
    if (base.size() > 200)
        base.resize(200);
    fs::path tmp;
    int fd = -1;
    for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
        tmp = dir / (base + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(s_counter++));
        fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, static_cast<mode_t>(mode));
        if (fd < 0 && errno != EEXIST)
            fail("cannot create a temporary file in " + quoted(dir.string()) + " for " + quoted(target), errno);
    }
    if (fd < 0)
        fail("cannot create a temporary file in " + quoted(dir.string()) + " for " + quoted(target), EEXIST);
    auto abandon = [&](const std::string& what, int err) {
        if (fd >= 0)
            ::close(fd);
        ::unlink(tmp.c_str());
        fail(what, err);
    };
    try {
        writeAll(fd, bytes, quoted(tmp.string()));
    } catch (const OutputError& e) {
        abandon(e.what(), 0);
    }
    const int closed = ::close(fd);
    fd = -1;
    if (closed != 0)
        abandon("cannot close " + quoted(tmp.string()), errno);
    if (::rename(tmp.c_str(), final.c_str()) != 0)
        abandon("cannot rename " + quoted(tmp.string()) + " to " + quoted(target), errno);
}

namespace {

    const char* typeName(mode_t mode)
    {
        if (S_ISDIR(mode))
            return "a directory";
        if (S_ISBLK(mode))
            return "a block device";
        if (S_ISSOCK(mode))
            return "a socket";
        return "not a regular file";
    }

} // namespace

OutputPlan planOutput(const std::string& path)
{
    if (path.empty())
        throw OutputError("the output path is empty");
    if (path == "-")
        return { OutputKind::Stream, path };
    struct stat link
    {
    };
    if (::lstat(path.c_str(), &link) != 0) {
        if (errno == ENOENT)
            return { OutputKind::Replace, path };
        fail("cannot examine " + quoted(path), errno);
    }
    const bool isLink = S_ISLNK(link.st_mode);
    struct stat st = link;
    if (isLink && ::stat(path.c_str(), &st) != 0)
        fail("refusing to write " + quoted(path) + ": it is a symlink to a file that does not exist", 0);
    if (S_ISREG(st.st_mode)) {
        if (!isLink)
            return { OutputKind::Replace, path };
        std::error_code ec;
        const std::filesystem::path target = std::filesystem::canonical(path, ec);
        if (ec)
            fail("cannot resolve the symlink " + quoted(path), ec.value());
        return { OutputKind::Replace, target.string() };
    }
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))
        return { OutputKind::Stream, path };
    throw OutputError(
        "refusing to write " + quoted(path) + ": it is " + (isLink ? "a symlink to " : "") + typeName(st.st_mode));
}

void writeOutputFile(const std::string& path, std::string_view bytes)
{
    const OutputPlan plan = planOutput(path);
    if (plan.kind == OutputKind::Stream)
        writeStream(plan.target, bytes);
    else
        replaceFileAtomically(plan.target, bytes);
}

} // namespace stagecraft
