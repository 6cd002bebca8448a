// SPDX-License-Identifier: MIT
#pragma once

#include "config/config.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace stagecraft {

/// Elementary mesh axes. Expert parallelism is carved out of data parallelism as in Megatron-LM: the dp
/// degree is ep * edp, ep consecutive-in-rank-order data-parallel ranks share one set of experts split over
/// them, edp counts the expert-data-parallel replicas. With ep = 1, edp is dp.
enum class Axis : uint8_t
{
    Tp,
    Cp,
    Ep,
    Edp,
    Pp
};
inline constexpr int kAxisCount = 5;
inline constexpr int kSpatialAxisCount = 4; ///< tp, cp, ep, edp: the axes that split tensors
const char* toString(Axis a);

/// A set of axes as a bit mask (bit i = Axis i).
using AxisMask = uint8_t;
constexpr AxisMask axisBit(Axis a)
{
    return static_cast<AxisMask>(1u << static_cast<unsigned>(a));
}
inline constexpr AxisMask kDpMask = axisBit(Axis::Ep) | axisBit(Axis::Edp); ///< the whole data-parallel group
/// "tp", "cp", "dp" (ep+edp), "edp", "dp+cp", ... for messages and reports.
std::string axisMaskName(AxisMask mask);

/// Strong rank id.
struct RankId
{
    int64_t value = 0;
    friend bool operator==(RankId, RankId) = default;
    friend auto operator<=>(RankId, RankId) = default;
};

using Coords = std::array<int64_t, kAxisCount>;

/// The device mesh of a parallelism plan: rank <-> coordinates by mixed-radix arithmetic in `rank_order`
/// (fastest-varying axis first), O(1) each, and communicator groups. Immutable; thread-safe.
///
/// A communicator group of mask M is the set of ranks whose coordinates agree on every axis outside M. Within
/// a group, members are ordered by their mixed-radix position over the axes of M (in rank order), which is the
/// ring order a simulator uses. Groups of one member are never formed.
class Mesh
{
public:
    Mesh()
        : Mesh(ParallelismConfig {})
    {
    }
    explicit Mesh(const ParallelismConfig& p);

    int64_t worldSize() const
    {
        return m_world;
    }
    int64_t degree(Axis a) const
    {
        return m_degree[static_cast<size_t>(a)];
    }
    /// Product of the degrees of the axes in `mask`: the member count of its groups.
    int64_t groupSize(AxisMask mask) const;
    /// Number of distinct groups of `mask`: worldSize() / groupSize(mask).
    int64_t groupCount(AxisMask mask) const
    {
        return m_world / groupSize(mask);
    }

    Coords coords(RankId rank) const;
    RankId rank(const Coords& c) const;
    /// The rank with `rank`'s coordinates except `axis` set to `value`.
    RankId withCoordinate(RankId rank, Axis axis, int64_t value) const;

    /// Index in [0, groupCount(mask)) of the group of `mask` that holds `rank`: the mixed-radix number of its
    /// coordinates outside the mask, in rank order.
    int64_t groupIndex(AxisMask mask, RankId rank) const;
    /// Members of group `index` of `mask`, in ring order.
    std::vector<int64_t> groupMembers(AxisMask mask, int64_t index) const;

    /// The axes in rank order, fastest first.
    const std::array<Axis, kAxisCount>& order() const
    {
        return m_order;
    }

private:
    std::array<int64_t, kAxisCount> m_degree {};
    std::array<int64_t, kAxisCount> m_stride {}; ///< rank = sum coord[a] * stride[a]
    std::array<Axis, kAxisCount> m_order {};
    int64_t m_world = 1;
};

/// Global communicator-group ids for the masks a program uses. Ids are dense from 1: the masks in ascending
/// mask value (tp, cp, tp+cp, ep, ..., see axisMaskName), each contributing groupCount(mask) ids in group-index
/// order. So id = base(mask) + groupIndex(mask, rank) + 1. Deterministic for a given plan and set of masks.
class GroupTable
{
public:
    GroupTable() = default;
    GroupTable(const Mesh& mesh, std::vector<AxisMask> usedMasks);

    /// The id of the group of `mask` containing `rank`; 0 if the mask is not in the table.
    int64_t groupId(AxisMask mask, RankId rank) const;
    /// Number of groups over all masks.
    int64_t groupCount() const
    {
        return m_total;
    }
    const std::vector<AxisMask>& masks() const
    {
        return m_masks;
    }
    /// Calls fn(id, mask, index) for every group in id order.
    template <typename Fn> void forEachGroup(Fn&& fn) const
    {
        for (size_t i = 0; i < m_masks.size(); ++i)
            for (int64_t g = 0; g < m_mesh.groupCount(m_masks[i]); ++g)
                fn(m_base[i] + g + 1, m_masks[i], g);
    }
    const Mesh& mesh() const
    {
        return m_mesh;
    }

private:
    Mesh m_mesh;
    std::vector<AxisMask> m_masks; ///< sorted ascending
    std::vector<int64_t> m_base;
    int64_t m_total = 0;
};

} // namespace stagecraft
