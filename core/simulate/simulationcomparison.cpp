// SPDX-License-Identifier: MIT
#include "simulate/simulationcomparison.h"

#include "report/report.h"

#include <cmath>
#include <cstdio>

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
        out += "ASTRA-sim: FAIL, " + sim.reason;
        if (sim.status == AstraSimStatus::Failed) {
            std::snprintf(line, sizeof line, "; wall %.2f s", sim.wallS);
            out += line;
        }
        out += "\n";
        for (const std::string& l : sim.relevantLines)
            out += "  " + l + "\n";
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

} // namespace stagecraft
