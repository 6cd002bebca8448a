// SPDX-License-Identifier: MIT
#pragma once

#include "config/config.h"

#include <cstdint>
#include <string>
#include <vector>

namespace stagecraft {

/// One request of a serving workload: when it arrives (seconds from the start), its prompt and how many tokens it
/// generates (the first by its prefill, the rest by decode steps). Plain value type.
struct ServingRequest
{
    double arrivalS = 0;
    int64_t promptTokens = 0;
    int64_t outputTokens = 0;

    friend bool operator==(const ServingRequest&, const ServingRequest&) = default;
};

/// The requests of `config`'s inference section for every arrival but `trace` (readRequestTrace() reads those):
/// `batch`: inference.batch requests of promptTokens(config) + output_tokens at time 0; `poisson`: inference.requests
/// requests with exponential gaps of mean 1/request_rate; `gamma`: gamma gaps of that mean and coefficient of
/// variation arrival_cv (shape 1/cv^2). Generated lengths follow length_distribution around prompt_tokens and
/// output_tokens (each at least 1; outputs at least 2 when the plan decodes). Deterministic for a seed (a
/// SplitMix64 generator and inverse-CDF / Marsaglia-Tsang sampling written here, identical on every platform).
/// Returns false and sets `error` for a trace arrival. Pure.
bool generateRequests(const Config& config, std::vector<ServingRequest>& out, std::string& error);

} // namespace stagecraft
