// SPDX-License-Identifier: MIT
#include "estimate/stepestimate.h"

#include <algorithm>
#include <cstdio>

namespace stagecraft {

namespace {

    /// Measure of the union of sorted interval lists `a` and `b`, clipped to [0, limit].
    double unionTime(
        const std::vector<std::pair<double, double>>& a, const std::vector<std::pair<double, double>>& b, double limit)
    {
        std::vector<std::pair<double, double>> all;
        all.reserve(a.size() + b.size());
        std::merge(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(all));
        double total = 0, curStart = 0, curEnd = -1;
        for (auto [s, e] : all) {
            s = std::min(s, limit);
            e = std::min(e, limit);
            if (e <= s)
                continue;
            if (s > curEnd) {
                if (curEnd > curStart)
                    total += curEnd - curStart;
                curStart = s;
                curEnd = e;
            } else {
                curEnd = std::max(curEnd, e);
            }
        }
        if (curEnd > curStart)
            total += curEnd - curStart;
        return total;
    }

} // namespace

double uncoveredTime(const std::vector<std::pair<double, double>>& a, const std::vector<std::pair<double, double>>& b)
{
    double total = 0;
    size_t j = 0;
    for (const auto& [s, e] : a) {
        if (e <= s)
            continue;
        while (j < b.size() && b[j].second <= s)
            ++j;
        double covered = 0;
        for (size_t k = j; k < b.size() && b[k].first < e; ++k)
            covered += std::max(0.0, std::min(e, b[k].second) - std::max(s, b[k].first));
        total += (e - s) - covered;
    }
    return total;
}

bool planRates(const SynthesisResult& result, const GpuSpec& gpu, const EstimateOptions& options, HardwareRates& rates,
    std::string& error)
{
    rates = withOpRates(hardwareRates(result.config, gpu, options), *result.plan, gpu, options);
    if (const std::string& path = result.config.cluster.kernelTable; !path.empty()) {
        std::shared_ptr<const KernelTable> table = cachedKernelTable(path, error);
        if (!table) {
            error = "cluster.kernel_table: " + error;
            return false;
        }
        rates = withKernelTable(std::move(rates), *result.plan, std::move(table), result.config.training.precision);
    }
    if (!(rates.peakFlops > 0)) {
        error = "GPU " + gpu.name + " has no peak FLOP/s for precision " + toString(result.config.training.precision);
        return false;
    }
    if (!(rates.computeEfficiency > 0) || !(rates.intraNodeBytesPerS > 0) || !(rates.interNodeBytesPerS > 0)
        || !(rates.hbmBytesPerS > 0)) {
        error = "compute efficiency, HBM and link bandwidths must be positive";
        return false;
    }
    return true;
}

std::optional<GpuSpec> gpuForConfig(const Config& config, std::string& error)
{
    std::optional<GpuSpec> gpu = gpuPreset(config.cluster.gpu);
    if (!gpu)
        error = unknownGpuMessage(config.cluster.gpu);
    return gpu;
}

EstimateAssumptions assumptionsOf(const HardwareRates& r)
{
    EstimateAssumptions a;
    a.gemmEfficiency = r.kernels.gemm;
    a.flashForwardEfficiency = r.kernels.flashForward;
    a.flashBackwardEfficiency = r.kernels.flashBackward;
    a.hbmEfficiency = r.kernels.hbm;
    a.intraNodeGBps = r.intraNodeBytesPerS / 1e9;
    a.interNodeGBps = r.interNodeBytesPerS / 1e9;
    a.intraNodeLatencyUs = r.intraNodeLatencyS * 1e6;
    a.interNodeLatencyUs = r.interNodeLatencyS * 1e6;
    if (r.fabric) {
        // cluster.topology: NVLink as NCCL reaches it, a GPU's NIC share, NCCL's Simple ring step over each.
        a.intraNodeGBps = r.fabric->nvlinkBytesPerS() / 1e9;
        a.interNodeGBps = r.fabric->capacityPerGpu(FabricLevel::Leaf) / 1e9;
        a.intraNodeLatencyUs = priceTransfer(0, FabricLevel::NvLink, *r.fabric).timeS * 1e6;
        a.interNodeLatencyUs = priceTransfer(0, FabricLevel::Leaf, *r.fabric).timeS * 1e6;
    }
    a.overlapGradReduce = r.overlapGradReduce;
    a.overlapParamGather = r.overlapParamGather;
    a.tpCommOverlap = r.tpCommOverlap;
    return a;
}

std::string assumptionsText(const EstimateAssumptions& a)
{
    char buf[512];
    if (a.serving) {
        std::snprintf(buf, sizeof buf,
            "kernels: GEMM %.2f of peak (less tile, wave and K-depth losses), FlashAttention forward %.2f, "
            "memory-bound kernels %.2f of HBM bandwidth\n"
            "links: %.4g GB/s per GPU in a node, %.4g GB/s across nodes (achieved), %.3g / %.3g us a step; overlap: "
            "TP comm %s\n",
            a.gemmEfficiency, a.flashForwardEfficiency, a.hbmEfficiency, a.intraNodeGBps, a.interNodeGBps,
            a.intraNodeLatencyUs, a.interNodeLatencyUs, a.tpCommOverlap ? "on" : "off");
        return buf;
    }
    std::snprintf(buf, sizeof buf,
        "kernels: GEMM %.2f of peak (less tile, wave and K-depth losses), FlashAttention forward %.2f / backward "
        "%.2f, memory-bound kernels %.2f of HBM bandwidth\n"
        "links: %.4g GB/s per GPU in a node, %.4g GB/s across nodes (achieved), %.3g / %.3g us a step; overlap: "
        "grad reduce %s, param gather %s, TP comm %s\n",
        a.gemmEfficiency, a.flashForwardEfficiency, a.flashBackwardEfficiency, a.hbmEfficiency, a.intraNodeGBps,
        a.interNodeGBps, a.intraNodeLatencyUs, a.interNodeLatencyUs, a.overlapGradReduce ? "on" : "off",
        a.overlapParamGather ? "on" : "off", a.tpCommOverlap ? "on" : "off");
    return buf;
}

/// estimateStep() of the programs as they are (of the kept micro-batches only, for a compressed result).
static bool estimatePrograms(const SynthesisResult& result, const GpuSpec& gpu, const EstimateOptions& options,
    StepEstimate& out, std::string& error, EstimateSchedule* schedule)
{
    try {
        HardwareRates rates;
        if (!planRates(result, gpu, options, rates, error))
            return false;
        ListSchedule scheduled;
        if (!listSchedule(result, rates, schedule != nullptr, scheduled, error))
            return false;
        const size_t classCount = result.classes.size();
        const std::vector<size_t>& offset = scheduled.offset;
        const std::vector<double>& duration = scheduled.duration;
        const std::vector<double>& finish = scheduled.finish;

        // Per-class figures.
        StepEstimate est;
        est.gpu = gpu.name;
        est.peakFlops = rates.peakFlops;
        est.computeEfficiency = rates.computeEfficiency;
        est.assumptions = assumptionsOf(rates);
        est.kernelSources = countKernelSources(result, rates);
        for (size_t c = 0; c < classCount; ++c) {
            const ClassProgram& program = result.classes[c];
            for (size_t i = 0; i < program.nodes.size(); ++i) {
                const ProgramNode& n = program.nodes[i];
                if (n.kind == NodeKind::Compute && n.pass != Pass::Optimizer)
                    est.pipelineTimeS = std::max(est.pipelineTimeS, finish[offset[c] + i]);
            }
        }
        double hardwareFlops = 0;
        for (size_t c = 0; c < classCount; ++c) {
            const ClassProgram& program = result.classes[c];
            ClassEstimate ce;
            ce.stage = program.stage;
            std::vector<std::pair<double, double>> compute, comm;
            for (size_t i = 0; i < program.nodes.size(); ++i) {
                const size_t g = offset[c] + i;
                const ProgramNode& n = program.nodes[i];
                if (!hiddenBehindNextForward(n, rates))
                    ce.stepTimeS = std::max(ce.stepTimeS, finish[g]);
                if (n.kind == NodeKind::Recv || duration[g] <= 0)
                    continue;
                // Compute and communication by what a node does, whichever stream it holds (a blocking send
                // holds the compute stream but is communication).
                const bool isCompute = n.kind == NodeKind::Compute;
                (isCompute ? ce.computeTimeS : ce.communicationTimeS) += duration[g];
                const double start = finish[g] - duration[g];
                if (isCompute && !compute.empty() && start <= compute.back().second)
                    compute.back().second = std::max(compute.back().second, finish[g]); // back to back: one span
                else
                    (isCompute ? compute : comm).emplace_back(start, finish[g]);
                if (isCompute)
                    ce.flops += static_cast<double>(n.flops);
            }
            // Three communication streams overlap one another: their union, as sorted disjoint spans.
            std::sort(comm.begin(), comm.end());
            std::vector<std::pair<double, double>> merged;
            for (const auto& span : comm) {
                if (!merged.empty() && span.first <= merged.back().second)
                    merged.back().second = std::max(merged.back().second, span.second);
                else
                    merged.push_back(span);
            }
            comm = std::move(merged);
            ce.exposedCommunicationS = uncoveredTime(comm, compute);
            if (est.pipelineTimeS > 0)
                ce.bubbleFraction = 1.0 - unionTime(compute, comm, est.pipelineTimeS) / est.pipelineTimeS;
            est.iterationTimeS = std::max(est.iterationTimeS, ce.stepTimeS);
            hardwareFlops += ce.flops * static_cast<double>(program.rankCount);
            est.classes.push_back(ce);
        }
        const ModelCost& cost = result.cost;
        est.modelFlops = static_cast<double>(cost.microBatches)
            * (static_cast<double>(cost.forwardFlopsPerMicroBatch)
                + static_cast<double>(cost.backwardFlopsPerMicroBatch));
        if (est.iterationTimeS > 0) {
            const double capacity = static_cast<double>(result.worldSize()) * rates.peakFlops * est.iterationTimeS;
            est.mfu = est.modelFlops / capacity;
            est.hfu = hardwareFlops / capacity;
            est.tokensPerS = static_cast<double>(result.config.training.globalBatch)
                * static_cast<double>(result.config.model.seqLen) / est.iterationTimeS;
        }
        if (schedule)
            *schedule = estimateScheduleOf(result, scheduled, rates.overlapP2pComm);
        out = std::move(est);
        return true;
    } catch (const std::exception& e) {
        error = std::string("internal error in the step-time estimate: ") + e.what();
        return false;
    }
}

bool estimateStep(const SynthesisResult& result, const GpuSpec& gpu, const EstimateOptions& options, StepEstimate& out,
    std::string& error, EstimateSchedule* schedule)
{
    if (isInference(result.config)) {
        // A training iteration's model (MFU, gradient reduction, the optimizer) would mislead for serving.
        error = "no step-time estimate for inference configs; `stagecraft report` gives their serving estimate "
                "(time to first token, time per output token, throughput)";
        return false;
    }
    if (!result.compression)
        return estimatePrograms(result, gpu, options, out, error, schedule);
    // A compressed result (synthesis.h MicroBatchCompression): its programs and the probe's differ by one period
    // of the steady state, which the full iteration repeats; every time below is affine in the repeats from there.
    // The schedule stays the kept programs' (what the views draw).
    const MicroBatchCompression& z = *result.compression;
    StepEstimate kept, probe;
    if (!estimatePrograms(result, gpu, options, kept, error, schedule)
        || !estimatePrograms(*z.probe, gpu, options, probe, error, nullptr))
        return false;
    if (kept.classes.size() != probe.classes.size()) {
        error = "internal error in the step-time estimate: the probe has other stages";
        return false;
    }
    StepEstimate est = kept;
    est.pipelineTimeS = z.extend(kept.pipelineTimeS, probe.pipelineTimeS);
    est.iterationTimeS = 0;
    double hardwareFlops = 0;
    for (size_t c = 0; c < est.classes.size(); ++c) {
        const ClassEstimate& a = kept.classes[c];
        const ClassEstimate& b = probe.classes[c];
        ClassEstimate& e = est.classes[c];
        e.stepTimeS = z.extend(a.stepTimeS, b.stepTimeS);
        e.computeTimeS = z.extend(a.computeTimeS, b.computeTimeS);
        e.communicationTimeS = z.extend(a.communicationTimeS, b.communicationTimeS);
        e.exposedCommunicationS = z.extend(a.exposedCommunicationS, b.exposedCommunicationS);
        e.flops = z.extend(a.flops, b.flops);
        // The busy time within the pipeline period is what is affine, not its share.
        const double busy =
            z.extend((1 - a.bubbleFraction) * kept.pipelineTimeS, (1 - b.bubbleFraction) * probe.pipelineTimeS);
        e.bubbleFraction = est.pipelineTimeS > 0 ? 1 - busy / est.pipelineTimeS : 0;
        est.iterationTimeS = std::max(est.iterationTimeS, e.stepTimeS);
        hardwareFlops += e.flops * static_cast<double>(result.classes[c].rankCount);
    }
    // As estimatePrograms() derives them, from the full iteration's model FLOPs (result.cost).
    const ModelCost& cost = result.cost;
    est.modelFlops = static_cast<double>(cost.microBatches)
        * (static_cast<double>(cost.forwardFlopsPerMicroBatch) + static_cast<double>(cost.backwardFlopsPerMicroBatch));
    est.mfu = est.hfu = est.tokensPerS = 0;
    if (est.iterationTimeS > 0) {
        const double capacity = static_cast<double>(result.worldSize()) * est.peakFlops * est.iterationTimeS;
        est.mfu = est.modelFlops / capacity;
        est.hfu = hardwareFlops / capacity;
        est.tokensPerS = static_cast<double>(result.config.training.globalBatch)
            * static_cast<double>(result.config.model.seqLen) / est.iterationTimeS;
    }
    out = std::move(est);
    return true;
}

nlohmann::ordered_json assumptionsJson(const EstimateAssumptions& a)
{
    return { { "gemm_efficiency", a.gemmEfficiency }, { "flash_forward_efficiency", a.flashForwardEfficiency },
        { "flash_backward_efficiency", a.flashBackwardEfficiency }, { "hbm_efficiency", a.hbmEfficiency },
        { "intra_node_gbps", a.intraNodeGBps }, { "inter_node_gbps", a.interNodeGBps },
        { "intra_node_latency_us", a.intraNodeLatencyUs }, { "inter_node_latency_us", a.interNodeLatencyUs },
        { "overlap_grad_reduce", a.overlapGradReduce }, { "overlap_param_gather", a.overlapParamGather },
        { "tp_comm_overlap", a.tpCommOverlap } };
}

nlohmann::ordered_json estimateJson(const StepEstimate& e)
{
    nlohmann::ordered_json j;
    j["gpu"] = e.gpu;
    j["peak_flops"] = e.peakFlops;
    j["compute_efficiency"] = e.computeEfficiency;
    j["iteration_time_s"] = e.iterationTimeS;
    j["pipeline_time_s"] = e.pipelineTimeS;
    j["mfu"] = e.mfu;
    j["hfu"] = e.hfu;
    j["tokens_per_s"] = e.tokensPerS;
    j["assumptions"] = assumptionsJson(e.assumptions);
    j["kernel_sources"] = kernelSourcesJson(e.kernelSources);
    nlohmann::ordered_json classes = nlohmann::ordered_json::array();
    for (const ClassEstimate& c : e.classes)
        classes.push_back({ { "stage", c.stage }, { "step_time_s", c.stepTimeS }, { "compute_time_s", c.computeTimeS },
            { "communication_time_s", c.communicationTimeS }, { "exposed_communication_s", c.exposedCommunicationS },
            { "bubble_fraction", c.bubbleFraction } });
    j["classes"] = std::move(classes);
    return j;
}

} // namespace stagecraft
