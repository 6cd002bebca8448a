// SPDX-License-Identifier: MIT
#include "serving/iterationtimemodel.h"

#include "config/configvalidator.h"
#include "estimate/servingestimate.h"
#include "synthesis/synthesis.h"

#include <algorithm>
#include <cmath>

namespace stagecraft {

namespace {

    /// Piecewise-linear interpolation of ys over the increasing xs at x, extrapolated from the end segments.
    double interpolate(const std::vector<int64_t>& xs, const std::vector<double>& ys, double x)
    {
        if (xs.empty())
            return 0;
        if (xs.size() == 1)
            return ys[0] * (xs[0] > 0 ? x / double(xs[0]) : 1);
        size_t hi = static_cast<size_t>(
            std::upper_bound(xs.begin(), xs.end(), x, [](double v, int64_t e) { return v < double(e); }) - xs.begin());
        hi = std::clamp<size_t>(hi, 1, xs.size() - 1);
        const size_t lo = hi - 1;
        const double x0 = double(xs[lo]), x1 = double(xs[hi]);
        return ys[lo] + (ys[hi] - ys[lo]) * (x - x0) / (x1 - x0);
    }

} // namespace

IterationTimeModel::IterationTimeModel(IterationTimeTables tables)
    : m_tables(std::move(tables))
{
}

double IterationTimeModel::decodeS(double sequences, double contextTokens) const
{
    const IterationTimeTables& t = m_tables;
    if (sequences <= 0 || t.decodeBatches.empty())
        return 0;
    const double context = contextTokens / sequences;
    const double span = double(t.contextHigh - t.contextLow);
    auto at = [&](size_t i) {
        const double slope = span > 0 ? (t.decodeAtHighS[i] - t.decodeAtLowS[i]) / span : 0;
        return t.decodeAtLowS[i] + slope * (context - double(t.contextLow));
    };
    const std::vector<int64_t>& b = t.decodeBatches;
    // Below the smallest probed batch a step still reads every weight: its time.
    if (b.size() == 1 || sequences <= double(b.front()))
        return at(0);
    size_t hi = static_cast<size_t>(
        std::upper_bound(b.begin(), b.end(), sequences, [](double v, int64_t e) { return v < double(e); }) - b.begin());
    hi = std::clamp<size_t>(hi, 1, b.size() - 1);
    const size_t lo = hi - 1;
    const double y0 = at(lo), y1 = at(hi);
    return y0 + (y1 - y0) * (sequences - double(b[lo])) / double(b[hi] - b[lo]);
}

double IterationTimeModel::perPromptS(double tokens) const
{
    const IterationTimeTables& t = m_tables;
    if (tokens <= 0)
        return 0;
    const double total = interpolate(t.prefillLengths, t.prefillS, tokens);
    return std::max(0.0, (total - t.prefillFixedS) / double(std::max<int64_t>(1, t.prefillSequences)));
}

double IterationTimeModel::prefillS(const std::vector<PrefillChunk>& chunks) const
{
    const IterationTimeTables& t = m_tables;
    if (chunks.empty())
        return 0;
    if (t.staticSequences > 0 && static_cast<int64_t>(chunks.size()) == t.staticSequences) {
        bool same = true;
        for (const PrefillChunk& c : chunks)
            same = same && c.offset == 0 && c.tokens == t.staticPrompt;
        if (same)
            return t.staticPrefillS;
    }
    double sum = t.prefillFixedS;
    for (const PrefillChunk& c : chunks)
        sum += perPromptS(double(c.offset + c.tokens)) - perPromptS(double(c.offset));
    return sum;
}

double IterationTimeModel::iterationS(const IterationShape& shape) const
{
    const double prefill = prefillS(shape.chunks);
    double decode = 0;
    if (shape.decodeSequences > 0) {
        const double b = double(shape.decodeSequences);
        const int64_t k = shape.speculativeTokens;
        decode = decodeS(b, shape.decodeContextTokens);
        if (k > 0) {
            // (k + 1) b tokens through the weights, each sequence's cache read once: the context part of the extra
            // k b "sequences" is taken out again (their mean context is that of the b).
            const double wide = decodeS(b * double(k + 1), shape.decodeContextTokens * double(k + 1));
            // The line in the context, extrapolated to no context: what the step costs beside its cache reads.
            const double contextPart = wide - decodeS(b * double(k + 1), 0);
            decode = wide - contextPart * double(k) / double(k + 1) + double(k) * m_tables.draftCost * decode;
        }
    }
    if (shape.chunks.empty())
        return decode;
    if (shape.decodeSequences == 0)
        return prefill;
    return prefill + decode - std::min(m_tables.prefillFixedS, decode);
}

bool buildIterationTimes(const Config& replica, int64_t longestPrompt, const GpuSpec& gpu,
    const EstimateOptions& options, IterationTimeTables& out, std::string& error, ProgressSink* progress)
{
    IterationTimeTables t;
    const InferenceConfig& in = replica.inference;
    const int64_t prompt = promptTokens(replica);
    const int64_t maxSequences = std::max<int64_t>(1, in.maxSequences);
    // Decode grid: multiples of the batch step the validator accepts.
    Config decodeConfig = replica;
    decodeConfig.inference.phases = InferencePhases::Both;
    const int64_t step = std::max<int64_t>(1, inferenceBatchStep(decodeConfig));
    std::vector<int64_t> batches;
    for (int64_t b = step; b < maxSequences * 2 && b <= (int64_t(1) << 20); b *= 2) {
        batches.push_back(b);
        if (b >= maxSequences)
            break;
    }
    if (in.batch > 0 && in.batch % step == 0)
        batches.push_back(in.batch);
    std::sort(batches.begin(), batches.end());
    batches.erase(std::unique(batches.begin(), batches.end()), batches.end());
    t.contextLow = prompt + 1;
    t.contextHigh = in.outputTokens > 2 ? prompt + in.outputTokens - 1 : t.contextLow + 64;
    // Prefill grid: `pstep` prompts of 16, 32, ... tokens.
    Config prefillConfig = replica;
    prefillConfig.inference.phases = InferencePhases::Prefill;
    prefillConfig.inference.outputTokens = 1;
    prefillConfig.inference.decodeSteps = 0;
    const int64_t pstep = std::max<int64_t>(1, inferenceBatchStep(prefillConfig));
    t.prefillSequences = pstep;
    const int64_t longest = std::max({ longestPrompt, in.maxBatchedTokens / pstep, prompt, int64_t(16) });
    std::vector<int64_t> lengths;
    for (int64_t n = 16;; n *= 2) {
        lengths.push_back(n);
        if (n >= longest || n > (int64_t(1) << 24))
            break;
    }
    const bool staticBatch = runsPrefill(in) && in.batch > 0 && in.batch != pstep;
    const int64_t total = int64_t(batches.size()) * 2 + int64_t(lengths.size()) + (staticBatch ? 1 : 0);
    int64_t doneProbes = 0;
    auto tick = [&](const char* what) {
        if (progress) {
            progress->report(double(doneProbes) / double(std::max<int64_t>(1, total)), what);
            if (progress->cancelled()) {
                error = "cancelled";
                return false;
            }
        }
        ++doneProbes;
        return true;
    };
    std::shared_ptr<const ModelGraph> graph;
    SynthesisOptions synthesisOptions;
    synthesisOptions.memorySeries = false;
    synthesisOptions.threads = 1;
    int64_t activationPeak = 0;
    auto prefillTime = [&](int64_t sequences, int64_t length, double& seconds) {
        Config c = prefillConfig;
        c.inference.batch = sequences;
        c.inference.promptTokens = length;
        const SynthesisOutcome outcome = synthesize(c, nullptr, nullptr, synthesisOptions);
        if (!outcome.result) {
            error = "the prefill probe of " + std::to_string(sequences) + " prompts of " + std::to_string(length)
                + " tokens failed";
            for (const Diagnostic& d : outcome.diagnostics)
                if (d.severity == Severity::Error) {
                    error += ": " + (d.keyPath.empty() ? d.message : d.keyPath + ": " + d.message);
                    break;
                }
            return false;
        }
        ServingEstimate e;
        if (!estimateServing(*outcome.result, gpu, options, e, error))
            return false;
        seconds = e.ttftS;
        activationPeak = 0;
        for (const ClassSummary& cs : outcome.result->summaries)
            activationPeak = std::max(activationPeak, cs.activationPeakBytes);
        return true;
    };
    if (runsDecode(in)) {
        for (int64_t b : batches) {
            Config c = decodeConfig;
            c.inference.batch = b;
            double low = 0, high = 0;
            if (!tick("probing decode steps") || !probeDecodeStepTime(c, t.contextLow, gpu, options, graph, low, error)
                || !tick("probing decode steps")
                || !probeDecodeStepTime(c, t.contextHigh, gpu, options, graph, high, error))
                return false;
            t.decodeBatches.push_back(b);
            t.decodeAtLowS.push_back(low);
            t.decodeAtHighS.push_back(high);
        }
    }
    if (runsPrefill(in) || runsDecode(in)) {
        for (int64_t n : lengths) {
            double seconds = 0;
            if (!tick("probing prefills") || !prefillTime(pstep, n, seconds))
                return false;
            t.prefillLengths.push_back(n);
            t.prefillS.push_back(seconds);
            t.prefillActivationPeakBytes.push_back(activationPeak);
        }
        // The intercept through the two shortest prompts, within [0, the shortest's time].
        if (t.prefillS.size() >= 2) {
            const double x0 = double(t.prefillLengths[0]), x1 = double(t.prefillLengths[1]);
            const double y0 = t.prefillS[0], y1 = t.prefillS[1];
            t.prefillFixedS = std::clamp(y0 - (y1 - y0) * x0 / (x1 - x0), 0.0, y0);
        }
        if (runsPrefill(in) && in.batch > 0) {
            t.staticSequences = in.batch;
            t.staticPrompt = prompt;
            if (in.batch == pstep && !runsDecode(in)
                && std::find(lengths.begin(), lengths.end(), prompt) != lengths.end()) {
                t.staticPrefillS = t.prefillS[static_cast<size_t>(
                    std::find(lengths.begin(), lengths.end(), prompt) - lengths.begin())];
            } else {
                // The batch's own programs, as estimateServing() times them (its prefill may share the pipeline
                // with the first decode steps).
                if (!tick("probing the batch's prefill"))
                    return false;
                Config own = replica;
                const SynthesisOutcome outcome = synthesize(own, nullptr, nullptr, synthesisOptions);
                if (!outcome.result) {
                    error = "the synthesis of one replica's batch failed";
                    for (const Diagnostic& d : outcome.diagnostics)
                        if (d.severity == Severity::Error) {
                            error += ": " + (d.keyPath.empty() ? d.message : d.keyPath + ": " + d.message);
                            break;
                        }
                    return false;
                }
                if (!timeToFirstTokenS(*outcome.result, gpu, options, t.staticPrefillS, error))
                    return false;
            }
        }
    }
    t.draftCost = in.draftCost > 0 ? in.draftCost : 1.0 / double(std::max<int64_t>(1, replica.model.layers));
    t.probes = doneProbes;
    out = std::move(t);
    return true;
}

} // namespace stagecraft
