// SPDX-License-Identifier: MIT
#include "chakra/chakrareplay.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <queue>
#include <set>
#include <tuple>

namespace stagecraft {

namespace {

    constexpr uint32_t kWriteBit = 0x80000000u;
    constexpr size_t kMaxExamples = 5;

    const char* kindName(int k)
    {
        static const char* names[] = { "compute", "collective", "send", "recv", "other" };
        return names[k];
    }

    std::string bytesText(double b)
    {
        char buf[64];
        if (b >= 1024.0 * 1024 * 1024)
            std::snprintf(buf, sizeof buf, "%.2f GiB", b / (1024.0 * 1024 * 1024));
        else
            std::snprintf(buf, sizeof buf, "%.2f MiB", b / (1024.0 * 1024));
        return buf;
    }

} // namespace

TraceReplay::TraceReplay(ReplayRates rates)
    : m_rates(rates)
{
}

uint32_t TraceReplay::tensorIndex(const std::string& name, uint64_t bytes)
{
    auto [it, inserted] = m_tensorIndex.try_emplace(name, static_cast<uint32_t>(m_tensors.size()));
    if (inserted) {
        Tensor t;
        t.bytes = bytes;
        m_tensors.push_back(t);
    }
    return it->second;
}

void TraceReplay::add(const ChakraNode& node)
{
    m_ids.push_back(node.id);
    Kind kind = Kind::Other;
    double duration = 0;
    int64_t collective = -1;
    switch (node.type) {
    case ChakraNodeType::Comp: {
        kind = Kind::Compute;
        const auto ops = node.intAttr("num_ops");
        const auto size = node.uintAttr("tensor_size");
        if (ops && size)
            duration = std::max(static_cast<double>(std::max<int64_t>(0, *ops)) / m_rates.peakFlops,
                static_cast<double>(*size) / m_rates.memoryBytesPerS);
        else
            duration = node.durationMicros > 0 ? static_cast<double>(node.durationMicros) * 1e-6 : 1e-9;
        break;
    }
    case ChakraNodeType::CommColl:
    case ChakraNodeType::CommSend: {
        kind = node.type == ChakraNodeType::CommColl ? Kind::Collective : Kind::Send;
        collective = node.type == ChakraNodeType::CommColl ? node.intAttr("comm_type").value_or(-1) : -1;
        const double size = static_cast<double>(std::max<int64_t>(0, node.intAttr("comm_size").value_or(0)));
        duration = size / m_rates.linkBytesPerS + m_rates.linkLatencyS;
        break;
    }
    case ChakraNodeType::CommRecv:
        kind = Kind::Recv; // completes when its dependencies are done: the sender is not part of this file
        break;
    default:
        break;
    }
    m_kind.push_back(kind);
    m_collectiveType.push_back(collective);
    m_durationS.push_back(duration);
    m_deps.insert(m_deps.end(), node.dataDeps.begin(), node.dataDeps.end());
    m_deps.insert(m_deps.end(), node.ctrlDeps.begin(), node.ctrlDeps.end());
    m_depStart.push_back(m_deps.size());
    m_names.append(node.name, 0, std::min<size_t>(node.name.size(), 96));
    m_nameStart.push_back(m_names.size());

    const ChakraAttribute* ins = node.attr("inputs");
    const ChakraAttribute* outs = node.attr("outputs");
    const auto* inList = ins ? ins->stringListValue() : nullptr;
    const auto* outList = outs ? outs->stringListValue() : nullptr;
    if (!ins || !outs)
        m_allListed = false;
    const auto index = static_cast<int64_t>(m_ids.size() - 1);
    auto take = [&](const std::vector<std::string>* list, bool write) {
        if (!list || !m_allListed)
            return;
        for (size_t k = 0; k + 1 < list->size(); k += 2) {
            uint64_t bytes = 0;
            const std::string& s = (*list)[k + 1];
            std::from_chars(s.data(), s.data() + s.size(), bytes);
            if (bytes == 0)
                continue; // ASTRA-sim ignores tensors of size 0
            const uint32_t t = tensorIndex((*list)[k], bytes);
            if (write) {
                if (m_tensors[t].writer < 0 && !m_tensors[t].readBeforeWrite)
                    m_tensors[t].writer = index;
            } else if (m_tensors[t].writer < 0) {
                m_tensors[t].readBeforeWrite = true; // resident state: alive from the start
            }
            m_io.push_back(t | (write ? kWriteBit : 0));
        }
    };
    take(inList, false);
    take(outList, true);
    m_ioStart.push_back(m_io.size());
}

std::string TraceReplay::label(size_t i) const
{
    std::string s = "node " + std::to_string(m_ids[i]);
    if (m_nameStart[i + 1] > m_nameStart[i])
        s += " (" + m_names.substr(m_nameStart[i], m_nameStart[i + 1] - m_nameStart[i]) + ")";
    return s;
}

ReplaySummary TraceReplay::finish(std::vector<TraceFinding>& findings)
{
    ReplaySummary out;
    out.statedPeakBytes = m_statedPeak;
    const size_t n = m_ids.size();
    if (n == 0)
        return out;

    // Dependencies as file positions (dangling ones are another check's finding), children lists.
    std::unordered_map<uint64_t, uint32_t> indexOf;
    indexOf.reserve(n);
    for (size_t i = 0; i < n; ++i)
        indexOf.try_emplace(m_ids[i], static_cast<uint32_t>(i));
    std::vector<uint32_t> parents;
    std::vector<uint64_t> parentStart(n + 1, 0);
    parents.reserve(m_deps.size());
    for (size_t i = 0; i < n; ++i) {
        for (uint64_t k = m_depStart[i]; k < m_depStart[i + 1]; ++k)
            if (auto it = indexOf.find(m_deps[k]); it != indexOf.end() && it->second != i)
                parents.push_back(it->second);
        parentStart[i + 1] = parents.size();
    }
    m_deps.clear(); // no longer needed
    m_deps.shrink_to_fit();
    std::vector<uint64_t> childStart(n + 1, 0);
    for (uint32_t p : parents)
        ++childStart[p + 1];
    for (size_t i = 0; i < n; ++i)
        childStart[i + 1] += childStart[i];
    std::vector<uint32_t> children(parents.size());
    {
        std::vector<uint64_t> fill(childStart.begin(), childStart.end() - 1);
        for (size_t i = 0; i < n; ++i)
            for (uint64_t k = parentStart[i]; k < parentStart[i + 1]; ++k)
                children[fill[parents[k]]++] = static_cast<uint32_t>(i);
    }

    // Event-driven replay as ASTRA-sim issues nodes: whenever something finishes, every dependency-free node is
    // considered in ascending id; a compute node needs the (single) compute stream, a collective or send the
    // (single) communication stream, a recv nothing.
    std::vector<uint32_t> pending(n);
    for (size_t i = 0; i < n; ++i)
        pending[i] = static_cast<uint32_t>(parentStart[i + 1] - parentStart[i]);
    using Ready = std::set<std::pair<uint64_t, uint32_t>>; // (id, position)
    // The event loop, run twice: as timed (escapes, makespan, the as-run memory peak) and with communication
    // taking no time, which leaves the order alone to decide when tensors are freed (the memory check).
    auto replay = [&](bool instantCommunication, std::vector<double>& start, std::vector<double>& end) {
        std::vector<uint32_t> waiting = pending;
        Ready compute, comm, free;
        start.assign(n, -1);
        end.assign(n, -1);
        using Event = std::pair<double, uint32_t>;
        std::priority_queue<Event, std::vector<Event>, std::greater<>> running;
        bool computeBusy = false, commBusy = false;
        double now = 0;
        auto ready = [&](uint32_t i) {
            const Kind k = m_kind[i];
            (k == Kind::Compute                                  ? compute
                    : (k == Kind::Collective || k == Kind::Send) ? comm
                                                                 : free)
                .emplace(m_ids[i], i);
        };
        for (size_t i = 0; i < n; ++i)
            if (waiting[i] == 0)
                ready(static_cast<uint32_t>(i));
        auto issue = [&](uint32_t i) {
            start[i] = now;
            const bool isComm = m_kind[i] != Kind::Compute;
            running.emplace(now + (instantCommunication && isComm ? 0.0 : m_durationS[i]), i);
        };
        auto issueReady = [&] {
            while (!free.empty()) {
                issue(free.begin()->second);
                free.erase(free.begin());
            }
            if (!computeBusy && !compute.empty()) {
                issue(compute.begin()->second);
                compute.erase(compute.begin());
                computeBusy = true;
            }
            if (!commBusy && !comm.empty()) {
                issue(comm.begin()->second);
                comm.erase(comm.begin());
                commBusy = true;
            }
        };
        issueReady();
        while (!running.empty()) {
            const auto [t, i] = running.top();
            running.pop();
            now = t;
            end[i] = t;
            if (m_kind[i] == Kind::Compute)
                computeBusy = false;
            else if (m_kind[i] == Kind::Collective || m_kind[i] == Kind::Send)
                commBusy = false;
            for (uint64_t k = childStart[i]; k < childStart[i + 1]; ++k)
                if (--waiting[children[k]] == 0)
                    ready(children[k]);
            if (running.empty() || running.top().first > now)
                issueReady();
        }
        return now;
    };
    std::vector<double> start, end, orderStart, orderEnd;
    const double now = replay(false, start, end);
    out.makespanS = now;

    // Escapes: the latest compute node each node waits for, through its dependencies, in dependency order.
    // Waiting for compute node c means waiting for every compute node before c only when the compute nodes are
    // chained, so an unchained compute node is itself an escape.
    std::vector<uint32_t> order;
    order.reserve(n);
    {
        std::vector<uint32_t> left(n);
        for (size_t i = 0; i < n; ++i) {
            left[i] = static_cast<uint32_t>(parentStart[i + 1] - parentStart[i]);
            if (left[i] == 0)
                order.push_back(static_cast<uint32_t>(i));
        }
        for (size_t q = 0; q < order.size(); ++q)
            for (uint64_t k = childStart[order[q]]; k < childStart[order[q] + 1]; ++k)
                if (--left[children[k]] == 0)
                    order.push_back(children[k]);
    }
    std::vector<int64_t> anchor(n, -1);
    std::vector<int64_t> previousCompute(n, -1);
    for (size_t i = 1; i < n; ++i)
        previousCompute[i] = m_kind[i - 1] == Kind::Compute ? static_cast<int64_t>(i - 1) : previousCompute[i - 1];
    // A node that the compute node before it depends on (a producer writes an input's collective after its
    // consumer) cannot wait for it, and runs before it anyway: not an escape. Bounded search forward from i.
    std::vector<uint32_t> seen(n, UINT32_MAX), stack;
    auto feeds = [&](uint32_t from, int64_t target) {
        stack.assign(1, from);
        seen[from] = from;
        for (size_t visited = 0; !stack.empty() && visited < 100000; ++visited) {
            const uint32_t v = stack.back();
            stack.pop_back();
            if (static_cast<int64_t>(v) == target)
                return true;
            for (uint64_t k = childStart[v]; k < childStart[v + 1]; ++k)
                if (seen[children[k]] != from) {
                    seen[children[k]] = from;
                    stack.push_back(children[k]);
                }
        }
        return false;
    };
    std::map<int, std::pair<uint64_t, std::vector<std::string>>> escapes, unordered; // kind -> count, examples
    for (uint32_t i : order) {
        int64_t a = -1;
        for (uint64_t k = parentStart[i]; k < parentStart[i + 1]; ++k)
            a = std::max(a, anchor[parents[k]]);
        if (previousCompute[i] >= 0 && a < previousCompute[i] && !feeds(i, previousCompute[i])) {
            // It does not wait. Whether it runs early here depends on the timing: the replay decides between an
            // escape (it starts before its predecessor) and an order that holds only by timing (a note).
            const bool early = start[i] < start[static_cast<size_t>(previousCompute[i])];
            auto& [count, examples] = (early ? escapes : unordered)[static_cast<int>(m_kind[i])];
            ++count;
            if (examples.size() < kMaxExamples)
                examples.push_back(label(i) + " can start before " + label(static_cast<size_t>(previousCompute[i])));
        }
        anchor[i] = m_kind[i] == Kind::Compute ? static_cast<int64_t>(i) : a;
    }
    auto report = [&](auto& byKind, FindingSeverity severity, const char* check, const char* what) {
        for (auto& [kind, entry] : byKind) {
            TraceFinding f;
            f.severity = severity;
            f.check = check;
            f.subject = kindName(kind);
            f.count = entry.first;
            f.examples = std::move(entry.second);
            f.message = std::to_string(entry.first) + " " + kindName(kind) + what + f.examples.front();
            findings.push_back(std::move(f));
        }
    };
    report(escapes, FindingSeverity::Error, "escapes-phase",
        " node(s) do not wait, through their dependencies, for the compute node before them in the file, and a "
        "consumer that runs nodes as soon as they are ready (ASTRA-sim) starts them first: they run outside their "
        "place in the schedule, e.g. ");
    report(unordered, FindingSeverity::Note, "order-by-timing",
        " node(s) do not wait for the compute node before them in the file but run after it in the replay (their "
        "place holds by timing only), e.g. ");
    for (const auto& [kind, entry] : escapes)
        out.escapes += entry.first;

    if (!m_allListed)
        return out;

    // Tensor lifetimes as ASTRA-sim's track-local-mem keeps them: from the start of the first writer (time 0 for
    // a tensor read before any write) to the end of the last reader; a tensor nobody reads stays to the end.
    // The producer's figure cannot know when overlapped communication ends; it frees a collective's tensors where
    // the schedule issues it. The replay with communication taking no time has the same order-only view and is
    // compared with the stated peak; the as-run peak depends on the replay's illustrative rates and is reported.
    auto peakOf = [&](const std::vector<double>& start, const std::vector<double>& end, uint64_t* unreadCount,
                      std::vector<std::string>* unreadNames) {
        std::vector<int64_t> lastReader(m_tensors.size(), -1);
        std::vector<double> until(m_tensors.size(), -1);
        for (size_t i = 0; i < n; ++i) {
            if (end[i] < 0)
                continue;
            const double r = end[i];
            for (uint64_t k = m_ioStart[i]; k < m_ioStart[i + 1]; ++k) {
                if (m_io[k] & kWriteBit)
                    continue;
                const uint32_t t = m_io[k];
                if (r > until[t]) {
                    until[t] = r;
                    lastReader[t] = static_cast<int64_t>(i);
                }
            }
        }
        // Events in time, ties in file order with a node's allocations before its frees: while a node runs its
        // inputs and outputs are all alive (also when it takes no time).
        std::map<std::tuple<double, int64_t, int>, int64_t> delta;
        for (const auto& [name, index] : m_tensorIndex) {
            const Tensor& t = m_tensors[index];
            double from = 0;
            if (!t.readBeforeWrite) {
                if (t.writer < 0 || start[static_cast<size_t>(t.writer)] < 0)
                    continue;
                from = start[static_cast<size_t>(t.writer)];
            }
            if (t.readBeforeWrite && lastReader[index] < 0)
                continue; // its readers never run (they sit on a dependency cycle): no lifetime to count
            delta[{ from, t.readBeforeWrite ? -1 : t.writer, 0 }] += static_cast<int64_t>(t.bytes);
            if (lastReader[index] >= 0) {
                delta[{ until[index], lastReader[index], 1 }] -= static_cast<int64_t>(t.bytes);
            } else if (unreadCount) {
                ++*unreadCount;
                if (unreadNames->size() < kMaxExamples)
                    unreadNames->push_back("'" + name + "' written by " + label(static_cast<size_t>(t.writer)));
            }
        }
        int64_t live = 0, peak = 0;
        for (const auto& [time, d] : delta) {
            live += d;
            peak = std::max(peak, live);
        }
        return peak;
    };
    uint64_t unread = 0;
    std::vector<std::string> unreadExamples;
    const int64_t peak = peakOf(start, end, &unread, &unreadExamples);
    replay(true, orderStart, orderEnd);
    const int64_t awaitedPeak = peakOf(orderStart, orderEnd, nullptr, nullptr);
    out.tensorPeakBytes = static_cast<uint64_t>(peak);
    out.unreadOutputs = unread;
    if (unread > 0) {
        std::sort(unreadExamples.begin(), unreadExamples.end());
        TraceFinding f;
        f.severity = FindingSeverity::Error;
        f.check = "unread-output";
        f.count = unread;
        f.examples = unreadExamples;
        f.message = std::to_string(unread)
            + " tensor(s) are written and never read: a tensor-lifetime tracker (ASTRA-sim's track-local-mem) keeps "
              "them alive to the end of the run, e.g. "
            + unreadExamples.front();
        findings.push_back(std::move(f));
    }
    TraceFinding p;
    p.check = "replay-memory-peak";
    p.count = 1;
    if (m_statedPeak && *m_statedPeak > 0) {
        const double stated = static_cast<double>(*m_statedPeak);
        const double ratio = static_cast<double>(awaitedPeak) / stated;
        const double asRun = static_cast<double>(peak) / stated;
        const bool off = std::abs(ratio - 1.0) > 0.01;
        p.severity = off ? FindingSeverity::Error : FindingSeverity::Note;
        char r[64];
        std::snprintf(r, sizeof r, "%.4f; as run %.4f", ratio, asRun);
        p.message = "tensor-lifetime peak of the as-soon-as-ready replay with instant communication "
            + bytesText(static_cast<double>(awaitedPeak)) + " (as run " + bytesText(static_cast<double>(peak))
            + ") vs the producer's stated peak_memory_bytes " + bytesText(stated) + " (ratio " + r
            + (off ? "; more than 1 % apart: the dependencies do not hold the schedule's memory)" : ")");
    } else {
        p.severity = FindingSeverity::Note;
        p.message = "tensor-lifetime peak of the as-soon-as-ready replay: " + bytesText(static_cast<double>(peak));
    }
    findings.push_back(std::move(p));
    return out;
}

} // namespace stagecraft
