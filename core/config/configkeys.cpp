// SPDX-License-Identifier: MIT
#include "config/configkeys.h"

namespace stagecraft {

const std::vector<ConfigKeyInfo>& configKeys()
{
    // Defaults are those of config.h as toYaml() writes them; tests/core/tst_docs.cpp checks both the key set
    // (against the loader) and every default (against toYaml(Config {})).
    static const std::vector<ConfigKeyInfo> keys {
        { "name", "workload", false,
            "Names the output files (`<name>.<rank>.et`, `<name>.json`); no `/`, `\\` or `..`. A preset's name "
            "when the config is a preset or has `model.preset`." },
        { "model.preset", "", false,
            "Start from the model keys of this built-in preset (`stagecraft presets`); keys given here override "
            "them. Without it the model keys marked required must be given." },
        { "model.family", "", true,
            "`gpt` (LayerNorm, GeLU, multi-head attention), `llama` (RMSNorm, SwiGLU, GQA) or `moe` "
            "(llama with routed experts)." },
        { "model.layers", "", true, "Decoder layers. At least `parallelism.pp`." },
        { "model.hidden", "", true, "Model dimension h. Divisible by `heads`." },
        { "model.ffn_hidden", "", true, "FFN (MLP) dimension. Divisible by `tp`." },
        { "model.heads", "", true, "Attention heads. Divisible by `kv_heads` and `tp`." },
        { "model.kv_heads", "", true,
            "Key/value heads (grouped-query attention), divisible by `tp`. gpt: optional, defaults to and must equal "
            "`heads`." },
        { "model.vocab", "", true, "Vocabulary size." },
        { "model.seq_len", "", true,
            "Sequence length in tokens. Divisible by `cp` (and by `cp*tp` with "
            "`sequence_parallel`)." },
        { "model.experts", "0", false, "moe only (required there): routed experts per layer; divisible by `ep`." },
        { "model.top_k", "0", false, "moe only (required there): experts each token is routed to, 1..`experts`." },
        { "model.expert_ffn_hidden", "0", false,
            "moe only: FFN dimension of each routed expert; defaults to `ffn_hidden`." },
        { "model.shared_expert_ffn_hidden", "0", false,
            "moe only: FFN dimension of an always-active shared expert; 0 = no shared expert." },
        { "model.causal_mask", "true", false,
            "Attention FLOPs of a causal kernel (about half the S x S work); false counts the full S x S." },
        { "model.tied_embeddings", "false", false,
            "The output head shares the input embedding matrix (GPT-3 does). With `pp` > 1 the embedding-gradient "
            "all-reduce between the first and last stage is not modelled (a warning says so)." },
        { "model.rope_theta", "0", false, "RoPE base (llama, moe). Informational: it does not change any cost." },
        { "training.global_batch", "", true,
            "Sequences per iteration over all data-parallel replicas. Divisible by `micro_batch*dp`." },
        { "training.micro_batch", "1", false,
            "Sequences per micro-batch per data-parallel replica. Micro-batches per iteration: "
            "`global_batch / (micro_batch*dp)`." },
        { "training.precision", "bf16", false,
            "`fp32`, `fp16` or `bf16`. 16-bit means mixed precision: 16-bit weights, activations and gradients, fp32 "
            "master weights and Adam moments." },
        { "training.optimizer", "adam", false, "`adam`, the only optimizer modelled (fp32 moments m and v)." },
        { "training.recompute", "none", false,
            "Activation recompute: `none`, `selective` (the core attention: scores, softmax, dropout, context) or "
            "`full` (each decoder layer's forward is re-run before its backward)." },
        { "parallelism.dp", "1", false,
            "Data-parallel degree. World size is `dp*tp*pp*cp`; expert parallelism is carved out of dp." },
        { "parallelism.tp", "1", false,
            "Tensor-parallel degree (Megatron); divides `heads`, `kv_heads` and the FFN sizes." },
        { "parallelism.pp", "1", false,
            "Pipeline-parallel degree: the layers are cut into `pp` stages, one rank class each." },
        { "parallelism.cp", "1", false,
            "Context-parallel degree: the sequence is split over `cp` ranks, keys and values are all-gathered for "
            "attention." },
        { "parallelism.ep", "1", false,
            "Expert-parallel degree (moe): the experts of a layer are split over `ep` of the `dp` ranks (ep divides "
            "dp and `experts`); tokens are dispatched and combined with all-to-alls." },
        { "parallelism.sequence_parallel", "false", false,
            "Megatron sequence parallelism alongside `tp`: norms, dropout and residuals are split over the sequence "
            "(reduce-scatter / all-gather instead of all-reduce). No effect with tp 1." },
        { "parallelism.zero", "0", false,
            "ZeRO stage over the data-parallel group: 0 none, 1 optimizer state sharded, 2 and gradients, 3 and "
            "weights (FSDP: all-gathered layer by layer, one layer prefetched)." },
        { "parallelism.schedule", "1f1b", false, "Pipeline schedule: `gpipe`, `1f1b` or `interleaved`." },
        { "parallelism.virtual_stages", "1", false,
            "Model chunks per pipeline rank; > 1 only with `interleaved`, and `layers` divisible by "
            "`pp*virtual_stages`." },
        { "parallelism.rank_order", "[tp, cp, ep, dp, pp]", false,
            "How ranks are numbered on the mesh, fastest-varying axis first; each of dp, tp, cp, ep, pp exactly "
            "once." },
        { "parallelism.gradient_bucket_mb", "0", false,
            "Data-parallel gradient bucket size in MiB (reduced once per iteration, after the last micro-batch); "
            "0 = one bucket per layer." },
        { "cluster.gpu", "h100-sxm", false,
            "GPU preset for the step-time estimate: `a100-80gb`, `b200`, `h100-sxm` or `h200` (peak FLOP/s per "
            "dtype, HBM size and bandwidth)." },
        { "cluster.gpus_per_node", "8", false,
            "GPUs per node, filled by consecutive ranks; a group within one node uses the intra-node bandwidth." },
        { "cluster.intra_node_bandwidth_gbps", "900", false, "Bandwidth per GPU within a node, GB/s (NVLink)." },
        { "cluster.inter_node_bandwidth_gbps", "400", false, "Bandwidth per GPU across nodes, GB/s." },
    };
    return keys;
}

std::vector<std::string> configKeyPaths()
{
    std::vector<std::string> out;
    out.reserve(configKeys().size());
    for (const ConfigKeyInfo& key : configKeys())
        out.emplace_back(key.path);
    return out;
}

} // namespace stagecraft
