// SPDX-License-Identifier: MIT
#include "sweep/sweepplan.h"

#include "models/formatting.h"

#include <QObject>
#include <algorithm>
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

std::vector<int> sweepParetoFront(const std::vector<SweepCandidate>& ranked)
{
    std::vector<int> order(ranked.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int a, int b) {
        const SweepCandidate& x = ranked[static_cast<size_t>(a)];
        const SweepCandidate& y = ranked[static_cast<size_t>(b)];
        if (x.peakBytes != y.peakBytes)
            return x.peakBytes < y.peakBytes;
        if (x.stepTimeS != y.stepTimeS)
            return x.stepTimeS < y.stepTimeS;
        return a < b;
    });
    std::vector<int> front;
    bool any = false;
    double best = 0; // the lowest step time among plans with a strictly smaller peak
    for (size_t i = 0; i < order.size();) {
        // One group of equal peaks: its fastest plans (ties included: equal points do not dominate each other) are
        // on the front unless a smaller plan is at least as fast.
        const int64_t peak = ranked[static_cast<size_t>(order[i])].peakBytes;
        const double fastest = ranked[static_cast<size_t>(order[i])].stepTimeS;
        size_t end = i;
        while (end < order.size() && ranked[static_cast<size_t>(order[end])].peakBytes == peak)
            ++end;
        if (!any || fastest < best) {
            for (size_t k = i; k < end && ranked[static_cast<size_t>(order[k])].stepTimeS == fastest; ++k)
                front.push_back(order[k]);
            best = fastest;
            any = true;
        }
        i = end;
    }
    return front;
}

QString sweepPlanText(const SweepCandidate& plan)
{
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
    }
    return {};
}

QVariant sweepFieldDisplay(const SweepCandidate& c, SweepField field)
{
    switch (field) {
    case SweepField::Recompute:
        return QLatin1String(toString(c.recompute));
    case SweepField::Schedule:
        return QString::fromStdString(scheduleText(c));
    case SweepField::SequenceParallel:
        return c.sequenceParallel ? QObject::tr("yes") : QObject::tr("no");
    case SweepField::StepTime:
        return formatDuration(c.stepTimeS);
    case SweepField::Mfu:
        return QString(QString::number(c.mfu * 100, 'f', 1) + QStringLiteral(" %"));
    case SweepField::Peak:
        return formatByteCount(static_cast<double>(c.peakBytes));
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
        return QObject::tr("Peak memory of the fullest GPU");
    }
    return {};
}

bool sweepFieldIsText(SweepField field)
{
    return field == SweepField::Recompute || field == SweepField::Schedule || field == SweepField::SequenceParallel;
}

} // namespace stagecraft
