// SPDX-License-Identifier: MIT
// Chakra ET format layer: schema, writer, reader, inspect. Expected values come from the protobuf wire
// format rules and the Chakra facts in shared/spec/chakra-et.md, STAGE's method in shared/spec/stage-method.md
// and the STAGE command lines of tests/data/chakra/stage/README.md; each is cited where it is used.
#include "chakra/chakrainspect.h"
#include "chakra/chakrajson.h"
#include "chakra/chakrareader.h"
#include "chakra/chakratrace.h"
#include "chakra/chakrawriter.h"

#include <QDir>
#include <QTemporaryDir>
#include <QTest>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <sys/resource.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace stagecraft;
namespace fs = std::filesystem;

Q_DECLARE_METATYPE(stagecraft::ChakraTrace)
Q_DECLARE_METATYPE(stagecraft::ChakraAttribute)
Q_DECLARE_METATYPE(stagecraft::FindingSeverity)

namespace {
const fs::path s_chakraData = fs::path(STAGECRAFT_TEST_DATA) / "chakra";

fs::path tempPath(const QTemporaryDir& dir)
{
    return fs::path(dir.path().toStdString());
}

std::string readBytes(const fs::path& p)
{
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

/// Files in a directory, hidden ones included.
QStringList entries(const fs::path& dir)
{
    return QDir(QString::fromStdString(dir.string()))
        .entryList(QDir::Files | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot);
}

QByteArray bytesOf(std::initializer_list<int> b)
{
    QByteArray out;
    for (int v : b)
        out.append(static_cast<char>(v));
    return out;
}

std::string str(const QByteArray& a)
{
    return std::string(a.constData(), static_cast<size_t>(a.size()));
}

ChakraNode makeNode(uint64_t id, ChakraNodeType type, std::vector<uint64_t> deps = {})
{
    ChakraNode n;
    n.id = id;
    n.name = "n" + std::to_string(id);
    n.type = type;
    n.dataDeps = std::move(deps);
    return n;
}

ChakraNode comp(uint64_t id, std::vector<uint64_t> deps = {}, int64_t flops = 100, uint64_t bytes = 64)
{
    ChakraNode n = makeNode(id, ChakraNodeType::Comp, std::move(deps));
    n.durationMicros = 5;
    n.attrs = { chakraNumOps(flops), chakraTensorSize(bytes), chakraOpType("M") };
    return n;
}

ChakraNode coll(uint64_t id, ChakraCollective type, int64_t bytes, int group, std::vector<uint64_t> deps = {})
{
    ChakraNode n = makeNode(id, ChakraNodeType::CommColl, std::move(deps));
    n.attrs = { chakraCommType(type), chakraCommSize(bytes), chakraPgName(group), chakraIsCpuOp(false) };
    return n;
}

ChakraNode send(uint64_t id, int dst, int tag, int64_t bytes, std::vector<uint64_t> deps = {})
{
    ChakraNode n = makeNode(id, ChakraNodeType::CommSend, std::move(deps));
    n.attrs = { chakraCommDst(dst), chakraCommTag(tag), chakraCommSize(bytes) };
    return n;
}

ChakraNode recv(uint64_t id, int src, int tag, int64_t bytes, std::vector<uint64_t> deps = {})
{
    ChakraNode n = makeNode(id, ChakraNodeType::CommRecv, std::move(deps));
    n.attrs = { chakraCommSrc(src), chakraCommTag(tag), chakraCommSize(bytes) };
    return n;
}

ChakraMetadata metadata(std::string version = "0.0.4")
{
    ChakraMetadata m;
    m.version = std::move(version);
    m.attrs = { ChakraAttribute::ofString("schema", "stagecraft-test") };
    return m;
}

/// A trace written the way Stagecraft means to: canonical kinds, dense ids, every dep earlier in the file.
ChakraTrace cleanTrace()
{
    ChakraTrace t;
    t.metadata = metadata();
    t.nodes = { comp(0), coll(1, ChakraCollective::AllReduce, 1024, 1, { 0 }), comp(2, { 1 }) };
    return t;
}

/// Every NodeType value of spec §4.1 plus a value outside the schema.
ChakraTrace everyNodeTypeTrace()
{
    ChakraTrace t;
    t.metadata = metadata();
    for (int type = 0; type <= 7; ++type)
        t.nodes.push_back(makeNode(static_cast<uint64_t>(type), static_cast<ChakraNodeType>(type)));
    t.nodes.push_back(makeNode(8, static_cast<ChakraNodeType>(42)));
    return t;
}

/// One attribute of each of the 30 oneof members of spec §3.4, plus one without a value, with edge values.
ChakraTrace everyAttrKindTrace()
{
    using K = ChakraAttrKind;
    constexpr auto i32min = std::numeric_limits<int32_t>::min();
    constexpr auto i32max = std::numeric_limits<int32_t>::max();
    constexpr auto i64min = std::numeric_limits<int64_t>::min();
    constexpr auto i64max = std::numeric_limits<int64_t>::max();
    constexpr auto u32max = std::numeric_limits<uint32_t>::max();
    constexpr auto u64max = std::numeric_limits<uint64_t>::max();
    const double inf = std::numeric_limits<double>::infinity();
    ChakraNode n = makeNode(1, ChakraNodeType::Comp);
    n.attrs = {
        ChakraAttribute::none("none"),
        ChakraAttribute::of("double", K::Double, -1.5e300),
        ChakraAttribute::of("double_list", K::DoubleList, std::vector<double> { 1.0 / 3.0, -2.5, inf }),
        ChakraAttribute::of("float", K::Float, 3.25f),
        ChakraAttribute::of("float_list", K::FloatList, std::vector<float> { -1.0f, 1e-30f }),
        ChakraAttribute::of("int32", K::Int32, i32min),
        ChakraAttribute::of("int32_list", K::Int32List, std::vector<int32_t> { i32min, -1, 0, i32max }),
        ChakraAttribute::of("int64", K::Int64, i64min),
        ChakraAttribute::of("int64_list", K::Int64List, std::vector<int64_t> { i64min, -1, i64max }),
        ChakraAttribute::of("uint32", K::Uint32, u32max),
        ChakraAttribute::of("uint32_list", K::Uint32List, std::vector<uint32_t> { 0, u32max }),
        ChakraAttribute::of("uint64", K::Uint64, u64max),
        ChakraAttribute::of("uint64_list", K::Uint64List, std::vector<uint64_t> { u64max, 1 }),
        ChakraAttribute::of("sint32", K::Sint32, int32_t { -7 }),
        ChakraAttribute::of("sint32_list", K::Sint32List, std::vector<int32_t> { -7, i32max }),
        ChakraAttribute::of("sint64", K::Sint64, i64min),
        ChakraAttribute::of("sint64_list", K::Sint64List, std::vector<int64_t> { i64min, i64max }),
        ChakraAttribute::of("fixed32", K::Fixed32, uint32_t { 0xDEADBEEF }),
        ChakraAttribute::of("fixed32_list", K::Fixed32List, std::vector<uint32_t> { 1, u32max }),
        ChakraAttribute::of("fixed64", K::Fixed64, u64max),
        ChakraAttribute::of("fixed64_list", K::Fixed64List, std::vector<uint64_t> { u64max }),
        ChakraAttribute::of("sfixed32", K::Sfixed32, int32_t { -123 }),
        ChakraAttribute::of("sfixed32_list", K::Sfixed32List, std::vector<int32_t> { i32min }),
        ChakraAttribute::of("sfixed64", K::Sfixed64, i64min + 1),
        ChakraAttribute::of("sfixed64_list", K::Sfixed64List, std::vector<int64_t> {}),
        ChakraAttribute::of("bool", K::Bool, false), // a oneof member keeps presence even when false
        ChakraAttribute::of("bool_list", K::BoolList, std::vector<bool> { true, false, true }),
        ChakraAttribute::of("string", K::String, std::string()),
        ChakraAttribute::of("string_list", K::StringList, std::vector<std::string> { "a", "", "\xc3\xbc" }),
        ChakraAttribute::of("bytes", K::Bytes, std::string("\0\xff", 2)),
        ChakraAttribute::of("bytes_list", K::BytesList, std::vector<std::string> { std::string("\0", 1), "xyz" }),
    };
    n.attrs.back().docString = "a doc string";
    ChakraTrace t;
    t.metadata = metadata();
    t.metadata.attrs.push_back(ChakraAttribute::of("pid", K::Uint64, uint64_t { 4711 }));
    t.nodes = { n };
    return t;
}

/// Dependencies, times, IOInfo, extreme ids.
ChakraTrace depsAndIoTrace()
{
    ChakraNode a = makeNode(uint64_t { 1 } << 40, ChakraNodeType::Comp);
    a.startTimeMicros = 12345;
    a.durationMicros = std::numeric_limits<uint64_t>::max();
    a.inputs = ChakraIOInfo { "[[1, 2]]", "[[4, 8]]", "['float']" };
    a.outputs = ChakraIOInfo {}; // present but empty
    ChakraNode b = makeNode(std::numeric_limits<uint64_t>::max(), ChakraNodeType::CommColl);
    b.dataDeps = { uint64_t { 1 } << 40, 7, 300 };
    b.ctrlDeps = { 1, 2, 3 };
    b.attrs = { chakraCommType(ChakraCollective::AllReduce) };
    ChakraTrace t;
    t.metadata = metadata("1.0.0");
    t.nodes = { a, b };
    return t;
}

/// Derives STAGE's communicator groups (stage-method.md §3): for each spatial dim X in turn, enumerate the
/// combinations of the other dims, pp first then the other spatial dims in list order, first listed varying
/// slowest; ids run on across X; members = ranks with X = 0..|X|-1. Rank numbering dp fastest, pp slowest:
/// rank = d + dp*(t + tp*(c + cp*(e + ep*s))) (dense models have ep = 1 folded into tp).
std::map<int, std::vector<int>> stageGroups(int dp, int tp, int cp, int ep, int pp)
{
    const std::vector<int> size = { dp, tp, cp, ep }; // spatial dims in STAGE's order
    auto rankOf = [&](const std::vector<int>& c, int s) {
        return c[0] + dp * (c[1] + tp * (c[2] + cp * (c[3] + ep * s)));
    };
    std::map<int, std::vector<int>> groups;
    int id = 1;
    for (int x = 0; x < 4; ++x) {
        if (x == 3 && ep == 1)
            break; // dense models have no ep dimension
        std::vector<int> others;
        for (int d = 0; d < 4; ++d) {
            if (d != x && !(d == 3 && ep == 1))
                others.push_back(d);
        }
        int combos = pp;
        for (int d : others)
            combos *= size[static_cast<size_t>(d)];
        for (int k = 0; k < combos; ++k) {
            // Decode k with the last listed dim varying fastest, pp slowest.
            std::vector<int> coord(4, 0);
            int rest = k;
            for (auto it = others.rbegin(); it != others.rend(); ++it) {
                coord[static_cast<size_t>(*it)] = rest % size[static_cast<size_t>(*it)];
                rest /= size[static_cast<size_t>(*it)];
            }
            const int s = rest;
            std::vector<int> members;
            for (int v = 0; v < size[static_cast<size_t>(x)]; ++v) {
                coord[static_cast<size_t>(x)] = v;
                members.push_back(rankOf(coord, s));
            }
            groups[id++] = members;
        }
    }
    return groups;
}

const TraceFinding* findCheck(const std::vector<TraceFinding>& findings, const std::string& check)
{
    for (const auto& f : findings) {
        if (f.check == check)
            return &f;
    }
    return nullptr;
}

/// True if every error is one of the replay's: a phase escape or an unread output.
bool onlyReplayErrors(const std::vector<TraceFinding>& findings)
{
    return std::all_of(findings.begin(), findings.end(), [](const TraceFinding& f) {
        return f.severity != FindingSeverity::Error || f.check == "escapes-phase" || f.check == "unread-output";
    });
}

std::string describe(const std::vector<TraceFinding>& findings)
{
    std::string s;
    for (const auto& f : findings)
        s += std::string(findingSeverityName(f.severity)) + " [" + f.check + "] " + f.message + "\n";
    return s;
}
} // namespace

class TestChakra : public QObject
{
    Q_OBJECT

private slots:
    void wireBytes_data();
    void wireBytes();
    void roundTrip_data();
    void roundTrip();
    void canonicalAttributes_data();
    void canonicalAttributes();
    void attributeConversions();
    void jsonFormat();
    void byteIdenticalOutput();
    void commGroups();
    void commGroupsRejectsBadIds();
    void writerCommitReplacesAtomically();
    void writerWithoutCommitLeavesNothing();
    void writerProtocolErrors_data();
    void writerProtocolErrors();
    void writeIntoMissingDirectory();
    void writeIntoReadOnlyDirectory();
    void writeFailureRemovesTemporary();
    void corruptInput_data();
    void corruptInput();
    void zeroLengthRecord();
    void inspectTruncatedFile();
    void metadataOnly();
    void visitorStopsEarly();
    void zeroFiles();
    void stageRankFiles_data();
    void stageRankFiles();
    void stageTraceSets_data();
    void stageTraceSets();
    void inspectFindings_data();
    void inspectFindings();
    void inspectGraphFacts();
    void replayMemoryPeak();
    void fuzzRegressions();
    void inspectTotals();
    void deepGraphsAreIterative();
    void traceSetDefects_data();
    void traceSetDefects();
    void summaryRendering();
};

// Exact bytes from the protobuf encoding rules (varint, tag = field << 3 | wire type; spec §1-§3) — what
// SerializeDelimitedToOstream produces for the same messages.
void TestChakra::wireBytes_data()
{
    QTest::addColumn<ChakraTrace>("trace");
    QTest::addColumn<QByteArray>("expected");

    ChakraTrace t;
    t.metadata.version = "0.0.4";
    // GlobalMetadata {version (field 1, LEN) = "0.0.4"}: 0a 05 "0.0.4" = 7 bytes, prefix 07.
    const QByteArray meta = bytesOf({ 0x07, 0x0a, 0x05 }) + QByteArray("0.0.4");
    QTest::newRow("metadata only") << t << meta;

    ChakraNode n;
    n.id = 1;
    n.type = ChakraNodeType::Comp;
    t.nodes = { n };
    // Node {id (1, varint) = 1, type (3, varint) = COMP_NODE 4}: 08 01 18 04.
    QTest::newRow("comp node") << t << meta + bytesOf({ 0x04, 0x08, 0x01, 0x18, 0x04 });

    n.type = ChakraNodeType::Invalid;
    n.name = std::string(200, 'x');
    t.nodes = { n };
    // 08 01, name (2, LEN) 12 c8 01 + 200 bytes: payload 205 bytes, a two-byte prefix cd 01.
    QTest::newRow("two-byte length prefix")
        << t << meta + bytesOf({ 0xcd, 0x01, 0x08, 0x01, 0x12, 0xc8, 0x01 }) + QByteArray(200, 'x');

    n = ChakraNode {};
    n.id = 2;
    n.attrs = { chakraNumOps(5) };
    t.nodes = { n };
    // attr (10, LEN) tag 0x52: {name (1) "num_ops", int64_val (9, varint) tag 0x48 = 5} = 11 bytes.
    QTest::newRow("int64 attribute") << t
                                     << meta + bytesOf({ 0x0f, 0x08, 0x02, 0x52, 0x0b, 0x0a, 0x07 }) + "num_ops"
            + bytesOf({ 0x48, 0x05 });

    n = ChakraNode {};
    n.id = 3;
    n.dataDeps = { 1, 300 };
    t.nodes = { n };
    // data_deps is field 5 (ctrl_deps is 4), packed: tag 0x2a, 3 bytes: 01, 300 = ac 02.
    QTest::newRow("packed data_deps") << t << meta + bytesOf({ 0x07, 0x08, 0x03, 0x2a, 0x03, 0x01, 0xac, 0x02 });

    n = ChakraNode {};
    n.id = 4;
    n.type = ChakraNodeType::CommColl;
    n.attrs = { chakraCommType(ChakraCollective::AllReduce) };
    t.nodes = { n };
    // A oneof member is written even when 0 (spec §2): comm_type int64_val 0 -> 48 00. COMM_COLL_NODE = 7.
    QTest::newRow("zero oneof value") << t
                                      << meta + bytesOf({ 0x13, 0x08, 0x04, 0x18, 0x07, 0x52, 0x0d, 0x0a, 0x09 })
            + "comm_type" + bytesOf({ 0x48, 0x00 });
}

void TestChakra::wireBytes()
{
    QFETCH(ChakraTrace, trace);
    QFETCH(QByteArray, expected);
    QTemporaryDir dir;
    const fs::path file = tempPath(dir) / "w.0.et";
    writeChakraTrace(file, trace);
    QCOMPARE(QByteArray::fromStdString(readBytes(file)), expected);
    QCOMPARE(QByteArray::fromStdString(serializeChakraTrace(trace)), expected);
}

void TestChakra::roundTrip_data()
{
    QTest::addColumn<ChakraTrace>("trace");
    QTest::newRow("clean") << cleanTrace();
    QTest::newRow("every node type") << everyNodeTypeTrace();
    QTest::newRow("every attribute kind") << everyAttrKindTrace();
    QTest::newRow("deps, times, IOInfo, extreme ids") << depsAndIoTrace();
}

void TestChakra::roundTrip()
{
    QFETCH(ChakraTrace, trace);
    QTemporaryDir dir;
    const fs::path file = tempPath(dir) / "w.0.et";
    ChakraFileWriter writer(file, { ChakraFileFormat::Protobuf, true, 4096 });
    writer.writeMetadata(trace.metadata);
    for (const auto& n : trace.nodes)
        writer.writeNode(n);
    writer.commit();
    QCOMPARE(writer.nodesWritten(), uint64_t(trace.nodes.size()));
    QCOMPARE(writer.bytesWritten(), uint64_t(fs::file_size(file)));

    const ChakraReadResult read = readChakraFile(file);
    QVERIFY2(read.ok(), read.error.c_str());
    QCOMPARE(read.trace->metadata, trace.metadata);
    QCOMPARE(read.trace->nodes.size(), trace.nodes.size());
    for (size_t i = 0; i < trace.nodes.size(); ++i) {
        const auto& got = read.trace->nodes[i];
        const auto& want = trace.nodes[i];
        QCOMPARE(got.attrs.size(), want.attrs.size());
        for (size_t k = 0; k < want.attrs.size(); ++k) {
            QVERIFY2(got.attrs[k] == want.attrs[k], want.attrs[k].name.c_str());
            QCOMPARE(got.attrs[k].kind, want.attrs[k].kind);
        }
        QVERIFY2(got == want, want.name.c_str());
    }
    QCOMPARE(read.trace->framing.fileBytes, uint64_t(fs::file_size(file)));
    QCOMPARE(read.trace->framing.records, uint64_t(trace.nodes.size() + 1));
    QCOMPARE(readBytes(file), serializeChakraTrace(trace));
}

// Spec §5.2: the oneof member each attribute must use.
void TestChakra::canonicalAttributes_data()
{
    using K = ChakraAttrKind;
    QTest::addColumn<ChakraAttribute>("actual");
    QTest::addColumn<ChakraAttribute>("expected");
    QTest::newRow("num_ops") << chakraNumOps(1000) << ChakraAttribute::of("num_ops", K::Int64, int64_t { 1000 });
    QTest::newRow("tensor_size") << chakraTensorSize(uint64_t { 1 } << 40)
                                 << ChakraAttribute::of("tensor_size", K::Uint64, uint64_t { 1 } << 40);
    QTest::newRow("op_type") << chakraOpType("matmul")
                             << ChakraAttribute::of("op_type", K::String, std::string("matmul"));
    QTest::newRow("is_cpu_op") << chakraIsCpuOp(false) << ChakraAttribute::of("is_cpu_op", K::Bool, false);
    // CollectiveCommType values, spec §4.2.
    QTest::newRow("comm_type all-reduce")
        << chakraCommType(ChakraCollective::AllReduce) << ChakraAttribute::of("comm_type", K::Int64, int64_t { 0 });
    QTest::newRow("comm_type all-gather")
        << chakraCommType(ChakraCollective::AllGather) << ChakraAttribute::of("comm_type", K::Int64, int64_t { 2 });
    QTest::newRow("comm_type all-to-all")
        << chakraCommType(ChakraCollective::AllToAll) << ChakraAttribute::of("comm_type", K::Int64, int64_t { 6 });
    QTest::newRow("comm_type reduce-scatter")
        << chakraCommType(ChakraCollective::ReduceScatter) << ChakraAttribute::of("comm_type", K::Int64, int64_t { 7 });
    QTest::newRow("comm_size") << chakraCommSize(524288)
                               << ChakraAttribute::of("comm_size", K::Int64, int64_t { 524288 });
    QTest::newRow("pg_name") << chakraPgName(3) << ChakraAttribute::of("pg_name", K::String, std::string("3"));
    QTest::newRow("comm_src") << chakraCommSrc(5) << ChakraAttribute::of("comm_src", K::Int32, int32_t { 5 });
    QTest::newRow("comm_dst") << chakraCommDst(6) << ChakraAttribute::of("comm_dst", K::Int32, int32_t { 6 });
    QTest::newRow("comm_tag") << chakraCommTag(77) << ChakraAttribute::of("comm_tag", K::Int32, int32_t { 77 });
    QTest::newRow("involved_dim") << chakraInvolvedDim(
        { true, false }) << ChakraAttribute::of("involved_dim", K::BoolList, std::vector<bool> { true, false });
    // inputs/outputs: name, size pairs with plain integer byte sizes (spec §5.2).
    QTest::newRow("inputs") << chakraInputs({ { "x", 64 }, { "w", uint64_t { 1 } << 33 } })
                            << ChakraAttribute::of(
                                   "inputs", K::StringList, std::vector<std::string> { "x", "64", "w", "8589934592" });
    QTest::newRow("outputs empty") << chakraOutputs({})
                                   << ChakraAttribute::of("outputs", K::StringList, std::vector<std::string> {});
}

void TestChakra::canonicalAttributes()
{
    QFETCH(ChakraAttribute, actual);
    QFETCH(ChakraAttribute, expected);
    QVERIFY(actual.isConsistent());
    QCOMPARE(actual.name, expected.name);
    QCOMPARE(chakraAttrKindName(actual.kind), chakraAttrKindName(expected.kind));
    QVERIFY(actual == expected);
}

// Spec §5.1: integer kinds (bool included) convert to integers; floats and strings do not.
void TestChakra::attributeConversions()
{
    using K = ChakraAttrKind;
    QCOMPARE(ChakraAttribute::ofInt32("a", -5).toInt64(), std::optional<int64_t>(-5));
    QCOMPARE(ChakraAttribute::ofInt32("a", -5).toUint64(), std::optional<uint64_t>());
    QCOMPARE(ChakraAttribute::ofBool("a", true).toInt64(), std::optional<int64_t>(1));
    QCOMPARE(ChakraAttribute::ofInt32("a", 0).toBool(), std::optional<bool>(false));
    const auto u64max = std::numeric_limits<uint64_t>::max();
    QCOMPARE(ChakraAttribute::ofUint64("a", u64max).toInt64(), std::optional<int64_t>());
    QCOMPARE(ChakraAttribute::ofUint64("a", u64max).toUint64(), std::optional<uint64_t>(u64max));
    QCOMPARE(ChakraAttribute::of("a", K::Sfixed64, int64_t { -9 }).toInt64(), std::optional<int64_t>(-9));
    QCOMPARE(ChakraAttribute::of("a", K::Fixed32, uint32_t { 9 }).toInt64(), std::optional<int64_t>(9));
    QCOMPARE(ChakraAttribute::ofDouble("a", 2.0).toInt64(), std::optional<int64_t>());
    QCOMPARE(ChakraAttribute::ofDouble("a", 2.0).toDouble(), std::optional<double>(2.0));
    QCOMPARE(ChakraAttribute::ofString("a", "7").toInt64(), std::optional<int64_t>());
    QVERIFY(ChakraAttribute::ofInt64List("a", { 1 }).toInt64() == std::nullopt);
    // A value that does not match its kind is refused by every accessor.
    const auto broken = ChakraAttribute::of("a", K::Int64, std::string("x"));
    QVERIFY(!broken.isConsistent());
    QVERIFY(broken.toInt64() == std::nullopt);

    ChakraNode n = comp(0);
    n.attrs.push_back(ChakraAttribute::ofInt64("num_ops", 999)); // second of the name: the first wins (§5)
    QCOMPARE(n.intAttr("num_ops"), std::optional<int64_t>(100));
    QCOMPARE(n.uintAttr("tensor_size"), std::optional<uint64_t>(64));
    QCOMPARE(n.stringAttr("op_type"), std::optional<std::string>("M"));
    QCOMPARE(n.stringAttr("num_ops"), std::optional<std::string>());
    QVERIFY(n.attr("missing") == nullptr);
}

void TestChakra::jsonFormat()
{
    ChakraTrace t;
    t.metadata = metadata();
    ChakraNode a = comp(1);
    a.attrs.push_back(ChakraAttribute::ofUint64("big", std::numeric_limits<uint64_t>::max()));
    // RFC 4648 §10 test vectors.
    a.attrs.push_back(ChakraAttribute::ofBytes("b6", "foobar"));
    a.attrs.push_back(ChakraAttribute::ofBytes("b1", "f"));
    a.attrs.push_back(ChakraAttribute::ofBytes("b2", "fo"));
    a.attrs.push_back(ChakraAttribute::none("outputs"));
    a.attrs.push_back(chakraInputs({ { "x", 64 } }));
    ChakraNode b = coll(2, ChakraCollective::ReduceScatter, 4096, 5, { 1 });
    t.nodes = { a, b };

    QTemporaryDir dir;
    const fs::path file = tempPath(dir) / "w.0.json";
    writeChakraTrace(file, t, { ChakraFileFormat::Json });
    const std::string text = readBytes(file);
    QVERIFY(text.size() > 0 && text.back() == '\n');
    const auto doc = nlohmann::json::parse(text);
    QCOMPARE(doc["metadata"]["version"].get<std::string>(), std::string("0.0.4"));
    QCOMPARE(doc["nodes"].size(), size_t(2));
    const auto& j0 = doc["nodes"][0];
    QCOMPARE(j0["id"].get<uint64_t>(), uint64_t(1));
    QCOMPARE(j0["type"].get<std::string>(), std::string("COMP_NODE"));
    QCOMPARE(j0["duration_micros"].get<uint64_t>(), uint64_t(5));
    const auto& attrs = j0["attr"];
    QCOMPARE(attrs[0]["name"].get<std::string>(), std::string("num_ops"));
    QCOMPARE(attrs[0]["int64_val"].get<int64_t>(), int64_t(100));
    QCOMPARE(attrs[1]["uint64_val"].get<uint64_t>(), uint64_t(64));
    QCOMPARE(attrs[3]["uint64_val"].get<uint64_t>(), std::numeric_limits<uint64_t>::max());
    QCOMPARE(attrs[4]["bytes_val"].get<std::string>(), std::string("Zm9vYmFy"));
    QCOMPARE(attrs[5]["bytes_val"].get<std::string>(), std::string("Zg=="));
    QCOMPARE(attrs[6]["bytes_val"].get<std::string>(), std::string("Zm8="));
    QCOMPARE(attrs[7].size(), size_t(1)); // only "name": no value member set
    QVERIFY(attrs[8]["string_list"] == nlohmann::json({ "x", "64" }));
    const auto& j1 = doc["nodes"][1];
    QCOMPARE(j1["type"].get<std::string>(), std::string("COMM_COLL_NODE"));
    QVERIFY(j1["data_deps"] == nlohmann::json({ 1 }));
    QCOMPARE(j1["attr"][0]["int64_val"].get<int64_t>(), int64_t(7)); // REDUCE_SCATTER
    QCOMPARE(j1["attr"][2]["string_val"].get<std::string>(), std::string("5"));

    // No nodes still gives valid JSON.
    t.nodes.clear();
    writeChakraTrace(file, t, { ChakraFileFormat::Json });
    QVERIFY(nlohmann::json::parse(readBytes(file))["nodes"] == nlohmann::json::array());
}

void TestChakra::byteIdenticalOutput()
{
    QTemporaryDir dir;
    const fs::path d = tempPath(dir);
    for (auto format : { ChakraFileFormat::Protobuf, ChakraFileFormat::Json }) {
        const ChakraTrace t = everyAttrKindTrace();
        writeChakraTrace(d / "a.et", t, { format });
        writeChakraTrace(d / "b.et", everyAttrKindTrace(), { format, false, 4096 });
        QCOMPARE(readBytes(d / "a.et"), readBytes(d / "b.et"));
        QVERIFY(!readBytes(d / "a.et").empty());
    }
}

void TestChakra::commGroups()
{
    QTemporaryDir dir;
    const fs::path file = tempPath(dir) / "w.json";
    writeCommGroups(file, { { 1, { 0, 1 } }, { 2, { 2, 3 } }, { 3, { 0, 1, 2, 3 } } });
    // Format documented in chakrawriter.h; content = the example of spec §7.3.
    QCOMPARE(readBytes(file), std::string("{\n  \"1\": [0, 1],\n  \"2\": [2, 3],\n  \"3\": [0, 1, 2, 3]\n}\n"));
    QVERIFY(nlohmann::json::parse(readBytes(file))
        == nlohmann::json::parse(R"({"1": [0, 1], "2": [2, 3], "3": [0, 1, 2, 3]})"));
    // Numeric key order, ring order as given (ASTRA-sim builds a small group's ring in listed order).
    writeCommGroups(file, { { 10, { 3, 1 } }, { 2, { 0 } } });
    QCOMPARE(readBytes(file), std::string("{\n  \"2\": [0],\n  \"10\": [3, 1]\n}\n"));
    QCOMPARE(entries(tempPath(dir)), QStringList { QStringLiteral("w.json") });
}

void TestChakra::commGroupsRejectsBadIds()
{
    QTemporaryDir dir;
    const fs::path file = tempPath(dir) / "w.json";
    for (const auto& groups :
        { std::map<int, std::vector<int>> { { 0, { 0, 1 } } }, std::map<int, std::vector<int>> { { 1, { 0, -1 } } } }) {
        try {
            writeCommGroups(file, groups);
            QFAIL("no exception");
        } catch (const ChakraWriteError& e) {
            QVERIFY2(std::string(e.what()).find(file.string()) != std::string::npos, e.what());
        }
    }
    QVERIFY(entries(tempPath(dir)).isEmpty());
}

void TestChakra::writerCommitReplacesAtomically()
{
    QTemporaryDir dir;
    const fs::path file = tempPath(dir) / "w.0.et";
    {
        std::ofstream(file) << "old content";
    }
    ChakraFileWriter writer(file);
    writer.writeMetadata(metadata());
    writer.writeNode(comp(0));
    // Until commit the old file is untouched and the data sits in ".w.0.et.tmp-<pid>-<n>".
    QCOMPARE(readBytes(file), std::string("old content"));
    const std::string tmpName = writer.temporaryPath().filename().string();
    QVERIFY2(tmpName.rfind(".w.0.et.tmp-" + std::to_string(::getpid()) + "-", 0) == 0, tmpName.c_str());
    QCOMPARE(writer.temporaryPath().parent_path(), file.parent_path());
    writer.commit();
    QCOMPARE(entries(tempPath(dir)), QStringList { QStringLiteral("w.0.et") });
    ChakraTrace expected;
    expected.metadata = metadata();
    expected.nodes = { comp(0) };
    QCOMPARE(readBytes(file), serializeChakraTrace(expected));
    QVERIFY_THROWS_EXCEPTION(ChakraWriteError, writer.writeNode(comp(1)));
}

void TestChakra::writerWithoutCommitLeavesNothing()
{
    QTemporaryDir dir;
    const fs::path d = tempPath(dir);
    {
        ChakraFileWriter writer(d / "w.0.et", { ChakraFileFormat::Protobuf, false, 4096 });
        writer.writeMetadata(metadata());
        for (uint64_t i = 0; i < 2000; ++i) // > 4 KiB: part of it already reached the temporary file
            writer.writeNode(comp(i));
        QVERIFY(fs::exists(writer.temporaryPath()));
        QVERIFY(fs::file_size(writer.temporaryPath()) > 0);
        QCOMPARE(entries(d).size(), 1);
    }
    QVERIFY(entries(d).isEmpty());
    {
        ChakraFileWriter moved = ChakraFileWriter(d / "w.1.et");
        moved.writeMetadata(metadata());
    }
    QVERIFY(entries(d).isEmpty());
}

void TestChakra::writerProtocolErrors_data()
{
    QTest::addColumn<int>("scenario");
    QTest::addColumn<QString>("message");
    QTest::newRow("node before metadata") << 0 << QStringLiteral("written before the GlobalMetadata");
    QTest::newRow("metadata twice") << 1 << QStringLiteral("GlobalMetadata written twice");
    QTest::newRow("zero-length node") << 2 << QStringLiteral("zero-length Node");
    QTest::newRow("kind/value mismatch") << 3 << QStringLiteral("attribute 'x' has kind int64_val");
    QTest::newRow("commit without metadata") << 4 << QStringLiteral("commit() without a GlobalMetadata");
    QTest::newRow("empty metadata") << 5 << QStringLiteral("zero-length GlobalMetadata");
    // Protobuf string fields must be UTF-8, or Chakra's Python reader rejects the file.
    QTest::newRow("name not UTF-8") << 6 << QStringLiteral("node 0: the name is not valid UTF-8");
    QTest::newRow("string list not UTF-8") << 7 << QStringLiteral("a string_list value of attribute 'inputs'");
}

void TestChakra::writerProtocolErrors()
{
    QFETCH(int, scenario);
    QFETCH(QString, message);
    QTemporaryDir dir;
    const fs::path file = tempPath(dir) / "w.0.et";
    ChakraFileWriter writer(file);
    try {
        switch (scenario) {
        case 0:
            writer.writeNode(comp(0));
            break;
        case 1:
            writer.writeMetadata(metadata());
            writer.writeMetadata(metadata());
            break;
        case 2:
            writer.writeMetadata(metadata());
            writer.writeNode(ChakraNode {});
            break;
        case 3: {
            writer.writeMetadata(metadata());
            ChakraNode n = comp(0);
            n.attrs.push_back(ChakraAttribute::of("x", ChakraAttrKind::Int64, std::string("not a number")));
            writer.writeNode(n);
            break;
        }
        case 4:
            writer.commit();
            break;
        case 5:
            writer.writeMetadata(ChakraMetadata {});
            break;
        case 6: {
            writer.writeMetadata(metadata());
            ChakraNode n = comp(0);
            n.name = "\xc3\x28";
            writer.writeNode(n);
            break;
        }
        case 7: {
            writer.writeMetadata(metadata());
            ChakraNode n = comp(0);
            n.attrs.push_back(ChakraAttribute::ofStringList("inputs", { "ok", "\xed\xa0\x80" })); // a surrogate
            writer.writeNode(n);
            break;
        }
        }
        QFAIL("no exception");
    } catch (const ChakraWriteError& e) {
        QVERIFY2(QString::fromUtf8(e.what()).contains(message), e.what());
        QCOMPARE(e.path(), file);
    }
    // A failed writer removed its temporary file and refuses further work.
    QVERIFY(entries(tempPath(dir)).isEmpty());
    QVERIFY_THROWS_EXCEPTION(ChakraWriteError, writer.commit());
}

void TestChakra::writeIntoMissingDirectory()
{
    QTemporaryDir dir;
    const fs::path file = tempPath(dir) / "missing" / "w.0.et";
    try {
        ChakraFileWriter writer(file);
        QFAIL("no exception");
    } catch (const ChakraWriteError& e) {
        const std::string what = e.what();
        QVERIFY2(what.find("does not exist") != std::string::npos, e.what());
        QVERIFY2(what.find((tempPath(dir) / "missing").string()) != std::string::npos, e.what());
        QCOMPARE(e.errorNumber(), ENOENT);
    }
}

void TestChakra::writeIntoReadOnlyDirectory()
{
    if (::geteuid() == 0)
        QSKIP("running as root: permissions are not enforced");
    QTemporaryDir dir;
    const fs::path ro = tempPath(dir) / "ro";
    fs::create_directory(ro);
    QCOMPARE(::chmod(ro.c_str(), 0555), 0);
    try {
        ChakraFileWriter writer(ro / "w.0.et");
        QFAIL("no exception");
    } catch (const ChakraWriteError& e) {
        const std::string what = e.what();
        QVERIFY2(what.find(std::strerror(EACCES)) != std::string::npos, e.what());
        QVERIFY2(what.find((ro / "w.0.et").string()) != std::string::npos, e.what());
        QCOMPARE(e.errorNumber(), EACCES);
    }
    ::chmod(ro.c_str(), 0755);
    QVERIFY(entries(ro).isEmpty());
}

// A failing write(2) mid-file (here EFBIG from RLIMIT_FSIZE, which binds root too; ENOSPC takes the same
// path): the error names the file and strerror, and no temporary or final file is left behind.
void TestChakra::writeFailureRemovesTemporary()
{
    QTemporaryDir dir;
    const fs::path d = tempPath(dir);
    rlimit old {};
    QCOMPARE(::getrlimit(RLIMIT_FSIZE, &old), 0);
    const auto oldHandler = std::signal(SIGXFSZ, SIG_IGN);
    rlimit small = old;
    small.rlim_cur = 64 * 1024;
    QCOMPARE(::setrlimit(RLIMIT_FSIZE, &small), 0);
    std::string what;
    int err = 0;
    try {
        ChakraFileWriter writer(d / "w.0.et", { ChakraFileFormat::Protobuf, false, 4096 });
        writer.writeMetadata(metadata());
        for (uint64_t i = 0; i < 100000; ++i)
            writer.writeNode(comp(i));
        writer.commit();
    } catch (const ChakraWriteError& e) {
        what = e.what();
        err = e.errorNumber();
    }
    ::setrlimit(RLIMIT_FSIZE, &old);
    std::signal(SIGXFSZ, oldHandler);
    QCOMPARE(err, EFBIG);
    QVERIFY2(what.find(std::strerror(EFBIG)) != std::string::npos, what.c_str());
    QVERIFY2(what.find((d / "w.0.et").string()) != std::string::npos, what.c_str());
    QVERIFY(entries(d).isEmpty());
}

// Byte layouts in tests/data/chakra/corrupt/README.md; offsets and lengths follow from them.
void TestChakra::corruptInput_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("message");
    QTest::newRow("empty") << "empty.et"
                           << "empty file (0 bytes)";
    QTest::newRow("truncated varint") << "truncated-varint.et"
                                      << "record 0 (GlobalMetadata) at byte offset 0: truncated length prefix";
    QTest::newRow("length past EOF") << "length-past-eof.et"
                                     << "record 0 (GlobalMetadata) at byte offset 0 declares 16 bytes but only 5 "
                                        "remain (file size 6)";
    QTest::newRow("5-byte varint claiming 4 GB") << "varint-4gb.et"
                                                 << "declares 4294967295 bytes but only 1 remain (file size 6)";
    QTest::newRow("6-byte varint") << "varint-too-long.et"
                                   << "varint longer than 5 bytes";
    QTest::newRow("varint over 32 bits") << "varint-over-32-bits.et"
                                         << "value exceeds 32 bits";
    QTest::newRow("garbage payload") << "garbage.et"
                                     << "is not a valid GlobalMetadata message: truncated or over-long field tag at "
                                        "payload byte 0";
    QTest::newRow("truncated node") << "truncated-node.et"
                                    << "record 1 (Node) at byte offset 8 declares 10 bytes but only 2 remain";
    QTest::newRow("node where metadata belongs")
        << "node-first.et"
        << "record 0 (GlobalMetadata) at byte offset 0 is not a GlobalMetadata";
    QTest::newRow("bad wire type") << "bad-wire-type.et"
                                   << "record 1 (Node) at byte offset 8 (1 bytes) is not a valid Node message: invalid "
                                      "wire type 7 in field 1";
    QTest::newRow("invalid UTF-8") << "invalid-utf8-name.et"
                                   << "record 1 (Node) at byte offset 8 (4 bytes) is not a valid Node message: string "
                                      "field 2 at payload byte 0 is not valid UTF-8";
    QTest::newRow("gzip") << "gzip.et"
                          << "gzip-compressed";
    QTest::newRow("random bytes") << "random.et"
                                  << "at byte offset";
}

void TestChakra::corruptInput()
{
    QFETCH(QString, file);
    QFETCH(QString, message);
    const fs::path path = s_chakraData / "corrupt" / file.toStdString();
    QVERIFY(fs::exists(path));
    const ChakraReadResult fromFile = readChakraFile(path);
    QVERIFY(!fromFile.ok());
    QVERIFY2(QString::fromStdString(fromFile.error).contains(message), fromFile.error.c_str());
    QVERIFY2(fromFile.error.rfind(path.string() + ": ", 0) == 0, fromFile.error.c_str());

    const ChakraReadResult fromMemory = readChakraBytes(readBytes(path), "mem");
    QVERIFY(!fromMemory.ok());
    // The same message whatever the source, prefixed by the source name.
    QVERIFY2(fromMemory.error.rfind("mem: ", 0) == 0, fromMemory.error.c_str());
    QCOMPARE(fromMemory.error.substr(5), fromFile.error.substr(path.string().size() + 2));
}

// Spec §1: a zero-length record is read as an all-default Node (what ASTRA-sim does); inspect flags it.
void TestChakra::zeroLengthRecord()
{
    const std::string bytes =
        str(bytesOf({ 0x07, 0x0a, 0x05 }) + "0.0.4" + bytesOf({ 0x00, 0x04, 0x08, 0x01, 0x18, 0x04 }));
    const ChakraReadResult r = readChakraBytes(bytes);
    QVERIFY2(r.ok(), r.error.c_str());
    // The empty record is no node: only node 1 is read.
    QCOMPARE(r.trace->nodes.size(), size_t(1));
    QCOMPARE(r.trace->nodes[0].id, uint64_t(1));
    QCOMPARE(r.trace->framing.zeroLengthRecordOffsets, std::vector<uint64_t> { 8 });
    QCOMPARE(r.trace->framing.zeroLengthRecords, uint64_t(1));
    const TraceSummary s = inspectTrace(*r.trace);
    const TraceFinding* f = findCheck(s.findings, "zero-length-record");
    QVERIFY2(f, describe(s.findings).c_str());
    QCOMPARE(f->severity, FindingSeverity::Error);
}

void TestChakra::zeroFiles()
{
    // A file of zero bytes reads as an empty GlobalMetadata and then empty records: one clear error, found at the
    // second byte, whatever the size (10 MB here), and nothing is allocated per zero.
    QTemporaryDir dir;
    const fs::path zeros = tempPath(dir) / "z.et";
    {
        std::ofstream out(zeros, std::ios::binary);
        const std::string block(1 << 20, '\0');
        for (int i = 0; i < 10; ++i)
            out.write(block.data(), static_cast<std::streamsize>(block.size()));
    }
    const ChakraReadResult r = readChakraFile(zeros);
    QVERIFY(!r.ok());
    QVERIFY2(r.error.find("not a Chakra ET file: it begins with two zero-length records") != std::string::npos,
        r.error.c_str());
    // Devices and FIFOs are refused at once: /dev/zero never ends, a FIFO without a writer would block.
    for (const char* device : { "/dev/zero", "/dev/null" }) {
        const ChakraReadResult d = readChakraFile(device);
        QVERIFY(!d.ok());
        QVERIFY2(d.error.find("not a regular file") != std::string::npos, d.error.c_str());
    }
    const fs::path fifo = tempPath(dir) / "pipe.et";
    QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
    const ChakraReadResult f = readChakraFile(fifo);
    QVERIFY2(f.error.find("not a regular file") != std::string::npos, f.error.c_str());
}

void TestChakra::inspectTruncatedFile()
{
    // truncated-node.et: a valid GlobalMetadata, then a node record that runs past the end of the file.
    const fs::path path = s_chakraData / "corrupt" / "truncated-node.et";
    std::string readError;
    const TraceSummary s = inspectTraceFile(path, &readError);
    QVERIFY2(readError.find("declares 10 bytes but only 2 remain") != std::string::npos, readError.c_str());
    QVERIFY(!s.findings.empty());
    QCOMPARE(s.findings.front().check, std::string("read-error"));
    QCOMPARE(s.findings.front().severity, FindingSeverity::Error);
    QCOMPARE(s.version, std::string("0.0.4"));
    QCOMPARE(s.nodeCount, uint64_t(0));
}

void TestChakra::metadataOnly()
{
    ChakraTrace t;
    t.metadata = metadata();
    const ChakraReadResult r = readChakraBytes(serializeChakraTrace(t));
    QVERIFY2(r.ok(), r.error.c_str());
    QVERIFY(r.trace->nodes.empty());
    const TraceSummary s = inspectTrace(*r.trace);
    const TraceFinding* f = findCheck(s.findings, "no-nodes");
    QVERIFY(f && f->severity == FindingSeverity::Error);
}

void TestChakra::visitorStopsEarly()
{
    ChakraTrace t;
    t.metadata = metadata();
    for (uint64_t i = 0; i < 10; ++i)
        t.nodes.push_back(comp(i, i ? std::vector<uint64_t> { i - 1 } : std::vector<uint64_t> {}));
    const std::string bytes = serializeChakraTrace(t);

    struct Stopper : ChakraTraceVisitor
    {
        std::vector<ChakraRecordInfo> seen;
        bool onMetadata(ChakraMetadata&&, const ChakraRecordInfo& r) override
        {
            seen.push_back(r);
            return true;
        }
        bool onNode(ChakraNode&&, const ChakraRecordInfo& r) override
        {
            seen.push_back(r);
            return seen.size() < 4;
        }
    } visitor;
    const ChakraReadStatus status = visitChakraBytes(bytes, visitor);
    QVERIFY2(status.ok(), status.error.c_str());
    QCOMPARE(status.framing.records, uint64_t(4));
    QCOMPARE(visitor.seen.size(), size_t(4));
    // Records are concatenated: record k starts where a file holding only the records before it ends.
    for (size_t k = 0; k < visitor.seen.size(); ++k) {
        ChakraTrace prefix = t;
        prefix.nodes.resize(k == 0 ? 0 : k - 1);
        QCOMPARE(visitor.seen[k].index, uint64_t(k));
        QCOMPARE(visitor.seen[k].offset, uint64_t(k == 0 ? 0 : serializeChakraTrace(prefix).size()));
    }
}

void TestChakra::stageRankFiles_data()
{
    QTest::addColumn<QString>("set");
    QTest::addColumn<int>("rank");
    QTest::addColumn<int>("sends"); // = recvs
    QTest::addColumn<int>("allReduce");
    QTest::addColumn<int>("allGather");
    QTest::addColumn<int>("reduceScatter");
    QTest::addColumn<int>("allToAll");
    // llama dp2 tp2 pp2, 2 layers -> 1 layer per stage, batch 4 / micro_batch 2 = 2 micro-batches.
    // stage-method.md §3: TP+SP gives 6 AG + 4 RS (tp) per layer, per micro-batch -> 12 AG, 8 RS; DP gives one
    // AR(dp) per block per micro-batch (2) plus one AR(dp) for the stage's embedding (input on stage 0, LM
    // head on stage 1) -> 3, and the embedding grad also gets one AR(tp) -> 4 AR. PP: per cut and
    // micro-batch one SEND and one RECV per rank -> 2 each.
    for (int r = 0; r < 8; ++r)
        QTest::addRow("llama rank %d", r) << "llama-dp2tp2pp2" << r << 2 << 4 << 12 << 8 << 0;
    // MoE dp2 ep2, 2 layers, 2 micro-batches, pp 1 (no send/recv). §3 EP: dispatch + combine A2A(ep) in
    // forward and backward = 4 per layer per micro-batch -> 16; AG(ep) of the router weight + extra AG(ep)
    // on the MoE output and on its grad = 3 -> 12; DP: 2 blocks x 2 micro-batches + 2 embeddings -> 6 AR.
    for (int r = 0; r < 4; ++r)
        QTest::addRow("moe rank %d", r) << "moe-dp2ep2" << r << 0 << 6 << 12 << 0 << 16;
}

void TestChakra::stageRankFiles()
{
    QFETCH(QString, set);
    QFETCH(int, rank);
    QFETCH(int, sends);
    QFETCH(int, allReduce);
    QFETCH(int, allGather);
    QFETCH(int, reduceScatter);
    QFETCH(int, allToAll);
    const fs::path dir = s_chakraData / "stage" / set.toStdString();
    const ChakraReadResult r = readChakraFile(dir / ("workload." + std::to_string(rank) + ".et"));
    QVERIFY2(r.ok(), r.error.c_str());
    const ChakraTrace& t = *r.trace;
    const auto groups = nlohmann::json::parse(readBytes(dir / "workload.json"));

    // GlobalMetadata: empty version, attr schema = "symbolic_tensor_network" as a string (spec §5.3).
    QCOMPARE(t.metadata.version, std::string());
    QCOMPARE(t.metadata.attrs.size(), size_t(1));
    QCOMPARE(t.metadata.attrs[0].kind, ChakraAttrKind::String);
    QCOMPARE(*t.metadata.attrs[0].stringValue(), std::string("symbolic_tensor_network"));
    QVERIFY(!t.nodes.empty());

    const bool llama = set.startsWith(QStringLiteral("llama"));
    // rank = d + dp*(t + tp*s) with dp = tp = 2 (stage-method §3): the pipeline peer is rank +- 4.
    const int stage = rank / 4;
    const int peer = stage == 0 ? rank + 4 : rank - 4;
    int counts[8] = {};
    int nSend = 0;
    int nRecv = 0;
    for (const ChakraNode& n : t.nodes) {
        QVERIFY(n.ctrlDeps.empty()); // STAGE writes data_deps only (spec §5.3)
        auto kindOf = [&](const char* name) {
            const ChakraAttribute* a = n.attr(name);
            return a ? a->kind : ChakraAttrKind(-1);
        };
        switch (n.type) {
        case ChakraNodeType::Comp:
            QCOMPARE(kindOf("num_ops"), ChakraAttrKind::Int64);
            QCOMPARE(kindOf("tensor_size"), ChakraAttrKind::Uint64);
            QCOMPARE(kindOf("op_type"), ChakraAttrKind::String);
            QVERIFY(n.attr("is_cpu_op") == nullptr);
            QCOMPARE(n.durationMicros, uint64_t(0));
            break;
        case ChakraNodeType::CommColl: {
            QCOMPARE(kindOf("comm_type"), ChakraAttrKind::Int64);
            QCOMPARE(kindOf("comm_size"), ChakraAttrKind::Int64);
            QCOMPARE(kindOf("pg_name"), ChakraAttrKind::String);
            QCOMPARE(kindOf("is_cpu_op"), ChakraAttrKind::Int32);
            QCOMPARE(n.intAttr("is_cpu_op"), std::optional<int64_t>(0));
            QVERIFY(*n.intAttr("comm_size") > 0);
            const int64_t type = *n.intAttr("comm_type");
            QVERIFY(type >= 0 && type < 8);
            ++counts[type];
            const std::string pg = *n.stringAttr("pg_name");
            QVERIFY2(groups.contains(pg), pg.c_str());
            const auto members = groups[pg].get<std::vector<int>>();
            QVERIFY(members.size() > 1);
            QVERIFY(std::find(members.begin(), members.end(), rank) != members.end());
            if (llama && (type == 2 || type == 7)) {
                // TP+SP collectives run in the tp group: ranks that differ from this one only in t.
                const int d = rank % 2;
                QCOMPARE(members, (std::vector<int> { d + 4 * stage, d + 2 + 4 * stage }));
            }
            break;
        }
        case ChakraNodeType::CommSend:
        case ChakraNodeType::CommRecv: {
            const bool isSend = n.type == ChakraNodeType::CommSend;
            (isSend ? nSend : nRecv)++;
            QCOMPARE(kindOf(isSend ? "comm_dst" : "comm_src"), ChakraAttrKind::Int32);
            QVERIFY(n.attr(isSend ? "comm_src" : "comm_dst") == nullptr);
            QCOMPARE(kindOf("comm_tag"), ChakraAttrKind::Int32);
            QCOMPARE(kindOf("comm_size"), ChakraAttrKind::Int64);
            QCOMPARE(*n.intAttr(isSend ? "comm_dst" : "comm_src"), int64_t(peer));
            // Activation / its grad between blocks: [MicroBatch/dp, Seq/(cp*tp), Dmodel] = 1 * 64 * 256.
            QCOMPARE(*n.intAttr("comm_size"), int64_t(1 * (128 / 2) * 256));
            QCOMPARE(n.intAttr("is_cpu_op"), std::optional<int64_t>(0));
            break;
        }
        default:
            QFAIL(("unexpected node type " + chakraNodeTypeName(n.type)).c_str());
        }
    }
    QCOMPARE(nSend, sends);
    QCOMPARE(nRecv, sends);
    QCOMPARE(counts[0], allReduce);
    QCOMPARE(counts[2], allGather);
    QCOMPARE(counts[7], reduceScatter);
    QCOMPARE(counts[6], allToAll);

    const TraceSummary s = inspectTrace(t, "rank");
    // The only errors are those of the as-soon-as-ready replay, which STAGE's method predicts: it writes no
    // schedule (no ctrl_deps, stage-method §3), so work of a later phase is ready early; and the optimizer's
    // updated weight w@1 (§1.5) is the iteration's result, which no node of the iteration reads.
    QVERIFY2(onlyReplayErrors(s.findings), describe(s.findings).c_str());
    QVERIFY(s.escapes > 0);
    const TraceFinding* unread = findCheck(s.findings, "unread-output");
    QVERIFY(unread);
    // Counted from the file itself: outputs named `...w@1...` (§1.1 naming) that no node lists as an input.
    std::set<std::string> readNames, updated;
    for (const ChakraNode& n : t.nodes) {
        for (const char* list : { "inputs", "outputs" }) {
            const ChakraAttribute* a = n.attr(list);
            const std::vector<std::string>* v = a ? a->stringListValue() : nullptr;
            for (size_t k = 0; v && k + 1 < v->size(); k += 2) {
                if (std::string(list) == "inputs")
                    readNames.insert((*v)[k]);
                else if ((*v)[k].find("w@1") != std::string::npos)
                    updated.insert((*v)[k]);
            }
        }
    }
    size_t updatedUnread = 0;
    for (const std::string& w : updated)
        updatedUnread += readNames.count(w) == 0 ? 1 : 0;
    QVERIFY(updatedUnread > 0);
    QVERIFY2(unread->count >= updatedUnread, unread->message.c_str());
    // stage-method §4: ids are a process-wide counter (not dense per file) and file order is not topological.
    QVERIFY(!s.denseIds);
    QVERIFY(!s.topologicalOrder);
    QVERIFY(s.acyclic);
    QCOMPARE(s.duplicateIds, uint64_t(0));
    QCOMPARE(s.danglingDeps, uint64_t(0));
    QCOMPARE(findCheck(s.findings, "ids-not-dense")->severity, FindingSeverity::Note);
    QCOMPARE(findCheck(s.findings, "not-topological")->severity, FindingSeverity::Note);
    const TraceFinding* cpu = findCheck(s.findings, "noncanonical-attr-kind");
    QVERIFY(cpu);
    QCOMPARE(cpu->subject, std::string("is_cpu_op"));
    QCOMPARE(cpu->severity, FindingSeverity::Warning);
    QCOMPARE(cpu->count, uint64_t(allReduce + allGather + reduceScatter + allToAll + 2 * sends));
    QCOMPARE(s.p2p.sends, uint64_t(sends));
    QCOMPARE(s.nodeCount, uint64_t(t.nodes.size()));

    // Streaming the file through inspect gives the same summary as inspecting the trace read whole.
    const fs::path path = dir / ("workload." + std::to_string(rank) + ".et");
    std::string readError = "unset";
    const TraceSummary streamed = inspectTraceFile(path, &readError);
    QCOMPARE(readError, std::string());
    QVERIFY(summaryToJson(streamed) == summaryToJson(inspectTrace(t, path.string())));
}

void TestChakra::stageTraceSets_data()
{
    QTest::addColumn<QString>("set");
    QTest::addColumn<int>("world");
    QTest::addColumn<int>("dp");
    QTest::addColumn<int>("tp");
    QTest::addColumn<int>("ep");
    QTest::addColumn<int>("pp");
    QTest::addColumn<int>("collectivesPerRank");
    QTest::addColumn<int>("groupsUsed");
    QTest::addColumn<int>("p2pPairs");
    // Per-rank collective counts from stageRankFiles_data: llama 4 + 12 + 8, moe 6 + 12 + 16. Groups used:
    // llama dp groups 1-4 and tp groups 5-8; moe dp groups 1-2 and ep groups 11-12. Every llama rank sends 2.
    QTest::newRow("llama-dp2tp2pp2") << "llama-dp2tp2pp2" << 8 << 2 << 2 << 1 << 2 << 24 << 8 << 16;
    QTest::newRow("moe-dp2ep2") << "moe-dp2ep2" << 4 << 2 << 1 << 2 << 1 << 34 << 4 << 0;
}

void TestChakra::stageTraceSets()
{
    QFETCH(QString, set);
    QFETCH(int, world);
    QFETCH(int, dp);
    QFETCH(int, tp);
    QFETCH(int, ep);
    QFETCH(int, pp);
    QFETCH(int, collectivesPerRank);
    QFETCH(int, groupsUsed);
    QFETCH(int, p2pPairs);
    const fs::path dir = s_chakraData / "stage" / set.toStdString();
    const TraceSetSummary s = inspectTraceSet(dir);
    QCOMPARE(s.prefix, std::string("workload"));
    QCOMPARE(s.worldSize, world);
    QCOMPARE(s.ranks.size(), size_t(world));
    // The JSON equals the groups derived from STAGE's rule; for dp=tp=pp=2 also the literal of §3.
    QCOMPARE(s.groups, stageGroups(dp, tp, 1, ep, pp));
    if (world == 8) {
        const std::map<int, std::vector<int>> literal = { { 1, { 0, 1 } }, { 2, { 2, 3 } }, { 3, { 4, 5 } },
            { 4, { 6, 7 } }, { 5, { 0, 2 } }, { 6, { 1, 3 } }, { 7, { 4, 6 } }, { 8, { 5, 7 } }, { 9, { 0 } },
            { 16, { 7 } } };
        for (const auto& [id, members] : literal)
            QCOMPARE(s.groups.at(id), members);
        QCOMPARE(s.groups.size(), size_t(16));
    }
    // STAGE's sets simulate to completion (README): consistent collectives, every send matched.
    QVERIFY2(onlyReplayErrors(s.findings), describe(s.findings).c_str());
    QCOMPARE(s.collectivesChecked, uint64_t(world * collectivesPerRank));
    QCOMPARE(s.groupsChecked, uint64_t(groupsUsed));
    QCOMPARE(s.p2pMatched, uint64_t(p2pPairs));
    QVERIFY(findCheck(s.findings, "singleton-collective") == nullptr);
    for (const auto& r : s.ranks)
        QVERIFY(r.readError.empty()); // their errors are the replay's, checked per file in stageRankFiles
}

// --- inspect ----------------------------------------------------------------------------------------------

void TestChakra::inspectFindings_data()
{
    QTest::addColumn<ChakraTrace>("trace");
    QTest::addColumn<QString>("check");
    QTest::addColumn<FindingSeverity>("severity");
    using S = FindingSeverity;
    const ChakraTrace base = cleanTrace();
    auto with = [&](auto&& mutate) {
        ChakraTrace t = base;
        mutate(t);
        return t;
    };
    auto setAttr = [](ChakraNode& n, ChakraAttribute a) {
        for (auto& x : n.attrs) {
            if (x.name == a.name) {
                x = std::move(a);
                return;
            }
        }
        n.attrs.push_back(std::move(a));
    };
    auto dropAttr = [](ChakraNode& n, const std::string& name) {
        std::erase_if(n.attrs, [&](const ChakraAttribute& a) { return a.name == name; });
    };

    // §8 / §9 item 3: ASTRA-sim aborts or drops work.
    QTest::newRow("dangling dep") << with([](ChakraTrace& t) { t.nodes[2].dataDeps = { 99 }; }) << "dangling-dep"
                                  << S::Error;
    QTest::newRow("cycle") << with([](ChakraTrace& t) { t.nodes[0].dataDeps = { 2 }; }) << "cycle" << S::Error;
    QTest::newRow("self dependency") << with([](ChakraTrace& t) { t.nodes[1].ctrlDeps = { 1 }; }) << "cycle"
                                     << S::Error;
    QTest::newRow("duplicate id") << with([](ChakraTrace& t) { t.nodes[2].id = 1; }) << "duplicate-id" << S::Error;
    QTest::newRow("no nodes") << with([](ChakraTrace& t) { t.nodes.clear(); }) << "no-nodes" << S::Error;
    QTest::newRow("metadata node") << with([](ChakraTrace& t) { t.nodes[2].type = ChakraNodeType::Metadata; })
                                   << "metadata-node" << S::Error;
    QTest::newRow("type outside schema") << with([](ChakraTrace& t) { t.nodes[2].type = ChakraNodeType(42); })
                                         << "unknown-node-type" << S::Error;
    QTest::newRow("invalid node with child")
        << with([](ChakraTrace& t) { t.nodes[0].type = ChakraNodeType::Invalid; }) << "invalid-node" << S::Error;
    // §4.2: REDUCE aborts, BROADCAST is replayed; §6: a zero all-gather loops forever.
    QTest::newRow("REDUCE") << with(
        [&](ChakraTrace& t) { setAttr(t.nodes[1], chakraCommType(ChakraCollective::Reduce)); })
                            << "unsupported-collective" << S::Error;
    QTest::newRow("BROADCAST") << with([&](ChakraTrace& t) {
        setAttr(t.nodes[1], chakraCommType(ChakraCollective::Broadcast));
    }) << "broadcast-replayed" << S::Warning;
    QTest::newRow("zero all-gather") << with([&](ChakraTrace& t) {
        setAttr(t.nodes[1], chakraCommType(ChakraCollective::AllGather));
        setAttr(t.nodes[1], chakraCommSize(0));
    }) << "allgather-size" << S::Error;
    // §5.1/§5.2: kinds.
    QTest::newRow("pg_name as integer") << with([&](ChakraTrace& t) {
        setAttr(t.nodes[1], ChakraAttribute::ofInt32("pg_name", 1));
    }) << "attr-kind" << S::Error;
    QTest::newRow("comm_type as double") << with([&](ChakraTrace& t) {
        setAttr(t.nodes[1], ChakraAttribute::ofDouble("comm_type", 0));
    }) << "attr-kind" << S::Error;
    QTest::newRow("is_cpu_op as int32") << with([&](ChakraTrace& t) {
        setAttr(t.nodes[1], ChakraAttribute::ofInt32("is_cpu_op", 0));
    }) << "noncanonical-attr-kind" << S::Warning;
    QTest::newRow("comm_size as uint32") << with([&](ChakraTrace& t) {
        setAttr(t.nodes[1], ChakraAttribute::ofUint32("comm_size", 1024));
    }) << "noncanonical-attr-kind" << S::Warning;
    QTest::newRow("duplicate attribute") << with([&](ChakraTrace& t) { t.nodes[0].attrs.push_back(chakraNumOps(1)); })
                                         << "duplicate-attr" << S::Warning;
    // §7.6: required attributes.
    QTest::newRow("collective without comm_size")
        << with([&](ChakraTrace& t) { dropAttr(t.nodes[1], "comm_size"); }) << "missing-attr" << S::Error;
    QTest::newRow("send without comm_tag") << with([&](ChakraTrace& t) {
        t.nodes.push_back(send(3, 1, 5, 64, { 2 }));
        dropAttr(t.nodes[3], "comm_tag");
    }) << "missing-attr" << S::Error;
    QTest::newRow("memory node without tensor_size")
        << with([&](ChakraTrace& t) { t.nodes.push_back(makeNode(3, ChakraNodeType::MemLoad, { 2 })); })
        << "missing-attr" << S::Error;
    QTest::newRow("collective on CPU") << with([&](ChakraTrace& t) { setAttr(t.nodes[1], chakraIsCpuOp(true)); })
                                       << "comm-cpu-op" << S::Error;
    QTest::newRow("compute without cost") << with([&](ChakraTrace& t) {
        t.nodes[2].attrs.clear();
        t.nodes[2].durationMicros = 0;
    }) << "comp-no-cost" << S::Warning;
    // §9 item 1, item 9.
    QTest::newRow("empty version") << with([](ChakraTrace& t) { t.metadata.version.clear(); }) << "version-empty"
                                   << S::Warning;
    QTest::newRow("size not an integer") << with([&](ChakraTrace& t) {
        for (auto& n : t.nodes)
            n.attrs.push_back(ChakraAttribute::ofStringList("outputs", { "y" + std::to_string(n.id), "16384.0" }));
    }) << "io-size-not-integer" << S::Warning;
    QTest::newRow("odd tensor list") << with([&](ChakraTrace& t) {
        t.nodes[0].attrs.push_back(ChakraAttribute::ofStringList("inputs", { "x" }));
    }) << "io-odd-length" << S::Warning;
    QTest::newRow("tensor written twice") << with([&](ChakraTrace& t) {
        for (auto& n : t.nodes)
            n.attrs.push_back(chakraOutputs({ { "y", 8 } }));
    }) << "tensor-written-twice" << S::Warning;
    QTest::newRow("inputs on some nodes only") << with([&](ChakraTrace& t) {
        t.nodes[0].attrs.push_back(chakraInputs({ { "x", 8 } }));
    }) << "io-missing" << S::Warning;
    // The as-soon-as-ready replay (chakrareplay.h): what ASTRA-sim's workload layer makes of the file.
    // A roofline compute node with num_ops 0: perf = min(bw * 0 / size, peak) = 0, time 0/0 (the stall of the
    // ASTRA-sim runs this check exists for).
    QTest::newRow("compute with num_ops 0") << with([&](ChakraTrace& t) {
        t.nodes[2].durationMicros = 0;
        setAttr(t.nodes[2], chakraNumOps(0));
    }) << "num-ops-not-positive" << S::Error;
    // Forward 0 -> 1, backward 2, then a backward re-gather 3 that nothing holds back: it is ready at t = 0, so
    // it runs during the forward pass.
    QTest::newRow("backward collective without dependency") << with([&](ChakraTrace& t) {
        t.nodes = { comp(0), comp(1, { 0 }), comp(2, { 1 }), coll(3, ChakraCollective::AllGather, 1024, 1),
            comp(4, { 2, 3 }) };
    }) << "escapes-phase" << S::Error;
    // Two ops that read the same input: the second does not wait for the first, but a single compute stream
    // issuing ready nodes by ascending id runs it second anyway.
    QTest::newRow("independent siblings") << with([&](ChakraTrace& t) {
        t.nodes = { comp(0), comp(1, { 0 }), comp(2, { 0 }) };
    }) << "order-by-timing" << S::Note;
    QTest::newRow("unread output") << with([&](ChakraTrace& t) {
        t.nodes[0].attrs.push_back(chakraInputs({}));
        t.nodes[0].attrs.push_back(chakraOutputs({ { "a", 100 } }));
        t.nodes[1].attrs.push_back(chakraInputs({ { "a", 100 } }));
        t.nodes[1].attrs.push_back(chakraOutputs({ { "b", 200 } }));
        t.nodes[2].attrs.push_back(chakraInputs({ { "b", 200 } }));
        t.nodes[2].attrs.push_back(chakraOutputs({ { "c", 50 } }));
    }) << "unread-output" << S::Error;
    // Legitimate properties: notes.
    QTest::newRow("ctrl deps") << with([](ChakraTrace& t) { t.nodes[2].ctrlDeps = { 0 }; }) << "ctrl-deps" << S::Note;
    QTest::newRow("ids not dense") << with([](ChakraTrace& t) {
        for (auto& n : t.nodes) {
            n.id += 10;
            for (auto& d : n.dataDeps)
                d += 10;
        }
    }) << "ids-not-dense" << S::Note;
    QTest::newRow("file order not topological")
        << with([](ChakraTrace& t) { std::swap(t.nodes[0], t.nodes[2]); }) << "not-topological" << S::Note;
    QTest::newRow("clean") << base << QString() << S::Note;
}

void TestChakra::inspectFindings()
{
    QFETCH(ChakraTrace, trace);
    QFETCH(QString, check);
    QFETCH(FindingSeverity, severity);
    const TraceSummary s = inspectTrace(trace, "t");
    if (check.isEmpty()) {
        QVERIFY2(s.findings.empty(), describe(s.findings).c_str());
        QVERIFY(s.denseIds && s.topologicalOrder && s.acyclic);
        return;
    }
    const TraceFinding* f = findCheck(s.findings, check.toStdString());
    QVERIFY2(f, describe(s.findings).c_str());
    QCOMPARE(f->severity, severity);
    QVERIFY(f->count >= 1);
    QVERIFY(!f->message.empty());
    // Findings come sorted: errors, then warnings, then notes.
    for (size_t i = 1; i < s.findings.size(); ++i)
        QVERIFY(s.findings[i - 1].severity <= s.findings[i].severity);
}

void TestChakra::fuzzRegressions()
{
    // tests/data/chakra/regressions/README.md: a trace with duplicate ids, a dangling dependency and a cycle whose
    // nodes read tensors before any write. Its readers never run, so those tensors have no lifetime at all.
    const fs::path path = s_chakraData / "regressions" / "replay-unrun-reader.et";
    std::string readError;
    const TraceSummary s = inspectTraceFile(path, &readError);
    QVERIFY2(readError.empty(), readError.c_str());
    QCOMPARE(s.nodeCount, uint64_t(306));
    QVERIFY(findCheck(s.findings, "cycle"));
    QVERIFY(findCheck(s.findings, "duplicate-id"));
    QVERIFY(s.replayTensorPeakBytes.has_value());
}

void TestChakra::replayMemoryPeak()
{
    // comp 0 writes a (100 B); collective 1 reads a, writes b (200 B); comp 2 reads b, writes c (50 B); comp 3
    // reads c. A tensor lives from its writer's start to its last reader's end (ASTRA-sim's track-local-mem),
    // so a and b are both alive while 1 runs: peak 100 + 200 = 300 B (then b + c = 250 B).
    ChakraTrace t;
    t.metadata = metadata();
    t.nodes = { comp(0), coll(1, ChakraCollective::AllReduce, 1024, 1, { 0 }), comp(2, { 1 }), comp(3, { 2 }) };
    const std::vector<std::pair<std::vector<ChakraTensorRef>, std::vector<ChakraTensorRef>>> io = {
        { {}, { { "a", 100 } } }, { { { "a", 100 } }, { { "b", 200 } } }, { { { "b", 200 } }, { { "c", 50 } } },
        { { { "c", 50 } }, {} }
    };
    for (size_t i = 0; i < t.nodes.size(); ++i) {
        t.nodes[i].attrs.push_back(chakraInputs(io[i].first));
        t.nodes[i].attrs.push_back(chakraOutputs(io[i].second));
    }
    TraceSummary s = inspectTrace(t);
    QCOMPARE(s.replayTensorPeakBytes, std::optional<uint64_t>(300));
    QCOMPARE(s.unreadOutputs, uint64_t(0));
    QCOMPARE(s.escapes, uint64_t(0));
    QCOMPARE(s.count(FindingSeverity::Error), size_t(0));

    // The producer states its own peak: equal is a note, 280 B (300 is 7 % more) is an error.
    t.metadata.attrs.push_back(ChakraAttribute::ofInt64("peak_memory_bytes", 300));
    s = inspectTrace(t);
    QCOMPARE(s.statedPeakBytes, std::optional<int64_t>(300));
    QCOMPARE(findCheck(s.findings, "replay-memory-peak")->severity, FindingSeverity::Note);
    t.metadata.attrs.back() = ChakraAttribute::ofInt64("peak_memory_bytes", 280);
    s = inspectTrace(t);
    QCOMPARE(findCheck(s.findings, "replay-memory-peak")->severity, FindingSeverity::Error);
}

void TestChakra::inspectGraphFacts()
{
    // Diamond 0 -> {1, 2} -> 3 plus an isolated node 4: roots {0, 4}, longest chain 0-1-3 = 3 nodes.
    ChakraTrace t;
    t.metadata = metadata();
    t.nodes = { comp(0), comp(1, { 0 }), comp(2, { 0 }), comp(3, { 1, 2 }), comp(4) };
    TraceSummary s = inspectTrace(t);
    QCOMPARE(s.roots, uint64_t(2));
    QCOMPARE(s.longestPathNodes, uint64_t(3));
    QCOMPARE(s.dataDepEdges, uint64_t(4));
    QVERIFY(s.denseIds && s.topologicalOrder && s.acyclic);

    // 1 -> 2 -> 3 -> 1 behind root 0; node 4 depends on the cycle: 4 nodes never run.
    t.nodes = { comp(0), comp(1, { 0, 3 }), comp(2, { 1 }), comp(3, { 2 }), comp(4, { 3 }) };
    s = inspectTrace(t);
    QVERIFY(!s.acyclic);
    QCOMPARE(s.nodesOnOrBehindCycles, uint64_t(4));
    QCOMPARE(s.longestPathNodes, uint64_t(0));
    const TraceFinding* f = findCheck(s.findings, "cycle");
    QVERIFY(f);
    QVERIFY2(f->message.find("1 -> 2 -> 3 -> 1") != std::string::npos, f->message.c_str());

    t.nodes = { comp(0), comp(1, { 7, 8 }) };
    s = inspectTrace(t);
    QCOMPARE(s.danglingDeps, uint64_t(2));
    QCOMPARE(findCheck(s.findings, "dangling-dep")->count, uint64_t(2));
}

void TestChakra::inspectTotals()
{
    ChakraTrace t;
    t.metadata = metadata();
    ChakraNode e = comp(2, {}, 7, 3);
    e.attrs[2] = chakraOpType("E");
    t.nodes = { comp(0, {}, 100, 10), comp(1, {}, 200, 20), e, coll(3, ChakraCollective::AllReduce, 64, 1),
        coll(4, ChakraCollective::AllReduce, 32, 1), coll(5, ChakraCollective::AllGather, 16, 2), send(6, 1, 9, 8),
        recv(7, 1, 9, 4) };
    const TraceSummary s = inspectTrace(t);
    QCOMPARE(s.compute.size(), size_t(2));
    QCOMPARE(s.compute[0].opType, std::string("E"));
    QCOMPARE(s.compute[0].nodes, uint64_t(1));
    QCOMPARE(s.compute[0].numOps, int64_t(7));
    QCOMPARE(s.compute[1].opType, std::string("M"));
    QCOMPARE(s.compute[1].nodes, uint64_t(2));
    QCOMPARE(s.compute[1].numOps, int64_t(300));
    QCOMPARE(s.compute[1].tensorSize, uint64_t(30));
    QCOMPARE(s.compute[1].durationMicros, uint64_t(10));
    QCOMPARE(s.totalNumOps, int64_t(307));
    QCOMPARE(s.totalTensorSize, uint64_t(33));
    QCOMPARE(s.collectives.size(), size_t(2));
    QCOMPARE(s.collectives[0].commType, int64_t(0));
    QCOMPARE(s.collectives[0].pgName, std::string("1"));
    QCOMPARE(s.collectives[0].count, uint64_t(2));
    QCOMPARE(s.collectives[0].totalCommSize, int64_t(96));
    QCOMPARE(s.collectives[1].commType, int64_t(2));
    QCOMPARE(s.collectives[1].totalCommSize, int64_t(16));
    QCOMPARE(s.p2p.sends, uint64_t(1));
    QCOMPARE(s.p2p.sendSize, int64_t(8));
    QCOMPARE(s.p2p.recvs, uint64_t(1));
    QCOMPARE(s.p2p.recvSize, int64_t(4));
    QCOMPARE(s.nodesByType.at(4), uint64_t(3));
    QCOMPARE(s.nodesByType.at(7), uint64_t(3));
}

void TestChakra::deepGraphsAreIterative()
{
    // A recursive DFS would overflow the stack long before 300,000 levels.
    constexpr uint64_t n = 300000;
    ChakraTrace t;
    t.metadata = metadata();
    t.nodes.reserve(n);
    for (uint64_t i = 0; i < n; ++i)
        t.nodes.push_back(
            makeNode(i, ChakraNodeType::Comp, i ? std::vector<uint64_t> { i - 1 } : std::vector<uint64_t> {}));
    TraceSummary s = inspectTrace(t);
    QVERIFY(s.acyclic);
    QCOMPARE(s.longestPathNodes, n);

    t.nodes[0].dataDeps = { n - 1 }; // close the ring: no root at all
    s = inspectTrace(t);
    QVERIFY(!s.acyclic);
    QCOMPARE(s.nodesOnOrBehindCycles, n);
    QCOMPARE(s.roots, uint64_t(0));
    QVERIFY(findCheck(s.findings, "cycle")->message.find("ASTRA-sim aborts at load") != std::string::npos);
}

void TestChakra::traceSetDefects_data()
{
    QTest::addColumn<int>("mutation");
    QTest::addColumn<QString>("check");
    QTest::addColumn<FindingSeverity>("severity");
    QTest::addColumn<QString>("text");
    using S = FindingSeverity;
    QTest::newRow("consistent") << 0 << QString() << S::Note << QString();
    QTest::newRow("size differs")
        << 1 << "collective-mismatch" << S::Error
        << "rank 0 node 1 ALL_REDUCE comm_size 1024 vs rank 1 node 1 ALL_REDUCE comm_size 2048";
    QTest::newRow("collective missing") << 2 << "collective-mismatch" << S::Error
                                        << "rank 0 issues 2 collectives, rank 1 issues 1";
    QTest::newRow("order differs") << 3 << "collective-order-differs" << S::Warning << "group 1 [0, 1]";
    QTest::newRow("unknown group") << 4 << "pg-unknown" << S::Error << "pg_name \"7\"";
    QTest::newRow("singleton group") << 5 << "singleton-collective" << S::Error << "single-member group 2 [0]";
    QTest::newRow("not a member") << 6 << "pg-not-member" << S::Error << "does not contain rank 1";
    QTest::newRow("tag differs") << 7 << "send-without-recv" << S::Error
                                 << "SEND (src 0, dst 1, tag 5, size 128) has no matching RECV";
    QTest::newRow("missing rank") << 8 << "missing-rank" << S::Error << "w.1.et is missing";
    QTest::newRow("no groups JSON") << 9 << "pg-unknown" << S::Error << "(missing) w.json";
    QTest::newRow("send from another rank") << 10 << "send-src-not-self" << S::Error << "comm_src 1";
    QTest::newRow("peer out of range") << 11 << "p2p-peer-out-of-range" << S::Error << "peer rank 5";
}

void TestChakra::traceSetDefects()
{
    QFETCH(int, mutation);
    QFETCH(QString, check);
    QFETCH(FindingSeverity, severity);
    QFETCH(QString, text);
    QTemporaryDir dir;
    const fs::path d = tempPath(dir);
    // Two ranks, group 1 = [0, 1], group 2 = [0]; each rank: compute, AR(1), AG(1); rank 0 sends to rank 1.
    for (int rank : { 0, 1 }) {
        if (mutation == 8 && rank == 1)
            continue;
        ChakraTrace t;
        t.metadata = metadata();
        t.nodes = { comp(0), coll(1, ChakraCollective::AllReduce, 1024, 1, { 0 }),
            coll(2, ChakraCollective::AllGather, 256, 1, { 1 }) };
        if (rank == 0) {
            t.nodes.push_back(send(3, 1, 5, 128, { 2 }));
        } else {
            t.nodes.push_back(recv(3, 0, 5, 128));
        }
        if (rank == 1 && mutation == 1)
            t.nodes[1] = coll(1, ChakraCollective::AllReduce, 2048, 1, { 0 });
        if (rank == 1 && mutation == 2)
            t.nodes.erase(t.nodes.begin() + 2);
        if (rank == 1 && mutation == 3) {
            t.nodes[1] = coll(1, ChakraCollective::AllGather, 256, 1, { 0 });
            t.nodes[2] = coll(2, ChakraCollective::AllReduce, 1024, 1, { 1 });
        }
        if (rank == 0 && mutation == 4)
            t.nodes.push_back(coll(4, ChakraCollective::AllReduce, 64, 7));
        if (rank == 0 && mutation == 5)
            t.nodes.push_back(coll(4, ChakraCollective::AllReduce, 64, 2));
        if (rank == 1 && mutation == 6)
            t.nodes.push_back(coll(4, ChakraCollective::AllReduce, 64, 2));
        if (rank == 1 && mutation == 7)
            t.nodes[3] = recv(3, 0, 6, 128);
        if (rank == 0 && mutation == 10)
            t.nodes[3].attrs.push_back(chakraCommSrc(1));
        if (rank == 0 && mutation == 11)
            t.nodes[3] = send(3, 5, 5, 128, { 2 });
        writeChakraTrace(d / ("w." + std::to_string(rank) + ".et"), t);
    }
    if (mutation == 8) {
        ChakraTrace t;
        t.metadata = metadata();
        t.nodes = { comp(0) };
        writeChakraTrace(d / "w.2.et", t);
    }
    if (mutation != 9)
        writeCommGroups(d / "w.json", { { 1, { 0, 1 } }, { 2, { 0 } } });

    const TraceSetSummary s = inspectTraceSet(d);
    if (check.isEmpty()) {
        QVERIFY2(s.count(FindingSeverity::Error) == 0 && s.count(FindingSeverity::Warning) == 0,
            describe(s.findings).c_str());
        QCOMPARE(s.worldSize, 2);
        QCOMPARE(s.groupsChecked, uint64_t(1));
        QCOMPARE(s.collectivesChecked, uint64_t(4));
        QCOMPARE(s.p2pMatched, uint64_t(1));
        return;
    }
    const TraceFinding* f = findCheck(s.findings, check.toStdString());
    QVERIFY2(f, describe(s.findings).c_str());
    QCOMPARE(f->severity, severity);
    QVERIFY2(QString::fromStdString(f->message).contains(text), f->message.c_str());
    if (mutation == 7)
        QVERIFY(findCheck(s.findings, "recv-without-send"));
}

void TestChakra::summaryRendering()
{
    ChakraTrace t;
    t.metadata = metadata();
    t.nodes = { comp(0, {}, 123456789, 10), coll(1, ChakraCollective::AllReduce, 64, 1, { 0 }),
        coll(2, ChakraCollective::ReduceScatter, 4096, 12, { 1 }) };
    const TraceSummary s = inspectTrace(t, "x.0.et");
    const std::string text = summaryToText(s);
    QVERIFY(text.rfind("trace: x.0.et", 0) == 0);
    // The collectives table: header and rows right-aligned to the same width.
    std::istringstream in(text);
    std::string line;
    std::vector<std::string> table;
    bool inTable = false;
    while (std::getline(in, line)) {
        if (line == "collectives:") {
            inTable = true;
            continue;
        }
        if (inTable && line.empty())
            break;
        if (inTable)
            table.push_back(line);
    }
    QCOMPARE(table.size(), size_t(3));
    QCOMPARE(table[1].size(), table[0].size());
    QCOMPARE(table[2].size(), table[0].size());
    QVERIFY(table[2].find("REDUCE_SCATTER") != std::string::npos);
    QVERIFY(text.find("findings: 0 errors, 0 warnings, 0 notes") != std::string::npos);

    const auto j = summaryToJson(s);
    QCOMPARE(j["total_num_ops"].get<int64_t>(), int64_t(123456789));
    QCOMPARE(j["collectives"][1]["comm_type"].get<std::string>(), std::string("REDUCE_SCATTER"));
    QCOMPARE(j["collectives"][1]["pg_name"].get<std::string>(), std::string("12"));
    QCOMPARE(j["graph"]["longest_path_nodes"].get<uint64_t>(), uint64_t(3));

    const TraceSetSummary set = inspectTraceSet(s_chakraData / "stage" / "llama-dp2tp2pp2");
    const std::string setText = summaryToText(set);
    QVERIFY2(setText.find("16 send/recv pairs matched") != std::string::npos, setText.c_str());
    QCOMPARE(summaryToJson(set)["world_size"].get<int>(), 8);
}

QTEST_GUILESS_MAIN(TestChakra)
#include "tst_chakra.moc"
