// SPDX-License-Identifier: MIT
#pragma once

#include "estimate/costmodel.h"
#include "estimate/gpuspec.h"
#include "serving/iterationtimemodel.h"
#include "serving/servingrequest.h"
#include "serving/servingscheduler.h"
#include "synthesis/progress.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace stagecraft {

/// Percentiles of one latency over the finished requests, seconds. Plain value type.
struct LatencyStats
{
    double p50 = 0, p90 = 0, p99 = 0, mean = 0, max = 0;
};

/// One point of the serving time series: every replica summed over a bucket of time (each replica's largest value in
/// the bucket, its last one where it ran no iteration). Plain value type.
struct ServingSeriesPoint
{
    double timeS = 0; ///< the bucket's start
    double running = 0;
    double waiting = 0; ///< the queue: arrived requests not running
    double kvOccupancy = 0; ///< KV blocks used / blocks, over all replicas' caches (0..1)
    double preemptions = 0; ///< since the start
    double outputTokensPerS = 0; ///< tokens sampled in the bucket / its width
};

/// A serving workload simulated over time (simulateServing()). Seconds, tokens. Plain value type.
struct ServingSimulation
{
    std::string gpu;
    std::string arrival; ///< inference.arrival
    std::string traceFile; ///< the trace read (arrival trace)
    int64_t requests = 0;
    int64_t finished = 0;
    int64_t rejected = 0; ///< whose cache can never fit a replica
    int64_t replicas = 0; ///< decode (or colocated) replicas: dp
    int64_t prefillReplicas = 0; ///< disaggregated prefill replicas (0: colocated)
    int64_t gpusPerReplica = 0;
    int64_t gpusPerPrefillReplica = 0;
    int64_t gpus = 0;
    double offeredRequestsPerS = 0; ///< requests / the span of their arrivals (0 for one batch)
    double durationS = 0; ///< from the first arrival to the last finish
    double requestsPerS = 0; ///< finished / durationS
    double outputTokensPerS = 0; ///< tokens sampled / durationS
    double outputTokensPerSPerGpu = 0;
    double goodputRequestsPerS = 0; ///< finished requests within both SLO bounds / durationS
    double goodputFraction = 0; ///< of the finished requests
    double sloTtftS = 0, sloTpotS = 0; ///< the bounds (0 = none)
    LatencyStats ttft; ///< arrival to the first token
    LatencyStats tpot; ///< (finish - first token) / (output - 1), requests of 2 or more output tokens
    LatencyStats e2e; ///< arrival to the last token
    int64_t preemptions = 0;
    int64_t kvBlocksPerReplica = 0; ///< blocks of inference.block_size tokens each decode replica holds
    int64_t kvBlocksPerPrefillReplica = 0;
    double peakKvOccupancy = 0; ///< the fullest replica's largest fraction
    double meanWaiting = 0, maxWaiting = 0, meanRunning = 0; ///< time averages over durationS (all replicas)
    /// Little's law, L = lambda W: the time-average of requests in the system (running + waiting, from the
    /// iterations), and finished / durationS times the mean end-to-end latency.
    double meanInSystem = 0;
    double littleLambdaW = 0;
    double kvTransferS = 0; ///< disaggregated: the mean KV transfer from a prefill to a decode replica
    int64_t iterations = 0;
    IterationTimeTables decodeTables; ///< of a decode (or colocated) replica
    IterationTimeTables prefillTables; ///< of a prefill replica (disaggregated)
    std::vector<ServingSeriesPoint> series; ///< at most 2,000 buckets over durationS
    /// Per finished request, in request order: TTFT, TPOT (0 for a single output token) and end-to-end latency,
    /// for the latency distribution.
    std::vector<float> ttftSamples, tpotSamples, e2eSamples;
    std::vector<ReplicaRun> runs; ///< every replica's run (prefill replicas first when disaggregated)
};

/// One replica plan prepared for simulation: its iteration-time tables and its KV cache. Plain value type.
struct ServingPlanTables
{
    IterationTimeTables tables;
    int64_t kvBlocks = 0; ///< blocks of inference.block_size tokens the replica holds
    int64_t blockBytes = 0; ///< one block on the fullest rank
    int64_t positionBytes = 0; ///< one position of one sequence on the rank holding the most
    int64_t gpus = 0; ///< tp * pp * cp
};

/// One replica of `config` as the simulation plans it: withoutTrainingKeys(), dp 1, ep 1, no prefill replicas. Pure.
Config servingReplicaConfig(const Config& config);
/// Prepares one replica of `replica` (its parallelism read with dp 1): buildIterationTimes() for prompts up to
/// `longestPrompt`, and the KV blocks (see simulateServing()). Thread-safe.
bool prepareServingPlan(const Config& replica, int64_t longestPrompt, const GpuSpec& gpu,
    const EstimateOptions& options, ServingPlanTables& out, std::string& error, ProgressSink* progress = nullptr);

/// Runs `requests` on `config`'s replicas (dp of `decode`'s plan, and inference.prefill_replicas of `prefill`'s when
/// disaggregated; `prefill` may be null otherwise) as simulateServing() describes, and summarizes. Thread-safe.
bool runServing(const Config& config, const ServingPlanTables& decode, const ServingPlanTables* prefill,
    const std::vector<ServingRequest>& requests, ServingSimulation& out, std::string& error,
    ProgressSink* progress = nullptr);

/// The requests of `config` (generateRequests(), or readRequestTrace() of inference.trace), or false with `error`.
bool servingRequests(const Config& config, std::vector<ServingRequest>& out, std::string& error);

/// Simulates serving `config`'s requests (inference.arrival: the static batch, generated arrivals or the trace) on
/// its replicas: dp replicas of tp x pp (x cp) GPUs, requests dispatched round-robin in arrival order, each replica
/// scheduled by simulateReplica() with an IterationTimeModel built from probe syntheses of its plan
/// (buildIterationTimes()). KV blocks per replica: the fullest rank's (HBM * kv_memory_fraction - weights - the
/// transient peak of a prefill of max_batched_tokens) / one block's bytes on that rank. Disaggregated
/// (prefill_replicas > 0): prefill replicas (prefill_tp x prefill_pp) run prompts to their first token, the cache then
/// moves to a decode replica over the inter-node link (each prefill rank sends its share at
/// cluster.inter_node_bandwidth_gbps * efficiency, in parallel) and joins it, round-robin in the order of arrival.
/// Swap preemption moves blocks over PCIe 5.0 x16 (64 GB/s each way, the PCI-SIG figure; H100 SXM's host link).
/// Returns false and sets `error` for a training config, a trace that cannot be read (its diagnostics), a probe that
/// fails, weights that do not fit, or a cancel. Thread-safe.
bool simulateServing(const Config& config, const GpuSpec& gpu, const EstimateOptions& options, ServingSimulation& out,
    std::string& error, ProgressSink* progress = nullptr);

/// The simulation as JSON (the report's `serving` object): {"gpu", "arrival", "trace", "requests", "finished",
/// "rejected", "replicas", "prefill_replicas", "gpus", "offered_requests_per_s", "duration_s", "requests_per_s",
/// "output_tokens_per_s", "output_tokens_per_s_per_gpu", "ttft_s", "tpot_s", "e2e_s" (each {"p50", "p90", "p99",
/// "mean", "max"}), "goodput": {"slo_ttft_s", "slo_tpot_s", "requests_per_s", "fraction"}, "preemptions",
/// "kv_cache": {"blocks_per_replica", "blocks_per_prefill_replica", "peak_occupancy"}, "queue": {"mean_waiting",
/// "max_waiting", "mean_running"}, "littles_law": {"mean_in_system", "lambda_w"}, "kv_transfer_s", "iterations",
/// "probes", "series": {"time_s", "running", "waiting", "kv_occupancy", "preemptions", "output_tokens_per_s"}}.
nlohmann::ordered_json servingSimulationJson(const ServingSimulation& s);

/// Lines of text for `stagecraft report`; each ends in a newline.
std::string servingSimulationText(const ServingSimulation& s);

/// Percentiles (nearest rank) of `values`; zeros when empty. Pure.
LatencyStats latencyStats(std::vector<double> values);

} // namespace stagecraft
