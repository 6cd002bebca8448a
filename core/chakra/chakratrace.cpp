// SPDX-License-Identifier: MIT
#include "chakra/chakratrace.h"

#include <limits>
#include <type_traits>

namespace stagecraft {

namespace {
    // Variant indices of ChakraAttrValue.
    enum ValueIndex : size_t
    {
        IdxNone = 0,
        IdxDouble,
        IdxFloat,
        IdxInt32,
        IdxInt64,
        IdxUint32,
        IdxUint64,
        IdxBool,
        IdxString,
        IdxDoubleList,
        IdxFloatList,
        IdxInt32List,
        IdxInt64List,
        IdxUint32List,
        IdxUint64List,
        IdxBoolList,
        IdxStringList,
    };
    static_assert(std::is_same_v<std::variant_alternative_t<IdxStringList, ChakraAttrValue>, std::vector<std::string>>);
    static_assert(std::is_same_v<std::variant_alternative_t<IdxBool, ChakraAttrValue>, bool>);
    static_assert(std::is_same_v<std::variant_alternative_t<IdxUint64, ChakraAttrValue>, uint64_t>);

    constexpr size_t NoIndex = std::numeric_limits<size_t>::max();
} // namespace

size_t chakraAttrValueIndex(ChakraAttrKind kind)
{
    switch (kind) {
    case ChakraAttrKind::None:
        return IdxNone;
    case ChakraAttrKind::Double:
        return IdxDouble;
    case ChakraAttrKind::Float:
        return IdxFloat;
    case ChakraAttrKind::Int32:
    case ChakraAttrKind::Sint32:
    case ChakraAttrKind::Sfixed32:
        return IdxInt32;
    case ChakraAttrKind::Int64:
    case ChakraAttrKind::Sint64:
    case ChakraAttrKind::Sfixed64:
        return IdxInt64;
    case ChakraAttrKind::Uint32:
    case ChakraAttrKind::Fixed32:
        return IdxUint32;
    case ChakraAttrKind::Uint64:
    case ChakraAttrKind::Fixed64:
        return IdxUint64;
    case ChakraAttrKind::Bool:
        return IdxBool;
    case ChakraAttrKind::String:
    case ChakraAttrKind::Bytes:
        return IdxString;
    case ChakraAttrKind::DoubleList:
        return IdxDoubleList;
    case ChakraAttrKind::FloatList:
        return IdxFloatList;
    case ChakraAttrKind::Int32List:
    case ChakraAttrKind::Sint32List:
    case ChakraAttrKind::Sfixed32List:
        return IdxInt32List;
    case ChakraAttrKind::Int64List:
    case ChakraAttrKind::Sint64List:
    case ChakraAttrKind::Sfixed64List:
        return IdxInt64List;
    case ChakraAttrKind::Uint32List:
    case ChakraAttrKind::Fixed32List:
        return IdxUint32List;
    case ChakraAttrKind::Uint64List:
    case ChakraAttrKind::Fixed64List:
        return IdxUint64List;
    case ChakraAttrKind::BoolList:
        return IdxBoolList;
    case ChakraAttrKind::StringList:
    case ChakraAttrKind::BytesList:
        return IdxStringList;
    }
    return NoIndex;
}

std::string chakraAttrKindName(ChakraAttrKind kind)
{
    switch (kind) {
    case ChakraAttrKind::None:
        return "none";
    case ChakraAttrKind::Double:
        return "double_val";
    case ChakraAttrKind::DoubleList:
        return "double_list";
    case ChakraAttrKind::Float:
        return "float_val";
    case ChakraAttrKind::FloatList:
        return "float_list";
    case ChakraAttrKind::Int32:
        return "int32_val";
    case ChakraAttrKind::Int32List:
        return "int32_list";
    case ChakraAttrKind::Int64:
        return "int64_val";
    case ChakraAttrKind::Int64List:
        return "int64_list";
    case ChakraAttrKind::Uint32:
        return "uint32_val";
    case ChakraAttrKind::Uint32List:
        return "uint32_list";
    case ChakraAttrKind::Uint64:
        return "uint64_val";
    case ChakraAttrKind::Uint64List:
        return "uint64_list";
    case ChakraAttrKind::Sint32:
        return "sint32_val";
    case ChakraAttrKind::Sint32List:
        return "sint32_list";
    case ChakraAttrKind::Sint64:
        return "sint64_val";
    case ChakraAttrKind::Sint64List:
        return "sint64_list";
    case ChakraAttrKind::Fixed32:
        return "fixed32_val";
    case ChakraAttrKind::Fixed32List:
        return "fixed32_list";
    case ChakraAttrKind::Fixed64:
        return "fixed64_val";
    case ChakraAttrKind::Fixed64List:
        return "fixed64_list";
    case ChakraAttrKind::Sfixed32:
        return "sfixed32_val";
    case ChakraAttrKind::Sfixed32List:
        return "sfixed32_list";
    case ChakraAttrKind::Sfixed64:
        return "sfixed64_val";
    case ChakraAttrKind::Sfixed64List:
        return "sfixed64_list";
    case ChakraAttrKind::Bool:
        return "bool_val";
    case ChakraAttrKind::BoolList:
        return "bool_list";
    case ChakraAttrKind::String:
        return "string_val";
    case ChakraAttrKind::StringList:
        return "string_list";
    case ChakraAttrKind::Bytes:
        return "bytes_val";
    case ChakraAttrKind::BytesList:
        return "bytes_list";
    }
    return "kind(" + std::to_string(static_cast<int32_t>(kind)) + ")";
}

bool chakraAttrKindIsInteger(ChakraAttrKind kind)
{
    switch (kind) {
    case ChakraAttrKind::Int32:
    case ChakraAttrKind::Int64:
    case ChakraAttrKind::Uint32:
    case ChakraAttrKind::Uint64:
    case ChakraAttrKind::Sint32:
    case ChakraAttrKind::Sint64:
    case ChakraAttrKind::Fixed32:
    case ChakraAttrKind::Fixed64:
    case ChakraAttrKind::Sfixed32:
    case ChakraAttrKind::Sfixed64:
    case ChakraAttrKind::Bool:
        return true;
    default:
        return false;
    }
}

bool chakraAttrKindIsList(ChakraAttrKind kind)
{
    const auto v = static_cast<int32_t>(kind);
    return v >= 4 && v <= 32 && v % 2 == 0;
}

bool ChakraAttribute::isConsistent() const
{
    return value.index() == chakraAttrValueIndex(kind);
}

std::optional<int64_t> ChakraAttribute::toInt64() const
{
    if (!chakraAttrKindIsInteger(kind) || !isConsistent())
        return std::nullopt;
    switch (value.index()) {
    case IdxInt32:
        return std::get<int32_t>(value);
    case IdxInt64:
        return std::get<int64_t>(value);
    case IdxUint32:
        return std::get<uint32_t>(value);
    case IdxUint64: {
        const uint64_t v = std::get<uint64_t>(value);
        if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
            return std::nullopt;
        return static_cast<int64_t>(v);
    }
    case IdxBool:
        return std::get<bool>(value) ? 1 : 0;
    default:
        return std::nullopt;
    }
}

std::optional<uint64_t> ChakraAttribute::toUint64() const
{
    if (kind == ChakraAttrKind::Uint64 || kind == ChakraAttrKind::Fixed64) {
        if (!isConsistent())
            return std::nullopt;
        return std::get<uint64_t>(value);
    }
    const auto v = toInt64();
    if (!v || *v < 0)
        return std::nullopt;
    return static_cast<uint64_t>(*v);
}

std::optional<bool> ChakraAttribute::toBool() const
{
    if (kind == ChakraAttrKind::Uint64 || kind == ChakraAttrKind::Fixed64) {
        if (!isConsistent())
            return std::nullopt;
        return std::get<uint64_t>(value) != 0;
    }
    const auto v = toInt64();
    if (!v)
        return std::nullopt;
    return *v != 0;
}

std::optional<double> ChakraAttribute::toDouble() const
{
    if (!isConsistent())
        return std::nullopt;
    if (kind == ChakraAttrKind::Double)
        return std::get<double>(value);
    if (kind == ChakraAttrKind::Float)
        return static_cast<double>(std::get<float>(value));
    if (kind == ChakraAttrKind::Uint64 || kind == ChakraAttrKind::Fixed64)
        return static_cast<double>(std::get<uint64_t>(value));
    const auto v = toInt64();
    if (!v)
        return std::nullopt;
    return static_cast<double>(*v);
}

const std::string* ChakraAttribute::stringValue() const
{
    if (kind != ChakraAttrKind::String || !isConsistent())
        return nullptr;
    return &std::get<std::string>(value);
}

const std::vector<std::string>* ChakraAttribute::stringListValue() const
{
    if (kind != ChakraAttrKind::StringList || !isConsistent())
        return nullptr;
    return &std::get<std::vector<std::string>>(value);
}

ChakraAttribute ChakraAttribute::of(std::string name, ChakraAttrKind kind, ChakraAttrValue v)
{
    ChakraAttribute a;
    a.name = std::move(name);
    a.kind = kind;
    a.value = std::move(v);
    return a;
}

ChakraAttribute ChakraAttribute::none(std::string name)
{
    return of(std::move(name), ChakraAttrKind::None, std::monostate {});
}

ChakraAttribute ChakraAttribute::ofDouble(std::string name, double v)
{
    return of(std::move(name), ChakraAttrKind::Double, v);
}

ChakraAttribute ChakraAttribute::ofFloat(std::string name, float v)
{
    return of(std::move(name), ChakraAttrKind::Float, v);
}

ChakraAttribute ChakraAttribute::ofInt32(std::string name, int32_t v)
{
    return of(std::move(name), ChakraAttrKind::Int32, v);
}

ChakraAttribute ChakraAttribute::ofInt64(std::string name, int64_t v)
{
    return of(std::move(name), ChakraAttrKind::Int64, v);
}

ChakraAttribute ChakraAttribute::ofUint32(std::string name, uint32_t v)
{
    return of(std::move(name), ChakraAttrKind::Uint32, v);
}

ChakraAttribute ChakraAttribute::ofUint64(std::string name, uint64_t v)
{
    return of(std::move(name), ChakraAttrKind::Uint64, v);
}

ChakraAttribute ChakraAttribute::ofBool(std::string name, bool v)
{
    return of(std::move(name), ChakraAttrKind::Bool, v);
}

ChakraAttribute ChakraAttribute::ofString(std::string name, std::string v)
{
    return of(std::move(name), ChakraAttrKind::String, std::move(v));
}

ChakraAttribute ChakraAttribute::ofBytes(std::string name, std::string v)
{
    return of(std::move(name), ChakraAttrKind::Bytes, std::move(v));
}

ChakraAttribute ChakraAttribute::ofStringList(std::string name, std::vector<std::string> v)
{
    return of(std::move(name), ChakraAttrKind::StringList, std::move(v));
}

ChakraAttribute ChakraAttribute::ofBoolList(std::string name, std::vector<bool> v)
{
    return of(std::move(name), ChakraAttrKind::BoolList, std::move(v));
}

ChakraAttribute ChakraAttribute::ofInt64List(std::string name, std::vector<int64_t> v)
{
    return of(std::move(name), ChakraAttrKind::Int64List, std::move(v));
}

ChakraAttribute ChakraAttribute::ofUint64List(std::string name, std::vector<uint64_t> v)
{
    return of(std::move(name), ChakraAttrKind::Uint64List, std::move(v));
}

ChakraAttribute ChakraAttribute::ofDoubleList(std::string name, std::vector<double> v)
{
    return of(std::move(name), ChakraAttrKind::DoubleList, std::move(v));
}

const ChakraAttribute* findChakraAttr(const std::vector<ChakraAttribute>& attrs, std::string_view name)
{
    for (const auto& a : attrs) {
        if (a.name == name)
            return &a;
    }
    return nullptr;
}

std::optional<int64_t> ChakraNode::intAttr(std::string_view name) const
{
    const auto* a = attr(name);
    return a ? a->toInt64() : std::nullopt;
}

std::optional<uint64_t> ChakraNode::uintAttr(std::string_view name) const
{
    const auto* a = attr(name);
    return a ? a->toUint64() : std::nullopt;
}

std::optional<bool> ChakraNode::boolAttr(std::string_view name) const
{
    const auto* a = attr(name);
    return a ? a->toBool() : std::nullopt;
}

std::optional<std::string> ChakraNode::stringAttr(std::string_view name) const
{
    const auto* a = attr(name);
    const std::string* s = a ? a->stringValue() : nullptr;
    if (!s)
        return std::nullopt;
    return *s;
}

std::string chakraNodeTypeName(ChakraNodeType type)
{
    switch (type) {
    case ChakraNodeType::Invalid:
        return "INVALID_NODE";
    case ChakraNodeType::Metadata:
        return "METADATA_NODE";
    case ChakraNodeType::MemLoad:
        return "MEM_LOAD_NODE";
    case ChakraNodeType::MemStore:
        return "MEM_STORE_NODE";
    case ChakraNodeType::Comp:
        return "COMP_NODE";
    case ChakraNodeType::CommSend:
        return "COMM_SEND_NODE";
    case ChakraNodeType::CommRecv:
        return "COMM_RECV_NODE";
    case ChakraNodeType::CommColl:
        return "COMM_COLL_NODE";
    }
    return "NodeType(" + std::to_string(static_cast<int32_t>(type)) + ")";
}

std::string chakraCollectiveName(int64_t commType)
{
    switch (commType) {
    case 0:
        return "ALL_REDUCE";
    case 1:
        return "REDUCE";
    case 2:
        return "ALL_GATHER";
    case 3:
        return "GATHER";
    case 4:
        return "SCATTER";
    case 5:
        return "BROADCAST";
    case 6:
        return "ALL_TO_ALL";
    case 7:
        return "REDUCE_SCATTER";
    case 8:
        return "REDUCE_SCATTER_BLOCK";
    case 9:
        return "BARRIER";
    default:
        return "CollectiveCommType(" + std::to_string(commType) + ")";
    }
}

} // namespace stagecraft
