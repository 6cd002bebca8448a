// SPDX-License-Identifier: MIT
#pragma once

#include "config/config.h"
#include "estimate/sweep.h"

#include <QString>
#include <QVariant>
#include <vector>

namespace stagecraft {

/// One plan of a SweepResult: index `index` of `ranked` (fitting) or of `rejected`. Invalid when index < 0.
struct SweepPlanRef
{
    bool fitting = true;
    int index = -1;

    bool isValid() const
    {
        return index >= 0;
    }
    friend bool operator==(const SweepPlanRef&, const SweepPlanRef&) = default;
};

/// The plan `ref` points at, or null when it is invalid or out of range.
const SweepCandidate* sweepCandidate(const SweepResult& result, SweepPlanRef ref);

/// True when `config` is exactly the plan (the fields sweepPlanConfig() sets; sequence parallelism and the schedule
/// included).
bool isSweepPlan(const Config& config, const SweepCandidate& plan);

/// The plan of `config` among the candidates of `result` (fitting first, then rejected); invalid when the config's
/// world is not the swept GPU count or no candidate matches.
SweepPlanRef findSweepPlan(const SweepResult& result, const Config& config);

/// True when `a` and `b` differ at most in the fields a sweep plan sets (see sweepPlanConfig), i.e. a sweep of
/// one is a sweep of the other.
bool sameSweepInputs(const Config& a, const Config& b);

/// The Pareto front of the fitting plans: indices into `ranked` of the plans that no other plan dominates (a plan
/// dominates another when its step time and its peak memory are both lower or equal, and one of them is lower).
/// Ordered by ascending peak memory (so by descending step time). O(n log n).
std::vector<int> sweepParetoFront(const std::vector<SweepCandidate>& ranked);

/// A plan field as the sweep tables show it. Both tables take their cells and titles from here.
enum class SweepField
{
    Dp,
    Tp,
    Pp,
    Schedule,
    Cp,
    Ep,
    MicroBatch,
    Recompute,
    Zero,
    SequenceParallel,
    StepTime,
    Mfu,
    Peak,
};
/// The raw value of `field` (sorting, RawValueRole): integers as qint64, recompute as its enum value, SP as bool,
/// step time and MFU as double, peak as qint64 bytes.
QVariant sweepFieldValue(const SweepCandidate& plan, SweepField field);
/// The displayed value: text for recompute, SP, step time, MFU and peak memory, the raw value otherwise.
QVariant sweepFieldDisplay(const SweepCandidate& plan, SweepField field);
/// The column title ("dp", "mb", "Step time") and its tooltip.
QString sweepFieldTitle(SweepField field);
QString sweepFieldToolTip(SweepField field);
/// True for the fields shown as words (left-aligned): recompute and SP.
bool sweepFieldIsText(SweepField field);

/// "dp 16 · tp 8 · pp 8 · cp 1 · ep 1 · mb 1 · recompute selective · ZeRO 1 · SP"
QString sweepPlanText(const SweepCandidate& plan);

} // namespace stagecraft
