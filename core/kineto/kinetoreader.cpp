// SPDX-License-Identifier: MIT
#include "kineto/kinetoreader.h"

#include "kineto/jsonsaxbase.h"
#include "kineto/messagequote.h"
#include "kineto/torchdtype.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace stagecraft {

const char* toString(KinetoEventKind kind)
{
    switch (kind) {
    case KinetoEventKind::CpuOp:
        return "cpu_op";
    case KinetoEventKind::Runtime:
        return "cuda_runtime";
    case KinetoEventKind::Kernel:
        return "kernel";
    case KinetoEventKind::Memcpy:
        return "gpu_memcpy";
    case KinetoEventKind::Memset:
        return "gpu_memset";
    case KinetoEventKind::Annotation:
        return "user_annotation";
    case KinetoEventKind::GpuAnnotation:
        return "gpu_user_annotation";
    }
    return "?";
}

namespace {

    bool equalsNoCase(std::string_view a, std::string_view b)
    {
        return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
            return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
        });
    }

    bool containsNoCase(std::string_view text, std::string_view part)
    {
        if (part.size() > text.size())
            return false;
        for (size_t i = 0; i + part.size() <= text.size(); ++i)
            if (equalsNoCase(text.substr(i, part.size()), part))
                return true;
        return false;
    }

    /// The kept kind of a Kineto category, or nullopt for categories the reader drops (flows, python stacks,...).
    std::optional<KinetoEventKind> kindOfCategory(std::string_view cat)
    {
        if (equalsNoCase(cat, "cpu_op") || equalsNoCase(cat, "operator"))
            return KinetoEventKind::CpuOp;
        if (equalsNoCase(cat, "cuda_runtime") || equalsNoCase(cat, "cuda_driver") || equalsNoCase(cat, "runtime"))
            return KinetoEventKind::Runtime;
        if (equalsNoCase(cat, "kernel"))
            return KinetoEventKind::Kernel;
        if (equalsNoCase(cat, "gpu_memcpy") || equalsNoCase(cat, "memcpy"))
            return KinetoEventKind::Memcpy;
        if (equalsNoCase(cat, "gpu_memset") || equalsNoCase(cat, "memset"))
            return KinetoEventKind::Memset;
        if (equalsNoCase(cat, "user_annotation"))
            return KinetoEventKind::Annotation;
        if (equalsNoCase(cat, "gpu_user_annotation"))
            return KinetoEventKind::GpuAnnotation;
        return std::nullopt;
    }

    /// Ops whose full input shapes the calibration reads (GEMMs and attention); other ops keep none.
    bool keepsShape(std::string_view name)
    {
        static constexpr std::string_view kept[] = { "aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm",
            "aten::matmul", "aten::linear", "aten::_scaled_mm", "aten::scaled_dot_product_attention",
            "aten::_scaled_dot_product_flash_attention", "aten::_scaled_dot_product_efficient_attention",
            "aten::_scaled_dot_product_cudnn_attention", "aten::_flash_attention_forward",
            "aten::_flash_attention_backward", "aten::_scaled_dot_product_flash_attention_backward",
            "aten::_efficient_attention_forward", "aten::_efficient_attention_backward" };
        return std::find(std::begin(kept), std::end(kept), name) != std::end(kept);
    }

    /// "[0, 1, 2]" as written in "Process Group Ranks"; stops at the first thing that is not a number.
    std::vector<int64_t> parseRankList(std::string_view text, size_t maxCount)
    {
        std::vector<int64_t> ranks;
        int64_t value = 0;
        bool inNumber = false;
        for (char c : text) {
            if (c >= '0' && c <= '9') {
                if (value > (int64_t { 1 } << 40))
                    return ranks;
                value = value * 10 + (c - '0');
                inNumber = true;
            } else {
                if (inNumber) {
                    if (ranks.size() >= maxCount)
                        return ranks;
                    ranks.push_back(value);
                }
                value = 0;
                inNumber = false;
                if (c != '[' && c != ']' && c != ',' && c != ' ')
                    return ranks;
            }
        }
        if (inNumber && ranks.size() < maxCount)
            ranks.push_back(value);
        return ranks;
    }

    /// "7" or "0x1f" as a stream or device number; -1 for anything else.
    int64_t parseLaneNumber(std::string_view text)
    {
        int base = 10;
        if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
            base = 16;
            text.remove_prefix(2);
        }
        if (text.empty() || text.size() > 12)
            return -1;
        int64_t value = 0;
        for (char c : text) {
            const int digit = c >= '0' && c <= '9'   ? c - '0'
                : base == 16 && c >= 'a' && c <= 'f' ? c - 'a' + 10
                : base == 16 && c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                     : -1;
            if (digit < 0)
                return -1;
            value = value * base + digit;
        }
        return value;
    }

    /// Tensor inputs plus an output as large as the largest of them, bytes (saturating far below overflow).
    int64_t ioBytes(const KinetoShape& shape)
    {
        double total = 0, largest = 0;
        for (size_t i = 0; i < shape.dims.size() && i < shape.types.size(); ++i) {
            const int64_t element = dtypeBytes(shape.types[i]);
            if (element == 0)
                continue;
            double n = double(element);
            for (int64_t d : shape.dims[i])
                n *= double(d);
            total += n;
            largest = std::max(largest, n);
        }
        return int64_t(std::min(total + largest, 1e18));
    }

    enum class Role : uint8_t
    {
        Root,
        Top,
        Events,
        Event,
        Args,
        Dims,
        DimsEntry,
        DimsNested,
        Types,
        ArgRanks,
        Dist,
        PgConfig,
        Pg,
        PgRanks,
        DevProps,
        DevProp,
        Skip,
    };

    struct PendingEvent
    {
        std::string name, cat, ph, pid, tid;
        bool hasTs = false;
        double ts = 0, dur = 0;
        int64_t externalId = -1, correlation = -1, device = -1, stream = -1;
        KinetoShape shape;
        bool hasShape = false;
        int64_t inputBytes = 0;
        KinetoCollective collective;
        bool hasCollective = false;

        void clear()
        {
            name.clear();
            cat.clear();
            ph.clear();
            pid.clear();
            tid.clear();
            hasTs = false;
            ts = dur = 0;
            externalId = correlation = device = stream = -1;
            shape.dims.clear();
            shape.types.clear();
            hasShape = false;
            collective = KinetoCollective {};
            hasCollective = false;
        }
    };

    constexpr size_t MaxInputs = 64; ///< inputs of one op kept
    constexpr size_t MaxDims = 16; ///< dims of one input kept
    constexpr size_t MaxRanksPerList = 1 << 20;
    constexpr size_t MaxGroups = 1 << 16;

    class KinetoSax final : public JsonSaxBase
    {
    public:
        KinetoSax(BoundedJsonInput& input, const KinetoReadOptions& options, KinetoTrace& trace)
            : JsonSaxBase(input, options.limits.maxDepth)
            , m_options(options)
            , m_trace(trace)
        {
        }

        bool sawEvents() const
        {
            return m_sawEvents;
        }

    protected:
        bool onValue(const JsonValue& v) override;
        bool onStart(bool isArray) override;
        bool onEnd(bool isArray) override;

    private:
        Role parentRole() const
        {
            return m_roles.empty() ? Role::Root : m_roles.back();
        }
        std::string eventContext() const
        {
            std::string s = "traceEvents[" + std::to_string(m_eventIndex) + "]";
            if (!m_event.name.empty())
                s += " (\"" + quoteForMessage(m_event.name, 60) + "\")";
            return s;
        }
        bool fieldError(const std::string& field, const char* expected, const JsonValue& v)
        {
            return fail(eventContext() + ": field \"" + field + "\": expected " + expected + ", found " + v.describe());
        }
        bool integerField(const JsonValue& v, const std::string& field, int64_t& out)
        {
            if (!v.asInteger(out))
                return fieldError(field, "an integer", v);
            return true;
        }
        bool finishEvent();
        int32_t intern(std::vector<std::string>& table, std::unordered_map<std::string, int32_t>& index,
            const std::string& text, bool countBytes);

        const KinetoReadOptions& m_options;
        KinetoTrace& m_trace;
        std::vector<Role> m_roles;
        PendingEvent m_event;
        int64_t m_eventIndex = -1;
        bool m_sawEvents = false;
        std::unordered_map<std::string, int32_t> m_nameIndex, m_threadIndex;
        int64_t m_nameBytes = 0;
        KinetoProcessGroup m_group;
        int64_t m_deviceIndex = -1;
        int m_nestedLists = 0; ///< arrays seen inside the current "Input Dims" entry
    };

    int32_t KinetoSax::intern(std::vector<std::string>& table, std::unordered_map<std::string, int32_t>& index,
        const std::string& text, bool countBytes)
    {
        const auto it = index.find(text);
        if (it != index.end())
            return it->second;
        if (countBytes) {
            m_nameBytes += int64_t(text.size());
            if (m_nameBytes > m_options.maxNameBytes) {
                fail("more than " + std::to_string(m_options.maxNameBytes) + " bytes of distinct event names");
                return -1;
            }
        }
        const auto id = int32_t(table.size());
        table.push_back(text);
        index.emplace(text, id);
        return id;
    }

    bool KinetoSax::finishEvent()
    {
        const std::optional<KinetoEventKind> kind = kindOfCategory(m_event.cat);
        if (!kind || m_event.ph != "X") {
            ++m_trace.droppedEvents;
            return true;
        }
        if (!m_event.hasTs)
            return fail(eventContext() + ": a \"" + m_event.cat + "\" event without \"ts\"");
        if (int64_t(m_trace.events.size()) >= m_options.maxEvents)
            return fail("more than " + std::to_string(m_options.maxEvents)
                + " CPU ops, launches and GPU events: the reader keeps at most that many (profile fewer steps)");
        KinetoEvent e;
        e.kind = *kind;
        e.tsUs = m_event.ts;
        e.durUs = m_event.dur;
        e.externalId = m_event.externalId;
        e.correlation = m_event.correlation;
        e.device = m_event.device >= 0 && m_event.device < (1 << 20) ? int32_t(m_event.device) : -1;
        e.name = intern(m_trace.names, m_nameIndex, m_event.name, true);
        if (e.name < 0)
            return false;
        const bool gpu = e.kind == KinetoEventKind::Kernel || e.kind == KinetoEventKind::Memcpy
            || e.kind == KinetoEventKind::Memset || e.kind == KinetoEventKind::GpuAnnotation;
        const std::string thread = gpu ? "device " + (e.device >= 0 ? std::to_string(e.device) : m_event.pid)
                + " stream " + (m_event.stream >= 0 ? std::to_string(m_event.stream) : m_event.tid)
                                       : m_event.pid + "/" + m_event.tid;
        e.thread = intern(m_trace.threads, m_threadIndex, thread, true);
        if (e.thread < 0)
            return false;
        if (m_event.hasShape && e.kind == KinetoEventKind::CpuOp)
            e.bytes = ioBytes(m_event.shape);
        if (m_event.hasShape && e.kind == KinetoEventKind::CpuOp && keepsShape(m_event.name)) {
            e.shape = int32_t(m_trace.shapes.size());
            m_trace.shapes.push_back(std::move(m_event.shape));
        }
        if (m_event.hasCollective) {
            e.collective = int32_t(m_trace.collectives.size());
            m_trace.collectives.push_back(std::move(m_event.collective));
        }
        switch (e.kind) {
        case KinetoEventKind::CpuOp:
            ++m_trace.cpuOps;
            break;
        case KinetoEventKind::Runtime:
            ++m_trace.runtimeEvents;
            break;
        case KinetoEventKind::Kernel:
            ++m_trace.kernels;
            if (containsNoCase(m_event.name, "nccl"))
                ++m_trace.ncclKernels;
            break;
        case KinetoEventKind::Memcpy:
            ++m_trace.memcpys;
            break;
        case KinetoEventKind::Memset:
            ++m_trace.memsets;
            break;
        case KinetoEventKind::Annotation:
        case KinetoEventKind::GpuAnnotation:
            ++m_trace.annotations;
            break;
        }
        m_trace.events.push_back(e);
        return true;
    }

    bool KinetoSax::onStart(bool isArray)
    {
        const Role parent = parentRole();
        const std::string& k = key();
        Role role = Role::Skip;
        switch (parent) {
        case Role::Root:
            if (isArray) {
                role = Role::Events;
                m_sawEvents = true;
            } else
                role = Role::Top;
            break;
        case Role::Top:
            if (k == "traceEvents") {
                if (!isArray)
                    return fail("\"traceEvents\": expected an array of events, found an object");
                role = Role::Events;
                m_sawEvents = true;
            } else if (k == "distributedInfo") {
                if (isArray)
                    return fail("\"distributedInfo\": expected an object, found an array");
                role = Role::Dist;
                m_trace.distributed.present = true;
            } else if (k == "deviceProperties" && isArray)
                role = Role::DevProps;
            break;
        case Role::Events:
            ++m_eventIndex;
            if (isArray)
                return fail(
                    "traceEvents[" + std::to_string(m_eventIndex) + "]: expected an event object, found an " + "array");
            m_event.clear();
            role = Role::Event;
            break;
        case Role::Event:
            if (k == "args") {
                if (isArray)
                    return fail(eventContext() + ": field \"args\": expected an object, found an array");
                role = Role::Args;
            } else if (k == "name" || k == "cat" || k == "ph" || k == "ts" || k == "dur" || k == "pid" || k == "tid")
                return fail(eventContext() + ": field \"" + k + "\": expected a "
                    + (k == "ts" || k == "dur" ? "number" : "string") + ", found an " + (isArray ? "array" : "object"));
            break;
        case Role::Args:
            if (k == "Input Dims") {
                if (!isArray)
                    return fail(eventContext() + ": field \"Input Dims\": expected an array, found an object");
                role = Role::Dims;
                m_event.hasShape = true;
            } else if (k == "Input type") {
                if (!isArray)
                    return fail(eventContext() + ": field \"Input type\": expected an array, found an object");
                role = Role::Types;
            } else if (k == "Process Group Ranks" && isArray) {
                role = Role::ArgRanks;
                m_event.hasCollective = true;
            }
            break;
        case Role::Dims:
            if (isArray) {
                role = Role::DimsEntry;
                m_nestedLists = 0;
                if (m_event.shape.dims.size() < MaxInputs)
                    m_event.shape.dims.emplace_back();
            }
            break;
        case Role::DimsEntry:
            // A list of tensors: the dims of its first tensor stand for the input.
            role = isArray && ++m_nestedLists == 1 ? Role::DimsNested : Role::Skip;
            break;
        case Role::Dist:
            if (k == "pg_config" && isArray)
                role = Role::PgConfig;
            break;
        case Role::PgConfig:
            if (!isArray) {
                role = Role::Pg;
                m_group = KinetoProcessGroup {};
            }
            break;
        case Role::Pg:
            if (k == "ranks" && isArray)
                role = Role::PgRanks;
            break;
        case Role::DevProps:
            if (!isArray) {
                role = Role::DevProp;
                ++m_deviceIndex;
                ++m_trace.deviceCount;
            }
            break;
        default:
            break;
        }
        m_roles.push_back(role);
        return true;
    }

    bool KinetoSax::onEnd(bool)
    {
        const Role role = parentRole();
        m_roles.pop_back();
        switch (role) {
        case Role::Event:
            return finishEvent();
        case Role::Pg:
            if (m_trace.distributed.groups.size() < MaxGroups)
                m_trace.distributed.groups.push_back(std::move(m_group));
            break;
        default:
            break;
        }
        return true;
    }

    bool KinetoSax::onValue(const JsonValue& v)
    {
        const Role role = parentRole();
        const std::string& k = key();
        switch (role) {
        case Role::Root:
            return fail(std::string("expected a JSON object with \"traceEvents\" or an array of trace events, "
                                    "found ")
                + v.describe());
        case Role::Top:
            if (k == "traceEvents")
                return fail("\"traceEvents\": expected an array of events, found " + v.describe());
            if (k == "distributedInfo")
                return fail("\"distributedInfo\": expected an object, found " + v.describe());
            return true;
        case Role::Events:
            ++m_eventIndex;
            return fail(
                "traceEvents[" + std::to_string(m_eventIndex) + "]: expected an event object, found " + v.describe());
        case Role::Event:
            if (k == "name" || k == "cat" || k == "ph") {
                if (!v.isString())
                    return fieldError(k, "a string", v);
                (k == "name" ? m_event.name : k == "cat" ? m_event.cat : m_event.ph) = v.text;
            } else if (k == "ts" || k == "dur") {
                double x = 0;
                if (!v.asNumber(x))
                    return fieldError(k, "a number (microseconds)", v);
                // 1e17 us is three thousand years: anything past it is not a time.
                if (!std::isfinite(x) || std::fabs(x) > 1e17 || (k == "dur" && x < 0))
                    return fieldError(k,
                        k == "dur" ? "a duration from 0 to 1e17 microseconds" : "a time within +-1e17 microseconds", v);
                if (k == "ts") {
                    m_event.ts = x;
                    m_event.hasTs = true;
                } else
                    m_event.dur = x;
            } else if (k == "pid" || k == "tid") {
                std::string text;
                if (v.isString())
                    text = v.text.substr(0, 256);
                else if (int64_t i = 0; v.asInteger(i))
                    text = std::to_string(i);
                else
                    return fieldError(k, "an integer or a string", v);
                (k == "pid" ? m_event.pid : m_event.tid) = std::move(text);
            }
            return true;
        case Role::Args:
            if (k == "External id")
                return integerField(v, k, m_event.externalId);
            if (k == "correlation")
                return integerField(v, k, m_event.correlation);
            if (k == "device" || k == "stream") {
                // Only names the GPU lane; ROCm traces write the stream as a string ("0x0").
                int64_t& slot = k == "device" ? m_event.device : m_event.stream;
                if (v.isString())
                    slot = parseLaneNumber(v.text);
                else if (!v.asInteger(slot))
                    return fieldError(k, "an integer or a string", v);
                return true;
            }
            if (k == "In msg nelems" || k == "Out msg nelems" || k == "Group size") {
                m_event.hasCollective = true;
                int64_t& slot = k == "In msg nelems" ? m_event.collective.inNelems
                    : k == "Out msg nelems"          ? m_event.collective.outNelems
                                                     : m_event.collective.groupSize;
                return integerField(v, k, slot);
            }
            if (k == "Collective name" || k == "dtype" || k == "Process Group Name") {
                if (!v.isString())
                    return fieldError(k, "a string", v);
                m_event.hasCollective = true;
                (k == "Collective name" ? m_event.collective.name
                        : k == "dtype"  ? m_event.collective.dtype
                                        : m_event.collective.groupName) = v.text.substr(0, 256);
                return true;
            }
            if (k == "Process Group Ranks") {
                if (!v.isString())
                    return fieldError(k, "a list of ranks", v);
                m_event.hasCollective = true;
                m_event.collective.groupRanks = parseRankList(v.text, MaxRanksPerList);
                return true;
            }
            if (k == "Input Dims" || k == "Input type")
                return fieldError(k, "an array", v);
            return true;
        case Role::DimsEntry:
        case Role::DimsNested: {
            int64_t d = 0;
            if (!v.asInteger(d) || d < 0)
                return fieldError("Input Dims", "sizes (integers >= 0)", v);
            if (m_event.shape.dims.size() <= MaxInputs && !m_event.shape.dims.empty()
                && m_event.shape.dims.back().size() < MaxDims)
                m_event.shape.dims.back().push_back(d);
            return true;
        }
        case Role::Types:
            if (m_event.shape.types.size() < MaxInputs)
                m_event.shape.types.push_back(v.isString() ? v.text.substr(0, 64) : std::string());
            return true;
        case Role::ArgRanks: {
            int64_t r = 0;
            if (!v.asInteger(r))
                return fieldError("Process Group Ranks", "integers", v);
            if (m_event.collective.groupRanks.size() < MaxRanksPerList)
                m_event.collective.groupRanks.push_back(r);
            return true;
        }
        case Role::Dist:
            if (k == "backend") {
                if (!v.isString())
                    return fail("distributedInfo: field \"backend\": expected a string, found " + v.describe());
                m_trace.distributed.backend = v.text.substr(0, 256);
            } else if (k == "rank" || k == "world_size") {
                int64_t x = 0;
                if (!v.asInteger(x) || x < 0)
                    return fail(
                        "distributedInfo: field \"" + k + "\": expected an integer >= 0, found " + v.describe());
                (k == "rank" ? m_trace.distributed.rank : m_trace.distributed.worldSize) = x;
            }
            return true;
        case Role::Pg:
            if (k == "pg_name" || k == "pg_desc") {
                if (v.isString())
                    (k == "pg_name" ? m_group.name : m_group.description) = v.text.substr(0, 256);
            } else if (k == "pg_size") {
                if (!v.asInteger(m_group.size))
                    return fail(
                        "distributedInfo.pg_config: field \"pg_size\": expected an integer, found " + v.describe());
            }
            return true;
        case Role::PgRanks: {
            int64_t r = 0;
            if (!v.asInteger(r))
                return fail("distributedInfo.pg_config: field \"ranks\": expected integers, found " + v.describe());
            if (m_group.ranks.size() < MaxRanksPerList)
                m_group.ranks.push_back(r);
            return true;
        }
        case Role::DevProp:
            if (k == "name" && m_deviceIndex == 0 && v.isString())
                m_trace.deviceName = v.text.substr(0, 256);
            return true;
        default:
            return true;
        }
    }

    KinetoReadResult readFrom(BoundedJsonInput& input, std::string_view sourceName, const KinetoReadOptions& options)
    {
        KinetoReadResult result;
        KinetoTrace trace;
        trace.source = std::string(sourceName);
        KinetoSax sax(input, options, trace);
        std::string error = sax.run();
        if (error.empty() && !sax.sawEvents())
            error = "1:1: no \"traceEvents\" array: not a PyTorch profiler (Chrome trace) file";
        if (!error.empty()) {
            result.error = std::string(sourceName) + ":" + error;
            return result;
        }
        linkKinetoEvents(trace);
        result.trace = std::move(trace);
        return result;
    }

} // namespace

void linkKinetoEvents(KinetoTrace& trace)
{
    std::vector<KinetoEvent>& events = trace.events;
    // Per CPU thread, ops and launches in time order; an op encloses what starts inside it (the longer of two ops
    // starting together is the outer one), so a stack sweep gives each launch its innermost op.
    std::vector<std::vector<int32_t>> byThread(trace.threads.size());
    for (size_t i = 0; i < events.size(); ++i) {
        const KinetoEvent& e = events[i];
        if ((e.kind == KinetoEventKind::CpuOp || e.kind == KinetoEventKind::Runtime) && e.thread >= 0)
            byThread[size_t(e.thread)].push_back(int32_t(i));
    }
    for (std::vector<int32_t>& list : byThread) {
        std::stable_sort(list.begin(), list.end(), [&](int32_t a, int32_t b) {
            const KinetoEvent& x = events[size_t(a)];
            const KinetoEvent& y = events[size_t(b)];
            if (x.tsUs != y.tsUs)
                return x.tsUs < y.tsUs;
            const bool xr = x.kind == KinetoEventKind::Runtime, yr = y.kind == KinetoEventKind::Runtime;
            if (xr != yr)
                return yr; // ops before launches that start with them
            return x.durUs > y.durUs;
        });
        std::vector<int32_t> stack;
        for (int32_t i : list) {
            KinetoEvent& e = events[size_t(i)];
            while (!stack.empty()) {
                const KinetoEvent& top = events[size_t(stack.back())];
                if (top.tsUs + top.durUs >= e.tsUs && !(top.tsUs + top.durUs == e.tsUs && top.durUs > 0))
                    break;
                stack.pop_back();
            }
            e.op = stack.empty() ? -1 : stack.back();
            if (e.kind == KinetoEventKind::CpuOp)
                stack.push_back(i);
        }
    }
    std::unordered_map<int64_t, int32_t> launchByCorrelation, opByExternalId;
    for (size_t i = 0; i < events.size(); ++i) {
        const KinetoEvent& e = events[i];
        if (e.kind == KinetoEventKind::Runtime && e.correlation >= 0)
            launchByCorrelation.emplace(e.correlation, int32_t(i));
        else if (e.kind == KinetoEventKind::CpuOp && e.externalId >= 0)
            opByExternalId.emplace(e.externalId, int32_t(i));
    }
    trace.linkedKernels = 0;
    for (KinetoEvent& e : events) {
        if (e.kind != KinetoEventKind::Kernel && e.kind != KinetoEventKind::Memcpy && e.kind != KinetoEventKind::Memset)
            continue;
        e.op = -1;
        if (const auto it = launchByCorrelation.find(e.correlation);
            e.correlation >= 0 && it != launchByCorrelation.end())
            e.op = events[size_t(it->second)].op;
        else if (const auto op = opByExternalId.find(e.externalId);
                 launchByCorrelation.empty() && op != opByExternalId.end())
            e.op = op->second; // a trace without launches: Kineto's external id names the op
        if (e.kind == KinetoEventKind::Kernel && e.op >= 0)
            ++trace.linkedKernels;
    }
}

KinetoReadResult readKinetoFile(const std::filesystem::path& path, const KinetoReadOptions& options)
{
    std::string error;
    const std::string name = path.string();
    std::unique_ptr<BoundedJsonInput> input = BoundedJsonInput::openFile(path, options.limits, error);
    if (!input) {
        KinetoReadResult result;
        result.error = name + ": " + error;
        return result;
    }
    return readFrom(*input, name, options);
}

KinetoReadResult readKinetoBytes(std::string_view bytes, std::string_view sourceName, const KinetoReadOptions& options)
{
    std::unique_ptr<BoundedJsonInput> input = BoundedJsonInput::fromMemory(bytes, options.limits);
    return readFrom(*input, sourceName, options);
}

} // namespace stagecraft
