// SPDX-License-Identifier: MIT
#include "serving/slosweep.h"

#include "config/configvalidator.h"
#include "estimate/estimatetext.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace stagecraft {

namespace {

    /// The fraction of finished requests within the bounds (0 when nothing finished); `ttft`/`tpot` select which.
    double attained(const ServingSimulation& s, double ttftS, double tpotS, bool ttft, bool tpot)
    {
        if (s.ttftSamples.empty() || s.requests == 0)
            return 0;
        int64_t good = 0;
        for (size_t i = 0; i < s.ttftSamples.size(); ++i)
            good += (!ttft || ttftS <= 0 || s.ttftSamples[i] <= ttftS)
                && (!tpot || tpotS <= 0 || s.tpotSamples[i] <= tpotS);
        return double(good) / double(s.requests); // rejected requests count as missed
    }

    /// The largest rate whose run meets `meets` (bisection; doubling first). 0 when even a trickle fails.
    template <typename Meets> double largestRate(double start, Meets meets, bool& failed)
    {
        failed = false;
        double lo = 0, hi = start;
        int doublings = 0;
        while (meets(hi, failed) && !failed && doublings++ < 14) {
            lo = hi;
            hi *= 2;
        }
        if (failed)
            return 0;
        if (lo == 0) {
            // Even the start fails: look below it.
            for (int k = 0; k < 6 && lo == 0; ++k) {
                hi /= 4;
                if (meets(hi, failed))
                    lo = hi, hi *= 4;
                if (failed)
                    return 0;
            }
            if (lo == 0)
                return 0;
        }
        for (int k = 0; k < 7; ++k) {
            const double mid = (lo + hi) / 2;
            if (meets(mid, failed))
                lo = mid;
            else
                hi = mid;
            if (failed)
                return 0;
        }
        return lo;
    }

} // namespace

SloSweepResult sloSweep(const Config& base, const GpuSpec& gpu, const EstimateOptions& estimate,
    const SloSweepOptions& options, ProgressSink* progress)
{
    SloSweepResult result;
    result.options = options;
    result.gpu = gpu.name;
    try {
        if (!isInference(base)) {
            result.error = "the SLO sweep needs an inference config (workload: inference)";
            return result;
        }
        Config workload = withoutTrainingKeys(base);
        if (workload.inference.arrival == RequestArrival::Batch)
            workload.inference.arrival = RequestArrival::Poisson;
        workload.inference.requests = options.requests;
        workload.inference.prefillReplicas = 0;
        std::vector<ServingRequest> sample;
        std::string error;
        if (!servingRequests(workload, sample, error)) {
            result.error = error;
            return result;
        }
        int64_t longestPrompt = 0;
        double meanOutput = 0;
        for (const ServingRequest& r : sample) {
            longestPrompt = std::max(longestPrompt, r.promptTokens);
            meanOutput += double(r.outputTokens);
        }
        meanOutput /= double(sample.size());
        // The requests at rate r: the sample's lengths, its arrival gaps scaled (a trace) or drawn again.
        auto requestsAt = [&](double rate) {
            std::vector<ServingRequest> out = sample;
            const double span = sample.back().arrivalS - sample.front().arrivalS;
            const double scale = span > 0 ? double(sample.size() - 1) / rate / span : 0;
            for (size_t i = 0; i < out.size(); ++i)
                out[i].arrivalS = span > 0 ? (sample[i].arrivalS - sample.front().arrivalS) * scale : double(i) / rate;
            return out;
        };
        // The replica plans.
        struct Plan
        {
            int64_t tp, pp;
            ServingPlanTables tables;
            std::string reason;
        };
        std::vector<Plan> plans;
        for (int64_t tp = 1; tp <= options.maxGpusPerReplica; tp *= 2)
            for (int64_t pp = 1; tp * pp <= options.maxGpusPerReplica; pp *= 2) {
                Config c = workload;
                c.parallelism.dp = 1;
                c.parallelism.tp = tp;
                c.parallelism.pp = pp;
                c.parallelism.cp = 1;
                c.parallelism.ep = 1;
                c.inference.batch = std::max<int64_t>(pp, inferenceBatchStep(c));
                Plan plan { tp, pp, {}, {} };
                for (const Diagnostic& d : validateConfig(c))
                    if (d.severity == Severity::Error && plan.reason.empty())
                        plan.reason = d.keyPath + ": " + d.message;
                plans.push_back(std::move(plan));
            }
        for (size_t i = 0; i < plans.size(); ++i) {
            Plan& plan = plans[i];
            if (progress) {
                progress->report(0.8 * double(i) / double(plans.size()), "probing serving plans");
                if (progress->cancelled()) {
                    result.cancelled = true;
                    return result;
                }
            }
            if (!plan.reason.empty())
                continue;
            Config c = workload;
            c.parallelism.dp = 1;
            c.parallelism.tp = plan.tp;
            c.parallelism.pp = plan.pp;
            c.inference.batch = 0;
            if (!prepareServingPlan(c, longestPrompt, gpu, estimate, plan.tables, error))
                plan.reason = error;
        }
        const double ttft = options.sloTtftS, tpot = options.sloTpotS;
        auto startRate = [&](const Plan& p) {
            // One replica's decode capacity: the tables' largest probed batch over its step time, in requests.
            const IterationTimeTables& t = p.tables.tables;
            if (t.decodeBatches.empty() || meanOutput <= 0)
                return 1.0;
            const double step = t.decodeAtLowS.back();
            return std::max(0.01, double(t.decodeBatches.back()) / std::max(step, 1e-6) / meanOutput / 4);
        };
        auto reject = [&](SloPlan p, std::string reason) {
            p.reason = std::move(reason);
            result.rejected.push_back(std::move(p));
        };
        // Colocated.
        std::vector<double> decodeRate(plans.size(), 0), prefillRate(plans.size(), 0);
        for (size_t i = 0; i < plans.size(); ++i) {
            const Plan& plan = plans[i];
            SloPlan row;
            row.tp = plan.tp;
            row.pp = plan.pp;
            if (!plan.reason.empty()) {
                reject(row, plan.reason);
                continue;
            }
            bool failed = false;
            Config c = workload;
            c.parallelism.dp = 1;
            c.parallelism.tp = plan.tp;
            c.parallelism.pp = plan.pp;
            auto runAt = [&](const Config& cfg, const ServingPlanTables& d, const ServingPlanTables* p, double rate,
                             bool wantTtft, bool wantTpot, bool& bad) {
                ServingSimulation s;
                std::string e;
                if (!runServing(cfg, d, p, requestsAt(rate), s, e)) {
                    bad = true;
                    return false;
                }
                return attained(s, ttft, tpot, wantTtft, wantTpot) >= options.attainment;
            };
            const double rate = largestRate(
                startRate(plan),
                [&](double r, bool& bad) { return runAt(c, plan.tables, nullptr, r, true, true, bad); }, failed);
            if (failed || rate <= 0) {
                reject(row, failed ? "the simulation failed" : "no rate meets the SLOs on one replica");
            } else {
                row.ratePerReplica = rate;
                row.replicas = static_cast<int64_t>(std::ceil(options.requestRate / rate - 1e-9));
                row.gpus = row.replicas * plan.tables.gpus;
                result.ranked.push_back(row);
            }
            if (!options.disaggregated)
                continue;
            // Per phase: a prefill replica meeting the TTFT bound (decode ample), a decode replica meeting the
            // TPOT bound (prefill ample).
            Config d = c;
            d.inference.prefillReplicas = 1;
            d.parallelism.dp = 16;
            prefillRate[i] = largestRate(
                startRate(plan) * 4,
                [&](double r, bool& bad) { return runAt(d, plan.tables, &plan.tables, r, true, false, bad); }, failed);
            d.inference.prefillReplicas = 16;
            d.parallelism.dp = 1;
            decodeRate[i] = largestRate(
                startRate(plan),
                [&](double r, bool& bad) { return runAt(d, plan.tables, &plan.tables, r, false, true, bad); }, failed);
            if (progress)
                progress->report(0.8 + 0.2 * double(i + 1) / double(plans.size()), "simulating rates");
        }
        if (options.disaggregated) {
            // A plan that fails one phase's bound is reported once for that phase, not for every pairing.
            for (size_t i = 0; i < plans.size(); ++i) {
                if (!plans[i].reason.empty())
                    continue;
                SloPlan row;
                row.disaggregated = true;
                if (prefillRate[i] <= 0) {
                    row.prefillTp = plans[i].tp;
                    row.prefillPp = plans[i].pp;
                    reject(row, "as a prefill replica: no rate meets the TTFT bound");
                }
                if (decodeRate[i] <= 0) {
                    row.prefillTp = row.prefillPp = 0;
                    row.tp = plans[i].tp;
                    row.pp = plans[i].pp;
                    reject(row, "as a decode replica: no rate meets the TPOT bound");
                }
            }
            for (size_t p = 0; p < plans.size(); ++p)
                for (size_t d = 0; d < plans.size(); ++d) {
                    if (!plans[p].reason.empty() || !plans[d].reason.empty() || prefillRate[p] <= 0
                        || decodeRate[d] <= 0)
                        continue;
                    SloPlan row;
                    row.disaggregated = true;
                    row.tp = plans[d].tp;
                    row.pp = plans[d].pp;
                    row.prefillTp = plans[p].tp;
                    row.prefillPp = plans[p].pp;
                    row.ratePerPrefillReplica = prefillRate[p];
                    row.ratePerReplica = decodeRate[d];
                    row.prefillReplicas = static_cast<int64_t>(std::ceil(options.requestRate / prefillRate[p] - 1e-9));
                    row.replicas = static_cast<int64_t>(std::ceil(options.requestRate / decodeRate[d] - 1e-9));
                    row.gpus = row.prefillReplicas * plans[p].tables.gpus + row.replicas * plans[d].tables.gpus;
                    result.ranked.push_back(row);
                }
        }
        std::stable_sort(result.ranked.begin(), result.ranked.end(), [](const SloPlan& a, const SloPlan& b) {
            if (a.gpus != b.gpus)
                return a.gpus < b.gpus;
            return !a.disaggregated && b.disaggregated;
        });
        if (progress)
            progress->report(1.0, "done");
    } catch (const std::exception& e) {
        result.error = std::string("internal error in the SLO sweep: ") + e.what();
    }
    return result;
}

nlohmann::ordered_json sloSweepJson(const SloSweepResult& r)
{
    nlohmann::ordered_json j;
    j["gpu"] = r.gpu;
    j["request_rate"] = r.options.requestRate;
    j["slo_ttft_s"] = r.options.sloTtftS;
    j["slo_tpot_s"] = r.options.sloTpotS;
    j["attainment"] = r.options.attainment;
    auto row = [](const SloPlan& p) {
        nlohmann::ordered_json o;
        o["disaggregated"] = p.disaggregated;
        o["tp"] = p.tp;
        o["pp"] = p.pp;
        o["prefill_tp"] = p.prefillTp;
        o["prefill_pp"] = p.prefillPp;
        o["replicas"] = p.replicas;
        o["prefill_replicas"] = p.prefillReplicas;
        o["rate_per_replica"] = p.ratePerReplica;
        o["rate_per_prefill_replica"] = p.ratePerPrefillReplica;
        o["gpus"] = p.gpus;
        return o;
    };
    nlohmann::ordered_json ranked = nlohmann::ordered_json::array();
    for (size_t i = 0; i < r.ranked.size(); ++i) {
        nlohmann::ordered_json o = row(r.ranked[i]);
        o["rank"] = i + 1;
        ranked.push_back(std::move(o));
    }
    nlohmann::ordered_json rejected = nlohmann::ordered_json::array();
    for (const SloPlan& p : r.rejected) {
        nlohmann::ordered_json o = row(p);
        o["reason"] = p.reason;
        rejected.push_back(std::move(o));
    }
    j["ranked"] = std::move(ranked);
    j["rejected"] = std::move(rejected);
    if (!r.error.empty())
        j["error"] = r.error;
    return j;
}

std::string sloSweepText(const SloSweepResult& r, int64_t top)
{
    std::string out;
    char line[512];
    if (!r.error.empty())
        return "slo sweep: " + r.error + "\n";
    std::snprintf(line, sizeof line,
        "serving plans for %.4g requests/s on %s within TTFT <= %s and TPOT <= %s for %.0f%% of requests, ranked by "
        "GPUs needed\n",
        r.options.requestRate, r.gpu.c_str(), r.options.sloTtftS > 0 ? secondsText(r.options.sloTtftS).c_str() : "-",
        r.options.sloTpotS > 0 ? secondsText(r.options.sloTpotS).c_str() : "-", 100 * r.options.attainment);
    out += line;
    std::snprintf(
        line, sizeof line, "%4s  %-32s %6s %14s %14s\n", "rank", "plan", "GPUs", "req/s/replica", "req/s/prefill");
    out += line;
    for (size_t i = 0; i < r.ranked.size() && (top <= 0 || int64_t(i) < top); ++i) {
        const SloPlan& p = r.ranked[i];
        char plan[96];
        if (p.disaggregated)
            std::snprintf(plan, sizeof plan, "%lldx P tp%lld pp%lld + %lldx D tp%lld pp%lld",
                static_cast<long long>(p.prefillReplicas), static_cast<long long>(p.prefillTp),
                static_cast<long long>(p.prefillPp), static_cast<long long>(p.replicas), static_cast<long long>(p.tp),
                static_cast<long long>(p.pp));
        else
            std::snprintf(plan, sizeof plan, "%lldx tp%lld pp%lld", static_cast<long long>(p.replicas),
                static_cast<long long>(p.tp), static_cast<long long>(p.pp));
        char prefillRate[32] = "-";
        if (p.disaggregated)
            std::snprintf(prefillRate, sizeof prefillRate, "%.4g", p.ratePerPrefillReplica);
        std::snprintf(line, sizeof line, "%4zu  %-32s %6lld %14.4g %14s\n", i + 1, plan, static_cast<long long>(p.gpus),
            p.ratePerReplica, prefillRate);
        out += line;
    }
    for (const SloPlan& p : r.rejected) {
        const bool prefill = p.disaggregated && p.prefillTp > 0;
        std::snprintf(line, sizeof line, "  rejected tp%lld pp%lld%s: %s\n",
            static_cast<long long>(prefill ? p.prefillTp : p.tp), static_cast<long long>(prefill ? p.prefillPp : p.pp),
            p.disaggregated ? "" : " (colocated)", p.reason.c_str());
        out += line;
    }
    return out;
}

} // namespace stagecraft
