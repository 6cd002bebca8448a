// SPDX-License-Identifier: MIT
#include "config/confignode.h"

#include "config/yamltextscan.h"

#include <sstream>
#include <utility>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

namespace stagecraft {

namespace {

    constexpr int kMaxDepth = 64;

    /// Converts a yaml-cpp tree; reports problems once and stops descending after the first structural error.
    class YamlConverter
    {
    public:
        YamlConverter(const std::string& fileName, std::vector<Diagnostic>& diagnostics)
            : m_fileName(fileName)
            , m_diagnostics(diagnostics)
        {
        }

        bool failed() const
        {
            return m_failed;
        }

        ConfigNode convert(const YAML::Node& node, int depth)
        {
            ConfigNode out;
            out.location = locationOf(node.Mark());
            if (m_failed)
                return out;
            if (depth > kMaxDepth || ++m_nodeCount > kMaxConfigNodes) {
                fail(out.location,
                    depth > kMaxDepth
                        ? "YAML nesting deeper than " + std::to_string(kMaxDepth) + " levels (recursive alias?)"
                        : "YAML document has more than " + std::to_string(kMaxConfigNodes)
                            + " nodes (aliases expanded)");
                return out;
            }
            switch (node.Type()) {
            case YAML::NodeType::Undefined:
            case YAML::NodeType::Null:
                out.kind = ConfigNode::Kind::Null;
                break;
            case YAML::NodeType::Scalar:
                out.kind = ConfigNode::Kind::Scalar;
                out.scalar = node.Scalar();
                out.location.quoted = node.Tag() == "!"; // yaml-cpp's non-specific tag of a quoted scalar
                break;
            case YAML::NodeType::Sequence:
                out.kind = ConfigNode::Kind::Sequence;
                for (const YAML::Node& item : node)
                    out.items.push_back(convert(item, depth + 1));
                break;
            case YAML::NodeType::Map:
                out.kind = ConfigNode::Kind::Map;
                for (auto it = node.begin(); it != node.end(); ++it) {
                    ConfigNode::Entry entry;
                    entry.keyLocation = locationOf(it->first.Mark());
                    if (!it->first.IsScalar()) {
                        fail(entry.keyLocation,
                            it->first.IsNull() ? "expected a plain key, found an empty key"
                                               : "expected a plain key, found a list or mapping used as a key");
                        return out;
                    }
                    entry.key = it->first.Scalar();
                    entry.value = convert(it->second, depth + 1);
                    // yaml-cpp places an empty value ("key:" at the end of a line) at the next token; point at the key.
                    if (entry.value.kind == ConfigNode::Kind::Null
                        && (entry.value.location.line != entry.keyLocation.line || entry.value.location.line == 0))
                        entry.value.location = entry.keyLocation;
                    out.entries.push_back(std::move(entry));
                }
                break;
            }
            return out;
        }

    private:
        SourceLocation locationOf(const YAML::Mark& mark) const
        {
            if (mark.is_null() || mark.line < 0 || mark.column < 0)
                return { m_fileName, 0, 0 };
            return { m_fileName, mark.line + 1, mark.column + 1 };
        }

        void fail(const SourceLocation& where, std::string message)
        {
            m_failed = true;
            m_diagnostics.push_back({ Severity::Error, where.file, where.line, where.column, {}, std::move(message) });
        }

        const std::string& m_fileName;
        std::vector<Diagnostic>& m_diagnostics;
        bool m_failed = false;
        int m_nodeCount = 0;
    };

    std::string_view trimmed(std::string_view text)
    {
        const size_t first = text.find_first_not_of(" \t\r\n");
        if (first == std::string_view::npos)
            return {};
        const size_t last = text.find_last_not_of(" \t\r\n");
        return text.substr(first, last - first + 1);
    }

    std::string nodeKindName(const ConfigNode& node)
    {
        switch (node.kind) {
        case ConfigNode::Kind::Null:
            return "nothing";
        case ConfigNode::Kind::Scalar:
            return "the value \"" + node.scalar + "\"";
        case ConfigNode::Kind::Sequence:
            return "a list";
        case ConfigNode::Kind::Map:
            return "a mapping";
        }
        return "?";
    }

    /// Ignores every parser event but the start of a document.
    class DocumentStarts : public YAML::EventHandler
    {
    public:
        std::vector<YAML::Mark> marks;

        void OnDocumentStart(const YAML::Mark& mark) override
        {
            marks.push_back(mark);
        }
        void OnDocumentEnd() override { }
        void OnNull(const YAML::Mark&, YAML::anchor_t) override { }
        void OnAlias(const YAML::Mark&, YAML::anchor_t) override { }
        void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override { }
        void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override
        {
        }
        void OnSequenceEnd() override { }
        void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override { }
        void OnMapEnd() override { }
    };

    /// Where a second document of `text` starts, if there is one: the parser is asked for two documents at most.
    std::optional<YAML::Mark> secondDocumentStart(const std::string& text)
    {
        std::istringstream in(text);
        YAML::Parser parser(in);
        DocumentStarts starts;
        try {
            if (!parser.HandleNextDocument(starts) || !parser.HandleNextDocument(starts))
                return std::nullopt;
        } catch (const YAML::Exception& e) {
            return e.mark; // the second document does not even parse
        }
        return starts.marks.size() > 1 ? starts.marks[1] : YAML::Mark::null_mark();
    }

    /// A likely cause for some yaml-cpp parser messages.
    std::string parserHint(const std::string& message)
    {
        if (message == YAML::ErrorMsg::END_OF_SEQ_FLOW)
            return " (is a ']' missing?)";
        if (message == YAML::ErrorMsg::END_OF_MAP_FLOW)
            return " (is a '}' missing?)";
        if (message == YAML::ErrorMsg::END_OF_MAP || message == YAML::ErrorMsg::END_OF_SEQ)
            return " (check the indentation)";
        return {};
    }

} // namespace

const ConfigNode::Entry* ConfigNode::findEntry(std::string_view key) const
{
    for (const Entry& entry : entries) {
        if (entry.key == key)
            return &entry;
    }
    return nullptr;
}

ConfigNode::Entry* ConfigNode::findEntry(std::string_view key)
{
    return const_cast<Entry*>(std::as_const(*this).findEntry(key));
}

void ConfigNode::relocate(const SourceLocation& where)
{
    location = where;
    for (ConfigNode& item : items)
        item.relocate(where);
    for (Entry& entry : entries) {
        entry.keyLocation = where;
        entry.value.relocate(where);
    }
}

std::optional<ConfigNode> parseConfigYaml(
    std::string_view text, const std::string& fileName, std::vector<Diagnostic>& diagnostics)
{
    auto fail = [&](int line, int column, std::string keyPath, std::string message) {
        diagnostics.push_back({ Severity::Error, fileName, line, column, std::move(keyPath), std::move(message) });
        return std::nullopt;
    };
    if (text.size() > kMaxConfigBytes)
        return fail(0, 0, {},
            "the config is " + std::to_string(text.size()) + " bytes, more than the limit of "
                + std::to_string(kMaxConfigBytes) + " bytes (" + std::to_string(kMaxConfigBytes / 1024)
                + " KiB) for a config");
    const YamlTextScan scan = scanYamlText(text);
    if (scan.openQuoteLine > 0) {
        const std::string quote(1, scan.openQuote);
        return fail(scan.openQuoteLine, scan.openQuoteColumn, scan.openQuoteKeyPath,
            "unterminated quoted string: the " + quote + " opened here is not closed on this line (add the closing "
                + quote + "; a quoted value cannot span lines)");
    }
    YAML::Node document;
    try {
        const std::string owned(text);
        document = YAML::Load(owned);
        // Whether a second document follows. Not YAML::LoadAll: on some inputs (a stray ',' before the first
        // key) yaml-cpp 0.7's parser returns empty documents without advancing, and LoadAll loops forever.
        std::optional<YAML::Mark> second = secondDocumentStart(owned);
        if (second || scan.secondDocumentLine > 0) {
            if (scan.secondDocumentLine > 0)
                return fail(scan.secondDocumentLine, scan.secondDocumentColumn, {},
                    "a second YAML document starts here; a config is one document (remove the '---' and what "
                    "follows, or put it in a file of its own)");
            const bool known = !second->is_null() && second->line >= 0 && second->column >= 0;
            return fail(known ? second->line + 1 : 0, known ? second->column + 1 : 0, {},
                "malformed YAML: the document ends before this point (a stray character where a key or value "
                "should start?)");
        }
    } catch (const YAML::Exception& e) {
        // Marks are 0-based in yaml-cpp; ours are 1-based (0 = unknown).
        const bool known = !e.mark.is_null() && e.mark.line >= 0 && e.mark.column >= 0;
        diagnostics.push_back({ Severity::Error, fileName, known ? e.mark.line + 1 : 0, known ? e.mark.column + 1 : 0,
            {}, "malformed YAML: " + e.msg + parserHint(e.msg) });
        return std::nullopt;
    }
    try {
        YamlConverter converter(fileName, diagnostics);
        ConfigNode root = converter.convert(document, 0);
        if (converter.failed())
            return std::nullopt;
        return root;
    } catch (const YAML::Exception& e) {
        diagnostics.push_back({ Severity::Error, fileName, 0, 0, {}, "malformed YAML: " + e.msg });
        return std::nullopt;
    }
}

bool applyConfigOverride(ConfigNode& root, std::string_view assignment, std::vector<Diagnostic>& diagnostics)
{
    const SourceLocation commandLine { kCommandLineFile, 0, 0 };
    auto error = [&](std::string keyPath, std::string message) {
        diagnostics.push_back({ Severity::Error, kCommandLineFile, 0, 0, std::move(keyPath), std::move(message) });
        return false;
    };

    const size_t equals = assignment.find('=');
    if (equals == std::string_view::npos)
        return error({}, "expected --set key.path=value, found \"" + std::string(assignment) + "\"");
    const std::string keyPath(trimmed(assignment.substr(0, equals)));
    const std::string valueText(trimmed(assignment.substr(equals + 1)));

    std::vector<std::string> segments;
    for (size_t start = 0;;) {
        const size_t dot = keyPath.find('.', start);
        segments.push_back(keyPath.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
        if (dot == std::string::npos)
            break;
        start = dot + 1;
    }
    for (const std::string& segment : segments) {
        if (segment.empty())
            return error(keyPath, "expected a dotted key path like training.recompute, found \"" + keyPath + "\"");
    }

    ConfigNode value;
    {
        std::vector<Diagnostic> parseProblems;
        std::optional<ConfigNode> parsed = parseConfigYaml(valueText, kCommandLineFile, parseProblems);
        if (!parsed) {
            const std::string reason = parseProblems.empty() ? std::string() : ": " + parseProblems.front().message;
            return error(keyPath, "cannot parse the value \"" + valueText + "\"" + reason);
        }
        value = std::move(*parsed);
        value.relocate(commandLine);
    }

    ConfigNode* node = &root;
    std::string walked;
    for (size_t i = 0; i < segments.size(); ++i) {
        if (node->kind == ConfigNode::Kind::Null) {
            node->kind = ConfigNode::Kind::Map;
            node->location = commandLine;
        }
        if (node->kind != ConfigNode::Kind::Map)
            return error(keyPath,
                "cannot set a key inside '" + walked + "': it holds " + nodeKindName(*node) + ", not a section");
        ConfigNode::Entry* entry = node->findEntry(segments[i]);
        if (!entry) {
            node->entries.push_back(
                { segments[i], commandLine, ConfigNode { ConfigNode::Kind::Null, {}, {}, {}, commandLine } });
            entry = &node->entries.back();
        }
        walked += (walked.empty() ? "" : ".") + segments[i];
        if (i + 1 == segments.size()) {
            entry->keyLocation = commandLine;
            entry->value = std::move(value);
        }
        node = &entry->value;
    }
    return true;
}

} // namespace stagecraft
