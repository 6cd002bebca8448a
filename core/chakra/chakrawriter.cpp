// SPDX-License-Identifier: MIT
#include "chakra/chakrawriter.h"

#include "chakra/chakrajson.h"
#include "chakra/chakraproto.h"
#include "output/outputfile.h"
#include "output/stagedfiles.h"

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

namespace stagecraft {

ChakraWriteError::ChakraWriteError(const std::string& message, std::filesystem::path path, int errorNumber)
    : std::runtime_error(message)
    , m_path(std::move(path))
    , m_errno(errorNumber)
{
}

namespace {
    std::string quoted(const std::filesystem::path& p)
    {
        return "'" + p.string() + "'";
    }

    [[noreturn]] void throwSystem(const std::string& what, const std::filesystem::path& finalPath, int err)
    {
        throw ChakraWriteError(what + ": " + std::strerror(err), finalPath, err);
    }

    std::atomic<unsigned> s_tempCounter { 0 };

    /// A file written under a temporary name next to its final path, renamed into place on commit().
    class AtomicFile
    {
    public:
        AtomicFile(std::filesystem::path finalPath, size_t bufferBytes, bool doFsync, StagedFiles* stage = nullptr)
            : m_final(std::move(finalPath))
            , m_bufferBytes(std::max<size_t>(bufferBytes, 4096))
            , m_fsync(doFsync)
            , m_stage(stage)
        {
            if (m_final.filename().empty())
                throw ChakraWriteError("output path " + quoted(m_final) + " names no file", m_final);
            if (m_stage) {
                try {
                    m_stageIndex = m_stage->create(m_final.filename().string());
                } catch (const OutputError& e) {
                    throw ChakraWriteError(e.what(), m_final, errno);
                }
                m_fd = m_stage->descriptor(m_stageIndex);
                m_tmp = m_final; // "being written"; the staged file has no name of its own
                m_buffer.reserve(m_bufferBytes + 4096);
                return;
            }
            const std::filesystem::path dir = m_final.parent_path();
            const std::string base = "." + m_final.filename().string() + ".tmp-" + std::to_string(::getpid()) + "-";
            for (int attempt = 0; attempt < 1000; ++attempt) {
                std::filesystem::path tmp = dir / (base + std::to_string(s_tempCounter++));
                const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
                if (fd >= 0) {
                    m_fd = fd;
                    m_tmp = std::move(tmp);
                    m_buffer.reserve(m_bufferBytes + 4096);
                    return;
                }
                if (errno != EEXIST) {
                    const int err = errno;
                    if (err == ENOENT && !dir.empty() && !std::filesystem::is_directory(dir)) {
                        throw ChakraWriteError(
                            "cannot write " + quoted(m_final) + ": directory " + quoted(dir) + " does not exist",
                            m_final, err);
                    }
                    throwSystem(
                        "cannot create temporary file " + quoted(tmp) + " for " + quoted(m_final), m_final, err);
                }
            }
            throw ChakraWriteError("cannot create a temporary file for " + quoted(m_final)
                    + ": too many stale temporary files in " + quoted(dir),
                m_final, EEXIST);
        }

        ~AtomicFile()
        {
            discard();
        }

        AtomicFile(const AtomicFile&) = delete;
        AtomicFile& operator=(const AtomicFile&) = delete;

        /// The buffer to append to; call maybeFlush() after appending.
        std::string& buffer()
        {
            return m_buffer;
        }

        void maybeFlush()
        {
            if (m_buffer.size() >= m_bufferBytes)
                flush();
        }

        void commit()
        {
            flush();
            if (m_fsync && ::fsync(m_fd) != 0)
                fail("cannot sync " + quoted(m_tmp));
            if (m_stage) {
                m_fd = -1;
                m_tmp.clear();
                try {
                    m_stage->finish(m_stageIndex);
                } catch (const OutputError& e) {
                    throw ChakraWriteError(e.what(), m_final, errno);
                }
                return;
            }
            const int fd = m_fd;
            m_fd = -1;
            if (::close(fd) != 0)
                fail("cannot close " + quoted(m_tmp));
            if (::rename(m_tmp.c_str(), m_final.c_str()) != 0)
                fail("cannot rename " + quoted(m_tmp) + " to " + quoted(m_final));
            m_tmp.clear();
            if (m_fsync) {
                const std::filesystem::path dir = m_final.parent_path().empty() ? "." : m_final.parent_path();
                const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (dfd >= 0) {
                    const int rc = ::fsync(dfd);
                    const int err = errno;
                    ::close(dfd);
                    if (rc != 0)
                        throwSystem("cannot sync directory " + quoted(dir), m_final, err);
                }
            }
        }

        /// Closes and removes the temporary file (no-op after commit).
        void discard() noexcept
        {
            if (m_stage) {
                if (!m_tmp.empty())
                    m_stage->discard(m_stageIndex);
                m_fd = -1;
                m_tmp.clear();
                return;
            }
            if (m_fd >= 0) {
                ::close(m_fd);
                m_fd = -1;
            }
            if (!m_tmp.empty()) {
                ::unlink(m_tmp.c_str());
                m_tmp.clear();
            }
        }

        const std::filesystem::path& finalPath() const
        {
            return m_final;
        }
        const std::filesystem::path& temporaryPath() const
        {
            return m_tmp;
        }

    private:
        void flush()
        {
            const char* p = m_buffer.data();
            size_t left = m_buffer.size();
            while (left > 0) {
                const ssize_t n = ::write(m_fd, p, left);
                if (n < 0) {
                    if (errno == EINTR)
                        continue;
                    fail("cannot write " + quoted(m_tmp));
                }
                if (n == 0) {
                    errno = EIO;
                    fail("cannot write " + quoted(m_tmp));
                }
                p += n;
                left -= static_cast<size_t>(n);
            }
            m_buffer.clear();
        }

        [[noreturn]] void fail(const std::string& what)
        {
            const int err = errno;
            discard();
            throwSystem(what + " (writing " + quoted(m_final) + ")", m_final, err);
        }

        std::filesystem::path m_final;
        std::filesystem::path m_tmp;
        size_t m_bufferBytes;
        bool m_fsync;
        StagedFiles* m_stage = nullptr;
        size_t m_stageIndex = 0;
        int m_fd = -1;
        std::string m_buffer;
    };

    void appendVarint32(std::string& out, uint32_t v)
    {
        while (v >= 0x80) {
            out.push_back(static_cast<char>((v & 0x7F) | 0x80));
            v >>= 7;
        }
        out.push_back(static_cast<char>(v));
    }

    /// Appends one varint32-delimited record, as SerializeDelimitedToOstream does.
    void appendRecord(
        std::string& out, const google::protobuf::Message& msg, const char* what, const std::filesystem::path& path)
    {
        const size_t size = msg.ByteSizeLong();
        if (size == 0) {
            throw ChakraWriteError(std::string("refusing to write a zero-length ") + what
                    + " record (an all-default message; Chakra's Python reader would stop reading there)",
                path);
        }
        if (size > static_cast<size_t>(INT_MAX))
            throw ChakraWriteError(std::string(what) + " record larger than 2 GiB", path);
        appendVarint32(out, static_cast<uint32_t>(size));
        const size_t at = out.size();
        out.resize(at + size);
        msg.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(out.data() + at));
    }

    /// Encodes model objects into protobuf records, reusing the message objects between calls.
    struct ProtoEncoder
    {
        ChakraProtoMsg::GlobalMetadata metadata;
        ChakraProtoMsg::Node node;

        void appendMetadata(std::string& out, const ChakraMetadata& m, const std::filesystem::path& path)
        {
            if (auto err = chakraproto::toProto(m, &metadata); !err.empty())
                throw ChakraWriteError(err, path);
            appendRecord(out, metadata, "GlobalMetadata", path);
        }

        void appendNode(std::string& out, const ChakraNode& n, const std::filesystem::path& path)
        {
            if (auto err = chakraproto::toProto(n, &node); !err.empty())
                throw ChakraWriteError(err, path);
            appendRecord(out, node, "Node", path);
        }
    };
} // namespace

struct ChakraFileWriter::Impl
{
    Impl(std::filesystem::path path, const ChakraWriteOptions& options)
        : format(options.format)
        , file(std::move(path), options.bufferBytes, options.fsync, options.stage)
    {
    }

    void ensureOpen(const char* call) const
    {
        if (finished) {
            throw ChakraWriteError(std::string("ChakraFileWriter::") + call + " after commit() or a failed write of "
                    + quoted(file.finalPath()),
                file.finalPath());
        }
    }

    /// Runs `f`; on any exception the temporary file is removed and the writer becomes unusable.
    template <typename F> void guarded(F&& f)
    {
        try {
            f();
        } catch (...) {
            finished = true;
            file.discard();
            throw;
        }
    }

    ChakraFileFormat format;
    AtomicFile file;
    ProtoEncoder encoder;
    bool metadataWritten = false;
    bool finished = false;
    uint64_t bytes = 0;
    uint64_t nodes = 0;
};

ChakraFileWriter::ChakraFileWriter(std::filesystem::path finalPath, ChakraWriteOptions options)
    : m_impl(std::make_unique<Impl>(std::move(finalPath), options))
{
}

ChakraFileWriter::~ChakraFileWriter() = default;
ChakraFileWriter::ChakraFileWriter(ChakraFileWriter&&) noexcept = default;
ChakraFileWriter& ChakraFileWriter::operator=(ChakraFileWriter&&) noexcept = default;

void ChakraFileWriter::writeMetadata(const ChakraMetadata& metadata)
{
    m_impl->ensureOpen("writeMetadata()");
    Impl& d = *m_impl;
    d.guarded([&] {
        if (d.metadataWritten)
            throw ChakraWriteError("GlobalMetadata written twice to " + quoted(d.file.finalPath()), d.file.finalPath());
        std::string& buf = d.file.buffer();
        const size_t before = buf.size();
        if (d.format == ChakraFileFormat::Protobuf) {
            d.encoder.appendMetadata(buf, metadata, d.file.finalPath());
        } else {
            buf += "{\"metadata\": ";
            buf +=
                chakraMetadataToJson(metadata).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
            buf += ",\n\"nodes\": [";
        }
        d.bytes += buf.size() - before;
        d.metadataWritten = true;
        d.file.maybeFlush();
    });
}

void ChakraFileWriter::writeNode(const ChakraNode& node)
{
    m_impl->ensureOpen("writeNode()");
    Impl& d = *m_impl;
    d.guarded([&] {
        if (!d.metadataWritten) {
            throw ChakraWriteError("node " + std::to_string(node.id) + " written before the GlobalMetadata of "
                    + quoted(d.file.finalPath()) + " (the metadata must be the first record)",
                d.file.finalPath());
        }
        std::string& buf = d.file.buffer();
        const size_t before = buf.size();
        if (d.format == ChakraFileFormat::Protobuf) {
            d.encoder.appendNode(buf, node, d.file.finalPath());
        } else {
            buf += d.nodes == 0 ? "\n" : ",\n";
            buf += chakraNodeToJson(node).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
        }
        d.bytes += buf.size() - before;
        ++d.nodes;
        d.file.maybeFlush();
    });
}

void ChakraFileWriter::writeEncodedNodes(std::string_view records, uint64_t nodeCount)
{
    m_impl->ensureOpen("writeEncodedNodes()");
    Impl& d = *m_impl;
    d.guarded([&] {
        if (!d.metadataWritten || d.format != ChakraFileFormat::Protobuf) {
            throw ChakraWriteError("writeEncodedNodes() needs the protobuf format and a GlobalMetadata first ("
                    + quoted(d.file.finalPath()) + ")",
                d.file.finalPath());
        }
        d.file.buffer().append(records);
        d.bytes += records.size();
        d.nodes += nodeCount;
        d.file.maybeFlush();
    });
}

std::string encodeChakraNodeRecord(const ChakraNode& node)
{
    thread_local ProtoEncoder encoder;
    std::string out;
    encoder.appendNode(out, node, {});
    return out;
}

void ChakraFileWriter::commit()
{
    m_impl->ensureOpen("commit()");
    Impl& d = *m_impl;
    d.guarded([&] {
        if (!d.metadataWritten) {
            throw ChakraWriteError(
                "commit() without a GlobalMetadata for " + quoted(d.file.finalPath()), d.file.finalPath());
        }
        if (d.format == ChakraFileFormat::Json) {
            const std::string tail = d.nodes == 0 ? "]}\n" : "\n]}\n";
            d.file.buffer() += tail;
            d.bytes += tail.size();
        }
        d.file.commit();
        d.finished = true;
    });
}

const std::filesystem::path& ChakraFileWriter::finalPath() const
{
    return m_impl->file.finalPath();
}

std::filesystem::path ChakraFileWriter::temporaryPath() const
{
    return m_impl->file.temporaryPath();
}

uint64_t ChakraFileWriter::bytesWritten() const
{
    return m_impl->bytes;
}

uint64_t ChakraFileWriter::nodesWritten() const
{
    return m_impl->nodes;
}

void writeChakraTrace(const std::filesystem::path& path, const ChakraTrace& trace, ChakraWriteOptions options)
{
    ChakraFileWriter writer(path, options);
    writer.writeMetadata(trace.metadata);
    for (const auto& node : trace.nodes)
        writer.writeNode(node);
    writer.commit();
}

std::string serializeChakraTrace(const ChakraTrace& trace)
{
    std::string out;
    ProtoEncoder encoder;
    encoder.appendMetadata(out, trace.metadata, {});
    for (const auto& node : trace.nodes)
        encoder.appendNode(out, node, {});
    return out;
}

std::string commGroupsText(const std::map<int, std::vector<int>>& groups)
{
    std::string text = "{";
    bool first = true;
    for (const auto& [id, ranks] : groups) {
        text += first ? "\n  \"" : ",\n  \"";
        first = false;
        text += std::to_string(id);
        text += "\": [";
        for (size_t i = 0; i < ranks.size(); ++i) {
            if (i > 0)
                text += ", ";
            text += std::to_string(ranks[i]);
        }
        text += "]";
    }
    text += groups.empty() ? "}\n" : "\n}\n";
    return text;
}

void writeCommGroups(
    const std::filesystem::path& path, const std::map<int, std::vector<int>>& groups, ChakraWriteOptions options)
{
    for (const auto& [id, ranks] : groups) {
        if (id <= 0) {
            throw ChakraWriteError("communicator group id " + std::to_string(id) + " for " + quoted(path)
                    + " must be > 0 (0 is the world group)",
                path);
        }
        for (int r : ranks) {
            if (r < 0) {
                throw ChakraWriteError("communicator group " + std::to_string(id) + " for " + quoted(path)
                        + " lists negative rank " + std::to_string(r),
                    path);
            }
        }
    }
    AtomicFile file(path, options.bufferBytes, options.fsync, options.stage);
    file.buffer() += commGroupsText(groups);
    file.commit();
}

ChakraAttribute chakraNumOps(int64_t flops)
{
    return ChakraAttribute::ofInt64("num_ops", flops);
}

ChakraAttribute chakraTensorSize(uint64_t bytes)
{
    return ChakraAttribute::ofUint64("tensor_size", bytes);
}

ChakraAttribute chakraOpType(std::string opType)
{
    return ChakraAttribute::ofString("op_type", std::move(opType));
}

ChakraAttribute chakraIsCpuOp(bool isCpu)
{
    return ChakraAttribute::ofBool("is_cpu_op", isCpu);
}

ChakraAttribute chakraCommType(ChakraCollective type)
{
    return ChakraAttribute::ofInt64("comm_type", static_cast<int64_t>(type));
}

ChakraAttribute chakraCommSize(int64_t bytes)
{
    return ChakraAttribute::ofInt64("comm_size", bytes);
}

ChakraAttribute chakraPgName(int groupId)
{
    return ChakraAttribute::ofString("pg_name", std::to_string(groupId));
}

ChakraAttribute chakraCommSrc(int32_t rank)
{
    return ChakraAttribute::ofInt32("comm_src", rank);
}

ChakraAttribute chakraCommDst(int32_t rank)
{
    return ChakraAttribute::ofInt32("comm_dst", rank);
}

ChakraAttribute chakraCommTag(int32_t tag)
{
    return ChakraAttribute::ofInt32("comm_tag", tag);
}

ChakraAttribute chakraInvolvedDim(std::vector<bool> dims)
{
    return ChakraAttribute::ofBoolList("involved_dim", std::move(dims));
}

namespace {
    ChakraAttribute tensorList(const char* name, const std::vector<ChakraTensorRef>& tensors)
    {
        std::vector<std::string> values;
        values.reserve(tensors.size() * 2);
        for (const auto& t : tensors) {
            values.push_back(t.name);
            values.push_back(std::to_string(t.bytes));
        }
        return ChakraAttribute::ofStringList(name, std::move(values));
    }
} // namespace

ChakraAttribute chakraInputs(const std::vector<ChakraTensorRef>& tensors)
{
    return tensorList("inputs", tensors);
}

ChakraAttribute chakraOutputs(const std::vector<ChakraTensorRef>& tensors)
{
    return tensorList("outputs", tensors);
}

} // namespace stagecraft
