// SPDX-License-Identifier: MIT
#pragma once

#include "symbolic/expr.h"

namespace stagecraft {

/// The symbols of the model graph. Model symbols (STAGE spelling) describe one global micro-batch; mesh
/// symbols are the degrees of the spatial mesh axes. `Batch` is the global micro-batch (sequences across all
/// data-parallel replicas), so a local extent such as `Batch/dp` equals training.micro_batch.
/// `edp` is the expert-data-parallel degree dp/ep: a dp split is the product edp*ep.
struct ModelSymbols
{
    SymbolId batch; ///< Batch: global micro-batch, micro_batch * dp sequences
    SymbolId seq; ///< Seq: sequence length
    SymbolId dmodel; ///< Dmodel: hidden size
    SymbolId dff; ///< Dff: dense FFN size
    SymbolId head; ///< Head: attention heads
    SymbolId kvhead; ///< KVHead: key/value heads
    SymbolId dvocal; ///< Dvocal: vocabulary (padded for tensor parallelism when sharded)
    SymbolId experts; ///< Experts: routed experts per MoE layer
    SymbolId kexperts; ///< KExperts: top-k
    SymbolId dffExpert; ///< DffExpert: FFN size of a routed expert
    SymbolId dffShared; ///< DffShared: FFN size of the shared expert
    SymbolId dhead; ///< Dhead: per-head q/k size (model.head_dim, or hidden/heads; MLA: qk_nope_head_dim)
    SymbolId dvhead; ///< Dvhead: per-head v size (Dhead; MLA: v_head_dim)
    SymbolId dqlora; ///< Dqlora: MLA q_lora_rank
    SymbolId dkvlora; ///< Dkvlora: MLA kv_lora_rank
    SymbolId drope; ///< Drope: MLA qk_rope_head_dim
    SymbolId dp, tp, cp, ep, edp;

    /// Interned once; thread-safe.
    static const ModelSymbols& get();
};

/// The config key whose value a model symbol is bound to ("Dmodel" -> "model.hidden", "Batch" ->
/// "training.micro_batch", "edp" -> "parallelism.dp"), or "" for any other symbol. Thread-safe.
const char* configKeyOf(SymbolId symbol);

} // namespace stagecraft
