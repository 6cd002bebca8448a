// SPDX-License-Identifier: MIT
// The reference documentation cannot drift from the code. README.md's "Configuration reference" is generated from
// configKeys() (core/config/configkeys.cpp), which is checked here against the loader (the keys it accepts, the
// keys it requires) and against toYaml() (every key and every default); the "Command-line reference" is generated
// from the built programs' --help. A mismatch fails and writes README.md.actual next to the test binary;
// UPDATE_GOLDEN=1 rewrites the two sections of README.md in place.
// The reference pages under resources/docs/ are checked against what the program writes: report-json.md against
// reportJson(), chakra-traces.md against the exporter's nodes and metadata. README.md and those pages link only
// inside the project, and nothing a user reads (they, --help, app/) cites design notes a clone does not have.
#include "config/configkeys.h"
#include "config/configloader.h"
#include "config/configwriter.h"
#include "config/presets.h"
#include "export/traceexporter.h"
#include "report/report.h"
#include "synthhelpers.h"

#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <QtTest>
#include <map>
#include <set>

using namespace stagecraft;

namespace {

const QString kConfigTitle = QStringLiteral("Configuration reference");
const QString kCliTitle = QStringLiteral("Command-line reference");

QString readmePath()
{
    return QStringLiteral(STAGECRAFT_SOURCE_DIR "/README.md");
}

QString docPath(const char* name)
{
    return QStringLiteral(STAGECRAFT_SOURCE_DIR "/resources/docs/") + QLatin1String(name);
}

QString readFile(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(path));
    return QString::fromUtf8(file.readAll());
}

void writeFile(const QString& path, const QString& text)
{
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate) || file.write(text.toUtf8()) < 0)
        qFatal("cannot write %s", qPrintable(path));
}

/// Stdout of `program args`, which must exit 0. The program's path is shown as its bare name (Qt's usage line
/// prints argv[0]).
QString helpOf(const QString& program, const QStringList& args)
{
    QProcess process;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    env.insert(QStringLiteral("LC_ALL"), QStringLiteral("C.UTF-8"));
    process.setProcessEnvironment(env);
    process.start(program, args);
    if (!process.waitForFinished(60'000) || process.exitStatus() != QProcess::NormalExit || process.exitCode() != 0)
        qFatal("%s %s failed: %s", qPrintable(program), qPrintable(args.join(QLatin1Char(' '))),
            process.readAllStandardError().constData());
    QString out = QString::fromUtf8(process.readAllStandardOutput());
    out.replace(program, QFileInfo(program).fileName());
    return out;
}

QString cliPath()
{
    return QStringLiteral(STAGECRAFT_CLI);
}

/// The subcommands listed by CLI11 under "Subcommands:", in order.
QStringList subcommands(const QString& help)
{
    QStringList out;
    bool inList = false;
    for (const QString& line : help.split(QLatin1Char('\n'))) {
        if (line.compare(QLatin1String("Subcommands:"), Qt::CaseInsensitive) == 0) {
            inList = true;
            continue;
        }
        if (!inList)
            continue;
        if (line.trimmed().isEmpty())
            break;
        out << line.trimmed().section(QLatin1Char(' '), 0, 0);
    }
    return out;
}

/// One option of a --help text: its names (e.g. "-h", "--help") and its description.
struct HelpEntry
{
    QStringList names;
    QString description;
};

/// The options of a CLI11 or QCommandLineParser help text: lines that start with spaces and a dash; the names
/// column ends at two spaces, the description follows on the same line or, when the names are long, on the next,
/// indented line.
std::vector<HelpEntry> options(const QString& help)
{
    static const QRegularExpression optionLine(QStringLiteral("^\\s+(-\\S.*?)(?:\\s{2,}(\\S.*))?$"));
    static const QRegularExpression name(QStringLiteral("(?:^|[\\s,])(--?[A-Za-z0-9][A-Za-z0-9_-]*)"));
    std::vector<HelpEntry> out;
    const QStringList lines = help.split(QLatin1Char('\n'));
    for (qsizetype i = 0; i < lines.size(); ++i) {
        const QRegularExpressionMatch m = optionLine.match(lines[i]);
        if (!m.hasMatch())
            continue;
        HelpEntry entry;
        auto names = name.globalMatch(m.captured(1));
        while (names.hasNext())
            entry.names << names.next().captured(1);
        entry.description = m.captured(2).trimmed();
        if (entry.description.isEmpty() && i + 1 < lines.size() && lines[i + 1].startsWith(QLatin1String("    "))
            && !optionLine.match(lines[i + 1]).hasMatch())
            entry.description = lines[i + 1].trimmed();
        out.push_back(entry);
    }
    return out;
}

/// The keys toYaml() writes, in order, with their values (quotes removed).
std::vector<std::pair<std::string, std::string>> yamlKeys(const std::string& yaml)
{
    static const QRegularExpression keyLine(QStringLiteral("^(  )?([a-z][a-z0-9_]*):(?: (.*))?$"));
    std::vector<std::pair<std::string, std::string>> out;
    QString section;
    for (const QString& line : QString::fromStdString(yaml).split(QLatin1Char('\n'))) {
        const QRegularExpressionMatch m = keyLine.match(line);
        if (!m.hasMatch())
            continue;
        QString value = m.captured(3);
        if (value.size() >= 2 && value.startsWith(QLatin1Char('"')) && value.endsWith(QLatin1Char('"')))
            value = value.mid(1, value.size() - 2);
        if (m.captured(1).isEmpty() && value.isEmpty()) {
            section = m.captured(2);
            continue;
        }
        const QString path = m.captured(1).isEmpty() ? m.captured(2) : section + QLatin1Char('.') + m.captured(2);
        out.emplace_back(path.toStdString(), value.toStdString());
    }
    return out;
}

/// The section of a dotted key path ("" for top-level keys).
std::string sectionOf(std::string_view path)
{
    const size_t dot = path.find('.');
    return dot == std::string_view::npos ? std::string() : std::string(path.substr(0, dot));
}

/// Removes the line of key `path` from a YAML text laid out like the presets (sections, two-space indent).
std::string withoutKey(const std::string& yaml, std::string_view path)
{
    const std::string section = sectionOf(path);
    const std::string key(section.empty() ? path : path.substr(section.size() + 1));
    const std::string wanted = (section.empty() ? "" : "  ") + key + ":";
    std::string out;
    std::string current;
    size_t start = 0;
    while (start < yaml.size()) {
        size_t end = yaml.find('\n', start);
        end = end == std::string::npos ? yaml.size() : end + 1;
        const std::string line = yaml.substr(start, end - start);
        start = end;
        if (!line.empty() && line[0] != ' ' && line[0] != '#')
            current = line.substr(0, line.find(':'));
        const bool inSection = section.empty() ? line[0] != ' ' : current == section;
        if (inSection && line.rfind(wanted, 0) == 0)
            continue;
        out += line;
    }
    return out;
}

/// `text` as lines of at most `width` columns, broken at spaces, like the rest of README.md.
QString wrapped(const QString& text, qsizetype width = 118)
{
    QString out;
    qsizetype column = 0;
    for (const QString& word : text.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
        if (column > 0 && column + 1 + word.size() > width) {
            out += QLatin1Char('\n');
            column = 0;
        } else if (column > 0) {
            out += QLatin1Char(' ');
            ++column;
        }
        out += word;
        column += word.size();
    }
    return out + QLatin1Char('\n');
}

QString defaultCell(const ConfigKeyInfo& key)
{
    if (key.required)
        return QStringLiteral("*required*");
    if (key.defaultValue.empty())
        return QStringLiteral("none");
    return QLatin1Char('`') + QString::fromUtf8(key.defaultValue.data(), qsizetype(key.defaultValue.size()))
        + QLatin1Char('`');
}

QString generatedConfigReference()
{
    QString out = QStringLiteral("## ") + kConfigTitle + QStringLiteral("\n\n");
    out += QStringLiteral("<!-- Generated from core/config/configkeys.cpp by tests/core/tst_docs.cpp; do not edit "
                          "here.\n     After changing a key: UPDATE_GOLDEN=1 build/dev/tests/tst_docs -->\n\n");
    out += wrapped(QStringLiteral(
        "Every key the config loader accepts. An absent key takes its default; *required* keys must be given, in the "
        "file or, for the model keys, through `model.preset`. Every key can also be set from the command line with "
        "`--set KEY=VALUE` (`--set parallelism.zero=3`). Unknown keys, wrong types and inconsistent values are "
        "errors, all reported at once as `file:line:col: error: key: message`. Complete, commented configs are in "
        "`resources/examples/` (installed in `/usr/share/stagecraft/examples/`)."));
    std::string section = "-";
    for (const ConfigKeyInfo& key : configKeys()) {
        const std::string s = sectionOf(key.path);
        if (s != section) {
            section = s;
            out += section.empty()
                ? QStringLiteral("\n### Top level\n\n")
                : QStringLiteral("\n### `") + QString::fromStdString(section) + QStringLiteral("`\n\n");
            out += QStringLiteral("| Key | Default | Meaning |\n| --- | --- | --- |\n");
        }
        out += QStringLiteral("| `") + QString::fromUtf8(key.path.data(), qsizetype(key.path.size()))
            + QStringLiteral("` | ") + defaultCell(key) + QStringLiteral(" | ")
            + QString::fromUtf8(key.meaning.data(), qsizetype(key.meaning.size())) + QStringLiteral(" |\n");
    }
    return out;
}

QString codeBlock(const QString& title, const QString& text)
{
    QString body = text;
    while (body.endsWith(QLatin1Char('\n')))
        body.chop(1);
    return QStringLiteral("\n### `") + title + QStringLiteral("`\n\n```text\n") + body + QStringLiteral("\n```\n");
}

QString generatedCliReference()
{
    QString out = QStringLiteral("## ") + kCliTitle + QStringLiteral("\n\n");
    out += QStringLiteral("<!-- Generated from the programs' --help by tests/core/tst_docs.cpp; do not edit here.\n"
                          "     After changing a command or flag: UPDATE_GOLDEN=1 build/dev/tests/tst_docs -->\n\n");
    out += wrapped(QStringLiteral(
        "What `--help` prints for each command; once installed (see Quick start), the man pages stagecraft(1) and "
        "stagecraft-gui(1) hold the same text, if help2man was installed before the build. "
        "CONFIG is a YAML file or a preset name, and the flags that name a config key (`--dp`, `--set KEY=VALUE`, "
        "...) override the file (see the configuration reference)."));
    const QString top = helpOf(cliPath(), { QStringLiteral("--help") });
    out += codeBlock(QStringLiteral("stagecraft"), top);
    for (const QString& command : subcommands(top)) {
        out += codeBlock(
            QStringLiteral("stagecraft ") + command, helpOf(cliPath(), { command, QStringLiteral("--help") }));
    }
#ifdef STAGECRAFT_GUI
    out += codeBlock(
        QStringLiteral("stagecraft-gui"), helpOf(QStringLiteral(STAGECRAFT_GUI), { QStringLiteral("--help") }));
#endif
    return out;
}

/// Start and end offsets of the level-2 section `title` (its heading up to the next level-2 heading); -1 when
/// absent.
std::pair<qsizetype, qsizetype> sectionRange(const QString& text, const QString& title)
{
    const QString heading = QStringLiteral("## ") + title + QLatin1Char('\n');
    qsizetype start = text.startsWith(heading) ? 0 : text.indexOf(QLatin1Char('\n') + heading);
    if (start < 0)
        return { -1, -1 };
    if (!text.startsWith(heading))
        ++start;
    qsizetype end = text.indexOf(QStringLiteral("\n## "), start);
    end = end < 0 ? text.size() : end + 1;
    return { start, end };
}

/// `text` with section `title` replaced by `content` (inserted before "## Layout", or at the end, when absent).
QString withSection(const QString& text, const QString& title, const QString& content)
{
    auto [start, end] = sectionRange(text, title);
    if (start < 0) {
        const qsizetype layout = sectionRange(text, QStringLiteral("Layout")).first;
        start = end = layout >= 0 ? layout : text.size();
    }
    QString replacement = content;
    if (end < text.size())
        replacement += QLatin1Char('\n');
    QString prefix = text.left(start);
    if (!prefix.isEmpty() && !prefix.endsWith(QStringLiteral("\n\n")))
        prefix += QLatin1Char('\n');
    return prefix + replacement + text.mid(end);
}

bool containsWord(const QString& text, const QString& word)
{
    const QRegularExpression re(
        QStringLiteral("(?<![A-Za-z0-9_-])") + QRegularExpression::escape(word) + QStringLiteral("(?![A-Za-z0-9_-])"));
    return re.match(text).hasMatch();
}

/// The rows of the Markdown table whose header row starts with the cell `firstHeader`, as cells with their
/// backticks removed; the header and the separator row are not included.
std::vector<QStringList> tableRows(const QString& text, const QString& firstHeader)
{
    std::vector<QStringList> rows;
    bool inTable = false;
    for (const QString& raw : text.split(QLatin1Char('\n'))) {
        const QString line = raw.trimmed();
        if (!line.startsWith(QLatin1Char('|'))) {
            inTable = false;
            continue;
        }
        QStringList cells = line.mid(1, line.size() - 2).split(QLatin1Char('|'));
        for (QString& cell : cells)
            cell = cell.trimmed();
        if (!inTable) {
            inTable = !cells.isEmpty() && cells.first() == firstHeader;
            continue;
        }
        if (cells.first().startsWith(QLatin1String("---")))
            continue;
        for (QString& cell : cells)
            cell.remove(QLatin1Char('`'));
        rows.push_back(cells);
    }
    return rows;
}

/// The first cells of tableRows(), as a set.
std::set<QString> firstColumn(const QString& text, const QString& firstHeader)
{
    std::set<QString> out;
    for (const QStringList& row : tableRows(text, firstHeader))
        out.insert(row.first());
    return out;
}

/// Every key path of a JSON value: "a", "a.b", and for arrays of objects "a[].b".
void jsonPaths(const nlohmann::ordered_json& j, const std::string& prefix, std::set<std::string>& out)
{
    for (const auto& [key, value] : j.items()) {
        const std::string path = prefix.empty() ? key : prefix + "." + key;
        out.insert(path);
        if (value.is_object())
            jsonPaths(value, path, out);
        else if (value.is_array())
            for (const auto& element : value)
                if (element.is_object())
                    jsonPaths(element, path + "[]", out);
    }
}

QString joined(const std::set<QString>& set)
{
    return QStringList(set.begin(), set.end()).join(QStringLiteral(", "));
}

/// `a` without the elements of `b`.
std::set<QString> minus(const std::set<QString>& a, const std::set<QString>& b)
{
    std::set<QString> out;
    std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::inserter(out, out.end()));
    return out;
}

/// GitHub's anchor of a heading: lower case, backticks and punctuation dropped, spaces as hyphens.
QString anchorOf(QString heading)
{
    QString out;
    for (const QChar c : heading.toLower()) {
        if (c.isLetterOrNumber() && c.unicode() < 128)
            out += c;
        else if (c == QLatin1Char(' ') || c == QLatin1Char('-'))
            out += QLatin1Char('-');
        else if (c == QLatin1Char('_'))
            out += c;
    }
    return out;
}

/// The small plans whose reports and traces the reference pages are checked against: one rank; tp, pp and dp
/// with the multi-token prediction module; MoE with expert parallelism.
std::vector<std::vector<std::string>> documentedPlans()
{
    const std::vector<std::string> plan { "parallelism.dp=2", "parallelism.tp=2", "parallelism.pp=2",
        "training.global_batch=8", "training.micro_batch=1" };
    return { {}, test::operator+(plan, { "model.mtp_modules=1" }),
        test::operator+(plan,
            { "model.family=moe", "model.experts=4", "model.top_k=2", "model.expert_ffn_hidden=256",
                "parallelism.ep=2" }),
        // cluster.topology: the network section of each class.
        // (tiny states every fabric key, at no topology: these two make one.)
        test::operator+(plan, { "cluster.nvlink_domain=8", "cluster.nvlink_bandwidth_gbps=370.8" }),
        // Serving: the serving estimate's keys.
        test::operator+(plan,
            { "workload=inference", "inference.batch=4", "inference.prompt_tokens=32", "inference.output_tokens=8" }),
        // Serving over time: the serving simulation's keys (and an unreadable trace's error).
        test::operator+(plan,
            { "workload=inference", "inference.batch=4", "inference.prompt_tokens=32", "inference.output_tokens=8",
                "inference.arrival=poisson", "inference.requests=20", "inference.request_rate=50" }),
        test::operator+(plan,
            { "workload=inference", "inference.batch=4", "inference.prompt_tokens=32", "inference.output_tokens=8",
                "inference.arrival=trace", "inference.trace=/nonexistent/trace.csv" }) };
}

} // namespace

class TestDocs : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void keysAreWhatToYamlWrites()
    {
        // toYaml() writes every key (in configKeys() order); with model.preset set, all of them. The list is
        // the same, in the same order, and the loader reads it back without a single diagnostic.
        ConfigResult tiny = loadConfigOrPreset("tiny");
        QVERIFY(tiny.config);
        Config config = *tiny.config;
        config.model.preset = "tiny";
        const std::string yaml = toYaml(config);
        std::vector<std::string> written;
        for (const auto& [path, value] : yamlKeys(yaml))
            written.push_back(path);
        // model.hf_config is resolved into the model keys on loading and never written back.
        std::vector<std::string> expected = configKeyPaths();
        std::erase(expected, std::string("model.hf_config"));
        QCOMPARE(written, expected);
        const ConfigResult reloaded = loadConfigText(yaml, "every-key.yaml");
        for (const Diagnostic& d : reloaded.diagnostics)
            qWarning("%s", d.toString().c_str());
        QVERIFY(reloaded.diagnostics.empty());
    }

    void keysAreWhatTheLoaderAccepts_data()
    {
        QTest::addColumn<QString>("section");
        for (const char* s : { "", "model", "training", "parallelism", "cluster" })
            QTest::newRow(*s ? s : "top level") << QString::fromLatin1(s);
    }

    void keysAreWhatTheLoaderAccepts()
    {
        // An unknown key far from every known one is reported with the list of keys the loader accepts in that
        // section ("expected one of a, b, c"): that list is the section's keys of configKeys(), nothing more or
        // less. At the top level it also names the sections.
        QFETCH(QString, section);
        const std::string name = section.toStdString();
        std::string yaml(*presetText("tiny"));
        const std::string bogus = "qqqq_not_a_key";
        if (name.empty()) {
            yaml += bogus + ": 1\n";
        } else {
            const size_t at = yaml.find("\n" + name + ":\n");
            QVERIFY(at != std::string::npos);
            yaml.insert(at + name.size() + 3, "  " + bogus + ": 1\n");
        }
        const ConfigResult result = loadConfigText(yaml, "unknown-key.yaml");
        QString message;
        for (const Diagnostic& d : result.diagnostics) {
            if (d.keyPath == (name.empty() ? bogus : name + "." + bogus))
                message = QString::fromStdString(d.message);
        }
        QVERIFY2(message.contains(QLatin1String("expected one of ")), qPrintable(message));
        QStringList accepted = message.section(QStringLiteral("expected one of "), 1).split(QStringLiteral(", "));
        accepted.sort();
        QStringList listed;
        for (const ConfigKeyInfo& key : configKeys()) {
            const std::string s = sectionOf(key.path);
            if (s == name)
                listed << QString::fromUtf8(key.path.data(), qsizetype(key.path.size())).section(QLatin1Char('.'), -1);
            else if (name.empty() && !listed.contains(QString::fromStdString(s)))
                listed << QString::fromStdString(s);
        }
        listed.sort();
        QCOMPARE(accepted, listed);
    }

    void defaults_data()
    {
        QTest::addColumn<QString>("path");
        for (const ConfigKeyInfo& key : configKeys())
            QTest::newRow(key.path.data()) << QString::fromUtf8(key.path.data(), qsizetype(key.path.size()));
    }

    void defaults()
    {
        // A documented default is what a default Config holds (config.h), as toYaml() writes it. A key documented
        // as required has no default and its absence is an error; any other key may be left out of a config.
        QFETCH(QString, path);
        const std::string keyPath = path.toStdString();
        const ConfigKeyInfo* key = nullptr;
        for (const ConfigKeyInfo& k : configKeys())
            key = k.path == keyPath ? &k : key;
        QVERIFY(key);
        std::map<std::string, std::string> defaults;
        for (const auto& [p, value] : yamlKeys(toYaml(Config {})))
            defaults[p] = value;
        if (key->required) {
            QVERIFY(key->defaultValue.empty());
        } else if (key->defaultValue.empty()) {
            QVERIFY(!defaults.count(keyPath)); // model.preset, model.hf_config: nothing is written when there is none
        } else {
            // A string key whose default is empty documents it as the YAML that writes it, "".
            const std::string_view documented = key->defaultValue == "\"\"" ? std::string_view() : key->defaultValue;
            QCOMPARE(QString::fromStdString(defaults[keyPath]),
                QString::fromUtf8(documented.data(), qsizetype(documented.size())));
        }

        // The tiny preset (a llama model, written with every key but model.preset) without this key.
        const std::string yaml(*presetText("tiny"));
        const std::string reduced = withoutKey(yaml, keyPath);
        if (reduced == yaml) {
            QVERIFY2(
                path == QLatin1String("model.preset") || path == QLatin1String("model.hf_config"), qPrintable(path));
            return;
        }
        const ConfigResult result = loadConfigText(reduced, "without-key.yaml");
        bool missing = false;
        for (const Diagnostic& d : result.diagnostics)
            missing = missing || (d.keyPath == keyPath && d.message.find("missing required key") != std::string::npos);
        QCOMPARE(missing, key->required);
        QCOMPARE(result.config.has_value(), !key->required);
    }

    void readmeDocumentsEveryConfigKey()
    {
        const QString readme = readFile(readmePath());
        for (const std::string& path : configKeyPaths())
            QVERIFY2(readme.contains(QLatin1Char('`') + QString::fromStdString(path) + QLatin1Char('`')), path.c_str());
    }

    void helpReadsWell()
    {
        // Every command has a one-line description in `stagecraft --help`, and every option of every command a
        // description.
        const QString top = helpOf(cliPath(), { QStringLiteral("--help") });
        const QStringList commands = subcommands(top);
        for (const char* expected : { "synth", "report", "sweep", "inspect", "presets" })
            QVERIFY2(commands.contains(QLatin1String(expected)), expected);
        for (const QString& line : top.section(QStringLiteral("Subcommands:"), 1).split(QLatin1Char('\n'))) {
            if (line.trimmed().isEmpty())
                break;
            QVERIFY2(line.trimmed().contains(QStringLiteral("  ")), qPrintable(line)); // name, then description
        }
        // A names column that runs into its description ("--sequence-parallel BOOLEAN true | false") counts as an
        // option without a description: CLI11 leaves a single space when the names fill its column exactly.
        QStringList undescribed;
        for (const QString& command : commands) {
            const std::vector<HelpEntry> entries = options(helpOf(cliPath(), { command, QStringLiteral("--help") }));
            QVERIFY(!entries.empty());
            for (const HelpEntry& entry : entries) {
                QVERIFY(!entry.names.isEmpty());
                if (entry.description.isEmpty())
                    undescribed << command + QLatin1Char(' ') + entry.names.join(QLatin1Char(','));
            }
        }
        QVERIFY2(undescribed.isEmpty(),
            qPrintable(
                QStringLiteral("options without a separate description: ") + undescribed.join(QStringLiteral("; "))));
    }

    void readmeDocumentsEveryFlag()
    {
        const QString readme = readFile(readmePath());
        const QString top = helpOf(cliPath(), { QStringLiteral("--help") });
        QStringList helps { top };
        for (const QString& command : subcommands(top)) {
            QVERIFY2(readme.contains(QStringLiteral("stagecraft ") + command), qPrintable(command));
            helps << helpOf(cliPath(), { command, QStringLiteral("--help") });
        }
        int flags = 0;
        for (const QString& help : helps) {
            for (const HelpEntry& entry : options(help)) {
                for (const QString& flag : entry.names) {
                    ++flags;
                    QVERIFY2(containsWord(readme, flag), qPrintable(flag));
                }
            }
        }
        QVERIFY(flags > 20);
    }

    void readmeSectionsAreGenerated()
    {
#ifndef STAGECRAFT_GUI
        QSKIP("stagecraft-gui is not built: its --help is part of the command-line reference");
#endif
        const QString readme = readFile(readmePath());
        QString expected = readme;
        expected = withSection(expected, kConfigTitle, generatedConfigReference());
        expected = withSection(expected, kCliTitle, generatedCliReference());
        if (expected == readme)
            return;
        if (qEnvironmentVariableIntValue("UPDATE_GOLDEN") == 1) {
            writeFile(readmePath(), expected);
            qInfo("rewrote the sections \"%s\" and \"%s\" of %s", qPrintable(kConfigTitle), qPrintable(kCliTitle),
                qPrintable(readmePath()));
            return;
        }
        const QString actual = QCoreApplication::applicationDirPath() + QStringLiteral("/README.md.actual");
        writeFile(actual, expected);
        QProcess diff;
        diff.start(QStringLiteral("diff"), { QStringLiteral("-u"), readmePath(), actual });
        if (diff.waitForFinished(10'000))
            qInfo("%s", diff.readAllStandardOutput().constData());
        QFAIL(qPrintable(QStringLiteral("README.md sections \"%1\" / \"%2\" are out of date: the expected file is %3; "
                                        "run the test with UPDATE_GOLDEN=1 to rewrite them")
                             .arg(kConfigTitle, kCliTitle, QFileInfo(actual).absoluteFilePath())));
    }

    void configReferenceListsExactlyTheKeys()
    {
        // The configuration reference's tables list every key the loader knows (configKeys(), checked above
        // against the loader) and nothing else.
        const QString readme = readFile(readmePath());
        const auto [start, end] = sectionRange(readme, kConfigTitle);
        QVERIFY(start >= 0);
        const std::set<QString> listed = firstColumn(readme.mid(start, end - start), QStringLiteral("Key"));
        std::set<QString> keys;
        for (const std::string& path : configKeyPaths())
            keys.insert(QString::fromStdString(path));
        QVERIFY2(minus(keys, listed).empty(), qPrintable(QStringLiteral("not listed: ") + joined(minus(keys, listed))));
        QVERIFY2(minus(listed, keys).empty(), qPrintable(QStringLiteral("not keys: ") + joined(minus(listed, keys))));
    }

    void reportJsonIsDocumented()
    {
        // resources/docs/report-json.md lists every key reportJson() writes for the documented plans, and each
        // key it lists is written for one of them. "config" holds the configuration reference's keys.
        const QString doc = readFile(docPath("report-json.md"));
        const std::set<QString> documented = firstColumn(doc, QStringLiteral("Key"));
        QVERIFY(documented.size() > 30);
        std::set<QString> written;
        std::set<QString> configWritten;
        for (const std::vector<std::string>& plan : documentedPlans()) {
            std::set<std::string> paths;
            jsonPaths(reportJson(*test::synth("tiny", plan)), {}, paths);
            for (const std::string& path : paths) {
                const QString p = QString::fromStdString(path);
                if (p.startsWith(QLatin1String("config.")))
                    configWritten.insert(p.mid(7));
                else
                    written.insert(p);
            }
        }
        QVERIFY2(minus(written, documented).empty(),
            qPrintable(QStringLiteral("written, not in report-json.md: ") + joined(minus(written, documented))));
        QVERIFY2(minus(documented, written).empty(),
            qPrintable(QStringLiteral("in report-json.md, never written: ") + joined(minus(documented, written))));

        // The config object: one member per config key but model.hf_config (resolved into the model keys), nested
        // by section.
        std::set<QString> expected;
        for (const std::string& path : configKeyPaths()) {
            if (path == "model.hf_config")
                continue;
            expected.insert(QString::fromStdString(path));
            if (!sectionOf(path).empty())
                expected.insert(QString::fromStdString(sectionOf(path)));
        }
        QVERIFY2(minus(expected, configWritten).empty(),
            qPrintable(
                QStringLiteral("config keys missing from the report: ") + joined(minus(expected, configWritten))));
        QVERIFY2(minus(configWritten, expected).empty(),
            qPrintable(
                QStringLiteral("report config members that are no key: ") + joined(minus(configWritten, expected))));
    }

    void traceConventionsAreDocumented()
    {
        // resources/docs/chakra-traces.md names every node type, attribute (with its value field) and metadata
        // attribute the exporter writes for the documented plans, with and without tensor lists, and nothing else;
        // every op_type written is one it lists.
        const QString doc = readFile(docPath("chakra-traces.md"));
        std::map<QString, QString> documentedAttrs; // name -> value field
        std::set<QString> documentedOpTypes;
        for (const QStringList& row : tableRows(doc, QStringLiteral("Attribute"))) {
            QVERIFY(row.size() == 4);
            documentedAttrs[row[0]] = row[1];
        }
        {
            // The op_type row's values are the backticked words of its meaning cell (read before backticks go).
            const qsizetype at = doc.indexOf(QStringLiteral("| `op_type` |"));
            QVERIFY(at >= 0);
            const QString row = doc.mid(at, doc.indexOf(QLatin1Char('\n'), at) - at);
            static const QRegularExpression word(QStringLiteral("`([a-z_]+)`"));
            auto it = word.globalMatch(row.section(QLatin1Char('|'), 4));
            while (it.hasNext())
                documentedOpTypes.insert(it.next().captured(1));
        }
        const std::set<QString> documentedTypes = firstColumn(doc, QStringLiteral("Node type"));
        const std::set<QString> documentedMeta = firstColumn(doc, QStringLiteral("Metadata attribute"));

        std::map<QString, QString> writtenAttrs;
        std::set<QString> writtenTypes, writtenMeta, writtenOpTypes;
        for (const std::vector<std::string>& plan : documentedPlans()) {
            const auto result = test::synth("tiny", plan);
            for (const ChakraAttribute& a : traceMetadata(*result, 0).attrs)
                writtenMeta.insert(QString::fromStdString(a.name));
            for (const bool lists : { false, true }) {
                ExportOptions options;
                options.tensorLists = lists;
                for (int32_t cls = 0; cls < int32_t(result->summaries.size()); ++cls) {
                    for (const ChakraNode& n :
                        rankTraceNodes(*result, result->summaries[size_t(cls)].exampleRank, options)) {
                        writtenTypes.insert(QString::fromStdString(chakraNodeTypeName(n.type)));
                        for (const ChakraAttribute& a : n.attrs)
                            writtenAttrs[QString::fromStdString(a.name)] =
                                QString::fromStdString(chakraAttrKindName(a.kind));
                        if (const std::optional<std::string> op = n.stringAttr("op_type"))
                            writtenOpTypes.insert(QString::fromStdString(*op));
                    }
                }
            }
        }
        QCOMPARE(writtenAttrs, documentedAttrs);
        QVERIFY2(writtenTypes == documentedTypes,
            qPrintable(QStringLiteral("written: ") + joined(writtenTypes) + QStringLiteral("; documented: ")
                + joined(documentedTypes)));
        QVERIFY2(writtenMeta == documentedMeta,
            qPrintable(QStringLiteral("written: ") + joined(writtenMeta) + QStringLiteral("; documented: ")
                + joined(documentedMeta)));
        QVERIFY2(minus(writtenOpTypes, documentedOpTypes).empty(),
            qPrintable(
                QStringLiteral("op_type values not documented: ") + joined(minus(writtenOpTypes, documentedOpTypes))));
    }

    void docsStayInsideTheProject_data()
    {
        QTest::addColumn<QString>("path");
        QTest::newRow("README.md") << readmePath();
        QDirIterator it(QStringLiteral(STAGECRAFT_SOURCE_DIR "/resources/docs"), { QStringLiteral("*.md") });
        QStringList pages;
        while (it.hasNext())
            pages << it.next();
        pages.sort();
        QVERIFY(pages.size() >= 2);
        for (const QString& page : pages)
            QTest::newRow(qPrintable(QStringLiteral("resources/docs/") + QFileInfo(page).fileName())) << page;
    }

    void docsStayInsideTheProject()
    {
        // A reader has only the clone: every link is a web address, an anchor of a heading in the same page or a
        // file of the project, and no text points above the checkout or into design notes it does not hold.
        QFETCH(QString, path);
        const QString text = readFile(path);
        const QDir root(QStringLiteral(STAGECRAFT_SOURCE_DIR));
        const QString rootPath = root.canonicalPath() + QLatin1Char('/');

        static const QRegularExpression link(QStringLiteral("\\]\\(([^)\\s]+)[^)]*\\)|src=\"([^\"]+)\""));
        // Outside the link targets (checked below: a page under resources/docs may link up to README.md), no path
        // leaves the checkout and nothing names the design notes.
        QString prose = text;
        prose.replace(link, QStringLiteral("](link)"));
        for (const char* outside : { "../", "DESIGN.md", "stage-method", "STYLE.md", "shared/spec", "/work/" })
            QVERIFY2(!prose.contains(QLatin1String(outside)),
                qPrintable(QStringLiteral("mentions ") + QLatin1String(outside) + QStringLiteral(" at line ")
                    + QString::number(prose.left(prose.indexOf(QLatin1String(outside))).count(QLatin1Char('\n')) + 1)));

        std::set<QString> anchors;
        static const QRegularExpression heading(QStringLiteral("^#+ +(.*)$"), QRegularExpression::MultilineOption);
        for (auto it = heading.globalMatch(text); it.hasNext();)
            anchors.insert(anchorOf(it.next().captured(1)));

        int links = 0;
        for (auto it = link.globalMatch(text); it.hasNext();) {
            const QRegularExpressionMatch m = it.next();
            const QString target = m.captured(1).isEmpty() ? m.captured(2) : m.captured(1);
            ++links;
            if (target.startsWith(QLatin1String("https://")) || target.startsWith(QLatin1String("http://")))
                continue;
            if (target.startsWith(QLatin1Char('#'))) {
                QVERIFY2(anchors.count(target.mid(1)), qPrintable(QStringLiteral("no heading for ") + target));
                continue;
            }
            QVERIFY2(!target.startsWith(QLatin1Char('/')), qPrintable(QStringLiteral("absolute link ") + target));
            // Relative to the page's folder, as GitHub and other Markdown viewers resolve them.
            const QString file = QFileInfo(path).absoluteDir().filePath(target.section(QLatin1Char('#'), 0, 0));
            const QFileInfo info(file);
            QVERIFY2(info.exists(), qPrintable(QStringLiteral("link to a missing file: ") + target));
            QVERIFY2(info.canonicalFilePath().startsWith(rootPath),
                qPrintable(QStringLiteral("link outside the project: ") + target));
        }
        if (path == readmePath())
            QVERIFY(links > 10);
    }

    void helpAndAppCiteNoDesignNotes()
    {
        // --help of every program and every file under app/ (comments included) speak for themselves: they may
        // point to README.md or resources/docs/, not to design notes outside the checkout.
        static const char* const outside[] = { "DESIGN.md", "stage-method", "STYLE.md", "../shared", "§" };
        const QString top = helpOf(cliPath(), { QStringLiteral("--help") });
        QStringList helps { top };
        for (const QString& command : subcommands(top))
            helps << helpOf(cliPath(), { command, QStringLiteral("--help") });
#ifdef STAGECRAFT_GUI
        helps << helpOf(QStringLiteral(STAGECRAFT_GUI), { QStringLiteral("--help") });
#endif
        for (const QString& help : helps)
            for (const char* o : outside)
                QVERIFY2(!help.contains(QString::fromUtf8(o)), qPrintable(help.section(QLatin1Char('\n'), 0, 1)));
        QDirIterator it(QStringLiteral(STAGECRAFT_SOURCE_DIR "/app"), QDir::Files, QDirIterator::Subdirectories);
        int files = 0;
        while (it.hasNext()) {
            const QString file = it.next();
            ++files;
            const QString text = readFile(file);
            for (const char* o : outside)
                QVERIFY2(!text.contains(QString::fromUtf8(o)),
                    qPrintable(file + QStringLiteral(" mentions ") + QString::fromUtf8(o)));
        }
        QVERIFY(files > 5);
    }
};

QTEST_GUILESS_MAIN(TestDocs)
#include "tst_docs.moc"
