// SPDX-License-Identifier: MIT
#include "config/workloadswitch.h"

#include "config/configvalidator.h"

#include <algorithm>
#include <limits>

namespace stagecraft {

namespace {

    /// The smallest multiple of `step` >= `value` (value when step <= 0 or the multiple overflows).
    int64_t roundUp(int64_t value, int64_t step)
    {
        if (step <= 0 || value <= 0)
            return value;
        const int64_t rest = value % step;
        if (rest == 0)
            return value;
        if (value > std::numeric_limits<int64_t>::max() - (step - rest))
            return value;
        return value + (step - rest);
    }

    void note(std::vector<std::string>* changes, const char* key, const std::string& before, const std::string& after)
    {
        if (changes)
            changes->push_back(std::string(key) + ": " + before + " \u2192 " + after);
    }

} // namespace

Config switchWorkload(const Config& config, Workload workload)
{
    Config c = config;
    if (c.workload == workload)
        return c;
    c.workload = workload;
    const ParallelismConfig& p = c.parallelism;
    if (workload == Workload::Inference) {
        if (c.inference.batch == InferenceConfig {}.batch && c.training.globalBatch > 0)
            c.inference.batch = roundUp(c.training.globalBatch, inferenceBatchStep(c));
        else if (const int64_t step = inferenceBatchStep(c); step > 0 && c.inference.batch % step != 0)
            c.inference.batch = roundUp(c.inference.batch, step);
    } else if (c.training.globalBatch <= 0 && p.dp > 0 && p.pp > 0) {
        const int64_t micro = std::max<int64_t>(1, c.training.microBatch);
        c.training.microBatch = micro;
        const int64_t perStep = micro * p.dp;
        c.training.globalBatch = roundUp(std::max(c.inference.batch, perStep * p.pp), perStep);
    }
    return c;
}

Config servableConfig(const Config& config, std::vector<std::string>* changes)
{
    Config c = config;
    ParallelismConfig& p = c.parallelism;
    if (p.zero != 0) {
        note(changes, "parallelism.zero", std::to_string(p.zero), "0");
        p.zero = 0;
    }
    if (c.training.recompute != Recompute::None) {
        note(changes, "training.recompute", toString(c.training.recompute), "none");
        c.training.recompute = Recompute::None;
    }
    if (p.schedule != Schedule::OneFOneB && p.schedule != Schedule::GPipe) {
        note(changes, "parallelism.schedule", toString(p.schedule), "1f1b");
        p.schedule = Schedule::OneFOneB;
    }
    if (p.virtualStages != 1) {
        note(changes, "parallelism.virtual_stages", std::to_string(p.virtualStages), "1");
        p.virtualStages = 1;
        if (!p.pipelineLayout.empty()) {
            note(changes, "parallelism.pipeline_layout", p.pipelineLayout, "(an even split)");
            p.pipelineLayout.clear();
        }
    }
    if (p.microBatchGroupSize != 0) {
        note(changes, "parallelism.microbatch_group_size", std::to_string(p.microBatchGroupSize), "0");
        p.microBatchGroupSize = 0;
    }
    if (p.cp > 1 && runsDecode(c.inference)) {
        note(changes, "parallelism.cp", std::to_string(p.cp), "1");
        note(changes, "parallelism.dp", std::to_string(p.dp), std::to_string(p.dp * p.cp));
        p.dp *= p.cp;
        p.cp = 1;
    }
    if (const int64_t step = inferenceBatchStep(c); step > 0 && c.inference.batch % step != 0) {
        const int64_t batch = roundUp(std::max<int64_t>(1, c.inference.batch), step);
        note(changes, "inference.batch", std::to_string(c.inference.batch), std::to_string(batch));
        c.inference.batch = batch;
    }
    return c;
}

} // namespace stagecraft
