// SPDX-License-Identifier: MIT
// A byte source for nlohmann-json's SAX parser that never lets a hostile file cost unbounded time or memory:
// plain or gzip-compressed JSON from a regular file (or bytes in memory), read in chunks, with limits on the file
// size, on the decompressed size and on how many bytes may pass without the parser finishing a JSON token (a
// gigabyte-long string or number would otherwise sit in the parser's token buffer). It knows the line and column
// of the parser's position for messages.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <streambuf>
#include <string>
#include <string_view>
#include <vector>

namespace stagecraft {

/// Limits of one read. The defaults take real traces (a 1,000-GPU job's rank trace is a few hundred MB of JSON).
struct JsonInputLimits
{
    uint64_t maxFileBytes = uint64_t { 4 } << 30; ///< the file as stored (compressed or not)
    uint64_t maxJsonBytes = uint64_t { 16 } << 30; ///< the JSON text after decompression
    /// Input consumed while no token completes. nlohmann keeps a token twice (its text, and 4 bytes a character
    /// for error messages): 4 MiB costs about 30 MB at worst, and no string in a real trace comes near it.
    uint64_t maxTokenBytes = uint64_t { 4 } << 20;
    int maxDepth = 32; ///< nesting of arrays and objects (a Kineto trace needs 7)
    /// Called about every MiB with the bytes of the file consumed so far and the file size (0 if unknown);
    /// returning false cancels the read ("cancelled" error). May be empty.
    std::function<bool(uint64_t done, uint64_t total)> progress;
};

/// The input of one parse. Not copyable; not thread-safe (one parse at a time).
class BoundedJsonInput : public std::streambuf
{
public:
    static constexpr size_t Chunk = size_t { 256 } << 10;

    /// Opens `path` (a regular file; FIFOs, devices, sockets and directories are refused without blocking).
    /// gzip is recognized by its magic bytes, whatever the name. Null with `error` set on failure.
    static std::unique_ptr<BoundedJsonInput> openFile(
        const std::filesystem::path& path, const JsonInputLimits& limits, std::string& error);
    /// Over `bytes` (not copied: they must outlive the input). gzip bytes are not decompressed here.
    static std::unique_ptr<BoundedJsonInput> fromMemory(std::string_view bytes, const JsonInputLimits& limits);

    ~BoundedJsonInput() override;
    BoundedJsonInput(const BoundedJsonInput&) = delete;
    BoundedJsonInput& operator=(const BoundedJsonInput&) = delete;

    /// Bytes of JSON text handed to the parser so far (the parser has read up to here).
    uint64_t position() const;
    /// 1-based line and column (in bytes) of position().
    std::pair<uint64_t, uint64_t> lineColumn() const;
    /// "line:col" of position().
    std::string where() const;
    /// The parser completed a token: resets the count of maxTokenBytes.
    void tokenDone()
    {
        m_tokenStart = position();
    }
    /// Why the input ended early (a limit, a read error, corrupt gzip data, cancel), or "" when it did not.
    const std::string& stopReason() const
    {
        return m_stop;
    }
    bool compressed() const
    {
        return m_gzip != nullptr;
    }

protected:
    int_type underflow() override;

private:
    BoundedJsonInput(const JsonInputLimits& limits);
    bool fill();

    JsonInputLimits m_limits;
    void* m_gzip = nullptr; ///< gzFile (zlib), when reading a file
    std::string_view m_memory; ///< when reading memory
    size_t m_memoryPos = 0;
    uint64_t m_fileSize = 0;
    std::vector<char> m_buffer;
    uint64_t m_chunkStart = 0; ///< JSON offset of eback()
    uint64_t m_linesBefore = 0; ///< newlines before m_chunkStart
    uint64_t m_lineStartBefore = 0; ///< offset just past the last newline before m_chunkStart
    uint64_t m_tokenStart = 0;
    uint64_t m_nextProgress = 0;
    std::string m_stop;
};

} // namespace stagecraft
