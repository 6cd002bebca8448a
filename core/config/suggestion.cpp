// SPDX-License-Identifier: MIT
#include "config/suggestion.h"

#include <algorithm>
#include <numeric>

namespace stagecraft {

size_t editDistance(std::string_view a, std::string_view b)
{
    // Optimal string alignment: three rows of the dynamic-programming table (the one before last for swaps).
    std::vector<size_t> before(b.size() + 1), previous(b.size() + 1), current(b.size() + 1);
    std::iota(previous.begin(), previous.end(), size_t(0));
    for (size_t i = 1; i <= a.size(); ++i) {
        current[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            const size_t substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
            current[j] = std::min({ previous[j] + 1, current[j - 1] + 1, substitution });
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                current[j] = std::min(current[j], before[j - 2] + 1);
        }
        std::swap(before, previous);
        std::swap(previous, current);
    }
    return previous[b.size()];
}

std::string closestMatch(std::string_view word, const std::vector<std::string_view>& candidates)
{
    // A shortened name ("h100" for "h100-sxm") is what people type for the full one, even when another name is
    // one edit away ("h200"): the one candidate that starts with the word wins.
    if (word.size() >= 2) {
        auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; };
        std::string_view prefixed;
        int count = 0;
        for (std::string_view candidate : candidates) {
            if (candidate.size() > word.size()
                && std::equal(word.begin(), word.end(), candidate.begin(),
                    [&](char a, char b) { return lower(a) == lower(b); })) {
                prefixed = candidate;
                ++count;
            }
        }
        if (count == 1)
            return std::string(prefixed);
    }
    const size_t limit = std::max<size_t>(1, std::min<size_t>(3, word.size() / 3));
    std::string_view best;
    size_t bestDistance = limit + 1;
    for (std::string_view candidate : candidates) {
        const size_t distance = editDistance(word, candidate);
        if (distance < bestDistance) {
            bestDistance = distance;
            best = candidate;
        }
    }
    return std::string(best);
}

std::string didYouMean(std::string_view word, const std::vector<std::string_view>& candidates)
{
    const std::string match = closestMatch(word, candidates);
    return match.empty() ? std::string() : "; did you mean '" + match + "'?";
}

} // namespace stagecraft
