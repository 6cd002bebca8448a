// SPDX-License-Identifier: MIT
#include "config/config.h"

#include "config/pipelinelayout.h"

#include <algorithm>

namespace stagecraft {

const char* toString(Family f)
{
    switch (f) {
    case Family::Gpt:
        return "gpt";
    case Family::Llama:
        return "llama";
    case Family::Moe:
        return "moe";
    }
    return "?";
}

const char* toString(Precision p)
{
    switch (p) {
    case Precision::Fp32:
        return "fp32";
    case Precision::Fp16:
        return "fp16";
    case Precision::Bf16:
        return "bf16";
    case Precision::Fp8:
        return "fp8";
    }
    return "?";
}

const char* toString(Recompute r)
{
    switch (r) {
    case Recompute::None:
        return "none";
    case Recompute::Selective:
        return "selective";
    case Recompute::Full:
        return "full";
    }
    return "?";
}

const std::vector<RecomputeModuleName>& recomputeModuleTable()
{
    static const std::vector<RecomputeModuleName> table { { "core_attn", recompute_module::kCoreAttn },
        { "layernorm", recompute_module::kLayernorm }, { "mla_up_proj", recompute_module::kMlaUpProj },
        { "mlp", recompute_module::kMlp }, { "moe", recompute_module::kMoe }, { "moe_act", recompute_module::kMoeAct },
        { "shared_experts", recompute_module::kSharedExperts } };
    return table;
}

std::vector<std::string> recomputeModuleNames(uint8_t mask)
{
    std::vector<std::string> names;
    for (const RecomputeModuleName& m : recomputeModuleTable())
        if (mask & m.bit)
            names.emplace_back(m.name);
    return names;
}

uint8_t recomputeModuleBit(std::string_view name)
{
    for (const RecomputeModuleName& m : recomputeModuleTable())
        if (m.name == name)
            return m.bit;
    return 0;
}

const char* toString(Schedule s)
{
    switch (s) {
    case Schedule::GPipe:
        return "gpipe";
    case Schedule::OneFOneB:
        return "1f1b";
    case Schedule::Interleaved:
        return "interleaved";
    case Schedule::ZeroBubbleH1:
        return "zb1p";
    case Schedule::DualPipe:
        return "dualpipe";
    case Schedule::DualPipeV:
        return "dualpipev";
    }
    return "?";
}

int32_t interleavedGroupSize(int64_t pp, int64_t microBatches, int64_t requested)
{
    const int64_t m = std::max<int64_t>(1, microBatches);
    pp = std::max<int64_t>(1, pp);
    const int64_t n = requested > 0 ? requested : pp;
    return static_cast<int32_t>(std::min<int64_t>({ n, m, INT32_MAX }));
}

int64_t pipelineVirtualStages(const ParallelismConfig& p)
{
    if (!p.pipelineLayout.empty() && p.pp > 0) {
        LayoutError error;
        if (const std::optional<PipelineLayout> layout = PipelineLayout::parse(p.pipelineLayout, error);
            layout && layout->chunkCount() % p.pp == 0 && layout->chunkCount() >= p.pp)
            return layout->chunkCount() / p.pp;
    }
    switch (p.schedule) {
    case Schedule::Interleaved:
        return std::max<int64_t>(1, p.virtualStages);
    case Schedule::DualPipeV:
        return 2;
    default:
        return 1;
    }
}

const char* toString(AttentionKernel a)
{
    switch (a) {
    case AttentionKernel::Flash:
        return "flash";
    case AttentionKernel::Eager:
        return "eager";
    }
    return "?";
}

const char* toString(MeshAxis a)
{
    switch (a) {
    case MeshAxis::Dp:
        return "dp";
    case MeshAxis::Tp:
        return "tp";
    case MeshAxis::Cp:
        return "cp";
    case MeshAxis::Ep:
        return "ep";
    case MeshAxis::Pp:
        return "pp";
    }
    return "?";
}

const char* toString(Workload w)
{
    switch (w) {
    case Workload::Training:
        return "training";
    case Workload::Inference:
        return "inference";
    }
    return "?";
}

const char* toString(InferencePhases p)
{
    switch (p) {
    case InferencePhases::Prefill:
        return "prefill";
    case InferencePhases::Decode:
        return "decode";
    case InferencePhases::Both:
        return "both";
    }
    return "?";
}

const char* toString(KvCacheDtype d)
{
    switch (d) {
    case KvCacheDtype::Bf16:
        return "bf16";
    case KvCacheDtype::Fp8:
        return "fp8";
    }
    return "?";
}

const char* toString(RequestArrival a)
{
    switch (a) {
    case RequestArrival::Batch:
        return "batch";
    case RequestArrival::Poisson:
        return "poisson";
    case RequestArrival::Gamma:
        return "gamma";
    case RequestArrival::Trace:
        return "trace";
    }
    return "?";
}

const char* toString(LengthDistribution d)
{
    switch (d) {
    case LengthDistribution::Fixed:
        return "fixed";
    case LengthDistribution::Uniform:
        return "uniform";
    case LengthDistribution::Lognormal:
        return "lognormal";
    }
    return "?";
}

Config withoutTrainingKeys(const Config& c)
{
    if (!isInference(c))
        return c;
    Config out = c;
    ParallelismConfig& p = out.parallelism;
    p.zero = 0;
    out.training.recompute = Recompute::None;
    if (p.schedule != Schedule::OneFOneB || p.virtualStages > 1) {
        p.schedule = Schedule::OneFOneB;
        p.virtualStages = 1;
        p.pipelineLayout.clear();
    }
    return out;
}

} // namespace stagecraft
