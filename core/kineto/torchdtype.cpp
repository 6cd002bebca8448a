// SPDX-License-Identifier: MIT
#include "kineto/torchdtype.h"

#include <cctype>

namespace stagecraft {

namespace {

    std::string lower(std::string_view s)
    {
        std::string out(s);
        for (char& c : out)
            c = char(std::tolower(static_cast<unsigned char>(c)));
        return out;
    }

} // namespace

std::string normalizedDtype(std::string_view torchType)
{
    const std::string t = lower(torchType);
    if (t == "float" || t == "fp32" || t == "float32")
        return "fp32";
    if (t == "c10::bfloat16" || t == "bfloat16" || t == "bf16")
        return "bf16";
    if (t == "c10::half" || t == "half" || t == "fp16" || t == "float16")
        return "fp16";
    if (t == "double" || t == "fp64" || t == "float64")
        return "fp64";
    if (t.find("float8") != std::string::npos || t == "fp8")
        return "fp8";
    if (t == "long int" || t == "long" || t == "int64")
        return "int64";
    if (t == "int" || t == "int32")
        return "int32";
    if (t == "short int" || t == "short" || t == "int16")
        return "int16";
    if (t == "bool" || t == "unsigned char" || t == "signed char" || t == "byte" || t == "char" || t == "uint8"
        || t == "int8")
        return "int8";
    return "";
}

int64_t dtypeBytes(std::string_view dtype)
{
    const std::string d = normalizedDtype(dtype);
    if (d == "fp64" || d == "int64")
        return 8;
    if (d == "fp32" || d == "int32")
        return 4;
    if (d == "bf16" || d == "fp16" || d == "int16")
        return 2;
    if (d == "fp8" || d == "int8")
        return 1;
    return 0;
}

} // namespace stagecraft
