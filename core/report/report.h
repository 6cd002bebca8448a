// SPDX-License-Identifier: MIT
#pragma once

#include "synthesis/synthesis.h"

#include <nlohmann/json.hpp>
#include <string>

namespace stagecraft {

/// The report JSON (config, world_size, params, flops_per_iteration, classes[...]), described key by key in
/// resources/docs/report-json.md (tests/core/tst_docs.cpp checks the two against each other).
/// Keys are a contract: they may be added, never renamed.
nlohmann::ordered_json reportJson(const SynthesisResult& result);

/// The same content as aligned human-readable text (what `stagecraft report` prints without --json).
std::string reportText(const SynthesisResult& result);

/// One rank's program summary (`stagecraft report --rank R`): its class, coordinates, groups, node counts by
/// kind, FLOPs, bytes by collective type with the group ids and members it uses, and its pipeline peers.
std::string rankReportText(const SynthesisResult& result, RankId rank);

/// rankReportText() as JSON (`stagecraft report --rank R --json`): {"rank", "world_size", "coords": {"tp", "cp",
/// "ep", "edp", "pp"}, "class", "class_ranks", "nodes", "flops", "groups": [{"id", "axes", "members",
/// "collectives": [{"type", "count", "bytes"}]}], "sends": [{"peer", "count", "bytes"}], "recvs": [...]}; with
/// `dump`, also "program": every node of the class program as {"id", "kind", "name", "flops"?, "bytes",
/// "collective"?, "axes"?, "peer_stage"?, "tag"?, "deps", "ctrl_deps"}.
nlohmann::ordered_json rankReportJson(const SynthesisResult& result, RankId rank, bool dump = false);

/// Human-readable byte count with binary units ("1.50 GiB").
std::string formatBytes(double bytes);
/// Human-readable count with SI units ("1.23 PFLOP" style without the unit: "1.23 P").
std::string formatCount(double value);

} // namespace stagecraft
