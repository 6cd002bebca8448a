// SPDX-License-Identifier: MIT
// Writing a file the user named (a Chrome trace, the communicator groups, a saved config, an SVG, a CSV) without
// ever destroying what the name stands for. The rule, for every output path Stagecraft takes:
//   - absent, or a regular file: the bytes go to a temporary file next to it, renamed over it when complete
//     (a reader never sees half a file; a failed write leaves the old content);
//   - "-": standard output;
//   - a character device or a FIFO (/dev/null, /dev/stdout, a named pipe): written straight into it, never
//     replaced; a FIFO without a reader is an error, not a hang;
//   - a symlink: followed. To a regular file, the target is replaced as above and the link stays; to a device or
//     FIFO, written straight; to nothing, or to a directory, refused;
//   - a directory, a block device or a socket: refused.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace stagecraft {

/// An output that could not be written; the message names the path and the reason.
class OutputError : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

enum class OutputKind
{
    Replace, ///< absent or regular (possibly through a symlink): temporary file + rename onto `target`
    Stream, ///< standard output, a character device or a FIFO: written straight
};

struct OutputPlan
{
    OutputKind kind = OutputKind::Replace;
    std::string target; ///< the file replaced (the symlink's target for a link), or the stream's path ("-")
};

/// How `path` would be written, by the rule above. Throws OutputError for a path that is refused.
OutputPlan planOutput(const std::string& path);

/// The Replace step alone: `bytes` go to a temporary file next to `target` (`.<name>.tmp-<pid>-<n>`, created
/// exclusively with permission bits `mode` before the umask), renamed onto `target` when complete; on failure the
/// temporary is removed. No policy about what `target` is: callers decide that. Throws OutputError.
void replaceFileAtomically(const std::string& target, std::string_view bytes, unsigned mode = 0666);

/// Writes `bytes` to `path` by the rule above. Throws OutputError.
void writeOutputFile(const std::string& path, std::string_view bytes);

} // namespace stagecraft
