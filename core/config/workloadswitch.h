// SPDX-License-Identifier: MIT
#pragma once

#include "config/config.h"

#include <string>
#include <vector>

namespace stagecraft {

/// `config` switched to `workload`, every other key kept, with a batch the new workload accepts where the config
/// has none that fits: to inference, an `inference.batch` left at its default 1 becomes `training.global_batch`
/// rounded up to a multiple of inferenceBatchStep() (the sequences one iteration trains are the ones served at
/// once); to training, a `training.global_batch` of 0 (a serving config has none) becomes `inference.batch` rounded
/// up to a multiple of micro_batch * dp with at least pp micro-batches. Pure function.
Config switchWorkload(const Config& config, Workload workload);

/// The keys of a serving `config` that only training accepts, put back to what serving accepts, as the GUI's "Make
/// servable" does: zero 0, recompute none, schedule 1f1b with virtual_stages 1 and no micro-batch group (a pipeline
/// layout of several chunks per stage is dropped with them), cp folded into dp when the plan has decode steps (cp 1,
/// dp * cp: the same GPUs) and `inference.batch` rounded up to a multiple of inferenceBatchStep(). `changes` (when
/// given) receives one "key: before → after" line per change. Returns `config` unchanged when it needs none.
Config servableConfig(const Config& config, std::vector<std::string>* changes = nullptr);

} // namespace stagecraft
