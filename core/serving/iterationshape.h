// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <vector>

namespace stagecraft {

/// Prompt tokens one request computes in an iteration: `tokens` positions from position `offset` (its KV cache
/// holds positions 0..offset-1 already). Plain value type.
struct PrefillChunk
{
    int64_t offset = 0;
    int64_t tokens = 0;
};

/// What one scheduler iteration of a replica computes: prompt chunks and decoding sequences. Plain value type.
struct IterationShape
{
    std::vector<PrefillChunk> chunks;
    int64_t decodeSequences = 0; ///< requests generating (or, with drafts, verifying) tokens
    double decodeContextTokens = 0; ///< sum over them of the positions their attention reads, the new ones included
    int64_t speculativeTokens = 0; ///< draft tokens each decoding sequence verifies beside its last token
};

/// The time of an iteration of one replica, seconds. Implementations are immutable after construction and
/// thread-safe.
class IterationCost
{
public:
    virtual ~IterationCost() = default;
    virtual double iterationS(const IterationShape& shape) const = 0;
};

} // namespace stagecraft
