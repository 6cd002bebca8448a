// SPDX-License-Identifier: MIT
#include "estimate/quickestimate.h"

#include "memory/memorytimeline.h"
#include "model/modelcost.h"
#include "program/distributionplan.h"
#include "program/stageplan.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace stagecraft {

std::shared_ptr<const ModelGraph> ModelGraphCache::get(const ModelConfig& model, Precision precision)
{
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        for (const Entry& e : m_entries)
            if (e.precision == precision && e.model == model)
                return e.graph;
    }
    // Built outside the lock; two threads may build the same graph once each, the first one stored wins.
    std::shared_ptr<const ModelGraph> graph = buildModelGraph(model, precision);
    std::lock_guard<std::mutex> lock(m_mutex);
    for (const Entry& e : m_entries)
        if (e.precision == precision && e.model == model)
            return e.graph;
    m_entries.push_back(Entry { model, precision, graph });
    return graph;
}

namespace {

    constexpr double kNever = -1e300; ///< "does not depend on this input"

    bool defined(double x)
    {
        return x > kNever / 2;
    }

    /// When something of a unit ends, as a function of the unit's four inputs: its start (the stage's compute
    /// stream is free, a blocking send of the unit before included), the time its stage's communication stream is
    /// free, the arrival of its input (recv), and the end of the last compute kernel before it (the anchor: the
    /// program makes every node wait for the compute node before it, so a collective or recv at the unit's head
    /// may start while the previous unit's blocking send still runs). The unit is a max-plus system (every finish
    /// is a max of sums), so each end is exactly
    ///   max(start + atStart, commFree + afterComm, arrival + afterRecv, anchor + afterAnchor)
    /// with kNever for an input it does not depend on.
    struct UnitEnd
    {
        double atStart = kNever;
        double afterComm = kNever;
        double afterRecv = kNever;
        double afterAnchor = kNever;

        double at(double start, double commFree, double arrival, double anchor) const
        {
            return std::max({ start + atStart, commFree + afterComm, arrival + afterRecv, anchor + afterAnchor });
        }
        /// The later of two ends, input by input (the max-plus sum).
        void raise(const UnitEnd& t)
        {
            atStart = std::max(atStart, t.atStart);
            afterComm = std::max(afterComm, t.afterComm);
            afterRecv = std::max(afterRecv, t.afterRecv);
            afterAnchor = std::max(afterAnchor, t.afterAnchor);
        }
        /// This end `d` seconds later (kNever + d stays below kNever / 2).
        UnitEnd plus(double d) const
        {
            return { atStart + d, afterComm + d, afterRecv + d, afterAnchor + d };
        }
    };

    /// What one schedule unit (a forward or backward pass of one micro-batch through one chunk, or the iteration
    /// tail) costs when run alone (estimateStep's two-stream model). Seconds and bytes; doubles because the
    /// figures are extrapolated.
    struct UnitProfile
    {
        UnitEnd compute; ///< last compute node finishes, or a blocking send after it (the compute stream is free)
        UnitEnd kernels; ///< last compute kernel finishes (the next unit's anchor)
        UnitEnd comm; ///< last collective or send finishes
        UnitEnd output; ///< last send finishes: the output has reached the neighbouring stage
        /// The communication that can only follow the unit's last kernel (the longest chain of durations from it
        /// through dependencies and stream order, e.g. the last layer's gradient reduction): comm ends at least this
        /// long after kernels, with any number of layers. kNever when nothing follows it.
        double commAfterKernels = kNever;
        double sendTimeS = 0; ///< sum of send times at the representative placement
        double sendBytes = 0;
        double sendCount = 0;
        double netBytes = 0; ///< bytes the unit leaves allocated (allocated - freed of earlier units' buffers)
        double peakBytes = 0; ///< peak of non-resident bytes during the unit, above the bytes live at its start
    };

    struct StageProfile
    {
        std::vector<UnitProfile> forward, backward, lastBackward; ///< per local chunk
        UnitProfile tail;
        double residentBytes = 0;
    };

    /// The profile of a chunk with more layers: `base` plus t times the change that one more layer per chunk makes
    /// (`from` -> `to`, measured on one stage type). What a layer adds is the same on every stage type: compute,
    /// its collectives, its buffers. What sits at the chunk's boundary is not: the sends and recvs, which only
    /// some stage types have, keep their size. So every figure moves by the change measured where the measured
    /// type has it, and otherwise with the unit's compute end (a send follows the last compute).
    StageProfile extrapolate(const StageProfile& base, const StageProfile& from, const StageProfile& to, double t)
    {
        auto add = [t](const UnitProfile& b, const UnitProfile& f, const UnitProfile& e) {
            auto step = [t](double x, double y) { return t * (y - x); };
            UnitProfile out = b;
            out.compute.atStart = b.compute.atStart + step(f.compute.atStart, e.compute.atStart);
            const double shift = out.compute.atStart - b.compute.atStart;
            auto move = [&](double x, double fx, double ex) {
                if (!defined(x))
                    return kNever;
                return x + (defined(fx) && defined(ex) ? step(fx, ex) : shift);
            };
            auto moveEnd = [&](UnitEnd& o, const UnitEnd& bx, const UnitEnd& fx, const UnitEnd& ex, bool all) {
                if (all)
                    o.atStart = move(bx.atStart, fx.atStart, ex.atStart);
                o.afterComm = move(bx.afterComm, fx.afterComm, ex.afterComm);
                o.afterRecv = move(bx.afterRecv, fx.afterRecv, ex.afterRecv);
                o.afterAnchor = move(bx.afterAnchor, fx.afterAnchor, ex.afterAnchor);
            };
            moveEnd(out.compute, b.compute, f.compute, e.compute, false);
            moveEnd(out.kernels, b.kernels, f.kernels, e.kernels, true);
            moveEnd(out.comm, b.comm, f.comm, e.comm, true);
            moveEnd(out.output, b.output, f.output, e.output, true);
            // The extrapolated communication end keeps that trailing chain behind the extrapolated last kernel: a
            // unit whose reductions outlast its compute over the reduced plans' few layers may not over the real
            // ones, where the communication end's slope would otherwise carry it before the compute end.
            if (defined(b.commAfterKernels)) {
                auto floorAt = [&](double& c, double k) {
                    if (defined(k))
                        c = std::max(c, k + b.commAfterKernels);
                };
                floorAt(out.comm.atStart, out.kernels.atStart);
                floorAt(out.comm.afterComm, out.kernels.afterComm);
                floorAt(out.comm.afterRecv, out.kernels.afterRecv);
                floorAt(out.comm.afterAnchor, out.kernels.afterAnchor);
            }
            out.netBytes = b.netBytes + step(f.netBytes, e.netBytes);
            out.peakBytes = b.peakBytes + step(f.peakBytes, e.peakBytes);
            return out;
        };
        StageProfile out;
        for (size_t c = 0; c < base.forward.size(); ++c) {
            out.forward.push_back(add(base.forward[c], from.forward[c], to.forward[c]));
            out.backward.push_back(add(base.backward[c], from.backward[c], to.backward[c]));
            out.lastBackward.push_back(add(base.lastBackward[c], from.lastBackward[c], to.lastBackward[c]));
        }
        out.tail = add(base.tail, from.tail, to.tail);
        out.residentBytes = base.residentBytes + t * (to.residentBytes - from.residentBytes);
        return out;
    }

    struct ReducedShape
    {
        int32_t p = 1; ///< real pipeline stages
        int32_t pr = 1; ///< reduced pipeline stages
        int32_t v = 1; ///< real virtual stages (local chunks per stage)
        int32_t vr = 1; ///< reduced plans' local chunks: v, or 3 where the middle chunks stand for one another
        int32_t mr = 1; ///< reduced micro-batches
        Schedule schedule = Schedule::OneFOneB;
        int32_t groupSize = 0; ///< the interleaved schedule's (real plan only; reduced plans hold one group)
    };

    /// The schedule shape of the reduced (or real, with p, v and m real) plan.
    ScheduleShape shapeOf(const ReducedShape& s, int32_t pp, int32_t v, int32_t microBatches)
    {
        ScheduleShape shape;
        shape.schedule = s.schedule;
        shape.pp = pp;
        shape.virtualStages = v;
        shape.microBatches = microBatches;
        shape.groupSize = s.groupSize;
        return shape;
    }

    /// Real stage a reduced stage stands for (its communication placement).
    int32_t representative(int32_t sigma, const ReducedShape& s)
    {
        if (sigma == 0)
            return 0;
        if (sigma == s.pr - 1)
            return s.p - 1;
        return 1;
    }

    /// The reduced plan's local chunk that real local chunk `c` is profiled as: itself, or with fewer reduced
    /// chunks (ReducedShape::vr) the first, the last, or for every chunk between them the second.
    int32_t reducedChunk(int32_t c, const ReducedShape& s)
    {
        if (s.vr == s.v || c == 0)
            return c;
        return c == s.v - 1 ? s.vr - 1 : 1;
    }

    /// Reduced stage type of real stage `stage`.
    int32_t stageType(int32_t stage, const ReducedShape& s)
    {
        if (stage == 0)
            return 0;
        if (stage == s.p - 1)
            return s.pr - 1;
        return 1;
    }

    /// Whether a pipeline layout is one the reduced plans extrapolate: what the shorthand splits make, with any
    /// number of decoder layers per chunk. Every chunk holds something, the embedding opens chunk 0 and the loss
    /// closes the last chunk, which also holds the MTP modules. Its chunks are then measured by their slots (the
    /// embedding and the loss counted as layers), as a reduced plan with both shorthands holds them.
    bool slotLayout(const std::string& text)
    {
        LayoutError error;
        const std::optional<PipelineLayout> layout = PipelineLayout::parse(text, error);
        if (!layout || layout->chunks.empty())
            return false;
        const auto& chunks = layout->chunks;
        for (size_t c = 0; c < chunks.size(); ++c) {
            if (chunks[c].empty())
                return false;
            for (size_t i = 0; i < chunks[c].size(); ++i) {
                const LayoutItem item = chunks[c][i];
                if ((item == LayoutItem::Embedding && (c != 0 || i != 0))
                    || (item == LayoutItem::Loss && (c + 1 != chunks.size() || i + 1 != chunks[c].size()))
                    || (item == LayoutItem::Mtp && c + 1 != chunks.size()))
                    return false;
            }
        }
        return chunks.front().front() == LayoutItem::Embedding && chunks.back().back() == LayoutItem::Loss;
    }

    /// Whether quickEstimate() models the config's pipeline layout, if it has one: of the shorthands' form
    /// (slotLayout()), every ZeRO stage (each stage type extrapolated by its own layer change: perTypeDelta).
    bool layoutModelled(const ParallelismConfig& par)
    {
        return par.pipelineLayout.empty() || slotLayout(par.pipelineLayout);
    }

    /// An MoE model's dense first layers on a pipeline must all be in chunk 0, which quickEstimate() measures from
    /// them (elsewhere its reduced plans' few layers would be mostly dense: stage 0's peak 42 % high against the
    /// full synthesis on the tiny MoE with 3 dense of 16 layers on pp 4 before it did).
    bool denseBeyondChunk0(const Config& config)
    {
        return config.model.family == Family::Moe && config.model.firstDenseLayers > 0 && config.parallelism.pp > 1
            && StagePlan::forConfig(config).chunkLayers(0) < config.model.firstDenseLayers;
    }

    /// Nodes of the data-parallel gradient reduction that ZeRO 0/1 run once per iteration, inside the last
    /// micro-batch's backward: a regular backward lacks exactly these.
    bool isIterationReduction(const ProgramNode& n)
    {
        return n.microBatch < 0 && n.pass != Pass::Optimizer;
    }

    bool profileStage(const DistributionPlan& plan, int32_t sigma, const ReducedShape& shape,
        const CommPlacement& placement, const HardwareRates& rates, StageProfile& out, int64_t& nodeCount,
        std::string& error)
    {
        // The profiles read the units of the last micro-batch alone: its forward is every forward, and its backward
        // without the iteration's once-per-iteration gradient reduction (ZeRO 0/1) every other backward; a backward
        // under ZeRO 2/3 reduces its own gradients whichever micro-batch it is, and the barrier that makes the next
        // micro-batch wait for those reductions is the replay's. The units of the other micro-batches (an
        // interleaved reduced plan runs pr) are left out of the program; the others keep their places in the
        // schedule.
        std::vector<ScheduleUnit> order = scheduleOrder(shapeOf(shape, shape.pr, shape.vr, shape.mr), sigma);
        std::erase_if(order, [&](const ScheduleUnit& unit) { return unit.microBatch < shape.mr - 1; });
        std::vector<uint32_t> unitStarts;
        const ClassProgram program = buildClassProgram(plan, sigma, false, &order, &unitStarts); // no names read
        const size_t n = program.nodes.size();
        const size_t tailUnit = order.size();
        nodeCount += static_cast<int64_t>(n);
        if (unitStarts.size() != order.size()) {
            error = "the reduced program of stage " + std::to_string(sigma) + " has no schedule units";
            return false;
        }

        // Which unit each node belongs to: the one whose emission added it (gradient reductions, with no micro-batch,
        // run inside the backward that triggers them, those deferred to the iteration's end in the last unit);
        // optimizer-pass nodes form the tail.
        std::vector<uint32_t> unitOf(n, 0);
        size_t u = 0;
        for (size_t i = 0; i < n; ++i) {
            while (u + 1 < unitStarts.size() && unitStarts[u + 1] <= i)
                ++u;
            unitOf[i] =
                program.nodes[i].pass == Pass::Optimizer ? static_cast<uint32_t>(tailUnit) : static_cast<uint32_t>(u);
        }

        // Node times on the rank of the real stage this type stands for.
        const int32_t real = representative(sigma, shape);
        auto realPeer = [&](int32_t peer) {
            if (shape.pr == shape.p)
                return peer;
            const int32_t delta = peer - sigma;
            const bool forward = delta == 1 || delta == -(shape.pr - 1);
            return forward ? (real + 1) % shape.p : (real - 1 + shape.p) % shape.p;
        };
        std::vector<double> duration(n);
        for (size_t i = 0; i < n; ++i) {
            const ProgramNode& node = program.nodes[i];
            duration[i] = nodeTimeS(node, rates, placement, node.kind == NodeKind::Send ? realPeer(node.peerStage) : 0)
                + unfusedAccumulationTimeS(node, program.buffers, rates);
        }

        // Memory bookkeeping over the buffers' lifetimes (bufferLifetimes(), as computeMemoryTimeline() counts them;
        // resident ones all along): the resident total, the other bytes live at each node, and of those the
        // iteration reduction's own (left out of the regular-backward variant).
        const size_t bufferCount = program.buffers.size();
        std::vector<int32_t> firstUse, lastUse;
        bufferLifetimes(program, firstUse, lastUse);
        int64_t resident = 0;
        std::vector<int64_t> liveAt(n + 1, 0), reductionLive(n + 1, 0);
        for (size_t b = 0; b < bufferCount; ++b) {
            const Buffer& buf = program.buffers[b];
            if (buf.resident) {
                resident += buf.bytes;
                continue;
            }
            if (firstUse[b] < 0)
                continue;
            liveAt[static_cast<size_t>(firstUse[b])] += buf.bytes;
            liveAt[static_cast<size_t>(lastUse[b]) + 1] -= buf.bytes;
            if (!isIterationReduction(program.nodes[static_cast<size_t>(firstUse[b])]))
                continue;
            reductionLive[static_cast<size_t>(firstUse[b])] += buf.bytes;
            reductionLive[static_cast<size_t>(lastUse[b]) + 1] -= buf.bytes;
        }
        for (size_t i = 1; i <= n; ++i) {
            liveAt[i] += liveAt[i - 1];
            reductionLive[i] += reductionLive[i - 1];
        }

        // Net bytes per unit from buffer lifetimes (with and without the iteration reduction's buffers), then
        // the bytes live when each unit starts.
        std::vector<double> net(order.size() + 1, 0.0), netRegular(order.size() + 1, 0.0);
        for (size_t b = 0; b < program.buffers.size(); ++b) {
            const Buffer& buf = program.buffers[b];
            if (buf.resident || firstUse[b] < 0)
                continue;
            const uint32_t ua = unitOf[static_cast<size_t>(firstUse[b])];
            const uint32_t ub = unitOf[static_cast<size_t>(lastUse[b])];
            if (ua == ub)
                continue;
            net[ua] += static_cast<double>(buf.bytes);
            net[ub] -= static_cast<double>(buf.bytes);
            if (!isIterationReduction(program.nodes[static_cast<size_t>(firstUse[b])])) {
                netRegular[ua] += static_cast<double>(buf.bytes);
                netRegular[ub] -= static_cast<double>(buf.bytes);
            }
        }
        std::vector<double> before(order.size() + 1, 0.0);
        for (size_t k = 1; k < before.size(); ++k)
            before[k] = before[k - 1] + net[k - 1];

        // One unit alone: two in-order streams from t = 0, dependencies on other units already satisfied.
        // `regular` leaves out the iteration reduction (a backward of any micro-batch but the last).
        // The nodes of each unit in program order: unitNodes[unitStart[u] .. unitStart[u + 1]).
        std::vector<uint32_t> unitStart(order.size() + 2, 0), unitNodes(n);
        for (size_t i = 0; i < n; ++i)
            ++unitStart[unitOf[i] + 1];
        for (size_t k = 1; k < unitStart.size(); ++k)
            unitStart[k] += unitStart[k - 1];
        {
            std::vector<uint32_t> fill(unitStart.begin(), unitStart.end() - 1);
            for (size_t i = 0; i < n; ++i)
                unitNodes[fill[unitOf[i]]++] = static_cast<uint32_t>(i);
        }
        std::vector<int32_t> mark(n, -1);
        // A time as a max-plus form in the unit's four inputs (a UnitEnd): every step below is a max or an added
        // duration, so each end is one, read in a single pass.
        using Time = UnitEnd;
        // Streams as estimateStep() has them: 0 compute (a blocking send, without overlap_p2p_comm, holds it too),
        // 1 collectives (and overlapped sends), 2 data-parallel collectives.
        auto streamOf = [&](const ProgramNode& node) {
            if (node.kind == NodeKind::Compute || (node.kind == NodeKind::Send && !rates.overlapP2pComm))
                return 0;
            return isDataParallelCollective(node) ? 2 : 1;
        };
        std::vector<Time> finish(n);
        std::vector<double> afterLastKernel(n); // valid where trailMark == pass
        std::vector<int32_t> trailMark(n, -1);
        int32_t pass = 0;
        struct Ends
        {
            Time compute, kernels, comm, output;
        };
        auto simulateUnit = [&](uint32_t unit, bool regular, UnitProfile& prof) {
            Ends ends;
            ++pass;
            const Time zero { 0.0, kNever, kNever, kNever }, commFree { kNever, 0.0, kNever, kNever },
                arrival { kNever, kNever, 0.0, kNever }, anchor { kNever, kNever, kNever, 0.0 };
            // The streams of streamOf(). (Without overlap_grad_reduce the program itself holds the once-per-iteration
            // reduction until the backward has ended.)
            Time streamFree[3] = { zero, commFree, commFree };
            double peak = 0;
            uint32_t lastKernel = unitStart[unit + 1]; // position in unitNodes
            for (uint32_t k = unitStart[unit]; k < unitStart[unit + 1]; ++k) {
                const uint32_t i = unitNodes[k];
                const ProgramNode& node = program.nodes[i];
                if (regular && isIterationReduction(node))
                    continue;
                mark[i] = pass;
                if (node.kind == NodeKind::Compute)
                    lastKernel = k;
                peak = std::max(peak, static_cast<double>(liveAt[i] - (regular ? reductionLive[i] : 0)) - before[unit]);
                // Dependencies inside the unit by their simulated finish; on communication of earlier units (the
                // optimizer on the last backward's gradient reduction) by the time the stream drains; on compute of
                // earlier units by the anchor (the last kernel before the unit: every node waits for the compute
                // node before it, which for the unit's head is that one). A compute node also waits for its
                // stream, which frees at the start.
                Time ready = node.dataDeps.empty() && node.ctrlDeps.empty() ? anchor : Time {};
                auto waitFor = [&](NodeId d) {
                    if (mark[d.value] == pass)
                        ready.raise(finish[d.value]);
                    else if (program.nodes[d.value].kind == NodeKind::Collective
                        || program.nodes[d.value].kind == NodeKind::Send)
                        ready.raise(commFree);
                    else
                        ready.raise(anchor);
                };
                for (NodeId d : node.dataDeps)
                    waitFor(d);
                for (NodeId d : node.ctrlDeps)
                    waitFor(d);
                if (node.kind == NodeKind::Recv) {
                    ready.raise(arrival);
                    finish[i] = ready;
                    continue;
                }
                const int s = streamOf(node);
                ready.raise(streamFree[s]);
                finish[i] = ready.plus(duration[i]);
                streamFree[s] = finish[i];
                if (s == 0)
                    ends.compute.raise(finish[i]);
                else if (!hiddenBehindNextForward(node, rates))
                    ends.comm.raise(finish[i]);
                if (node.kind == NodeKind::Compute)
                    ends.kernels.raise(finish[i]);
                if (node.kind == NodeKind::Send) {
                    ends.output.raise(finish[i]);
                    prof.sendTimeS += duration[i];
                    prof.sendBytes += static_cast<double>(node.bytes);
                    prof.sendCount += 1;
                }
            }
            // The chain behind the last kernel (UnitProfile::commAfterKernels): communication that waits for it,
            // directly, through other such nodes, or behind one on its stream.
            if (lastKernel < unitStart[unit + 1]) {
                const uint32_t last = unitNodes[lastKernel];
                afterLastKernel[last] = 0;
                trailMark[last] = pass;
                double streamTrail[3] = { kNever, kNever, kNever };
                for (uint32_t k = lastKernel + 1; k < unitStart[unit + 1]; ++k) {
                    const uint32_t i = unitNodes[k];
                    const ProgramNode& node = program.nodes[i];
                    if (mark[i] != pass || node.kind == NodeKind::Recv)
                        continue;
                    const int st = streamOf(node);
                    if (st == 0)
                        continue;
                    double t = streamTrail[st];
                    auto follow = [&](NodeId d) {
                        if (trailMark[d.value] == pass)
                            t = std::max(t, afterLastKernel[d.value]);
                    };
                    for (NodeId d : node.dataDeps)
                        follow(d);
                    for (NodeId d : node.ctrlDeps)
                        follow(d);
                    if (!defined(t))
                        continue;
                    afterLastKernel[i] = t + duration[i];
                    trailMark[i] = pass;
                    streamTrail[st] = afterLastKernel[i];
                    if (!hiddenBehindNextForward(node, rates))
                        prof.commAfterKernels = std::max(prof.commAfterKernels, afterLastKernel[i]);
                }
            }
            prof.netBytes = regular ? netRegular[unit] : net[unit];
            prof.peakBytes = peak;
            return ends;
        };
        auto profileUnit = [&](uint32_t unit, bool regular) {
            UnitProfile prof;
            const Ends ends = simulateUnit(unit, regular, prof);
            auto fill = [&](UnitEnd& e, const Time& t) {
                e.atStart = defined(t.atStart) ? t.atStart : kNever;
                e.afterComm = defined(t.afterComm) ? t.afterComm : kNever;
                e.afterRecv = defined(t.afterRecv) ? t.afterRecv : kNever;
                e.afterAnchor = defined(t.afterAnchor) ? t.afterAnchor : kNever;
            };
            fill(prof.compute, ends.compute);
            fill(prof.kernels, ends.kernels);
            fill(prof.comm, ends.comm);
            fill(prof.output, ends.output);
            if (!defined(prof.compute.atStart))
                prof.compute.atStart = 0;
            return prof;
        };

        // One profile per kind and local chunk: the forward, a backward of a micro-batch before the last (the last
        // one without the iteration reduction), the last backward, and the tail.
        out = StageProfile {};
        out.residentBytes = static_cast<double>(resident);
        out.tail = profileUnit(static_cast<uint32_t>(tailUnit), false);
        const size_t v = static_cast<size_t>(shape.vr);
        std::vector<int> forward(v, -1), backward(v, -1);
        for (size_t k = 0; k < order.size(); ++k) {
            const ScheduleUnit& unit = order[k];
            (unit.backward() ? backward : forward)[static_cast<size_t>(unit.localChunk)] = static_cast<int>(k);
        }
        for (size_t c = 0; c < v; ++c) {
            if (forward[c] < 0 || backward[c] < 0) {
                error = "reduced program lacks a unit of chunk " + std::to_string(c);
                return false;
            }
            out.forward.push_back(profileUnit(static_cast<uint32_t>(forward[c]), false));
            out.lastBackward.push_back(profileUnit(static_cast<uint32_t>(backward[c]), false));
            out.backward.push_back(profileUnit(static_cast<uint32_t>(backward[c]), true));
        }
        return true;
    }

} // namespace

DistributionPlan* ReducedPlanCache::find(const Config& config)
{
    for (Entry& e : m_entries)
        if (samePlan(e.config, config)) {
            e.plan->config.training.recompute = config.training.recompute; // read by the program builder only
            e.plan->config.training.recomputeModules = config.training.recomputeModules;
            if (e.plan->config.parallelism.zero != config.parallelism.zero) {
                e.plan->config.parallelism.zero = config.parallelism.zero;
                e.plan->strategy = ShardingStrategy(e.plan->config, e.plan->mesh);
            }
            return e.plan.get();
        }
    return nullptr;
}

DistributionPlan* ReducedPlanCache::store(const Config& config, DistributionPlan plan)
{
    if (m_entries.size() >= 4)
        m_entries.erase(m_entries.begin());
    m_entries.push_back(Entry { config, std::make_unique<DistributionPlan>(std::move(plan)) });
    return m_entries.back().plan.get();
}

HardwareRates ReducedPlanCache::planRates(
    const DistributionPlan* plan, const HardwareRates& rates, const GpuSpec& gpu, const EstimateOptions& options)
{
    for (Entry& e : m_entries) {
        if (e.plan.get() != plan)
            continue;
        if (e.opFlopRate && e.gpu == &gpu && e.peakFlops == rates.peakFlops && e.kernels == rates.kernels
            && e.flatComputeEfficiency == options.flatComputeEfficiency) {
            HardwareRates out = rates;
            out.opFlopRate = e.opFlopRate;
            if (e.opByteScale)
                out.opByteScale = e.opByteScale;
            return out;
        }
        HardwareRates out = withOpRates(rates, *plan, gpu, options);
        if (out.opFlopRate) {
            e.gpu = &gpu;
            e.peakFlops = rates.peakFlops;
            e.kernels = rates.kernels;
            e.flatComputeEfficiency = options.flatComputeEfficiency;
            e.opFlopRate = out.opFlopRate;
            e.opByteScale = out.opByteScale != rates.opByteScale ? out.opByteScale : nullptr;
        }
        return out;
    }
    return withOpRates(rates, *plan, gpu, options);
}

bool ReducedPlanCache::samePlan(const Config& a, const Config& b)
{
    Config x = a;
    x.training.recompute = b.training.recompute;
    x.training.recomputeModules = b.training.recomputeModules;
    // ZeRO 0-2 shard what the program builder emits (gradient reductions, optimizer state), not the plan's
    // layouts: only ZeRO-3's flat weight shards change them (planDistribution, ShardingStrategy::zeroStage).
    if (a.parallelism.zero < 3 && b.parallelism.zero < 3)
        x.parallelism.zero = b.parallelism.zero;
    return x == b;
}

ReducedPlanCache::ReducedPlanCache() = default;
ReducedPlanCache::~ReducedPlanCache() = default;

bool quickEstimateModels(const Config& config)
{
    const ParallelismConfig& par = config.parallelism;
    if (denseBeyondChunk0(config))
        return false;
    // An unsharded gradient accumulated over the micro-batches (ZeRO >= 2 without per-micro-batch reduction) lives
    // across schedule units, which the per-unit profiles do not carry.
    return !splitsBackward(par.schedule) && layoutModelled(par) && !par.overlapMoeExpertParallelComm
        && (par.zero < 2 || par.reduceGradientsPerMicroBatch);
}

bool quickEstimate(const Config& config, const GpuSpec& gpu, const EstimateOptions& options, ModelGraphCache& graphs,
    QuickEstimate& out, std::string& error, ReducedPlanCache* plans)
{
    try {
        const ParallelismConfig& par = config.parallelism;
        const HardwareRates rates = hardwareRates(config, gpu, options);
        if (!(rates.peakFlops > 0)) {
            error = "GPU " + gpu.name + " has no peak FLOP/s for precision " + toString(config.training.precision);
            return false;
        }
        ReducedShape shape;
        shape.p = static_cast<int32_t>(par.pp);
        shape.pr = std::min(shape.p, 3);
        shape.schedule = par.schedule;
        shape.v = par.schedule == Schedule::Interleaved ? static_cast<int32_t>(par.virtualStages) : 1;
        const int64_t m64 = microBatchesPerIteration(config);
        if (m64 < 1 || m64 > (int64_t(1) << 24)) {
            error = "micro-batches per iteration out of range: " + std::to_string(m64);
            return false;
        }
        const int32_t m = static_cast<int32_t>(m64);
        const bool interleaved = par.schedule == Schedule::Interleaved && shape.v > 1;
        if (!quickEstimateModels(config)) {
            error = std::string("the quick estimate does not model schedule ") + toString(par.schedule)
                + (denseBeyondChunk0(config) ? " with an MoE model's dense first layers beyond pipeline chunk 0" : "")
                + (layoutModelled(par) ? "" : " with this pipeline_layout")
                + (par.overlapMoeExpertParallelComm ? " with the overlapped expert all-to-all" : "")
                + (par.zero >= 2 && !par.reduceGradientsPerMicroBatch ? " with gradients reduced once per iteration"
                                                                      : "");
            return false;
        }
        shape.groupSize = static_cast<int32_t>(par.microBatchGroupSize);
        shape.mr = interleaved && shape.pr >= 2 ? shape.pr : 1;

        // Layers per real chunk (the real split: uneven first/last stages, or the embedding and the loss counted
        // as layers), and the reduced layer counts to extrapolate from. First/last stage layers are extrapolated
        // from evenly split reduced plans. The embedding or loss counted as a layer is kept in the reduced plans
        // (the first or last chunk holds one layer fewer there too), so a chunk is measured by its slots (decoder
        // layers plus the embedding or loss slot): a chunk with the embedding alone is then measured, not
        // extrapolated below one layer.
        const StagePlan real = StagePlan::forConfig(config);
        const int32_t chunkCount = real.chunkCount();
        // A layout (quickEstimateModels(): the shorthands' form, any counts) is measured by slots, both counted.
        const bool layout = !par.pipelineLayout.empty();
        const bool slotted = real.splitApplied() && !PipelineSplit::fromConfig(par).uneven() && chunkCount >= 2;
        const int32_t embeddingSlot = slotted && (par.embeddingInSplit || layout) ? 1 : 0;
        const int32_t lossSlot = slotted && (par.lossInSplit || layout) ? 1 : 0;
        auto slotsOf = [&](int32_t g) { return (g == 0 ? embeddingSlot : 0) + (g == chunkCount - 1 ? lossSlot : 0); };
        std::vector<int32_t> chunkLayers(static_cast<size_t>(chunkCount)); // slots with `slotted`
        for (int32_t g = 0; g < chunkCount; ++g)
            chunkLayers[static_cast<size_t>(g)] = real.chunkLayers(g) + slotsOf(g);
        const auto [minIt, maxIt] = std::minmax_element(chunkLayers.begin(), chunkLayers.end());
        // An MoE model's dense first layers on a pipeline (DeepSeek-V3's 3; quickEstimateModels(): all in chunk 0):
        // the reduced plans' chunk 0 holds them and gains a layer where every other chunk does, so every measured
        // change is an MoE layer's, and the real chunk 0 is extrapolated from its dense layers (denseShift below).
        const int32_t denseFirst =
            config.model.family == Family::Moe && par.pp > 1 ? static_cast<int32_t>(config.model.firstDenseLayers) : 0;
        // One layer per chunk for every stage type; when real chunks hold other counts, the change that a second
        // layer per chunk makes is measured on one stage type (a middle one when there is one: pure layers) and
        // applied to all: an added decoder layer brings the same nodes, buffers and state on every stage.
        const bool exactLayers = *minIt == *maxIt && *minIt <= 2 && denseFirst == 0;
        // A stage's chunks between its first and its last are alike (the same layers, recvs and sends, and under
        // ZeRO 2/3 each backward reduces its own gradients), so reduced plans of more than three chunks per stage
        // hold three: the first, one that every chunk between stands for, the last (reducedChunk()); the tail and
        // the resident state, which follow the stage's layers, are extrapolated per reduced chunk. Where a layer
        // change is measured anyway (not exactLayers), this takes 40 % of the nodes off a 5-chunk plan; the
        // sweep of llama3-70b on 1,024 GPUs came out the same to 3e-16 of every step time. Not under ZeRO 0/1:
        // there the last unit carries the whole stage's deferred gradient reduction, which would then hold three
        // chunks' gradients, not v.
        shape.vr = shape.v;
        if (interleaved && shape.v > 3 && !exactLayers && par.zero >= 2)
            shape.vr = 3;
        // A chunk left with no decoder layer (the embedding or the loss counted as one) is extrapolated down from
        // one layer: a reduced model needs a layer in every chunk.
        // What a layer adds is not the same from the first one on where gradients are sharded per micro-batch
        // (ZeRO 2: a transient full gradient per bucket), weights gathered one layer ahead (ZeRO 3, FSDP) or the
        // layers differ (MoE: DeepSeek-V3's first dense layers, an MTP module; Mixtral's expert all-to-alls
        // measured 0.9 % off from one layer), and a chunk holding only the embedding or the loss slot is measured,
        // not extrapolated: there the base has two layers per chunk (see threeMeasured). Dense ZeRO 0/1 plans
        // without slots start from one layer per chunk: their figures are linear in the layers from the first one
        // (every peak of llama3-70b at 1,024 GPUs, llama3-8b at 16 and gpt3-175b at 64 unchanged, step times
        // within 18 ppm: far inside the quick estimate's own distance from the full synthesis, 1e-4 on the plan
        // that moved most), and their reduced programs are smaller.
        const bool uniformLayers = config.model.family != Family::Moe && config.model.mtpModules == 0;
        const bool linearFromOne = par.zero < 2 && embeddingSlot + lossSlot == 0 && uniformLayers;
        int32_t baseLayers = exactLayers ? *minIt : std::clamp(*minIt, 1, linearFromOne ? 1 : 2);
        if (int64_t(baseLayers) * shape.pr * shape.vr - embeddingSlot - lossSlot < 1)
            baseLayers = 2; // a reduced model needs a decoder layer (unreachable for a valid plan)
        const int32_t deltaType = shape.pr == 3 ? 1 : 0;
        // A layout's stage types are each extrapolated by the change measured on themselves: from the middle stage's,
        // stage 0's peak was 5 % off under ZeRO 3 (llama3-8b, "Et|tt|t|tt|t|tt|t|L") and 0.2-0.25 % under ZeRO 0-2
        // (tiny, "E|t|t|t|t|tt|tt|tL"; tiny MoE "E|tt|ttt|ttL"); with its own, those peaks are exact.
        const bool perTypeDelta = !par.pipelineLayout.empty();
        const int32_t deltaBuild = perTypeDelta ? -1 : deltaType;
        // Chunk 0 of a reduced plan holds the dense layers and, where the real chunk 0 has one, the first MoE layer
        // (under ZeRO 3 it is gathered while the last dense layer runs) where the others hold baseLayers slots:
        // its real count is measured from there.
        const int32_t chunk0Dense = std::min(denseFirst + 1, real.chunkLayers(0));
        const int32_t denseShift = denseFirst > 0 ? baseLayers - chunk0Dense - embeddingSlot : 0;
        chunkLayers[0] += denseShift;
        const int32_t mostLayers = *std::max_element(chunkLayers.begin(), chunkLayers.end());

        const Mesh realMesh(par);
        // Where the real stage each reduced stage stands for communicates (its groups' placement is cached).
        std::vector<CommPlacement> placements;
        for (int32_t sigma = 0; sigma < shape.pr; ++sigma)
            placements.emplace_back(realMesh,
                realMesh.withCoordinate(RankId { 0 }, Axis::Pp, representative(sigma, shape)),
                config.cluster.gpusPerNode);
        int64_t nodes = 0;
        auto buildProfiles = [&](int32_t layersPerChunk, int32_t onlyType, std::vector<StageProfile>& profiles) {
            Config reduced = config;
            reduced.model.layers = int64_t(layersPerChunk) * shape.pr * shape.vr - embeddingSlot - lossSlot;
            reduced.parallelism.pp = shape.pr;
            reduced.parallelism.virtualStages = shape.vr;
            // Every chunk of a reduced plan has layersPerChunk layers (slots); the real split is in chunkLayers.
            reduced.parallelism.pipelineLayout.clear();
            reduced.parallelism.firstStageLayers = 0;
            reduced.parallelism.lastStageLayers = 0;
            reduced.parallelism.embeddingInSplit = embeddingSlot > 0;
            reduced.parallelism.lossInSplit = lossSlot > 0;
            reduced.training.globalBatch = config.training.microBatch * par.dp * shape.mr;
            if (denseFirst > 0) {
                // chunk0Dense layers in chunk 0 and layersPerChunk - baseLayers more; the others as above.
                std::vector<int64_t> decoders(static_cast<size_t>(shape.pr * shape.vr), layersPerChunk);
                decoders.front() = chunk0Dense + layersPerChunk - baseLayers;
                decoders.back() -= lossSlot;
                reduced.model.layers = std::accumulate(decoders.begin(), decoders.end(), int64_t { 0 });
                reduced.parallelism.pipelineLayout = layoutOfChunks(decoders, config.model.mtpModules).toString();
                reduced.parallelism.embeddingInSplit = reduced.parallelism.lossInSplit = false;
            }
            DistributionPlan* plan = nullptr;
            std::optional<DistributionPlan> local;
            if (plans)
                plan = plans->find(reduced);
            if (!plan) {
                std::string planError;
                local = planDistribution(reduced, graphs.get(reduced.model, reduced.training.precision), planError);
                if (!local) {
                    error = "reduced plan: " + planError;
                    return false;
                }
                plan = plans ? plans->store(reduced, std::move(*local)) : &*local;
            }
            profiles.assign(static_cast<size_t>(shape.pr), StageProfile {});
            // The reduced plan's ops have the real plan's local shapes, so its per-op kernel rates are the real ones.
            const HardwareRates planRates =
                plans ? plans->planRates(plan, rates, gpu, options) : withOpRates(rates, *plan, gpu, options);
            for (int32_t sigma = 0; sigma < shape.pr; ++sigma)
                if ((onlyType < 0 || sigma == onlyType)
                    && !profileStage(*plan, sigma, shape, placements[static_cast<size_t>(sigma)], planRates,
                        profiles[static_cast<size_t>(sigma)], nodes, error))
                    return false;
            return true;
        };
        // A layer added to a chunk is not always like the next one: FSDP prefetches one layer ahead (the first added
        // layer also brings a second gathered layer into the peak, later ones do not), and where the memory peak
        // sits can move over the first few layers of ZeRO 2's per-micro-batch gradient shards. So the base has two
        // layers per chunk where every chunk has two, and the changes made by one and by two more layers are
        // measured; the second drives the extrapolation. Where a layer adds the same from the first one on
        // (linearFromOne) the second change equals the first, so one change is measured.
        const bool threeMeasured = !exactLayers && mostLayers >= baseLayers + 2 && !linearFromOne;
        std::vector<StageProfile> base, next, third;
        if (!buildProfiles(baseLayers, -1, base) || (!exactLayers && !buildProfiles(baseLayers + 1, deltaBuild, next))
            || (threeMeasured && !buildProfiles(baseLayers + 2, deltaBuild, third)))
            return false;
        // The profile of a stage type with `layers` per chunk (fractional for a stage whose chunks differ).
        auto extrapolated = [&](int32_t type, double layers) {
            const StageProfile& b = base[static_cast<size_t>(type)];
            const size_t d = static_cast<size_t>(perTypeDelta ? type : deltaType);
            if (exactLayers)
                return b;
            if (!threeMeasured || layers <= baseLayers + 1)
                return extrapolate(b, base[d], next[d], layers - baseLayers);
            return extrapolate(extrapolate(b, base[d], next[d], 1.0), next[d], third[d], layers - baseLayers - 1);
        };
        std::map<std::pair<int32_t, int32_t>, StageProfile> perChunk; // (type, layers per chunk)
        auto profileFor = [&](int32_t type, int32_t layers) -> const StageProfile& {
            auto [it, inserted] = perChunk.try_emplace({ type, layers });
            if (inserted)
                it->second = extrapolated(type, double(layers));
            return it->second;
        };

        // Point-to-point placement of every real stage towards its two neighbours.
        const int32_t p = shape.p, chunks = chunkCount;
        auto sendTime = [&](int32_t from, int32_t to, const UnitProfile& unit) {
            const RankId a = realMesh.withCoordinate(RankId { 0 }, Axis::Pp, from);
            const RankId b = realMesh.withCoordinate(RankId { 0 }, Axis::Pp, to);
            if (rates.fabric) {
                const FabricLevel level = rates.fabric->levelBetween(a.value, b.value);
                return unit.sendBytes / rates.fabric->capacityPerGpu(level)
                    + unit.sendCount * priceTransfer(0, level, *rates.fabric).timeS;
            }
            const int64_t gpn = std::max<int64_t>(1, config.cluster.gpusPerNode);
            const bool intra = a.value / gpn == b.value / gpn;
            return unit.sendBytes / (intra ? rates.intraNodeBytesPerS : rates.interNodeBytesPerS)
                + unit.sendCount * (intra ? rates.intraNodeLatencyS : rates.interNodeLatencyS);
        };

        // Replay the real schedules unit by unit. Time and memory grow with the units (every micro-batch's forward
        // and backward through every chunk: 12 bytes of order and 8 of output each): bounded, so that an absurd
        // batch (training.global_batch 2^30) is refused at once instead of taking gigabytes per sweep thread.
        const int64_t units = m64 * static_cast<int64_t>(chunks) * 2;
        if (units > kMaxQuickScheduleUnits) {
            error = "the schedule of " + std::to_string(m64) + " micro-batches through " + std::to_string(chunks)
                + " pipeline chunks has " + std::to_string(units) + " forward and backward units, more than the "
                + std::to_string(kMaxQuickScheduleUnits)
                + " the quick estimate replays (training.global_batch / (dp x micro_batch) micro-batches)";
            return false;
        }
        std::vector<std::vector<ScheduleUnit>> orders(static_cast<size_t>(p));
        for (int32_t s = 0; s < p; ++s)
            orders[static_cast<size_t>(s)] = scheduleOrder(shapeOf(shape, p, shape.v, m), s);
        // The profile of every (stage, local chunk), resolved once (map nodes are stable).
        std::vector<const StageProfile*> chunkProfile(static_cast<size_t>(chunks));
        for (int32_t g = 0; g < chunks; ++g)
            chunkProfile[static_cast<size_t>(g)] =
                &profileFor(stageType(g % p, shape), chunkLayers[static_cast<size_t>(g)]);
        auto unitProfile = [&](int32_t s, const ScheduleUnit& unit) -> const UnitProfile& {
            const StageProfile& prof = *chunkProfile[static_cast<size_t>(unit.localChunk * p + s)];
            const size_t c = static_cast<size_t>(reducedChunk(unit.localChunk, shape));
            if (!unit.backward())
                return prof.forward[c];
            return unit.microBatch == m - 1 ? prof.lastBackward[c] : prof.backward[c];
        };
        std::vector<double> output(static_cast<size_t>(m) * static_cast<size_t>(chunks) * 2, -1.0);
        auto outputIndex = [&](int32_t mb, int32_t g, bool backward) {
            return (static_cast<size_t>(mb) * static_cast<size_t>(chunks) + static_cast<size_t>(g)) * 2
                + (backward ? 1 : 0);
        };
        std::vector<size_t> position(static_cast<size_t>(p), 0);
        std::vector<double> computeFree(static_cast<size_t>(p), 0.0), commFree(static_cast<size_t>(p), 0.0),
            kernelEnd(static_cast<size_t>(p), 0.0), barrierAt(static_cast<size_t>(p), 0.0);
        std::vector<int32_t> barrierMb(static_cast<size_t>(p), -1);
        const bool reductionBarrier = par.zero >= 2; // per micro-batch (quickEstimateModels())
        for (bool progress = true; progress;) {
            progress = false;
            for (int32_t s = 0; s < p; ++s) {
                const std::vector<ScheduleUnit>& order = orders[static_cast<size_t>(s)];
                size_t& pos = position[static_cast<size_t>(s)];
                while (pos < order.size()) {
                    const ScheduleUnit& unit = order[pos];
                    const int32_t g = unit.localChunk * p + s;
                    double arrival = 0;
                    if (!unit.backward() && g > 0)
                        arrival = output[outputIndex(unit.microBatch, g - 1, false)];
                    else if (unit.backward() && g < chunks - 1)
                        arrival = output[outputIndex(unit.microBatch, g + 1, true)];
                    if (arrival < 0)
                        break;
                    const UnitProfile& prof = unitProfile(s, unit);
                    // The unit starts when its stage's compute stream is free; what needs the previous units'
                    // communication, their last kernel or the input waits for them (UnitEnd). Under ZeRO 2/3 the
                    // first compute of another micro-batch also waits for the gradient reductions of the backwards
                    // before it (the builder's reduction barrier), which a unit's profile alone does not carry.
                    double start = computeFree[static_cast<size_t>(s)];
                    if (barrierMb[static_cast<size_t>(s)] >= 0
                        && barrierMb[static_cast<size_t>(s)] != unit.microBatch) {
                        start = std::max(start, barrierAt[static_cast<size_t>(s)]);
                        barrierMb[static_cast<size_t>(s)] = -1;
                    }
                    const double commBefore = commFree[static_cast<size_t>(s)];
                    const double anchor = kernelEnd[static_cast<size_t>(s)];
                    // The unit's sends move to the real stage's placement.
                    double resend = 0;
                    if (prof.sendCount > 0)
                        resend = sendTime(s, unit.backward() ? (s - 1 + p) % p : (s + 1) % p, prof) - prof.sendTimeS;
                    const double computeEnd = prof.compute.at(start, commBefore, arrival, anchor);
                    computeFree[static_cast<size_t>(s)] = computeEnd;
                    kernelEnd[static_cast<size_t>(s)] =
                        std::max(anchor, prof.kernels.at(start, commBefore, arrival, anchor));
                    const double commEnd = prof.comm.at(start, commBefore, arrival, anchor) + resend;
                    commFree[static_cast<size_t>(s)] = std::max(commFree[static_cast<size_t>(s)], commEnd);
                    if (reductionBarrier && unit.backward()) {
                        const bool same = barrierMb[static_cast<size_t>(s)] == unit.microBatch;
                        barrierAt[static_cast<size_t>(s)] =
                            same ? std::max(barrierAt[static_cast<size_t>(s)], commEnd) : commEnd;
                        barrierMb[static_cast<size_t>(s)] = unit.microBatch;
                    }
                    const double ready =
                        prof.sendCount > 0 ? prof.output.at(start, commBefore, arrival, anchor) + resend : computeEnd;
                    output[outputIndex(unit.microBatch, g, unit.backward())] = ready;
                    ++pos;
                    progress = true;
                }
            }
        }
        QuickEstimate est;
        est.reducedNodes = nodes;
        for (int32_t s = 0; s < p; ++s) {
            if (position[static_cast<size_t>(s)] < orders[static_cast<size_t>(s)].size()) {
                error = "the pipeline schedule deadlocks at stage " + std::to_string(s);
                return false;
            }
            // The resident state and the tail follow the stage's layers, all chunks together: with the embedding
            // or the loss counted as a layer, its chunks hold different counts.
            int32_t stageSlots = real.stageLayers(s) + (s == 0 ? denseShift : 0);
            for (int32_t c = 0; c < shape.v; ++c)
                stageSlots += slotsOf(c * p + s);
            // Per reduced chunk: the reduced plans' tail and resident state cover their vr chunks' layers.
            const double stageLayers = double(stageSlots) / shape.vr;
            const StageProfile& first = *chunkProfile[static_cast<size_t>(s)];
            const StageProfile prof = stageLayers == double(chunkLayers[static_cast<size_t>(s)])
                ? first
                : extrapolated(stageType(s, shape), stageLayers);
            // The tail (optimizer, parameter gathers) after the last unit; it waits for the gradient reductions
            // still on the communication stream.
            const double start = computeFree[static_cast<size_t>(s)];
            const double commBefore = commFree[static_cast<size_t>(s)];
            const double anchor = kernelEnd[static_cast<size_t>(s)];
            const double end = std::max({ prof.tail.compute.at(start, commBefore, start, anchor),
                prof.tail.comm.at(start, commBefore, start, anchor), commBefore, start });
            est.iterationTimeS = std::max(est.iterationTimeS, end);

            // Memory: resident state plus the running sum of the units' net bytes and their peaks.
            double live = 0, peak = 0;
            for (const ScheduleUnit& unit : orders[static_cast<size_t>(s)]) {
                const UnitProfile& u = unitProfile(s, unit);
                peak = std::max(peak, live + u.peakBytes);
                live += u.netBytes;
            }
            peak = std::max(peak, live + prof.tail.peakBytes);
            const int64_t bytes = static_cast<int64_t>(std::llround(prof.residentBytes + peak));
            est.stagePeakBytes.push_back(bytes);
            est.peakBytes = std::max(est.peakBytes, bytes);
        }
        out = std::move(est);
        return true;
    } catch (const std::exception& e) {
        error = std::string("internal error in the quick estimate: ") + e.what();
        return false;
    }
}

} // namespace stagecraft
