// SPDX-License-Identifier: MIT
#include "export/exportownership.h"

#include "chakra/chakrareader.h"
#include "chakra/chakrawriter.h"

#include <cstdint>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

namespace stagecraft {

namespace {

    constexpr size_t kMetadataLineLimit = size_t(1) << 20;
    /// Far above the group JSON of the largest world (a few MB for 128K ranks), far below memory limits.
    constexpr uintmax_t kGroupsFileLimit = uintmax_t(256) << 20;

    /// The `schema` attribute of `m`, or why there is none.
    std::string whyNotOurs(const ChakraMetadata& m)
    {
        const ChakraAttribute* schema = m.attr("schema");
        if (!schema || !schema->stringValue())
            return "its GlobalMetadata has no string attribute 'schema'";
        if (schema->stringValue()->rfind(kStagecraftSchemaPrefix, 0) != 0)
            return "its GlobalMetadata schema is \"" + *schema->stringValue() + "\"";
        return {};
    }

    class MetadataOnly final : public ChakraTraceVisitor
    {
    public:
        bool onMetadata(ChakraMetadata&& metadata, const ChakraRecordInfo&) override
        {
            m_metadata = std::move(metadata);
            m_seen = true;
            return false;
        }
        bool onNode(ChakraNode&&, const ChakraRecordInfo&) override
        {
            return false;
        }
        bool m_seen = false;
        ChakraMetadata m_metadata;
    };

} // namespace

std::string whyNotStagecraftRankFile(const std::filesystem::path& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return "it cannot be read";
    if (in.peek() == '{') {
        // Our JSON trace format: {"metadata": {...},\n"nodes": [ ... (ChakraFileWriter): the metadata is the first
        // line, well under the bytes read here.
        std::string line(kMetadataLineLimit, '\0');
        in.read(line.data(), static_cast<std::streamsize>(line.size()));
        line.resize(static_cast<size_t>(in.gcount()));
        const size_t newline = line.find('\n');
        line.resize(newline == std::string::npos ? 0 : newline);
        const std::string head = "{\"metadata\": ";
        if (line.rfind(head, 0) != 0 || line.back() != ',')
            return "it is not a Chakra trace in Stagecraft's JSON format";
        const nlohmann::json m =
            nlohmann::json::parse(line.substr(head.size(), line.size() - head.size() - 1), nullptr, false);
        if (m.is_discarded() || !m.is_object() || !m.contains("attr") || !m["attr"].is_array())
            return "it is not a Chakra trace in Stagecraft's JSON format";
        for (const nlohmann::json& a : m["attr"])
            if (a.is_object() && a.contains("name") && a["name"] == "schema" && a.contains("string_val")
                && a["string_val"].is_string()) {
                const std::string value = a["string_val"].get<std::string>();
                return value.rfind(kStagecraftSchemaPrefix, 0) == 0 ? std::string()
                                                                    : "its GlobalMetadata schema is \"" + value + "\"";
            }
        return "its GlobalMetadata has no string attribute 'schema'";
    }
    in.close();
    MetadataOnly visitor;
    const ChakraReadStatus status = visitChakraFile(path, visitor);
    if (!status.ok() || !visitor.m_seen)
        return "it is not a Chakra trace (" + (status.ok() ? std::string("no GlobalMetadata") : status.error) + ")";
    return whyNotOurs(visitor.m_metadata);
}

std::string whyNotStagecraftGroupsFile(const std::filesystem::path& path)
{
    std::error_code ec;
    if (std::filesystem::file_size(path, ec) > kGroupsFileLimit || ec)
        return ec ? "it cannot be read" : "it is larger than any group JSON Stagecraft writes";
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return "it cannot be read";
    std::ostringstream buffer;
    buffer << in.rdbuf();
    const std::string text = buffer.str();
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object())
        return "it is not a communicator-group JSON object";
    std::map<int, std::vector<int>> groups;
    for (const auto& [key, members] : j.items()) {
        if (!members.is_array())
            return "it is not a communicator-group JSON object";
        int id = 0;
        try {
            id = std::stoi(key);
        } catch (const std::exception&) {
            return "it is not a communicator-group JSON object";
        }
        std::vector<int>& ranks = groups[id];
        for (const nlohmann::json& r : members) {
            if (!r.is_number_integer())
                return "it is not a communicator-group JSON object";
            ranks.push_back(r.get<int>());
        }
    }
    if (commGroupsText(groups) != text)
        return "its layout is not the one Stagecraft writes";
    return {};
}

std::string whyNotStagecraftConfigFile(const std::filesystem::path& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return "it cannot be read";
    std::string first;
    std::getline(in, first);
    static const std::string kHeader = "# Stagecraft workload config";
    return first.rfind(kHeader, 0) == 0 ? std::string() : "its first line is not '" + kHeader + " ...'";
}

} // namespace stagecraft
