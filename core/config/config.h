// SPDX-License-Identifier: MIT
#pragma once

#include "config/topologyconfig.h"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace stagecraft {

enum class Family
{
    Gpt,
    Llama,
    Moe
};
enum class Precision
{
    Fp32,
    Fp16,
    Bf16,
    /// FP8 training (Transformer Engine's FP8 GEMMs, Megatron-LM's --fp8-format): bf16 mixed precision whose linear
    /// layers run in FP8 and keep their saved inputs in FP8 (model/op.h, fp8Gemm); training.precision only.
    Fp8
};
enum class Recompute
{
    None,
    Selective, ///< the modules of TrainingConfig::recomputeModules (Megatron-LM's --recompute-granularity selective)
    Full
};
/// The parts of a decoder layer that `recompute: selective` can re-run: Megatron-LM's --recompute-modules names
/// (megatron/core/transformer/transformer_config.py at d98e8a64, `recompute_modules`), as bits of a mask.
namespace recompute_module {
    inline constexpr uint8_t kCoreAttn = 1; ///< core_attn: scores, softmax, dropout, context (Megatron's default)
    inline constexpr uint8_t kLayernorm = 2; ///< layernorm: the input and pre-MLP norms of a layer
    inline constexpr uint8_t kMlaUpProj = 4; ///< mla_up_proj: MLA's q and kv up-projections and their RoPE
    inline constexpr uint8_t kMlp = 8; ///< mlp: the dense MLP of a dense layer
    inline constexpr uint8_t kMoe = 16; ///< moe: a whole MoE layer (router, dispatch, experts, combine, shared)
    inline constexpr uint8_t kMoeAct = 32; ///< moe_act: the routed experts' activation function
    inline constexpr uint8_t kSharedExperts = 64; ///< shared_experts: the shared expert's MLP
    /// Megatron re-runs these with output-discarding checkpoints (CheckpointWithoutOutput): the module's output is
    /// not kept either, and its consumers' backward reads the recomputed value. The others keep their output (the
    /// consumer saved it) and re-run only their inside.
    inline constexpr uint8_t kOutputDiscarding = kLayernorm | kMlaUpProj | kMoeAct;
} // namespace recompute_module
/// One recompute module: its Megatron-LM name and its bit.
struct RecomputeModuleName
{
    std::string_view name;
    uint8_t bit;
};
/// Every recompute module, in the order of recompute_module.
const std::vector<RecomputeModuleName>& recomputeModuleTable();
/// The Megatron-LM names of a module mask, in the order of recompute_module ("core_attn", "layernorm", ...).
std::vector<std::string> recomputeModuleNames(uint8_t mask);
/// The bit of one Megatron-LM module name; 0 when the name is unknown.
uint8_t recomputeModuleBit(std::string_view name);
/// Core attention kernel (YAML `model.attention`).
enum class AttentionKernel
{
    Flash, ///< fused (FlashAttention): keeps the output and the fp32 log-sum-exp, recomputes the scores in backward
    Eager ///< unfused: materialises the S x S scores and probabilities and keeps them for backward
};
enum class Schedule
{
    GPipe,
    OneFOneB,
    Interleaved,
    /// Zero-bubble ZB-H1 (Qi et al., ICLR 2024, "Zero Bubble Pipeline Parallelism" §3.1): 1F1B whose backward is
    /// split into the input-gradient part B and the weight-gradient part W, the W of the last stages deferred into
    /// the bubbles; YAML `zb1p`.
    ZeroBubbleH1,
    /// DualPipe (DeepSeek-V3 technical report §3.2.1): bidirectional, micro-batches fed from both ends, every rank
    /// holds two chunks (its own stage and the mirror stage pp-1-s), overlapped forward-backward pairs.
    DualPipe,
    /// DualPipeV (Sea AI Lab's "cut-in-half" DualPipe, deepseek-ai/DualPipe dualpipev.py): a V-shaped schedule over
    /// 2 chunks per rank, chunk g < pp on stage g and chunk g >= pp on stage 2pp-1-g.
    DualPipeV
};
/// Whether a schedule splits the backward into B and W parts.
inline bool splitsBackward(Schedule s)
{
    return s == Schedule::ZeroBubbleH1 || s == Schedule::DualPipe || s == Schedule::DualPipeV;
}

/// What the programs describe (YAML `workload`).
enum class Workload
{
    Training, ///< one training iteration: forward, backward, optimizer step
    Inference ///< serving: a prefill and decode steps, forward only, with a KV cache (the `inference` section)
};
/// Which serving phases the programs hold (YAML `inference.phases`).
enum class InferencePhases
{
    Prefill, ///< the prompt only: fills the KV cache and computes the first token's logits
    Decode, ///< decode steps only, against a cache of the prompt that is already resident (disaggregated serving)
    Both ///< a prefill, then the decode steps
};
/// Element type of the KV cache (YAML `inference.kv_cache_dtype`).
enum class KvCacheDtype
{
    Bf16,
    Fp8
};

/// How serving requests arrive (YAML `inference.arrival`).
enum class RequestArrival
{
    Batch, ///< `inference.batch` requests of prompt_tokens + output_tokens, all at time 0 (one static batch)
    Poisson, ///< exponential gaps at `request_rate`
    Gamma, ///< gamma-distributed gaps at `request_rate` with coefficient of variation `arrival_cv`
    Trace ///< the CSV file `inference.trace` (arrival time, prompt tokens, output tokens)
};
/// How generated request lengths spread around prompt_tokens and output_tokens (YAML `inference.length_distribution`).
enum class LengthDistribution
{
    Fixed,
    Uniform, ///< uniform over mean * [1 - sqrt(3) cv, 1 + sqrt(3) cv], at least 1
    Lognormal ///< lognormal with that mean and coefficient of variation
};

/// Mesh axes. The four spatial axes split tensors; pp is temporal (pipeline stages) and never appears in shapes.
enum class MeshAxis : uint8_t
{
    Dp,
    Tp,
    Cp,
    Ep,
    Pp
};
inline constexpr int kMeshAxisCount = 5;

/// Model architecture (YAML `model:`). Sizes are counts (layers, heads) or element extents (hidden, vocab).
struct ModelConfig
{
    std::string preset; ///< name of the preset this was based on, empty when none
    Family family = Family::Llama;
    int64_t layers = 0;
    int64_t hidden = 0;
    int64_t ffnHidden = 0;
    int64_t heads = 0;
    int64_t kvHeads = 0; ///< gpt: must equal heads (MHA)
    int64_t vocab = 0;
    int64_t seqLen = 0;
    int64_t experts = 0; ///< moe only: routed experts per layer
    int64_t topK = 0; ///< moe only
    int64_t expertFfnHidden = 0; ///< moe only: FFN size of each routed expert
    int64_t sharedExpertFfnHidden = 0; ///< moe only: FFN size of the always-on shared expert, 0 = none
    bool causalMask = true; ///< attention FLOPs of a causal kernel (half the S x S work); false = full S x S
    bool tiedEmbeddings = false; ///< output head shares the input embedding matrix (GPT-3 does)
    double ropeTheta = 0; ///< informational (llama/moe); does not change costs
    AttentionKernel attention = AttentionKernel::Flash;
    int64_t headDim = 0; ///< per-head size of q and k (and v without MLA); 0 = hidden / heads
    bool qkNorm = false; ///< RMSNorm over each head of q and k before RoPE (Qwen3)
    bool qkvBias = false; ///< the q, k and v projections have a bias (Qwen2); gpt always has biases
    // Multi-head latent attention (DeepSeek-V2/V3), used when kvLoraRank > 0 (llama and moe families).
    int64_t qLoraRank = 0; ///< rank of the compressed query; 0 = q projected from the hidden state directly
    int64_t kvLoraRank = 0; ///< rank of the compressed key/value latent; > 0 selects MLA
    int64_t qkNopeHeadDim = 0; ///< per-head q/k size without rotary embedding
    int64_t qkRopeHeadDim = 0; ///< per-head q/k size with rotary embedding (the rotary key is shared by all heads)
    int64_t vHeadDim = 0; ///< per-head value size
    int64_t firstDenseLayers = 0; ///< moe only: the first layers use a dense FFN of ffnHidden (DeepSeek-V3: 3)
    int64_t mtpModules = 0; ///< multi-token prediction modules after the last layer (DeepSeek-V3: 1)
    double moeCapacityFactor = 0; ///< moe only: tokens an expert takes, as a multiple of the mean; 0 = dropless
    double moeRoutingImbalance = 1; ///< moe only: the hottest expert's tokens / the mean (1 = uniform routing)

    friend bool operator==(const ModelConfig&, const ModelConfig&) = default;
};

/// Multi-head latent attention (DeepSeek-V2/V3) replaces the q/k/v projections.
inline bool usesMla(const ModelConfig& m)
{
    return m.kvLoraRank > 0;
}
/// Per-head size of q and k without the RoPE part (MLA: qk_nope_head_dim); head_dim, or hidden/heads.
inline int64_t qkHeadDim(const ModelConfig& m)
{
    if (usesMla(m))
        return m.qkNopeHeadDim;
    return m.headDim > 0 ? m.headDim : (m.heads > 0 ? m.hidden / m.heads : 0);
}
/// Per-head size of v: v_head_dim with MLA, else the q/k head size.
inline int64_t valueHeadDim(const ModelConfig& m)
{
    return usesMla(m) ? m.vHeadDim : qkHeadDim(m);
}

/// Training setup (YAML `training:`).
struct TrainingConfig
{
    int64_t globalBatch = 0; ///< sequences per iteration, over all data-parallel replicas
    int64_t microBatch = 1; ///< sequences per micro-batch per data-parallel replica
    Precision precision = Precision::Bf16; ///< 16-bit means mixed precision with fp32 master weights
    std::string optimizer = "adam";
    Recompute recompute = Recompute::None;
    /// What `recompute: selective` re-runs (recompute_module bits; YAML `recompute_modules`, default Megatron's
    /// ["core_attn"]).
    uint8_t recomputeModules = recompute_module::kCoreAttn;
    Precision mainGradDtype = Precision::Fp32; ///< gradient accumulation buffer (Megatron's main_grad)
    Precision gradReduceDtype = Precision::Fp32; ///< dtype of the data-parallel gradient reduction
    /// The weight-gradient GEMM accumulates into main_grad itself (Megatron-LM --gradient-accumulation-fusion, on
    /// by default since 2022); off, each micro-batch's gradient is added to it by a separate kernel (estimate only).
    bool gradientAccumulationFusion = true;

    friend bool operator==(const TrainingConfig&, const TrainingConfig&) = default;
};

/// Serving setup (YAML `inference:`), used when Config::workload is Inference.
struct InferenceConfig
{
    int64_t batch = 1; ///< concurrent sequences over all data-parallel replicas
    int64_t promptTokens = 0; ///< tokens of each prompt; 0 = model.seq_len
    int64_t outputTokens = 128; ///< tokens generated per sequence (the first by the prefill, the rest by decode steps)
    InferencePhases phases = InferencePhases::Both;
    int64_t decodeSteps = 0; ///< decode steps written to the programs; 0 = min(4, output_tokens - 1)
    KvCacheDtype kvCacheDtype = KvCacheDtype::Bf16;
    int64_t blockSize = 16; ///< paged-cache block in tokens: a sequence's cache is allocated in whole blocks
    // Serving over time (serving/servingsimulation.h); `arrival: batch` keeps the single static batch.
    RequestArrival arrival = RequestArrival::Batch;
    double requestRate = 1; ///< requests per second over all replicas (poisson, gamma)
    double arrivalCv = 1; ///< gamma: coefficient of variation of the gaps (1 = Poisson)
    int64_t requests = 1000; ///< requests generated (poisson, gamma); a trace: the first this many, 0 = all
    LengthDistribution lengthDistribution = LengthDistribution::Fixed;
    double lengthCv = 0.5; ///< coefficient of variation of generated prompt and output lengths
    std::string trace; ///< CSV trace of requests (arrival: trace); relative paths from the config's folder
    int64_t seed = 1; ///< of the generated arrivals and lengths
    int64_t maxBatchedTokens = 8192; ///< token budget of one iteration (vLLM max_num_batched_tokens)
    int64_t maxSequences = 256; ///< running requests per replica at most (vLLM max_num_seqs)
    bool chunkedPrefill = true; ///< prompts split over iterations within the token budget (Sarathi-Serve)
    bool preemptBySwap = false; ///< YAML `preemption: swap`; default recompute (vLLM V1's only mode)
    double kvMemoryFraction = 0.9; ///< of HBM usable for weights, activations and KV blocks (gpu_memory_utilization)
    int64_t prefillReplicas = 0; ///< > 0: disaggregated, this many prefill replicas beside dp decode replicas
    int64_t prefillTp = 0; ///< tensor parallelism of a prefill replica; 0 = tp
    int64_t prefillPp = 0; ///< pipeline stages of a prefill replica; 0 = pp
    int64_t speculativeTokens = 0; ///< draft tokens proposed per decode step (0 = no speculative decoding)
    double acceptanceRate = 0.7; ///< probability that each draft token is accepted
    double draftCost = 0; ///< one draft token's time / a target decode step's; 0 = one MTP module (1/layers)
    bool fp8Weights = false; ///< YAML `weight_dtype: fp8`: weights stored and read in FP8, GEMMs at the FP8 peak
    double sloTtftMs = 0; ///< goodput: a request meets the SLO with TTFT at most this (0 = no bound)
    double sloTpotMs = 0; ///< and time per output token at most this (0 = no bound)

    friend bool operator==(const InferenceConfig&, const InferenceConfig&) = default;
};

/// Parallelism plan (YAML `parallelism:`). World size = dp * tp * pp * cp; ep divides dp (Megatron style).
struct ParallelismConfig
{
    int64_t dp = 1;
    int64_t tp = 1;
    int64_t pp = 1;
    int64_t cp = 1;
    int64_t ep = 1;
    bool sequenceParallel = false;
    int zero = 0; ///< 0..3; 3 = FSDP
    Schedule schedule = Schedule::OneFOneB;
    int64_t virtualStages = 1; ///< > 1 only with the interleaved schedule
    std::vector<MeshAxis> rankOrder { MeshAxis::Tp, MeshAxis::Cp, MeshAxis::Ep, MeshAxis::Dp, MeshAxis::Pp };
    int64_t gradientBucketBytes = 0; ///< data-parallel gradient bucket size; 0 = one bucket per layer
    int64_t expertTp = 0; ///< tensor parallelism of the routed experts (Megatron's expert_tensor_parallel_size); 0 = tp
    int64_t firstStageLayers = 0; ///< decoder layers on the first pipeline stage; 0 = an even split
    int64_t lastStageLayers = 0; ///< decoder layers on the last pipeline stage; 0 = an even split
    bool embeddingInSplit = false; ///< the embedding counts as a layer when splitting the pipeline
    bool lossInSplit = false; ///< the LM head and loss count as a layer when splitting the pipeline
    /// Overlap switches of the step-time estimate, each with Megatron-LM's default (off). They change when
    /// communication may run, not what is sent: the traces are the same either way.
    bool overlapGradReduce = false; ///< DP gradient reduction in buckets during the backward (--overlap-grad-reduce)
    bool overlapParamGather = false; ///< ZeRO parameter all-gather behind the next forward (--overlap-param-gather)
    bool tpCommOverlap = false; ///< TP collectives pipelined with their GEMMs (--tp-comm-overlap)
    bool overlapP2pComm = false; ///< pipeline send/recv behind compute (--overlap-p2p-communication)
    /// Megatron-Core's --pipeline-model-parallel-layout string (config/pipelinelayout.h); empty = the even split or
    /// the split the first/last-stage and account-for keys ask for.
    std::string pipelineLayout;
    /// Contiguous micro-batches per virtual stage of the interleaved schedule (Megatron-LM's
    /// --microbatch-group-size-per-virtual-pipeline-stage; Llama 3 paper §3.3.2's N); 0 = automatic: pp when it
    /// divides the micro-batches, else the smallest N > pp that leaves no group shorter than pp.
    int64_t microBatchGroupSize = 0;
    /// The expert-parallel all-to-all of one micro-batch runs under the compute of another (Megatron-Core's
    /// --overlap-moe-expert-parallel-comm, default off; DualPipe's overlapped forward-backward chunks): the
    /// forward of one micro-batch and the backward of another are emitted as one interleaved pair.
    bool overlapMoeExpertParallelComm = false;
    /// ZeRO 2/3: reduce-scatter the gradients after every micro-batch (DeepSpeed; FSDP outside a pipeline); false:
    /// accumulate them unsharded (main_grad dtype) and reduce-scatter each layer once, after its last micro-batch
    /// (FSDP under torch.distributed.pipelining). ZeRO 0/1 always reduce once per iteration.
    bool reduceGradientsPerMicroBatch = true;

    int64_t worldSize() const
    {
        return dp * tp * pp * cp;
    }

    friend bool operator==(const ParallelismConfig&, const ParallelismConfig&) = default;
};

/// Hardware used by the step-time estimate only (YAML `cluster:`).
/// The defaults are a DGX H100 (config/clusterpresets.h: "dgx-h100").
struct ClusterConfig
{
    std::string preset; ///< a cluster preset whose figures the keys not given explicitly take; empty = none
    std::string gpu = "h100-sxm";
    int64_t gpusPerNode = 8;
    double intraNodeBandwidthGbps = 450; ///< GB/s per GPU and direction within a node (NVLink)
    double interNodeBandwidthGbps = 50; ///< GB/s per GPU and direction across nodes (its NIC)
    double intraNodeEfficiency = 0.8; ///< fraction of the link a large collective reaches (nccl-tests busbw)
    double interNodeEfficiency = 0.9;
    double intraNodeLatencyUs = 5; ///< per communication step (a collective takes ceil(log2 n) of them)
    double interNodeLatencyUs = 10;
    double kernelLaunchUs = 2; ///< gap between back-to-back kernels, added to every compute node
    /// Kernel efficiencies; 0 = the GPU preset's figure (resources/gpus/*.yaml, each with its source).
    double gemmEfficiency = 0; ///< fraction of dense peak a large GEMM reaches
    double attentionEfficiency = 0; ///< fraction of dense peak of the FlashAttention forward
    double hbmEfficiency = 0; ///< fraction of HBM bandwidth a memory-bound kernel reaches
    /// Kernel times measured by `stagecraft calibrate` (estimate/kerneltable.h): ops of the shapes it holds take its
    /// times, the others the model's. Resolved against the config file's folder when relative; empty = none.
    std::string kernelTable;
    TopologyConfig topology; ///< `cluster.topology`; disabled by default (config/topologyconfig.h)

    friend bool operator==(const ClusterConfig&, const ClusterConfig&) = default;
};

class ConfigLocations;

/// Where the keys of a loaded config were given (config/configlocations.h), so that problems found after loading
/// (during synthesis) can point at the line and column of the key they concern. Not part of the config's value:
/// two configs that differ only in their origin compare equal. Null for a config built in code.
struct ConfigOrigin
{
    std::shared_ptr<const ConfigLocations> locations;

    friend bool operator==(const ConfigOrigin&, const ConfigOrigin&)
    {
        return true;
    }
};

/// The process-wide default of Config::maxProgramNodes (config/programsize.h), settable once at start-up.
int64_t defaultMaxProgramNodes();
void setDefaultMaxProgramNodes(int64_t nodes);

/// A whole workload: the resolved config (preset applied, overrides applied). Plain value type.

struct Config
{
    std::string name = "workload"; ///< used for output file names; no path separators
    Workload workload = Workload::Training;
    ModelConfig model;
    TrainingConfig training; ///< inference uses only its `precision` (weights and activations)
    InferenceConfig inference; ///< used only when workload is Inference
    ParallelismConfig parallelism;
    ClusterConfig cluster;
    /// Not a YAML field: the largest estimatedProgramNodes() validation accepts (config/programsize.h; the
    /// command line's `--max-nodes` sets the process-wide default).
    int64_t maxProgramNodes = defaultMaxProgramNodes();
    ConfigOrigin origin; ///< set by the config loader; shared, immutable

    friend bool operator==(const Config&, const Config&) = default;
};

/// Whether the config describes serving (Config::inference) rather than a training iteration.
inline bool isInference(const Config& c)
{
    return c.workload == Workload::Inference;
}
/// Tokens of each prompt: inference.prompt_tokens, or model.seq_len when that is 0.
inline int64_t promptTokens(const Config& c)
{
    return c.inference.promptTokens > 0 ? c.inference.promptTokens : c.model.seqLen;
}
inline bool runsPrefill(const InferenceConfig& i)
{
    return i.phases != InferencePhases::Decode;
}
inline bool runsDecode(const InferenceConfig& i)
{
    return i.phases != InferencePhases::Prefill;
}
/// Decode steps in the programs: none without the decode phase, else inference.decode_steps, or when that is 0
/// min(4, output_tokens - 1) (the prefill produces the first output token; four steps show the cache growing
/// and keep the programs small, and every later step differs from them only in its context length).
inline int64_t decodeSteps(const InferenceConfig& i)
{
    if (!runsDecode(i))
        return 0;
    if (i.decodeSteps > 0)
        return i.decodeSteps;
    const int64_t rest = i.outputTokens - 1;
    return rest < 0 ? 0 : rest < 4 ? rest : 4;
}
/// Bytes per element of the KV cache.
inline int kvCacheElementBytes(KvCacheDtype d)
{
    return d == KvCacheDtype::Fp8 ? 1 : 2;
}

/// Virtual stages (local chunks) per pipeline rank: the chunks of pipeline_layout / pp when a layout is given, else
/// virtual_stages with the interleaved schedule, 2 with dualpipev, 1 otherwise (DualPipe's two mirror chunks are
/// one chunk of each direction: 1).
int64_t pipelineVirtualStages(const ParallelismConfig& p);

/// The interleaved schedule's micro-batch group size (parallelism.microbatch_group_size) for m micro-batches on pp
/// stages: `requested` when > 0, else pp (Megatron-Core's default for microbatch_group_size_per_vp_stage,
/// model_parallel_config.py at d98e8a64), at most m.
int32_t interleavedGroupSize(int64_t pp, int64_t microBatches, int64_t requested);

// Text forms used in YAML and reports ("llama", "bf16", "1f1b", "tp", ...).
const char* toString(Family f);
const char* toString(Precision p);
const char* toString(Recompute r);
const char* toString(Schedule s);
const char* toString(AttentionKernel a);
const char* toString(MeshAxis a);
const char* toString(Workload w);
const char* toString(InferencePhases p);
const char* toString(KvCacheDtype d);
const char* toString(RequestArrival a);
const char* toString(LengthDistribution d);

/// `c` as serving uses it: the training-only keys that would change a forward-only program set to their serving
/// values (ZeRO 0, recompute none, the 1f1b schedule with one virtual stage); configValidator reports each one it
/// changes as a note. A training config is returned unchanged. Pure.
Config withoutTrainingKeys(const Config& c);

/// Bytes per element of a precision's compute dtype (fp32: 4, fp16/bf16: 2; fp8 training keeps its weights and
/// the activations outside FP8 GEMMs in bf16: 2).
inline int bytesPerElement(Precision p)
{
    return p == Precision::Fp32 ? 4 : 2;
}

} // namespace stagecraft
