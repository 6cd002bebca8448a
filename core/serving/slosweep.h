// SPDX-License-Identifier: MIT
#pragma once

#include "estimate/costmodel.h"
#include "estimate/gpuspec.h"
#include "serving/servingsimulation.h"
#include "synthesis/progress.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace stagecraft {

/// What the SLO sweep asks. Plain value type.
struct SloSweepOptions
{
    double requestRate = 1; ///< requests per second the deployment must serve
    double sloTtftS = 0; ///< 0 = no bound
    double sloTpotS = 0; ///< 0 = no bound
    double attainment = 0.9; ///< the fraction of requests that must meet both bounds (DistServe's SLO attainment)
    int64_t requests = 600; ///< requests simulated per trial rate
    int64_t maxGpusPerReplica = 8; ///< tp * pp of a replica at most
    bool disaggregated = true; ///< also try prefill/decode pairs of the colocated plans
};

/// One plan of the SLO sweep: colocated replicas of tp x pp, or prefill replicas of prefillTp x prefillPp beside
/// decode replicas of tp x pp. Plain value type.
struct SloPlan
{
    bool disaggregated = false;
    int64_t tp = 1, pp = 1; ///< a colocated or decode replica
    int64_t prefillTp = 0, prefillPp = 0; ///< a prefill replica (disaggregated)
    double ratePerReplica = 0; ///< colocated: the largest rate one replica serves within the SLOs; decode: its
    double ratePerPrefillReplica = 0; ///< disaggregated: the largest rate one prefill replica meets the TTFT at
    int64_t replicas = 0; ///< ceil(requestRate / ratePerReplica)
    int64_t prefillReplicas = 0;
    int64_t gpus = 0; ///< the ranking key: replicas * tp * pp (+ prefill replicas * prefillTp * prefillPp)
    std::string reason; ///< why a plan was dropped; empty for ranked plans
};

/// The sweep's outcome: `ranked` by GPUs needed (ties: colocated first, then fewer GPUs per replica), `rejected` with
/// reasons. Plain value type.
struct SloSweepResult
{
    SloSweepOptions options;
    std::string gpu;
    std::vector<SloPlan> ranked;
    std::vector<SloPlan> rejected;
    bool cancelled = false;
    std::string error;
};

/// Ranks serving plans by the GPUs they need to serve `options.requestRate` requests per second of `base`'s workload
/// (inference.arrival poisson or gamma at that rate, or a trace scaled to it; its lengths) within the SLOs. For each
/// replica plan tp x pp (tp dividing kv_heads' multiples, tp * pp <= maxGpusPerReplica, validated), the largest
/// rate one replica sustains with `attainment` of its requests within both bounds is found by bisection over
/// simulateServing() runs (8 trials from the rate of one request per end-to-end latency upward); the replicas
/// needed are ceil(rate / that). Disaggregated (DistServe, Zhong et al., OSDI 2024, section 4: each phase sized
/// for its own SLO): a prefill replica's rate is the largest meeting the TTFT bound alone, a decode replica's the
/// largest meeting the TPOT bound alone, for every pair of plans. Probes are synthesized once per plan. Never
/// throws.
SloSweepResult sloSweep(const Config& base, const GpuSpec& gpu, const EstimateOptions& estimate,
    const SloSweepOptions& options, ProgressSink* progress = nullptr);

/// {"gpu", "request_rate", "slo_ttft_s", "slo_tpot_s", "attainment", "ranked": [{"rank", "disaggregated", "tp",
/// "pp", "prefill_tp", "prefill_pp", "replicas", "prefill_replicas", "rate_per_replica",
/// "rate_per_prefill_replica", "gpus"}], "rejected": [{..., "reason"}]}.
nlohmann::ordered_json sloSweepJson(const SloSweepResult& result);

/// The ranked table and the rejections, as text.
std::string sloSweepText(const SloSweepResult& result, int64_t top);

} // namespace stagecraft
