// SPDX-License-Identifier: MIT
#include "estimate/sweep.h"

#include "config/configvalidator.h"
#include "estimate/estimatetext.h"
#include "estimate/quickestimate.h"
#include "estimate/servingestimate.h"
#include "estimate/stepestimate.h"
#include "model/modelcost.h"
#include "program/stageplan.h"
#include "synthesis/synthesis.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <limits>
#include <map>
#include <thread>

namespace stagecraft {

namespace {

    std::vector<int64_t> divisors(int64_t n)
    {
        std::vector<int64_t> out;
        for (int64_t d = 1; d * d <= n; ++d) {
            if (n % d != 0)
                continue;
            out.push_back(d);
            if (d != n / d)
                out.push_back(n / d);
        }
        std::sort(out.begin(), out.end());
        return out;
    }

    void reject(SweepCandidate& c, SweepRejection why, std::string key, std::string reason)
    {
        c.rejection = why;
        c.reasonKey = std::move(key);
        c.reason = std::move(reason);
    }

    /// Megatron-Core's preconditions for the overlapped expert all-to-all (configvalidator): expert parallelism,
    /// virtual stages or DualPipe when pipelined, no full recompute.
    bool overlapAllowed(int64_t ep, int64_t pp, Schedule schedule, int64_t virtualStages, Recompute recompute)
    {
        const bool chunked = schedule == Schedule::DualPipe || schedule == Schedule::DualPipeV
            || (schedule == Schedule::Interleaved && virtualStages > 1);
        return ep > 1 && (pp == 1 || chunked) && recompute != Recompute::Full;
    }

    /// Candidates of one work item share everything but recompute and ZeRO stages 0-2 (their reduced plan is built
    /// once: ReducedPlanCache). They are consecutive by construction (ZeRO outside recompute, innermost).
    bool sameGroup(const SweepCandidate& a, const SweepCandidate& b)
    {
        const bool sameZeroPlan = a.zero == b.zero || (a.zero < 3 && b.zero < 3);
        return a.dp == b.dp && a.tp == b.tp && a.pp == b.pp && a.cp == b.cp && a.ep == b.ep
            && a.microBatch == b.microBatch && sameZeroPlan && a.precision == b.precision
            && a.a2aOverlap == b.a2aOverlap && a.balancedSplit == b.balancedSplit && a.schedule == b.schedule
            && a.virtualStages == b.virtualStages && a.pipelineLayout == b.pipelineLayout;
    }

    struct Evaluator
    {
        Evaluator(const Config& b, const GpuSpec& g, const EstimateOptions& o, const SweepOptions& so)
            : base(b)
            , gpu(g)
            , options(o)
            , sweepOptions(so)
        {
        }

        const Config& base;
        const GpuSpec& gpu;
        const EstimateOptions& options;
        const SweepOptions& sweepOptions;
        double modelFlops = 0;
        double peakFlops = 0;
        int64_t gpus = 0;
        ModelGraphCache graphs;

        /// The inference graph every serving plan shares (it depends on the model and the inference section only).
        std::shared_ptr<const ModelGraph> servingGraph;

        void evaluate(SweepCandidate& c, ReducedPlanCache& plans)
        {
            if (isInference(base)) {
                evaluateServing(c);
                return;
            }
            Config config = sweepPlanConfig(base, c);
            // A plan the quick estimate does not model (a split-backward schedule, a layout, the overlapped expert
            // all-to-all) is synthesized in full, as --exact does.
            const bool exact = sweepOptions.exact || c.fullSynthesis;
            // The node limit bounds a full synthesis; the quick estimate builds reduced programs of a few layers and
            // micro-batches whatever the plan's size, so only a full synthesis is held to it.
            if (!exact)
                config.maxProgramNodes = std::numeric_limits<int64_t>::max();
            for (const Diagnostic& d : validateConfig(config)) {
                if (d.severity == Severity::Error) {
                    reject(c, SweepRejection::Invalid, d.keyPath, d.keyPath + ": " + d.message);
                    return;
                }
            }
            std::string error;
            if (exact) {
                SynthesisOptions synthesisOptions;
                synthesisOptions.memorySeries = false;
                synthesisOptions.threads = 1; // the sweep runs one candidate per thread
                // Not asked for in full (--exact): the steady state's repeats are extrapolated, as `report` does.
                synthesisOptions.compressMicroBatches = !sweepOptions.exact;
                SynthesisOutcome outcome =
                    synthesize(config, nullptr, graphs.get(config.model, config.training.precision), synthesisOptions);
                if (!outcome.result) {
                    reject(c, SweepRejection::EstimateFailed, "estimate", firstError(outcome.diagnostics));
                    return;
                }
                StepEstimate estimate;
                if (!estimateStep(*outcome.result, gpu, options, estimate, error)) {
                    reject(c, SweepRejection::EstimateFailed, "estimate", error);
                    return;
                }
                c.stepTimeS = estimate.iterationTimeS;
                for (const ClassSummary& s : outcome.result->summaries)
                    c.peakBytes = std::max(c.peakBytes, s.peakBytes);
            } else {
                QuickEstimate estimate;
                if (!quickEstimate(config, gpu, options, graphs, estimate, error, &plans)) {
                    reject(c, SweepRejection::EstimateFailed, "estimate", error);
                    return;
                }
                c.stepTimeS = estimate.iterationTimeS;
                c.peakBytes = estimate.peakBytes;
            }
            if (c.peakBytes > gpu.hbmBytes) {
                reject(c, SweepRejection::OutOfMemory, "memory",
                    "peak " + bytesText(static_cast<double>(c.peakBytes)) + " > "
                        + bytesText(static_cast<double>(gpu.hbmBytes)) + " HBM");
                return;
            }
            // Against the plan's precision's peak as `report` counts it (GpuSpec::peakFlops(): an FP8 plan's
            // against the BF16 peak, its other ops' precision).
            const double planPeak = c.precision ? gpu.peakFlops(*c.precision) : peakFlops;
            if (c.stepTimeS > 0 && planPeak > 0)
                c.mfu = modelFlops / (static_cast<double>(gpus) * planPeak * c.stepTimeS);
        }

        void evaluateServing(SweepCandidate& c)
        {
            const Config config = sweepPlanConfig(base, c);
            for (const Diagnostic& d : validateConfig(config)) {
                if (d.severity == Severity::Error) {
                    reject(c, SweepRejection::Invalid, d.keyPath, d.keyPath + ": " + d.message);
                    return;
                }
            }
            SynthesisOptions synthesisOptions;
            synthesisOptions.memorySeries = false;
            synthesisOptions.threads = 1; // the sweep runs one candidate per thread
            const SynthesisOutcome outcome = synthesize(config, nullptr, servingGraph, synthesisOptions);
            if (!outcome.result) {
                reject(c, SweepRejection::EstimateFailed, "estimate", firstError(outcome.diagnostics));
                return;
            }
            ServingEstimate estimate;
            std::string error;
            if (!estimateServing(*outcome.result, gpu, options, estimate, error)) {
                reject(c, SweepRejection::EstimateFailed, "estimate", error);
                return;
            }
            c.ttftS = estimate.ttftS;
            c.tpotS = estimate.tpotS;
            c.stepTimeS = estimate.tpotS;
            c.tokensPerSPerGpu = estimate.tokensPerSPerGpu;
            c.decodeTokensPerSPerGpu = estimate.decodeTokensPerSPerGpu;
            c.maxSequences = estimate.maxSequences;
            c.peakBytes = estimate.generationPeakBytes;
            if (c.peakBytes > gpu.hbmBytes) {
                reject(c, SweepRejection::OutOfMemory, "memory",
                    "peak " + bytesText(static_cast<double>(c.peakBytes)) + " at the end of the generation > "
                        + bytesText(static_cast<double>(gpu.hbmBytes)) + " HBM (at most "
                        + std::to_string(c.maxSequences) + " sequences fit)");
                return;
            }
            if (sweepOptions.tpotLimitS > 0 && c.tpotS > sweepOptions.tpotLimitS)
                reject(c, SweepRejection::OverTpotLimit, "tpot",
                    "time per output token " + secondsText(c.tpotS) + " > the limit of "
                        + secondsText(sweepOptions.tpotLimitS));
        }

        static std::string firstError(const std::vector<Diagnostic>& diagnostics)
        {
            for (const Diagnostic& d : diagnostics)
                if (d.severity == Severity::Error)
                    return d.keyPath.empty() ? d.message : d.keyPath + ": " + d.message;
            return "synthesis failed";
        }
    };

    /// Calls `fn` with every training plan of `gpus` GPUs (see sweep()) in enumeration order, each with its index,
    /// until it returns false. Nothing is held: the plans are made as they are visited.
    template <typename Fn>
    void forEachTrainingCandidate(const Config& base, int64_t gpus, const SweepOptions& sweepOptions, Fn&& fn)
    {
        std::vector<int64_t> microBatches;
        for (int64_t mb : sweepOptions.microBatches)
            if (mb > 0)
                microBatches.push_back(mb);
        std::sort(microBatches.begin(), microBatches.end());
        microBatches.erase(std::unique(microBatches.begin(), microBatches.end()), microBatches.end());
        if (microBatches.empty())
            microBatches.push_back(base.training.microBatch);
        const bool moe = base.model.family == Family::Moe;
        std::vector<std::pair<Schedule, int64_t>> pipelineSchedules = sweepOptions.schedules;
        if (pipelineSchedules.empty()) {
            pipelineSchedules.emplace_back(Schedule::OneFOneB, 1);
            if (base.parallelism.schedule != Schedule::OneFOneB)
                pipelineSchedules.emplace_back(base.parallelism.schedule,
                    base.parallelism.schedule == Schedule::Interleaved ? base.parallelism.virtualStages : 1);
        }
        const std::vector<std::pair<Schedule, int64_t>> noPipeline { { Schedule::OneFOneB, 1 } };
        // Varied settings (sweep options): each value, the base's first; nullopt keeps the base's.
        std::vector<std::optional<Precision>> precisions;
        for (Precision p : sweepOptions.precisions)
            if (std::find(precisions.begin(), precisions.end(), std::optional<Precision>(p)) == precisions.end())
                precisions.emplace_back(p);
        if (precisions.empty())
            precisions.emplace_back(std::nullopt);
        const bool baseOverlap = base.parallelism.overlapMoeExpertParallelComm;
        const bool baseBalanced = base.parallelism.embeddingInSplit && base.parallelism.lossInSplit;
        const std::vector<std::optional<bool>> overlaps = sweepOptions.tryA2aOverlap && moe
            ? std::vector<std::optional<bool>> { baseOverlap, !baseOverlap }
            : std::vector<std::optional<bool>> { std::nullopt };
        int64_t index = 0;
        // Every plan of one mesh (dp, tp, pp, cp) and schedule; recompute innermost: its variants share one reduced
        // plan (ReducedPlanCache).
        // The balanced split where it is another plan: a pipeline whose pp x v chunks then hold equal layer
        // counts (the validator's condition), and a base without uneven first or last stages or a layout. Where
        // neither split is even, and where the base's uneven first and last stages are for another pp, the
        // balanced layout (1F1B, GPipe and interleaved: chunks placed cyclically).
        struct Split
        {
            std::optional<bool> balanced;
            std::string layout;
        };
        auto splits = [&](const SweepCandidate& plan) {
            const std::vector<Split> asBase { Split {} };
            if (!sweepOptions.tryBalancedSplit || plan.pp <= 1)
                return asBase;
            const ParallelismConfig& b = base.parallelism;
            const int64_t v = plan.schedule == Schedule::Interleaved ? plan.virtualStages : 1;
            const int64_t chunks = plan.pp * v;
            if (!b.pipelineLayout.empty() || b.embeddingInSplit != b.lossInSplit)
                return asBase;
            if (b.firstStageLayers == 0 && b.lastStageLayers == 0) {
                if ((base.model.layers + (baseBalanced ? 0 : 2)) % chunks == 0)
                    return std::vector<Split> { Split { baseBalanced, {} }, Split { !baseBalanced, {} } };
                if ((base.model.layers + (baseBalanced ? 2 : 0)) % chunks == 0)
                    return asBase;
            } else if (plan.pp == b.pp) {
                return asBase; // the base's uneven first and last stages are for its own pipeline
            }
            if (splitsBackward(plan.schedule))
                return asBase;
            const std::optional<PipelineLayout> layout =
                balancedLayout(base.model.layers, base.model.mtpModules, plan.pp, v);
            // Not where a quick sweep would synthesize every such plan in full (an MoE model's dense first layers
            // beyond chunk 0, quickEstimateModels()): most would go unestimated past the full-synthesis limit.
            const int64_t denseFirst = base.model.family == Family::Moe ? base.model.firstDenseLayers : 0;
            if (!layout
                || (!sweepOptions.exact
                    && std::count(layout->chunks[0].begin(), layout->chunks[0].end(), LayoutItem::Decoder)
                        < denseFirst))
                return asBase;
            return std::vector<Split> { Split {}, Split { std::nullopt, layout->toString() } };
        };
        auto addPlans = [&](const SweepCandidate& plan) {
            const bool dpDividesBatch = base.training.globalBatch % plan.dp == 0;
            const std::vector<Split> planSplits = splits(plan);
            for (const std::optional<Precision>& precision : precisions)
                for (const Split& split : planSplits)
                    for (int64_t ep : moe ? divisors(plan.dp) : std::vector<int64_t> { 1 })
                        for (const std::optional<bool>& overlap : overlaps)
                            for (int64_t mb : microBatches) {
                                // A micro-batch size that does not divide the per-replica batch is no plan; when dp
                                // itself does not divide the batch, one candidate carries the validator's reason.
                                if (dpDividesBatch ? (base.training.globalBatch / plan.dp) % mb != 0
                                                   : mb != microBatches.front())
                                    continue;
                                const int zeroMax = plan.dp * plan.cp > 1 ? 3 : 0;
                                for (int zero = 0; zero <= zeroMax; ++zero)
                                    for (Recompute r : { Recompute::None, Recompute::Selective, Recompute::Full }) {
                                        SweepCandidate c = plan;
                                        c.ep = ep;
                                        c.microBatch = mb;
                                        c.recompute = r;
                                        c.zero = zero;
                                        c.precision = precision;
                                        c.balancedSplit = split.balanced;
                                        c.pipelineLayout = split.layout;
                                        c.a2aOverlap = overlap;
                                        // The other overlap setting only where it can run: elsewhere it is the
                                        // same plan as the base's.
                                        if (overlap && *overlap != baseOverlap
                                            && !overlapAllowed(ep, plan.pp, plan.schedule, plan.virtualStages, r))
                                            continue;
                                        c.index = index++;
                                        if (!fn(std::move(c)))
                                            return false;
                                    }
                            }
            return true;
        };
        for (int64_t tp : divisors(gpus))
            for (int64_t pp : divisors(gpus / tp))
                for (const auto& [schedule, virtualStages] : pp > 1 ? pipelineSchedules : noPipeline)
                    for (int64_t cp : divisors(gpus / tp / pp)) {
                        SweepCandidate plan;
                        plan.dp = gpus / tp / pp / cp;
                        plan.tp = tp;
                        plan.pp = pp;
                        plan.cp = cp;
                        plan.schedule = schedule;
                        plan.virtualStages = virtualStages;
                        plan.sequenceParallel =
                            sweepOptions.sequenceParallelWithTp ? tp > 1 : base.parallelism.sequenceParallel;
                        if (!addPlans(plan))
                            return;
                    }
    }

    /// Calls `fn` with every serving plan of `gpus` GPUs (see sweep()) in enumeration order until it returns false.
    template <typename Fn> void forEachServingCandidate(const Config& base, int64_t gpus, Fn&& fn)
    {
        const bool moe = base.model.family == Family::Moe;
        const bool prefillOnly = !runsDecode(base.inference);
        int64_t index = 0;
        for (int64_t tp : divisors(gpus))
            for (int64_t pp : divisors(gpus / tp))
                for (int64_t cp : prefillOnly ? divisors(gpus / tp / pp) : std::vector<int64_t> { 1 }) {
                    const int64_t dp = gpus / tp / pp / cp;
                    for (int64_t ep : moe ? divisors(dp) : std::vector<int64_t> { 1 }) {
                        SweepCandidate c;
                        c.dp = dp;
                        c.tp = tp;
                        c.pp = pp;
                        c.cp = cp;
                        c.ep = ep;
                        c.microBatch = base.training.microBatch;
                        c.sequenceParallel = base.parallelism.sequenceParallel;
                        c.index = index++;
                        if (!fn(std::move(c)))
                            return;
                    }
                }
    }

    /// Keeps what a sweep reports of any number of plans within a fixed memory: the best kMaxKeptPlans fitting
    /// plans, the first kMaxKeptPlans rejected ones, and a count and first reason per rejection key.
    class SweepCollector
    {
    public:
        explicit SweepCollector(SweepResult& result)
            : m_result(result)
        {
        }

        void add(SweepCandidate&& c)
        {
            if (c.rejection == SweepRejection::None) {
                ++m_result.fitting;
                m_ranked.push_back(std::move(c));
                if (m_ranked.size() >= 2 * kMaxKeptPlans)
                    trim();
                return;
            }
            ++m_result.rejectedCount;
            auto it = std::find_if(m_result.rejections.begin(), m_result.rejections.end(),
                [&](const SweepRejectionGroup& g) { return g.key == c.reasonKey; });
            if (it == m_result.rejections.end())
                m_result.rejections.push_back({ c.reasonKey, 1, c.reason });
            else
                ++it->count;
            if (m_result.rejected.size() < kMaxKeptPlans)
                m_result.rejected.push_back(std::move(c));
        }

        void finish()
        {
            trim();
            m_result.ranked = std::move(m_ranked);
            m_result.truncated = m_result.fitting > static_cast<int64_t>(m_result.ranked.size())
                || m_result.rejectedCount > static_cast<int64_t>(m_result.rejected.size());
        }

    private:
        bool better(const SweepCandidate& a, const SweepCandidate& b) const
        {
            if (m_result.serving ? a.tokensPerSPerGpu != b.tokensPerSPerGpu : a.stepTimeS != b.stepTimeS)
                return m_result.serving ? a.tokensPerSPerGpu > b.tokensPerSPerGpu : a.stepTimeS < b.stepTimeS;
            return a.index < b.index;
        }

        void trim()
        {
            std::sort(m_ranked.begin(), m_ranked.end(),
                [this](const SweepCandidate& a, const SweepCandidate& b) { return better(a, b); });
            if (m_ranked.size() > kMaxKeptPlans)
                m_ranked.resize(kMaxKeptPlans);
        }

        SweepResult& m_result;
        std::vector<SweepCandidate> m_ranked;
    };

} // namespace

Config sweepPlanConfig(const Config& base, const SweepCandidate& plan)
{
    Config config = base;
    ParallelismConfig& p = config.parallelism;
    p.dp = plan.dp;
    p.tp = plan.tp;
    p.pp = plan.pp;
    p.cp = plan.cp;
    p.ep = plan.ep;
    p.zero = plan.zero;
    p.sequenceParallel = plan.sequenceParallel;
    p.schedule = plan.schedule;
    p.virtualStages = plan.virtualStages;
    config.training.microBatch = plan.microBatch;
    config.training.recompute = plan.recompute;
    if (plan.precision)
        config.training.precision = *plan.precision;
    if (plan.a2aOverlap)
        p.overlapMoeExpertParallelComm = *plan.a2aOverlap;
    if (plan.balancedSplit) {
        p.embeddingInSplit = p.lossInSplit = *plan.balancedSplit;
        p.firstStageLayers = p.lastStageLayers = 0;
    }
    const ParallelismConfig& b = base.parallelism;
    // Without a pipeline there is no first or last stage to make uneven.
    if (p.pp == 1) {
        p.firstStageLayers = p.lastStageLayers = 0;
        p.embeddingInSplit = p.lossInSplit = false;
    }
    // The base's pipeline layout places layers on its own pp x v chunks: another pipeline gets the even split.
    if (!p.pipelineLayout.empty()
        && (p.pp != b.pp || p.schedule != b.schedule || pipelineVirtualStages(p) != pipelineVirtualStages(b))) {
        p.pipelineLayout.clear();
        p.virtualStages = plan.virtualStages;
    }
    if (!plan.pipelineLayout.empty()) {
        p.pipelineLayout = plan.pipelineLayout;
        p.firstStageLayers = p.lastStageLayers = 0;
        p.embeddingInSplit = p.lossInSplit = false;
    }
    // The overlapped expert all-to-all where the plan allows it (Megatron-Core's preconditions, configvalidator):
    // expert parallelism, virtual stages or DualPipe when pipelined, no full recompute.
    if (p.overlapMoeExpertParallelComm && !overlapAllowed(p.ep, p.pp, p.schedule, p.virtualStages, plan.recompute))
        p.overlapMoeExpertParallelComm = false;
    return config;
}

int64_t countSweepCandidates(const Config& base, int64_t gpus, const SweepOptions& sweepOptions)
{
    if (gpus < 1 || gpus > kMaxWorldSize)
        return 0;
    int64_t count = 0;
    auto counter = [&](SweepCandidate&&) {
        ++count;
        return true;
    };
    if (isInference(base))
        forEachServingCandidate(base, gpus, counter);
    else
        forEachTrainingCandidate(base, gpus, sweepOptions, counter);
    return count;
}

SweepResult sweep(const Config& base, int64_t gpus, const GpuSpec& gpu, const EstimateOptions& options,
    ProgressSink* progress, const SweepOptions& requested)
{
    // Precisions the GPU has no rate for (FP8 before Hopper) are not tried: hardwareRates() decides, as for a plan.
    SweepOptions sweepOptions = requested;
    std::erase_if(sweepOptions.precisions, [&](Precision p) {
        Config probe = base;
        probe.training.precision = p;
        return !(hardwareRates(probe, gpu, options).peakFlops > 0);
    });
    SweepResult result;
    result.gpu = gpu.name;
    result.gpus = gpus;
    result.hbmBytes = gpu.hbmBytes;
    result.peakFlops = gpu.peakFlops(base.training.precision);
    result.computeEfficiency = hardwareRates(base, gpu, options).computeEfficiency;
    result.method = sweepOptions.exact ? "exact" : "quick";
    if (gpus < 1 || gpus > kMaxWorldSize) {
        result.error =
            "the GPU count must be between 1 and " + std::to_string(kMaxWorldSize) + ", found " + std::to_string(gpus);
        return result;
    }
    result.serving = isInference(base);
    result.tpotLimitS = result.serving ? std::max(0.0, sweepOptions.tpotLimitS) : 0.0;
    if (result.serving)
        result.method = "exact";
    if (!(result.peakFlops > 0)) {
        result.error = "GPU " + gpu.name + " has no peak FLOP/s for precision " + toString(base.training.precision);
        return result;
    }
    try {
        Evaluator evaluator(base, gpu, options, sweepOptions);
        evaluator.peakFlops = result.peakFlops;
        evaluator.gpus = gpus;
        // Model FLOPs per iteration do not depend on the plan: computed once for dp = micro_batch = 1.
        if (result.serving) {
            try {
                evaluator.servingGraph = buildInferenceGraph(base.model, base.training.precision, base.inference);
            } catch (const std::exception&) {
                // Each plan's synthesis then builds (and reports) it itself.
            }
        } else {
            Config single = base;
            single.parallelism = ParallelismConfig {};
            single.training.microBatch = 1;
            ModelCost cost;
            std::string error;
            if (computeModelCost(*evaluator.graphs.get(base.model, base.training.precision), single, cost, error))
                evaluator.modelFlops = static_cast<double>(cost.microBatches)
                    * (static_cast<double>(cost.forwardFlopsPerMicroBatch)
                        + static_cast<double>(cost.backwardFlopsPerMicroBatch));
        }

        // The plans are made, evaluated and reduced batch by batch: whatever their number, the sweep holds one
        // batch and what SweepCollector keeps (sweep.h, SweepResult).
        result.candidates = countSweepCandidates(base, gpus, sweepOptions);
        if (progress)
            progress->report(0, ("evaluating " + std::to_string(result.candidates) + " plans").c_str());
        int threads =
            sweepOptions.threads > 0 ? sweepOptions.threads : static_cast<int>(std::thread::hardware_concurrency());
        threads = std::clamp(threads, 1, 8);
        SweepCollector collector(result);
        int64_t budget = std::max<int64_t>(0, sweepOptions.fullSynthesisLimit);
        int64_t evaluated = 0;
        bool stopped = false;
        std::vector<SweepCandidate> batch;
        auto runBatch = [&] {
            // A quick sweep synthesizes in full what the quick estimate does not model, within a budget that is
            // spent in enumeration order.
            if (!result.serving && !sweepOptions.exact) {
                for (SweepCandidate& c : batch) {
                    const Config config = sweepPlanConfig(base, c);
                    c.fullSynthesis = !quickEstimateModels(config);
                    if (!c.fullSynthesis || hasErrors(validateConfig(config)))
                        continue; // estimated quickly, or refused by evaluate() with the validator's reason
                    if (budget > 0) {
                        --budget;
                        continue;
                    }
                    reject(c, SweepRejection::NotEstimated, "full-synthesis",
                        std::string("not estimated: the quick sweep synthesizes at most ")
                            + std::to_string(sweepOptions.fullSynthesisLimit) + " plans of schedule "
                            + toString(config.parallelism.schedule)
                            + (config.parallelism.pipelineLayout.empty() ? "" : " with a layout")
                            + (config.parallelism.overlapMoeExpertParallelComm ? " with the overlapped all-to-all" : "")
                            + " in full (--full-plans), as its reduced programs do not model them");
                }
            }
            // Work items: runs of candidates that share a reduced plan (sameGroup).
            std::vector<size_t> groupStart;
            for (size_t i = 0; i < batch.size(); ++i) {
                const SweepCandidate& c = batch[i];
                if (i == 0 || !sameGroup(batch[i - 1], c))
                    groupStart.push_back(i);
            }
            groupStart.push_back(batch.size());
            std::atomic<size_t> next { 0 }, done { 0 };
            std::atomic<bool> stop { false };
            auto work = [&](bool reporting) {
                ReducedPlanCache plans;
                for (;;) {
                    if (stop.load())
                        return;
                    const size_t g = next.fetch_add(1);
                    if (g + 1 >= groupStart.size())
                        return;
                    for (size_t i = groupStart[g]; i < groupStart[g + 1]; ++i) {
                        if (batch[i].rejection != SweepRejection::None)
                            continue; // refused before the evaluation (NotEstimated)
                        try {
                            evaluator.evaluate(batch[i], plans);
                        } catch (const std::exception& e) {
                            reject(batch[i], SweepRejection::EstimateFailed, "estimate",
                                std::string("internal error: ") + e.what());
                        }
                    }
                    const size_t finished =
                        done.fetch_add(groupStart[g + 1] - groupStart[g]) + groupStart[g + 1] - groupStart[g];
                    if (reporting && progress) {
                        progress->report(static_cast<double>(evaluated + static_cast<int64_t>(finished))
                                / static_cast<double>(std::max<int64_t>(1, result.candidates)),
                            "evaluating plans");
                        if (progress->cancelled())
                            stop.store(true);
                    }
                }
            };
            std::vector<std::thread> pool;
            for (int t = 1; t < threads; ++t)
                pool.emplace_back(work, false);
            work(true);
            for (std::thread& t : pool)
                t.join();
            if (stop.load()) {
                stopped = true;
                // Only the groups evaluated in full count: the rest of the batch is dropped.
                batch.clear();
                return;
            }
            for (SweepCandidate& c : batch) {
                if (c.fullSynthesis && c.rejection != SweepRejection::Invalid
                    && c.rejection != SweepRejection::NotEstimated)
                    ++result.synthesizedInFull;
                collector.add(std::move(c));
            }
            evaluated += static_cast<int64_t>(batch.size());
            batch.clear();
        };
        auto visit = [&](SweepCandidate&& c) {
            // A batch ends where a group ends, so that a group's reduced plan is built once.
            if (batch.size() >= kSweepBatch) {
                if (!sameGroup(batch.back(), c)) {
                    runBatch();
                    if (stopped)
                        return false;
                }
            }
            batch.push_back(std::move(c));
            return true;
        };
        if (result.serving)
            forEachServingCandidate(base, gpus, visit);
        else
            forEachTrainingCandidate(base, gpus, sweepOptions, visit);
        if (!stopped && !batch.empty())
            runBatch();
        result.cancelled = stopped;
        collector.finish();
    } catch (const std::exception& e) {
        result.ranked.clear();
        result.rejected.clear();
        result.error = std::string("internal error in the sweep: ") + e.what();
    }
    return result;
}

std::string scheduleText(const SweepCandidate& plan)
{
    if (plan.pp == 1)
        return "-";
    if (plan.schedule == Schedule::Interleaved)
        return "interl. " + std::to_string(plan.virtualStages);
    return toString(plan.schedule);
}

nlohmann::ordered_json sweepJson(const SweepResult& r)
{
    auto servingTimes = [](const SweepCandidate& c) {
        return nlohmann::ordered_json { { "ttft_s", c.ttftS }, { "tpot_s", c.tpotS },
            { "tokens_per_s_per_gpu", c.tokensPerSPerGpu }, { "decode_tokens_per_s_per_gpu", c.decodeTokensPerSPerGpu },
            { "max_sequences", c.maxSequences }, { "peak_bytes", c.peakBytes } };
    };
    auto row = [](const SweepCandidate& c) {
        nlohmann::ordered_json j;
        j["dp"] = c.dp;
        j["tp"] = c.tp;
        j["pp"] = c.pp;
        j["cp"] = c.cp;
        j["ep"] = c.ep;
        j["micro_batch"] = c.microBatch;
        j["schedule"] = toString(c.schedule);
        j["virtual_stages"] = c.virtualStages;
        j["recompute"] = toString(c.recompute);
        j["zero"] = c.zero;
        j["sequence_parallel"] = c.sequenceParallel;
        if (c.precision)
            j["precision"] = toString(*c.precision);
        if (c.a2aOverlap)
            j["a2a_overlap"] = *c.a2aOverlap;
        if (c.balancedSplit)
            j["balanced_split"] = *c.balancedSplit;
        if (!c.pipelineLayout.empty())
            j["pipeline_layout"] = c.pipelineLayout;
        return j;
    };
    nlohmann::ordered_json j;
    j["gpu"] = r.gpu;
    j["gpus"] = r.gpus;
    j["hbm_bytes"] = r.hbmBytes;
    j["peak_flops"] = r.peakFlops;
    j["compute_efficiency"] = r.computeEfficiency;
    j["method"] = r.method;
    j["candidates"] = r.candidates;
    j["fitting"] = r.fitting;
    j["rejected_count"] = r.rejectedCount;
    if (r.truncated)
        j["truncated"] = true; // "ranked" holds the best kMaxKeptPlans, "rejected" the first kMaxKeptPlans
    if (r.serving) {
        j["workload"] = "inference";
        j["tpot_limit_s"] = r.tpotLimitS > 0 ? nlohmann::ordered_json(r.tpotLimitS) : nlohmann::ordered_json(nullptr);
    }
    if (!r.error.empty())
        j["error"] = r.error;
    if (r.cancelled)
        j["cancelled"] = true;
    nlohmann::ordered_json ranked = nlohmann::ordered_json::array();
    for (size_t i = 0; i < r.ranked.size(); ++i) {
        const SweepCandidate& c = r.ranked[i];
        nlohmann::ordered_json e { { "rank", static_cast<int64_t>(i + 1) } };
        e.update(row(c));
        if (r.serving) {
            e.update(servingTimes(c));
        } else {
            e["step_time_s"] = c.stepTimeS;
            e["mfu"] = c.mfu;
            e["peak_bytes"] = c.peakBytes;
        }
        ranked.push_back(std::move(e));
    }
    j["ranked"] = std::move(ranked);
    nlohmann::ordered_json rejected = nlohmann::ordered_json::array();
    for (const SweepCandidate& c : r.rejected) {
        nlohmann::ordered_json e = row(c);
        if (r.serving && (c.rejection == SweepRejection::OutOfMemory || c.rejection == SweepRejection::OverTpotLimit)) {
            e.update(servingTimes(c));
        } else if (c.rejection == SweepRejection::OutOfMemory) {
            e["step_time_s"] = c.stepTimeS;
            e["peak_bytes"] = c.peakBytes;
        }
        e["reason"] = c.reason;
        e["reason_key"] = c.reasonKey;
        rejected.push_back(std::move(e));
    }
    j["rejected"] = std::move(rejected);
    return j;
}

std::string variantText(const SweepCandidate& plan)
{
    std::string out;
    auto add = [&](const std::string& word) { out += (out.empty() ? "" : ", ") + word; };
    if (plan.precision)
        add(toString(*plan.precision));
    if (plan.a2aOverlap)
        add(*plan.a2aOverlap ? "a2a overlapped" : "a2a exposed");
    if (plan.balancedSplit)
        add(*plan.balancedSplit ? "E+L split" : "plain split");
    if (!plan.pipelineLayout.empty())
        add("balanced layout"); // the string itself is long: JSON "pipeline_layout", the GUI's plan text
    return out;
}

std::string sweepText(const SweepResult& r, int64_t top)
{
    std::string out;
    char line[256];
    if (!r.error.empty())
        return "sweep: " + r.error + "\n";
    std::snprintf(line, sizeof line,
        "%lld x %s: %s HBM, %.1f TFLOP/s dense peak, large GEMMs at %.2f of it (per-kernel model)\n",
        static_cast<long long>(r.gpus), r.gpu.c_str(), bytesText(static_cast<double>(r.hbmBytes)).c_str(),
        r.peakFlops / 1e12, r.computeEfficiency);
    out += line;
    if (r.serving) {
        std::snprintf(line, sizeof line,
            "%lld serving plans: %zu fit%s, %zu rejected (full synthesis; ranked by output tokens/s per GPU)%s\n\n",
            static_cast<long long>(r.candidates), static_cast<size_t>(r.fitting),
            r.tpotLimitS > 0 ? (" under a time per output token of " + secondsText(r.tpotLimitS)).c_str() : "",
            static_cast<size_t>(r.rejectedCount), r.cancelled ? " [cancelled: incomplete]" : "");
        out += line;
    } else {
        const std::string method = r.method == "exact" ? std::string("exact: full synthesis")
            : r.synthesizedInFull > 0 ? "quick: reduced programs; " + std::to_string(r.synthesizedInFull)
                + " plans they do not model (zb1p, dualpipe, dualpipev, a layout, the overlapped all-to-all) in full"
                                      : std::string("quick: reduced programs");
        out += std::to_string(r.candidates) + " plans: " + std::to_string(r.fitting) + " fit, "
            + std::to_string(r.rejectedCount) + " rejected (" + method + " estimate)"
            + (r.cancelled ? " [cancelled: incomplete]" : "") + "\n\n";
    }
    if (r.serving && !r.ranked.empty()) {
        out += "rank    dp   tp   pp   cp   ep        TTFT        TPOT   tokens/s/GPU  decode tok/s/GPU  max seqs   "
               "peak memory\n";
        const size_t rows = top > 0 ? std::min(r.ranked.size(), static_cast<size_t>(top)) : r.ranked.size();
        for (size_t i = 0; i < rows; ++i) {
            const SweepCandidate& c = r.ranked[i];
            std::snprintf(line, sizeof line,
                "%4zu %5lld %4lld %4lld %4lld %4lld  %10s  %10s  %13.1f  %16.1f  %8lld   %s / %s\n", i + 1,
                static_cast<long long>(c.dp), static_cast<long long>(c.tp), static_cast<long long>(c.pp),
                static_cast<long long>(c.cp), static_cast<long long>(c.ep), secondsText(c.ttftS).c_str(),
                secondsText(c.tpotS).c_str(), c.tokensPerSPerGpu, c.decodeTokensPerSPerGpu,
                static_cast<long long>(c.maxSequences), bytesText(static_cast<double>(c.peakBytes)).c_str(),
                bytesText(static_cast<double>(r.hbmBytes)).c_str());
            out += line;
        }
        if (static_cast<int64_t>(rows) < r.fitting)
            out += "... " + std::to_string(r.fitting - static_cast<int64_t>(rows))
                + " more fitting plans (--top, --json)\n";
    } else if (!r.ranked.empty()) {
        const size_t rows = top > 0 ? std::min(r.ranked.size(), static_cast<size_t>(top)) : r.ranked.size();
        // The varied settings (precision, overlap, split) get a column when the sweep varied any.
        bool varied = false;
        for (size_t i = 0; i < rows; ++i)
            varied = varied || !variantText(r.ranked[i]).empty();
        out +=
            std::string("rank    dp   tp   pp  schedule   cp   ep   mb  recompute  zero     step time     MFU   peak "
                        "memory")
            + (varied ? "             varied" : "") + "\n";
        for (size_t i = 0; i < rows; ++i) {
            const SweepCandidate& c = r.ranked[i];
            std::snprintf(line, sizeof line,
                "%4zu %5lld %4lld %4lld  %-9s %4lld %4lld %4lld  %-9s  %4d  %12s  %5.1f%%  %s / %s", i + 1,
                static_cast<long long>(c.dp), static_cast<long long>(c.tp), static_cast<long long>(c.pp),
                scheduleText(c).c_str(), static_cast<long long>(c.cp), static_cast<long long>(c.ep),
                static_cast<long long>(c.microBatch), toString(c.recompute), c.zero, secondsText(c.stepTimeS).c_str(),
                c.mfu * 100, bytesText(static_cast<double>(c.peakBytes)).c_str(),
                bytesText(static_cast<double>(r.hbmBytes)).c_str());
            // The last column: a layout string's length moves no other column.
            out += line + (varied ? "  " + variantText(c) : std::string())
                + (c.pipelineLayout.empty() ? std::string() : " " + c.pipelineLayout) + "\n";
        }
        if (static_cast<int64_t>(rows) < r.fitting)
            out += "... " + std::to_string(r.fitting - static_cast<int64_t>(rows))
                + " more fitting plans (--top, --json)\n";
    } else {
        out += "No plan fits.\n";
    }
    if (r.rejectedCount > 0) {
        std::vector<SweepRejectionGroup> sorted = r.rejections;
        std::stable_sort(sorted.begin(), sorted.end(), [](const SweepRejectionGroup& a, const SweepRejectionGroup& b) {
            if ((a.key == "memory") != (b.key == "memory"))
                return a.key == "memory";
            return a.count > b.count;
        });
        out += "\nRejected " + std::to_string(r.rejectedCount) + " plans:\n";
        for (const SweepRejectionGroup& g : sorted) {
            const std::string& key = g.key;
            const std::string what = key == "memory" ? "do not fit in HBM"
                : key == "tpot"                      ? "are over the time per output token limit"
                : key == "estimate"                  ? "failed"
                : key == "full-synthesis"            ? "not estimated"
                                                     : "invalid";
            // Built as a string: a long reason must not lose the line's end to a fixed buffer.
            std::snprintf(line, sizeof line, "  %6lld ", static_cast<long long>(g.count));
            out += line + what + " (" + key + "), e.g. " + g.example + "\n";
        }
    }
    return out;
}

} // namespace stagecraft
