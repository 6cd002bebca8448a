// SPDX-License-Identifier: MIT
#pragma once

#include "config/config.h"
#include "estimate/sweep.h"

#include <QString>
#include <QVariant>
#include <optional>
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
/// The same for serving plans, the latency-throughput trade-off: a plan dominates another when its time per output
/// token is lower or equal and its output tokens/s per GPU higher or equal, one of them strictly. Ordered by
/// ascending TPOT (so by ascending throughput).
std::vector<int> sweepServingParetoFront(const std::vector<SweepCandidate>& ranked);
/// The front of `result`: sweepServingParetoFront() for a serving sweep, sweepParetoFront() otherwise.
std::vector<int> sweepParetoFront(const SweepResult& result);

/// True when the plan has its estimate: fitting, out of memory, or over the TPOT limit (the others have no times).
bool sweepPlanIsTimed(const SweepCandidate& plan);

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
    // Serving sweeps (SweepResult::serving).
    TokensPerGpu, ///< output tokens/s per GPU, the ranking key
    Tpot,
    Ttft,
};
/// The raw value of `field` (sorting, RawValueRole): integers as qint64, recompute as its enum value, SP as bool,
/// step time, MFU, tokens/s, TPOT and TTFT as double (seconds), peak as qint64 bytes.
QVariant sweepFieldValue(const SweepCandidate& plan, SweepField field);
/// The displayed value: text for recompute, SP, step time, MFU and peak memory, the raw value otherwise.
QVariant sweepFieldDisplay(const SweepCandidate& plan, SweepField field);
/// The column title ("dp", "mb", "Step time") and its tooltip.
QString sweepFieldTitle(SweepField field);
QString sweepFieldToolTip(SweepField field);
/// True for the fields shown as words (left-aligned): recompute and SP.
bool sweepFieldIsText(SweepField field);

/// "dp 16 · tp 8 · pp 8 · cp 1 · ep 1 · mb 1 · recompute selective · ZeRO 1 · SP"; a serving plan names only what
/// it sets: "dp 2 · tp 4 · pp 1", cp and ep when above 1.
QString sweepPlanText(const SweepCandidate& plan, bool serving = false);

/// The plan fields of a sweep table's columns after its first one (the rank, or the reason). Plain value type.
class SweepColumns
{
public:
    explicit SweepColumns(std::vector<SweepField> fields = {});
    /// The fields of a serving sweep's tables: dp, tp, pp, cp, ep, tokens/s per GPU, TPOT, TTFT, peak memory.
    static SweepColumns serving();
    /// Columns, the first included.
    int count() const;
    /// The column showing `field`, -1 when there is none.
    int column(SweepField field) const;
    /// The field of `column`; nullopt for the first column and out of range.
    std::optional<SweepField> field(int column) const;

private:
    std::vector<SweepField> m_fields;
};

/// How a serving sweep's tables show its measured columns: every value of a column in one unit that the column title
/// names ("TPOT (ms)"), the largest value's, with the decimals that give the smallest value three significant
/// digits, so that the numbers line up. Chosen once per sweep from its timed plans (sweepPlanIsTimed).
struct SweepServingUnits
{
    struct Unit
    {
        double scale = 1; ///< seconds or bytes per unit
        QString name; ///< "ms", "GiB"
        int decimals = 1;
    };
    Unit tpot, ttft, peak;
};
SweepServingUnits sweepServingUnits(const SweepResult& result);
/// A serving column's title with its unit: "TPOT (ms)", "Peak (GiB)", "Tokens/s/GPU"; sweepFieldTitle() for the
/// others.
QString sweepServingTitle(SweepField field, const SweepServingUnits& units);
/// A serving cell: TPOT, TTFT and peak memory as numbers in their column's unit, tokens/s with one decimal;
/// sweepFieldDisplay() for the others.
QVariant sweepServingDisplay(const SweepCandidate& plan, SweepField field, const SweepServingUnits& units);

} // namespace stagecraft
