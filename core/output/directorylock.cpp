// SPDX-License-Identifier: MIT
#include "output/directorylock.h"

#include "output/outputfile.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <thread>
#include <unistd.h>

namespace stagecraft {

DirectoryLock::DirectoryLock(
    const std::filesystem::path& directory, bool exclusive, const std::function<bool()>& waiting)
{
    m_fd = ::open(directory.empty() ? "." : directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (m_fd < 0)
        throw OutputError("cannot open the folder '" + directory.string() + "': " + std::strerror(errno));
    const int operation = (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB;
    for (;;) {
        if (::flock(m_fd, operation) == 0) {
            m_locked = true;
            return;
        }
        if (errno == EINTR)
            continue;
        if (errno != EWOULDBLOCK) {
            // A file system without locks (some FUSE mounts): carry on unlocked, as before locks existed.
            if (errno == ENOLCK || errno == EOPNOTSUPP || errno == ENOSYS) {
                m_locked = true; // nothing to wait for
                return;
            }
            const int err = errno;
            ::close(m_fd);
            m_fd = -1;
            throw OutputError("cannot lock the folder '" + directory.string() + "': " + std::strerror(err));
        }
        if (waiting && !waiting())
            return;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
}

DirectoryLock::~DirectoryLock()
{
    if (m_fd >= 0)
        ::close(m_fd); // releases the lock
}

} // namespace stagecraft
