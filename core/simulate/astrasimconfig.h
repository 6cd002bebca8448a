// SPDX-License-Identifier: MIT
// The three inputs of ASTRA-sim's analytical simulator (system JSON, network YAML, remote-memory JSON), chosen so
// that ASTRA-sim models the machine our step-time estimate models (core/estimate/costmodel.h). Where the two
// models differ, astrasimconfig.cpp says how.
#pragma once

#include "config/config.h"
#include "estimate/costmodel.h"
#include "estimate/gpuspec.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stagecraft {

/// One dimension of ASTRA-sim's analytical network: a basic topology of `npus` NPUs. ASTRA-sim reads the
/// bandwidth as "GB/s" but converts it with 2^30 bytes per GB (network_backend/analytical NetworkFunction.cpp,
/// bw_GBps_to_Bpns), so `bandwidthGiBps` is bytes/s / 2^30. `latencyNsPerHop` is paid per link; a Switch
/// message takes two hops (source -> switch -> destination).
struct AstraSimNetworkDim
{
    std::string topology = "Switch"; ///< "Switch", "Ring" or "FullyConnected"
    int64_t npus = 0; ///< at least 2 (ASTRA-sim refuses smaller dimensions)
    double bandwidthGiBps = 0; ///< per NPU link, 2^30 bytes/s
    double latencyNsPerHop = 0;
};

/// ASTRA-sim's analytical network backends: congestion-unaware (AstraSim_Analytical_Congestion_Unaware, each
/// message has its link to itself) and congestion-aware (AstraSim_Analytical_Congestion_Aware, messages share the
/// links they cross; astra-network-analytical 599a047, the one the kit builds, models one dimension only).
enum class AstraSimBackend
{
    CongestionUnaware,
    CongestionAware
};
/// "congestion-unaware", "congestion-aware".
const char* toString(AstraSimBackend backend);

/// Everything the three ASTRA-sim config files hold. Plain value type.
struct AstraSimSetup
{
    int64_t npus = 0; ///< world size = product of the dimensions' npus
    double peakPerfTflops = 0; ///< system "peak-perf" (ASTRA-sim multiplies by 1e12): dense peak * efficiency
    double localMemBwGBps = 0; ///< system "local-mem-bw" (ASTRA-sim multiplies by 1e9): HBM bandwidth
    std::vector<AstraSimNetworkDim> dims; ///< dim 1 = inside a node, dim 2 = across nodes
    int64_t datasetSplits = 1; ///< "preferred-dataset-splits": chunks per collective (4 congestion-aware)
    int64_t activeChunks = 1; ///< "active-chunks-per-dimension" (4 congestion-aware: see astraSimSetup())
    /// "endpoint-delay": fixed cost per message at the endpoints. 1 ns, not 0: with 0 a message of a few bytes
    /// (a ZeRO-3 gather of norm weights) is delivered at the current tick, and ASTRA-sim's analytical event queue
    /// aborts (`Assertion current_event_list.get_event_time() > current_time`; llama3-8b dp8 ZeRO-3).
    int64_t endpointDelayNs = 1;
    bool trackLocalMem = false; ///< "track-local-mem": per-rank tensor liveness from inputs/outputs attributes
    AstraSimBackend backend = AstraSimBackend::CongestionUnaware;
    /// The system's collective implementations per dimension ("ring", "direct"); empty = ring for all-reduce,
    /// reduce-scatter and all-gather, direct for all-to-all.
    std::vector<std::string> allReduce, reduceScatter, allGather, allToAll;
    /// The fabric level of each dimension ("nvlink", "leaf", "spine", "core") with a topology; empty otherwise.
    std::vector<std::string> levels;
    std::vector<std::string> notes; ///< what the setup could not express (printed by `stagecraft simulate`)
};

/// The setup for `config` (world size, cluster section) at `rates` (hardwareRates() of the config's GPU and the
/// estimate options). One network dimension per level: dim 1 = gpus_per_node NPUs at the intra-node bandwidth,
/// dim 2 = world / gpus_per_node at the inter-node bandwidth; a single dimension when the world fits in a node
/// (at the intra-node bandwidth) or gpus_per_node is 1 (at the inter-node bandwidth). Latencies: the estimate's
/// per-transfer latency split over the switch's two hops. Returns nullopt and sets `error` when ASTRA-sim cannot
/// model the config: a world of 1 (the analytical network needs at least 2 NPUs), a world that is not a multiple
/// of gpus_per_node, or a rate that is not positive. Pure; thread-safe.
///
/// With cluster.topology: one dimension per fabric level the world spans, from the GPU up: the NVLink domain at
/// NVLink speed, the NVLink domains of one leaf group (rail-aligned: dimension 2 joins GPUs of the same index in
/// other nodes, as the rails do) at each GPU's NIC share, the leaf groups of a pod at that over the leaf's
/// oversubscription, the pods over the spine's too; latencies per hop are half of NCCL's per-step latency of the
/// level (tuning.cc hwLatencies, Simple); and per dimension the collective implementation closest to NCCL's choice
/// for a large message there (NVLS -> direct, the others -> ring: see astrasimconfig.cpp).
/// The congestion-aware backend of astra-network-analytical 599a047 refuses more than one dimension: for it a
/// multi-level world becomes one Switch of all NPUs at the per-GPU bandwidth of its highest level (a note says so),
/// and a collective goes as 4 chunks, 4 in flight per dimension (that backend stores and forwards each chunk).
std::optional<AstraSimSetup> astraSimSetup(const Config& config, const HardwareRates& rates, bool trackLocalMem,
    std::string& error, AstraSimBackend backend = AstraSimBackend::CongestionUnaware);

/// The same from the GPU preset and estimate options (rates = hardwareRates(config, gpu, options)).
std::optional<AstraSimSetup> astraSimSetup(const Config& config, const GpuSpec& gpu, const EstimateOptions& options,
    bool trackLocalMem, std::string& error, AstraSimBackend backend = AstraSimBackend::CongestionUnaware);

/// The system JSON: roofline on (peak-perf, local-mem-bw), ring all-reduce / reduce-scatter / all-gather and
/// direct all-to-all in every dimension, FIFO scheduling, the splits and endpoint delay of `setup`, and
/// track-local-mem (trace file "local_mem_trace", relative to the run folder) when asked. Pure.
std::string astraSimSystemJson(const AstraSimSetup& setup);

/// The network YAML of the analytical backend: topology, npus_count, bandwidth and latency lists, one entry per
/// dimension. Pure.
std::string astraSimNetworkYaml(const AstraSimSetup& setup);

/// The remote-memory JSON: no remote memory ({"memory-type": "NO_MEMORY_EXPANSION"}). Our traces hold no
/// memory load/store nodes. Pure.
std::string astraSimMemoryJson();

} // namespace stagecraft
