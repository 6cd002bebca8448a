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
            && g.mtpModules == c.model.mtpModules;
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

/// synthesize() without anchoring its diagnostics at the config's keys.
static SynthesisOutcome synthesizeUnanchored(const Config& config, ProgressSink* progress,
    std::shared_ptr<const ModelGraph> graphCache, const SynthesisOptions& options)
{
    SynthesisOutcome outcome;
    try {
        outcome.diagnostics = validateConfig(config);
        if (hasErrors(outcome.diagnostics))
            return outcome;
        auto cancelled = [&] {
            if (progress && progress->cancelled()) {
                outcome.cancelled = true;
                return true;
            }
            return false;
        };
        if (progress)
            progress->report(0.0, "building the model graph");
        std::shared_ptr<const ModelGraph> graph = graphCache && sameModel(*graphCache, config)
            ? graphCache
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
        std::optional<DistributionPlan> plan = planDistribution(config, graph, message);
        if (!plan) {
            outcome.diagnostics.push_back(error(message, "parallelism"));
            return outcome;
        }
        result->plan = std::make_shared<const DistributionPlan>(std::move(*plan));

        const int32_t pp = static_cast<int32_t>(config.parallelism.pp);
        result->classes.resize(static_cast<size_t>(pp));
        result->summaries.resize(static_cast<size_t>(pp));
        result->memory.resize(static_cast<size_t>(pp));
        // Stages are independent: threads take the next unbuilt stage until none is left or one of them fails.
        std::atomic<int32_t> nextStage { 0 };
        std::atomic<int32_t> stagesDone { 0 };
        std::atomic<bool> stop { false };
        std::mutex failureMutex;
        std::exception_ptr failure;
        int32_t overflowedStage = -1;
        const DistributionPlan& distribution = *result->plan;
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
                s.peakBytes = m.peakBytes;
                s.peakStep = m.peakStep;
                result->classes[at] = std::move(program);
                result->summaries[at] = s;
                result->memory[at] = std::move(m);
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
                    progress->report(0.05 + 0.9 * stagesDone / pp, "building stage programs");
                const int32_t stage = nextStage++;
                if (stage >= pp || !buildStage(stage))
                    stop = true;
            }
        };
        // Threads pay off only for plans of some size: ~10k nodes build in a few milliseconds.
        const int hardware = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
        const int wanted = options.threads > 0 ? options.threads : hardware;
        const int threads = estimatedProgramNodes(config) < 20000 ? 1 : std::clamp(wanted, 1, std::min(pp, 16));
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
            outcome.diagnostics.push_back(error("global_batch=" + std::to_string(config.training.globalBatch)
                    + " is too large: the FLOPs or bytes of one iteration on a rank of stage "
                    + std::to_string(overflowedStage) + " do not fit in a 64-bit integer",
                "training.global_batch"));
            return outcome;
        }
        if (outcome.cancelled || cancelled())
            return outcome;
        std::vector<AxisMask> masks;
        for (const ClassProgram& program : result->classes)
            for (const ProgramNode& n : program.nodes)
                if (n.kind == NodeKind::Collective && std::find(masks.begin(), masks.end(), n.mask) == masks.end())
                    masks.push_back(n.mask);
        result->groups = GroupTable(result->plan->mesh, masks);

        const int64_t padded = paddedVocab(config.model.vocab, config.parallelism.tp);
        // A note, not a warning: padding is what Megatron-LM does, so nothing is wrong with the config.
        if (config.parallelism.tp > 1 && padded != config.model.vocab)
            result->warnings.push_back(note("vocabulary " + std::to_string(config.model.vocab) + " padded to "
                    + std::to_string(padded) + " (a multiple of 128*tp, as Megatron-LM does); params count the "
                    + "published vocabulary, per-rank bytes the padded one",
                "model.vocab"));
        if (config.model.tiedEmbeddings && pp > 1)
            result->warnings.push_back(warning("tied embeddings with pp > 1: the first and last stage each hold the "
                                               "embedding; the all-reduce of its gradient between them is not modelled",
                "model.tied_embeddings"));
        else if (config.model.mtpModules > 0 && pp > 1)
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
