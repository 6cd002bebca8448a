// SPDX-License-Identifier: MIT
#include "serving/servingscheduler.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>

namespace stagecraft {

namespace {

    /// A request inside the replica.
    struct Live
    {
        size_t index = 0; ///< into the input
        int64_t prompt = 0;
        int64_t output = 0;
        int64_t computed = 0; ///< positions whose KV is in the cache (or swapped out with it)
        double generated = 0; ///< tokens sampled; fractional with speculative decoding
        int64_t blocks = 0; ///< blocks held on the GPU
        bool swapped = false; ///< its blocks are in host memory
        int64_t scheduled = 0; ///< tokens computed in the current iteration
    };

    int64_t blocksFor(int64_t tokens, int64_t blockSize)
    {
        return (tokens + blockSize - 1) / blockSize;
    }

    /// Tokens whose KV a request must have computed before it samples again: its prompt and every sampled token.
    int64_t knownTokens(const Live& r)
    {
        return r.prompt + static_cast<int64_t>(std::floor(r.generated + 1e-9));
    }

} // namespace

ReplicaRun simulateReplica(const std::vector<ReplicaRequest>& requests, const SchedulerSettings& settings,
    const IterationCost& cost, bool (*cancelled)(void*), void* context)
{
    ReplicaRun run;
    run.outcomes.resize(requests.size());
    const int64_t bs = std::max<int64_t>(1, settings.blockSize);
    const int64_t capacity = std::max<int64_t>(0, settings.kvBlocks);
    const int64_t budgetLimit = std::max<int64_t>(1, settings.maxBatchedTokens);
    const size_t maxRunning = static_cast<size_t>(std::max<int64_t>(1, settings.maxSequences));
    const int64_t k = std::max<int64_t>(0, settings.speculativeTokens);
    const double a = std::clamp(settings.acceptanceRate, 0.0, 1.0);
    // Expected tokens per decode step with k drafts of acceptance a: the accepted prefix plus the target's own token.
    const double tokensPerStep = k == 0 ? 1.0 : a >= 1 ? double(k + 1) : (1 - std::pow(a, double(k + 1))) / (1 - a);
    std::vector<Live> live(requests.size());
    for (size_t i = 0; i < requests.size(); ++i) {
        const ReplicaRequest& q = requests[i];
        Live& r = live[i];
        r.index = i;
        r.prompt = std::max<int64_t>(1, q.promptTokens);
        r.output = settings.prefillOnly ? 1 : std::max<int64_t>(1, q.outputTokens);
        r.computed = std::clamp<int64_t>(q.computedTokens, 0, r.prompt);
        r.generated = double(std::clamp<int64_t>(q.generatedTokens, 0, r.output));
        RequestOutcome& o = run.outcomes[i];
        o.id = q.id;
        o.readyS = q.readyS;
        o.firstTokenS = q.firstTokenS;
        o.generatedTokens = static_cast<int64_t>(r.generated);
    }
    std::deque<size_t> waiting;
    std::vector<size_t> running;
    std::vector<size_t> scheduledNow;
    IterationShape shape;
    int64_t used = 0;
    size_t next = 0, done = 0;
    int idle = 0;
    double t = 0;

    auto finish = [&](size_t i, double when) {
        Live& r = live[i];
        used -= r.blocks;
        r.blocks = 0;
        RequestOutcome& o = run.outcomes[i];
        o.finishS = when;
        o.generatedTokens = static_cast<int64_t>(std::llround(std::min(r.generated, double(r.output))));
        ++done;
    };

    while (done < requests.size()) {
        if (cancelled && (run.iterations & 4095) == 0 && cancelled(context)) {
            run.cancelled = true;
            break;
        }
        while (next < requests.size() && requests[next].readyS <= t)
            waiting.push_back(next++);
        if (running.empty() && waiting.empty()) {
            t = std::max(t, requests[next].readyS);
            continue;
        }
        double swapS = 0;
        int64_t budget = budgetLimit;
        bool preempted = false;
        scheduledNow.clear();
        // Running requests first, in admission order.
        for (size_t pos = 0; pos < running.size() && budget > 0;) {
            Live& r = live[running[pos]];
            const bool decoding = r.computed + 1 == knownTokens(r) && r.generated >= 1;
            int64_t want = knownTokens(r) - r.computed;
            int64_t lookahead = decoding ? k : 0;
            if (decoding && budget < 1 + k)
                lookahead = 0; // the drafts do not fit the budget: a plain decode step
            int64_t num = std::min(want, budget);
            if (num <= 0) {
                ++pos;
                continue;
            }
            const int64_t needed = blocksFor(r.computed + num + lookahead, bs) - r.blocks;
            bool fits = needed <= capacity - used;
            while (!fits) {
                const size_t victim = running.back();
                running.pop_back();
                Live& v = live[victim];
                if (v.scheduled > 0) { // already scheduled this iteration: give its tokens back
                    budget += v.scheduled;
                    v.scheduled = 0;
                    scheduledNow.erase(std::find(scheduledNow.begin(), scheduledNow.end(), victim));
                }
                used -= v.blocks;
                if (settings.preemptBySwap) {
                    v.swapped = true;
                    swapS += double(v.blocks) * settings.swapSPerBlock;
                } else {
                    v.computed = 0;
                }
                v.blocks = 0;
                ++run.outcomes[victim].preemptions;
                ++run.preemptions;
                preempted = true;
                waiting.push_front(victim);
                if (&v == &r)
                    break;
                fits = needed <= capacity - used;
            }
            if (!fits)
                break; // the request preempted itself
            used += std::max<int64_t>(0, needed);
            r.blocks += std::max<int64_t>(0, needed);
            r.scheduled = num + (decoding ? lookahead : 0);
            budget -= r.scheduled;
            scheduledNow.push_back(r.index);
            ++pos;
        }
        // Then waiting requests, unless this iteration preempted.
        if (!preempted) {
            while (!waiting.empty() && budget > 0 && running.size() < maxRunning) {
                Live& r = live[waiting.front()];
                const int64_t want = knownTokens(r) - r.computed;
                if (!settings.chunkedPrefill && want > budget)
                    break;
                const int64_t num = std::min(want, budget);
                const int64_t total = blocksFor(r.computed + num, bs);
                // A request that cannot fit an empty replica never will: reject it rather than wait forever.
                if (blocksFor(r.prompt + r.output - 1 + k, bs) > capacity
                    || (!settings.chunkedPrefill && want > budgetLimit)) {
                    waiting.pop_front();
                    run.outcomes[r.index].rejected = true;
                    ++done;
                    continue;
                }
                if (total > capacity - used)
                    break;
                waiting.pop_front();
                used += total;
                r.blocks = total;
                if (r.swapped) {
                    swapS += double(blocksFor(r.computed, bs)) * settings.swapSPerBlock;
                    r.swapped = false;
                }
                r.scheduled = num;
                budget -= num;
                running.push_back(r.index);
                scheduledNow.push_back(r.index);
            }
        }
        if (scheduledNow.empty()) {
            // Only a preemption (admission resumes next iteration) or rejections leave an iteration empty; a queue
            // that still does not move is rejected at its head rather than looping.
            if (preempted || (!waiting.empty() && ++idle < 3))
                continue;
            if (!waiting.empty()) {
                run.outcomes[waiting.front()].rejected = true;
                waiting.pop_front();
                ++done;
            } else if (next < requests.size()) {
                t = std::max(t, requests[next].readyS);
            }
            idle = 0;
            continue;
        }
        idle = 0;
        shape.chunks.clear();
        shape.decodeSequences = 0;
        shape.decodeContextTokens = 0;
        shape.speculativeTokens = k;
        int64_t prefillTokens = 0;
        for (size_t i : scheduledNow) {
            const Live& r = live[i];
            const bool decoding = r.computed + 1 == knownTokens(r) && r.generated >= 1;
            if (decoding) {
                ++shape.decodeSequences;
                shape.decodeContextTokens += double(r.computed + r.scheduled);
            } else {
                shape.chunks.push_back({ r.computed, r.scheduled });
                prefillTokens += r.scheduled;
            }
        }
        const double dt = cost.iterationS(shape) + swapS;
        const double end = t + dt;
        ServingSample sample;
        sample.startS = t;
        sample.durationS = dt;
        sample.running = static_cast<int32_t>(running.size());
        sample.waiting = static_cast<int32_t>(waiting.size());
        sample.kvBlocksUsed = used;
        sample.preemptions = run.preemptions;
        sample.prefillTokens = prefillTokens;
        sample.decodeSequences = shape.decodeSequences;
        sample.prefillChunks = static_cast<int32_t>(shape.chunks.size());
        sample.decodeContextTokens = shape.decodeContextTokens;
        run.samples.push_back(sample);
        run.peakKvBlocks = std::max(run.peakKvBlocks, used);
        ++run.iterations;
        // Progress: tokens computed, samples drawn, finished requests leave.
        bool anyFinished = false;
        for (size_t i : scheduledNow) {
            Live& r = live[i];
            const bool decoding = r.computed + 1 == knownTokens(r) && r.generated >= 1;
            if (decoding) {
                r.computed += 1;
                r.generated = std::min(double(r.output), r.generated + (r.scheduled > 1 ? tokensPerStep : 1.0));
                r.computed = knownTokens(r) - 1;
            } else {
                r.computed += r.scheduled;
                if (r.computed >= knownTokens(r)) {
                    r.generated = std::min(double(r.output), std::floor(r.generated + 1e-9) + 1);
                    if (run.outcomes[i].firstTokenS < 0)
                        run.outcomes[i].firstTokenS = end;
                    r.computed = knownTokens(r) - 1;
                }
            }
            r.scheduled = 0;
            if (r.generated >= double(r.output) - 1e-9) {
                finish(i, end);
                anyFinished = true;
            }
        }
        if (anyFinished)
            std::erase_if(running, [&](size_t i) { return run.outcomes[i].finishS >= 0; });
        t = end;
    }
    return run;
}

} // namespace stagecraft
