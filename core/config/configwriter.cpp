// SPDX-License-Identifier: MIT
#include "config/configwriter.h"

#include <charconv>
#include <cstdio>

namespace stagecraft {

namespace {

    std::string quoted(const std::string& text)
    {
        return yamlQuoted(text);
    }

    const char* boolText(bool value)
    {
        return value ? "true" : "false";
    }

} // namespace

std::string yamlQuoted(std::string_view text)
{
    std::string out = "\"";
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\t') {
            out += "\\t";
        } else if (byte < 0x20 || byte == 0x7f) {
            char escape[8];
            std::snprintf(escape, sizeof escape, "\\x%02x", byte);
            out += escape;
        } else {
            out += c;
        }
    }
    return out + "\"";
}

std::string formatNumber(double value)
{
    char buffer[64];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
    return result.ec == std::errc() ? std::string(buffer, result.ptr) : std::string("nan");
}

std::string toYaml(const Config& c)
{
    const ModelConfig& m = c.model;
    const TrainingConfig& t = c.training;
    const ParallelismConfig& p = c.parallelism;
    const ClusterConfig& cl = c.cluster;
    auto integer = [](int64_t value) { return std::to_string(value); };

    std::string out = "# Stagecraft workload config (every key written; README: Configuration reference)\n";
    out += "name: " + quoted(c.name) + "\n";
    out += std::string("workload: ") + toString(c.workload) + "\n";
    out += "model:\n";
    if (!m.preset.empty())
        out += "  preset: " + quoted(m.preset) + "\n";
    out += std::string("  family: ") + toString(m.family) + "\n";
    out += "  layers: " + integer(m.layers) + "\n";
    out += "  hidden: " + integer(m.hidden) + "\n";
    out += "  ffn_hidden: " + integer(m.ffnHidden) + "\n";
    out += "  heads: " + integer(m.heads) + "\n";
    out += "  kv_heads: " + integer(m.kvHeads) + "\n";
    out += "  vocab: " + integer(m.vocab) + "\n";
    out += "  seq_len: " + integer(m.seqLen) + "\n";
    out += "  experts: " + integer(m.experts) + "\n";
    out += "  top_k: " + integer(m.topK) + "\n";
    out += "  expert_ffn_hidden: " + integer(m.expertFfnHidden) + "\n";
    out += "  shared_expert_ffn_hidden: " + integer(m.sharedExpertFfnHidden) + "\n";
    out += std::string("  causal_mask: ") + boolText(m.causalMask) + "\n";
    out += std::string("  tied_embeddings: ") + boolText(m.tiedEmbeddings) + "\n";
    out += "  rope_theta: " + formatNumber(m.ropeTheta) + "\n";
    out += std::string("  attention: ") + toString(m.attention) + "\n";
    out += "  head_dim: " + integer(m.headDim) + "\n";
    out += std::string("  qk_norm: ") + boolText(m.qkNorm) + "\n";
    out += std::string("  qkv_bias: ") + boolText(m.qkvBias) + "\n";
    out += "  q_lora_rank: " + integer(m.qLoraRank) + "\n";
    out += "  kv_lora_rank: " + integer(m.kvLoraRank) + "\n";
    out += "  qk_nope_head_dim: " + integer(m.qkNopeHeadDim) + "\n";
    out += "  qk_rope_head_dim: " + integer(m.qkRopeHeadDim) + "\n";
    out += "  v_head_dim: " + integer(m.vHeadDim) + "\n";
    out += "  first_dense_layers: " + integer(m.firstDenseLayers) + "\n";
    out += "  mtp_modules: " + integer(m.mtpModules) + "\n";
    out += "  moe_capacity_factor: " + formatNumber(m.moeCapacityFactor) + "\n";
    out += "  moe_routing_imbalance: " + formatNumber(m.moeRoutingImbalance) + "\n";
    out += "training:\n";
    if (!isInference(c) || t.globalBatch > 0) // serving has no iteration batch: inference.batch
        out += "  global_batch: " + integer(t.globalBatch) + "\n";
    out += "  micro_batch: " + integer(t.microBatch) + "\n";
    out += std::string("  precision: ") + toString(t.precision) + "\n";
    out += "  optimizer: " + quoted(t.optimizer) + "\n";
    out += std::string("  recompute: ") + toString(t.recompute) + "\n";
    out += "  recompute_modules: [";
    const std::vector<std::string> names = recomputeModuleNames(t.recomputeModules);
    for (size_t i = 0; i < names.size(); ++i)
        out += (i ? ", " : "") + names[i];
    out += "]\n";
    out += std::string("  main_grad_dtype: ") + toString(t.mainGradDtype) + "\n";
    out += std::string("  grad_reduce_dtype: ") + toString(t.gradReduceDtype) + "\n";
    out += std::string("  gradient_accumulation_fusion: ") + boolText(t.gradientAccumulationFusion) + "\n";
    const InferenceConfig& in = c.inference;
    out += "inference:\n";
    out += "  batch: " + integer(in.batch) + "\n";
    out += "  prompt_tokens: " + integer(in.promptTokens) + "\n";
    out += "  output_tokens: " + integer(in.outputTokens) + "\n";
    out += std::string("  phases: ") + toString(in.phases) + "\n";
    out += "  decode_steps: " + integer(in.decodeSteps) + "\n";
    out += std::string("  kv_cache_dtype: ") + toString(in.kvCacheDtype) + "\n";
    out += "  block_size: " + integer(in.blockSize) + "\n";
    out += std::string("  arrival: ") + toString(in.arrival) + "\n";
    out += "  request_rate: " + formatNumber(in.requestRate) + "\n";
    out += "  arrival_cv: " + formatNumber(in.arrivalCv) + "\n";
    out += "  requests: " + integer(in.requests) + "\n";
    out += std::string("  length_distribution: ") + toString(in.lengthDistribution) + "\n";
    out += "  length_cv: " + formatNumber(in.lengthCv) + "\n";
    out += "  trace: " + quoted(in.trace) + "\n";
    out += "  seed: " + integer(in.seed) + "\n";
    out += "  max_batched_tokens: " + integer(in.maxBatchedTokens) + "\n";
    out += "  max_sequences: " + integer(in.maxSequences) + "\n";
    out += std::string("  chunked_prefill: ") + boolText(in.chunkedPrefill) + "\n";
    out += std::string("  preemption: ") + (in.preemptBySwap ? "swap" : "recompute") + "\n";
    out += "  kv_memory_fraction: " + formatNumber(in.kvMemoryFraction) + "\n";
    out += "  prefill_replicas: " + integer(in.prefillReplicas) + "\n";
    out += "  prefill_tp: " + integer(in.prefillTp) + "\n";
    out += "  prefill_pp: " + integer(in.prefillPp) + "\n";
    out += "  speculative_tokens: " + integer(in.speculativeTokens) + "\n";
    out += "  acceptance_rate: " + formatNumber(in.acceptanceRate) + "\n";
    out += "  draft_cost: " + formatNumber(in.draftCost) + "\n";
    out += std::string("  weight_dtype: ") + (in.fp8Weights ? "fp8" : "bf16") + "\n";
    out += "  slo_ttft_ms: " + formatNumber(in.sloTtftMs) + "\n";
    out += "  slo_tpot_ms: " + formatNumber(in.sloTpotMs) + "\n";
    out += "parallelism:\n";
    out += "  dp: " + integer(p.dp) + "\n";
    out += "  tp: " + integer(p.tp) + "\n";
    out += "  pp: " + integer(p.pp) + "\n";
    out += "  cp: " + integer(p.cp) + "\n";
    out += "  ep: " + integer(p.ep) + "\n";
    out += std::string("  sequence_parallel: ") + boolText(p.sequenceParallel) + "\n";
    out += "  zero: " + integer(p.zero) + "\n";
    out += std::string("  schedule: ") + toString(p.schedule) + "\n";
    out += "  virtual_stages: " + integer(p.virtualStages) + "\n";
    out += "  rank_order: [";
    for (size_t i = 0; i < p.rankOrder.size(); ++i)
        out += (i ? ", " : "") + std::string(toString(p.rankOrder[i]));
    out += "]\n";
    // Bytes / 2^20 is exact for any byte count below 2^53, so the MiB value reads back to the same bytes.
    out += "  gradient_bucket_mb: " + formatNumber(double(p.gradientBucketBytes) / double(1 << 20)) + "\n";
    out += "  expert_tp: " + integer(p.expertTp) + "\n";
    out += "  first_stage_layers: " + integer(p.firstStageLayers) + "\n";
    out += "  last_stage_layers: " + integer(p.lastStageLayers) + "\n";
    out += std::string("  account_for_embedding_in_pipeline_split: ") + boolText(p.embeddingInSplit) + "\n";
    out += std::string("  account_for_loss_in_pipeline_split: ") + boolText(p.lossInSplit) + "\n";
    out += std::string("  overlap_grad_reduce: ") + boolText(p.overlapGradReduce) + "\n";
    out += std::string("  overlap_param_gather: ") + boolText(p.overlapParamGather) + "\n";
    out += std::string("  tp_comm_overlap: ") + boolText(p.tpCommOverlap) + "\n";
    out += std::string("  overlap_p2p_comm: ") + boolText(p.overlapP2pComm) + "\n";
    out += "  pipeline_layout: " + quoted(p.pipelineLayout) + "\n";
    out += "  microbatch_group_size: " + integer(p.microBatchGroupSize) + "\n";
    out += std::string("  overlap_moe_expert_parallel_comm: ") + boolText(p.overlapMoeExpertParallelComm) + "\n";
    out += std::string("  reduce_gradients_per_microbatch: ") + boolText(p.reduceGradientsPerMicroBatch) + "\n";
    out += "cluster:\n";
    if (!cl.preset.empty())
        out += "  preset: " + quoted(cl.preset) + "\n";
    out += "  gpu: " + quoted(cl.gpu) + "\n";
    out += "  gpus_per_node: " + integer(cl.gpusPerNode) + "\n";
    out += "  intra_node_bandwidth_gbps: " + formatNumber(cl.intraNodeBandwidthGbps) + "\n";
    out += "  inter_node_bandwidth_gbps: " + formatNumber(cl.interNodeBandwidthGbps) + "\n";
    out += "  intra_node_efficiency: " + formatNumber(cl.intraNodeEfficiency) + "\n";
    out += "  inter_node_efficiency: " + formatNumber(cl.interNodeEfficiency) + "\n";
    out += "  intra_node_latency_us: " + formatNumber(cl.intraNodeLatencyUs) + "\n";
    out += "  inter_node_latency_us: " + formatNumber(cl.interNodeLatencyUs) + "\n";
    out += "  kernel_launch_us: " + formatNumber(cl.kernelLaunchUs) + "\n";
    out += "  gemm_efficiency: " + formatNumber(cl.gemmEfficiency) + "\n";
    out += "  attention_efficiency: " + formatNumber(cl.attentionEfficiency) + "\n";
    out += "  hbm_efficiency: " + formatNumber(cl.hbmEfficiency) + "\n";
    out += "  kernel_table: " + quoted(cl.kernelTable) + "\n";
    const TopologyConfig& topo = cl.topology;
    out += "  topology: " + quoted(topo.preset) + "\n";
    out += "  nvlink_domain: " + integer(topo.nvlinkDomain) + "\n";
    out += "  nvlink_bandwidth_gbps: " + formatNumber(topo.nvlinkBandwidthGbps) + "\n";
    out += "  nvls_efficiency: " + formatNumber(topo.nvlsEfficiency) + "\n";
    out += "  nics_per_node: " + integer(topo.nicsPerNode) + "\n";
    out += "  nic_bandwidth_gbps: " + formatNumber(topo.nicBandwidthGbps) + "\n";
    out += "  nic_efficiency: " + formatNumber(topo.nicEfficiency) + "\n";
    out += "  rails: " + integer(topo.rails) + "\n";
    out += "  leaf_radix: " + integer(topo.leafRadix) + "\n";
    out += "  leaf_oversubscription: " + formatNumber(topo.leafOversubscription) + "\n";
    out += "  spine_radix: " + integer(topo.spineRadix) + "\n";
    out += "  spine_oversubscription: " + formatNumber(topo.spineOversubscription) + "\n";
    out += "  planes: " + integer(topo.planes) + "\n";
    return out;
}

} // namespace stagecraft
