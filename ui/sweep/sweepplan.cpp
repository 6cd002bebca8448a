// SPDX-License-Identifier: MIT
#include "sweep/sweepplan.h"

#include "models/formatting.h"

#include <QObject>
#include <algorithm>
#include <cmath>
#include <numeric>

namespace stagecraft {

const SweepCandidate* sweepCandidate(const SweepResult& result, SweepPlanRef ref)
{
    const std::vector<SweepCandidate>& list = ref.fitting ? result.ranked : result.rejected;
    if (ref.index < 0 || static_cast<size_t>(ref.index) >= list.size())
        return nullptr;
    return &list[static_cast<size_t>(ref.index)];
}

bool isSweepPlan(const Config& config, const SweepCandidate& plan)
{
    return sweepPlanConfig(config, plan) == config;
}

SweepPlanRef findSweepPlan(const SweepResult& result, const Config& config)
{
    if (config.parallelism.worldSize() != result.gpus)
        return {};
    for (bool fitting : { true, false }) {
        const std::vector<SweepCandidate>& list = fitting ? result.ranked : result.rejected;
        for (size_t i = 0; i < list.size(); ++i)
            if (isSweepPlan(config, list[i]))
                return { fitting, static_cast<int>(i) };
    }
    return {};
}

bool sameSweepInputs(const Config& a, const Config& b)
{
    // The schedule is a plan field, but the base's own schedule is among those a sweep tries (SweepOptions).
    const SweepCandidate neutral;
    auto own = [](const Config& c) {
        const ParallelismConfig& p = c.parallelism;
        return std::pair(p.schedule, p.schedule == Schedule::Interleaved ? p.virtualStages : int64_t(1));
    };
    return sweepPlanConfig(a, neutral) == sweepPlanConfig(b, neutral) && own(a) == own(b);
}

namespace {

    /// The plans of `ranked` that no other plan dominates when lower is better in both `x` and `y` (functions of a
    /// plan), by ascending x.
    template <typename X, typename Y> std::vector<int> paretoFront(const std::vector<SweepCandidate>& ranked, X x, Y y)
    {
        std::vector<int> order(ranked.size());
        std::iota(order.begin(), order.end(), 0);
        auto at = [&](size_t i) -> const SweepCandidate& { return ranked[static_cast<size_t>(order[i])]; };
        std::sort(order.begin(), order.end(), [&](int a, int b) {
            const SweepCandidate& p = ranked[static_cast<size_t>(a)];
            const SweepCandidate& q = ranked[static_cast<size_t>(b)];
            if (x(p) != x(q))
                return x(p) < x(q);
            if (y(p) != y(q))
                return y(p) < y(q);
            return a < b;
        });
        std::vector<int> front;
        bool any = false;
        double best = 0; // the lowest y among plans with a strictly smaller x
        for (size_t i = 0; i < order.size();) {
            // One group of equal x: its best plans (ties included: equal points do not dominate each other) are on
            // the front unless a plan of smaller x is at least as good.
            const auto group = x(at(i));
            const double lowest = y(at(i));
            size_t end = i;
            while (end < order.size() && x(at(end)) == group)
                ++end;
            if (!any || lowest < best) {
                for (size_t k = i; k < end && y(at(k)) == lowest; ++k)
                    front.push_back(order[k]);
                best = lowest;
                any = true;
            }
            i = end;
        }
        return front;
    }

} // namespace

std::vector<int> sweepParetoFront(const std::vector<SweepCandidate>& ranked)
{
    return paretoFront(
        ranked, [](const SweepCandidate& c) { return c.peakBytes; },
        [](const SweepCandidate& c) { return c.stepTimeS; });
}

std::vector<int> sweepServingParetoFront(const std::vector<SweepCandidate>& ranked)
{
    return paretoFront(
        ranked, [](const SweepCandidate& c) { return c.tpotS; },
        [](const SweepCandidate& c) { return -c.tokensPerSPerGpu; });
}

std::vector<int> sweepParetoFront(const SweepResult& result)
{
    return result.serving ? sweepServingParetoFront(result.ranked) : sweepParetoFront(result.ranked);
}

bool sweepPlanIsTimed(const SweepCandidate& plan)
{
    return plan.rejection == SweepRejection::None || plan.rejection == SweepRejection::OutOfMemory
        || plan.rejection == SweepRejection::OverTpotLimit;
}

QString sweepPlanText(const SweepCandidate& plan, bool serving)
{
    if (serving) {
        QString text = QStringLiteral("dp %1 \u00b7 tp %2 \u00b7 pp %3").arg(plan.dp).arg(plan.tp).arg(plan.pp);
        if (plan.cp > 1)
            text += QStringLiteral(" \u00b7 cp %1").arg(plan.cp);
        if (plan.ep > 1)
            text += QStringLiteral(" \u00b7 ep %1").arg(plan.ep);
        return text;
    }
    QString text =
        QStringLiteral("dp %1 \u00b7 tp %2 \u00b7 pp %3 \u00b7 cp %4 \u00b7 ep %5 \u00b7 mb %6 \u00b7 "
                       "recompute %7 \u00b7 ZeRO %8")
            .arg(plan.dp)
            .arg(plan.tp)
            .arg(plan.pp > 1 ? QStringLiteral("%1 (%2)").arg(plan.pp).arg(QString::fromStdString(scheduleText(plan)))
                             : QString::number(plan.pp))
            .arg(plan.cp)
            .arg(plan.ep)
            .arg(plan.microBatch)
            .arg(QLatin1String(toString(plan.recompute)))
            .arg(plan.zero);
    if (plan.sequenceParallel)
        text += QStringLiteral(" \u00b7 SP");
    if (const std::string varied = variantText(plan); !varied.empty())
        text += QStringLiteral(" \u00b7 ") + QString::fromStdString(varied);
    if (!plan.pipelineLayout.empty())
        text += QStringLiteral(" ") + QString::fromStdString(plan.pipelineLayout);
    return text;
}

QVariant sweepFieldValue(const SweepCandidate& c, SweepField field)
{
    switch (field) {
    case SweepField::Dp:
        return qint64(c.dp);
    case SweepField::Tp:
        return qint64(c.tp);
    case SweepField::Pp:
        return qint64(c.pp);
    case SweepField::Schedule: // sorts no pipeline, GPipe, 1F1B, then interleaved by virtual stages
        return c.pp == 1 ? qint64(-1) : qint64(static_cast<int>(c.schedule)) * 1000 + c.virtualStages;
    case SweepField::Cp:
        return qint64(c.cp);
    case SweepField::Ep:
        return qint64(c.ep);
    case SweepField::MicroBatch:
        return qint64(c.microBatch);
    case SweepField::Recompute:
        return static_cast<int>(c.recompute);
    case SweepField::Zero:
        return c.zero;
    case SweepField::SequenceParallel:
        return c.sequenceParallel;
    case SweepField::StepTime:
        return c.stepTimeS;
    case SweepField::Mfu:
        return c.mfu;
    case SweepField::Peak:
        return qint64(c.peakBytes);
    case SweepField::TokensPerGpu:
        return c.tokensPerSPerGpu;
    case SweepField::Tpot:
        return c.tpotS;
    case SweepField::Ttft:
        return c.ttftS;
    }
    return {};
}

QVariant sweepFieldDisplay(const SweepCandidate& c, SweepField field)
{
    switch (field) {
    case SweepField::Recompute:
        return QLatin1String(toString(c.recompute));
    case SweepField::Schedule: {
        // What the sweep varied beyond the degrees (Also try) rides with the schedule: "1f1b · fp8".
        const std::string varied = variantText(c);
        return QString::fromStdString(scheduleText(c) + (varied.empty() ? "" : " \u00b7 " + varied));
    }
    case SweepField::SequenceParallel:
        return c.sequenceParallel ? QObject::tr("yes") : QObject::tr("no");
    case SweepField::StepTime:
        return formatDuration(c.stepTimeS);
    case SweepField::Mfu:
        return QString(QString::number(c.mfu * 100, 'f', 1) + QStringLiteral(" %"));
    case SweepField::Peak:
        return formatByteCount(static_cast<double>(c.peakBytes));
    case SweepField::TokensPerGpu:
        return QString::number(c.tokensPerSPerGpu, 'f', 1);
    case SweepField::Tpot:
        return formatDuration(c.tpotS);
    case SweepField::Ttft:
        return formatDuration(c.ttftS);
    default:
        return sweepFieldValue(c, field);
    }
}

QString sweepFieldTitle(SweepField field)
{
    switch (field) {
    case SweepField::Dp:
        return QObject::tr("dp");
    case SweepField::Tp:
        return QObject::tr("tp");
    case SweepField::Pp:
        return QObject::tr("pp");
    case SweepField::Schedule:
        return QObject::tr("Schedule");
    case SweepField::Cp:
        return QObject::tr("cp");
    case SweepField::Ep:
        return QObject::tr("ep");
    case SweepField::MicroBatch:
        return QObject::tr("mb");
    case SweepField::Recompute:
        return QObject::tr("Recompute");
    case SweepField::Zero:
        return QObject::tr("ZeRO");
    case SweepField::SequenceParallel:
        return QObject::tr("SP");
    case SweepField::StepTime:
        return QObject::tr("Step time");
    case SweepField::Mfu:
        return QObject::tr("MFU");
    case SweepField::Peak:
        return QObject::tr("Peak memory");
    case SweepField::TokensPerGpu:
        return QObject::tr("Tokens/s/GPU");
    case SweepField::Tpot:
        return QObject::tr("TPOT");
    case SweepField::Ttft:
        return QObject::tr("TTFT");
    }
    return {};
}

QString sweepFieldToolTip(SweepField field)
{
    switch (field) {
    case SweepField::Dp:
        return QObject::tr("Data-parallel degree");
    case SweepField::Tp:
        return QObject::tr("Tensor-parallel degree");
    case SweepField::Pp:
        return QObject::tr("Pipeline-parallel degree (stages)");
    case SweepField::Schedule:
        return QObject::tr("Pipeline schedule; interleaved with its virtual stages per rank");
    case SweepField::Cp:
        return QObject::tr("Context-parallel degree");
    case SweepField::Ep:
        return QObject::tr("Expert-parallel degree (MoE models)");
    case SweepField::MicroBatch:
        return QObject::tr("Micro-batch size (sequences per micro-batch per replica)");
    case SweepField::Recompute:
        return QObject::tr("Activation recomputation");
    case SweepField::Zero:
        return QObject::tr("ZeRO stage (3 = FSDP)");
    case SweepField::SequenceParallel:
        return QObject::tr("Sequence parallelism alongside tensor parallelism");
    case SweepField::StepTime:
        return QObject::tr("Estimated iteration time");
    case SweepField::Mfu:
        return QObject::tr("Model FLOPs utilization");
    case SweepField::Peak:
        return QObject::tr("Peak memory of the fullest GPU; for serving, at the generation's last token (the "
                           "Overview's and Memory tab's peak is the programs' own, over the prefill and the first "
                           "decode steps)");
    case SweepField::TokensPerGpu:
        return QObject::tr("Output tokens per second per GPU over the whole generation, prefill included: the "
                           "ranking key");
    case SweepField::Tpot:
        return QObject::tr("Time per output token: the mean time between two tokens of one sequence over the "
                           "generation");
    case SweepField::Ttft:
        return QObject::tr("Time to first token: until every sequence of the batch has its first token (the "
                           "prefill)");
    }
    return {};
}

bool sweepFieldIsText(SweepField field)
{
    return field == SweepField::Recompute || field == SweepField::Schedule || field == SweepField::SequenceParallel;
}

SweepColumns::SweepColumns(std::vector<SweepField> fields)
    : m_fields(std::move(fields))
{
}

SweepColumns SweepColumns::serving()
{
    return SweepColumns({ SweepField::Dp, SweepField::Tp, SweepField::Pp, SweepField::Cp, SweepField::Ep,
        SweepField::TokensPerGpu, SweepField::Tpot, SweepField::Ttft, SweepField::Peak });
}

int SweepColumns::count() const
{
    return static_cast<int>(m_fields.size()) + 1;
}

int SweepColumns::column(SweepField field) const
{
    const auto it = std::find(m_fields.begin(), m_fields.end(), field);
    return it == m_fields.end() ? -1 : static_cast<int>(it - m_fields.begin()) + 1;
}

std::optional<SweepField> SweepColumns::field(int column) const
{
    if (column < 1 || column >= count())
        return std::nullopt;
    return m_fields[static_cast<size_t>(column - 1)];
}

namespace {

    /// `scale` and `name` as the unit of values from `min` up, with the decimals that give `min` three significant
    /// digits (the larger values have as many decimals, so the column lines up).
    SweepServingUnits::Unit unitFor(double min, double scale, const QString& name)
    {
        SweepServingUnits::Unit unit { scale, name, 1 };
        const double low = min / scale;
        unit.decimals = low > 0 ? std::clamp(2 - static_cast<int>(std::floor(std::log10(low))), 0, 3) : 1;
        return unit;
    }

    /// A duration unit for values from `minS` to `maxS`: the largest value's (durationUnitFor()).
    SweepServingUnits::Unit durationUnit(double minS, double maxS)
    {
        const DurationUnit d = durationUnitFor(maxS);
        return unitFor(minS, d.seconds, QString::fromUtf8(d.suffix).trimmed());
    }

} // namespace

SweepServingUnits sweepServingUnits(const SweepResult& result)
{
    // Per column the smallest positive and the largest value over the plans with an estimate.
    std::pair<double, double> tpot, ttft, peak;
    auto extend = [](std::pair<double, double>& range, double value) {
        if (value <= 0)
            return;
        range.first = range.first > 0 ? std::min(range.first, value) : value;
        range.second = std::max(range.second, value);
    };
    for (const auto* list : { &result.ranked, &result.rejected })
        for (const SweepCandidate& c : *list)
            if (sweepPlanIsTimed(c)) {
                extend(tpot, c.tpotS);
                extend(ttft, c.ttftS);
                extend(peak, static_cast<double>(c.peakBytes));
            }
    constexpr double kMiB = 1024.0 * 1024.0, kGiB = 1024.0 * kMiB;
    const bool gib = peak.second >= kGiB;
    return { durationUnit(tpot.first, tpot.second), durationUnit(ttft.first, ttft.second),
        unitFor(peak.first, gib ? kGiB : kMiB, gib ? QStringLiteral("GiB") : QStringLiteral("MiB")) };
}

QString sweepServingTitle(SweepField field, const SweepServingUnits& units)
{
    auto withUnit = [&](const SweepServingUnits::Unit& unit) {
        return QStringLiteral("%1 (%2)").arg(sweepFieldTitle(field), unit.name);
    };
    switch (field) {
    case SweepField::Tpot:
        return withUnit(units.tpot);
    case SweepField::Ttft:
        return withUnit(units.ttft);
    case SweepField::Peak: // short: the serving columns fit beside the chart on a 1366-pixel screen
        // At the last token, not the programs' peak; on two lines, as narrow as "Peak (GiB)" was beside the chart.
        return QObject::tr("End peak\n(%1)").arg(units.peak.name);
    default:
        return sweepFieldTitle(field);
    }
}

QVariant sweepServingDisplay(const SweepCandidate& c, SweepField field, const SweepServingUnits& units)
{
    auto inUnit = [](double value, const SweepServingUnits::Unit& unit) {
        return QString::number(value / unit.scale, 'f', unit.decimals);
    };
    switch (field) {
    case SweepField::Tpot:
        return inUnit(c.tpotS, units.tpot);
    case SweepField::Ttft:
        return inUnit(c.ttftS, units.ttft);
    case SweepField::Peak:
        return inUnit(static_cast<double>(c.peakBytes), units.peak);
    default:
        return sweepFieldDisplay(c, field);
    }
}

} // namespace stagecraft
