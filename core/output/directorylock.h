// SPDX-License-Identifier: MIT
#pragma once

#include <filesystem>
#include <functional>

namespace stagecraft {

/// An advisory lock (flock(2)) on a folder, held while the object lives, so that two Stagecraft processes never
/// export into one folder at the same time: between "does the folder already hold this export?" and the last
/// rename, no other export may change it. A whole export takes the lock exclusively; the rank ranges of a --ranks
/// job array take it shared, so they run side by side but never beside a whole export. The kernel releases the
/// lock when the process ends in any way. flock is local to one machine on some network file systems: there,
/// StagedFiles' RENAME_NOREPLACE still keeps a second export from overwriting the first.
class DirectoryLock
{
public:
    /// Locks `directory` (which must exist). When another process holds it, calls `waiting` once and then every
    /// 50 ms until the lock is free; `waiting` returns false to give up (a cancel), which leaves the object
    /// unlocked. Throws OutputError when the folder cannot be opened or locked for another reason.
    DirectoryLock(const std::filesystem::path& directory, bool exclusive, const std::function<bool()>& waiting);
    ~DirectoryLock();
    DirectoryLock(const DirectoryLock&) = delete;
    DirectoryLock& operator=(const DirectoryLock&) = delete;

    /// False only after `waiting` gave up (on a file system without flock the export proceeds unlocked).
    bool locked() const
    {
        return m_locked;
    }

private:
    int m_fd = -1;
    bool m_locked = false;
};

} // namespace stagecraft
