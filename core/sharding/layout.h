// SPDX-License-Identifier: MIT
#pragma once

#include "mesh/mesh.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace stagecraft {

/// How a tensor is held across one spatial mesh axis.
enum class AxisState : uint8_t
{
    Replicated, ///< every member holds the same full extent
    Split, ///< dimension `dim` is divided among the members
    Partial, ///< every member holds a partial sum of the full value
    FlatShard, ///< ZeRO: the flattened tensor is divided among the members
};
const char* toString(AxisState s);

struct AxisLayout
{
    AxisState state = AxisState::Replicated;
    int8_t dim = -1; ///< for Split: the tensor dimension
    friend bool operator==(const AxisLayout&, const AxisLayout&) = default;
};

/// The local layout of a tensor on a rank: one AxisLayout per spatial axis (tp, cp, ep, edp).
struct Layout
{
    std::array<AxisLayout, kSpatialAxisCount> axes {};
    friend bool operator==(const Layout&, const Layout&) = default;
    const AxisLayout& operator[](Axis a) const
    {
        return axes[static_cast<size_t>(a)];
    }
    AxisLayout& operator[](Axis a)
    {
        return axes[static_cast<size_t>(a)];
    }
    /// "[tp:split(2) cp:- ep:partial edp:shard]" style text for dumps and messages.
    std::string toString() const;
};

enum class CollectiveType : uint8_t
{
    AllReduce,
    AllGather,
    ReduceScatter,
    AllToAll
};
inline constexpr int kCollectiveTypeCount = 4;
/// "all_reduce", "all_gather", "reduce_scatter", "all_to_all" (the report JSON keys).
const char* toString(CollectiveType t);

/// One step of re-laying a tensor out: a collective over the axes of `mask`, with the byte sizes of the buffer
/// before and after. `inputBytes` is what Chakra's comm_size means for every type (AG: the shard; RS: the full
/// input; AR and A2A: the buffer).
struct Relayout
{
    CollectiveType type;
    AxisMask mask;
    int64_t inputBytes;
    int64_t outputBytes;
};

/// The decision table of the STAGE method (stage-method.md §2), per axis of size > 1, extended with ZeRO's
/// flat shards: producer state -> consumer state gives nothing, a local slice, or a collective.
/// Returns false (and no collective) for combinations that need no communication.
bool collectiveFor(const AxisLayout& producer, const AxisLayout& consumer, CollectiveType& out);

/// Collectives turning a tensor of `producerBytes` local bytes from `producer` into `consumer`, one per
/// collective type over the product of the axes that need it, in the order reduce-scatter, all-reduce,
/// all-to-all, all-gather, with sizes carried through the chain. Axes of degree 1 never communicate.
std::vector<Relayout> planRelayout(
    const Layout& producer, const Layout& consumer, int64_t producerBytes, const Mesh& mesh);

} // namespace stagecraft
