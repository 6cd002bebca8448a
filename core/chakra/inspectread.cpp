// SPDX-License-Identifier: MIT
// A trace set on disk: its rank files (`<prefix>.<rank>.et`), its communicator groups (`<prefix>.json`) and
// reading the rank files one by one through the per-rank checks.
#include "chakra/inspectinternal.h"

#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

namespace stagecraft::inspect {

std::map<int, std::filesystem::path> discoverRankFiles(
    const std::filesystem::path& directory, const std::string& prefixArg, TraceSetSummary& set, Findings& findings)
{
    std::map<std::string, std::map<int, std::filesystem::path>> byPrefix;
    std::error_code ec;
    std::filesystem::directory_iterator it(directory, ec);
    if (ec) {
        findings.add(
            FindingSeverity::Error, "no-trace-set", {}, "cannot list '" + directory.string() + "': " + ec.message());
        return {};
    }
    static const std::regex rankFile(R"(^(.+)\.(0|[1-9][0-9]{0,8})\.et$)");
    for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
        if (ec)
            break;
        const std::string name = it->path().filename().string();
        std::smatch m;
        if (!std::regex_match(name, m, rankFile))
            continue;
        byPrefix[m[1].str()][std::stoi(m[2].str())] = it->path();
    }
    if (!prefixArg.empty()) {
        set.prefix = prefixArg;
    } else if (byPrefix.size() == 1) {
        set.prefix = byPrefix.begin()->first;
    } else if (byPrefix.size() > 1) {
        std::string names;
        for (const auto& [p, _] : byPrefix)
            names += (names.empty() ? "" : ", ") + p;
        findings.add(FindingSeverity::Error, "ambiguous-prefix", {},
            "'" + directory.string() + "' holds several trace sets (" + names + "); name one");
        return {};
    }
    const auto found = byPrefix.find(set.prefix);
    if (found == byPrefix.end() || found->second.empty()) {
        findings.add(FindingSeverity::Error, "no-trace-set", {},
            "no <prefix>.<rank>.et files" + (set.prefix.empty() ? std::string() : " for prefix '" + set.prefix + "'")
                + " in '" + directory.string() + "'");
        return {};
    }
    std::map<int, std::filesystem::path> files = std::move(found->second);
    set.worldSize = files.rbegin()->first + 1;
    for (int r = 0; r < set.worldSize; ++r) {
        if (!files.count(r)) {
            findings.add(
                FindingSeverity::Error, "missing-rank", {}, 1, [&] { return "rank " + std::to_string(r); },
                [&] {
                    return "rank file " + set.prefix + "." + std::to_string(r) + ".et is missing (ranks found up to "
                        + std::to_string(set.worldSize - 1) + "; ASTRA-sim exits)";
                });
        }
    }
    if (set.worldSize < 2) {
        findings.add(FindingSeverity::Warning, "single-rank", {},
            "a single rank cannot be simulated with ASTRA-sim's analytical network (it needs at least 2)");
    }
    return files;
}

std::map<std::string, std::vector<int>> readCommGroups(TraceSetSummary& set, Findings& findings)
{
    std::map<std::string, std::vector<int>> groupsByKey;
    std::error_code ec;
    const std::filesystem::path groupsPath = set.directory / (set.prefix + ".json");
    if (!std::filesystem::exists(groupsPath, ec))
        return groupsByKey;
    set.groupsFile = groupsPath;
    std::ifstream in(groupsPath, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    const nlohmann::json doc = nlohmann::json::parse(text.str(), nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) {
        findings.add(FindingSeverity::Error, "groups-json-invalid", {},
            groupsPath.string() + " is not a JSON object of communicator groups");
        return groupsByKey;
    }
    for (const auto& item : doc.items()) {
        // Named variables, not structured bindings: clang 14 cannot capture those in lambdas.
        const std::string key = item.key();
        const auto& value = item.value();
        const auto bad = [&](const std::string& why) {
            findings.add(
                FindingSeverity::Error, "groups-json-invalid", {}, 1, [&] { return "group " + key; },
                [&] { return groupsPath.string() + ": group \"" + key + "\" " + why; });
        };
        if (!isDecimal(key) || key.size() > 9 || std::stoi(key) <= 0) {
            bad("has a key that is not a decimal id > 0");
            continue;
        }
        if (!value.is_array()) {
            bad("is not an array of ranks");
            continue;
        }
        std::vector<int> members;
        bool ok = true;
        for (const auto& v : value) {
            if (!v.is_number_integer() || v.get<int64_t>() < 0
                || v.get<int64_t>() > std::numeric_limits<int32_t>::max()) {
                ok = false;
                break;
            }
            members.push_back(v.get<int>());
        }
        if (!ok) {
            bad("lists something that is not a non-negative rank");
            continue;
        }
        std::vector<int> sorted = members;
        std::sort(sorted.begin(), sorted.end());
        if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
            bad("lists a rank twice");
            continue;
        }
        if (!sorted.empty() && sorted.back() >= set.worldSize) {
            findings.add(
                FindingSeverity::Error, "group-rank-out-of-range", {}, 1, [&] { return "group " + key; },
                [&] {
                    return "group " + key + " lists rank " + std::to_string(sorted.back()) + " but the set has "
                        + std::to_string(set.worldSize) + " ranks";
                });
        }
        groupsByKey[key] = members;
        set.groups[std::stoi(key)] = members;
    }
    return groupsByKey;
}

RankRead readRank(int rank, const std::filesystem::path& path)
{
    RankRead r;
    r.rank = rank;
    r.path = path;
    TraceInspector inspector(path.filename().string(), true);
    const ChakraReadStatus status = visitChakraFile(path, inspector);
    if (!status.ok()) {
        r.readError = status.error;
        return r;
    }
    r.summary = inspector.finish(status.framing);
    r.collectives = inspector.collectivesInIssueOrder();
    r.p2p = inspector.p2p();
    return r;
}

void readRanksInOrder(const std::map<int, std::filesystem::path>& files, const std::function<void(RankRead&&)>& consume)
{
    for (const auto& [rank, path] : files)
        consume(readRank(rank, path));
}

} // namespace stagecraft::inspect
