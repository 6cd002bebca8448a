// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace stagecraft {

/// Edit distance between two byte strings: insertions, deletions, substitutions and swaps of two adjacent
/// characters each cost 1 (optimal string alignment, so "gtp" is 1 away from "gpt").
size_t editDistance(std::string_view a, std::string_view b);

/// The only candidate that starts with `word` (ignoring ASCII case, |word| >= 2: "h100" -> "h100-sxm", not the
/// one edit away "h200"); else the candidate closest to `word` by edit distance when it is close enough to be a
/// likely typo (distance <= max(1, min(3, |word| / 3)), ties go to the earlier candidate); else "".
std::string closestMatch(std::string_view word, const std::vector<std::string_view>& candidates);

/// "; did you mean 'x'?" for the closest match, or "" when there is none. Meant to be appended to a message.
std::string didYouMean(std::string_view word, const std::vector<std::string_view>& candidates);

} // namespace stagecraft
