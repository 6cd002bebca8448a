// SPDX-License-Identifier: MIT
#include "serving/servingsimulation.h"

#include "config/configvalidator.h"
#include "config/configwriter.h"
#include "estimate/estimatetext.h"
#include "estimate/servingestimate.h"
#include "serving/requesttrace.h"
#include "serving/servingrequest.h"
#include "synthesis/synthesis.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>

namespace stagecraft {

namespace {

    constexpr size_t kMaxSeriesPoints = 2000;
    /// PCIe 5.0 x16, bytes/s each way (PCI-SIG: 32 GT/s x 16 lanes, 128b/130b): the swap path of an H100 SXM.
    constexpr double kPcieBytesPerS = 63e9;

    int64_t roundUp(int64_t value, int64_t step)
    {
        step = std::max<int64_t>(1, step);
        return (value + step - 1) / step * step;
    }

    /// What a replica's plan holds and moves, from a small synthesis of it.
    struct ReplicaMemory
    {
        int64_t blocks = 0; ///< KV blocks that fit
        int64_t blockBytesMax = 0; ///< one block on the fullest rank
        int64_t positionBytesMax = 0; ///< one position of one sequence on the rank holding the most
    };

    /// The KV blocks of one replica of `replica` (dp 1): see simulateServing().
    bool replicaMemory(const Config& replica, const GpuSpec& gpu, const IterationTimeTables& tables, ReplicaMemory& out,
        std::string& error)
    {
        Config c = replica;
        c.inference.phases = InferencePhases::Both;
        c.inference.batch = std::max<int64_t>(1, inferenceBatchStep(c));
        c.inference.outputTokens = std::max<int64_t>(2, c.inference.outputTokens);
        c.inference.decodeSteps = 1;
        SynthesisOptions so;
        so.memorySeries = false;
        so.threads = 1;
        const SynthesisOutcome outcome = synthesize(c, nullptr, nullptr, so);
        if (!outcome.result) {
            error = "the serving plan does not synthesize";
            for (const Diagnostic& d : outcome.diagnostics)
                if (d.severity == Severity::Error) {
                    error += ": " + (d.keyPath.empty() ? d.message : d.keyPath + ": " + d.message);
                    break;
                }
            return false;
        }
        const SynthesisResult& r = *outcome.result;
        const int64_t cp = std::max<int64_t>(1, c.parallelism.cp);
        const int64_t programPositions =
            roundUp(promptTokens(c) / cp + decodeSteps(c.inference), c.inference.blockSize);
        // The transient peak of the budget's prefill: the probe of the first length holding max_batched_tokens.
        int64_t activation = 0;
        for (size_t i = 0; i < tables.prefillLengths.size(); ++i) {
            activation = std::max(activation, tables.prefillActivationPeakBytes[i]);
            if (tables.prefillLengths[i] * tables.prefillSequences >= c.inference.maxBatchedTokens)
                break;
        }
        int64_t blocks = std::numeric_limits<int64_t>::max();
        for (size_t cls = 0; cls < r.summaries.size(); ++cls) {
            const ClassSummary& s = r.summaries[cls];
            const int64_t perPosition = s.kvCacheBytes / std::max<int64_t>(1, programPositions * c.inference.batch);
            const int64_t blockBytes = perPosition * c.inference.blockSize;
            out.positionBytesMax = std::max(out.positionBytesMax, perPosition);
            out.blockBytesMax = std::max(out.blockBytesMax, blockBytes);
            const double room = double(gpu.hbmBytes) * c.inference.kvMemoryFraction - double(servedWeightBytes(r, cls))
                - double(std::max(activation, s.activationPeakBytes));
            if (blockBytes > 0)
                blocks = std::min(blocks, room <= 0 ? int64_t(0) : static_cast<int64_t>(room / double(blockBytes)));
        }
        if (blocks <= 0) {
            error = "the weights and the transient peak of a replica leave no room for the KV cache in "
                + bytesText(double(gpu.hbmBytes) * c.inference.kvMemoryFraction) + " (kv_memory_fraction "
                + formatNumber(c.inference.kvMemoryFraction) + " of HBM)";
            return false;
        }
        out.blocks = blocks == std::numeric_limits<int64_t>::max() ? int64_t(1) << 40 : blocks;
        return true;
    }

    /// Scales a progress sink's range to [from, from + width].
    class SubProgress final : public ProgressSink
    {
    public:
        SubProgress(ProgressSink* parent, double from, double width)
            : m_parent(parent)
            , m_from(from)
            , m_width(width)
        {
        }
        void report(double fraction, const char* stage) override
        {
            if (m_parent)
                m_parent->report(m_from + m_width * fraction, stage);
        }
        bool cancelled() const override
        {
            return m_parent && m_parent->cancelled();
        }

    private:
        ProgressSink* m_parent;
        double m_from, m_width;
    };

    bool cancelledThunk(void* context)
    {
        auto* p = static_cast<ProgressSink*>(context);
        return p && p->cancelled();
    }

    /// Each replica's largest value of `field` in each bucket (its last value before where it ran nothing), summed.
    template <typename Field>
    std::vector<double> bucketed(const std::vector<ReplicaRun>& runs, size_t buckets, double width, Field field)
    {
        std::vector<double> sum(buckets, 0);
        for (const ReplicaRun& run : runs) {
            double last = 0;
            size_t k = 0;
            for (size_t b = 0; b < buckets; ++b) {
                const double end = double(b + 1) * width;
                double best = -1;
                while (k < run.samples.size() && run.samples[k].startS < end) {
                    best = std::max(best, field(run.samples[k]));
                    last = field(run.samples[k]);
                    ++k;
                }
                sum[b] += best >= 0 ? best : last;
            }
        }
        return sum;
    }

    nlohmann::ordered_json statsJson(const LatencyStats& s)
    {
        return { { "p50", s.p50 }, { "p90", s.p90 }, { "p99", s.p99 }, { "mean", s.mean }, { "max", s.max } };
    }

} // namespace

LatencyStats latencyStats(std::vector<double> values)
{
    LatencyStats s;
    if (values.empty())
        return s;
    std::sort(values.begin(), values.end());
    auto rank = [&](double q) {
        const size_t n = values.size();
        const size_t i = static_cast<size_t>(std::ceil(q * double(n)));
        return values[std::clamp<size_t>(i, 1, n) - 1];
    };
    s.p50 = rank(0.5);
    s.p90 = rank(0.9);
    s.p99 = rank(0.99);
    double sum = 0;
    for (double v : values)
        sum += v;
    s.mean = sum / double(values.size());
    s.max = values.back();
    return s;
}

bool servingRequests(const Config& config, std::vector<ServingRequest>& requests, std::string& error)
{
    const InferenceConfig& in = config.inference;
    if (in.arrival == RequestArrival::Trace) {
        if (in.trace.empty()) {
            error = "inference.trace: arrival trace needs a trace file";
            return false;
        }
        RequestTrace trace = readRequestTrace(in.trace, in.requests);
        if (!trace.diagnostics.empty()) {
            error = trace.diagnostics.front().toString();
            for (size_t i = 1; i < trace.diagnostics.size() && i < 5; ++i)
                error += "\n" + trace.diagnostics[i].toString();
            return false;
        }
        requests = std::move(trace.requests);
    } else if (!generateRequests(config, requests, error)) {
        return false;
    }
    if (requests.empty()) {
        error = "no requests to serve";
        return false;
    }
    return true;
}

Config servingReplicaConfig(const Config& config)
{
    Config replica = withoutTrainingKeys(config);
    replica.parallelism.dp = 1;
    replica.parallelism.ep = 1;
    replica.inference.prefillReplicas = 0; // one replica: the deployment's shape is not its business
    return replica;
}

bool prepareServingPlan(const Config& given, int64_t longestPrompt, const GpuSpec& gpu, const EstimateOptions& options,
    ServingPlanTables& out, std::string& error, ProgressSink* progress)
{
    try {
        const Config replica = servingReplicaConfig(given);
        ServingPlanTables t;
        ReplicaMemory memory;
        // Weights that leave no room are refused before any probe is synthesized.
        if (!replicaMemory(replica, gpu, t.tables, memory, error))
            return false;
        if (!buildIterationTimes(replica, longestPrompt, gpu, options, t.tables, error, progress))
            return false;
        if (!replicaMemory(replica, gpu, t.tables, memory, error))
            return false;
        t.kvBlocks = memory.blocks;
        t.blockBytes = memory.blockBytesMax;
        t.positionBytes = memory.positionBytesMax;
        t.gpus = replica.parallelism.tp * replica.parallelism.pp * replica.parallelism.cp;
        out = std::move(t);
        return true;
    } catch (const std::exception& e) {
        error = std::string("internal error preparing the serving plan: ") + e.what();
        return false;
    }
}

bool simulateServing(const Config& given, const GpuSpec& gpu, const EstimateOptions& options, ServingSimulation& out,
    std::string& error, ProgressSink* progress)
{
    try {
        if (!isInference(given)) {
            error = "serving needs an inference config (workload: inference)";
            return false;
        }
        const Config config = withoutTrainingKeys(given);
        const InferenceConfig& in = config.inference;
        if (config.parallelism.ep > 1) {
            // DeepSeek-style data-parallel attention shares its experts across the replicas, which then step together.
            error = "the serving simulation runs each data-parallel replica alone; expert parallelism across replicas "
                    "(ep = "
                + std::to_string(config.parallelism.ep) + ") is not simulated: use ep 1, or the static estimate";
            return false;
        }
        std::vector<ServingRequest> requests;
        if (!servingRequests(config, requests, error))
            return false;
        int64_t longestPrompt = 0;
        for (const ServingRequest& r : requests)
            longestPrompt = std::max(longestPrompt, r.promptTokens);
        const bool disaggregated = in.prefillReplicas > 0;
        const int64_t dp = std::max<int64_t>(1, config.parallelism.dp);
        // One replica of each kind, with the replica's share of the static batch (the exact entry).
        Config decodeReplica = config;
        decodeReplica.inference.batch = disaggregated ? 0 : std::max<int64_t>(1, in.batch / dp);
        ServingPlanTables decode, prefill;
        SubProgress decodeProgress(progress, 0, disaggregated ? 0.35 : 0.7);
        if (!prepareServingPlan(decodeReplica, longestPrompt, gpu, options, decode, error, &decodeProgress))
            return false;
        if (disaggregated) {
            Config prefillReplica = decodeReplica;
            prefillReplica.parallelism.tp = in.prefillTp > 0 ? in.prefillTp : config.parallelism.tp;
            prefillReplica.parallelism.pp = in.prefillPp > 0 ? in.prefillPp : config.parallelism.pp;
            prefillReplica.inference.phases = InferencePhases::Prefill;
            SubProgress prefillProgress(progress, 0.35, 0.35);
            if (!prepareServingPlan(prefillReplica, longestPrompt, gpu, options, prefill, error, &prefillProgress))
                return false;
        }
        if (!runServing(config, decode, disaggregated ? &prefill : nullptr, requests, out, error, progress))
            return false;
        if (in.arrival == RequestArrival::Trace)
            out.traceFile = in.trace;
        return true;
    } catch (const std::bad_alloc&) {
        error = "out of memory simulating the requests";
        return false;
    } catch (const std::exception& e) {
        error = std::string("internal error in the serving simulation: ") + e.what();
        return false;
    }
}

bool runServing(const Config& given, const ServingPlanTables& decodePlan, const ServingPlanTables* prefillPlan,
    const std::vector<ServingRequest>& requests, ServingSimulation& out, std::string& error, ProgressSink* progress)
{
    try {
        const Config config = withoutTrainingKeys(given);
        const InferenceConfig& in = config.inference;
        ServingSimulation s;
        s.gpu = config.cluster.gpu;
        s.arrival = toString(in.arrival);
        if (requests.empty()) {
            error = "no requests to serve";
            return false;
        }
        const bool disaggregated = in.prefillReplicas > 0 && prefillPlan;
        const int64_t dp = std::max<int64_t>(1, config.parallelism.dp);
        const IterationTimeModel decodeModel(decodePlan.tables);
        const IterationTimeModel prefillModel(disaggregated ? prefillPlan->tables : decodePlan.tables);
        struct Memory
        {
            int64_t blocks, blockBytesMax, positionBytesMax;
        };
        const Memory decodeMemory { decodePlan.kvBlocks, decodePlan.blockBytes, decodePlan.positionBytes };
        const Memory prefillMemory = disaggregated
            ? Memory { prefillPlan->kvBlocks, prefillPlan->blockBytes, prefillPlan->positionBytes }
            : decodeMemory;
        SchedulerSettings settings;
        settings.maxBatchedTokens = in.maxBatchedTokens;
        settings.maxSequences = in.maxSequences;
        settings.chunkedPrefill = in.chunkedPrefill;
        settings.blockSize = in.blockSize;
        settings.kvBlocks = decodeMemory.blocks;
        settings.preemptBySwap = in.preemptBySwap;
        settings.swapSPerBlock = double(decodeMemory.blockBytesMax) / kPcieBytesPerS;
        settings.speculativeTokens = in.speculativeTokens;
        settings.acceptanceRate = in.acceptanceRate;

        const int64_t prefillCount = disaggregated ? in.prefillReplicas : 0;
        s.replicas = dp;
        s.prefillReplicas = prefillCount;
        s.gpusPerReplica = decodePlan.gpus;
        s.gpusPerPrefillReplica = disaggregated ? prefillPlan->gpus : 0;
        s.gpus = dp * s.gpusPerReplica + prefillCount * s.gpusPerPrefillReplica;
        s.kvBlocksPerReplica = decodeMemory.blocks;
        s.kvBlocksPerPrefillReplica = disaggregated ? prefillMemory.blocks : 0;
        s.requests = static_cast<int64_t>(requests.size());

        if (progress)
            progress->report(0.7, "scheduling requests");
        std::vector<ReplicaRun> runs;
        std::vector<double> firstToken(requests.size(), -1);
        if (disaggregated) {
            std::vector<std::vector<ReplicaRequest>> prefillQueues(static_cast<size_t>(prefillCount));
            for (size_t i = 0; i < requests.size(); ++i) {
                const ServingRequest& r = requests[i];
                prefillQueues[i % prefillQueues.size()].push_back(
                    { int64_t(i), r.arrivalS, r.promptTokens, r.outputTokens, 0, 0, -1 });
            }
            SchedulerSettings ps = settings;
            ps.prefillOnly = true;
            ps.kvBlocks = prefillMemory.blocks;
            ps.swapSPerBlock = double(prefillMemory.blockBytesMax) / kPcieBytesPerS;
            ps.speculativeTokens = 0;
            for (auto& queue : prefillQueues) {
                runs.push_back(simulateReplica(queue, ps, prefillModel, cancelledThunk, progress));
                if (runs.back().cancelled) {
                    error = "cancelled";
                    return false;
                }
            }
            // The cache moves: each prefill rank sends its share in parallel over its link.
            const bool sameNode = s.gpus <= config.cluster.gpusPerNode;
            const double linkBytesPerS = 1e9
                * (sameNode ? config.cluster.intraNodeBandwidthGbps * config.cluster.intraNodeEfficiency
                            : config.cluster.interNodeBandwidthGbps * config.cluster.interNodeEfficiency);
            const double latencyS =
                1e-6 * (sameNode ? config.cluster.intraNodeLatencyUs : config.cluster.interNodeLatencyUs);
            struct Handoff
            {
                double readyS;
                size_t request;
            };
            std::vector<Handoff> handoffs;
            double transferSum = 0;
            for (size_t q = 0; q < runs.size(); ++q)
                for (const RequestOutcome& o : runs[q].outcomes) {
                    const size_t i = static_cast<size_t>(o.id);
                    if (o.rejected || o.finishS < 0)
                        continue;
                    firstToken[i] = o.firstTokenS;
                    const double transfer = latencyS
                        + double(requests[i].promptTokens) * double(prefillMemory.positionBytesMax) / linkBytesPerS;
                    transferSum += transfer;
                    handoffs.push_back({ o.finishS + transfer, i });
                }
            s.kvTransferS = handoffs.empty() ? 0 : transferSum / double(handoffs.size());
            std::stable_sort(handoffs.begin(), handoffs.end(),
                [](const Handoff& a, const Handoff& b) { return a.readyS < b.readyS; });
            std::vector<std::vector<ReplicaRequest>> decodeQueues(static_cast<size_t>(dp));
            for (size_t k = 0; k < handoffs.size(); ++k) {
                const size_t i = handoffs[k].request;
                const ServingRequest& r = requests[i];
                decodeQueues[k % decodeQueues.size()].push_back({ int64_t(i), handoffs[k].readyS, r.promptTokens,
                    r.outputTokens, r.promptTokens, 1, firstToken[i] });
            }
            for (auto& queue : decodeQueues) {
                runs.push_back(simulateReplica(queue, settings, decodeModel, cancelledThunk, progress));
                if (runs.back().cancelled) {
                    error = "cancelled";
                    return false;
                }
            }
        } else {
            std::vector<std::vector<ReplicaRequest>> queues(static_cast<size_t>(dp));
            for (size_t i = 0; i < requests.size(); ++i) {
                const ServingRequest& r = requests[i];
                queues[i % queues.size()].push_back(
                    { int64_t(i), r.arrivalS, r.promptTokens, r.outputTokens, 0, 0, -1 });
            }
            for (auto& queue : queues) {
                runs.push_back(simulateReplica(queue, settings, decodeModel, cancelledThunk, progress));
                if (runs.back().cancelled) {
                    error = "cancelled";
                    return false;
                }
            }
        }
        // Per request: the final run that holds it (the decode run when disaggregated).
        std::vector<const RequestOutcome*> final(requests.size(), nullptr);
        for (size_t q = 0; q < runs.size(); ++q) {
            const bool prefillRun = disaggregated && q < static_cast<size_t>(prefillCount);
            for (const RequestOutcome& o : runs[q].outcomes) {
                const size_t i = static_cast<size_t>(o.id);
                s.preemptions += o.preemptions;
                if (prefillRun) {
                    if (o.rejected)
                        final[i] = &o;
                    continue;
                }
                final[i] = &o;
            }
        }
        double firstArrival = std::numeric_limits<double>::max(), lastArrival = 0, lastFinish = 0;
        for (const ServingRequest& r : requests) {
            firstArrival = std::min(firstArrival, r.arrivalS);
            lastArrival = std::max(lastArrival, r.arrivalS);
        }
        std::vector<double> ttft, tpot, e2e;
        int64_t outputTokens = 0, good = 0;
        s.sloTtftS = in.sloTtftMs / 1000;
        s.sloTpotS = in.sloTpotMs / 1000;
        for (size_t i = 0; i < requests.size(); ++i) {
            const RequestOutcome* o = final[i];
            if (!o || o->rejected || o->finishS < 0) {
                ++s.rejected;
                continue;
            }
            const ServingRequest& r = requests[i];
            ++s.finished;
            const double t1 = o->firstTokenS - r.arrivalS, te = o->finishS - r.arrivalS;
            const double tp = r.outputTokens > 1 ? (o->finishS - o->firstTokenS) / double(r.outputTokens - 1) : 0;
            ttft.push_back(t1);
            e2e.push_back(te);
            if (r.outputTokens > 1)
                tpot.push_back(tp);
            s.ttftSamples.push_back(float(t1));
            s.tpotSamples.push_back(float(tp));
            s.e2eSamples.push_back(float(te));
            outputTokens += o->generatedTokens;
            lastFinish = std::max(lastFinish, o->finishS);
            if ((s.sloTtftS <= 0 || t1 <= s.sloTtftS) && (s.sloTpotS <= 0 || r.outputTokens < 2 || tp <= s.sloTpotS))
                ++good;
        }
        s.ttft = latencyStats(ttft);
        s.tpot = latencyStats(tpot);
        s.e2e = latencyStats(e2e);
        s.durationS = s.finished > 0 ? lastFinish - firstArrival : 0;
        s.offeredRequestsPerS =
            lastArrival > firstArrival ? double(requests.size() - 1) / (lastArrival - firstArrival) : 0;
        if (s.durationS > 0) {
            s.requestsPerS = double(s.finished) / s.durationS;
            s.outputTokensPerS = double(outputTokens) / s.durationS;
            s.outputTokensPerSPerGpu = s.outputTokensPerS / double(std::max<int64_t>(1, s.gpus));
            s.goodputRequestsPerS = double(good) / s.durationS;
            s.littleLambdaW = s.requestsPerS * s.e2e.mean;
        }
        s.goodputFraction = s.finished > 0 ? double(good) / double(s.finished) : 0;
        // Time averages from the iterations (idle time holds nobody) and the peaks.
        double inSystem = 0, waitingArea = 0, runningArea = 0;
        for (size_t q = 0; q < runs.size(); ++q) {
            const ReplicaRun& run = runs[q];
            s.iterations += run.iterations;
            const bool prefillRun = disaggregated && q < static_cast<size_t>(prefillCount);
            const double blocks = double(prefillRun ? s.kvBlocksPerPrefillReplica : s.kvBlocksPerReplica);
            for (const ServingSample& x : run.samples) {
                inSystem += double(x.running + x.waiting) * x.durationS;
                waitingArea += double(x.waiting) * x.durationS;
                runningArea += double(x.running) * x.durationS;
                s.maxWaiting = std::max(s.maxWaiting, double(x.waiting));
                if (blocks > 0)
                    s.peakKvOccupancy = std::max(s.peakKvOccupancy, double(x.kvBlocksUsed) / blocks);
            }
        }
        if (s.durationS > 0) {
            s.meanInSystem = inSystem / s.durationS;
            s.meanWaiting = waitingArea / s.durationS;
            s.meanRunning = runningArea / s.durationS;
        }
        // The series, bucketed.
        if (s.durationS > 0) {
            const size_t buckets = std::min<size_t>(kMaxSeriesPoints, std::max<size_t>(1, size_t(s.iterations)));
            const double width = (lastFinish > 0 ? lastFinish : s.durationS) / double(buckets);
            const std::vector<double> running =
                bucketed(runs, buckets, width, [](const ServingSample& x) { return double(x.running); });
            const std::vector<double> waiting =
                bucketed(runs, buckets, width, [](const ServingSample& x) { return double(x.waiting); });
            const std::vector<double> used =
                bucketed(runs, buckets, width, [](const ServingSample& x) { return double(x.kvBlocksUsed); });
            const std::vector<double> preempted =
                bucketed(runs, buckets, width, [](const ServingSample& x) { return double(x.preemptions); });
            std::vector<double> tokens(buckets, 0);
            for (const ReplicaRun& run : runs)
                for (const ServingSample& x : run.samples) {
                    const size_t b = std::min(buckets - 1, static_cast<size_t>((x.startS + x.durationS) / width));
                    tokens[b] += double(x.decodeSequences);
                }
            const double totalBlocks =
                double(s.kvBlocksPerReplica) * double(dp) + double(s.kvBlocksPerPrefillReplica) * double(prefillCount);
            s.series.resize(buckets);
            for (size_t b = 0; b < buckets; ++b) {
                ServingSeriesPoint& p = s.series[b];
                p.timeS = double(b) * width;
                p.running = running[b];
                p.waiting = waiting[b];
                p.kvOccupancy = totalBlocks > 0 ? used[b] / totalBlocks : 0;
                p.preemptions = preempted[b];
                p.outputTokensPerS = tokens[b] / width;
            }
        }
        s.decodeTables = decodePlan.tables;
        if (disaggregated)
            s.prefillTables = prefillPlan->tables;
        s.runs = std::move(runs);
        if (progress)
            progress->report(1.0, "done");
        out = std::move(s);
        return true;
    } catch (const std::bad_alloc&) {
        error = "out of memory simulating the requests";
        return false;
    } catch (const std::exception& e) {
        error = std::string("internal error in the serving simulation: ") + e.what();
        return false;
    }
}

nlohmann::ordered_json servingSimulationJson(const ServingSimulation& s)
{
    nlohmann::ordered_json j;
    j["gpu"] = s.gpu;
    j["arrival"] = s.arrival;
    j["trace"] = s.traceFile;
    j["requests"] = s.requests;
    j["finished"] = s.finished;
    j["rejected"] = s.rejected;
    j["replicas"] = s.replicas;
    j["prefill_replicas"] = s.prefillReplicas;
    j["gpus"] = s.gpus;
    j["offered_requests_per_s"] = s.offeredRequestsPerS;
    j["duration_s"] = s.durationS;
    j["requests_per_s"] = s.requestsPerS;
    j["output_tokens_per_s"] = s.outputTokensPerS;
    j["output_tokens_per_s_per_gpu"] = s.outputTokensPerSPerGpu;
    j["ttft_s"] = statsJson(s.ttft);
    j["tpot_s"] = statsJson(s.tpot);
    j["e2e_s"] = statsJson(s.e2e);
    j["goodput"] = { { "slo_ttft_s", s.sloTtftS }, { "slo_tpot_s", s.sloTpotS },
        { "requests_per_s", s.goodputRequestsPerS }, { "fraction", s.goodputFraction } };
    j["preemptions"] = s.preemptions;
    j["kv_cache"] = { { "blocks_per_replica", s.kvBlocksPerReplica },
        { "blocks_per_prefill_replica", s.kvBlocksPerPrefillReplica }, { "peak_occupancy", s.peakKvOccupancy } };
    j["queue"] = { { "mean_waiting", s.meanWaiting }, { "max_waiting", s.maxWaiting },
        { "mean_running", s.meanRunning } };
    j["littles_law"] = { { "mean_in_system", s.meanInSystem }, { "lambda_w", s.littleLambdaW } };
    j["kv_transfer_s"] = s.kvTransferS;
    j["iterations"] = s.iterations;
    j["probes"] = s.decodeTables.probes + s.prefillTables.probes;
    nlohmann::ordered_json series;
    auto column = [&](const char* key, auto field) {
        nlohmann::ordered_json a = nlohmann::ordered_json::array();
        for (const ServingSeriesPoint& p : s.series)
            a.push_back(field(p));
        series[key] = std::move(a);
    };
    column("time_s", [](const ServingSeriesPoint& p) { return p.timeS; });
    column("running", [](const ServingSeriesPoint& p) { return p.running; });
    column("waiting", [](const ServingSeriesPoint& p) { return p.waiting; });
    column("kv_occupancy", [](const ServingSeriesPoint& p) { return p.kvOccupancy; });
    column("preemptions", [](const ServingSeriesPoint& p) { return p.preemptions; });
    column("output_tokens_per_s", [](const ServingSeriesPoint& p) { return p.outputTokensPerS; });
    j["series"] = std::move(series);
    return j;
}

std::string servingSimulationText(const ServingSimulation& s)
{
    std::string out;
    char line[512];
    std::snprintf(line, sizeof line,
        "serving simulation on %s (%s arrivals%s%s): %lld requests on %lld replica(s)%s, %lld GPUs; %lld finished, "
        "%lld rejected, %lld preemptions, %lld iterations from %lld probe syntheses\n",
        s.gpu.c_str(), s.arrival.c_str(), s.traceFile.empty() ? "" : " from ", s.traceFile.c_str(),
        static_cast<long long>(s.requests), static_cast<long long>(s.replicas),
        s.prefillReplicas > 0 ? (" + " + std::to_string(s.prefillReplicas) + " prefill replica(s)").c_str() : "",
        static_cast<long long>(s.gpus), static_cast<long long>(s.finished), static_cast<long long>(s.rejected),
        static_cast<long long>(s.preemptions), static_cast<long long>(s.iterations),
        static_cast<long long>(s.decodeTables.probes + s.prefillTables.probes));
    out += line;
    auto stats = [&](const char* name, const LatencyStats& x) {
        std::snprintf(line, sizeof line, "  %-4s p50 %s, p90 %s, p99 %s (mean %s, max %s)\n", name,
            secondsText(x.p50).c_str(), secondsText(x.p90).c_str(), secondsText(x.p99).c_str(),
            secondsText(x.mean).c_str(), secondsText(x.max).c_str());
        out += line;
    };
    stats("TTFT", s.ttft);
    stats("TPOT", s.tpot);
    stats("E2E", s.e2e);
    std::snprintf(line, sizeof line,
        "  throughput: %.4g requests/s (offered %.4g), %.4g output tokens/s (%.4g per GPU) over %s\n", s.requestsPerS,
        s.offeredRequestsPerS, s.outputTokensPerS, s.outputTokensPerSPerGpu, secondsText(s.durationS).c_str());
    out += line;
    if (s.sloTtftS > 0 || s.sloTpotS > 0) {
        std::snprintf(line, sizeof line, "  goodput: %.4g requests/s within TTFT <= %s and TPOT <= %s (%.1f%%)\n",
            s.goodputRequestsPerS, s.sloTtftS > 0 ? secondsText(s.sloTtftS).c_str() : "-",
            s.sloTpotS > 0 ? secondsText(s.sloTpotS).c_str() : "-", 100 * s.goodputFraction);
        out += line;
    }
    std::snprintf(line, sizeof line,
        "  KV cache: %lld blocks per replica, peak occupancy %.1f%%; queue: mean %.3g waiting (max %.0f), mean %.3g "
        "running; Little's law L = %.4g, lambda W = %.4g\n",
        static_cast<long long>(s.kvBlocksPerReplica), 100 * s.peakKvOccupancy, s.meanWaiting, s.maxWaiting,
        s.meanRunning, s.meanInSystem, s.littleLambdaW);
    out += line;
    if (s.prefillReplicas > 0) {
        std::snprintf(line, sizeof line, "  disaggregated: mean KV transfer %s per request\n",
            secondsText(s.kvTransferS).c_str());
        out += line;
    }
    return out;
}

} // namespace stagecraft
