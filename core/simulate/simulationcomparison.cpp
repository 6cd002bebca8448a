// SPDX-License-Identifier: MIT
#include "simulate/simulationcomparison.h"

#include "chakra/chakrareader.h"
#include "export/exportownership.h"
#include "export/traceexporter.h"
#include "output/messagetext.h"
#include "report/report.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>

namespace stagecraft {

namespace {

    double ratio(double simulated, double estimated)
    {
        return estimated > 0 ? simulated / estimated : 0.0;
    }

    std::string ratioText(double r)
    {
        if (!(r > 0))
            return "-";
        char text[32];
        std::snprintf(text, sizeof text, "%.2f", r);
        return text;
    }

} // namespace

std::string formatNanoseconds(double ns)
{
    if (!std::isfinite(ns))
        return "?";
    if (ns == 0)
        return "0 s";
    struct Unit
    {
        double ns;
        const char* suffix;
    };
    static constexpr Unit kUnits[] = { { 1e9, " s" }, { 1e6, " ms" }, { 1e3, " us" }, { 1, " ns" } };
    const double a = std::abs(ns);
    size_t u = 0;
    while (u + 1 < std::size(kUnits) && a < kUnits[u].ns)
        ++u;
    // 999.7 us rounds to "1000 us" with three digits: say "1.00 ms".
    if (u > 0 && a / kUnits[u].ns >= 999.5)
        --u;
    const double v = ns / kUnits[u].ns;
    const double av = std::abs(v);
    char text[48];
    std::snprintf(text, sizeof text, "%.*f%s", av >= 99.95 ? 0 : av >= 9.995 ? 1 : 2, v, kUnits[u].suffix);
    return text;
}

StepEstimate programsEstimate(const SynthesisResult& result, const EstimateSchedule& schedule)
{
    StepEstimate e;
    for (size_t c = 0; c < result.classes.size() && c < schedule.classes.size(); ++c) {
        ClassEstimate ce;
        ce.stage = result.classes[c].stage;
        const std::vector<ProgramNode>& nodes = result.classes[c].nodes;
        for (const ScheduledNode& n : schedule.classes[c]) {
            ce.stepTimeS = std::max(ce.stepTimeS, n.endS);
            if (n.node < nodes.size() && nodes[n.node].kind == NodeKind::Compute)
                ce.computeTimeS += n.endS - n.startS;
        }
        e.iterationTimeS = std::max(e.iterationTimeS, ce.stepTimeS);
        e.classes.push_back(ce);
    }
    return e;
}

SimulationComparison compareWithEstimate(
    const SynthesisResult& result, const StepEstimate& estimate, const AstraSimResult& simulation)
{
    SimulationComparison c;
    c.stages.resize(result.classes.size());
    for (size_t s = 0; s < result.classes.size(); ++s) {
        StageComparison& st = c.stages[s];
        st.stage = result.classes[s].stage;
        st.ranks = result.classes[s].rankCount;
        if (s < estimate.classes.size()) {
            const ClassEstimate& e = estimate.classes[s];
            st.estimatedFinishNs = e.stepTimeS * 1e9;
            st.estimatedExposedNs = std::max(0.0, e.stepTimeS - e.computeTimeS) * 1e9;
        }
        if (s < result.summaries.size())
            st.estimatedPeakMemoryBytes = static_cast<double>(result.summaries[s].peakBytes);
    }
    for (const AstraSimRankResult& r : simulation.ranks) {
        if (r.rank < 0 || r.rank >= result.worldSize())
            continue;
        const int32_t cls = result.classOf(RankId { r.rank });
        if (cls < 0 || static_cast<size_t>(cls) >= c.stages.size())
            continue;
        StageComparison& st = c.stages[static_cast<size_t>(cls)];
        ++st.reportedRanks;
        st.simulatedPeakMemoryBytes = std::max(st.simulatedPeakMemoryBytes, r.peakMemoryBytes.value_or(0.0));
        if (st.slowestRank < 0 || r.finishNs > st.simulatedFinishNs) {
            st.slowestRank = r.rank;
            st.simulatedFinishNs = r.finishNs;
            st.simulatedExposedNs = r.exposedCommunicationNs;
        }
        if (c.slowestRank < 0 || r.finishNs > c.simulatedIterationNs) {
            c.slowestRank = r.rank;
            c.slowestStage = cls;
            c.simulatedIterationNs = r.finishNs;
        }
    }
    for (StageComparison& st : c.stages) {
        if (st.slowestRank < 0)
            continue;
        st.finishRatio = ratio(st.simulatedFinishNs, st.estimatedFinishNs);
        st.exposedRatio = ratio(st.simulatedExposedNs, st.estimatedExposedNs);
    }
    c.estimatedIterationNs = estimate.iterationTimeS * 1e9;
    if (isInference(result.config))
        c.estimated = "the programs (prefill and decode steps)";
    if (c.slowestRank >= 0)
        c.iterationRatio = ratio(c.simulatedIterationNs, c.estimatedIterationNs);
    return c;
}

nlohmann::ordered_json simulationJson(const AstraSimResult& sim, const SimulationComparison* comparison)
{
    nlohmann::ordered_json j;
    j["status"] = toString(sim.status);
    j["passed"] = sim.passed;
    j["reason"] = sim.reason;
    j["ranks_finished"] = sim.ranks.size();
    j["npus"] = sim.npus;
    j["wall_s"] = sim.wallS;
    j["run_folder"] = sim.files.runDirectory.string();
    j["command"] = sim.files.command;
    j["relevant_lines"] = sim.relevantLines;
    nlohmann::ordered_json ranks = nlohmann::ordered_json::array();
    for (const AstraSimRankResult& r : sim.ranks) {
        nlohmann::ordered_json row = { { "rank", r.rank }, { "finish_ns", r.finishNs },
            { "exposed_ns", r.exposedCommunicationNs } };
        if (r.peakMemoryBytes)
            row["peak_memory_bytes"] = *r.peakMemoryBytes;
        ranks.push_back(std::move(row));
    }
    j["ranks"] = std::move(ranks);
    if (comparison) {
        nlohmann::ordered_json stages = nlohmann::ordered_json::array();
        for (const StageComparison& s : comparison->stages) {
            nlohmann::ordered_json row = { { "stage", s.stage }, { "ranks", s.ranks },
                { "ranks_finished", s.reportedRanks }, { "slowest_rank", s.slowestRank },
                { "finish_ns", s.simulatedFinishNs }, { "estimate_finish_ns", s.estimatedFinishNs },
                { "finish_ratio", s.finishRatio }, { "exposed_ns", s.simulatedExposedNs },
                { "estimate_exposed_ns", s.estimatedExposedNs }, { "exposed_ratio", s.exposedRatio } };
            if (s.simulatedPeakMemoryBytes > 0)
                row["peak_memory_bytes"] = s.simulatedPeakMemoryBytes;
            row["estimate_peak_memory_bytes"] = s.estimatedPeakMemoryBytes;
            stages.push_back(std::move(row));
        }
        j["stages"] = std::move(stages);
        j["slowest_rank"] = comparison->slowestRank;
        j["iteration_ns"] = comparison->simulatedIterationNs;
        j["estimate_iteration_ns"] = comparison->estimatedIterationNs;
        j["iteration_ratio"] = comparison->iterationRatio;
    }
    return j;
}

std::string simulationText(const AstraSimResult& sim, const SimulationComparison* comparison)
{
    std::string out;
    char line[320];
    const size_t finished = sim.ranks.size();
    if (sim.status == AstraSimStatus::Passed) {
        std::snprintf(line, sizeof line, "ASTRA-sim: PASS, %zu/%lld ranks finished, wall %.2f s\n", finished,
            static_cast<long long>(sim.npus), sim.wallS);
        out += line;
    } else if (sim.status == AstraSimStatus::Cancelled) {
        std::snprintf(line, sizeof line, "ASTRA-sim: CANCELLED, the simulator was stopped after %.2f s\n", sim.wallS);
        out += line;
    } else {
        out += "ASTRA-sim: FAIL, " + escapedText(sim.reason);
        if (sim.status == AstraSimStatus::Failed) {
            std::snprintf(line, sizeof line, "; wall %.2f s", sim.wallS);
            out += line;
        }
        out += "\n";
        for (const std::string& l : sim.relevantLines)
            out += "  " + messageExcerpt(l, 200) + "\n"; // the simulator's bytes: no terminal escapes
    }
    if (comparison && finished > 0) {
        out += "\n";
        std::snprintf(line, sizeof line, "%-6s %6s %8s %12s %12s %6s %12s %12s %6s\n", "stage", "ranks", "slowest",
            "finish", "estimate", "ratio", "exposed", "estimate", "ratio");
        out += line;
        for (const StageComparison& s : comparison->stages) {
            if (s.slowestRank < 0) {
                std::snprintf(line, sizeof line, "%-6d %6lld %8s %12s %12s %6s %12s %12s %6s\n", s.stage,
                    static_cast<long long>(s.ranks), "-", "-", formatNanoseconds(s.estimatedFinishNs).c_str(), "-", "-",
                    formatNanoseconds(s.estimatedExposedNs).c_str(), "-");
            } else {
                std::snprintf(line, sizeof line, "%-6d %6lld %8lld %12s %12s %6s %12s %12s %6s\n", s.stage,
                    static_cast<long long>(s.ranks), static_cast<long long>(s.slowestRank),
                    formatNanoseconds(s.simulatedFinishNs).c_str(), formatNanoseconds(s.estimatedFinishNs).c_str(),
                    ratioText(s.finishRatio).c_str(), formatNanoseconds(s.simulatedExposedNs).c_str(),
                    formatNanoseconds(s.estimatedExposedNs).c_str(), ratioText(s.exposedRatio).c_str());
            }
            out += line;
        }
        out += "(finish: when the stage's slowest rank ends; exposed: finish minus compute busy time; ratio: "
               "ASTRA-sim / our estimate)\n";
        bool tracked = false;
        for (const StageComparison& s : comparison->stages)
            tracked = tracked || s.simulatedPeakMemoryBytes > 0;
        if (tracked) {
            out += "\npeak memory per rank (ASTRA-sim's tensor liveness / our memory timeline):\n";
            for (const StageComparison& s : comparison->stages) {
                std::snprintf(line, sizeof line, "  stage %d: %s / %s\n", s.stage,
                    s.simulatedPeakMemoryBytes > 0 ? formatBytes(s.simulatedPeakMemoryBytes).c_str() : "-",
                    formatBytes(s.estimatedPeakMemoryBytes).c_str());
                out += line;
            }
        }
        if (comparison->slowestRank >= 0) {
            std::snprintf(line, sizeof line, "\nslowest rank: %lld (stage %d), %s; our estimate of %s: %s (ratio %s)\n",
                static_cast<long long>(comparison->slowestRank), comparison->slowestStage,
                formatNanoseconds(comparison->simulatedIterationNs).c_str(), comparison->estimated.c_str(),
                formatNanoseconds(comparison->estimatedIterationNs).c_str(),
                ratioText(comparison->iterationRatio).c_str());
            out += line;
        }
    }
    if (!sim.files.runDirectory.empty())
        out += "run folder: " + sim.files.runDirectory.string() + " (cmd.sh repeats the run)\n";
    return out;
}

namespace {

    /// Counts the nodes of a rank file and sums the num_ops of its compute nodes.
    class TraceTally final : public ChakraTraceVisitor
    {
    public:
        bool onNode(ChakraNode&& node, const ChakraRecordInfo&) override
        {
            ++nodes;
            if (node.type == ChakraNodeType::Comp)
                for (const ChakraAttribute& a : node.attrs)
                    if (a.name == "num_ops")
                        numOps += static_cast<double>(a.toInt64().value_or(0));
            return true;
        }
        int64_t nodes = 0;
        double numOps = 0;
    };

    /// The group JSON at `path` as id -> members, or nullopt (unreadable, too large, not that shape).
    std::optional<std::map<int, std::vector<int>>> readGroups(const std::filesystem::path& path)
    {
        std::error_code ec;
        const uintmax_t size = std::filesystem::file_size(path, ec);
        if (ec || size > (uintmax_t { 64 } << 20))
            return std::nullopt;
        std::ifstream in(path, std::ios::binary);
        const std::string text((std::istreambuf_iterator<char>(in)), {});
        const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
        if (j.is_discarded() || !j.is_object())
            return std::nullopt;
        std::map<int, std::vector<int>> groups;
        for (const auto& [key, members] : j.items()) {
            int id = 0;
            const auto [ptr, err] = std::from_chars(key.data(), key.data() + key.size(), id);
            if (err != std::errc() || ptr != key.data() + key.size() || !members.is_array())
                return std::nullopt;
            for (const nlohmann::json& m : members) {
                if (!m.is_number_integer())
                    return std::nullopt;
                groups[id].push_back(m.get<int>());
            }
        }
        return groups;
    }

    std::string memberText(const std::vector<int>& members)
    {
        std::string out = "[";
        for (size_t i = 0; i < members.size() && i < 8; ++i)
            out += (i ? ", " : "") + std::to_string(members[i]);
        return out + (members.size() > 8 ? ", ...]" : "]");
    }

} // namespace

std::string checkTraceSetMatches(const TraceSet& traces, const SynthesisResult& result)
{
    try {
        namespace fs = std::filesystem;
        const std::string again = ": export the set again with `stagecraft synth`, or give the config it was "
                                  "written from with --config";
        for (int64_t r = 0; r < traces.ranks; ++r) {
            const fs::path file = traces.directory / (traces.name + "." + std::to_string(r) + ".et");
            std::error_code ec;
            const fs::file_status st = fs::status(file, ec);
            if (ec || !fs::is_regular_file(st))
                return "rank file '" + file.string() + "' is not a regular file";
            if (fs::file_size(file, ec) == 0 || ec)
                return "rank file '" + file.string() + "' is empty" + again;
        }
        const fs::path rank0 = traces.directory / (traces.name + ".0.et");
        if (!whyNotStagecraftRankFile(rank0).empty())
            return {}; // another tool's traces (STAGE's): their layout is theirs, only the files were checked
        const std::map<int, std::vector<int>> expected = communicatorGroups(result);
        if (!expected.empty()) {
            if (traces.groupsPath.empty())
                return "the communicator-group file '" + (traces.directory / (traces.name + ".json")).string()
                    + "' is missing; without it ASTRA-sim runs every collective on the whole world" + again;
            const auto found = readGroups(traces.groupsPath);
            if (!found)
                return "'" + traces.groupsPath.string() + "' is not a communicator-group JSON" + again;
            if (*found != expected) {
                for (const auto& [id, members] : expected) {
                    const auto it = found->find(id);
                    if (it == found->end())
                        return "'" + traces.groupsPath.string() + "' has no group " + std::to_string(id)
                            + " (the config's group " + std::to_string(id) + " is " + memberText(members) + ")" + again;
                    if (it->second != members)
                        return "'" + traces.groupsPath.string() + "' gives group " + std::to_string(id) + " as "
                            + memberText(it->second) + ", the config as " + memberText(members) + again;
                }
                return "'" + traces.groupsPath.string() + "' holds groups the config does not have" + again;
            }
        }
        if (result.compression)
            return {}; // folded programs: the node counts of the full export are not at hand
        for (size_t cls = 0; cls < result.classes.size(); ++cls) {
            const ClassProgram& program = result.classes[cls];
            const fs::path file =
                traces.directory / (traces.name + "." + std::to_string(program.exampleRank.value) + ".et");
            TraceTally tally;
            const ChakraReadStatus status = visitChakraFile(file, tally);
            if (!status.ok())
                return "'" + file.string() + "' cannot be read: " + status.error;
            double numOps = 0;
            for (const ProgramNode& n : program.nodes)
                if (n.kind == NodeKind::Compute)
                    numOps += static_cast<double>(traceNumOps(result, program, n));
            if (tally.nodes != static_cast<int64_t>(program.nodes.size()))
                return "'" + file.string() + "' holds " + std::to_string(tally.nodes) + " nodes, but the config's "
                    + "program for its pipeline stage has " + std::to_string(program.nodes.size())
                    + ": the traces were written for another workload" + again;
            if (std::abs(tally.numOps - numOps) > 1e-9 * std::max(1.0, numOps))
                return "'" + file.string() + "' holds " + formatCount(tally.numOps) + "FLOP of compute, but the "
                    + "config's program for its pipeline stage has " + formatCount(numOps)
                    + "FLOP: the traces were written for another workload" + again;
        }
        return {};
    } catch (const std::exception& e) {
        return std::string("cannot check the trace set: ") + e.what();
    }
}

void checkSimulatedTimes(const SynthesisResult& result, const AstraSimSetup& setup, AstraSimResult& simulation)
{
    if (!(setup.peakPerfTflops > 0) || !(setup.localMemBwGBps > 0) || result.compression)
        return;
    const double peak = setup.peakPerfTflops * 1e12, bandwidth = setup.localMemBwGBps * 1e9;
    std::vector<double> lowerNs(result.classes.size(), 0);
    std::vector<int64_t> computeNodes(result.classes.size(), 0);
    for (size_t cls = 0; cls < result.classes.size(); ++cls) {
        const ClassProgram& program = result.classes[cls];
        for (const ProgramNode& n : program.nodes) {
            if (n.kind != NodeKind::Compute)
                continue;
            const double seconds = std::max(static_cast<double>(traceNumOps(result, program, n)) / peak,
                static_cast<double>(traceTensorSize(n)) / bandwidth);
            lowerNs[cls] += std::floor(seconds * 1e9);
            ++computeNodes[cls];
        }
    }
    for (const AstraSimRankResult& r : simulation.ranks) {
        if (r.rank < 0 || r.rank >= result.worldSize())
            continue;
        const size_t cls = static_cast<size_t>(result.classOf(RankId { r.rank }));
        // One nanosecond per node of slack for the double sums.
        if (r.finishNs + static_cast<double>(computeNodes[cls]) < lowerNs[cls]) {
            simulation.passed = false;
            simulation.status = AstraSimStatus::Failed;
            const std::string why = "rank " + std::to_string(r.rank) + " finished at " + formatNanoseconds(r.finishNs)
                + ", before the " + formatNanoseconds(lowerNs[cls])
                + " its compute nodes alone take on the simulated roofline: the simulator did not run these traces";
            simulation.reason = simulation.reason.empty() ? why : simulation.reason + "; " + why;
            return;
        }
    }
}

} // namespace stagecraft
