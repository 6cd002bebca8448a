// SPDX-License-Identifier: MIT
#include "serving/servingrequest.h"

#include <algorithm>
#include <cmath>

namespace stagecraft {

namespace {

    /// SplitMix64 (Steele, Lea and Flood 2014): a small generator whose sequence is the same everywhere.
    class Random
    {
    public:
        explicit Random(uint64_t seed)
            : m_state(seed)
        {
        }
        /// Uniform in (0, 1): never 0, so that its logarithm is finite.
        double uniform()
        {
            uint64_t z = (m_state += 0x9e3779b97f4a7c15ULL);
            z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
            z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
            z ^= z >> 31;
            return (static_cast<double>(z >> 11) + 0.5) / 9007199254740992.0;
        }
        /// Standard normal (Box-Muller, one of the pair).
        double normal()
        {
            const double u = uniform(), v = uniform();
            return std::sqrt(-2 * std::log(u)) * std::cos(6.283185307179586 * v);
        }
        /// Gamma(shape, 1) by Marsaglia and Tsang (2000); shape < 1 through the boost U^(1/shape).
        double gamma(double shape)
        {
            if (shape < 1)
                return gamma(shape + 1) * std::pow(uniform(), 1 / shape);
            const double d = shape - 1.0 / 3, c = 1 / std::sqrt(9 * d);
            for (;;) {
                double x = normal(), v = 1 + c * x;
                if (v <= 0)
                    continue;
                v = v * v * v;
                const double u = uniform();
                if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v))
                    return d * v;
            }
        }

    private:
        uint64_t m_state;
    };

    int64_t sampleLength(Random& random, LengthDistribution d, double mean, double cv, int64_t minimum)
    {
        double x = mean;
        if (d == LengthDistribution::Uniform) {
            const double half = std::sqrt(3.0) * cv * mean;
            x = mean - half + 2 * half * random.uniform();
        } else if (d == LengthDistribution::Lognormal && cv > 0) {
            const double s2 = std::log(1 + cv * cv);
            x = std::exp(std::log(mean) - s2 / 2 + std::sqrt(s2) * random.normal());
        }
        // Far beyond any context window; keeps every later product of lengths in range.
        x = std::min(x, 1e7);
        return std::max<int64_t>(minimum, std::llround(x));
    }

} // namespace

bool generateRequests(const Config& config, std::vector<ServingRequest>& out, std::string& error)
{
    const InferenceConfig& in = config.inference;
    out.clear();
    const int64_t prompt = promptTokens(config);
    const int64_t minOutput = runsDecode(in) ? 2 : 1;
    if (in.arrival == RequestArrival::Trace) {
        error = "inference.arrival trace: the requests come from the trace file (readRequestTrace)";
        return false;
    }
    if (in.arrival == RequestArrival::Batch) {
        out.assign(static_cast<size_t>(std::max<int64_t>(0, in.batch)), ServingRequest { 0, prompt, in.outputTokens });
        return true;
    }
    Random random(static_cast<uint64_t>(in.seed));
    const double meanGapS = 1 / std::max(in.requestRate, 1e-12);
    const double shape = in.arrival == RequestArrival::Gamma ? 1 / std::max(in.arrivalCv * in.arrivalCv, 1e-6) : 1;
    out.reserve(static_cast<size_t>(std::max<int64_t>(0, in.requests)));
    double t = 0;
    for (int64_t i = 0; i < in.requests; ++i) {
        // Exponential by inversion; gamma of the same mean (scale meanGap / shape).
        const double gap = in.arrival == RequestArrival::Poisson ? -std::log(random.uniform()) * meanGapS
                                                                 : random.gamma(shape) * meanGapS / shape;
        t += i == 0 ? 0 : gap;
        ServingRequest r;
        r.arrivalS = t;
        r.promptTokens = sampleLength(random, in.lengthDistribution, double(prompt), in.lengthCv, 1);
        r.outputTokens = sampleLength(random, in.lengthDistribution, double(in.outputTokens), in.lengthCv, minOutput);
        out.push_back(r);
    }
    return true;
}

} // namespace stagecraft
