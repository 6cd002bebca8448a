// SPDX-License-Identifier: MIT
// Expr::evaluate on typical shape expressions (1-4 terms, 2-5 factors), plus the exact (128-bit rational) path
// and parsing for scale.

#include "benchfigure.h"
#include "symbolic/expr.h"

#include <benchmark/benchmark.h>
#include <iterator>
#include <vector>

using namespace stagecraft;

namespace {

// Shapes of the kind the model graph produces: sharded activations, attention widths, parameter counts.
const char* const kShapes[] = {
    "Seq/(cp*tp)", // 1 term, 3 factors
    "MicroBatch*Seq/(cp*dp)", // 1 term, 4 factors
    "2*MicroBatch*Seq*Dmodel^2/tp", // 1 term, 4 factors
    "(Head + 2*KVHead)*Dmodel/Head", // 2 terms
    "MicroBatch*Seq*(Head + 2*KVHead)*HeadDim/(cp*tp)", // 2 terms, 5-6 factors
    "4*Dmodel*Dff/tp + 2*Dmodel*Vocab/tp + 2*Dmodel + Layers", // 4 terms
};

Binding typicalBinding()
{
    Binding b;
    b.set("Seq", 8192);
    b.set("cp", 2);
    b.set("tp", 8);
    b.set("dp", 16);
    b.set("MicroBatch", 4);
    b.set("Dmodel", 8192);
    b.set("Head", 64);
    b.set("KVHead", 8);
    b.set("HeadDim", 128);
    b.set("Dff", 28672);
    b.set("Vocab", 128256);
    b.set("Layers", 80);
    return b;
}

void BM_EvaluateTypical(benchmark::State& state)
{
    std::vector<Expr> shapes;
    for (const char* s : kShapes)
        shapes.push_back(expr(s));
    const Binding b = typicalBinding();
    for (const Expr& e : shapes) {
        if (!e.evaluate(b).ok())
            state.SkipWithError("a typical shape does not evaluate to an integer");
    }
    for (auto _ : state) {
        for (const Expr& e : shapes) {
            EvalResult r = e.evaluate(b);
            benchmark::DoNotOptimize(r);
        }
    }
    state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(shapes.size()));
    bench::publishNsPerItem(state, "symbolic_eval_ns", "ns/expr", static_cast<int64_t>(shapes.size()));
}
BENCHMARK(BM_EvaluateTypical);

// One shape per run, for the per-shape breakdown (not published).
void BM_EvaluateShape(benchmark::State& state)
{
    const Expr e = expr(kShapes[state.range(0)]);
    const Binding b = typicalBinding();
    for (auto _ : state) {
        EvalResult r = e.evaluate(b);
        benchmark::DoNotOptimize(r);
    }
    state.SetLabel(kShapes[state.range(0)]);
}
BENCHMARK(BM_EvaluateShape)->DenseRange(0, static_cast<int>(std::size(kShapes)) - 1);

// Non-integer results and fractions that only sum to an integer take the exact 128-bit rational path.
void BM_EvaluateExactPath(benchmark::State& state)
{
    const std::vector<Expr> shapes { expr("Head/tp"), expr("a/2 + b/2"), expr("x*y - x*z") };
    Binding b;
    b.set("Head", 32);
    b.set("tp", 3);
    b.set("a", 1);
    b.set("b", 1);
    b.set("x", int64_t { 1 } << 62);
    b.set("y", 4);
    b.set("z", 3);
    for (auto _ : state) {
        for (const Expr& e : shapes) {
            EvalResult r = e.evaluate(b);
            benchmark::DoNotOptimize(r);
        }
    }
    bench::publishNsPerItem(state, "symbolic_eval_exact_ns", "ns/expr", static_cast<int64_t>(shapes.size()));
}
BENCHMARK(BM_EvaluateExactPath);

void BM_Parse(benchmark::State& state)
{
    for (auto _ : state) {
        for (const char* s : kShapes) {
            auto e = Expr::parse(s);
            benchmark::DoNotOptimize(e);
        }
    }
    bench::publishNsPerItem(state, "symbolic_parse_ns", "ns/expr", static_cast<int64_t>(std::size(kShapes)));
}
BENCHMARK(BM_Parse);

} // namespace

BENCHMARK_MAIN();
