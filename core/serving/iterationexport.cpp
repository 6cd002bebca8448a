// SPDX-License-Identifier: MIT
#include "serving/iterationexport.h"

#include "config/configvalidator.h"
#include "serving/servingsimulation.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace stagecraft {

namespace {

    int64_t roundUp(int64_t n, int64_t step)
    {
        step = std::max<int64_t>(1, step);
        return (std::max<int64_t>(1, n) + step - 1) / step * step;
    }

    /// One replica of `config` as the simulation plans it (servingReplicaConfig()), serving one static batch.
    Config replicaOf(const Config& config)
    {
        Config replica = servingReplicaConfig(config);
        replica.inference.prefillTp = 0;
        replica.inference.prefillPp = 0;
        replica.inference.arrival = RequestArrival::Batch;
        replica.inference.trace.clear();
        return replica;
    }

} // namespace

bool pickServingIteration(const Config& config, const GpuSpec& gpu, const EstimateOptions& options, int64_t iteration,
    int64_t window, ServingIterationPick& out, std::string& error, ProgressSink* progress)
{
    if (!isInference(config)) {
        error = "a serving iteration needs an inference config (workload: inference)";
        return false;
    }
    if (window < 1 || window > 4096) {
        error = "the window must be 1 to 4,096 decode steps, found " + std::to_string(window);
        return false;
    }
    if (iteration < 0 && iteration != kLongestIteration) {
        error = "the iteration must be 0 or more, found " + std::to_string(iteration);
        return false;
    }
    ServingSimulation simulation;
    if (!simulateServing(config, gpu, options, simulation, error, progress))
        return false;
    // The decode (or colocated) replicas follow the prefill replicas in `runs`.
    const size_t first = static_cast<size_t>(std::max<int64_t>(0, simulation.prefillReplicas));
    if (first >= simulation.runs.size()) {
        error = "internal error: the serving simulation ran no decode replica";
        return false;
    }
    const ReplicaRun& run = simulation.runs[first];
    const int64_t iterations = static_cast<int64_t>(run.samples.size());
    if (iteration == kLongestIteration) {
        if (iterations == 0) {
            error = "replica 0 ran no iteration";
            return false;
        }
        iteration = std::max_element(run.samples.begin(), run.samples.end(),
                        [](const ServingSample& a, const ServingSample& b) { return a.durationS < b.durationS; })
            - run.samples.begin();
    }
    if (iteration >= iterations) {
        error = "replica 0 ran " + std::to_string(iterations) + " iterations (0 to " + std::to_string(iterations - 1)
            + "); iteration " + std::to_string(iteration) + " is past its end";
        return false;
    }
    const ServingSample& sample = run.samples[static_cast<size_t>(iteration)];
    ServingIterationPick pick;
    pick.iteration = iteration;
    pick.iterations = iterations;
    pick.startS = sample.startS;
    pick.durationS = sample.durationS;
    pick.prefillChunks = sample.prefillChunks;
    pick.prefillTokens = sample.prefillTokens;
    pick.decodeSequences = sample.decodeSequences;
    pick.decodeContextTokens = sample.decodeContextTokens;

    const std::string& base = config.name;
    const std::string tag = "-iter" + std::to_string(iteration);
    if (pick.prefillChunks > 0 && pick.prefillTokens > 0) {
        Config c = replicaOf(config);
        // A disaggregated deployment's decode replica never prefills: its own prompts ran on the prefill plan.
        c.inference.phases = InferencePhases::Prefill;
        c.inference.outputTokens = 1;
        c.inference.decodeSteps = 0;
        c.inference.batch = roundUp(pick.prefillChunks, inferenceBatchStep(c));
        c.inference.promptTokens = (pick.prefillTokens + pick.prefillChunks - 1) / pick.prefillChunks;
        c.name = base + tag + "-prefill";
        pick.prefill = std::move(c);
    }
    if (pick.decodeSequences > 0) {
        Config c = replicaOf(config);
        c.inference.phases = InferencePhases::Decode;
        c.inference.batch = roundUp(pick.decodeSequences, inferenceBatchStep(c));
        const int64_t context = std::llround(pick.decodeContextTokens / static_cast<double>(pick.decodeSequences));
        // The probes' shape (probeDecodeStepTime()): the cache holds context - window positions, then `window`
        // steps each add one.
        c.inference.promptTokens = std::max<int64_t>(1, context - window);
        c.inference.decodeSteps = window;
        c.inference.outputTokens = window + 1;
        c.inference.speculativeTokens = 0;
        c.name = base + tag + "-decode";
        pick.decode = std::move(c);
    }
    out = std::move(pick);
    return true;
}

bool parseServingIteration(const std::string& text, int64_t& iteration)
{
    if (text == "longest") {
        iteration = kLongestIteration;
        return true;
    }
    if (text.empty() || text.size() > 12
        || !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return false;
    iteration = std::stoll(text);
    return true;
}

std::string servingIterationText(const ServingIterationPick& p)
{
    char line[512];
    std::snprintf(line, sizeof line,
        "iteration %lld of %lld of replica 0 at t = %.3f s, %.3f ms in the simulation: %lld prompt chunk(s) of %lld "
        "tokens in all, %lld decoding sequence(s) at a mean context of %.0f tokens\n",
        static_cast<long long>(p.iteration), static_cast<long long>(p.iterations), p.startS, p.durationS * 1e3,
        static_cast<long long>(p.prefillChunks), static_cast<long long>(p.prefillTokens),
        static_cast<long long>(p.decodeSequences),
        p.decodeSequences > 0 ? p.decodeContextTokens / static_cast<double>(p.decodeSequences) : 0.0);
    return line;
}

} // namespace stagecraft
