// SPDX-License-Identifier: MIT
#pragma once

#include "model/modelgraph.h"
#include "program/program.h"

#include <string>

namespace stagecraft {

/// Canonical text dump of a class program, one node per line in program order:
/// `id kind name flops=... bytes=... [coll=type mask=...] [peer=stage tag=...] deps=[...] ctrl=[...]`.
/// Used for golden files and debugging; stable across runs.
std::string dumpProgram(const ClassProgram& program);

} // namespace stagecraft
