// SPDX-License-Identifier: MIT
#include "report/report.h"

#include "config/configwriter.h"
#include "estimate/networkusage.h"
#include "estimate/servingestimate.h"
#include "estimate/stepestimate.h"
#include "serving/servingsimulation.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>

namespace stagecraft {

std::string formatBytes(double bytes)
{
    static const char* units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
    int u = 0;
    while (std::abs(bytes) >= 1024.0 && u < 5) {
        bytes /= 1024.0;
        ++u;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.2f %s", bytes, units[u]);
    return buf;
}

std::string formatCount(double value)
{
    static const char* units[] = { "", " K", " M", " G", " T", " P", " E", " Z" };
    int u = 0;
    while (std::abs(value) >= 1000.0 && u < 7) {
        value /= 1000.0;
        ++u;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, u == 0 ? "%.0f%s" : "%.2f%s", value, units[u]);
    return buf;
}

namespace {

    nlohmann::ordered_json configJson(const Config& c)
    {
        nlohmann::ordered_json j;
        j["name"] = c.name;
        const ModelConfig& m = c.model;
        j["model"] = { { "preset", m.preset }, { "family", toString(m.family) }, { "layers", m.layers },
            { "hidden", m.hidden }, { "ffn_hidden", m.ffnHidden }, { "heads", m.heads }, { "kv_heads", m.kvHeads },
            { "vocab", m.vocab }, { "seq_len", m.seqLen }, { "experts", m.experts }, { "top_k", m.topK },
            { "expert_ffn_hidden", m.expertFfnHidden }, { "shared_expert_ffn_hidden", m.sharedExpertFfnHidden },
            { "causal_mask", m.causalMask }, { "tied_embeddings", m.tiedEmbeddings }, { "rope_theta", m.ropeTheta },
            { "attention", toString(m.attention) }, { "head_dim", m.headDim }, { "qk_norm", m.qkNorm },
            { "qkv_bias", m.qkvBias }, { "q_lora_rank", m.qLoraRank }, { "kv_lora_rank", m.kvLoraRank },
            { "qk_nope_head_dim", m.qkNopeHeadDim }, { "qk_rope_head_dim", m.qkRopeHeadDim },
            { "v_head_dim", m.vHeadDim }, { "first_dense_layers", m.firstDenseLayers }, { "mtp_modules", m.mtpModules },
            { "moe_capacity_factor", m.moeCapacityFactor }, { "moe_routing_imbalance", m.moeRoutingImbalance } };
        const TrainingConfig& t = c.training;
        j["training"] = { { "global_batch", t.globalBatch }, { "micro_batch", t.microBatch },
            { "precision", toString(t.precision) }, { "optimizer", t.optimizer },
            { "recompute", toString(t.recompute) }, { "recompute_modules", recomputeModuleNames(t.recomputeModules) },
            { "main_grad_dtype", toString(t.mainGradDtype) }, { "grad_reduce_dtype", toString(t.gradReduceDtype) },
            { "gradient_accumulation_fusion", t.gradientAccumulationFusion } };
        const ParallelismConfig& p = c.parallelism;
        nlohmann::ordered_json order = nlohmann::ordered_json::array();
        for (MeshAxis a : p.rankOrder)
            order.push_back(toString(a));
        j["parallelism"] = { { "dp", p.dp }, { "tp", p.tp }, { "pp", p.pp }, { "cp", p.cp }, { "ep", p.ep },
            { "sequence_parallel", p.sequenceParallel }, { "zero", p.zero }, { "schedule", toString(p.schedule) },
            { "virtual_stages", p.virtualStages }, { "rank_order", order },
            { "gradient_bucket_mb", static_cast<double>(p.gradientBucketBytes) / (1024.0 * 1024.0) },
            { "expert_tp", p.expertTp }, { "first_stage_layers", p.firstStageLayers },
            { "last_stage_layers", p.lastStageLayers },
            { "account_for_embedding_in_pipeline_split", p.embeddingInSplit },
            { "account_for_loss_in_pipeline_split", p.lossInSplit }, { "overlap_grad_reduce", p.overlapGradReduce },
            { "overlap_param_gather", p.overlapParamGather }, { "tp_comm_overlap", p.tpCommOverlap },
            { "overlap_p2p_comm", p.overlapP2pComm }, { "pipeline_layout", p.pipelineLayout },
            { "microbatch_group_size", p.microBatchGroupSize },
            { "overlap_moe_expert_parallel_comm", p.overlapMoeExpertParallelComm },
            { "reduce_gradients_per_microbatch", p.reduceGradientsPerMicroBatch } };
        j["workload"] = toString(c.workload);
        const InferenceConfig& i = c.inference;
        j["inference"] = { { "batch", i.batch }, { "prompt_tokens", i.promptTokens },
            { "output_tokens", i.outputTokens }, { "phases", toString(i.phases) }, { "decode_steps", i.decodeSteps },
            { "kv_cache_dtype", toString(i.kvCacheDtype) }, { "block_size", i.blockSize },
            { "arrival", toString(i.arrival) }, { "request_rate", i.requestRate }, { "arrival_cv", i.arrivalCv },
            { "requests", i.requests }, { "length_distribution", toString(i.lengthDistribution) },
            { "length_cv", i.lengthCv }, { "trace", i.trace }, { "seed", i.seed },
            { "max_batched_tokens", i.maxBatchedTokens }, { "max_sequences", i.maxSequences },
            { "chunked_prefill", i.chunkedPrefill }, { "preemption", i.preemptBySwap ? "swap" : "recompute" },
            { "kv_memory_fraction", i.kvMemoryFraction }, { "prefill_replicas", i.prefillReplicas },
            { "prefill_tp", i.prefillTp }, { "prefill_pp", i.prefillPp }, { "speculative_tokens", i.speculativeTokens },
            { "acceptance_rate", i.acceptanceRate }, { "draft_cost", i.draftCost },
            { "weight_dtype", i.fp8Weights ? "fp8" : "bf16" }, { "slo_ttft_ms", i.sloTtftMs },
            { "slo_tpot_ms", i.sloTpotMs } };
        const ClusterConfig& k = c.cluster;
        j["cluster"] = { { "preset", k.preset }, { "gpu", k.gpu }, { "gpus_per_node", k.gpusPerNode },
            { "intra_node_bandwidth_gbps", k.intraNodeBandwidthGbps },
            { "inter_node_bandwidth_gbps", k.interNodeBandwidthGbps },
            { "intra_node_efficiency", k.intraNodeEfficiency }, { "inter_node_efficiency", k.interNodeEfficiency },
            { "intra_node_latency_us", k.intraNodeLatencyUs }, { "inter_node_latency_us", k.interNodeLatencyUs },
            { "kernel_launch_us", k.kernelLaunchUs }, { "gemm_efficiency", k.gemmEfficiency },
            { "attention_efficiency", k.attentionEfficiency }, { "hbm_efficiency", k.hbmEfficiency },
            { "kernel_table", k.kernelTable } };
        const TopologyConfig& topo = k.topology;
        const nlohmann::ordered_json fabric { { "topology", topo.preset }, { "nvlink_domain", topo.nvlinkDomain },
            { "nvlink_bandwidth_gbps", topo.nvlinkBandwidthGbps }, { "nvls_efficiency", topo.nvlsEfficiency },
            { "nics_per_node", topo.nicsPerNode }, { "nic_bandwidth_gbps", topo.nicBandwidthGbps },
            { "nic_efficiency", topo.nicEfficiency }, { "rails", topo.rails }, { "leaf_radix", topo.leafRadix },
            { "leaf_oversubscription", topo.leafOversubscription }, { "spine_radix", topo.spineRadix },
            { "spine_oversubscription", topo.spineOversubscription }, { "planes", topo.planes } };
        for (const auto& [key, value] : fabric.items())
            j["cluster"][key] = value;
        return j;
    }

} // namespace

nlohmann::ordered_json reportJson(const SynthesisResult& r)
{
    nlohmann::ordered_json j;
    j["config"] = configJson(r.config);
    j["world_size"] = r.worldSize();
    j["params"] = r.cost.params;
    if (r.config.model.mtpModules > 0)
        j["mtp_params"] = r.cost.mtpParams; // the MTP modules' own weights, not in "params"
    j["flops_per_iteration"] = r.cost.flopsPerIteration;
    // The same iteration named twice over (issue 31): what the hardware executes (recompute, the fused attention
    // kernels' recomputed scores and the optimizer included, = flops_per_iteration) and the model's FLOPs, the
    // numerator of MFU (PaLM appendix B: forward and backward of every micro-batch, nothing re-run).
    j["model_flops_per_iteration"] = static_cast<double>(r.cost.microBatches)
        * (r.cost.forwardFlopsPerMicroBatch + r.cost.backwardFlopsPerMicroBatch);
    j["hardware_flops_per_iteration"] = r.cost.flopsPerIteration;
    j["micro_batches"] = r.cost.microBatches;
    nlohmann::ordered_json classes = nlohmann::ordered_json::array();
    for (const ClassSummary& s : r.summaries) {
        nlohmann::ordered_json c;
        c["ranks"] = s.ranks;
        c["example_rank"] = s.exampleRank.value;
        c["stage"] = s.stage;
        c["flops"] = s.flops;
        c["matmul_flops"] = s.matmulFlops;
        c["replicated_flops"] = s.replicatedFlops;
        c["nodes"] = s.nodes;
        nlohmann::ordered_json comm;
        for (int t = 0; t < kCollectiveTypeCount; ++t)
            comm[toString(static_cast<CollectiveType>(t))] = s.collectiveBytes[static_cast<size_t>(t)];
        comm["send"] = s.sendBytes;
        comm["recv"] = s.recvBytes;
        c["comm_bytes"] = comm;
        nlohmann::ordered_json counts;
        for (int t = 0; t < kCollectiveTypeCount; ++t)
            counts[toString(static_cast<CollectiveType>(t))] = s.collectiveCount[static_cast<size_t>(t)];
        counts["send"] = s.sendCount;
        counts["recv"] = s.recvCount;
        c["comm_count"] = counts;
        c["memory_bytes"] = { { "weights", s.weightBytes }, { "gradients", s.gradientBytes },
            { "optimizer", s.optimizerBytes }, { "activations_peak", s.activationPeakBytes }, { "peak", s.peakBytes } };
        c["kv_cache_bytes"] = s.kvCacheBytes;
        classes.push_back(std::move(c));
    }
    // cluster.topology: which level of the fabric each kind of communication crosses, how NCCL runs it.
    if (r.config.cluster.topology.enabled()) {
        const Fabric fabric(r.config.cluster);
        for (size_t i = 0; i < classes.size() && i < r.classes.size(); ++i) {
            const NetworkUsage usage = networkUsage(r, i, fabric);
            nlohmann::ordered_json uses = nlohmann::ordered_json::array();
            for (const NetworkUse& u : usage.uses)
                uses.push_back({ { "what", u.what }, { "level", toString(u.level) },
                    { "algorithm", toString(u.algorithm) }, { "protocol", toString(u.protocol) }, { "count", u.count },
                    { "bytes", u.bytes }, { "time_s", u.timeS } });
            nlohmann::ordered_json perLevel;
            for (int l = 0; l < kFabricLevelCount; ++l)
                perLevel[toString(FabricLevel(l))] = usage.bytesPerLevel[static_cast<size_t>(l)];
            classes[i]["network"] = { { "uses", std::move(uses) }, { "bytes_per_level", std::move(perLevel) } };
        }
    }
    // The step-time estimate on cluster.gpu, or for serving the serving estimate (resources/docs/report-json.md);
    // omitted when the GPU is unknown.
    std::string gpuError;
    if (const std::optional<GpuSpec> gpu = gpuForConfig(r.config, gpuError)) {
        StepEstimate estimate;
        ServingEstimate serving;
        std::string error;
        const bool estimated = isInference(r.config) ? estimateServing(r, *gpu, EstimateOptions {}, serving, error)
                                                     : estimateStep(r, *gpu, EstimateOptions {}, estimate, error);
        if (estimated) {
            const nlohmann::ordered_json e =
                isInference(r.config) ? servingEstimateJson(serving) : estimateJson(estimate);
            for (size_t c = 0; c < classes.size() && c < e["classes"].size(); ++c)
                for (const auto& [key, value] : e["classes"][c].items())
                    if (key != "stage")
                        classes[c][key] = value;
            nlohmann::ordered_json summary = e;
            summary.erase("classes");
            j["estimate"] = std::move(summary);
        }
        // Requests over time (inference.arrival other than one batch): the serving simulation.
        if (isInference(r.config) && r.config.inference.arrival != RequestArrival::Batch) {
            ServingSimulation simulation;
            if (simulateServing(r.config, *gpu, EstimateOptions {}, simulation, error))
                j["serving"] = servingSimulationJson(simulation);
            else
                j["serving"] = { { "error", error } };
        }
    }
    j["classes"] = std::move(classes);
    nlohmann::ordered_json warnings = nlohmann::ordered_json::array();
    nlohmann::ordered_json notes = nlohmann::ordered_json::array();
    for (const Diagnostic& d : r.warnings)
        (d.severity == Severity::Note ? notes : warnings)
            .push_back(d.keyPath.empty() ? d.message : d.keyPath + ": " + d.message);
    j["warnings"] = std::move(warnings);
    j["notes"] = std::move(notes);
    return j;
}

std::string reportText(const SynthesisResult& r)
{
    std::ostringstream out;
    const Config& c = r.config;
    const ParallelismConfig& p = c.parallelism;
    out << c.name << ": " << toString(c.model.family) << ", " << c.model.layers << " layers, hidden " << c.model.hidden
        << ", " << formatCount(static_cast<double>(r.cost.params)) << " parameters (" << r.cost.params << ")";
    if (c.model.mtpModules > 0)
        out << " + " << c.model.mtpModules << " multi-token prediction module(s) of "
            << formatCount(static_cast<double>(r.cost.mtpParams)) << " parameters (" << r.cost.mtpParams << ")";
    out << "\n";
    if (isInference(c)) {
        const InferenceConfig& i = c.inference;
        out << "serving: dp " << p.dp << " x tp " << p.tp << " x pp " << p.pp << " x cp " << p.cp << " (ep " << p.ep
            << ") = " << r.worldSize() << " ranks, " << (p.sequenceParallel ? "sequence parallel, " : "") << i.batch
            << " sequences of " << promptTokens(c) << " prompt tokens, " << toString(i.phases) << " (" << decodeSteps(i)
            << " decode steps of " << i.outputTokens << " output tokens), " << r.cost.microBatches
            << " micro-batches of " << i.batch / std::max<int64_t>(1, r.cost.microBatches * p.dp)
            << " per replica, KV cache " << toString(i.kvCacheDtype) << " in blocks of " << i.blockSize << "\n";
        out << "FLOPs of the programs: " << formatCount(r.cost.flopsPerIteration) << "FLOP\n";
    } else {
        out << "plan: dp " << p.dp << " x tp " << p.tp << " x pp " << p.pp << " x cp " << p.cp << " (ep " << p.ep
            << ") = " << r.worldSize() << " ranks, " << (p.sequenceParallel ? "sequence parallel, " : "") << "ZeRO-"
            << p.zero << ", " << toString(p.schedule) << ", " << r.cost.microBatches << " micro-batches of "
            << c.training.microBatch << "\n";
        out << "FLOPs per iteration: " << formatCount(r.cost.flopsPerIteration) << "FLOP executed (hardware FLOPs: "
            << "recompute and optimizer included), "
            << formatCount(static_cast<double>(r.cost.microBatches)
                   * (r.cost.forwardFlopsPerMicroBatch + r.cost.backwardFlopsPerMicroBatch))
            << "FLOP of the model (forward and backward, what MFU counts)\n";
    }
    std::string gpuError;
    if (const std::optional<GpuSpec> gpu = gpuForConfig(r.config, gpuError); gpu && isInference(c)) {
        ServingEstimate e;
        std::string error;
        if (estimateServing(r, *gpu, EstimateOptions {}, e, error)) {
            out << servingEstimateText(e);
            std::istringstream assumed(assumptionsText(e.assumptions));
            for (std::string line; std::getline(assumed, line);)
                out << "  assumed " << line << "\n";
        } else {
            out << "no serving estimate: " << error << "\n";
        }
        if (c.inference.arrival != RequestArrival::Batch) {
            ServingSimulation simulation;
            std::string simulationError;
            if (simulateServing(c, *gpu, EstimateOptions {}, simulation, simulationError))
                out << servingSimulationText(simulation);
            else
                out << "no serving simulation: " << simulationError << "\n";
        }
    } else if (gpu) {
        StepEstimate e;
        std::string error;
        if (estimateStep(r, *gpu, EstimateOptions {}, e, error)) {
            char buf[160];
            std::snprintf(buf, sizeof buf, "estimate on %s: %.3f s per iteration, MFU %.1f%%, %s tokens/s\n",
                gpu->name.c_str(), e.iterationTimeS, e.mfu * 100.0, formatCount(e.tokensPerS).c_str());
            out << buf;
            std::istringstream assumed(assumptionsText(e.assumptions));
            for (std::string line; std::getline(assumed, line);)
                out << "  assumed " << line << "\n";
            // Which source timed each op class: the measured kernel table or the model.
            std::istringstream sources(kernelSourcesText(e.kernelSources));
            for (std::string line; std::getline(sources, line);)
                out << "  " << line << "\n";
        } else if (!r.config.cluster.kernelTable.empty()) {
            out << "no step-time estimate: " << error << "\n"; // e.g. a kernel table that cannot be read
        }
    }
    out << "\n";
    char line[256];
    std::snprintf(line, sizeof line, "%-6s %7s %8s %12s %8s %11s %11s %11s %11s %11s %11s\n", "stage", "ranks",
        "example", "FLOP/rank", "nodes", "mem peak", "all-reduce", "all-gather", "red-scatter", "all-to-all", "send");
    out << line;
    for (const ClassSummary& s : r.summaries) {
        std::snprintf(line, sizeof line, "%-6d %7lld %8lld %12s %8lld %11s %11s %11s %11s %11s %11s\n", s.stage,
            static_cast<long long>(s.ranks), static_cast<long long>(s.exampleRank.value),
            formatCount(static_cast<double>(s.flops)).c_str(), static_cast<long long>(s.nodes),
            formatBytes(static_cast<double>(s.peakBytes)).c_str(),
            formatBytes(static_cast<double>(s.collectiveBytes[0])).c_str(),
            formatBytes(static_cast<double>(s.collectiveBytes[1])).c_str(),
            formatBytes(static_cast<double>(s.collectiveBytes[2])).c_str(),
            formatBytes(static_cast<double>(s.collectiveBytes[3])).c_str(),
            formatBytes(static_cast<double>(s.sendBytes)).c_str());
        out << line;
    }
    if (c.cluster.topology.enabled()) {
        const Fabric fabric(c.cluster);
        out << "\nnetwork (cluster.topology "
            << (c.cluster.topology.preset.empty() ? "custom" : c.cluster.topology.preset)
            << "): the highest level each communication crosses, and NCCL's algorithm for its largest instance\n";
        for (size_t i = 0; i < r.classes.size(); ++i) {
            const NetworkUsage usage = networkUsage(r, i, fabric);
            for (const NetworkUse& u : usage.uses) {
                std::snprintf(line, sizeof line, "  stage %-4d %-24s %-6s %-9s %-6s %6lld x %11s %10.3f ms\n",
                    r.classes[i].stage, u.what.c_str(), toString(u.level), toString(u.algorithm), toString(u.protocol),
                    static_cast<long long>(u.count), formatBytes(static_cast<double>(u.bytes)).c_str(), u.timeS * 1e3);
                out << line;
            }
        }
    }
    if (isInference(c)) {
        out << "KV cache per rank at the end of the programs:";
        for (const ClassSummary& s : r.summaries)
            out << " stage " << s.stage << " " << formatBytes(static_cast<double>(s.kvCacheBytes)) << " ("
                << s.kvCacheBytes << " B)" << (s.stage + 1 < static_cast<int32_t>(r.summaries.size()) ? "," : "");
        out << "\n";
    }
    if (!r.warnings.empty()) {
        out << "\n";
        for (const Diagnostic& d : r.warnings)
            out << (d.severity == Severity::Note ? "note: " : "warning: ")
                << (d.keyPath.empty() ? "" : d.keyPath + ": ") << d.message << "\n";
    }
    return out.str();
}

std::string rankReportText(const SynthesisResult& r, RankId rank)
{
    std::ostringstream out;
    const Mesh& mesh = r.mesh();
    const Coords c = mesh.coords(rank);
    const int32_t cls = r.classOf(rank);
    const ClassSummary& s = r.summaries[static_cast<size_t>(cls)];
    out << "rank " << rank.value << " of " << r.worldSize() << ": tp " << c[0] << ", cp " << c[1] << ", ep " << c[2]
        << ", edp " << c[3] << ", pp " << c[4] << " (class " << cls << ", " << s.ranks << " ranks)\n";
    out << "nodes " << s.nodes << ", compute " << formatCount(static_cast<double>(s.flops)) << "FLOP per iteration\n";
    // Collectives by group.
    struct GroupUse
    {
        AxisMask mask = 0;
        std::map<int, std::pair<int64_t, int64_t>> byType; // type -> (count, bytes)
    };
    std::map<int64_t, GroupUse> groups;
    std::map<int64_t, std::pair<int64_t, int64_t>> sendsTo, recvsFrom;
    // Counts and bytes of one result's program of this class, times `weight` (a compressed result's kept programs
    // count once, and each left-out period adds probe - kept: MicroBatchCompression::extend()).
    auto tally = [&](const SynthesisResult& from, int64_t weight) {
        for (const ProgramNode& n : from.classes[static_cast<size_t>(cls)].nodes) {
            if (n.kind == NodeKind::Collective) {
                GroupUse& g = groups[r.groupIdOf(n, rank)];
                g.mask = n.mask;
                auto& [count, bytes] = g.byType[static_cast<int>(n.collective)];
                count += weight;
                bytes += weight * n.bytes;
            } else if (n.kind == NodeKind::Send || n.kind == NodeKind::Recv) {
                auto& m = n.kind == NodeKind::Send ? sendsTo : recvsFrom;
                auto& [count, bytes] = m[r.peerOf(n, rank).value];
                count += weight;
                bytes += weight * n.bytes;
            }
        }
    };
    if (r.compression && r.compression->probe) {
        const int64_t repeats = r.compression->repeats();
        tally(r, 1 - repeats);
        tally(*r.compression->probe, repeats);
    } else {
        tally(r, 1);
    }
    for (const auto& [id, g] : groups) {
        const std::vector<int64_t> members = mesh.groupMembers(g.mask, mesh.groupIndex(g.mask, rank));
        out << "group " << id << " (" << axisMaskName(g.mask) << ", " << members.size() << " ranks:";
        for (size_t i = 0; i < members.size() && i < 8; ++i)
            out << ' ' << members[i];
        if (members.size() > 8)
            out << " ...";
        out << ")\n";
        for (const auto& [type, cb] : g.byType)
            out << "  " << toString(static_cast<CollectiveType>(type)) << ": " << cb.first << " x, "
                << formatBytes(static_cast<double>(cb.second)) << "\n";
    }
    for (const auto& [peer, cb] : sendsTo)
        out << "send to rank " << peer << ": " << cb.first << " x, " << formatBytes(static_cast<double>(cb.second))
            << "\n";
    for (const auto& [peer, cb] : recvsFrom)
        out << "recv from rank " << peer << ": " << cb.first << " x, " << formatBytes(static_cast<double>(cb.second))
            << "\n";
    return out.str();
}

nlohmann::ordered_json rankReportJson(const SynthesisResult& r, RankId rank, bool dump)
{
    using nlohmann::ordered_json;
    const Mesh& mesh = r.mesh();
    const Coords c = mesh.coords(rank);
    const int32_t cls = r.classOf(rank);
    const ClassProgram& program = r.classes[static_cast<size_t>(cls)];
    const ClassSummary& s = r.summaries[static_cast<size_t>(cls)];
    ordered_json j;
    j["rank"] = rank.value;
    j["world_size"] = r.worldSize();
    j["coords"] = { { "tp", c[0] }, { "cp", c[1] }, { "ep", c[2] }, { "edp", c[3] }, { "pp", c[4] } };
    j["class"] = cls;
    j["class_ranks"] = s.ranks;
    j["nodes"] = s.nodes;
    j["flops"] = s.flops;
    struct GroupUse
    {
        AxisMask mask = 0;
        std::map<int, std::pair<int64_t, int64_t>> byType; // type -> (count, bytes)
    };
    std::map<int64_t, GroupUse> groups;
    std::map<int64_t, std::pair<int64_t, int64_t>> sendsTo, recvsFrom;
    for (const ProgramNode& n : program.nodes) {
        if (n.kind == NodeKind::Collective) {
            GroupUse& g = groups[r.groupIdOf(n, rank)];
            g.mask = n.mask;
            auto& [count, bytes] = g.byType[static_cast<int>(n.collective)];
            ++count;
            bytes += n.bytes;
        } else if (n.kind == NodeKind::Send || n.kind == NodeKind::Recv) {
            auto& m = n.kind == NodeKind::Send ? sendsTo : recvsFrom;
            auto& [count, bytes] = m[r.peerOf(n, rank).value];
            ++count;
            bytes += n.bytes;
        }
    }
    ordered_json groupList = ordered_json::array();
    for (const auto& [id, g] : groups) {
        ordered_json collectives = ordered_json::array();
        for (const auto& [type, cb] : g.byType)
            collectives.push_back({ { "type", toString(static_cast<CollectiveType>(type)) }, { "count", cb.first },
                { "bytes", cb.second } });
        groupList.push_back({ { "id", id }, { "axes", axisMaskName(g.mask) },
            { "members", mesh.groupMembers(g.mask, mesh.groupIndex(g.mask, rank)) },
            { "collectives", std::move(collectives) } });
    }
    j["groups"] = std::move(groupList);
    auto peers = [](const std::map<int64_t, std::pair<int64_t, int64_t>>& m) {
        ordered_json list = ordered_json::array();
        for (const auto& [peer, cb] : m)
            list.push_back({ { "peer", peer }, { "count", cb.first }, { "bytes", cb.second } });
        return list;
    };
    j["sends"] = peers(sendsTo);
    j["recvs"] = peers(recvsFrom);
    if (dump) {
        ordered_json nodes = ordered_json::array();
        for (size_t i = 0; i < program.nodes.size(); ++i) {
            const ProgramNode& n = program.nodes[i];
            ordered_json node;
            node["id"] = i;
            node["kind"] = toString(n.kind);
            node["name"] = n.name.str();
            if (n.kind == NodeKind::Compute)
                node["flops"] = n.flops;
            node["bytes"] = n.bytes;
            if (n.kind == NodeKind::Collective) {
                node["collective"] = toString(n.collective);
                node["axes"] = axisMaskName(n.mask);
            }
            if (n.kind == NodeKind::Send || n.kind == NodeKind::Recv) {
                node["peer_stage"] = n.peerStage;
                node["tag"] = n.tag;
            }
            ordered_json deps = ordered_json::array(), ctrl = ordered_json::array();
            for (NodeId d : n.dataDeps)
                deps.push_back(d.value);
            for (NodeId d : n.ctrlDeps)
                ctrl.push_back(d.value);
            node["deps"] = std::move(deps);
            node["ctrl_deps"] = std::move(ctrl);
            nodes.push_back(std::move(node));
        }
        j["program"] = std::move(nodes);
    }
    return j;
}

} // namespace stagecraft
