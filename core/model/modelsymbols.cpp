// SPDX-License-Identifier: MIT
#include "model/modelsymbols.h"

#include <utility>

namespace stagecraft {

const ModelSymbols& ModelSymbols::get()
{
    static const ModelSymbols s {
        internSymbol("Batch"),
        internSymbol("Seq"),
        internSymbol("Dmodel"),
        internSymbol("Dff"),
        internSymbol("Head"),
        internSymbol("KVHead"),
        internSymbol("Dvocal"),
        internSymbol("Experts"),
        internSymbol("KExperts"),
        internSymbol("DffExpert"),
        internSymbol("DffShared"),
        internSymbol("Dhead"),
        internSymbol("Dvhead"),
        internSymbol("Dqlora"),
        internSymbol("Dkvlora"),
        internSymbol("Drope"),
        internSymbol("dp"),
        internSymbol("tp"),
        internSymbol("cp"),
        internSymbol("ep"),
        internSymbol("edp"),
    };
    return s;
}

const char* configKeyOf(SymbolId symbol)
{
    const ModelSymbols& s = ModelSymbols::get();
    const std::pair<SymbolId, const char*> keys[] = { { s.batch, "training.micro_batch" }, { s.seq, "model.seq_len" },
        { s.dmodel, "model.hidden" }, { s.dff, "model.ffn_hidden" }, { s.head, "model.heads" },
        { s.kvhead, "model.kv_heads" }, { s.dvocal, "model.vocab" }, { s.experts, "model.experts" },
        { s.kexperts, "model.top_k" }, { s.dffExpert, "model.expert_ffn_hidden" },
        { s.dffShared, "model.shared_expert_ffn_hidden" }, { s.dhead, "model.head_dim" },
        { s.dvhead, "model.v_head_dim" }, { s.dqlora, "model.q_lora_rank" }, { s.dkvlora, "model.kv_lora_rank" },
        { s.drope, "model.qk_rope_head_dim" }, { s.dp, "parallelism.dp" }, { s.tp, "parallelism.tp" },
        { s.cp, "parallelism.cp" }, { s.ep, "parallelism.ep" }, { s.edp, "parallelism.dp" } };
    for (const auto& [id, key] : keys) {
        if (id == symbol)
            return key;
    }
    return "";
}

} // namespace stagecraft
