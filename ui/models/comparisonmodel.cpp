// SPDX-License-Identifier: MIT
#include "models/comparisonmodel.h"

#include "estimate/stepestimate.h"
#include "models/formatting.h"
#include "synthesis/synthesis.h"

#include <QBrush>
#include <QColor>
#include <algorithm>
#include <cmath>
#include <functional>

namespace stagecraft {

ComparisonModel::ComparisonModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

ComparisonModel::~ComparisonModel() = default;

void ComparisonModel::setBaseline(const Side& baseline)
{
    m_baseline = baseline;
    rebuild();
}

const ComparisonModel::Side& ComparisonModel::baseline() const
{
    return m_baseline;
}

void ComparisonModel::setCurrent(const Side& current)
{
    m_current = current;
    rebuild();
}

bool ComparisonModel::hasBaseline() const
{
    return m_baseline.result != nullptr;
}

void ComparisonModel::rebuild()
{
    beginResetModel();
    m_rows.clear();
    if (m_baseline.result && m_current.result) {
        auto add = [this](QString name, Kind kind, bool lowerIsBetter,
                       const std::function<std::optional<double>(const Side&)>& read) {
            m_rows.push_back(Row { std::move(name), kind, lowerIsBetter, read(m_baseline), read(m_current) });
        };
        auto fromEstimate = [](double StepEstimate::*field) {
            return [field](const Side& side) -> std::optional<double> {
                if (!side.estimate)
                    return std::nullopt;
                return (*side.estimate).*field;
            };
        };
        add(tr("Step time"), Kind::Duration, true, fromEstimate(&StepEstimate::iterationTimeS));
        add(tr("MFU"), Kind::Fraction, false, fromEstimate(&StepEstimate::mfu));
        add(tr("Tokens / s"), Kind::Rate, false, fromEstimate(&StepEstimate::tokensPerS));
        // Peak memory per rank of every stage either plan has.
        auto stageCount = [](const Side& side) {
            int32_t stages = 0;
            for (const ClassSummary& s : side.result->summaries)
                stages = std::max(stages, s.stage + 1);
            return stages;
        };
        const int32_t stages = std::max(stageCount(m_baseline), stageCount(m_current));
        for (int32_t stage = 0; stage < stages; ++stage) {
            add(tr("Peak memory per rank, stage %1").arg(stage), Kind::Bytes, true,
                [stage](const Side& side) -> std::optional<double> {
                    std::optional<double> peak;
                    for (const ClassSummary& s : side.result->summaries)
                        if (s.stage == stage)
                            peak = std::max(peak.value_or(0), static_cast<double>(s.peakBytes));
                    return peak;
                });
        }
        // Bytes per iteration over all ranks: per-rank bytes times the ranks of each class.
        auto total = [](const std::function<int64_t(const ClassSummary&)>& bytes) {
            return [bytes](const Side& side) -> std::optional<double> {
                double sum = 0;
                for (const ClassSummary& s : side.result->summaries)
                    sum += static_cast<double>(bytes(s)) * static_cast<double>(s.ranks);
                return sum;
            };
        };
        const QString kindNames[kCollectiveTypeCount] = { tr("all-reduce"), tr("all-gather"), tr("reduce-scatter"),
            tr("all-to-all") };
        for (int k = 0; k < kCollectiveTypeCount; ++k)
            add(tr("%1 bytes, all ranks").arg(kindNames[k]), Kind::Bytes, true,
                total([k](const ClassSummary& s) { return s.collectiveBytes[static_cast<size_t>(k)]; }));
        add(tr("send/recv bytes, all ranks"), Kind::Bytes, true,
            total([](const ClassSummary& s) { return s.sendBytes; }));
    }
    endResetModel();
}

QString ComparisonModel::format(Kind kind, double value)
{
    switch (kind) {
    case Kind::Duration:
        return formatDuration(value);
    case Kind::Fraction:
        return QStringLiteral("%1%").arg(100.0 * value, 0, 'f', 1);
    case Kind::Rate:
        return formatParameterCount(value);
    case Kind::Bytes:
        return formatByteCount(value);
    }
    return {};
}

QString ComparisonModel::changeText(const Row& row) const
{
    if (!row.baseline || !row.current)
        return QStringLiteral("\u2014");
    const double delta = *row.current - *row.baseline;
    if (delta == 0)
        return tr("same");
    const QString sign = delta > 0 ? QStringLiteral("+") : QStringLiteral("\u2212");
    QString text = row.kind == Kind::Fraction ? tr("%1%2 points").arg(sign).arg(100.0 * std::abs(delta), 0, 'f', 1)
                                              : sign + format(row.kind, std::abs(delta));
    if (row.kind != Kind::Fraction && *row.baseline != 0)
        text += QStringLiteral(" (%1%2%)").arg(sign).arg(100.0 * std::abs(delta) / std::abs(*row.baseline), 0, 'f', 1);
    return text;
}

int ComparisonModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int ComparisonModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ComparisonModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount)
        return {};
    const Row& row = m_rows[static_cast<size_t>(index.row())];
    const std::optional<double>& value = index.column() == BaselineColumn ? row.baseline : row.current;
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case FigureColumn:
            return row.name;
        case BaselineColumn:
        case CurrentColumn:
            return value ? format(row.kind, *value) : QStringLiteral("\u2014");
        case ChangeColumn:
            return changeText(row);
        }
        return {};
    case RawValueRole:
        if ((index.column() == BaselineColumn || index.column() == CurrentColumn) && value)
            return *value;
        return {};
    case Qt::TextAlignmentRole:
        return index.column() == FigureColumn ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                                              : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::ForegroundRole:
        if (index.column() == ChangeColumn && row.baseline && row.current && *row.baseline != *row.current) {
            const bool better = (*row.current < *row.baseline) == row.lowerIsBetter;
            return QBrush(better ? QColor(0x1e, 0x7b, 0x34) : QColor(0xb0, 0x2a, 0x37));
        }
        return {};
    }
    return {};
}

QVariant ComparisonModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case FigureColumn:
        return tr("Figure");
    case BaselineColumn:
        return tr("Baseline");
    case CurrentColumn:
        return tr("Current");
    case ChangeColumn:
        return tr("Change");
    }
    return {};
}

} // namespace stagecraft
