// SPDX-License-Identifier: MIT
#include "program/programdump.h"

#include <sstream>

namespace stagecraft {

std::string dumpProgram(const ClassProgram& program)
{
    std::ostringstream out;
    out << "stage " << program.stage << " ranks " << program.rankCount << " example " << program.exampleRank.value
        << " nodes " << program.nodes.size() << "\n";
    for (size_t i = 0; i < program.nodes.size(); ++i) {
        const ProgramNode& n = program.nodes[i];
        out << i << ' ' << toString(n.kind) << ' ' << n.name.str();
        if (n.kind == NodeKind::Compute)
            out << " flops=" << n.flops;
        out << " bytes=" << n.bytes;
        if (n.kind == NodeKind::Collective)
            out << " coll=" << toString(n.collective) << " group=" << axisMaskName(n.mask);
        if (n.kind == NodeKind::Send || n.kind == NodeKind::Recv)
            out << " peer_stage=" << n.peerStage << " tag=" << n.tag;
        out << " deps=[";
        for (size_t k = 0; k < n.dataDeps.size(); ++k)
            out << (k ? "," : "") << n.dataDeps[k].value;
        out << "]";
        if (!n.ctrlDeps.empty()) {
            out << " ctrl=[";
            for (size_t k = 0; k < n.ctrlDeps.size(); ++k)
                out << (k ? "," : "") << n.ctrlDeps[k].value;
            out << "]";
        }
        out << "\n";
    }
    return out.str();
}

} // namespace stagecraft
