// SPDX-License-Identifier: MIT
// Plain C++ model of a Chakra execution trace (one rank file): no protobuf types here.
// Field meanings and numbers: shared/spec/chakra-et.md §3-§5.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace stagecraft {

/// Node.type (spec §4.1). The underlying value is the wire value; a value read from a file that is not one
/// of the named enumerators is kept as is (e.g. `ChakraNodeType{42}`), so `inspect` can report it.
enum class ChakraNodeType : int32_t
{
    Invalid = 0,
    Metadata = 1,
    MemLoad = 2,
    MemStore = 3,
    Comp = 4,
    CommSend = 5,
    CommRecv = 6,
    CommColl = 7,
};

/// CollectiveCommType (spec §4.2), the value of the `comm_type` attribute (stored as int64_val).
enum class ChakraCollective : int64_t
{
    AllReduce = 0,
    Reduce = 1,
    AllGather = 2,
    Gather = 3,
    Scatter = 4,
    Broadcast = 5,
    AllToAll = 6,
    ReduceScatter = 7,
    ReduceScatterBlock = 8,
    Barrier = 9,
};

/// Which member of AttributeProto's `oneof value` is set. The enumerator value is the protobuf field number
/// (spec §3.4), `None` = no member set (STAGE writes `outputs` that way on collectives).
enum class ChakraAttrKind : int32_t
{
    None = 0,
    Double = 3,
    DoubleList = 4,
    Float = 5,
    FloatList = 6,
    Int32 = 7,
    Int32List = 8,
    Int64 = 9,
    Int64List = 10,
    Uint32 = 11,
    Uint32List = 12,
    Uint64 = 13,
    Uint64List = 14,
    Sint32 = 15,
    Sint32List = 16,
    Sint64 = 17,
    Sint64List = 18,
    Fixed32 = 19,
    Fixed32List = 20,
    Fixed64 = 21,
    Fixed64List = 22,
    Sfixed32 = 23,
    Sfixed32List = 24,
    Sfixed64 = 25,
    Sfixed64List = 26,
    Bool = 27,
    BoolList = 28,
    String = 29,
    StringList = 30,
    Bytes = 31,
    BytesList = 32,
};

/// The C++ storage of an attribute value. Several kinds share one alternative (int32, sint32 and sfixed32 are
/// all `int32_t`; bytes are `std::string`), which is why ChakraAttribute keeps the kind separately.
using ChakraAttrValue = std::variant<std::monostate, double, float, int32_t, int64_t, uint32_t, uint64_t, bool,
    std::string, std::vector<double>, std::vector<float>, std::vector<int32_t>, std::vector<int64_t>,
    std::vector<uint32_t>, std::vector<uint64_t>, std::vector<bool>, std::vector<std::string>>;

/// The variant index that holds values of `kind` (e.g. 4 = int64_t for Int64 and Sint64 and Sfixed64).
size_t chakraAttrValueIndex(ChakraAttrKind kind);

/// The protobuf member name of a kind: "int64_val", "string_list", ...; "none" for None and
/// "kind(<n>)" for a value outside the schema.
std::string chakraAttrKindName(ChakraAttrKind kind);

/// True for the scalar integer kinds that ASTRA-sim's current feeder converts to integers: all int/uint/sint/
/// fixed/sfixed kinds and bool (spec §5.1).
bool chakraAttrKindIsInteger(ChakraAttrKind kind);

/// True for the 15 list kinds.
bool chakraAttrKindIsList(ChakraAttrKind kind);

/// One named attribute (AttributeProto). Invariant expected by the writer: `value` holds the alternative
/// `chakraAttrValueIndex(kind)`; the factories below guarantee it. Values are copied in; no sharing.
struct ChakraAttribute
{
    std::string name;
    std::string docString;
    ChakraAttrKind kind = ChakraAttrKind::None;
    ChakraAttrValue value;

    /// True if `value` holds the alternative that `kind` requires.
    bool isConsistent() const;

    /// The value as a signed 64-bit integer if the kind is an integer kind (incl. bool) and the value fits;
    /// this mirrors ASTRA-sim feeder_v3's conversions (spec §5.1). Lists, floats and strings give nullopt.
    std::optional<int64_t> toInt64() const;
    /// As toInt64(), for non-negative values up to 2^64-1.
    std::optional<uint64_t> toUint64() const;
    /// Integer kinds (incl. bool): value != 0.
    std::optional<bool> toBool() const;
    /// Any scalar numeric kind (integers, bool, float, double) as a double.
    std::optional<double> toDouble() const;
    /// The string of a String kind (not Bytes); nullptr otherwise. Points into this attribute.
    const std::string* stringValue() const;
    /// The list of a StringList kind; nullptr otherwise.
    const std::vector<std::string>* stringListValue() const;

    static ChakraAttribute none(std::string name);
    static ChakraAttribute ofDouble(std::string name, double v);
    static ChakraAttribute ofFloat(std::string name, float v);
    static ChakraAttribute ofInt32(std::string name, int32_t v);
    static ChakraAttribute ofInt64(std::string name, int64_t v);
    static ChakraAttribute ofUint32(std::string name, uint32_t v);
    static ChakraAttribute ofUint64(std::string name, uint64_t v);
    static ChakraAttribute ofBool(std::string name, bool v);
    static ChakraAttribute ofString(std::string name, std::string v);
    static ChakraAttribute ofBytes(std::string name, std::string v);
    static ChakraAttribute ofStringList(std::string name, std::vector<std::string> v);
    static ChakraAttribute ofBoolList(std::string name, std::vector<bool> v);
    static ChakraAttribute ofInt64List(std::string name, std::vector<int64_t> v);
    static ChakraAttribute ofUint64List(std::string name, std::vector<uint64_t> v);
    static ChakraAttribute ofDoubleList(std::string name, std::vector<double> v);
    /// Any kind; the caller guarantees the value alternative matches (see isConsistent()).
    static ChakraAttribute of(std::string name, ChakraAttrKind kind, ChakraAttrValue v);

    bool operator==(const ChakraAttribute&) const = default;
};

/// IOInfo (spec §3.3): free-form strings. Present only when the message is present on the wire.
struct ChakraIOInfo
{
    std::string values;
    std::string shapes;
    std::string types;

    bool operator==(const ChakraIOInfo&) const = default;
};

/// Lookup helpers shared by nodes and metadata. Attributes are found by exact, case-sensitive name; the
/// first one with the name wins, as in ASTRA-sim's current feeder (spec §5).
const ChakraAttribute* findChakraAttr(const std::vector<ChakraAttribute>& attrs, std::string_view name);

/// One Node record. Ids are per file; dependencies name ids in the same file.
struct ChakraNode
{
    uint64_t id = 0;
    std::string name;
    ChakraNodeType type = ChakraNodeType::Invalid;
    std::vector<uint64_t> ctrlDeps;
    std::vector<uint64_t> dataDeps;
    uint64_t startTimeMicros = 0;
    uint64_t durationMicros = 0;
    std::optional<ChakraIOInfo> inputs;
    std::optional<ChakraIOInfo> outputs;
    std::vector<ChakraAttribute> attrs;

    /// First attribute called `name`, or nullptr. The pointer is valid while `attrs` is not modified.
    const ChakraAttribute* attr(std::string_view name) const
    {
        return findChakraAttr(attrs, name);
    }
    /// Typed reads through ChakraAttribute::toInt64()/toUint64()/toBool(); nullopt if missing or not
    /// convertible.
    std::optional<int64_t> intAttr(std::string_view name) const;
    std::optional<uint64_t> uintAttr(std::string_view name) const;
    std::optional<bool> boolAttr(std::string_view name) const;
    /// The value of a String-kind attribute; nullopt if missing or of another kind.
    std::optional<std::string> stringAttr(std::string_view name) const;

    bool operator==(const ChakraNode&) const = default;
};

/// GlobalMetadata, record 1 of every file.
struct ChakraMetadata
{
    std::string version;
    std::vector<ChakraAttribute> attrs;

    const ChakraAttribute* attr(std::string_view name) const
    {
        return findChakraAttr(attrs, name);
    }

    bool operator==(const ChakraMetadata&) const = default;
};

/// Facts about the file a trace was read from (empty for a trace built in memory). Not part of equality.
struct ChakraFramingInfo
{
    uint64_t fileBytes = 0; ///< size of the file in bytes
    uint64_t records = 0; ///< records read, metadata included
    std::vector<uint64_t> zeroLengthRecordOffsets; ///< byte offsets of the first 16 records of length 0
    uint64_t zeroLengthRecords = 0; ///< records whose length prefix is 0 (skipped: no node)
    uint64_t recordsWithUnknownFields = 0; ///< records carrying fields our schema does not know
};

/// One rank file: metadata and nodes in file order.
struct ChakraTrace
{
    ChakraMetadata metadata;
    std::vector<ChakraNode> nodes;
    ChakraFramingInfo framing;

    /// Compares metadata and nodes; `framing` is ignored.
    bool operator==(const ChakraTrace& other) const
    {
        return metadata == other.metadata && nodes == other.nodes;
    }
};

/// "COMP_NODE", ...; "NodeType(<n>)" for a value outside the schema.
std::string chakraNodeTypeName(ChakraNodeType type);
/// "ALL_REDUCE", ...; "CollectiveCommType(<n>)" for a value outside the schema.
std::string chakraCollectiveName(int64_t commType);

} // namespace stagecraft
