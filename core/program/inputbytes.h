// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>

namespace stagecraft {

struct DistributionPlan;

/// Local bytes one execution of op `op` of `plan`'s graph reads through its input `k`, in the layout the op expects
/// (plan.inputLayouts). A serving graph's embedding lookup reads the rows of its tokens (as many bytes as it
/// writes), not the whole table; a training graph's counts the table, so that training estimates stay what they
/// were. plan.opBytes[op] is the sum of this over the inputs plus the outputs' tensorBytes. `plan` must have its
/// layouts and tensorBytes set. Pure; thread-safe.
int64_t inputBytes(const DistributionPlan& plan, size_t op, size_t k);

} // namespace stagecraft
