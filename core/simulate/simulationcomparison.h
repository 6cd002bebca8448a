// SPDX-License-Identifier: MIT
// ASTRA-sim's per-rank figures next to our step-time estimate, per rank class (pipeline stage).
#pragma once

#include "estimate/stepestimate.h"
#include "simulate/astrasimrunner.h"
#include "synthesis/synthesis.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace stagecraft {

/// One rank class: ASTRA-sim's slowest rank of the class against the estimate of the class's example rank.
/// Exposed communication has ASTRA-sim's meaning on both sides: finish time minus compute busy time (for the
/// estimate: stepTimeS - computeTimeS), so waits on pipeline neighbours count as exposed.
struct StageComparison
{
    int32_t stage = 0;
    int64_t ranks = 0; ///< ranks of the class
    int64_t reportedRanks = 0; ///< of those, ranks with a finished line
    int64_t slowestRank = -1; ///< the class's rank that finished last in ASTRA-sim, -1 when none reported
    double simulatedFinishNs = 0;
    double simulatedExposedNs = 0; ///< of slowestRank
    double estimatedFinishNs = 0;
    double estimatedExposedNs = 0;
    double finishRatio = 0; ///< simulated / estimated, 0 when the estimate is 0 or nothing reported
    double exposedRatio = 0;
    /// With track-local-mem: the largest peak ASTRA-sim reported for a rank of the class, bytes; 0 without.
    double simulatedPeakMemoryBytes = 0;
    /// Our memory timeline's peak of the class (ClassSummary::peakBytes), bytes.
    double estimatedPeakMemoryBytes = 0;
};

/// The whole comparison. Plain value type.
struct SimulationComparison
{
    std::vector<StageComparison> stages; ///< index = stage
    int64_t slowestRank = -1; ///< over all ranks, -1 when none reported
    int32_t slowestStage = -1;
    double simulatedIterationNs = 0; ///< the slowest rank's finish
    double estimatedIterationNs = 0; ///< StepEstimate::iterationTimeS
    double iterationRatio = 0;
    /// What the trace set runs: "the iteration" (training), "the programs (prefill and decode steps)" (serving).
    std::string estimated = "the iteration";
};

/// The figures compareWithEstimate() reads, from the schedule of `result`'s programs (the serving estimate's, whose
/// programs are one prefill and the first decode steps, not an iteration): per class, when its last node ends
/// (stepTimeS) and the busy time of its compute nodes (computeTimeS); iterationTimeS the latest end. Pure.
StepEstimate programsEstimate(const SynthesisResult& result, const EstimateSchedule& schedule);

/// Groups `simulation.ranks` by class (result.classOf) and sets them against `estimate` (estimateStep() of the
/// same result). Pure; thread-safe.
SimulationComparison compareWithEstimate(
    const SynthesisResult& result, const StepEstimate& estimate, const AstraSimResult& simulation);

/// The run and, when given, the comparison as JSON: {"status", "passed", "reason", "ranks_finished", "npus",
/// "wall_s", "run_folder", "command", "relevant_lines", "ranks": [{"rank", "finish_ns", "exposed_ns",
/// "peak_memory_bytes"?}], "stages": [{"stage", "ranks", "slowest_rank", "finish_ns", "estimate_finish_ns",
/// "finish_ratio", "exposed_ns", "estimate_exposed_ns", "exposed_ratio", "peak_memory_bytes"?,
/// "estimate_peak_memory_bytes"}], "slowest_rank", "iteration_ns",
/// "estimate_iteration_ns", "iteration_ratio"}.
nlohmann::ordered_json simulationJson(const AstraSimResult& simulation, const SimulationComparison* comparison);

/// The text `stagecraft simulate` prints: the pass/fail line (with the failure's reason and relevant lines), the
/// per-stage table with ratios, the slowest rank, the wall time and the run folder. Pure.
std::string simulationText(const AstraSimResult& simulation, const SimulationComparison* comparison);

/// Whether the trace set holds the workload of `result` (the config the comparison will use), before anything
/// runs: every rank file is a non-empty regular file; when the set was written by Stagecraft, the group JSON
/// exists and holds exactly communicatorGroups(result), and per class the first rank file holds as many nodes and
/// as many compute num_ops in total as the class program exports (skipped for a plan kept folded, whose programs
/// hold only some micro-batches). Returns an empty string, or the first mismatch as a complete message. Reads
/// one rank file per class; never throws.
std::string checkTraceSetMatches(const TraceSet& traces, const SynthesisResult& result);

/// ASTRA-sim runs one GPU compute node at a time per rank (HardwareResource.cc: num_in_flight_gpu_comp_ops is 0
/// before each issue) on the roofline min(local-mem-bw x num_ops / tensor_size, peak-perf) (Roofline::get_perf),
/// for floor(num_ops / perf x 1e9) = floor(max(num_ops / peak, tensor_size / bandwidth) x 1e9) ns each
/// (Workload::issue_comp), all at astra-sim/astra-sim 518bd51. So no rank can finish before the sum of that over
/// its compute nodes. A run that says otherwise did not simulate these traces (a binary that prints finish lines
/// and ignores its inputs): `simulation` is marked failed with the first such rank in its reason. Pure but for
/// `simulation`.
void checkSimulatedTimes(const SynthesisResult& result, const AstraSimSetup& setup, AstraSimResult& simulation);

/// "12.3 ms", "456 us", "1.23 s": a duration in nanoseconds with three significant digits. Pure.
std::string formatNanoseconds(double ns);

} // namespace stagecraft
