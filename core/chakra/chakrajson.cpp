// SPDX-License-Identifier: MIT
#include "chakra/chakrajson.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <type_traits>

namespace stagecraft {

namespace {
    using OJson = nlohmann::ordered_json;

    std::string base64(const std::string& in)
    {
        static constexpr char Alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        std::string out;
        out.reserve((in.size() + 2) / 3 * 4);
        size_t i = 0;
        for (; i + 2 < in.size(); i += 3) {
            const uint32_t v =
                (uint32_t(uint8_t(in[i])) << 16) | (uint32_t(uint8_t(in[i + 1])) << 8) | uint32_t(uint8_t(in[i + 2]));
            out += Alphabet[(v >> 18) & 63];
            out += Alphabet[(v >> 12) & 63];
            out += Alphabet[(v >> 6) & 63];
            out += Alphabet[v & 63];
        }
        if (i + 1 == in.size()) {
            const uint32_t v = uint32_t(uint8_t(in[i])) << 16;
            out += Alphabet[(v >> 18) & 63];
            out += Alphabet[(v >> 12) & 63];
            out += "==";
        } else if (i + 2 == in.size()) {
            const uint32_t v = (uint32_t(uint8_t(in[i])) << 16) | (uint32_t(uint8_t(in[i + 1])) << 8);
            out += Alphabet[(v >> 18) & 63];
            out += Alphabet[(v >> 12) & 63];
            out += Alphabet[(v >> 6) & 63];
            out += '=';
        }
        return out;
    }

    OJson number(double v)
    {
        if (!std::isfinite(v))
            return nullptr;
        return v;
    }

    OJson valueToJson(const ChakraAttribute& a)
    {
        const bool isBytes = a.kind == ChakraAttrKind::Bytes || a.kind == ChakraAttrKind::BytesList;
        return std::visit(
            [isBytes](const auto& v) -> OJson {
                using T = std::decay_t<decltype(v)>;
                if constexpr (std::is_same_v<T, std::monostate>) {
                    return nullptr;
                } else if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>) {
                    return number(static_cast<double>(v));
                } else if constexpr (std::is_same_v<T, std::string>) {
                    return isBytes ? base64(v) : v;
                } else if constexpr (std::is_same_v<T, std::vector<double>> || std::is_same_v<T, std::vector<float>>) {
                    OJson arr = OJson::array();
                    for (auto x : v)
                        arr.push_back(number(static_cast<double>(x)));
                    return arr;
                } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
                    OJson arr = OJson::array();
                    for (const auto& s : v)
                        arr.push_back(isBytes ? base64(s) : s);
                    return arr;
                } else if constexpr (std::is_same_v<T, std::vector<bool>>) {
                    OJson arr = OJson::array();
                    for (bool b : v)
                        arr.push_back(b);
                    return arr;
                } else {
                    return v; // integers, bool, integer vectors
                }
            },
            a.value);
    }

    OJson ioToJson(const ChakraIOInfo& io)
    {
        OJson j = OJson::object();
        j["values"] = io.values;
        j["shapes"] = io.shapes;
        j["types"] = io.types;
        return j;
    }

    OJson attrsToJson(const std::vector<ChakraAttribute>& attrs)
    {
        OJson arr = OJson::array();
        for (const auto& a : attrs)
            arr.push_back(chakraAttributeToJson(a));
        return arr;
    }
} // namespace

nlohmann::ordered_json chakraAttributeToJson(const ChakraAttribute& attr)
{
    OJson j = OJson::object();
    j["name"] = attr.name;
    if (!attr.docString.empty())
        j["doc_string"] = attr.docString;
    if (attr.kind != ChakraAttrKind::None)
        j[chakraAttrKindName(attr.kind)] = valueToJson(attr);
    return j;
}

nlohmann::ordered_json chakraNodeToJson(const ChakraNode& node)
{
    OJson j = OJson::object();
    j["id"] = node.id;
    j["name"] = node.name;
    const auto type = static_cast<int32_t>(node.type);
    if (type >= 0 && type <= 7)
        j["type"] = chakraNodeTypeName(node.type);
    else
        j["type"] = type;
    j["ctrl_deps"] = node.ctrlDeps;
    j["data_deps"] = node.dataDeps;
    j["start_time_micros"] = node.startTimeMicros;
    j["duration_micros"] = node.durationMicros;
    if (node.inputs)
        j["inputs"] = ioToJson(*node.inputs);
    if (node.outputs)
        j["outputs"] = ioToJson(*node.outputs);
    j["attr"] = attrsToJson(node.attrs);
    return j;
}

nlohmann::ordered_json chakraMetadataToJson(const ChakraMetadata& metadata)
{
    OJson j = OJson::object();
    j["version"] = metadata.version;
    j["attr"] = attrsToJson(metadata.attrs);
    return j;
}

} // namespace stagecraft
