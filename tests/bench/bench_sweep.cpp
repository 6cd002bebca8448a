// SPDX-License-Identifier: MIT
// The parallelism sweep of DESIGN.md §3 on its headline case: llama3-70b on 1,024 H100 SXM GPUs (every valid
// dp x tp x pp x cp with micro-batches 1, 2, 4, 8, recompute none/selective/full and ZeRO 0-3), with the
// reduced-program estimate on two threads. Publishes the wall time of one sweep and the plans per second.

#include "benchfigure.h"
#include "config/configloader.h"
#include "estimate/sweep.h"

#include <algorithm>
#include <benchmark/benchmark.h>
#include <limits>

using namespace stagecraft;

namespace {

void BM_SweepLlama3_70b_1024(benchmark::State& state)
{
    // The job the figure was published for (global batch 512, fp32 gradients, 1F1B: a 1F1B base makes the sweep
    // try 1F1B alone), not the preset's own plan (128 sequences, bf16 gradients, interleaved over 5 chunks). As in
    // `stagecraft sweep`, the node limit of a full synthesis does not hold the base: its 256 micro-batches per rank
    // would pass it, and the quick estimate builds only reduced programs.
    setDefaultMaxProgramNodes(std::numeric_limits<int64_t>::max());
    const ConfigResult loaded = loadConfigOrPreset("llama3-70b",
        { "training.global_batch=512", "training.main_grad_dtype=fp32", "training.grad_reduce_dtype=fp32",
            "parallelism.schedule=1f1b", "parallelism.virtual_stages=1" });
    const std::optional<GpuSpec> gpu = gpuPreset("h100-sxm");
    if (!loaded.config || !gpu) {
        state.SkipWithError("llama3-70b or h100-sxm preset missing");
        return;
    }
    SweepOptions options;
    options.threads = 2;
    int64_t candidates = 0, fitting = 0;
    for (auto _ : state) {
        const SweepResult result = sweep(*loaded.config, 1024, *gpu, EstimateOptions {}, nullptr, options);
        if (!result.error.empty() || result.ranked.empty()) {
            state.SkipWithError("the sweep returned no ranked plan");
            return;
        }
        candidates = result.candidates;
        fitting = static_cast<int64_t>(result.ranked.size());
        benchmark::DoNotOptimize(result.ranked.front().stepTimeS);
    }
    state.counters["candidates"] = benchmark::Counter(static_cast<double>(candidates));
    state.counters["fitting"] = benchmark::Counter(static_cast<double>(fitting));
    state.counters["candidates_per_s"] = benchmark::Counter(
        static_cast<double>(candidates) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
    // One figure in seconds: ns per iteration / 1e9 items.
    bench::publishNsPerItem(state, "sweep_llama3_70b_1024_s", "s", 1'000'000'000);
}
BENCHMARK(BM_SweepLlama3_70b_1024)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();

void BM_SweepPerPlan(benchmark::State& state)
{
    // The CPU time per plan of `stagecraft sweep llama3-70b --gpus 1024` (the preset as shipped: 21,420 plans), on
    // one thread so that wall time is CPU time: the figure issue 31 sets a target for (0.2 ms).
    setDefaultMaxProgramNodes(std::numeric_limits<int64_t>::max());
    const ConfigResult loaded = loadConfigOrPreset("llama3-70b", {});
    const std::optional<GpuSpec> gpu = gpuPreset("h100-sxm");
    if (!loaded.config || !gpu) {
        state.SkipWithError("llama3-70b or h100-sxm preset missing");
        return;
    }
    SweepOptions options;
    options.threads = 1;
    int64_t candidates = 1;
    for (auto _ : state) {
        const SweepResult result = sweep(*loaded.config, 1024, *gpu, EstimateOptions {}, nullptr, options);
        candidates = std::max<int64_t>(1, result.candidates);
        benchmark::DoNotOptimize(result.ranked.size());
    }
    bench::publishNsPerItem(state, "sweep_llama3_70b_1024_per_plan_ns", "ns/plan", candidates);
}
BENCHMARK(BM_SweepPerPlan)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();

} // namespace

BENCHMARK_MAIN();
