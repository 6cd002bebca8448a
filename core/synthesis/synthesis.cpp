// SPDX-License-Identifier: MIT
#include "synthesis/synthesis.h"

#include "config/configlocations.h"
#include "config/configvalidator.h"
#include "config/configwriter.h"
#include "config/programsize.h"
#include "model/modelcost.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <limits>
#include <mutex>
#include <thread>

namespace stagecraft {

namespace {

    Diagnostic error(std::string message, std::string keyPath = {})
    {
        Diagnostic d;
        d.severity = Severity::Error;
        d.keyPath = std::move(keyPath);
        d.message = std::move(message);
        return d;
    }

    Diagnostic warning(std::string message, std::string keyPath = {})
    {
        Diagnostic d = error(std::move(message), std::move(keyPath));
        d.severity = Severity::Warning;
        return d;
    }

    Diagnostic note(std::string message, std::string keyPath = {})
    {
        Diagnostic d = error(std::move(message), std::move(keyPath));
        d.severity = Severity::Note;
        return d;
    }

    bool sameModel(const ModelGraph& g, const Config& c)
    {
        return g.family == c.model.family && g.layers == c.model.layers && g.precision == c.training.precision
            && g.causalMask == c.model.causalMask && g.tiedEmbeddings == c.model.tiedEmbeddings
            && g.sharedExpert == (c.model.sharedExpertFfnHidden > 0) && g.attention == c.model.attention
            && g.qkNorm == c.model.qkNorm && g.qkvBias == c.model.qkvBias && g.mla == usesMla(c.model)
            && g.qLora == (c.model.qLoraRank > 0) && g.firstDenseLayers == c.model.firstDenseLayers
            && g.inference == isInference(c)
            && (g.inference ? g.prefill == runsPrefill(c.inference) && g.decodeSteps == decodeSteps(c.inference)
                        && g.kvCacheDtype == c.inference.kvCacheDtype
                            : g.mtpModules == c.model.mtpModules);
    }

    bool isContraction(OpKind k)
    {
        return k == OpKind::MatMul || k == OpKind::AttentionScores || k == OpKind::AttentionContext
            || k == OpKind::FlashAttention;
    }

    /// a += b; false (a unchanged) when the sum leaves int64.
    bool addChecked(int64_t& a, int64_t b)
    {
        int64_t sum = 0;
        if (__builtin_add_overflow(a, b, &sum))
            return false;
        a = sum;
        return true;
    }

    /// The per-rank totals of one class program. Sums that leave int64 set `overflowed` (a huge batch makes the
    /// FLOPs of one iteration exceed int64 even when those of one sequence fit).
    ClassSummary summarize(
        const ClassProgram& program, const ModelGraph& graph, const DistributionPlan& plan, bool& overflowed)
    {
        ClassSummary s;
        s.stage = program.stage;
        s.ranks = program.rankCount;
        s.exampleRank = program.exampleRank;
        s.nodes = static_cast<int64_t>(program.nodes.size());
        for (const ProgramNode& n : program.nodes) {
            switch (n.kind) {
            case NodeKind::Compute: {
                const int64_t replication = n.op >= 0 ? plan.opReplication[static_cast<size_t>(n.op)] : 1;
                const int64_t replicated = n.flops - n.flops / replication;
                bool ok = addChecked(s.flops, n.flops) && addChecked(s.replicatedFlops, replicated);
                if (n.op >= 0 && isContraction(graph.ops[static_cast<size_t>(n.op)].kind))
                    ok = ok && addChecked(s.matmulFlops, n.flops) && addChecked(s.replicatedMatmulFlops, replicated);
                overflowed = overflowed || !ok;
                break;
            }
            case NodeKind::Collective:
                overflowed = overflowed || !addChecked(s.collectiveBytes[static_cast<size_t>(n.collective)], n.bytes);
                s.collectiveCount[static_cast<size_t>(n.collective)] += 1;
                break;
            case NodeKind::Send:
                overflowed = overflowed || !addChecked(s.sendBytes, n.bytes);
                s.sendCount += 1;
                break;
            case NodeKind::Recv:
                overflowed = overflowed || !addChecked(s.recvBytes, n.bytes);
                s.recvCount += 1;
                break;
            }
        }
        return s;
    }

} // namespace

namespace {

    /// Plans `programConfig` and builds, summarizes and measures the program of every stage into `result` (plan,
    /// classes, summaries, memory, groups). Progress runs from `from` to `from + span`. False when it stops: a
    /// cancel (outcome.cancelled) or an error (in outcome.diagnostics); an exception escapes.
    bool buildPrograms(const Config& programConfig, const std::shared_ptr<const ModelGraph>& graph,
        ProgressSink* progress, double from, double span, const SynthesisOptions& options, SynthesisResult& result,
        SynthesisOutcome& outcome)
    {
        auto cancelled = [&] {
            if (progress && progress->cancelled()) {
                outcome.cancelled = true;
                return true;
            }
            return false;
        };
        std::string message;
        std::optional<DistributionPlan> plan = planDistribution(programConfig, graph, message);
        if (!plan) {
            outcome.diagnostics.push_back(error(message, "parallelism"));
            return false;
        }
        result.plan = std::make_shared<const DistributionPlan>(std::move(*plan));

        const int32_t pp = static_cast<int32_t>(programConfig.parallelism.pp);
        result.classes.resize(static_cast<size_t>(pp));
        result.summaries.resize(static_cast<size_t>(pp));
        result.memory.resize(static_cast<size_t>(pp));
        // Stages are independent: threads take the next unbuilt stage until none is left or one of them fails.
        std::atomic<int32_t> nextStage { 0 };
        std::atomic<int32_t> stagesDone { 0 };
        std::atomic<bool> stop { false };
        std::mutex failureMutex;
        std::exception_ptr failure;
        int32_t overflowedStage = -1;
        const DistributionPlan& distribution = *result.plan;
        // Builds one stage into its slots; false when synthesis must stop (an overflow or an exception).
        auto buildStage = [&](int32_t stage) {
            try {
                const auto at = static_cast<size_t>(stage);
                ClassProgram program = buildClassProgram(distribution, stage);
                bool overflowed = false;
                ClassSummary s = summarize(program, *graph, distribution, overflowed);
                if (overflowed) {
                    const std::lock_guard lock(failureMutex);
                    if (overflowedStage < 0 || stage < overflowedStage)
                        overflowedStage = stage;
                    return false;
                }
                MemoryTimeline m = computeMemoryTimeline(program, options.memorySeries);
                s.weightBytes = m.resident[static_cast<size_t>(MemoryCategory::Weights)];
                s.gradientBytes = m.resident[static_cast<size_t>(MemoryCategory::Gradients)];
                s.optimizerBytes = m.resident[static_cast<size_t>(MemoryCategory::Optimizer)];
                s.activationPeakBytes = m.activationPeakBytes;
                for (const Buffer& b : program.buffers)
                    if (b.category == MemoryCategory::KvCache)
                        s.kvCacheBytes += b.bytes;
                s.peakBytes = m.peakBytes;
                s.peakStep = m.peakStep;
                result.classes[at] = std::move(program);
                result.summaries[at] = s;
                result.memory[at] = std::move(m);
                ++stagesDone;
                return true;
            } catch (...) {
                const std::lock_guard lock(failureMutex);
                if (!failure)
                    failure = std::current_exception();
                return false;
            }
        };
        // The calling thread (`caller`) also polls for cancel and reports progress before each of its stages.
        auto work = [&](bool caller) {
            while (!stop) {
                if (caller && cancelled()) {
                    stop = true;
                    break;
                }
                if (caller && progress)
                    progress->report(from + span * stagesDone / pp, "building stage programs");
                const int32_t stage = nextStage++;
                if (stage >= pp || !buildStage(stage))
                    stop = true;
            }
        };
        // Threads pay off only for plans of some size: ~10k nodes build in a few milliseconds.
        const int hardware = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
        const int wanted = options.threads > 0 ? options.threads : hardware;
        const int threads = estimatedProgramNodes(programConfig) < 20000 ? 1 : std::clamp(wanted, 1, std::min(pp, 16));
        std::vector<std::thread> workers;
        for (int t = 1; t < threads; ++t)
            workers.emplace_back(work, false);
        work(true);
        for (std::thread& w : workers)
            w.join();
        if (failure)
            std::rethrow_exception(failure);
        if (overflowedStage >= 0) {
            // One sequence's costs fit (computeModelCost checked them): it is the sequences per rank.
            outcome.diagnostics.push_back(error("global_batch=" + std::to_string(programConfig.training.globalBatch)
                    + " is too large: the FLOPs or bytes of one iteration on a rank of stage "
                    + std::to_string(overflowedStage) + " do not fit in a 64-bit integer",
                "training.global_batch"));
            return false;
        }
        if (outcome.cancelled || cancelled())
            return false;
        std::vector<AxisMask> masks;
        for (const ClassProgram& program : result.classes)
            for (const ProgramNode& n : program.nodes)
                if (n.kind == NodeKind::Collective && std::find(masks.begin(), masks.end(), n.mask) == masks.end())
                    masks.push_back(n.mask);
        result.groups = GroupTable(result.plan->mesh, masks);
        return true;
    }

    /// `config` with `microBatches` micro-batches per rank (global_batch changed, nothing else).
    Config withMicroBatches(const Config& config, int64_t microBatches)
    {
        Config c = config;
        c.training.globalBatch = microBatches * config.training.microBatch * config.parallelism.dp;
        return c;
    }

    /// kept + repeats * (probed - kept) into `kept`; false (kept unchanged) when it leaves int64.
    bool extendChecked(int64_t& kept, int64_t probed, int64_t repeats)
    {
        __extension__ typedef __int128 Wide;
        const Wide value = Wide(kept) + Wide(repeats) * (Wide(probed) - Wide(kept));
        if (value > std::numeric_limits<int64_t>::max() || value < std::numeric_limits<int64_t>::min())
            return false;
        kept = static_cast<int64_t>(value);
        return true;
    }

    /// The full iteration's summary from the kept one and the probe's: every count and sum extended, the memory
    /// figures kept (they do not depend on the micro-batches beyond those in flight). False on int64 overflow.
    bool extendSummary(ClassSummary& s, const ClassSummary& probe, int64_t repeats)
    {
        bool ok = extendChecked(s.flops, probe.flops, repeats)
            && extendChecked(s.matmulFlops, probe.matmulFlops, repeats)
            && extendChecked(s.replicatedFlops, probe.replicatedFlops, repeats)
            && extendChecked(s.replicatedMatmulFlops, probe.replicatedMatmulFlops, repeats)
            && extendChecked(s.nodes, probe.nodes, repeats) && extendChecked(s.sendBytes, probe.sendBytes, repeats)
            && extendChecked(s.recvBytes, probe.recvBytes, repeats)
            && extendChecked(s.sendCount, probe.sendCount, repeats)
            && extendChecked(s.recvCount, probe.recvCount, repeats);
        for (size_t t = 0; t < s.collectiveBytes.size(); ++t)
            ok = ok && extendChecked(s.collectiveBytes[t], probe.collectiveBytes[t], repeats)
                && extendChecked(s.collectiveCount[t], probe.collectiveCount[t], repeats);
        return ok;
    }

} // namespace

/// synthesize() without anchoring its diagnostics at the config's keys.
static SynthesisOutcome synthesizeUnanchored(const Config& given, ProgressSink* progress,
    std::shared_ptr<const ModelGraph> graphCache, const SynthesisOptions& options)
{
    SynthesisOutcome outcome;
    try {
        // Serving ignores the training-only keys (validateConfig notes each); the result holds what was built.
        const Config config = withoutTrainingKeys(given);
        int64_t period = 1;
        const int64_t kept = options.compressMicroBatches ? compressedMicroBatches(config, &period) : 0;
        if (kept > 0) {
            // The program-size limit is about the nodes built: those of the kept and probe programs, not the
            // iteration's micro-batch count.
            Config relaxed = given;
            relaxed.maxProgramNodes = std::numeric_limits<int64_t>::max();
            outcome.diagnostics = validateConfig(relaxed);
            if (hasErrors(outcome.diagnostics))
                return outcome;
            const int64_t built = builtStageNodes(config, true);
            if (built > config.maxProgramNodes) {
                const std::string advice = programLimitAdvice();
                outcome.diagnostics.push_back(error("this plan needs about " + groupedCount(built)
                        + " program nodes on its largest pipeline stage even with its micro-batches compressed to "
                        + groupedCount(kept) + " (" + groupedCount(largestStageLayers(config))
                        + " layers on that stage), more than the limit of " + groupedCount(config.maxProgramNodes)
                        + " per stage; use fewer layers per stage" + (advice.empty() ? "" : ", or " + advice),
                    "model.layers"));
                return outcome;
            }
        } else {
            outcome.diagnostics = validateConfig(given);
            if (hasErrors(outcome.diagnostics))
                return outcome;
            // Validation may limit only what a compressed synthesis builds (the GUI's); this one builds every node.
            const int64_t full = builtStageNodes(config, false);
            if (validateCompressedProgramSize() && full > config.maxProgramNodes) {
                const std::string advice = programLimitAdvice();
                outcome.diagnostics.push_back(error("this plan needs about " + groupedCount(full)
                        + " program nodes on its largest pipeline stage to synthesize every micro-batch ("
                        + groupedCount(largestStageLayers(config)) + " layers x "
                        + groupedCount(microBatchesPerIteration(config)) + " micro-batches per rank), more than "
                        + "the limit of " + groupedCount(config.maxProgramNodes)
                        + " per stage; use fewer layers per stage or fewer micro-batches per rank"
                        + (advice.empty() ? "" : ", or " + advice),
                    "training.global_batch"));
                return outcome;
            }
        }
        auto cancelled = [&] {
            if (progress && progress->cancelled()) {
                outcome.cancelled = true;
                return true;
            }
            return false;
        };
        if (progress)
            progress->report(0.0, "building the model graph");
        std::shared_ptr<const ModelGraph> graph = graphCache && sameModel(*graphCache, config) ? graphCache
            : isInference(config) ? buildInferenceGraph(config.model, config.training.precision, config.inference)
                                  : buildModelGraph(config.model, config.training.precision);
        if (cancelled())
            return outcome;

        auto result = std::make_shared<SynthesisResult>();
        result->config = config;
        result->graph = graph;
        std::string message;
        std::string keyPath;
        if (!computeModelCost(*graph, config, result->cost, message, &keyPath)) {
            outcome.diagnostics.push_back(error(message, keyPath));
            return outcome;
        }
        if (kept > 0) {
            // The kept programs, then the probe one period longer (no memory series: only its sums are read).
            const Config keptConfig = withMicroBatches(config, kept);
            if (!buildPrograms(keptConfig, graph, progress, 0.05, 0.45, options, *result, outcome))
                return outcome;
            auto probe = std::make_shared<SynthesisResult>();
            probe->config = withMicroBatches(config, kept + period);
            probe->graph = graph;
            if (!computeModelCost(*graph, probe->config, probe->cost, message, &keyPath)) {
                outcome.diagnostics.push_back(error(message, keyPath));
                return outcome;
            }
            SynthesisOptions probeOptions = options;
            probeOptions.memorySeries = false;
            if (!buildPrograms(probe->config, graph, progress, 0.5, 0.45, probeOptions, *probe, outcome))
                return outcome;
            auto compression = std::make_shared<MicroBatchCompression>();
            compression->microBatches = microBatchesPerIteration(config);
            compression->keptMicroBatches = kept;
            compression->period = period;
            for (size_t c = 0; c < result->summaries.size(); ++c) {
                if (!extendSummary(result->summaries[c], probe->summaries[c], compression->repeats())) {
                    outcome.diagnostics.push_back(error("global_batch=" + std::to_string(config.training.globalBatch)
                            + " is too large: the FLOPs or bytes of one iteration on a rank of stage "
                            + std::to_string(c) + " do not fit in a 64-bit integer",
                        "training.global_batch"));
                    return outcome;
                }
            }
            compression->probe = std::move(probe);
            result->compression = std::move(compression);
            const std::string m = std::to_string(result->compression->microBatches);
            result->warnings.push_back(note("compressed schedule: the programs hold micro-batches 1-"
                    + std::to_string(kept) + " of " + m + " (the pipeline's warm-up, steady state and cool-down); "
                    + "micro-batches " + std::to_string(kept + 1) + "-" + m
                    + " repeat the steady state and are not drawn. FLOPs, bytes, node counts and the step time "
                      "are extended exactly to all "
                    + m + " micro-batches, and the memory peak is exact; exporting synthesizes every node",
                "training.global_batch"));
        } else if (!buildPrograms(config, graph, progress, 0.05, 0.9, options, *result, outcome)) {
            return outcome;
        }

        const int64_t pp = config.parallelism.pp;
        const int64_t padded = paddedVocab(config.model.vocab, config.parallelism.tp);
        // A note, not a warning: padding is what Megatron-LM does, so nothing is wrong with the config.
        if (config.parallelism.tp > 1 && padded != config.model.vocab)
            result->warnings.push_back(note("vocabulary " + std::to_string(config.model.vocab) + " padded to "
                    + std::to_string(padded) + " (a multiple of 128*tp, as Megatron-LM does); params count the "
                    + "published vocabulary, per-rank bytes the padded one",
                "model.vocab"));
        // Both concern the gradient of a shared embedding: serving has none (and leaves the MTP modules out).
        const bool training = !isInference(config);
        if (training && config.model.tiedEmbeddings && pp > 1)
            result->warnings.push_back(warning("tied embeddings with pp > 1: the first and last stage each hold the "
                                               "embedding; the all-reduce of its gradient between them is not modelled",
                "model.tied_embeddings"));
        else if (training && config.model.mtpModules > 0 && pp > 1)
            result->warnings.push_back(warning("multi-token prediction with pp > 1: the first and last stage each hold "
                                               "the embedding; the all-reduce of its gradient between them is not "
                                               "modelled",
                "model.mtp_modules"));
        if (config.model.family == Family::Moe) {
            const double load = hottestExpertLoad(config);
            if (load == 1)
                result->warnings.push_back(warning("MoE routing assumed uniform: every expert receives "
                                                   "tokens*top_k/experts tokens",
                    "model.experts"));
            else
                result->warnings.push_back(
                    warning("MoE: the programs are the hottest rank's, whose experts each receive " + formatNumber(load)
                            + " times the mean tokens*top_k/experts (parameters and model FLOPs stay uniform)",
                        "model.moe_routing_imbalance"));
        }
        for (const Diagnostic& d : outcome.diagnostics)
            result->warnings.push_back(d);
        if (progress)
            progress->report(1.0, "done");
        anchorDiagnostics(config, result->warnings);
        outcome.diagnostics = result->warnings;
        outcome.result = std::move(result);
    } catch (const std::exception& e) {
        outcome.result.reset();
        outcome.diagnostics.push_back(error(std::string("internal error: ") + e.what()));
    } catch (...) {
        outcome.result.reset();
        outcome.diagnostics.push_back(error("internal error"));
    }
    return outcome;
}

SynthesisOutcome synthesize(const Config& config, ProgressSink* progress, std::shared_ptr<const ModelGraph> graphCache,
    const SynthesisOptions& options)
{
    SynthesisOutcome outcome = synthesizeUnanchored(config, progress, std::move(graphCache), options);
    // Problems found here name a key; point them at where the config gave it.
    anchorDiagnostics(config, outcome.diagnostics);
    return outcome;
}

} // namespace stagecraft
