// SPDX-License-Identifier: MIT
#pragma once

// Publishing a headline figure from a Google Benchmark. tests/bench/run prints one line
//   <figure> <value> <unit>
// for every benchmark that called publishNsPerItem(), where value = real time per iteration in ns divided by
// itemsPerIteration (median over the repetitions). Benchmarks that publish nothing are run but not printed.

#include <benchmark/benchmark.h>
#include <cstdint>
#include <string>

namespace stagecraft::bench {

/// Marks the running benchmark as the source of figure `figure` (a [a-z0-9_] name such as "symbolic_eval_ns")
/// with unit `unit` (nanoseconds per item, e.g. "ns/expr"). Call inside the benchmark function.
inline void publishNsPerItem(
    benchmark::State& state, const std::string& figure, const std::string& unit, int64_t itemsPerIteration = 1)
{
    state.SetLabel(figure + " " + unit);
    state.counters["items_per_iteration"] = benchmark::Counter(static_cast<double>(itemsPerIteration));
}

} // namespace stagecraft::bench
