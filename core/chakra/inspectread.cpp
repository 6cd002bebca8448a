// SPDX-License-Identifier: MIT
// A trace set on disk: its rank files (`<prefix>.<rank>.et`), its communicator groups (`<prefix>.json`) and
// reading the rank files one by one through the per-rank checks.
#include "chakra/inspectinternal.h"

#include <condition_variable>
#include <fstream>
#include <limits>
#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>

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

namespace {
    /// readRank() that cannot throw (out of memory on a huge file, say): the problem becomes the rank's read
    /// error, so a worker thread never ends the process.
    RankRead readRankSafely(int rank, const std::filesystem::path& path)
    {
        try {
            return readRank(rank, path);
        } catch (const std::exception& e) {
            RankRead r;
            r.rank = rank;
            r.path = path;
            r.readError = path.filename().string() + ": cannot be inspected: " + e.what();
            return r;
        } catch (...) {
            RankRead r;
            r.rank = rank;
            r.path = path;
            r.readError = path.filename().string() + ": cannot be inspected (unknown error)";
            return r;
        }
    }
} // namespace

void readRanksInOrder(
    const std::map<int, std::filesystem::path>& files, unsigned threads, const std::function<void(RankRead&&)>& consume)
{
    const std::vector<std::pair<int, std::filesystem::path>> jobs(files.begin(), files.end());
    const size_t n = jobs.size();
    if (threads == 0)
        threads = std::max(1u, std::thread::hardware_concurrency());
    threads = static_cast<unsigned>(std::min<size_t>(threads, n));
    if (threads <= 1) {
        for (const auto& [rank, path] : jobs)
            consume(readRankSafely(rank, path));
        return;
    }

    // Workers claim files in rank order and may run at most `window` files ahead of the consumer; finished
    // files wait in a ring of that size. So memory is `threads` files in flight plus `window` results (a
    // result is a summary and the rank's collective and send/recv keys), whatever the rank count.
    const size_t window = 2 * size_t { threads };
    std::vector<std::optional<RankRead>> ring(window);
    std::mutex mutex;
    std::condition_variable changed;
    size_t next = 0; // first file not claimed yet
    size_t consumed = 0; // files handed to `consume`
    bool stop = false;
    auto work = [&] {
        for (;;) {
            size_t job = 0;
            {
                std::unique_lock lock(mutex);
                changed.wait(lock, [&] { return stop || next >= n || next < consumed + window; });
                if (stop || next >= n)
                    return;
                job = next++;
            }
            RankRead read = readRankSafely(jobs[job].first, jobs[job].second);
            {
                const std::lock_guard lock(mutex);
                ring[job % window] = std::move(read);
            }
            changed.notify_all();
        }
    };
    struct StopOnExit
    {
        std::mutex& mutex;
        std::condition_variable& changed;
        bool& stop;
        ~StopOnExit()
        {
            {
                const std::lock_guard lock(mutex);
                stop = true;
            }
            changed.notify_all();
        }
    };
    std::vector<std::jthread> pool;
    // Declared after `pool`, so destroyed before it: when `consume` throws, the workers stop claiming files
    // before the jthreads join.
    const StopOnExit stopOnExit { mutex, changed, stop };
    try {
        pool.reserve(threads);
        for (unsigned t = 0; t < threads; ++t)
            pool.emplace_back(work);
    } catch (const std::exception&) {
        // Fewer threads than asked for (a process limit): the ones started do the work.
    }
    if (pool.empty()) {
        for (const auto& [rank, path] : jobs)
            consume(readRankSafely(rank, path));
        return;
    }
    for (size_t i = 0; i < n; ++i) {
        RankRead read;
        {
            std::unique_lock lock(mutex);
            changed.wait(lock, [&] { return ring[i % window].has_value(); });
            read = std::move(*ring[i % window]);
            ring[i % window].reset();
            consumed = i + 1;
        }
        changed.notify_all();
        consume(std::move(read));
    }
}

} // namespace stagecraft::inspect
