// SPDX-License-Identifier: MIT
#include "chakra/chakrareader.h"

#include "chakra/chakraproto.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <google/protobuf/stubs/logging.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace stagecraft {

bool ChakraTraceVisitor::onMetadata(ChakraMetadata&&, const ChakraRecordInfo&)
{
    return true;
}

namespace {
    /// Byte input with a sliding window: ensure(n) makes n bytes visible at data() if the input has them.
    class Source
    {
    public:
        virtual ~Source() = default;
        /// True if at least `need` bytes are available; false at end of input or on an I/O error (ioError).
        virtual bool ensure(size_t need) = 0;
        virtual const uint8_t* data() const = 0;
        virtual size_t available() const = 0;
        virtual void consume(size_t n) = 0;
        /// Total input size if known in advance (memory, regular files).
        virtual std::optional<uint64_t> totalSize() const = 0;

        std::string ioError;
    };

    class MemorySource final : public Source
    {
    public:
        explicit MemorySource(std::string_view bytes)
            : m_bytes(bytes)
        {
        }
        bool ensure(size_t need) override
        {
            return m_bytes.size() - m_pos >= need;
        }
        const uint8_t* data() const override
        {
            return reinterpret_cast<const uint8_t*>(m_bytes.data()) + m_pos;
        }
        size_t available() const override
        {
            return m_bytes.size() - m_pos;
        }
        void consume(size_t n) override
        {
            m_pos += n;
        }
        std::optional<uint64_t> totalSize() const override
        {
            return m_bytes.size();
        }

    private:
        std::string_view m_bytes;
        size_t m_pos = 0;
    };

    class FdSource final : public Source
    {
    public:
        static constexpr size_t Chunk = size_t { 1 } << 20;

        FdSource(int fd, std::optional<uint64_t> size)
            : m_fd(fd)
            , m_size(size)
        {
        }
        ~FdSource() override
        {
            ::close(m_fd);
        }
        FdSource(const FdSource&) = delete;
        FdSource& operator=(const FdSource&) = delete;

        bool ensure(size_t need) override
        {
            if (m_end - m_begin >= need)
                return true;
            if (m_eof || !ioError.empty())
                return false;
            if (m_begin > 0) {
                std::memmove(m_buf.data(), m_buf.data() + m_begin, m_end - m_begin);
                m_end -= m_begin;
                m_begin = 0;
            }
            while (m_end < need) {
                if (m_end == m_buf.size()) {
                    // Grow geometrically, and only as data really arrives: a length prefix that lies about
                    // the record size cannot make us allocate more than about twice what the input holds.
                    const size_t target = std::max(need, Chunk);
                    m_buf.resize(std::min(target, std::max(m_buf.size() * 2, Chunk)));
                }
                const ssize_t n = ::read(m_fd, m_buf.data() + m_end, m_buf.size() - m_end);
                if (n < 0) {
                    if (errno == EINTR)
                        continue;
                    ioError = std::strerror(errno);
                    return false;
                }
                if (n == 0) {
                    m_eof = true;
                    return false;
                }
                m_end += static_cast<size_t>(n);
            }
            return true;
        }
        const uint8_t* data() const override
        {
            return m_buf.data() + m_begin;
        }
        size_t available() const override
        {
            return m_end - m_begin;
        }
        void consume(size_t n) override
        {
            m_begin += n;
        }
        std::optional<uint64_t> totalSize() const override
        {
            return m_size;
        }

    private:
        int m_fd;
        std::optional<uint64_t> m_size;
        std::vector<uint8_t> m_buf;
        size_t m_begin = 0;
        size_t m_end = 0;
        bool m_eof = false;
    };

    /// Reads a base-128 varint of at most 10 bytes from [p, p+n). Returns bytes used, 0 if truncated/too long.
    size_t readVarint64(const uint8_t* p, size_t n, uint64_t* value)
    {
        uint64_t v = 0;
        for (size_t i = 0; i < n && i < 10; ++i) {
            v |= uint64_t(p[i] & 0x7F) << (7 * i);
            if (!(p[i] & 0x80)) {
                *value = v;
                return i + 1;
            }
        }
        return 0;
    }

    struct WireScan
    {
        std::string problem; ///< first structural problem of the top level, empty if none
        bool integerField1 = false; ///< field 1 with varint wire type (a Node id; GlobalMetadata has a string)
    };

    /// Walks the top-level fields of one serialized message; used only to explain a failed parse.
    /// `stringField` is the number of the top-level string field whose UTF-8 is checked (0 = none).
    WireScan scanWire(const uint8_t* p, size_t n, uint64_t stringField)
    {
        WireScan scan;
        size_t pos = 0;
        while (pos < n) {
            uint64_t tag = 0;
            const size_t tagBytes = readVarint64(p + pos, n - pos, &tag);
            const std::string at = " at payload byte " + std::to_string(pos);
            if (tagBytes == 0) {
                scan.problem = "truncated or over-long field tag" + at;
                return scan;
            }
            const uint64_t field = tag >> 3;
            const auto wireType = static_cast<unsigned>(tag & 7);
            if (field == 0 || field > 536870911u) {
                scan.problem = "invalid field number " + std::to_string(field) + at;
                return scan;
            }
            pos += tagBytes;
            const std::string what = "field " + std::to_string(field) + at;
            switch (wireType) {
            case 0: {
                uint64_t v = 0;
                const size_t used = readVarint64(p + pos, n - pos, &v);
                if (used == 0) {
                    scan.problem = "truncated integer in " + what;
                    return scan;
                }
                if (field == 1)
                    scan.integerField1 = true;
                pos += used;
                break;
            }
            case 1:
                if (n - pos < 8) {
                    scan.problem = "truncated 64-bit value in " + what;
                    return scan;
                }
                pos += 8;
                break;
            case 2: {
                uint64_t len = 0;
                const size_t used = readVarint64(p + pos, n - pos, &len);
                if (used == 0) {
                    scan.problem = "truncated length in " + what;
                    return scan;
                }
                pos += used;
                if (len > n - pos) {
                    scan.problem = "length " + std::to_string(len) + " of " + what + " runs past the record end ("
                        + std::to_string(n - pos) + " bytes left)";
                    return scan;
                }
                if (field == stringField
                    && !chakraproto::isValidUtf8(
                        std::string_view(reinterpret_cast<const char*>(p + pos), static_cast<size_t>(len)))) {
                    scan.problem = "string " + what + " is not valid UTF-8";
                    return scan;
                }
                pos += static_cast<size_t>(len);
                break;
            }
            case 5:
                if (n - pos < 4) {
                    scan.problem = "truncated 32-bit value in " + what;
                    return scan;
                }
                pos += 4;
                break;
            case 3:
            case 4:
                scan.problem = "group wire type (not used by the Chakra schema) in " + what;
                return scan;
            default:
                scan.problem = "invalid wire type " + std::to_string(wireType) + " in " + what;
                return scan;
            }
        }
        return scan;
    }

    bool hasUnknownFields(const google::protobuf::Message& msg)
    {
        return !msg.GetReflection()->GetUnknownFields(msg).empty();
    }

    std::string recordLabel(const ChakraRecordInfo& r)
    {
        return "record " + std::to_string(r.index) + (r.index == 0 ? " (GlobalMetadata)" : " (Node)")
            + " at byte offset " + std::to_string(r.offset);
    }

    ChakraReadStatus parseRecords(Source& src, ChakraTraceVisitor& visitor, std::string_view sourceName)
    {
        ChakraReadStatus status;
        const std::string prefix = std::string(sourceName) + ": ";
        auto fail = [&](std::string message) {
            status.error = prefix + std::move(message);
            return status;
        };
        const auto total = src.totalSize();
        status.framing.fileBytes = total.value_or(0);

        if (!src.ensure(1)) {
            if (!src.ioError.empty())
                return fail("read error at byte offset 0: " + src.ioError);
            return fail("empty file (0 bytes); a Chakra ET file starts with a GlobalMetadata record");
        }
        if (src.ensure(2) && src.data()[0] == 0x1F && src.data()[1] == 0x8B) {
            return fail("gzip-compressed data (starts with 1f 8b); decompress it first "
                        "(ASTRA-sim's feeder cannot read compressed traces)");
        }

        // Protobuf logs parse problems (e.g. invalid UTF-8) to stderr; we report them as errors instead.
        const google::protobuf::LogSilencer silence;
        ChakraProtoMsg::GlobalMetadata metadataMsg;
        ChakraProtoMsg::Node nodeMsg;
        uint64_t offset = 0;
        for (uint64_t index = 0;; ++index) {
            if (!src.ensure(1)) {
                if (!src.ioError.empty())
                    return fail("read error at byte offset " + std::to_string(offset) + ": " + src.ioError);
                break; // clean end of data at a record boundary
            }
            ChakraRecordInfo rec { index, offset, 0 };
            const std::string label = recordLabel(rec);

            // Length prefix: varint32, at most 5 bytes (the 5th may carry only 4 value bits).
            src.ensure(5);
            if (!src.ioError.empty())
                return fail("read error at byte offset " + std::to_string(offset) + ": " + src.ioError);
            const uint8_t* p = src.data();
            const size_t avail = std::min<size_t>(src.available(), 5);
            uint32_t length = 0;
            size_t prefixBytes = 0;
            for (size_t i = 0;; ++i) {
                if (i == avail) {
                    if (i == 5) {
                        return fail(label + ": malformed length prefix: varint longer than 5 bytes");
                    }
                    return fail(label + ": truncated length prefix (the data ends inside a varint after "
                        + std::to_string(i) + " byte" + (i == 1 ? "" : "s") + ")");
                }
                const uint8_t b = p[i];
                if (i == 4 && (b & 0x80))
                    return fail(label + ": malformed length prefix: varint longer than 5 bytes");
                if (i == 4 && b > 0x0F)
                    return fail(label + ": malformed length prefix: value exceeds 32 bits");
                length |= uint32_t(b & 0x7F) << (7 * i);
                if (!(b & 0x80)) {
                    prefixBytes = i + 1;
                    break;
                }
            }
            rec.length = length;
            const uint64_t payloadOffset = offset + prefixBytes;
            if (total && length > *total - payloadOffset) {
                return fail(label + " declares " + std::to_string(length) + " bytes but only "
                    + std::to_string(*total - payloadOffset) + " remain (file size " + std::to_string(*total)
                    + "): truncated or corrupt file");
            }
            if (length > static_cast<uint32_t>(INT_MAX))
                return fail(label + " declares " + std::to_string(length) + " bytes, more than protobuf's 2 GiB limit");
            src.consume(prefixBytes);
            if (!src.ensure(length)) {
                if (!src.ioError.empty())
                    return fail("read error in " + label + ": " + src.ioError);
                return fail(label + " declares " + std::to_string(length) + " bytes but only "
                    + std::to_string(src.available()) + " remain: truncated or corrupt input");
            }
            const uint8_t* payload = src.data();
            if (length == 0) {
                // An empty record decodes as an all-default message. An empty GlobalMetadata followed by an empty
                // node is what a file of zero bytes reads as: not a trace. Otherwise an empty record is no node
                // (ASTRA-sim would run an all-default one; Chakra's Python reader stops there): it is counted,
                // with the first offsets kept, and skipped, so memory never grows with the number of zeros.
                if (index == 1 && !status.framing.zeroLengthRecordOffsets.empty())
                    return fail("not a Chakra ET file: it begins with two zero-length records (a file of zero "
                                "bytes?)");
                ++status.framing.zeroLengthRecords;
                if (status.framing.zeroLengthRecordOffsets.size() < 16)
                    status.framing.zeroLengthRecordOffsets.push_back(offset);
                if (index > 0) {
                    src.consume(0);
                    offset = payloadOffset;
                    status.framing.records = index + 1;
                    continue;
                }
            }

            bool more = true;
            if (index == 0) {
                const WireScan scan = scanWire(payload, length, 1);
                if (scan.problem.empty() && scan.integerField1) {
                    return fail(label
                        + " is not a GlobalMetadata: it has an integer field 1, like a Node id "
                          "(the first record of a Chakra ET file must be the GlobalMetadata)");
                }
                if (!metadataMsg.ParseFromArray(payload, static_cast<int>(length))) {
                    return fail(label + " (" + std::to_string(length)
                        + " bytes) is not a valid GlobalMetadata message: "
                        + (scan.problem.empty() ? std::string("malformed attribute or invalid UTF-8 in a string")
                                                : scan.problem));
                }
                if (hasUnknownFields(metadataMsg))
                    ++status.framing.recordsWithUnknownFields;
                more = visitor.onMetadata(chakraproto::fromProto(metadataMsg), rec);
            } else {
                if (!nodeMsg.ParseFromArray(payload, static_cast<int>(length))) {
                    const WireScan scan = scanWire(payload, length, 2);
                    return fail(label + " (" + std::to_string(length) + " bytes) is not a valid Node message: "
                        + (scan.problem.empty()
                                ? std::string("malformed attribute, IOInfo or list, or invalid UTF-8 in a string")
                                : scan.problem));
                }
                if (hasUnknownFields(nodeMsg))
                    ++status.framing.recordsWithUnknownFields;
                more = visitor.onNode(chakraproto::fromProto(nodeMsg), rec);
            }
            src.consume(length);
            offset = payloadOffset + length;
            status.framing.records = index + 1;
            if (!more)
                break;
        }
        if (!total)
            status.framing.fileBytes = offset;
        return status;
    }

    class CollectingVisitor final : public ChakraTraceVisitor
    {
    public:
        bool onMetadata(ChakraMetadata&& metadata, const ChakraRecordInfo&) override
        {
            trace.metadata = std::move(metadata);
            return true;
        }
        bool onNode(ChakraNode&& node, const ChakraRecordInfo&) override
        {
            trace.nodes.push_back(std::move(node));
            return true;
        }
        ChakraTrace trace;
    };

    ChakraReadResult collect(const ChakraReadStatus& status, CollectingVisitor& visitor)
    {
        ChakraReadResult result;
        if (!status.ok()) {
            result.error = status.error;
            return result;
        }
        visitor.trace.framing = status.framing;
        result.trace = std::move(visitor.trace);
        return result;
    }
} // namespace

ChakraReadStatus visitChakraFile(const std::filesystem::path& path, ChakraTraceVisitor& visitor)
{
    const std::string name = path.string();
    // O_NONBLOCK: opening a FIFO without a writer must not wait forever; it is refused below like any file that
    // is not regular.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        ChakraReadStatus status;
        status.error = name + ": cannot open: " + std::strerror(errno);
        return status;
    }
    struct stat st
    {
    };
    std::optional<uint64_t> size;
    if (::fstat(fd, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            ::close(fd);
            ChakraReadStatus status;
            status.error = name + ": is a directory, not a Chakra ET file";
            return status;
        }
        if (!S_ISREG(st.st_mode)) {
            ::close(fd);
            ChakraReadStatus status;
            status.error = name
                + ": not a regular file (a pipe or device has no size to bound its records by, and /dev/zero never "
                  "ends); copy it into a file first";
            return status;
        }
        size = static_cast<uint64_t>(st.st_size);
        ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    }
    FdSource src(fd, size);
    return parseRecords(src, visitor, name);
}

ChakraReadStatus visitChakraBytes(std::string_view bytes, ChakraTraceVisitor& visitor, std::string_view sourceName)
{
    MemorySource src(bytes);
    return parseRecords(src, visitor, sourceName);
}

ChakraReadResult readChakraFile(const std::filesystem::path& path)
{
    CollectingVisitor visitor;
    const auto status = visitChakraFile(path, visitor);
    return collect(status, visitor);
}

ChakraReadResult readChakraBytes(std::string_view bytes, std::string_view sourceName)
{
    CollectingVisitor visitor;
    const auto status = visitChakraBytes(bytes, visitor, sourceName);
    return collect(status, visitor);
}

} // namespace stagecraft
