// SPDX-License-Identifier: MIT
// A set of files in one folder that replaces the files of the same names as a whole or not at all (an export's rank
// files, group JSON and config): every file is written beside the old ones without a name, and only when all are
// complete does commit() give them their names.
#pragma once

#include <cstddef>
#include <filesystem>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace stagecraft {

/// The new files of one set in `directory`, written before any of them appears.
///
/// Each file is created with O_TMPFILE: an inode in the folder's file system with no name, which the kernel frees
/// when the process ends in any way (a crash, SIGKILL, the OOM killer), so an export that dies leaves nothing. Where
/// the file system has no O_TMPFILE (some network file systems), or when more files are complete than descriptors
/// may stay open (half the RLIMIT_NOFILE hard limit, which the constructor raises the soft limit to), a complete
/// file is given a hidden temporary name `.<final name>.tmp-<pid>-<n>` instead, which a later export of the set
/// removes. commit() names every file: first each gets a hidden temporary name (a failure there, e.g. a full disk,
/// removes them all and leaves the folder as it was), then each temporary is renamed onto its final name. Only that
/// last step, one rename(2) per file with SIGINT, SIGTERM, SIGHUP and SIGQUIT blocked in the calling thread, can
/// leave old and new files mixed, and only if the process is killed with SIGKILL (or the machine stops) inside it.
///
/// create() and finish() are thread-safe; commit() and discard() are not (call them once the writers are done).
/// Errors throw OutputError (output/outputfile.h) with a complete message.
class StagedFiles
{
public:
    /// Opens `directory` (which must exist). Throws OutputError.
    explicit StagedFiles(std::filesystem::path directory);
    /// Discards every file not committed.
    ~StagedFiles();
    StagedFiles(const StagedFiles&) = delete;
    StagedFiles& operator=(const StagedFiles&) = delete;

    /// A new empty file that becomes `fileName` (a name in the directory, no '/') on commit(). Returns its index;
    /// descriptor() gives the descriptor to write to, open until finish() or discard(). Throws OutputError.
    size_t create(const std::string& fileName, unsigned mode = 0666);
    /// The descriptor of file `index`, open for writing, owned by this object.
    int descriptor(size_t index) const;
    /// The writer of file `index` is done (all bytes written, fsync'ed when wanted). Throws OutputError.
    void finish(size_t index);
    /// Forgets file `index`: closes it and removes its temporary name, if any. Never throws.
    void discard(size_t index) noexcept;
    /// create() + write `bytes` + finish(). Throws OutputError.
    void writeFile(const std::string& fileName, std::string_view bytes, unsigned mode = 0666);

    /// Gives every finished file its name. `replace`: an existing file of that name is replaced (atomically per
    /// file); otherwise an existing file refuses the whole commit (RENAME_NOREPLACE, so a file another process
    /// made meanwhile is never overwritten) and the files this commit had already named are removed again.
    /// `fsync`: the folder is synced afterwards. Every file must be finished or discarded. Throws OutputError;
    /// after a failure nothing of the set is left in the folder, except in the case described above.
    void commit(bool replace, bool fsync = false);

    /// The folder.
    const std::filesystem::path& directory() const
    {
        return m_directory;
    }

private:
    struct Entry
    {
        std::string name; ///< final name
        std::string temporary; ///< hidden temporary name while it has one
        int fd = -1;
        bool finished = false;
        bool discarded = false;
    };
    std::string linkToTemporary(Entry& e);
    void discardLocked(Entry& e) noexcept;

    std::filesystem::path m_directory;
    int m_dirFd = -1;
    size_t m_openBudget = 0;
    size_t m_open = 0; ///< finished files still held by their descriptor
    mutable std::mutex m_mutex;
    std::vector<Entry> m_entries;
};

} // namespace stagecraft
