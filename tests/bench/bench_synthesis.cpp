// SPDX-License-Identifier: MIT
// Synthesis speed: class programs per node, and the whole report path at 16,384 ranks.
#include "benchfigure.h"
#include "config/configloader.h"
#include "report/report.h"
#include "synthesis/synthesis.h"

using namespace stagecraft;

namespace {

Config load(const std::string& preset, const std::vector<std::string>& sets)
{
    ConfigResult r = loadConfigOrPreset(preset, sets);
    if (!r.config)
        std::abort();
    return *r.config;
}

// llama3-70b, tp 8, pp 8, dp 16, 8 micro-batches (the export job): all class programs. Every key of the
// plan is stated: the preset's own plan (cp 2, interleaved, bf16 gradients) is not this job.
void BM_ClassSynthesis(benchmark::State& state)
{
    const Config c = load("llama3-70b",
        { "parallelism.dp=16", "parallelism.tp=8", "parallelism.pp=8", "parallelism.sequence_parallel=true",
            "training.global_batch=128", "parallelism.cp=1", "parallelism.schedule=1f1b",
            "parallelism.virtual_stages=1", "training.main_grad_dtype=fp32", "training.grad_reduce_dtype=fp32" });
    int64_t nodes = 0;
    for (auto _ : state) {
        SynthesisOutcome out = synthesize(c);
        nodes = 0;
        for (const ClassProgram& p : out.result->classes)
            nodes += static_cast<int64_t>(p.nodes.size());
        benchmark::DoNotOptimize(out.result);
    }
    bench::publishNsPerItem(state, "synthesis_ns_per_node", "ns/node", nodes);
}
BENCHMARK(BM_ClassSynthesis)->Unit(benchmark::kMillisecond);

// llama3-70b on 16,384 ranks (dp 256, tp 8, pp 8, cp 1): config to report JSON, as `stagecraft report --json`.
void BM_Report16k(benchmark::State& state)
{
    const Config c = load("llama3-70b",
        { "parallelism.dp=256", "parallelism.tp=8", "parallelism.pp=8", "parallelism.sequence_parallel=true",
            "training.global_batch=2048", "parallelism.cp=1", "parallelism.schedule=1f1b",
            "parallelism.virtual_stages=1", "training.main_grad_dtype=fp32", "training.grad_reduce_dtype=fp32" });
    for (auto _ : state) {
        SynthesisOutcome out = synthesize(c);
        std::string json = reportJson(*out.result).dump();
        benchmark::DoNotOptimize(json);
    }
    bench::publishNsPerItem(state, "report_llama3_70b_16384_ranks_ms", "ms", 1'000'000);
}
BENCHMARK(BM_Report16k)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
