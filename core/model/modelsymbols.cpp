// SPDX-License-Identifier: MIT
#include "model/modelsymbols.h"

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
        internSymbol("dp"),
        internSymbol("tp"),
        internSymbol("cp"),
        internSymbol("ep"),
        internSymbol("edp"),
    };
    return s;
}

} // namespace stagecraft
