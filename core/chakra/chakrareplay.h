// SPDX-License-Identifier: MIT
// What a consumer that runs every node as soon as its dependencies are done (ASTRA-sim's workload layer) makes
// of one rank file: which nodes it would run outside their place in the schedule, which compute nodes its
// roofline cannot time, which outputs it keeps alive to the end, and the tensor-lifetime memory peak it would
// report from the nodes' inputs/outputs lists.
//
// The schedule is the file order: a producer writes nodes in the order it means them to run (Stagecraft does).
// A node "escapes its phase" when it does not wait, directly or through its dependencies, for the compute node
// that precedes it in the file. This is a property of the graph, so it holds for any timing: such a node can
// start before its schedule predecessor whatever the kernels and links cost.
#pragma once

#include "chakra/chakrainspect.h"

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace stagecraft {

/// The replay's figures for one rank file.
struct ReplaySummary
{
    uint64_t escapes = 0; ///< nodes that do not wait for their schedule predecessor and start before it
    uint64_t unreadOutputs = 0; ///< tensors written and never read (with tensor lists)
    double makespanS = 0; ///< replay time of the rank alone (illustrative rates, see ReplayRates)
    std::optional<uint64_t> tensorPeakBytes; ///< tensor-lifetime peak, when every node carries tensor lists
    std::optional<int64_t> statedPeakBytes; ///< the producer's own peak (GlobalMetadata `peak_memory_bytes`)
};

/// Rates of the replay's timing: a roofline for compute nodes and one link for communication. The figures only
/// order overlapping work; they are not a machine model.
struct ReplayRates
{
    double peakFlops = 400e12;
    double memoryBytesPerS = 2e12;
    double linkBytesPerS = 100e9;
    double linkLatencyS = 1e-6;
};

/// Collects a rank file node by node (streaming: ids, types, costs, dependencies, names and tensor lists; no
/// protobuf objects are kept), then replays it. Not thread-safe; one per file.
class TraceReplay
{
public:
    explicit TraceReplay(ReplayRates rates = {});

    void setStatedPeak(std::optional<int64_t> bytes)
    {
        m_statedPeak = bytes;
    }
    void add(const ChakraNode& node);

    /// Runs the replay and appends its findings (errors: escapes per kind, unread outputs, a tensor peak more
    /// than 1 % away from the stated one; a note with the peak otherwise).
    ReplaySummary finish(std::vector<TraceFinding>& findings);

private:
    enum class Kind : uint8_t
    {
        Compute,
        Collective,
        Send,
        Recv,
        Other
    };
    struct Tensor
    {
        uint64_t bytes = 0;
        int64_t writer = -1; ///< first node that lists it as an output
        bool readBeforeWrite = false;
    };

    uint32_t tensorIndex(const std::string& name, uint64_t bytes);
    std::string label(size_t i) const;

    ReplayRates m_rates;
    std::optional<int64_t> m_statedPeak;
    std::vector<uint64_t> m_ids;
    std::vector<Kind> m_kind;
    std::vector<int64_t> m_collectiveType;
    std::vector<double> m_durationS;
    std::vector<uint64_t> m_depStart { 0 };
    std::vector<uint64_t> m_deps;
    std::vector<uint64_t> m_nameStart { 0 };
    std::string m_names;
    // Tensor lists: per node, reads and writes as tensor indices.
    bool m_allListed = true;
    std::vector<uint64_t> m_ioStart { 0 };
    std::vector<uint32_t> m_io; ///< index | kWriteBit
    std::vector<Tensor> m_tensors;
    std::unordered_map<std::string, uint32_t> m_tensorIndex;
};

} // namespace stagecraft
