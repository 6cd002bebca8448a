// SPDX-License-Identifier: MIT
#include "kineto/boundedjsoninput.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

namespace stagecraft {

namespace {

    const char* notRegular(mode_t mode)
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

    std::string mib(uint64_t bytes)
    {
        return std::to_string(bytes >> 20) + " MiB";
    }

} // namespace

BoundedJsonInput::BoundedJsonInput(const JsonInputLimits& limits)
    : m_limits(limits)
{
    setg(nullptr, nullptr, nullptr);
}

BoundedJsonInput::~BoundedJsonInput()
{
    if (m_gzip)
        gzclose(static_cast<gzFile>(m_gzip));
}

std::unique_ptr<BoundedJsonInput> BoundedJsonInput::openFile(
    const std::filesystem::path& path, const JsonInputLimits& limits, std::string& error)
{
    struct stat info
    {
    };
    const std::string name = path.string();
    if (::stat(name.c_str(), &info) != 0) {
        error = std::string("cannot open: ") + std::strerror(errno);
        return nullptr;
    }
    if (!S_ISREG(info.st_mode)) {
        error = std::string(notRegular(info.st_mode)) + ", expected a JSON or .json.gz file (a regular file)";
        return nullptr;
    }
    if (uint64_t(info.st_size) > limits.maxFileBytes) {
        error = "the file has " + std::to_string(info.st_size) + " bytes, more than the limit of "
            + std::to_string(limits.maxFileBytes) + " (" + mib(limits.maxFileBytes) + ")";
        return nullptr;
    }
    const int fd = ::open(name.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        error = std::string("cannot open: ") + std::strerror(errno);
        return nullptr;
    }
    // It may have been replaced between stat() and open().
    if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
        error = std::string(notRegular(info.st_mode)) + ", expected a JSON or .json.gz file (a regular file)";
        ::close(fd);
        return nullptr;
    }
    // zlib reads a file that is not gzip as it is ("transparent" mode), so one path serves both.
    gzFile gz = gzdopen(fd, "rb");
    if (!gz) {
        ::close(fd);
        error = "cannot open: out of memory";
        return nullptr;
    }
    gzbuffer(gz, 128 * 1024);
    std::unique_ptr<BoundedJsonInput> input(new BoundedJsonInput(limits));
    input->m_gzip = gz;
    input->m_fileSize = uint64_t(info.st_size);
    input->m_buffer.resize(Chunk);
    return input;
}

std::unique_ptr<BoundedJsonInput> BoundedJsonInput::fromMemory(std::string_view bytes, const JsonInputLimits& limits)
{
    std::unique_ptr<BoundedJsonInput> input(new BoundedJsonInput(limits));
    input->m_memory = bytes;
    input->m_fileSize = bytes.size();
    if (bytes.size() > limits.maxFileBytes)
        input->m_stop = "the input has " + std::to_string(bytes.size()) + " bytes, more than the limit of "
            + std::to_string(limits.maxFileBytes) + " (" + mib(limits.maxFileBytes) + ")";
    return input;
}

uint64_t BoundedJsonInput::position() const
{
    return m_chunkStart + uint64_t(gptr() - eback());
}

std::pair<uint64_t, uint64_t> BoundedJsonInput::lineColumn() const
{
    uint64_t lines = m_linesBefore, lineStart = m_lineStartBefore;
    for (const char* p = eback(); p && p < gptr(); ++p)
        if (*p == '\n') {
            ++lines;
            lineStart = m_chunkStart + uint64_t(p - eback()) + 1;
        }
    const uint64_t pos = position();
    return { lines + 1, pos >= lineStart ? pos - lineStart + 1 : 1 };
}

std::string BoundedJsonInput::where() const
{
    const auto [line, column] = lineColumn();
    return std::to_string(line) + ":" + std::to_string(column);
}

bool BoundedJsonInput::fill()
{
    // Count the lines of the chunk the parser has finished with.
    for (const char* p = eback(); p && p < egptr(); ++p)
        if (*p == '\n') {
            ++m_linesBefore;
            m_lineStartBefore = m_chunkStart + uint64_t(p - eback()) + 1;
        }
    m_chunkStart += uint64_t(egptr() - eback());
    setg(nullptr, nullptr, nullptr);
    if (!m_stop.empty())
        return false;
    if (m_chunkStart - m_tokenStart > m_limits.maxTokenBytes) {
        m_stop = "more than " + mib(m_limits.maxTokenBytes)
            + " of input without the end of a JSON value (an endless string, number or run of spaces)";
        return false;
    }
    if (m_chunkStart >= m_limits.maxJsonBytes) {
        m_stop = "the JSON text is larger than the limit of " + std::to_string(m_limits.maxJsonBytes) + " bytes ("
            + mib(m_limits.maxJsonBytes) + ")" + (m_gzip ? " after decompression" : "");
        return false;
    }
    const size_t want = size_t(std::min<uint64_t>(Chunk, m_limits.maxJsonBytes - m_chunkStart));
    size_t got = 0;
    uint64_t consumed = 0;
    if (m_gzip) {
        auto* gz = static_cast<gzFile>(m_gzip);
        const int n = gzread(gz, m_buffer.data(), unsigned(want));
        if (n < 0) {
            int code = 0;
            const char* message = gzerror(gz, &code);
            m_stop = std::string("cannot read the gzip data: ") + (message ? message : "error");
            return false;
        }
        got = size_t(n);
        if (got == 0) {
            int code = 0;
            const char* message = gzerror(gz, &code);
            if (code != Z_OK && code != Z_STREAM_END) {
                m_stop = std::string("the gzip data is truncated or corrupt: ") + (message ? message : "error");
                return false;
            }
        }
        consumed = uint64_t(gzoffset(gz) < 0 ? 0 : gzoffset(gz));
        if (got > 0)
            setg(m_buffer.data(), m_buffer.data(), m_buffer.data() + got);
    } else {
        got = std::min(want, m_memory.size() - m_memoryPos);
        char* begin = const_cast<char*>(m_memory.data()) + m_memoryPos; // read-only use: the get area
        m_memoryPos += got;
        consumed = m_memoryPos;
        if (got > 0)
            setg(begin, begin, begin + got);
    }
    if (m_limits.progress && consumed >= m_nextProgress) {
        m_nextProgress = consumed + (uint64_t { 1 } << 20);
        if (!m_limits.progress(consumed, m_fileSize)) {
            setg(nullptr, nullptr, nullptr);
            m_stop = "cancelled";
            return false;
        }
    }
    return got > 0;
}

BoundedJsonInput::int_type BoundedJsonInput::underflow()
{
    if (gptr() < egptr())
        return traits_type::to_int_type(*gptr());
    if (!fill())
        return traits_type::eof();
    return traits_type::to_int_type(*gptr());
}

} // namespace stagecraft
