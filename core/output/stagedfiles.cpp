// SPDX-License-Identifier: MIT
#include "output/stagedfiles.h"

#include "output/outputfile.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

namespace stagecraft {

namespace {

    std::atomic<uint64_t> s_counter { 0 };

    std::string quotedName(const std::string& s)
    {
        return "'" + s + "'";
    }

    [[noreturn]] void fail(const std::string& what, int err)
    {
        throw OutputError(what + (err ? std::string(": ") + std::strerror(err) : std::string()));
    }

    /// Raises the soft descriptor limit to the hard one (once) and returns how many finished files may keep their
    /// descriptor: half the limit, the rest is left to the process.
    size_t descriptorBudget()
    {
        static const size_t budget = [] {
            struct rlimit limit
            {
            };
            if (::getrlimit(RLIMIT_NOFILE, &limit) != 0)
                return size_t { 256 };
            if (limit.rlim_cur < limit.rlim_max) {
                struct rlimit raised = limit;
                raised.rlim_cur = limit.rlim_max == RLIM_INFINITY ? rlim_t { 1 } << 20 : limit.rlim_max;
                if (::setrlimit(RLIMIT_NOFILE, &raised) == 0)
                    limit = raised;
            }
            const rlim_t cur = limit.rlim_cur == RLIM_INFINITY ? rlim_t { 1 } << 20 : limit.rlim_cur;
            return static_cast<size_t>(cur / 2);
        }();
        return budget;
    }

    /// Blocks the termination signals in the calling thread while it lives.
    class TerminationSignalsBlocked
    {
    public:
        TerminationSignalsBlocked()
        {
            sigset_t set;
            sigemptyset(&set);
            for (int s : { SIGINT, SIGTERM, SIGHUP, SIGQUIT })
                sigaddset(&set, s);
            m_active = ::pthread_sigmask(SIG_BLOCK, &set, &m_old) == 0;
        }
        ~TerminationSignalsBlocked()
        {
            if (m_active)
                ::pthread_sigmask(SIG_SETMASK, &m_old, nullptr);
        }
        TerminationSignalsBlocked(const TerminationSignalsBlocked&) = delete;
        TerminationSignalsBlocked& operator=(const TerminationSignalsBlocked&) = delete;

    private:
        sigset_t m_old {};
        bool m_active = false;
    };

} // namespace

StagedFiles::StagedFiles(std::filesystem::path directory)
    : m_directory(std::move(directory))
{
    m_dirFd = ::open(m_directory.empty() ? "." : m_directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (m_dirFd < 0)
        fail("cannot open the folder " + quotedName(m_directory.string()), errno);
    m_openBudget = descriptorBudget();
}

StagedFiles::~StagedFiles()
{
    for (Entry& e : m_entries)
        discardLocked(e);
    if (m_dirFd >= 0)
        ::close(m_dirFd);
}

size_t StagedFiles::create(const std::string& fileName, unsigned mode)
{
    if (fileName.empty() || fileName.find('/') != std::string::npos)
        fail("cannot write " + quotedName(fileName) + ": not a file name", 0);
    Entry e;
    e.name = fileName;
    // An unnamed file in the folder: nothing to clean up whatever happens to us.
    e.fd = ::openat(m_dirFd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, static_cast<mode_t>(mode));
    if (e.fd < 0 && errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL && errno != ENOENT)
        fail("cannot create a file in " + quotedName(m_directory.string()) + " for " + quotedName(fileName), errno);
    if (e.fd < 0) {
        // No O_TMPFILE here: a hidden temporary name from the start.
        std::string base = "." + fileName;
        if (base.size() > 200)
            base.resize(200);
        for (int attempt = 0; attempt < 100 && e.fd < 0; ++attempt) {
            e.temporary = base + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(s_counter++);
            e.fd = ::openat(
                m_dirFd, e.temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, static_cast<mode_t>(mode));
            if (e.fd < 0 && errno != EEXIST)
                fail("cannot create a temporary file in " + quotedName(m_directory.string()) + " for "
                        + quotedName(fileName),
                    errno);
        }
        if (e.fd < 0)
            fail("cannot create a temporary file in " + quotedName(m_directory.string()) + " for "
                    + quotedName(fileName),
                EEXIST);
    }
    std::lock_guard lock(m_mutex);
    m_entries.push_back(std::move(e));
    return m_entries.size() - 1;
}

int StagedFiles::descriptor(size_t index) const
{
    std::lock_guard lock(m_mutex);
    return m_entries[index].fd;
}

std::string StagedFiles::linkToTemporary(Entry& e)
{
    std::string base = "." + e.name;
    if (base.size() > 200)
        base.resize(200);
    const std::string proc = "/proc/self/fd/" + std::to_string(e.fd);
    for (int attempt = 0; attempt < 100; ++attempt) {
        const std::string name = base + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(s_counter++);
        // Through /proc (no privilege needed), else AT_EMPTY_PATH (needs CAP_DAC_READ_SEARCH).
        int rc = ::linkat(AT_FDCWD, proc.c_str(), m_dirFd, name.c_str(), AT_SYMLINK_FOLLOW);
        if (rc != 0 && errno == ENOENT)
            rc = ::linkat(e.fd, "", m_dirFd, name.c_str(), AT_EMPTY_PATH);
        if (rc == 0)
            return name;
        if (errno != EEXIST)
            fail("cannot name the new file " + quotedName((m_directory / e.name).string()), errno);
    }
    fail("cannot name the new file " + quotedName((m_directory / e.name).string()), EEXIST);
}

void StagedFiles::finish(size_t index)
{
    std::lock_guard lock(m_mutex);
    Entry& e = m_entries[index];
    e.finished = true;
    if (!e.temporary.empty()) {
        // Already named: the descriptor is not needed any more.
        const int fd = e.fd;
        e.fd = -1;
        if (::close(fd) != 0)
            fail("cannot write " + quotedName((m_directory / e.temporary).string()), errno);
        return;
    }
    if (m_open < m_openBudget) {
        ++m_open;
        return;
    }
    e.temporary = linkToTemporary(e);
    const int fd = e.fd;
    e.fd = -1;
    if (::close(fd) != 0)
        fail("cannot write " + quotedName((m_directory / e.temporary).string()), errno);
}

void StagedFiles::discardLocked(Entry& e) noexcept
{
    if (e.fd >= 0) {
        ::close(e.fd);
        if (e.finished && e.temporary.empty() && m_open > 0)
            --m_open;
        e.fd = -1;
    }
    if (!e.temporary.empty()) {
        ::unlinkat(m_dirFd, e.temporary.c_str(), 0);
        e.temporary.clear();
    }
    e.discarded = true;
}

void StagedFiles::discard(size_t index) noexcept
{
    std::lock_guard lock(m_mutex);
    discardLocked(m_entries[index]);
}

void StagedFiles::writeFile(const std::string& fileName, std::string_view bytes, unsigned mode)
{
    const size_t index = create(fileName, mode);
    const int fd = descriptor(index);
    const char* data = bytes.data();
    size_t left = bytes.size();
    while (left > 0) {
        const ssize_t n = ::write(fd, data, left);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            const int err = n < 0 ? errno : EIO;
            discard(index);
            fail("cannot write " + quotedName((m_directory / fileName).string()), err);
        }
        data += n;
        left -= static_cast<size_t>(n);
    }
    finish(index);
}

void StagedFiles::commit(bool replace, bool fsync)
{
    // Step 1: a hidden name for every file. Nothing visible changes; a failure (a full folder) undoes it all.
    for (Entry& e : m_entries) {
        if (e.discarded)
            continue;
        if (!e.finished)
            fail("internal error: " + quotedName(e.name) + " was committed before it was complete", 0);
        if (e.temporary.empty()) {
            try {
                e.temporary = linkToTemporary(e);
            } catch (...) {
                for (Entry& d : m_entries)
                    discardLocked(d);
                throw;
            }
        }
    }
    for (Entry& e : m_entries) {
        if (e.fd >= 0) {
            ::close(e.fd);
            e.fd = -1;
        }
    }
    m_open = 0;
    // Step 2: the renames, not to be interrupted by a termination signal.
    TerminationSignalsBlocked blocked;
    std::vector<std::string> named;
    for (Entry& e : m_entries) {
        if (e.discarded)
            continue;
        int rc = replace ? ::renameat(m_dirFd, e.temporary.c_str(), m_dirFd, e.name.c_str())
                         : ::renameat2(m_dirFd, e.temporary.c_str(), m_dirFd, e.name.c_str(), RENAME_NOREPLACE);
        if (rc != 0 && !replace && errno == EINVAL) {
            // No RENAME_NOREPLACE on this file system: link(2) never replaces either.
            rc = ::linkat(m_dirFd, e.temporary.c_str(), m_dirFd, e.name.c_str(), 0);
            if (rc == 0)
                ::unlinkat(m_dirFd, e.temporary.c_str(), 0);
        }
        if (rc != 0) {
            const int err = errno;
            if (!replace)
                for (const std::string& n : named)
                    ::unlinkat(m_dirFd, n.c_str(), 0);
            for (Entry& d : m_entries)
                discardLocked(d);
            if (err == EEXIST)
                fail("cannot write " + quotedName((m_directory / e.name).string())
                        + ": another process created it meanwhile; nothing of this export was kept",
                    0);
            fail("cannot rename the new file onto " + quotedName((m_directory / e.name).string())
                    + (replace && !named.empty() ? " (the files before it were already replaced)" : ""),
                err);
        }
        e.temporary.clear();
        e.discarded = true; // committed: nothing left to discard
        named.push_back(e.name);
    }
    if (fsync && ::fsync(m_dirFd) != 0)
        fail("cannot sync the folder " + quotedName(m_directory.string()), errno);
}

} // namespace stagecraft
