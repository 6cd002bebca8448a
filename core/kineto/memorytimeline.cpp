// SPDX-License-Identifier: MIT
#include "kineto/memorytimeline.h"

#include "kineto/jsonsaxbase.h"

#include <algorithm>

namespace stagecraft {

const char* toString(MeasuredMemoryCategory c)
{
    switch (c) {
    case MeasuredMemoryCategory::Parameter:
        return "parameter";
    case MeasuredMemoryCategory::OptimizerState:
        return "optimizer state";
    case MeasuredMemoryCategory::Input:
        return "input";
    case MeasuredMemoryCategory::Temporary:
        return "temporary";
    case MeasuredMemoryCategory::Activation:
        return "activation";
    case MeasuredMemoryCategory::Gradient:
        return "gradient";
    case MeasuredMemoryCategory::AutogradDetail:
        return "autograd detail";
    case MeasuredMemoryCategory::Unknown:
        return "unknown";
    }
    return "?";
}

namespace {

    class MemorySax final : public JsonSaxBase
    {
    public:
        MemorySax(BoundedJsonInput& input, int maxDepth, int64_t maxPoints, MeasuredMemoryTimeline& out)
            : JsonSaxBase(input, maxDepth)
            , m_maxPoints(maxPoints)
            , m_out(out)
        {
        }
        bool sawList() const
        {
            return m_depth >= 1 || m_out.events > 0;
        }

    protected:
        bool onStart(bool isArray) override
        {
            if (m_depth == 0 && !isArray)
                return fail("expected a JSON array of [time, action, bytes, category] events (PyTorch's "
                            "export_memory_timeline raw output), found an object");
            if (m_depth == 1) {
                if (!isArray)
                    return fail(where() + ": expected an array [time, action, bytes, category], found an object");
                m_field = 0;
            }
            if (m_depth >= 2)
                return fail(where() + ": field " + std::to_string(m_field) + ": expected a number, found an "
                    + (isArray ? "array" : "object"));
            ++m_depth;
            return true;
        }
        bool onEnd(bool) override
        {
            --m_depth;
            if (m_depth == 1) {
                if (m_field != 4)
                    return fail(where() + ": expected 4 numbers [time, action, bytes, category], found "
                        + std::to_string(m_field));
                return addEvent();
            }
            if (m_depth == 0)
                flush();
            return true;
        }
        bool onValue(const JsonValue& v) override
        {
            if (m_depth == 0)
                return fail("expected a JSON array of [time, action, bytes, category] events, found " + v.describe());
            if (m_depth == 1)
                return fail(where() + ": expected an array [time, action, bytes, category], found " + v.describe());
            static const char* names[] = { "time", "action", "bytes", "category" };
            if (m_field >= 4)
                return fail(where() + ": expected 4 numbers [time, action, bytes, category], found more");
            int64_t x = 0;
            if (!v.asInteger(x))
                return fail(where() + ": field " + names[m_field] + ": expected an integer, found " + v.describe());
            if (m_field == 1 && (x < 1 || x > 4))
                return fail(where()
                    + ": field action: expected 1 (preexisting), 2 (create), 3 (increment version) "
                      "or 4 (destroy), found "
                    + std::to_string(x));
            if (m_field == 2 && (x > (int64_t { 1 } << 50) || x < -(int64_t { 1 } << 50)))
                return fail(where() + ": field bytes: expected at most 2^50 bytes, found " + std::to_string(x));
            if (m_field == 3 && (x < 0 || x >= int64_t(kMeasuredMemoryCategories)))
                return fail(where() + ": field category: expected 0 to 7, found " + std::to_string(x));
            if (m_field == 0 && x < -1)
                return fail(where() + ": field time: expected nanoseconds >= 0 (or -1 for preexisting), found "
                    + std::to_string(x));
            m_values[m_field++] = x;
            return true;
        }

    private:
        std::string where() const
        {
            return "event " + std::to_string(m_out.events);
        }
        bool addEvent()
        {
            const int64_t t = m_values[0];
            if (t >= 0 && m_haveTime && t < m_time)
                return fail(where() + ": field time: " + std::to_string(t) + " is before the previous event's "
                    + std::to_string(m_time) + " (the events must be in time order)");
            if (t >= 0 && (!m_haveTime || t != m_time)) {
                if (!flush())
                    return false;
                if (!m_haveTime)
                    m_out.startNs = double(t);
                m_time = t;
                m_haveTime = true;
            }
            m_live[size_t(m_values[3])] += m_values[2];
            m_total += m_values[2];
            ++m_out.events;
            m_pending = true;
            return true;
        }
        /// Appends the live bytes after the events so far as one point.
        bool flush()
        {
            if (!m_pending)
                return true;
            if (int64_t(m_out.points.size()) >= m_maxPoints)
                return fail("more than " + std::to_string(m_maxPoints) + " distinct time stamps");
            MeasuredMemoryPoint p;
            p.timeUs = m_haveTime ? (double(m_time) - m_out.startNs) / 1000.0 : 0.0;
            p.totalBytes = m_total;
            std::copy(std::begin(m_live), std::end(m_live), p.bytes.begin());
            if (m_out.points.empty() || m_total > m_out.peakBytes) {
                m_out.peakBytes = std::max(m_out.peakBytes, m_total);
                m_out.peakTimeUs = p.timeUs;
            }
            m_out.points.push_back(p);
            m_pending = false;
            return true;
        }

        int64_t m_maxPoints;
        MeasuredMemoryTimeline& m_out;
        int m_depth = 0;
        int m_field = 0;
        int64_t m_values[4] = {};
        int64_t m_live[kMeasuredMemoryCategories] = {};
        int64_t m_total = 0;
        int64_t m_time = 0;
        bool m_haveTime = false;
        bool m_pending = false;
    };

    MemoryTimelineReadResult readFrom(
        BoundedJsonInput& input, std::string_view sourceName, const JsonInputLimits& limits, int64_t maxPoints)
    {
        MemoryTimelineReadResult result;
        MeasuredMemoryTimeline timeline;
        timeline.source = std::string(sourceName);
        MemorySax sax(input, std::min(limits.maxDepth, 3), maxPoints, timeline);
        std::string error = sax.run();
        if (error.empty() && timeline.events == 0)
            error = "1:1: no memory events";
        if (!error.empty()) {
            result.error = std::string(sourceName) + ":" + error;
            return result;
        }
        result.timeline = std::move(timeline);
        return result;
    }

} // namespace

MemoryTimelineReadResult readMemoryTimelineFile(
    const std::filesystem::path& path, const JsonInputLimits& limits, int64_t maxPoints)
{
    std::string error;
    std::unique_ptr<BoundedJsonInput> input = BoundedJsonInput::openFile(path, limits, error);
    if (!input) {
        MemoryTimelineReadResult result;
        result.error = path.string() + ": " + error;
        return result;
    }
    return readFrom(*input, path.string(), limits, maxPoints);
}

MemoryTimelineReadResult readMemoryTimelineBytes(
    std::string_view bytes, std::string_view sourceName, const JsonInputLimits& limits, int64_t maxPoints)
{
    std::unique_ptr<BoundedJsonInput> input = BoundedJsonInput::fromMemory(bytes, limits);
    return readFrom(*input, sourceName, limits, maxPoints);
}

} // namespace stagecraft
