// SPDX-License-Identifier: MIT
#include "estimate/servingestimate.h"

#include "config/configvalidator.h"
#include "estimate/estimatetext.h"
#include "program/inputbytes.h"

#include <algorithm>
#include <cstdio>
#include <limits>

namespace stagecraft {

namespace {

    /// Decode steps of a probe: the third is the one measured (see estimateServing()).
    constexpr int64_t kProbeSteps = 3;

    int64_t roundUp(int64_t value, int64_t step)
    {
        step = std::max<int64_t>(1, step);
        return (value + step - 1) / step * step;
    }

    /// The serving phase (0 the prefill, k decode step k) of a compute node, -1 for other nodes.
    int32_t stepOf(const SynthesisResult& r, const ProgramNode& n)
    {
        if (n.kind != NodeKind::Compute || n.op < 0 || static_cast<size_t>(n.op) >= r.graph->ops.size())
            return -1;
        return r.graph->ops[static_cast<size_t>(n.op)].step;
    }

    /// finish[k][mb]: when the sample node of phase k and micro-batch mb ends (seconds); -1 where there is none.
    std::vector<std::vector<double>> sampleFinishes(const SynthesisResult& r, const ListSchedule& s)
    {
        const int32_t phases = r.graph->decodeSteps + 1;
        std::vector<std::vector<double>> finish(static_cast<size_t>(phases),
            std::vector<double>(static_cast<size_t>(std::max(1, r.plan->microBatches)), -1));
        for (size_t c = 0; c < r.classes.size(); ++c) {
            const ClassProgram& program = r.classes[c];
            for (size_t i = 0; i < program.nodes.size(); ++i) {
                const ProgramNode& n = program.nodes[i];
                const int32_t step = stepOf(r, n);
                if (step < 0 || step >= phases || r.graph->ops[static_cast<size_t>(n.op)].kind != OpKind::Sample
                    || n.microBatch < 0 || n.microBatch >= r.plan->microBatches)
                    continue;
                double& f = finish[static_cast<size_t>(step)][static_cast<size_t>(n.microBatch)];
                f = std::max(f, s.finish[s.at(c, i)]);
            }
        }
        return finish;
    }

    /// What phase `step`'s kernels on class `cls` move and how long they take (see DecodeStepCost).
    DecodeStepCost stepCost(const SynthesisResult& r, const ListSchedule& s, const HardwareRates& rates, size_t cls,
        int32_t step, int64_t context)
    {
        DecodeStepCost cost;
        cost.contextTokens = context;
        const ModelGraph& g = *r.graph;
        const DistributionPlan& plan = *r.plan;
        const ClassProgram& program = r.classes[cls];
        const std::vector<double>* opRates = rates.opFlopRate.get();
        for (size_t i = 0; i < program.nodes.size(); ++i) {
            const ProgramNode& n = program.nodes[i];
            if (stepOf(r, n) != step)
                continue;
            const size_t opIndex = static_cast<size_t>(n.op);
            const Op& op = g.ops[opIndex];
            // FP8 weights (inference.weight_dtype fp8): an FP8 GEMM reads one byte per weight.
            const bool fp8 = rates.opByteScale && fp8Gemm(op);
            for (size_t k = 0; k < op.inputs.size(); ++k) {
                const int64_t bytes = inputBytes(plan, opIndex, k);
                switch (g.tensor(op.inputs[k].tensor).role) {
                case TensorRole::Weight:
                    cost.weightBytes += fp8 ? bytes / 2 : bytes;
                    break;
                case TensorRole::KvCache:
                    cost.kvCacheBytes += bytes;
                    break;
                default:
                    cost.activationBytes += bytes;
                }
            }
            for (const Operand& out : op.outputs) {
                const int64_t bytes = plan.tensorBytes[static_cast<size_t>(out.tensor.value)];
                (g.tensor(out.tensor).role == TensorRole::KvCache ? cost.kvCacheBytes : cost.activationBytes) += bytes;
            }
            const double rate =
                opRates && opIndex < opRates->size() ? (*opRates)[opIndex] : rates.peakFlops * rates.computeEfficiency;
            cost.computeTimeS += static_cast<double>(n.flops) / rate;
            cost.kernelTimeS += s.duration[s.at(cls, i)];
            cost.kernelGapS += rates.kernelLaunchS;
            ++cost.kernels;
        }
        cost.bytes = cost.weightBytes + cost.kvCacheBytes + cost.activationBytes;
        cost.hbmTimeS = static_cast<double>(cost.bytes) / rates.hbmBytesPerS;
        return cost;
    }

    /// One decode step at `context` positions, measured on a decode-only probe (see estimateServing()): its time
    /// between two tokens of a sequence and each class's cost.
    struct ProbedStep
    {
        double stepTimeS = 0;
        std::vector<DecodeStepCost> classes;
    };

    bool probeDecodeStep(const Config& base, int64_t context, const GpuSpec& gpu, const EstimateOptions& options,
        std::shared_ptr<const ModelGraph>& graph, ProbedStep& out, std::string& error)
    {
        Config config = base;
        InferenceConfig& in = config.inference;
        in.phases = InferencePhases::Decode;
        in.promptTokens = std::max<int64_t>(1, context - kProbeSteps);
        in.decodeSteps = kProbeSteps;
        in.outputTokens = kProbeSteps + 1;
        SynthesisOptions synthesisOptions;
        synthesisOptions.memorySeries = false;
        synthesisOptions.threads = 1;
        const SynthesisOutcome outcome = synthesize(config, nullptr, graph, synthesisOptions);
        if (!outcome.result) {
            // The probe's own shapes, so that numbers in the reason can be traced: its prompt is context - 3.
            error = "the decode probe at a context of " + std::to_string(context) + " tokens (decode steps of "
                + std::to_string(in.batch) + " sequences over a resident prompt of " + std::to_string(in.promptTokens)
                + " tokens, on dp " + std::to_string(config.parallelism.dp) + " x tp "
                + std::to_string(config.parallelism.tp) + " x pp " + std::to_string(config.parallelism.pp) + " x cp "
                + std::to_string(config.parallelism.cp) + ") failed";
            for (const Diagnostic& d : outcome.diagnostics)
                if (d.severity == Severity::Error) {
                    error += ": " + (d.keyPath.empty() ? d.message : d.keyPath + ": " + d.message);
                    break;
                }
            return false;
        }
        const SynthesisResult& r = *outcome.result;
        graph = r.graph;
        HardwareRates rates;
        ListSchedule s;
        if (!planRates(r, gpu, options, rates, error) || !listSchedule(r, rates, false, s, error))
            return false;
        const std::vector<std::vector<double>> finish = sampleFinishes(r, s);
        double sum = 0;
        int64_t count = 0;
        for (size_t mb = 0; mb < finish[kProbeSteps].size(); ++mb) {
            const double before = finish[kProbeSteps - 1][mb], after = finish[kProbeSteps][mb];
            if (before >= 0 && after >= before) {
                sum += after - before;
                ++count;
            }
        }
        if (count == 0) {
            error = "internal error in the serving estimate: the decode probe samples no token";
            return false;
        }
        out.stepTimeS = sum / static_cast<double>(count);
        out.classes.clear();
        for (size_t c = 0; c < r.classes.size(); ++c)
            out.classes.push_back(
                stepCost(r, s, rates, c, static_cast<int32_t>(kProbeSteps), in.promptTokens + kProbeSteps));
        return true;
    }

    void memoryOf(const SynthesisResult& r, int64_t hbmBytes, ServingEstimate& e)
    {
        const Config& c = r.config;
        const InferenceConfig& in = c.inference;
        const int64_t dp = std::max<int64_t>(1, c.parallelism.dp);
        const int64_t sequences = std::max<int64_t>(1, in.batch / dp);
        int64_t perReplica = std::numeric_limits<int64_t>::max();
        for (size_t k = 0; k < r.summaries.size() && k < e.classes.size(); ++k) {
            const ClassSummary& s = r.summaries[k];
            ServingClassEstimate& ce = e.classes[k];
            ce.weightBytes = servedWeightBytes(r, k);
            ce.activationPeakBytes = s.activationPeakBytes;
            ce.generationKvCacheBytes = generationKvCacheBytes(r, k);
            ce.kvCacheBytesPerSequence = ce.generationKvCacheBytes / sequences;
            ce.generationPeakBytes =
                std::max(s.peakBytes, ce.weightBytes + ce.activationPeakBytes + ce.generationKvCacheBytes);
            const int64_t room = hbmBytes - ce.weightBytes - ce.activationPeakBytes;
            ce.maxSequencesPerReplica = room <= 0 ? 0
                : ce.kvCacheBytesPerSequence > 0  ? room / ce.kvCacheBytesPerSequence
                                                  : std::numeric_limits<int64_t>::max() / dp;
            perReplica = std::min(perReplica, ce.maxSequencesPerReplica);
            e.generationPeakBytes = std::max(e.generationPeakBytes, ce.generationPeakBytes);
        }
        const int64_t step = inferenceBatchStep(c);
        const int64_t bound = perReplica > std::numeric_limits<int64_t>::max() / dp
            ? std::numeric_limits<int64_t>::max()
            : perReplica * dp;
        e.maxSequences = step > 0 ? bound / step * step : 0;
    }

    nlohmann::ordered_json stepJson(const DecodeStepCost& s)
    {
        return { { "context_tokens", s.contextTokens }, { "bytes", s.bytes }, { "weight_bytes", s.weightBytes },
            { "kv_cache_bytes", s.kvCacheBytes }, { "activation_bytes", s.activationBytes },
            { "hbm_time_s", s.hbmTimeS }, { "compute_time_s", s.computeTimeS }, { "kernel_time_s", s.kernelTimeS },
            { "kernel_gap_s", s.kernelGapS }, { "kernels", s.kernels } };
    }

} // namespace

DecodeStepCost meanDecodeStep(const ServingClassEstimate& c)
{
    const DecodeStepCost& a = c.firstStep;
    const DecodeStepCost& b = c.lastStep;
    DecodeStepCost m;
    m.contextTokens = (a.contextTokens + b.contextTokens) / 2;
    m.weightBytes = (a.weightBytes + b.weightBytes) / 2;
    m.kvCacheBytes = (a.kvCacheBytes + b.kvCacheBytes) / 2;
    m.activationBytes = (a.activationBytes + b.activationBytes) / 2;
    m.bytes = (a.bytes + b.bytes) / 2;
    m.hbmTimeS = (a.hbmTimeS + b.hbmTimeS) / 2;
    m.computeTimeS = (a.computeTimeS + b.computeTimeS) / 2;
    m.kernelTimeS = (a.kernelTimeS + b.kernelTimeS) / 2;
    m.kernelGapS = (a.kernelGapS + b.kernelGapS) / 2;
    m.kernels = (a.kernels + b.kernels) / 2;
    return m;
}

int64_t generationKvCacheBytes(const SynthesisResult& result, size_t cls)
{
    const Config& c = result.config;
    if (!isInference(c) || cls >= result.summaries.size())
        return 0;
    const InferenceConfig& in = c.inference;
    const int64_t cp = std::max<int64_t>(1, c.parallelism.cp);
    const int64_t prompt = promptTokens(c);
    // Positions a rank holds per sequence, in whole blocks: at the end of the programs, and at the end of the
    // generation (the last output token is sampled, never written to the cache).
    const int64_t programPositions = roundUp(prompt / cp + decodeSteps(in), in.blockSize);
    const int64_t generationPositions =
        roundUp((prompt + (runsDecode(in) ? in.outputTokens - 1 : 0)) / cp, in.blockSize);
    const int64_t perPosition = programPositions > 0 ? result.summaries[cls].kvCacheBytes / programPositions : 0;
    return perPosition * generationPositions;
}

bool timeToFirstTokenS(const SynthesisResult& result, const GpuSpec& gpu, const EstimateOptions& options, double& ttftS,
    std::string& error)
{
    try {
        if (!isInference(result.config) || !result.graph || !result.graph->inference) {
            error = "the time to first token needs an inference config (workload: inference)";
            return false;
        }
        HardwareRates rates;
        ListSchedule scheduled;
        if (!planRates(result, gpu, options, rates, error) || !listSchedule(result, rates, false, scheduled, error))
            return false;
        ttftS = 0;
        if (runsPrefill(result.config.inference)) {
            const std::vector<std::vector<double>> samples = sampleFinishes(result, scheduled);
            for (double f : samples.front())
                ttftS = std::max(ttftS, f);
        }
        return true;
    } catch (const std::exception& ex) {
        error = std::string("internal error in the serving estimate: ") + ex.what();
        return false;
    }
}

int64_t servedWeightBytes(const SynthesisResult& result, size_t cls)
{
    if (cls >= result.summaries.size())
        return 0;
    const int64_t bytes = result.summaries[cls].weightBytes;
    if (!isInference(result.config) || !result.config.inference.fp8Weights || !result.graph || !result.plan)
        return bytes;
    const ModelGraph& g = *result.graph;
    std::vector<char> fp8(g.tensors.size(), 0);
    for (const Op& op : g.ops)
        if (fp8Gemm(op))
            for (const Operand& in : op.inputs)
                if (g.tensor(in.tensor).role == TensorRole::Weight)
                    fp8[static_cast<size_t>(in.tensor.value)] = 1;
    double all = 0, share = 0;
    for (size_t t = 0; t < g.tensors.size(); ++t)
        if (g.tensors[t].role == TensorRole::Weight) {
            const double b = static_cast<double>(result.plan->tensorBytes[t]);
            all += b;
            share += fp8[t] ? b : 0;
        }
    return all > 0 ? bytes - static_cast<int64_t>(static_cast<double>(bytes) * share / all / 2) : bytes;
}

bool probeDecodeStepTime(const Config& config, int64_t context, const GpuSpec& gpu, const EstimateOptions& options,
    std::shared_ptr<const ModelGraph>& graph, double& stepTimeS, std::string& error)
{
    try {
        ProbedStep step;
        if (!probeDecodeStep(config, context, gpu, options, graph, step, error))
            return false;
        stepTimeS = step.stepTimeS;
        return true;
    } catch (const std::exception& ex) {
        error = std::string("internal error in the decode probe: ") + ex.what();
        return false;
    }
}

bool estimateServing(const SynthesisResult& result, const GpuSpec& gpu, const EstimateOptions& options,
    ServingEstimate& out, std::string& error, EstimateSchedule* schedule)
{
    try {
        const Config& config = result.config;
        if (!isInference(config) || !result.graph || !result.graph->inference) {
            error = "the serving estimate needs an inference config (workload: inference)";
            return false;
        }
        HardwareRates rates;
        ListSchedule scheduled;
        if (!planRates(result, gpu, options, rates, error)
            || !listSchedule(result, rates, schedule != nullptr, scheduled, error))
            return false;
        const InferenceConfig& in = config.inference;
        ServingEstimate e;
        e.gpu = gpu.name;
        e.peakFlops = rates.peakFlops;
        e.computeEfficiency = rates.computeEfficiency;
        e.hbmBytesPerS = gpu.hbmBytesPerS;
        e.hbmBytes = gpu.hbmBytes;
        e.assumptions = assumptionsOf(rates);
        e.assumptions.serving = true;
        e.batch = in.batch;
        e.replicas = std::max<int64_t>(1, config.parallelism.dp);
        e.worldSize = result.worldSize();
        for (double f : scheduled.finish)
            e.programsTimeS = std::max(e.programsTimeS, f);
        if (runsPrefill(in)) {
            const std::vector<std::vector<double>> samples = sampleFinishes(result, scheduled);
            for (double f : samples.front())
                e.ttftS = std::max(e.ttftS, f);
        }
        e.classes.resize(result.classes.size());
        for (size_t c = 0; c < e.classes.size(); ++c)
            e.classes[c].stage = result.classes[c].stage;

        const int64_t prompt = promptTokens(config);
        if (runsDecode(in)) {
            std::shared_ptr<const ModelGraph> probeGraph;
            ProbedStep first, last;
            if (!probeDecodeStep(config, prompt + 1, gpu, options, probeGraph, first, error))
                return false;
            if (in.outputTokens > 2) {
                if (!probeDecodeStep(config, prompt + in.outputTokens - 1, gpu, options, probeGraph, last, error))
                    return false;
            } else {
                last = first;
            }
            if (first.classes.size() != e.classes.size() || last.classes.size() != e.classes.size()) {
                error = "internal error in the serving estimate: the decode probe has other stages";
                return false;
            }
            e.tpotFirstS = first.stepTimeS;
            e.tpotLastS = last.stepTimeS;
            e.tpotS = (first.stepTimeS + last.stepTimeS) / 2;
            for (size_t c = 0; c < e.classes.size(); ++c) {
                e.classes[c].firstStep = first.classes[c];
                e.classes[c].lastStep = last.classes[c];
                if (last.classes[c].hbmTimeS > e.classes[static_cast<size_t>(e.decodeStage)].lastStep.hbmTimeS)
                    e.decodeStage = static_cast<int32_t>(c);
            }
        }
        const int64_t decodeTokens = runsDecode(in) ? in.outputTokens - 1 : 0;
        const int64_t tokensPerSequence = (runsPrefill(in) ? 1 : 0) + decodeTokens;
        e.generationTimeS = e.ttftS + static_cast<double>(decodeTokens) * e.tpotS;
        if (e.generationTimeS > 0) {
            e.tokensPerS = static_cast<double>(e.batch) * static_cast<double>(tokensPerSequence) / e.generationTimeS;
            e.tokensPerSPerReplica = e.tokensPerS / static_cast<double>(e.replicas);
            e.tokensPerSPerGpu = e.tokensPerS / static_cast<double>(e.worldSize);
        }
        if (e.tpotS > 0)
            e.decodeTokensPerSPerGpu = static_cast<double>(e.batch) / e.tpotS / static_cast<double>(e.worldSize);
        memoryOf(result, gpu.hbmBytes, e);
        if (schedule)
            *schedule = estimateScheduleOf(result, scheduled, rates.overlapP2pComm);
        out = std::move(e);
        return true;
    } catch (const std::exception& ex) {
        error = std::string("internal error in the serving estimate: ") + ex.what();
        return false;
    }
}

nlohmann::ordered_json servingEstimateJson(const ServingEstimate& e)
{
    nlohmann::ordered_json j;
    j["gpu"] = e.gpu;
    j["peak_flops"] = e.peakFlops;
    j["compute_efficiency"] = e.computeEfficiency;
    j["hbm_bandwidth_gbps"] = e.hbmBytesPerS / 1e9;
    j["assumptions"] = assumptionsJson(e.assumptions);
    j["ttft_s"] = e.ttftS;
    j["tpot_s"] = e.tpotS;
    j["tpot_first_s"] = e.tpotFirstS;
    j["tpot_last_s"] = e.tpotLastS;
    j["generation_time_s"] = e.generationTimeS;
    j["tokens_per_s"] = e.tokensPerS;
    j["tokens_per_s_per_replica"] = e.tokensPerSPerReplica;
    j["tokens_per_s_per_gpu"] = e.tokensPerSPerGpu;
    j["decode_tokens_per_s_per_gpu"] = e.decodeTokensPerSPerGpu;
    j["max_sequences"] = e.maxSequences;
    j["fits"] = servingPlanFits(e);
    j["generation_peak_bytes"] = e.generationPeakBytes;
    if (!e.classes.empty()) {
        const ServingClassEstimate& c = e.classes[static_cast<size_t>(e.decodeStage)];
        j["decode"] = { { "stage", c.stage }, { "first_step", stepJson(c.firstStep) },
            { "last_step", stepJson(c.lastStep) } };
    }
    nlohmann::ordered_json classes = nlohmann::ordered_json::array();
    for (const ServingClassEstimate& c : e.classes)
        classes.push_back({ { "stage", c.stage }, { "kv_cache_bytes_per_sequence", c.kvCacheBytesPerSequence },
            { "generation_kv_cache_bytes", c.generationKvCacheBytes },
            { "generation_peak_bytes", c.generationPeakBytes },
            { "max_sequences_per_replica", c.maxSequencesPerReplica },
            { "decode_bytes_per_step", meanDecodeStep(c).bytes },
            { "decode_hbm_time_s", meanDecodeStep(c).hbmTimeS } });
    j["classes"] = std::move(classes);
    return j;
}

bool servingPlanFits(const ServingEstimate& e)
{
    return e.maxSequences >= e.batch && e.generationPeakBytes <= e.hbmBytes;
}

std::string servingMisfitText(const ServingEstimate& e)
{
    return "inference.batch " + std::to_string(e.batch) + " needs "
        + bytesText(static_cast<double>(e.generationPeakBytes))
        + " per rank at the end of the generation, more than the " + bytesText(static_cast<double>(e.hbmBytes))
        + " of HBM (at most " + std::to_string(e.maxSequences) + " concurrent sequences fit)";
}

std::string servingEstimateText(const ServingEstimate& e)
{
    std::string out;
    char line[512];
    const std::string ttft = e.ttftS > 0 ? secondsText(e.ttftS) : std::string("- (no prefill phase)");
    const std::string tpot = e.tpotS > 0 ? secondsText(e.tpotS) + " (" + secondsText(e.tpotFirstS)
            + " at the first decode step, " + secondsText(e.tpotLastS) + " at the last)"
                                         : std::string("- (no decode phase)");
    std::snprintf(line, sizeof line, "serving estimate on %s: time to first token %s, time per output token %s\n",
        e.gpu.c_str(), ttft.c_str(), tpot.c_str());
    out += line;
    if (!servingPlanFits(e))
        out += "  DOES NOT FIT: " + servingMisfitText(e)
            + "; the times and throughput below are those of a GPU with enough memory\n";
    std::snprintf(line, sizeof line,
        "  throughput: %.4g output tokens/s per GPU over the generation of %s (%.4g per replica, %.4g overall)",
        e.tokensPerSPerGpu, secondsText(e.generationTimeS).c_str(), e.tokensPerSPerReplica, e.tokensPerS);
    out += line;
    if (e.decodeTokensPerSPerGpu > 0) {
        std::snprintf(line, sizeof line, "; decode alone %.4g per GPU", e.decodeTokensPerSPerGpu);
        out += line;
    }
    out += "\n";
    if (!e.classes.empty() && e.tpotS > 0) {
        const ServingClassEstimate& c = e.classes[static_cast<size_t>(e.decodeStage)];
        for (const DecodeStepCost* s : { &c.firstStep, &c.lastStep }) {
            std::snprintf(line, sizeof line,
                "  decode step at %lld tokens of context, stage %d: moves %s through HBM (weights %s, KV cache %s, "
                "activations %s): %s at HBM speed; compute alone %s; %lld kernels %s with %s of gaps\n",
                static_cast<long long>(s->contextTokens), c.stage, bytesText(static_cast<double>(s->bytes)).c_str(),
                bytesText(static_cast<double>(s->weightBytes)).c_str(),
                bytesText(static_cast<double>(s->kvCacheBytes)).c_str(),
                bytesText(static_cast<double>(s->activationBytes)).c_str(), secondsText(s->hbmTimeS).c_str(),
                secondsText(s->computeTimeS).c_str(), static_cast<long long>(s->kernels),
                secondsText(s->kernelTimeS).c_str(), secondsText(s->kernelGapS).c_str());
            out += line;
        }
    }
    std::snprintf(line, sizeof line,
        "  memory: %s per rank at the end of the generation (weights, transient peak and the full KV cache); at "
        "most %lld concurrent sequences fit in %s of HBM\n",
        bytesText(static_cast<double>(e.generationPeakBytes)).c_str(), static_cast<long long>(e.maxSequences),
        bytesText(static_cast<double>(e.hbmBytes)).c_str());
    out += line;
    return out;
}

} // namespace stagecraft
