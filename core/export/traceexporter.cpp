// SPDX-License-Identifier: MIT
#include "export/traceexporter.h"

#include "config/configwriter.h"
#include "export/exportownership.h"
#include "output/directorylock.h"
#include "output/outputfile.h"
#include "output/stagedfiles.h"
#include "version.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <unistd.h>
#include <unordered_map>

namespace stagecraft {

namespace {

    ChakraCollective chakraCollective(CollectiveType t)
    {
        switch (t) {
        case CollectiveType::AllReduce:
            return ChakraCollective::AllReduce;
        case CollectiveType::AllGather:
            return ChakraCollective::AllGather;
        case CollectiveType::ReduceScatter:
            return ChakraCollective::ReduceScatter;
        case CollectiveType::AllToAll:
            return ChakraCollective::AllToAll;
        }
        return ChakraCollective::AllReduce;
    }

    std::string opTypeOf(const SynthesisResult& r, const ProgramNode& n)
    {
        if (n.op >= 0)
            return toString(r.graph->ops[static_cast<size_t>(n.op)].kind);
        return n.pass == Pass::Optimizer ? "optimizer" : "compute";
    }

} // namespace

int64_t traceNumOps(const SynthesisResult& result, const ClassProgram& program, const ProgramNode& n)
{
    if (n.flops > 0)
        return n.flops;
    // A memory-bound op (gather, dispatch, combine, copy, cast) does one element operation per element it writes.
    int64_t elements = 0;
    for (int32_t b : n.writes) {
        const Buffer& buf = program.buffers[static_cast<size_t>(b)];
        int width = 1;
        if (buf.tensor >= 0)
            width = result.plan ? result.plan->elementBytes(TensorId { buf.tensor })
                                : dtypeBytes(result.graph->tensor(TensorId { buf.tensor }).dtype);
        elements += buf.bytes / std::max(1, width);
    }
    return std::max<int64_t>(1, elements);
}

uint64_t traceTensorSize(const ProgramNode& n)
{
    return static_cast<uint64_t>(std::max<int64_t>(1, n.bytes));
}

std::string checkExportName(const std::string& name)
{
    if (name.empty())
        return "the name is empty";
    if (name.find('/') != std::string::npos || name.find('\\') != std::string::npos)
        return "the name '" + name + "' contains a path separator";
    if (name.find("..") != std::string::npos)
        return "the name '" + name + "' contains '..'";
    for (unsigned char c : name)
        if (c < 0x20 || c == 0x7f)
            return "the name contains a control character";
    return {};
}

ChakraMetadata traceMetadata()
{
    ChakraMetadata m;
    m.version = "0.0.4";
    m.attrs.push_back(ChakraAttribute::ofString("schema", kStagecraftSchemaPrefix + std::string(versionString())));
    m.attrs.push_back(ChakraAttribute::ofString("units", "num_ops: FLOPs; tensor_size, comm_size: bytes"));
    return m;
}

ChakraMetadata traceMetadata(const SynthesisResult& result, int32_t cls)
{
    ChakraMetadata m = traceMetadata();
    // The memory peak our report states for the ranks of this class, so that `inspect` can hold an
    // as-soon-as-ready replay of the file's tensor lists against it.
    m.attrs.push_back(
        ChakraAttribute::ofInt64("peak_memory_bytes", result.summaries[static_cast<size_t>(cls)].peakBytes));
    return m;
}

std::vector<ChakraNode> rankTraceNodes(const SynthesisResult& result, RankId rank, const ExportOptions& options)
{
    const ClassProgram& program = result.classes[static_cast<size_t>(result.classOf(rank))];
    std::vector<ChakraNode> out;
    out.reserve(program.nodes.size());
    // For the tensor lists: a buffer is an output of its first writer only (ASTRA-sim aborts on a second write
    // of a name); later writers (gradient accumulation) list it as an input they update.
    std::vector<bool> written;
    if (options.tensorLists)
        written.assign(program.buffers.size(), false);
    const int32_t self = static_cast<int32_t>(rank.value);
    for (size_t i = 0; i < program.nodes.size(); ++i) {
        const ProgramNode& n = program.nodes[i];
        ChakraNode c;
        c.id = i;
        c.name = n.name;
        for (NodeId d : n.dataDeps)
            c.dataDeps.push_back(d.value);
        for (NodeId d : n.ctrlDeps)
            (options.ctrlDepsAsData ? c.dataDeps : c.ctrlDeps).push_back(d.value);
        if (options.ctrlDepsAsData) {
            std::sort(c.dataDeps.begin(), c.dataDeps.end());
            c.dataDeps.erase(std::unique(c.dataDeps.begin(), c.dataDeps.end()), c.dataDeps.end());
        }
        switch (n.kind) {
        case NodeKind::Compute:
            c.type = ChakraNodeType::Comp;
            c.attrs.push_back(chakraNumOps(traceNumOps(result, program, n)));
            c.attrs.push_back(chakraTensorSize(traceTensorSize(n)));
            c.attrs.push_back(chakraOpType(opTypeOf(result, n)));
            c.attrs.push_back(chakraIsCpuOp(false));
            break;
        case NodeKind::Collective:
            c.type = ChakraNodeType::CommColl;
            c.attrs.push_back(chakraCommType(chakraCollective(n.collective)));
            c.attrs.push_back(chakraCommSize(n.bytes));
            c.attrs.push_back(chakraPgName(static_cast<int>(result.groupIdOf(n, rank))));
            c.attrs.push_back(chakraIsCpuOp(false));
            break;
        case NodeKind::Send:
            c.type = ChakraNodeType::CommSend;
            c.attrs.push_back(chakraCommSrc(self));
            c.attrs.push_back(chakraCommDst(static_cast<int32_t>(result.peerOf(n, rank).value)));
            c.attrs.push_back(chakraCommTag(n.tag));
            c.attrs.push_back(chakraCommSize(n.bytes));
            c.attrs.push_back(chakraIsCpuOp(false));
            break;
        case NodeKind::Recv:
            c.type = ChakraNodeType::CommRecv;
            c.attrs.push_back(chakraCommSrc(static_cast<int32_t>(result.peerOf(n, rank).value)));
            c.attrs.push_back(chakraCommDst(self));
            c.attrs.push_back(chakraCommTag(n.tag));
            c.attrs.push_back(chakraCommSize(n.bytes));
            c.attrs.push_back(chakraIsCpuOp(false));
            break;
        }
        if (options.tensorLists) {
            std::vector<ChakraTensorRef> ins, outs;
            for (int32_t b : n.reads)
                ins.push_back(
                    { "b" + std::to_string(b), static_cast<uint64_t>(program.buffers[static_cast<size_t>(b)].bytes) });
            for (int32_t b : n.writes) {
                ChakraTensorRef ref { "b" + std::to_string(b),
                    static_cast<uint64_t>(program.buffers[static_cast<size_t>(b)].bytes) };
                if (written[static_cast<size_t>(b)] || program.buffers[static_cast<size_t>(b)].resident) {
                    if (std::none_of(
                            ins.begin(), ins.end(), [&](const ChakraTensorRef& t) { return t.name == ref.name; }))
                        ins.push_back(std::move(ref));
                } else {
                    written[static_cast<size_t>(b)] = true;
                    outs.push_back(std::move(ref));
                }
            }
            c.attrs.push_back(chakraInputs(ins));
            c.attrs.push_back(chakraOutputs(outs));
        }
        out.push_back(std::move(c));
    }
    return out;
}

std::map<int, std::vector<int>> communicatorGroups(const SynthesisResult& result)
{
    std::map<int, std::vector<int>> groups;
    result.groups.forEachGroup([&](int64_t id, AxisMask mask, int64_t index) {
        std::vector<int>& members = groups[static_cast<int>(id)];
        for (int64_t r : result.mesh().groupMembers(mask, index))
            members.push_back(static_cast<int>(r));
    });
    return groups;
}

namespace {

    /// The attributes that differ between the ranks of a class.
    enum class Slot : uint8_t
    {
        PgName,
        CommSrc,
        CommDst
    };

    Slot slotOf(const std::string& attrName, bool& varies)
    {
        varies = true;
        if (attrName == "pg_name")
            return Slot::PgName;
        if (attrName == "comm_src")
            return Slot::CommSrc;
        if (attrName == "comm_dst")
            return Slot::CommDst;
        varies = false;
        return Slot::PgName;
    }

    /// `record` without its varint32 length prefix.
    std::string_view messageOf(const std::string& record)
    {
        size_t i = 0;
        while (i < record.size() && (static_cast<unsigned char>(record[i]) & 0x80))
            ++i;
        return std::string_view(record).substr(i + 1);
    }

    /// The wire bytes of one `attr` entry of a Node (field 10: tag, length, AttributeProto). A Node message is the
    /// concatenation of its fields in field-number order and `attr` is its last field, so a node's bytes are its
    /// attribute-less encoding followed by its attribute entries, each encodable alone (proto3 omits the
    /// default-valued id, name and type of the carrier node).
    std::string attrEntry(ChakraAttribute attr)
    {
        ChakraNode carrier;
        carrier.attrs.push_back(std::move(attr));
        return std::string(messageOf(encodeChakraNodeRecord(carrier)));
    }

    /// A communication node encoded once for its class: the bytes before the first rank-dependent attribute, then
    /// per such attribute its slot and the constant bytes after it. Per rank only the slots' entries are looked
    /// up and the record is concatenated, with no protobuf work.
    struct PatchedNode
    {
        std::string head;
        struct Part
        {
            Slot slot;
            std::string after;
        };
        std::vector<Part> parts;
        size_t constantBytes = 0;
    };

    /// A class's node list serialized once: runs of rank-independent records, each followed by at most one
    /// communication node completed per rank.
    struct ClassTemplate
    {
        std::string records;
        std::vector<PatchedNode> patched;
        struct Segment
        {
            size_t offset = 0;
            size_t size = 0;
            uint64_t count = 0;
            int64_t node = -1; ///< program node completed after the run, -1 for none
            int64_t patched = -1; ///< its index in `patched`
        };
        std::vector<Segment> segments;
    };

    PatchedNode patchNode(const ChakraNode& n)
    {
        PatchedNode p;
        ChakraNode bare = n;
        bare.attrs.clear();
        p.head = std::string(messageOf(encodeChakraNodeRecord(bare)));
        std::string* tail = &p.head;
        for (const ChakraAttribute& a : n.attrs) {
            bool varies = false;
            const Slot slot = slotOf(a.name, varies);
            if (varies) {
                p.parts.push_back({ slot, {} });
                tail = &p.parts.back().after;
            } else {
                *tail += attrEntry(a);
            }
        }
        p.constantBytes = p.head.size();
        for (const PatchedNode::Part& part : p.parts)
            p.constantBytes += part.after.size();
        return p;
    }

    ClassTemplate buildClassTemplate(const SynthesisResult& result, RankId example, const ExportOptions& options)
    {
        ClassTemplate t;
        const std::vector<ChakraNode> nodes = rankTraceNodes(result, example, options);
        ClassTemplate::Segment current;
        for (size_t i = 0; i < nodes.size(); ++i) {
            const ChakraNode& n = nodes[i];
            if (n.type == ChakraNodeType::CommColl || n.type == ChakraNodeType::CommSend
                || n.type == ChakraNodeType::CommRecv) {
                current.node = static_cast<int64_t>(i);
                current.patched = static_cast<int64_t>(t.patched.size());
                t.patched.push_back(patchNode(n));
                t.segments.push_back(current);
                current = ClassTemplate::Segment { t.records.size(), 0, 0, -1, -1 };
                continue;
            }
            const std::string record = encodeChakraNodeRecord(n);
            t.records += record;
            current.size += record.size();
            ++current.count;
        }
        if (current.count > 0)
            t.segments.push_back(current);
        return t;
    }

    /// Encoded attribute entries by (slot, value), kept by one export thread across ranks and classes.
    class EntryCache
    {
    public:
        const std::string& entry(Slot slot, int64_t value)
        {
            const uint64_t key = (static_cast<uint64_t>(slot) << 56) ^ static_cast<uint64_t>(value);
            auto it = m_entries.find(key);
            if (it != m_entries.end())
                return it->second;
            ChakraAttribute attr = slot == Slot::PgName ? chakraPgName(static_cast<int>(value))
                : slot == Slot::CommSrc                 ? chakraCommSrc(static_cast<int32_t>(value))
                                                        : chakraCommDst(static_cast<int32_t>(value));
            return m_entries.emplace(key, attrEntry(std::move(attr))).first->second;
        }

    private:
        std::unordered_map<uint64_t, std::string> m_entries;
    };

    void appendVarint32(std::string& out, uint32_t v)
    {
        while (v >= 0x80) {
            out.push_back(static_cast<char>((v & 0x7F) | 0x80));
            v >>= 7;
        }
        out.push_back(static_cast<char>(v));
    }

    void writeFromTemplate(ChakraFileWriter& writer, const ClassTemplate& t, const SynthesisResult& result, RankId rank,
        EntryCache& cache, std::string& scratch)
    {
        const ClassProgram& program = result.classes[static_cast<size_t>(result.classOf(rank))];
        const int64_t self = rank.value;
        const std::string* entries[3] = {};
        for (const ClassTemplate::Segment& s : t.segments) {
            if (s.count > 0)
                writer.writeEncodedNodes(std::string_view(t.records).substr(s.offset, s.size), s.count);
            if (s.patched < 0)
                continue;
            const PatchedNode& pn = t.patched[static_cast<size_t>(s.patched)];
            const ProgramNode& p = program.nodes[static_cast<size_t>(s.node)];
            if (p.kind == NodeKind::Collective) {
                entries[static_cast<int>(Slot::PgName)] = &cache.entry(Slot::PgName, result.groupIdOf(p, rank));
            } else {
                const int64_t peer = result.peerOf(p, rank).value;
                entries[static_cast<int>(Slot::CommSrc)] =
                    &cache.entry(Slot::CommSrc, p.kind == NodeKind::Send ? self : peer);
                entries[static_cast<int>(Slot::CommDst)] =
                    &cache.entry(Slot::CommDst, p.kind == NodeKind::Send ? peer : self);
            }
            size_t size = pn.constantBytes;
            for (const PatchedNode::Part& part : pn.parts)
                size += entries[static_cast<int>(part.slot)]->size();
            scratch.clear();
            appendVarint32(scratch, static_cast<uint32_t>(size));
            scratch += pn.head;
            for (const PatchedNode::Part& part : pn.parts) {
                scratch += *entries[static_cast<int>(part.slot)];
                scratch += part.after;
            }
            writer.writeEncodedNodes(scratch, 1);
        }
    }

} // namespace

ExportSummary exportTrace(const SynthesisResult& result, const ExportOptions& options, ProgressSink* progress)
{
    if (result.compression) {
        // The programs hold only some micro-batches: a trace needs every node, so synthesize the plan in full
        // (which also applies the program-size limit to the full plan).
        SynthesisOptions full;
        full.memorySeries = false;
        const SynthesisOutcome outcome = synthesize(result.config, progress, result.graph, full);
        if (outcome.cancelled || (progress && progress->cancelled())) {
            ExportSummary cancelled;
            cancelled.cancelled = true;
            return cancelled;
        }
        if (!outcome.result) {
            std::string why;
            for (const Diagnostic& d : outcome.diagnostics)
                if (d.severity == Severity::Error)
                    why += (why.empty() ? "" : "; ") + d.message;
            throw ExportError("cannot synthesize every micro-batch for the export: " + why);
        }
        return exportTrace(*outcome.result, options, progress);
    }
    const auto start = std::chrono::steady_clock::now();
    if (std::string why = checkExportName(options.name); !why.empty())
        throw ExportError("invalid output name: " + why);
    const int64_t world = result.worldSize();
    const int64_t first = options.firstRank;
    const int64_t end = options.endRank < 0 ? world : options.endRank;
    if (first < 0 || first >= end || end > world)
        throw ExportError("rank range " + std::to_string(first) + ":" + std::to_string(end)
            + " is not within 0:" + std::to_string(world));
    namespace fs = std::filesystem;
    const fs::path dir = options.directory;
    std::error_code ec;
    if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
        throw ExportError("output path '" + dir.string() + "' exists and is not a directory");
    if (!fs::exists(dir, ec)) {
        fs::create_directories(dir, ec);
        if (ec)
            throw ExportError("cannot create output directory '" + dir.string() + "': " + ec.message());
    }
    const std::string extension = !options.rankExtension.empty() ? options.rankExtension
        : options.format == ChakraFileFormat::Json               ? ".json"
                                                                 : ".et";
    auto rankPath = [&](int64_t r) { return dir / (options.name + "." + std::to_string(r) + extension); };
    const fs::path groupsPath = dir / (options.name + ".json");
    const fs::path configPath = dir / (options.name + ".yaml"); // the resolved config, written with the groups
    // Every file we write goes through a temporary name ".<final>.tmp-<pid>-<n>" in the same folder, which must
    // fit a file name too.
    constexpr size_t kNameMax = 255, kTempOverhead = 1 + 5 + 10 + 1 + 20;
    const size_t longest =
        std::max(rankPath(world - 1).filename().string().size(), groupsPath.filename().string().size());
    if (longest + kTempOverhead > kNameMax)
        throw ExportError("the name '" + options.name.substr(0, 40)
            + "...' is too long: rank file names and their "
              "temporary names must fit "
            + std::to_string(kNameMax) + " bytes, so the name may have at most "
            + std::to_string(options.name.size() - (longest + kTempOverhead - kNameMax)) + " characters here");
    // The rank of a file name `<name>.<rank><extension>` of this export, or -1 (not ours, or out of range).
    auto rankOf = [&](const std::string& file, const std::string& suffix) -> int64_t {
        const std::string head = options.name + ".";
        if (file.size() <= head.size() + suffix.size() || file.compare(0, head.size(), head) != 0
            || file.compare(file.size() - suffix.size(), suffix.size(), suffix) != 0)
            return -1;
        const char* b = file.data() + head.size();
        const char* e = file.data() + file.size() - suffix.size();
        int64_t r = -1;
        const auto [ptr, err] = std::from_chars(b, e, r);
        if (err != std::errc() || ptr != e || (*b == '0' && e - b > 1))
            return -1; // not a decimal rank as we write it (overflowing digits, leading zeros, signs)
        return r;
    };
    // One export at a time in a folder: between the check for an earlier export below and the last rename, no
    // other Stagecraft process changes it. A whole set locks exclusively; --ranks parts of a job array share.
    const bool wholeSet = first == 0 && end == world;
    // A folder we cannot read cannot be locked or listed: earlier files of the export could not be found.
    if (const int probe = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); probe < 0)
        throw ExportError("cannot list the output directory '" + dir.string() + "' (" + std::strerror(errno)
            + "), so earlier files of the export '" + options.name + "' cannot be found; choose another --out");
    else
        ::close(probe);
    std::optional<DirectoryLock> lock;
    try {
        bool toldWaiting = false;
        lock.emplace(dir, wholeSet, [&] {
            if (progress && !toldWaiting)
                progress->report(0, ("waiting for another export into '" + dir.string() + "' to finish").c_str());
            toldWaiting = true;
            return !(progress && progress->cancelled());
        });
    } catch (const OutputError& e) {
        throw ExportError(e.what());
    }
    if (!lock->locked()) {
        ExportSummary cancelled;
        cancelled.cancelled = true;
        return cancelled;
    }
    std::vector<fs::directory_entry> entries;
    {
        fs::directory_iterator it(dir, ec);
        for (; !ec && it != fs::directory_iterator(); it.increment(ec))
            entries.push_back(*it);
        // Without a listing we cannot tell which files an earlier export left: never guess.
        if (ec)
            throw ExportError("cannot list the output directory '" + dir.string() + "' (" + ec.message()
                + "), so earlier files of the export '" + options.name + "' cannot be found; choose another --out");
    }
    // Files this export would write that already exist (a previous export of this name): refuse without
    // --force. Rank files of other ranges (another job of a --ranks array) are not conflicts. With --force and
    // the whole range, stale rank files beyond this world size are removed once the new set is in place; a file
    // counts as one of ours only if it has our extension and, for a stale one, was written by Stagecraft (a
    // `<name>.1.json` may be the group file of another export named `<name>.1`).
    std::vector<fs::path> conflicts, stale;
    for (const fs::directory_entry& e : entries) {
        const std::string file = e.path().filename().string();
        const bool groups = file == groupsPath.filename().string() || file == configPath.filename().string();
        const int64_t r = groups ? -1 : rankOf(file, extension);
        const bool writes = (groups && first == 0) || (r >= first && r < end);
        if (writes) {
            // Never replace a symlink, a device or a folder by a file.
            if (e.is_symlink(ec) || !e.is_regular_file(ec))
                throw ExportError("'" + e.path().string()
                    + "' is not a regular file (a symlink, device or folder); "
                      "it is never replaced: remove it or choose another --out or --name");
            // Names of two sets may meet: with JSON rank files, rank 0 of the set "a" is "a.0.json", the group
            // file of a set "a.0". Neither set's file is ever taken for the other's, --force or not.
            if (e.path() == groupsPath && whyNotStagecraftRankFile(e.path()).empty())
                throw ExportError("'" + e.path().string() + "' is a rank file of another export in this folder, not "
                    + "the group file of '" + options.name + "': choose another --name");
            if (!groups && extension == ".json" && whyNotStagecraftGroupsFile(e.path()).empty())
                throw ExportError("'" + e.path().string() + "' is the group file of the export '"
                    + file.substr(0, file.size() - extension.size()) + "' in this folder, not a rank file of '"
                    + options.name + "': choose another --name");
            conflicts.push_back(e.path());
        } else if (r >= world && !e.is_symlink(ec) && e.is_regular_file(ec)
            && whyNotStagecraftRankFile(e.path()).empty()) {
            stale.push_back(e.path());
        }
    }
    std::sort(conflicts.begin(), conflicts.end());
    // replaceOwn: conflicts that this export overwrites and that an earlier Stagecraft export wrote are
    // replaced; a file anyone else wrote is named and left alone.
    const bool replaceOwn = options.replaceOwn && !options.force;
    if (replaceOwn)
        for (const fs::path& p : conflicts)
            if (std::string why = p == groupsPath ? whyNotStagecraftGroupsFile(p)
                    : p == configPath             ? whyNotStagecraftConfigFile(p)
                                                  : whyNotStagecraftRankFile(p);
                !why.empty())
                throw ExportError("'" + p.string() + "' was not written by Stagecraft (" + why
                    + "); it is left alone: use --force to replace it or choose another output directory or name");
    if (!conflicts.empty() && !options.force && !replaceOwn)
        throw ExportError("'" + dir.string() + "' already holds " + std::to_string(conflicts.size())
            + " file(s) of an export named '" + options.name + "' (e.g. " + conflicts.front().filename().string()
            + "); use --force to replace them or choose another --out or --name");
    // Temporary files left by an earlier export of this name that was killed mid-write are ours to remove, but only
    // while no other export can be writing them: under the exclusive lock of a whole set.
    if (wholeSet) {
        const std::string tempMark = ".tmp-";
        for (const fs::directory_entry& e : entries) {
            const std::string file = e.path().filename().string();
            const size_t mark = file.rfind(tempMark);
            if (file.empty() || file[0] != '.' || mark == std::string::npos || !e.is_regular_file(ec))
                continue;
            const std::string final = file.substr(1, mark - 1);
            if (rankOf(final, extension) >= 0 || final == groupsPath.filename().string()
                || final == configPath.filename().string())
                fs::remove(e.path(), ec);
        }
    }

    // The new set is written beside the old one without names (StagedFiles) and named only when complete: a full
    // disk, a cancel or a kill leaves the old set as it was.
    std::optional<StagedFiles> stage;
    try {
        stage.emplace(dir);
    } catch (const OutputError& e) {
        throw ExportError(e.what());
    }
    ExportSummary summary;
    ChakraWriteOptions writeOptions;
    writeOptions.format = options.format;
    writeOptions.fsync = options.fsync;
    writeOptions.stage = &*stage;
    std::atomic<uint64_t> bytes { 0 }, nodes { 0 };
    std::atomic<int64_t> done { 0 };
    std::atomic<bool> stop { false };
    std::mutex errorMutex, progressMutex;
    std::exception_ptr error;
    const int threads = std::max(1, std::min<int>(options.threads, static_cast<int>(end - first)));

    // One class at a time: its nodes are serialized once; per rank only the communication nodes (group ids,
    // peers) are re-encoded. Memory is one class's bytes plus the writers' buffers, whatever the rank count.
    for (int32_t cls = 0; cls < static_cast<int32_t>(result.classes.size()) && !stop; ++cls) {
        std::vector<int64_t> ranks;
        for (int64_t r = first; r < end; ++r)
            if (result.classOf(RankId { r }) == cls)
                ranks.push_back(r);
        if (ranks.empty())
            continue;
        const ChakraMetadata metadata = traceMetadata(result, cls);
        const bool fast = options.format == ChakraFileFormat::Protobuf;
        ClassTemplate tmpl;
        if (fast)
            tmpl = buildClassTemplate(result, RankId { ranks.front() }, options);
        std::atomic<size_t> next { 0 };
        auto worker = [&] {
            EntryCache cache;
            std::string scratch;
            try {
                for (size_t k = next++; k < ranks.size() && !stop; k = next++) {
                    const RankId rank { ranks[k] };
                    ChakraFileWriter writer(rankPath(rank.value), writeOptions);
                    writer.writeMetadata(metadata);
                    if (fast)
                        writeFromTemplate(writer, tmpl, result, rank, cache, scratch);
                    else
                        for (const ChakraNode& n : rankTraceNodes(result, rank, options))
                            writer.writeNode(n);
                    writer.commit();
                    bytes += writer.bytesWritten();
                    nodes += writer.nodesWritten();
                    const int64_t finished = ++done;
                    if (progress) {
                        std::lock_guard lock(progressMutex);
                        progress->report(
                            static_cast<double>(finished) / static_cast<double>(end - first), "writing ranks");
                        if (progress->cancelled())
                            stop = true;
                    }
                }
            } catch (...) {
                std::lock_guard lock(errorMutex);
                if (!error)
                    error = std::current_exception();
                stop = true;
            }
        };
        std::vector<std::thread> pool;
        for (int t = 1; t < threads; ++t)
            pool.emplace_back(worker);
        worker();
        for (std::thread& t : pool)
            t.join();
    }
    if (error)
        std::rethrow_exception(error); // `stage` discards every file written: the folder is as it was
    summary.groupsPath = groupsPath;
    summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // A cancel after the last rank file still completes the set; before it, nothing is kept.
    if (done != end - first) {
        summary.cancelled = true;
        return summary;
    }
    if (first == 0) {
        writeCommGroups(groupsPath, communicatorGroups(result), writeOptions);
        summary.wroteGroups = true;
        try {
            stage->writeFile(configPath.filename().string(), toYaml(result.config));
        } catch (const OutputError& e) {
            throw ChakraWriteError(e.what(), configPath);
        }
        summary.configPath = configPath;
    }
    // The switch: every new file gets its name at once (a file of someone else that appeared meanwhile refuses
    // the whole set unless we replace), then what is left of the old set goes.
    try {
        stage->commit(options.force || replaceOwn, options.fsync);
    } catch (const OutputError& e) {
        throw ChakraWriteError(e.what(), dir);
    }
    if (options.force && wholeSet)
        for (const fs::path& p : stale)
            fs::remove(p, ec);
    summary.replaced = static_cast<int64_t>(conflicts.size());
    summary.files = done;
    summary.bytes = bytes;
    summary.nodes = nodes;
    summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return summary;
}

} // namespace stagecraft
