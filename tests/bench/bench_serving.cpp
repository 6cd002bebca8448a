// SPDX-License-Identifier: MIT
// The serving simulation (issue #28) on a 100,000-request trace of one replica: llama3-70b on one DGX H100 node
// (tp 8), the Azure LLM inference 2023 conversation excerpt (resources/traces) tiled 100 times, each copy shifted
// by the excerpt's span, so arrivals and lengths are the published ones. Publishes the end-to-end wall time
// (trace read, probe syntheses for the iteration-time tables, the scheduler over every request) and the scheduler
// alone on the same tables, in seconds.

#include "benchfigure.h"
#include "config/configloader.h"
#include "estimate/stepestimate.h"
#include "serving/requesttrace.h"
#include "serving/servingsimulation.h"

#include <benchmark/benchmark.h>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

using namespace stagecraft;

namespace {

/// Writes the tiled trace once; returns its path.
std::string tiledTrace()
{
    const std::string path = (std::filesystem::temp_directory_path() / "stagecraft-bench-trace-100k.csv").string();
    const RequestTrace excerpt =
        readRequestTrace(std::string(STAGECRAFT_SOURCE_DIR) + "/resources/traces/azure-llm-2023-conv-first1000.csv", 0);
    if (!excerpt.diagnostics.empty() || excerpt.requests.empty())
        return {};
    const double span = excerpt.requests.back().arrivalS + 0.2;
    std::ofstream out(path, std::ios::trunc);
    out << "arrival_s,prompt_tokens,output_tokens\n";
    char line[96];
    for (int copy = 0; copy < 100; ++copy)
        for (const ServingRequest& r : excerpt.requests) {
            std::snprintf(line, sizeof line, "%.7f,%lld,%lld\n", r.arrivalS + copy * span,
                static_cast<long long>(r.promptTokens), static_cast<long long>(r.outputTokens));
            out << line;
        }
    return out ? path : std::string();
}

Config traceConfig(const std::string& trace)
{
    const ConfigResult loaded = loadConfigOrPreset(
        "llama3-70b-serving", { "inference.arrival=trace", "inference.trace=" + trace, "inference.requests=0" });
    return loaded.config ? *loaded.config : Config {};
}

void BM_ServingTrace100k(benchmark::State& state)
{
    const std::string trace = tiledTrace();
    const std::optional<GpuSpec> gpu = gpuPreset("h100-sxm");
    const Config config = traceConfig(trace);
    if (trace.empty() || !gpu || !isInference(config)) {
        state.SkipWithError("the trace or the preset is missing");
        return;
    }
    int64_t finished = 0;
    for (auto _ : state) {
        ServingSimulation s;
        std::string error;
        if (!simulateServing(config, *gpu, EstimateOptions {}, s, error)) {
            state.SkipWithError(error.c_str());
            return;
        }
        finished = s.finished;
        benchmark::DoNotOptimize(s.e2e.p99);
    }
    state.counters["finished"] = benchmark::Counter(double(finished));
    bench::publishNsPerItem(state, "serving_trace_100k_s", "s", 1'000'000'000);
}
BENCHMARK(BM_ServingTrace100k)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();

void BM_ServingScheduler100k(benchmark::State& state)
{
    const std::string trace = tiledTrace();
    const std::optional<GpuSpec> gpu = gpuPreset("h100-sxm");
    const Config config = traceConfig(trace);
    ServingSimulation s;
    std::string error;
    if (trace.empty() || !gpu || !isInference(config) || !simulateServing(config, *gpu, EstimateOptions {}, s, error)) {
        state.SkipWithError("the simulation failed");
        return;
    }
    const RequestTrace requests = readRequestTrace(trace, 0);
    std::vector<ReplicaRequest> queue;
    for (size_t i = 0; i < requests.requests.size(); ++i) {
        const ServingRequest& r = requests.requests[i];
        queue.push_back({ int64_t(i), r.arrivalS, r.promptTokens, r.outputTokens, 0, 0, -1 });
    }
    SchedulerSettings settings;
    settings.kvBlocks = s.kvBlocksPerReplica;
    const IterationTimeModel model(s.decodeTables);
    for (auto _ : state) {
        const ReplicaRun run = simulateReplica(queue, settings, model);
        benchmark::DoNotOptimize(run.iterations);
    }
    bench::publishNsPerItem(state, "serving_scheduler_100k_s", "s", 1'000'000'000);
}
BENCHMARK(BM_ServingScheduler100k)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();

} // namespace

BENCHMARK_MAIN();
