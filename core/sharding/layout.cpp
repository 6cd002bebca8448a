// SPDX-License-Identifier: MIT
#include "sharding/layout.h"

namespace stagecraft {

const char* toString(AxisState s)
{
    switch (s) {
    case AxisState::Replicated:
        return "replicated";
    case AxisState::Split:
        return "split";
    case AxisState::Partial:
        return "partial";
    case AxisState::FlatShard:
        return "shard";
    }
    return "?";
}

const char* toString(CollectiveType t)
{
    switch (t) {
    case CollectiveType::AllReduce:
        return "all_reduce";
    case CollectiveType::AllGather:
        return "all_gather";
    case CollectiveType::ReduceScatter:
        return "reduce_scatter";
    case CollectiveType::AllToAll:
        return "all_to_all";
    }
    return "?";
}

std::string Layout::toString() const
{
    std::string out = "[";
    for (int a = 0; a < kSpatialAxisCount; ++a) {
        if (a)
            out += ' ';
        out += stagecraft::toString(static_cast<Axis>(a));
        out += ':';
        const AxisLayout& l = axes[static_cast<size_t>(a)];
        switch (l.state) {
        case AxisState::Replicated:
            out += '-';
            break;
        case AxisState::Split:
            out += "split(" + std::to_string(l.dim) + ")";
            break;
        case AxisState::Partial:
            out += "partial";
            break;
        case AxisState::FlatShard:
            out += "shard";
            break;
        }
    }
    return out + "]";
}

bool collectiveFor(const AxisLayout& p, const AxisLayout& c, CollectiveType& out)
{
    switch (p.state) {
    case AxisState::Replicated:
        return false; // replicated -> anything: nothing or a local slice
    case AxisState::Split:
        if (c.state == AxisState::Replicated || c.state == AxisState::FlatShard) {
            out = CollectiveType::AllGather;
            return true;
        }
        if (c.state == AxisState::Split && c.dim != p.dim) {
            out = CollectiveType::AllToAll;
            return true;
        }
        return false;
    case AxisState::Partial:
        if (c.state == AxisState::Replicated) {
            out = CollectiveType::AllReduce;
            return true;
        }
        if (c.state == AxisState::Split || c.state == AxisState::FlatShard) {
            out = CollectiveType::ReduceScatter;
            return true;
        }
        return false; // partial -> partial: an add of partial sums needs nothing
    case AxisState::FlatShard:
        if (c.state == AxisState::FlatShard)
            return false;
        out = CollectiveType::AllGather;
        return true;
    }
    return false;
}

std::vector<Relayout> planRelayout(
    const Layout& producer, const Layout& consumer, int64_t producerBytes, const Mesh& mesh)
{
    std::array<AxisMask, kCollectiveTypeCount> masks {};
    for (int a = 0; a < kSpatialAxisCount; ++a) {
        const Axis axis = static_cast<Axis>(a);
        if (mesh.degree(axis) <= 1)
            continue;
        CollectiveType t;
        if (collectiveFor(producer[axis], consumer[axis], t))
            masks[static_cast<size_t>(t)] |= axisBit(axis);
    }
    std::vector<Relayout> out;
    int64_t bytes = producerBytes;
    for (CollectiveType t : { CollectiveType::ReduceScatter, CollectiveType::AllReduce, CollectiveType::AllToAll,
             CollectiveType::AllGather }) {
        const AxisMask m = masks[static_cast<size_t>(t)];
        if (!m)
            continue;
        const int64_t n = mesh.groupSize(m);
        int64_t after = bytes;
        if (t == CollectiveType::ReduceScatter)
            after = (bytes + n - 1) / n;
        else if (t == CollectiveType::AllGather)
            after = bytes * n;
        out.push_back(Relayout { t, m, bytes, after });
        bytes = after;
    }
    return out;
}

} // namespace stagecraft
