// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace stagecraft {

enum class Family
{
    Gpt,
    Llama,
    Moe
};
enum class Precision
{
    Fp32,
    Fp16,
    Bf16
};
enum class Recompute
{
    None,
    Selective,
    Full
};
enum class Schedule
{
    GPipe,
    OneFOneB,
    Interleaved
};

/// Mesh axes. The four spatial axes split tensors; pp is temporal (pipeline stages) and never appears in shapes.
enum class MeshAxis : uint8_t
{
    Dp,
    Tp,
    Cp,
    Ep,
    Pp
};
inline constexpr int kMeshAxisCount = 5;

/// Model architecture (YAML `model:`). Sizes are counts (layers, heads) or element extents (hidden, vocab).
struct ModelConfig
{
    std::string preset; ///< name of the preset this was based on, empty when none
    Family family = Family::Llama;
    int64_t layers = 0;
    int64_t hidden = 0;
    int64_t ffnHidden = 0;
    int64_t heads = 0;
    int64_t kvHeads = 0; ///< gpt: must equal heads (MHA)
    int64_t vocab = 0;
    int64_t seqLen = 0;
    int64_t experts = 0; ///< moe only: routed experts per layer
    int64_t topK = 0; ///< moe only
    int64_t expertFfnHidden = 0; ///< moe only: FFN size of each routed expert
    int64_t sharedExpertFfnHidden = 0; ///< moe only: FFN size of the always-on shared expert, 0 = none
    bool causalMask = true; ///< attention FLOPs of a causal kernel (half the S x S work); false = full S x S
    bool tiedEmbeddings = false; ///< output head shares the input embedding matrix (GPT-3 does)
    double ropeTheta = 0; ///< informational (llama/moe); does not change costs

    friend bool operator==(const ModelConfig&, const ModelConfig&) = default;
};

/// Training setup (YAML `training:`).
struct TrainingConfig
{
    int64_t globalBatch = 0; ///< sequences per iteration, over all data-parallel replicas
    int64_t microBatch = 1; ///< sequences per micro-batch per data-parallel replica
    Precision precision = Precision::Bf16; ///< 16-bit means mixed precision with fp32 master weights
    std::string optimizer = "adam";
    Recompute recompute = Recompute::None;

    friend bool operator==(const TrainingConfig&, const TrainingConfig&) = default;
};

/// Parallelism plan (YAML `parallelism:`). World size = dp * tp * pp * cp; ep divides dp (Megatron style).
struct ParallelismConfig
{
    int64_t dp = 1;
    int64_t tp = 1;
    int64_t pp = 1;
    int64_t cp = 1;
    int64_t ep = 1;
    bool sequenceParallel = false;
    int zero = 0; ///< 0..3; 3 = FSDP
    Schedule schedule = Schedule::OneFOneB;
    int64_t virtualStages = 1; ///< > 1 only with the interleaved schedule
    std::vector<MeshAxis> rankOrder { MeshAxis::Tp, MeshAxis::Cp, MeshAxis::Ep, MeshAxis::Dp, MeshAxis::Pp };
    int64_t gradientBucketBytes = 0; ///< data-parallel gradient bucket size; 0 = one bucket per layer

    int64_t worldSize() const
    {
        return dp * tp * pp * cp;
    }

    friend bool operator==(const ParallelismConfig&, const ParallelismConfig&) = default;
};

/// Hardware used by the step-time estimate only (YAML `cluster:`).
struct ClusterConfig
{
    std::string gpu = "h100-sxm";
    int64_t gpusPerNode = 8;
    double intraNodeBandwidthGbps = 900; ///< GB/s per GPU within a node
    double interNodeBandwidthGbps = 400; ///< GB/s per GPU across nodes

    friend bool operator==(const ClusterConfig&, const ClusterConfig&) = default;
};

class ConfigLocations;

/// Where the keys of a loaded config were given (config/configlocations.h), so that problems found after loading
/// (during synthesis) can point at the line and column of the key they concern. Not part of the config's value:
/// two configs that differ only in their origin compare equal. Null for a config built in code.
struct ConfigOrigin
{
    std::shared_ptr<const ConfigLocations> locations;

    friend bool operator==(const ConfigOrigin&, const ConfigOrigin&)
    {
        return true;
    }
};

/// The process-wide default of Config::maxProgramNodes (config/programsize.h), settable once at start-up.
int64_t defaultMaxProgramNodes();
void setDefaultMaxProgramNodes(int64_t nodes);

/// A whole workload: the resolved config (preset applied, overrides applied). Plain value type.

struct Config
{
    std::string name = "workload"; ///< used for output file names; no path separators
    ModelConfig model;
    TrainingConfig training;
    ParallelismConfig parallelism;
    ClusterConfig cluster;
    /// Not a YAML field: the largest estimatedProgramNodes() validation accepts (config/programsize.h; the
    /// command line's `--max-nodes` sets the process-wide default).
    int64_t maxProgramNodes = defaultMaxProgramNodes();
    ConfigOrigin origin; ///< set by the config loader; shared, immutable

    friend bool operator==(const Config&, const Config&) = default;
};

// Text forms used in YAML and reports ("llama", "bf16", "1f1b", "tp", ...).
const char* toString(Family f);
const char* toString(Precision p);
const char* toString(Recompute r);
const char* toString(Schedule s);
const char* toString(MeshAxis a);

/// Bytes per element of a precision's compute dtype (fp32: 4, fp16/bf16: 2).
inline int bytesPerElement(Precision p)
{
    return p == Precision::Fp32 ? 4 : 2;
}

} // namespace stagecraft
