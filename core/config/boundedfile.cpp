// SPDX-License-Identifier: MIT
#include "config/boundedfile.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace stagecraft {

namespace {

    /// What a file is when it is not a regular file, for the message that refuses it.
    const char* fileKind(mode_t mode)
    {
        if (S_ISDIR(mode))
            return "is a directory";
        if (S_ISFIFO(mode))
            return "is a FIFO (named pipe)";
        if (S_ISCHR(mode))
            return "is a character device";
        if (S_ISBLK(mode))
            return "is a block device";
        if (S_ISSOCK(mode))
            return "is a socket";
        return "is not a regular file";
    }

    std::string systemError(const std::string& what, int error)
    {
        return what + ": " + (error ? std::strerror(error) : "unknown error");
    }

} // namespace

std::string readBoundedFile(const std::string& path, size_t maxBytes, const BoundedFileKind& kind, std::string& text)
{
    const std::string tooLarge = "the " + kind.noun + " is larger than the limit of " + std::to_string(maxBytes)
        + " bytes (" + std::to_string(maxBytes / 1024) + " KiB) for " + kind.limitFor;
    const std::string notRegular = ", expected " + kind.expected + " (a regular file)";
    struct stat info
    {
    };
    if (::stat(path.c_str(), &info) != 0)
        return systemError("cannot open the " + kind.noun, errno);
    if (!S_ISREG(info.st_mode))
        return std::string(fileKind(info.st_mode)) + notRegular;
    if (info.st_size > off_t(maxBytes))
        return tooLarge + " (it has " + std::to_string(info.st_size) + " bytes)";
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return systemError("cannot open the " + kind.noun, errno);
    std::string problem;
    if (::fstat(fd, &info) != 0)
        problem = systemError("cannot read the " + kind.noun, errno);
    else if (!S_ISREG(info.st_mode))
        problem = std::string(fileKind(info.st_mode)) + notRegular;
    text.clear();
    char buffer[16384];
    while (problem.empty()) {
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            problem = systemError("cannot read the " + kind.noun, errno);
            break;
        }
        if (n == 0)
            break;
        text.append(buffer, size_t(n));
        if (text.size() > maxBytes)
            problem = tooLarge;
    }
    ::close(fd);
    return problem;
}

} // namespace stagecraft
