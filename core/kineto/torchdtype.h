// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace stagecraft {

/// PyTorch's type names as the profiler records them ("float", "c10::BFloat16", "c10::Half", "long int", "bool")
/// or as NCCL's collective arguments do ("Float", "BFloat16") as short names: fp32, bf16, fp16, fp8, fp64, int64,
/// int32, int16, int8; "" when unknown (Scalar, ScalarList, ...).
std::string normalizedDtype(std::string_view torchType);
/// Bytes of one element of a normalized or PyTorch dtype; 0 when unknown.
int64_t dtypeBytes(std::string_view dtype);

} // namespace stagecraft
