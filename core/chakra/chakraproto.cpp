// SPDX-License-Identifier: MIT
#include "chakra/chakraproto.h"

#include <type_traits>

namespace stagecraft::chakraproto {

bool isValidUtf8(std::string_view s)
{
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    const size_t n = s.size();
    size_t i = 0;
    while (i < n) {
        const unsigned char c = p[i];
        if (c < 0x80) {
            ++i;
            continue;
        }
        size_t len = 0;
        uint32_t cp = 0;
        if (c >= 0xC2 && c <= 0xDF) {
            len = 2;
            cp = c & 0x1F;
        } else if (c >= 0xE0 && c <= 0xEF) {
            len = 3;
            cp = c & 0x0F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            len = 4;
            cp = c & 0x07;
        } else {
            return false;
        }
        if (n - i < len)
            return false;
        for (size_t k = 1; k < len; ++k) {
            if ((p[i + k] & 0xC0) != 0x80)
                return false;
            cp = (cp << 6) | (p[i + k] & 0x3F);
        }
        if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += len;
    }
    return true;
}

namespace {
    std::string checkUtf8(std::string_view value, const std::string& what)
    {
        return isValidUtf8(value) ? std::string() : what + " is not valid UTF-8 (protobuf string fields must be)";
    }

    // AttributeProto::ValueCase enumerators equal the oneof field numbers, as do ChakraAttrKind values.
    static_assert(
        static_cast<int>(ChakraProtoMsg::AttributeProto::kDoubleVal) == static_cast<int>(ChakraAttrKind::Double));
    static_assert(
        static_cast<int>(ChakraProtoMsg::AttributeProto::kBytesList) == static_cast<int>(ChakraAttrKind::BytesList));
    static_assert(
        static_cast<int>(ChakraProtoMsg::AttributeProto::VALUE_NOT_SET) == static_cast<int>(ChakraAttrKind::None));

    template <typename Repeated, typename Vec> void assignList(Repeated* dst, const Vec& src)
    {
        dst->Reserve(static_cast<int>(src.size()));
        for (const auto& v : src) {
            if constexpr (std::is_same_v<typename Vec::value_type, std::string>)
                *dst->Add() = v;
            else
                dst->Add(v);
        }
    }

    template <typename Vec, typename Repeated> Vec listOf(const Repeated& src)
    {
        return Vec(src.begin(), src.end());
    }

    std::string toProto(const ChakraAttribute& a, ChakraProtoMsg::AttributeProto* out)
    {
        if (!a.isConsistent()) {
            return "attribute '" + a.name + "' has kind " + chakraAttrKindName(a.kind)
                + " but its value holds another type";
        }
        if (auto err = checkUtf8(a.name, "an attribute name"); !err.empty())
            return err;
        if (auto err = checkUtf8(a.docString, "the doc_string of attribute '" + a.name + "'"); !err.empty())
            return err;
        if (a.kind == ChakraAttrKind::String) {
            if (auto err = checkUtf8(std::get<std::string>(a.value), "the string_val of attribute '" + a.name + "'");
                !err.empty())
                return err;
        }
        if (a.kind == ChakraAttrKind::StringList) {
            for (const auto& v : std::get<std::vector<std::string>>(a.value)) {
                if (auto err = checkUtf8(v, "a string_list value of attribute '" + a.name + "'"); !err.empty())
                    return err;
            }
        }
        out->set_name(a.name);
        if (!a.docString.empty())
            out->set_doc_string(a.docString);
        const auto& v = a.value;
        using K = ChakraAttrKind;
        switch (a.kind) {
        case K::None:
            break;
        case K::Double:
            out->set_double_val(std::get<double>(v));
            break;
        case K::Float:
            out->set_float_val(std::get<float>(v));
            break;
        case K::Int32:
            out->set_int32_val(std::get<int32_t>(v));
            break;
        case K::Int64:
            out->set_int64_val(std::get<int64_t>(v));
            break;
        case K::Uint32:
            out->set_uint32_val(std::get<uint32_t>(v));
            break;
        case K::Uint64:
            out->set_uint64_val(std::get<uint64_t>(v));
            break;
        case K::Sint32:
            out->set_sint32_val(std::get<int32_t>(v));
            break;
        case K::Sint64:
            out->set_sint64_val(std::get<int64_t>(v));
            break;
        case K::Fixed32:
            out->set_fixed32_val(std::get<uint32_t>(v));
            break;
        case K::Fixed64:
            out->set_fixed64_val(std::get<uint64_t>(v));
            break;
        case K::Sfixed32:
            out->set_sfixed32_val(std::get<int32_t>(v));
            break;
        case K::Sfixed64:
            out->set_sfixed64_val(std::get<int64_t>(v));
            break;
        case K::Bool:
            out->set_bool_val(std::get<bool>(v));
            break;
        case K::String:
            out->set_string_val(std::get<std::string>(v));
            break;
        case K::Bytes:
            out->set_bytes_val(std::get<std::string>(v));
            break;
        case K::DoubleList:
            assignList(out->mutable_double_list()->mutable_values(), std::get<std::vector<double>>(v));
            break;
        case K::FloatList:
            assignList(out->mutable_float_list()->mutable_values(), std::get<std::vector<float>>(v));
            break;
        case K::Int32List:
            assignList(out->mutable_int32_list()->mutable_values(), std::get<std::vector<int32_t>>(v));
            break;
        case K::Int64List:
            assignList(out->mutable_int64_list()->mutable_values(), std::get<std::vector<int64_t>>(v));
            break;
        case K::Uint32List:
            assignList(out->mutable_uint32_list()->mutable_values(), std::get<std::vector<uint32_t>>(v));
            break;
        case K::Uint64List:
            assignList(out->mutable_uint64_list()->mutable_values(), std::get<std::vector<uint64_t>>(v));
            break;
        case K::Sint32List:
            assignList(out->mutable_sint32_list()->mutable_values(), std::get<std::vector<int32_t>>(v));
            break;
        case K::Sint64List:
            assignList(out->mutable_sint64_list()->mutable_values(), std::get<std::vector<int64_t>>(v));
            break;
        case K::Fixed32List:
            assignList(out->mutable_fixed32_list()->mutable_values(), std::get<std::vector<uint32_t>>(v));
            break;
        case K::Fixed64List:
            assignList(out->mutable_fixed64_list()->mutable_values(), std::get<std::vector<uint64_t>>(v));
            break;
        case K::Sfixed32List:
            assignList(out->mutable_sfixed32_list()->mutable_values(), std::get<std::vector<int32_t>>(v));
            break;
        case K::Sfixed64List:
            assignList(out->mutable_sfixed64_list()->mutable_values(), std::get<std::vector<int64_t>>(v));
            break;
        case K::BoolList: {
            auto* dst = out->mutable_bool_list()->mutable_values();
            const auto& src = std::get<std::vector<bool>>(v);
            dst->Reserve(static_cast<int>(src.size()));
            for (bool b : src)
                dst->Add(b);
            break;
        }
        case K::StringList:
            assignList(out->mutable_string_list()->mutable_values(), std::get<std::vector<std::string>>(v));
            break;
        case K::BytesList:
            assignList(out->mutable_bytes_list()->mutable_values(), std::get<std::vector<std::string>>(v));
            break;
        default:
            return "attribute '" + a.name + "' has " + chakraAttrKindName(a.kind) + ", which the schema lacks";
        }
        return {};
    }

    ChakraAttribute fromProto(const ChakraProtoMsg::AttributeProto& a)
    {
        ChakraAttribute r;
        r.name = a.name();
        r.docString = a.doc_string();
        r.kind = static_cast<ChakraAttrKind>(a.value_case());
        using P = ChakraProtoMsg::AttributeProto;
        switch (a.value_case()) {
        case P::VALUE_NOT_SET:
            r.value = std::monostate {};
            break;
        case P::kDoubleVal:
            r.value = a.double_val();
            break;
        case P::kFloatVal:
            r.value = a.float_val();
            break;
        case P::kInt32Val:
            r.value = a.int32_val();
            break;
        case P::kInt64Val:
            r.value = a.int64_val();
            break;
        case P::kUint32Val:
            r.value = a.uint32_val();
            break;
        case P::kUint64Val:
            r.value = a.uint64_val();
            break;
        case P::kSint32Val:
            r.value = a.sint32_val();
            break;
        case P::kSint64Val:
            r.value = a.sint64_val();
            break;
        case P::kFixed32Val:
            r.value = a.fixed32_val();
            break;
        case P::kFixed64Val:
            r.value = a.fixed64_val();
            break;
        case P::kSfixed32Val:
            r.value = a.sfixed32_val();
            break;
        case P::kSfixed64Val:
            r.value = a.sfixed64_val();
            break;
        case P::kBoolVal:
            r.value = a.bool_val();
            break;
        case P::kStringVal:
            r.value = a.string_val();
            break;
        case P::kBytesVal:
            r.value = a.bytes_val();
            break;
        case P::kDoubleList:
            r.value = listOf<std::vector<double>>(a.double_list().values());
            break;
        case P::kFloatList:
            r.value = listOf<std::vector<float>>(a.float_list().values());
            break;
        case P::kInt32List:
            r.value = listOf<std::vector<int32_t>>(a.int32_list().values());
            break;
        case P::kInt64List:
            r.value = listOf<std::vector<int64_t>>(a.int64_list().values());
            break;
        case P::kUint32List:
            r.value = listOf<std::vector<uint32_t>>(a.uint32_list().values());
            break;
        case P::kUint64List:
            r.value = listOf<std::vector<uint64_t>>(a.uint64_list().values());
            break;
        case P::kSint32List:
            r.value = listOf<std::vector<int32_t>>(a.sint32_list().values());
            break;
        case P::kSint64List:
            r.value = listOf<std::vector<int64_t>>(a.sint64_list().values());
            break;
        case P::kFixed32List:
            r.value = listOf<std::vector<uint32_t>>(a.fixed32_list().values());
            break;
        case P::kFixed64List:
            r.value = listOf<std::vector<uint64_t>>(a.fixed64_list().values());
            break;
        case P::kSfixed32List:
            r.value = listOf<std::vector<int32_t>>(a.sfixed32_list().values());
            break;
        case P::kSfixed64List:
            r.value = listOf<std::vector<int64_t>>(a.sfixed64_list().values());
            break;
        case P::kBoolList:
            r.value = listOf<std::vector<bool>>(a.bool_list().values());
            break;
        case P::kStringList:
            r.value = listOf<std::vector<std::string>>(a.string_list().values());
            break;
        case P::kBytesList:
            r.value = listOf<std::vector<std::string>>(a.bytes_list().values());
            break;
        }
        return r;
    }

    void toProto(const ChakraIOInfo& io, ChakraProtoMsg::IOInfo* out)
    {
        out->set_values(io.values);
        out->set_shapes(io.shapes);
        out->set_types(io.types);
    }

    ChakraIOInfo fromProto(const ChakraProtoMsg::IOInfo& io)
    {
        return ChakraIOInfo { io.values(), io.shapes(), io.types() };
    }
} // namespace

std::string toProto(const ChakraNode& node, ChakraProtoMsg::Node* out)
{
    out->Clear();
    {
        std::string err = checkUtf8(node.name, "the name");
        for (const auto* io : { &node.inputs, &node.outputs }) {
            if (err.empty() && *io) {
                for (const auto* v : { &(*io)->values, &(*io)->shapes, &(*io)->types })
                    if (err.empty())
                        err = checkUtf8(*v, "an IOInfo string");
            }
        }
        if (!err.empty())
            return "node " + std::to_string(node.id) + ": " + err;
    }
    out->set_id(node.id);
    out->set_name(node.name);
    out->set_type(static_cast<ChakraProtoMsg::NodeType>(node.type));
    assignList(out->mutable_ctrl_deps(), node.ctrlDeps);
    assignList(out->mutable_data_deps(), node.dataDeps);
    out->set_start_time_micros(node.startTimeMicros);
    out->set_duration_micros(node.durationMicros);
    if (node.inputs)
        toProto(*node.inputs, out->mutable_inputs());
    if (node.outputs)
        toProto(*node.outputs, out->mutable_outputs());
    out->mutable_attr()->Reserve(static_cast<int>(node.attrs.size()));
    for (const auto& a : node.attrs) {
        if (auto err = toProto(a, out->add_attr()); !err.empty())
            return "node " + std::to_string(node.id) + ": " + err;
    }
    return {};
}

std::string toProto(const ChakraMetadata& metadata, ChakraProtoMsg::GlobalMetadata* out)
{
    out->Clear();
    if (auto err = checkUtf8(metadata.version, "the version"); !err.empty())
        return "metadata: " + err;
    out->set_version(metadata.version);
    for (const auto& a : metadata.attrs) {
        if (auto err = toProto(a, out->add_attr()); !err.empty())
            return "metadata: " + err;
    }
    return {};
}

ChakraNode fromProto(const ChakraProtoMsg::Node& n)
{
    ChakraNode r;
    r.id = n.id();
    r.name = n.name();
    r.type = static_cast<ChakraNodeType>(n.type());
    r.ctrlDeps.assign(n.ctrl_deps().begin(), n.ctrl_deps().end());
    r.dataDeps.assign(n.data_deps().begin(), n.data_deps().end());
    r.startTimeMicros = n.start_time_micros();
    r.durationMicros = n.duration_micros();
    if (n.has_inputs())
        r.inputs = fromProto(n.inputs());
    if (n.has_outputs())
        r.outputs = fromProto(n.outputs());
    r.attrs.reserve(static_cast<size_t>(n.attr_size()));
    for (const auto& a : n.attr())
        r.attrs.push_back(fromProto(a));
    return r;
}

ChakraMetadata fromProto(const ChakraProtoMsg::GlobalMetadata& m)
{
    ChakraMetadata r;
    r.version = m.version();
    r.attrs.reserve(static_cast<size_t>(m.attr_size()));
    for (const auto& a : m.attr())
        r.attrs.push_back(fromProto(a));
    return r;
}

} // namespace stagecraft::chakraproto
