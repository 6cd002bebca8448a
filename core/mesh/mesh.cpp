// SPDX-License-Identifier: MIT
#include "mesh/mesh.h"

#include <algorithm>

namespace stagecraft {

const char* toString(Axis a)
{
    switch (a) {
    case Axis::Tp:
        return "tp";
    case Axis::Cp:
        return "cp";
    case Axis::Ep:
        return "ep";
    case Axis::Edp:
        return "edp";
    case Axis::Pp:
        return "pp";
    }
    return "?";
}

std::string axisMaskName(AxisMask mask)
{
    std::string out;
    auto append = [&](const char* s) {
        if (!out.empty())
            out += '+';
        out += s;
    };
    if ((mask & kDpMask) == kDpMask) {
        append("dp");
        mask = static_cast<AxisMask>(mask & ~kDpMask);
    }
    for (int a = 0; a < kAxisCount; ++a)
        if (mask & (1u << a))
            append(toString(static_cast<Axis>(a)));
    return out.empty() ? std::string("none") : out;
}

Mesh::Mesh(const ParallelismConfig& p)
{
    const int64_t ep = std::max<int64_t>(1, p.ep);
    m_degree = { std::max<int64_t>(1, p.tp), std::max<int64_t>(1, p.cp), ep, std::max<int64_t>(1, p.dp / ep),
        std::max<int64_t>(1, p.pp) };
    // rank_order names config axes; "dp" there is the expert-data-parallel part (ep is listed separately).
    size_t n = 0;
    for (MeshAxis a : p.rankOrder) {
        Axis axis = a == MeshAxis::Tp ? Axis::Tp
            : a == MeshAxis::Cp       ? Axis::Cp
            : a == MeshAxis::Ep       ? Axis::Ep
            : a == MeshAxis::Dp       ? Axis::Edp
                                      : Axis::Pp;
        if (n < m_order.size()
            && std::find(m_order.begin(), m_order.begin() + static_cast<long>(n), axis)
                == m_order.begin() + static_cast<long>(n))
            m_order[n++] = axis;
    }
    // Any axis the order did not name goes last, in enum order (validation rejects such orders anyway).
    for (int a = 0; a < kAxisCount && n < m_order.size(); ++a)
        if (std::find(m_order.begin(), m_order.begin() + static_cast<long>(n), static_cast<Axis>(a))
            == m_order.begin() + static_cast<long>(n))
            m_order[n++] = static_cast<Axis>(a);
    int64_t stride = 1;
    for (Axis a : m_order) {
        m_stride[static_cast<size_t>(a)] = stride;
        stride *= m_degree[static_cast<size_t>(a)];
    }
    m_world = stride;
}

int64_t Mesh::groupSize(AxisMask mask) const
{
    int64_t n = 1;
    for (int a = 0; a < kAxisCount; ++a)
        if (mask & (1u << a))
            n *= m_degree[static_cast<size_t>(a)];
    return n;
}

Coords Mesh::coords(RankId rank) const
{
    Coords c {};
    for (int a = 0; a < kAxisCount; ++a)
        c[static_cast<size_t>(a)] = (rank.value / m_stride[static_cast<size_t>(a)]) % m_degree[static_cast<size_t>(a)];
    return c;
}

RankId Mesh::rank(const Coords& c) const
{
    int64_t r = 0;
    for (int a = 0; a < kAxisCount; ++a)
        r += c[static_cast<size_t>(a)] * m_stride[static_cast<size_t>(a)];
    return RankId { r };
}

RankId Mesh::withCoordinate(RankId rank, Axis axis, int64_t value) const
{
    const size_t a = static_cast<size_t>(axis);
    const int64_t current = (rank.value / m_stride[a]) % m_degree[a];
    return RankId { rank.value + (value - current) * m_stride[a] };
}

int64_t Mesh::groupIndex(AxisMask mask, RankId rank) const
{
    int64_t index = 0, radix = 1;
    for (Axis a : m_order) {
        if (mask & axisBit(a))
            continue;
        const size_t i = static_cast<size_t>(a);
        index += ((rank.value / m_stride[i]) % m_degree[i]) * radix;
        radix *= m_degree[i];
    }
    return index;
}

std::vector<int64_t> Mesh::groupMembers(AxisMask mask, int64_t index) const
{
    // Base rank: decode `index` over the axes outside the mask.
    int64_t base = 0;
    for (Axis a : m_order) {
        if (mask & axisBit(a))
            continue;
        const size_t i = static_cast<size_t>(a);
        base += (index % m_degree[i]) * m_stride[i];
        index /= m_degree[i];
    }
    std::vector<int64_t> members { base };
    for (Axis a : m_order) {
        if (!(mask & axisBit(a)))
            continue;
        const size_t i = static_cast<size_t>(a);
        const size_t n = members.size();
        for (int64_t k = 1; k < m_degree[i]; ++k)
            for (size_t j = 0; j < n; ++j)
                members.push_back(members[j] + k * m_stride[i]);
    }
    return members;
}

GroupTable::GroupTable(const Mesh& mesh, std::vector<AxisMask> usedMasks)
    : m_mesh(mesh)
{
    std::sort(usedMasks.begin(), usedMasks.end());
    usedMasks.erase(std::unique(usedMasks.begin(), usedMasks.end()), usedMasks.end());
    for (AxisMask m : usedMasks) {
        if (mesh.groupSize(m) <= 1)
            continue;
        m_masks.push_back(m);
        m_base.push_back(m_total);
        m_total += mesh.groupCount(m);
    }
}

int64_t GroupTable::groupId(AxisMask mask, RankId rank) const
{
    auto it = std::lower_bound(m_masks.begin(), m_masks.end(), mask);
    if (it == m_masks.end() || *it != mask)
        return 0;
    return m_base[static_cast<size_t>(it - m_masks.begin())] + m_mesh.groupIndex(mask, rank) + 1;
}

} // namespace stagecraft
