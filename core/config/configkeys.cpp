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
        { "workload", "training", false,
            "`training` (one iteration: forward, backward, optimizer step) or `inference` (serving: a prefill and "
            "decode steps with a KV cache, forward only; the `inference` section). For inference only "
            "`training.precision` of the training section is used, and the training section may be left out." },
        { "model.preset", "", false,
            "Start from the model keys of this built-in preset (`stagecraft presets`); keys given here override "
            "them. Without it the model keys marked required must be given." },
        { "model.hf_config", "", false,
            "Start from the model keys mapped from a Hugging Face `config.json` (path relative to this file's folder; "
            "see `stagecraft import-hf`), like a preset's: keys given here override them, and problems with them "
            "point into the JSON file. Not together with `model.preset`. Not written back: a saved config holds the "
            "resolved keys." },
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
            "Attention FLOPs of a causal kernel (about half the S x S work); false counts the full S x S. Only "
            "`attention: flash` skips the masked half: eager attention computes every score and masks it afterwards, "
            "so it does the full S x S work either way." },
        { "model.tied_embeddings", "false", false,
            "The output head shares the input embedding matrix (GPT-3 does). With `pp` > 1 the embedding-gradient "
            "all-reduce between the first and last stage is not modelled (a warning says so)." },
        { "model.rope_theta", "0", false, "RoPE base (llama, moe). Informational: it does not change any cost." },
        { "model.attention", "flash", false,
            "Core attention kernel: `flash` (fused, FlashAttention: keeps its output and the fp32 log-sum-exp, no "
            "S x S tensor; the backward recomputes the scores) or `eager` (materialises and keeps the S x S scores "
            "and probabilities)." },
        { "model.head_dim", "0", false,
            "Size of each query/key/value head; 0 = `hidden/heads`. Qwen3 uses 128 with hidden 4096 and 64 heads." },
        { "model.qk_norm", "false", false, "RMSNorm over each query and key head before RoPE (Qwen3)." },
        { "model.qkv_bias", "false", false, "The query, key and value projections have a bias (Qwen2; gpt always)." },
        { "model.q_lora_rank", "0", false,
            "Multi-head latent attention: rank of the compressed query (DeepSeek-V3: 1536); 0 = a full-rank query "
            "projection." },
        { "model.kv_lora_rank", "0", false,
            "Multi-head latent attention (DeepSeek-V2/V3) when > 0: rank of the compressed key/value latent that is "
            "cached and projected up per head (DeepSeek-V3: 512)." },
        { "model.qk_nope_head_dim", "0", false, "MLA: per-head query/key size without RoPE (DeepSeek-V3: 128)." },
        { "model.qk_rope_head_dim", "0", false,
            "MLA: per-head query/key size with RoPE; the rotary key is one head shared by all (DeepSeek-V3: 64)." },
        { "model.v_head_dim", "0", false, "MLA: per-head value size (DeepSeek-V3: 128)." },
        { "model.first_dense_layers", "0", false,
            "moe only: the first this many layers have a dense FFN of `ffn_hidden` instead of experts "
            "(DeepSeek-V3: 3)." },
        { "model.mtp_modules", "0", false,
            "Multi-token prediction modules after the last layer, on the last pipeline stage (DeepSeek-V3: 1): each "
            "a decoder layer like the last with its own norms and 2h x h projection, sharing the embedding and the "
            "output head, and its own cross-entropy. FLOPs and memory include them; their parameters are reported "
            "apart (`mtp_params`), not in `params`." },
        { "model.moe_capacity_factor", "0", false,
            "moe only: the most tokens an expert takes, as a multiple of the mean (Megatron's "
            "`moe_expert_capacity_factor`); tokens over it are dropped, not padded. 0 = dropless." },
        { "model.moe_routing_imbalance", "1", false,
            "moe only: tokens the hottest expert receives divided by the mean, at least 1. All ranks of a pipeline "
            "stage share one program, so it models the hottest rank: each of its experts receives min(imbalance, "
            "`moe_capacity_factor`) times the mean, at most min(`ep`, `experts/top_k`) times (all a rank can get), "
            "and its expert compute, expert activations and all-to-all bytes follow. Parameters and the model FLOPs "
            "of MFU stay uniform. 1 = uniform." },
        { "training.global_batch", "", true,
            "Sequences per iteration over all data-parallel replicas. Divisible by `micro_batch*dp`." },
        { "training.micro_batch", "1", false,
            "Sequences per micro-batch per data-parallel replica. Micro-batches per iteration: "
            "`global_batch / (micro_batch*dp)`." },
        { "training.precision", "bf16", false,
            "`fp32`, `fp16`, `bf16` or `fp8`. 16-bit means mixed precision: 16-bit weights and activations, fp32 "
            "master weights and Adam moments; weight gradients follow `main_grad_dtype`. `fp8` is FP8 training as "
            "Transformer Engine runs it (Megatron-LM's `--fp8-format`): bf16 mixed precision whose linear layers "
            "(attention and MLP projections, experts) run their forward and both backward GEMMs at the GPU's FP8 "
            "peak times its `gemm_fp8_efficiency`; activations that only those GEMMs read are kept in FP8, every "
            "such weight gets FP8 copies (row- and column-wise, 2 bytes per parameter); the embedding, the output "
            "head, the router, norms and attention stay in bf16, the expert dispatch too. Needs a GPU with an FP8 "
            "peak (not the A100); serving with `fp8` is modelled as bf16, with a warning." },
        { "training.optimizer", "adam", false, "`adam`, the only optimizer modelled (fp32 moments m and v)." },
        { "training.recompute", "none", false,
            "Activation recompute: `none`, `selective` (the modules of `recompute_modules`; by default the core "
            "attention: scores, softmax, dropout, context) or `full` (each decoder layer's forward is re-run before "
            "its backward)." },
        { "training.recompute_modules", "[core_attn]", false,
            "What `recompute: selective` re-runs, by Megatron-LM's `--recompute-modules` names: `core_attn`, "
            "`layernorm` (a layer's input and pre-MLP norms), `mla_up_proj` (MLA's q and kv up-projections and their "
            "RoPE), `mlp` (a dense layer's MLP), `moe` (a whole MoE layer, its all-to-all included), `moe_act` (the "
            "experts' activation function) and `shared_experts`. `layernorm`, `mla_up_proj` and `moe_act` keep no "
            "output either (Megatron's output-discarding checkpoints); the others keep their output and re-run "
            "their inside." },
        { "training.main_grad_dtype", "fp32", false,
            "Dtype of the gradient buffer the backward pass accumulates into (Megatron's `main_grad`): `fp32` or the "
            "training precision. 16-bit training with fp32 main gradients keeps 2 + 4 + 12 = 18 bytes per "
            "parameter, 6 + 12/dp with `zero: 1` (the gradient buffer is not sharded) and 2 + 16/dp with "
            "`zero: 2`. Megatron's `--grad-reduce-in-bf16` is `bf16` here and in `grad_reduce_dtype`; its fp16 "
            "default (without `--accumulate-allreduce-grads-in-fp32`) is `fp16` in both." },
        { "training.grad_reduce_dtype", "fp32", false,
            "Dtype of the data-parallel gradient all-reduce / reduce-scatter (and of `gradient_bucket_mb`): `fp32` "
            "(Megatron's default under bf16) or the training precision; not wider than `main_grad_dtype`." },
        { "training.gradient_accumulation_fusion", "true", false,
            "Estimate only: the weight-gradient GEMM accumulates into the main gradient itself (Megatron-LM "
            "`--gradient-accumulation-fusion`, its default since 2022). Off, as in Megatron-LM of 2021, every "
            "micro-batch's weight gradient is added to it by a separate memory-bound kernel." },
        { "inference.batch", "1", false,
            "inference: concurrent sequences over all data-parallel replicas; divisible by `dp*pp` (each replica's "
            "sequences are split into `pp` pipeline micro-batches, one per stage in flight)." },
        { "inference.prompt_tokens", "0", false,
            "inference: tokens of each prompt; 0 = `model.seq_len`. Divisible by `cp` (and `cp*tp` with "
            "`sequence_parallel`)." },
        { "inference.output_tokens", "128", false,
            "inference: tokens generated per sequence; the prefill computes the first, each decode step one more." },
        { "inference.phases", "both", false,
            "inference: `prefill` (the prompt with causal attention, writing the KV cache; logits of the last "
            "position only), `decode` (decode steps against a prompt cache already resident) or `both`. `cp` > 1 "
            "only with `prefill`." },
        { "inference.decode_steps", "0", false,
            "inference: decode steps written to the programs, the first ones of the generation (step k attends over "
            "`prompt_tokens + k` tokens), at most `output_tokens - 1`; 0 = min(4, `output_tokens - 1`)." },
        { "inference.kv_cache_dtype", "bf16", false,
            "inference: element type of the KV cache, `bf16` or `fp8` (1 byte)." },
        { "inference.block_size", "16", false,
            "inference: paged KV-cache block in tokens (vLLM's default 16); each sequence's cache is allocated in "
            "whole blocks." },
        { "inference.arrival", "batch", false,
            "inference, serving over time: `batch` (`batch` requests at time 0: one static batch), `poisson` or "
            "`gamma` (`requests` requests at `request_rate`) or `trace` (the CSV file `trace`)." },
        { "inference.request_rate", "1", false, "inference: requests per second over all replicas (poisson, gamma)." },
        { "inference.arrival_cv", "1", false,
            "inference: coefficient of variation of the gamma arrival gaps (1 is Poisson; larger is burstier)." },
        { "inference.requests", "1000", false,
            "inference: requests generated (poisson, gamma); with a trace, its first this many (0 = all)." },
        { "inference.length_distribution", "fixed", false,
            "inference: generated prompt and output lengths around `prompt_tokens` and `output_tokens`: `fixed`, "
            "`uniform` or `lognormal` with coefficient of variation `length_cv`." },
        { "inference.length_cv", "0.5", false, "inference: coefficient of variation of generated lengths." },
        { "inference.trace", "\"\"", false,
            "inference: CSV request trace (arrival seconds or date-time, prompt tokens, output tokens; the Azure LLM "
            "inference traces' columns are recognized), relative to the config's folder." },
        { "inference.seed", "1", false, "inference: seed of the generated arrivals and lengths." },
        { "inference.max_batched_tokens", "8192", false,
            "inference: token budget of one scheduler iteration per replica (vLLM `max_num_batched_tokens`)." },
        { "inference.max_sequences", "256", false,
            "inference: running requests per replica at most (vLLM `max_num_seqs`)." },
        { "inference.chunked_prefill", "true", false,
            "inference: prompts are split over iterations within the token budget, beside the decodes "
            "(Sarathi-Serve); false: a prompt waits for a budget that holds it whole." },
        { "inference.preemption", "recompute", false,
            "inference: when the KV cache is full, the newest running request is preempted and later `recompute`d "
            "from its prompt and outputs, or `swap`ped to host memory and back over PCIe." },
        { "inference.kv_memory_fraction", "0.9", false,
            "inference: fraction of HBM for weights, activations and KV blocks (vLLM `gpu_memory_utilization`)." },
        { "inference.prefill_replicas", "0", false,
            "inference: > 0 disaggregates prefill and decode: this many prefill replicas (`prefill_tp` x "
            "`prefill_pp` GPUs each) beside the `dp` decode replicas; the KV cache moves over the cluster links." },
        { "inference.prefill_tp", "0", false, "inference: tensor parallelism of a prefill replica; 0 = `tp`." },
        { "inference.prefill_pp", "0", false, "inference: pipeline stages of a prefill replica; 0 = `pp`." },
        { "inference.speculative_tokens", "0", false,
            "inference: draft tokens proposed per decode step (speculative decoding or MTP); 0 = none." },
        { "inference.acceptance_rate", "0.7", false, "inference: probability that each draft token is accepted." },
        { "inference.draft_cost", "0", false,
            "inference: time of one draft token as a fraction of a decode step; 0 = one MTP module (1/`layers`)." },
        { "inference.weight_dtype", "bf16", false,
            "inference: `bf16` or `fp8` weights (1 byte read per weight, GEMMs at the FP8 peak)." },
        { "inference.slo_ttft_ms", "0", false,
            "inference: goodput counts requests whose time to first token is at most this; 0 = no bound." },
        { "inference.slo_tpot_ms", "0", false,
            "inference: ... and whose time per output token is at most this; 0 = no bound." },
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
        { "parallelism.schedule", "1f1b", false,
            "Pipeline schedule: `gpipe`, `1f1b`, `interleaved` (Megatron-LM's interleaved 1F1B), `zb1p` (zero-bubble "
            "ZB-H1: 1F1B with the backward split into input- and weight-gradient parts, the weight parts moved into "
            "the bubbles), `dualpipe` (DeepSeek-V3's bidirectional DualPipe: every rank holds its stage and the "
            "mirror stage pp-1-s, micro-batches enter from both ends; needs even pp and at least 2*pp "
            "micro-batches) or `dualpipev` (DualPipe cut in half: two chunks per rank in a V, needs at least 2*pp "
            "micro-batches)." },
        { "parallelism.virtual_stages", "1", false,
            "Model chunks per pipeline rank; > 1 only with `interleaved`. Every stage's layers divide evenly over "
            "its chunks: `layers` divisible by `pp*virtual_stages` unless the split is uneven (below). With "
            "`pipeline_layout` the layout's chunks decide (1 here, or the same number)." },
        { "parallelism.rank_order", "[tp, cp, ep, dp, pp]", false,
            "How ranks are numbered on the mesh, fastest-varying axis first; each of dp, tp, cp, ep, pp exactly "
            "once." },
        { "parallelism.gradient_bucket_mb", "0", false,
            "Data-parallel gradient bucket size in MiB of reduced gradients (at `grad_reduce_dtype`; reduced once "
            "per iteration, after the last micro-batch); 0 = one bucket per layer." },
        { "parallelism.expert_tp", "0", false,
            "Tensor parallelism of the routed experts (Megatron's `expert_tensor_parallel_size`); 0 = `tp`. 1 folds "
            "tp into the experts' data parallelism: every tp rank holds whole experts of its `ep` shard and runs "
            "them on its own tokens (no tp collective around the experts; their gradients reduce over tp too). "
            "Values between 1 and `tp` are rejected: the mesh has no sub-group of tp." },
        { "parallelism.first_stage_layers", "0", false,
            "Decoder layers on the first pipeline stage (Megatron's `--decoder-first-pipeline-num-layers`); 0 = an "
            "even split. The stages not given share the rest evenly; with `virtual_stages` each chunk of the first "
            "stage holds `first_stage_layers/virtual_stages`. Needs pp > 1; not with the two `account_for_` keys." },
        { "parallelism.last_stage_layers", "0", false,
            "Decoder layers on the last pipeline stage (`--decoder-last-pipeline-num-layers`); 0 = an even split. "
            "E.g. Llama 3 405B: 126 layers on pp 16 with 7 on the first and the last stage, 8 on the others." },
        { "parallelism.account_for_embedding_in_pipeline_split", "false", false,
            "The embedding counts as one layer when the layers are split over the stages, so the first chunk gets one "
            "decoder layer fewer (Megatron's flag of the same name); `layers+1` (+2 with the loss) must divide by "
            "`pp*virtual_stages`." },
        { "parallelism.account_for_loss_in_pipeline_split", "false", false,
            "The LM head and loss count as one layer when the layers are split over the stages, so the last chunk "
            "gets one decoder layer fewer." },
        { "parallelism.overlap_grad_reduce", "false", false,
            "The data-parallel gradient reduction runs in buckets while the backward still computes (Megatron-LM "
            "`--overlap-grad-reduce`); off, it starts once the backward has ended, the last stage's final send "
            "included, in the estimate and in the exported traces (ZeRO 0 and 1)." },
        { "parallelism.overlap_param_gather", "false", false,
            "Estimate only: the ZeRO parameter all-gather after the optimizer hides behind the next iteration's "
            "forward (Megatron-LM `--overlap-param-gather`); off, the iteration waits for it." },
        { "parallelism.tp_comm_overlap", "false", false,
            "Estimate only: tensor-parallel collectives are pipelined with the GEMMs they feed, in tp chunks "
            "(Transformer Engine's `--tp-comm-overlap`), so one chunk in tp stays exposed; off, all of it." },
        { "parallelism.overlap_p2p_comm", "false", false,
            "Estimate only: pipeline sends run behind compute (Megatron-LM `--overlap-p2p-communication`); off, "
            "the compute stream waits for each send to finish, as Megatron-LM's blocking send/recv do." },
        { "parallelism.pipeline_layout", "\"\"", false,
            "The layers of every pipeline chunk, in Megatron-Core's `--pipeline-model-parallel-layout` syntax: `E` "
            "embedding, `t` decoder layer, `m` MTP module, `L` loss (final norm, output head, loss), `|` between "
            "chunks (pp*virtual_stages of them, chunk g on stage g%pp), `t*3` and `(tt|)*29` repeat, commas are "
            "ignored. E.g. DeepSeek-V3 on pp 16 with 2 virtual stages: `Et|(tt|)*30mL`. Empty: the even split, or "
            "the split `first_stage_layers`, `last_stage_layers` and the `account_for_` keys give: they are "
            "shorthands for a layout and cannot be combined with one." },
        { "parallelism.microbatch_group_size", "0", false,
            "Interleaved schedule: micro-batches run through one virtual stage before the next (Megatron-LM's "
            "`--microbatch-group-size-per-virtual-pipeline-stage`, the N of the Llama 3 paper's section 3.3.2); "
            "between pp and the micro-batch count, the last group at least pp long. 0 = pp (Megatron-LM's "
            "default)." },
        { "parallelism.overlap_moe_expert_parallel_comm", "false", false,
            "moe: the expert-parallel dispatch and combine of one micro-batch run under another micro-batch's "
            "compute (Megatron-Core's `--overlap-moe-expert-parallel-comm`, off by default; DualPipe's overlapped "
            "forward-backward chunks). The steady state pairs a forward with a backward of another micro-batch "
            "and interleaves them at the all-to-alls, in the programs, the traces and the estimate. Needs "
            "`interleaved` (Megatron-Core requires virtual stages with pp > 1), `dualpipe`, `dualpipev` or pp 1, "
            "and `ep` > 1." },
        { "parallelism.reduce_gradients_per_microbatch", "true", false,
            "ZeRO 2 and 3: true, the gradients are reduce-scattered into the shard after every micro-batch (DeepSpeed, "
            "and FSDP outside a pipeline); false, they accumulate unsharded in `training.main_grad_dtype` over the "
            "micro-batches and each layer is reduce-scattered once, after its last micro-batch's backward, as FSDP "
            "under PyTorch's pipeline schedules does (torch.distributed.pipelining's stage turns gradient sync on only "
            "for a stage's last backward; the Llama 3 paper, sections 3.3.2 and 3.3.4: FSDP with fp32 gradient "
            "accumulation over the micro-batches, reduce-scattered in fp32). No effect with ZeRO 0 and 1, which always "
            "reduce once per iteration." },
        { "cluster.preset", "", false,
            "A whole cluster: `dgx-a100` (Selene), `dgx-h100`, `dgx-h200` or `gb200-nvl72`. It sets every other "
            "cluster key; keys given next to it override its figures. Empty: the keys (their defaults are a "
            "DGX H100)." },
        { "cluster.gpu", "h100-sxm", false,
            "GPU preset for the step-time estimate: `a100-80gb`, `b200`, `h100-sxm` or `h200` (peak FLOP/s per "
            "dtype, HBM size and bandwidth)." },
        { "cluster.gpus_per_node", "8", false,
            "GPUs per node, filled by consecutive ranks; a group within one node uses the intra-node bandwidth." },
        { "cluster.intra_node_bandwidth_gbps", "450", false,
            "Bandwidth per GPU and direction within a node, GB/s (NVLink: a datasheet's bidirectional figure / 2)." },
        { "cluster.inter_node_bandwidth_gbps", "50", false,
            "Bandwidth per GPU and direction across nodes, GB/s (its NIC: 400 Gb/s = 50 GB/s)." },
        { "cluster.intra_node_efficiency", "0.8", false,
            "Fraction of the intra-node bandwidth a large collective reaches (nccl-tests' bus bandwidth / link)." },
        { "cluster.inter_node_efficiency", "0.9", false,
            "Fraction of the inter-node bandwidth a large collective or pipeline transfer reaches." },
        { "cluster.intra_node_latency_us", "5", false,
            "Latency of one communication step within a node, microseconds; a collective among n GPUs takes "
            "ceil(log2 n) steps (NCCL's tree for small messages), a send one." },
        { "cluster.inter_node_latency_us", "10", false,
            "Latency of one communication step across nodes, microseconds." },
        { "cluster.kernel_launch_us", "2", false,
            "Gap between two consecutive kernels on a GPU, microseconds, added to every compute node." },
        { "cluster.gemm_efficiency", "0", false,
            "Fraction of dense peak a large GEMM reaches (before tile, wave and K-depth losses); 0 = the GPU "
            "preset's measured figure." },
        { "cluster.attention_efficiency", "0", false,
            "Fraction of dense peak of the FlashAttention forward (the backward keeps the preset's ratio to it); "
            "0 = the GPU preset's figure." },
        { "cluster.hbm_efficiency", "0", false,
            "Fraction of HBM bandwidth a memory-bound kernel (norms, activations, softmax, optimizer) reaches; 0 = "
            "the GPU preset's figure." },
        { "cluster.kernel_table", "\"\"", false,
            "A kernel table written by `stagecraft calibrate` from PyTorch profiler traces (relative to the config "
            "file's folder): GEMMs, attention, elementwise kernels and collectives of the shapes it holds take its "
            "measured times (interpolated between shapes along one dimension), the rest the model's; the report "
            "counts which source timed each op class. Empty: none." },
        { "cluster.topology", "\"\"", false,
            "The fabric from the GPU up, as a preset: `dgx-h100-superpod` (rail-optimized, 8 rails of 400 Gb/s), "
            "`fat-tree-2to1`, `gb200-nvl72` (72-GPU NVLink racks), `deepseek-v3-h800` or `llama3-24k` (the papers' "
            "clusters). It sets the keys nvlink_domain to planes; keys given next to it override them. With a "
            "topology (nvlink_domain > 0) collectives are priced as NCCL runs them on it (ring, tree, NVLS, PAT) and "
            "the intra/inter-node bandwidth, efficiency and latency keys are not used." },
        { "cluster.nvlink_domain", "0", false,
            "GPUs in one NVLink (NVSwitch) domain: 8 in a DGX, 72 in a GB200 NVL72 rack; ranks fill it in rank "
            "order. 0 = no topology (the two bandwidths above)." },
        { "cluster.nvlink_bandwidth_gbps", "0", false,
            "NVLink bandwidth per GPU and direction as NCCL reaches it, GB/s (H100: 18 links x 20.6 = 370.8)." },
        { "cluster.nvls_efficiency", "0", false,
            "NVLink SHARP efficiency (NCCL's: 0.85 Hopper, 0.74 Blackwell); 0 = no NVLink SHARP." },
        { "cluster.nics_per_node", "8", false, "Network interfaces (NICs) per node." },
        { "cluster.nic_bandwidth_gbps", "50", false, "Bandwidth per NIC and direction, GB/s (400 Gb/s = 50)." },
        { "cluster.nic_efficiency", "0.9", false, "Fraction of a NIC's line rate a large transfer reaches." },
        { "cluster.rails", "8", false,
            "Rails of a rail-optimized fabric (NIC i of every node on rail i % rails, one leaf per rail and "
            "scalable unit); 0 = not rail-optimized (a leaf serves whole nodes)." },
        { "cluster.leaf_radix", "64", false, "Ports of a leaf switch." },
        { "cluster.leaf_oversubscription", "1", false,
            "Ports down per port up at a leaf (2 = 2:1); traffic leaving a leaf gets 1/this of its NIC bandwidth." },
        { "cluster.spine_radix", "64", false, "Leaves per pod and plane (ports of a spine switch)." },
        { "cluster.spine_oversubscription", "1", false,
            "Pod-to-core oversubscription (Llama 3's fabric: 7); traffic between pods gets 1/(leaf x this)." },
        { "cluster.planes", "1", false,
            "Independent network planes (each NIC in one); a pod holds planes times more nodes." },
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
