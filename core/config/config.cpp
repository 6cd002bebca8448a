// SPDX-License-Identifier: MIT
#include "config/config.h"

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

const char* toString(Schedule s)
{
    switch (s) {
    case Schedule::GPipe:
        return "gpipe";
    case Schedule::OneFOneB:
        return "1f1b";
    case Schedule::Interleaved:
        return "interleaved";
    }
    return "?";
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

} // namespace stagecraft
