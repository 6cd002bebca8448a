// SPDX-License-Identifier: MIT
#include "models/overviewmodel.h"

#include "estimate/gpuspec.h"
#include "estimate/stepestimate.h"
#include "models/formatting.h"
#include "synthesis/synthesis.h"

#include <QColor>

namespace stagecraft {

namespace {

    int collectiveIndex(int column)
    {
        switch (column) {
        case OverviewModel::AllReduceColumn:
            return static_cast<int>(CollectiveType::AllReduce);
        case OverviewModel::AllGatherColumn:
            return static_cast<int>(CollectiveType::AllGather);
        case OverviewModel::ReduceScatterColumn:
            return static_cast<int>(CollectiveType::ReduceScatter);
        case OverviewModel::AllToAllColumn:
            return static_cast<int>(CollectiveType::AllToAll);
        default:
            return -1;
        }
    }

    bool isBytesColumn(int column)
    {
        return collectiveIndex(column) >= 0 || column == OverviewModel::SendColumn
            || column == OverviewModel::RecvColumn || column == OverviewModel::PeakMemoryColumn;
    }

    bool isEstimateColumn(int column)
    {
        return column == OverviewModel::StepTimeColumn || column == OverviewModel::ExposedCommColumn
            || column == OverviewModel::BubbleColumn;
    }

} // namespace

OverviewModel::OverviewModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

OverviewModel::~OverviewModel() = default;

void OverviewModel::setResult(std::shared_ptr<const SynthesisResult> result)
{
    beginResetModel();
    m_result = std::move(result);
    m_estimate.reset();
    m_estimateError.clear();
    m_estimatePending = m_result != nullptr;
    endResetModel();
}

bool OverviewModel::setEstimate(const std::shared_ptr<const SynthesisResult>& forResult,
    std::shared_ptr<const StepEstimate> estimate, const QString& error)
{
    if (!m_result || forResult != m_result)
        return false;
    m_estimate = std::move(estimate);
    m_estimateError = m_estimate ? QString() : (error.isEmpty() ? tr("The step-time estimate failed.") : error);
    m_estimatePending = false;
    if (rowCount() > 0)
        Q_EMIT dataChanged(index(0, StepTimeColumn), index(rowCount() - 1, BubbleColumn));
    return true;
}

const std::shared_ptr<const StepEstimate>& OverviewModel::estimate() const
{
    return m_estimate;
}

QString OverviewModel::estimateError() const
{
    return m_estimateError;
}

bool OverviewModel::isEstimatePending() const
{
    return m_estimatePending;
}

const std::shared_ptr<const SynthesisResult>& OverviewModel::result() const
{
    return m_result;
}

int OverviewModel::rowCount(const QModelIndex& parent) const
{
    if (parent.isValid() || !m_result)
        return 0;
    return static_cast<int>(m_result->summaries.size());
}

int OverviewModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant OverviewModel::rawValue(int row, int column) const
{
    const ClassSummary& s = m_result->summaries[static_cast<size_t>(row)];
    if (isEstimateColumn(column)) {
        // Estimate classes are indexed by stage, as the summaries are by row.
        if (!m_estimate || static_cast<size_t>(row) >= m_estimate->classes.size())
            return {};
        const ClassEstimate& c = m_estimate->classes[static_cast<size_t>(row)];
        return column == StepTimeColumn   ? c.stepTimeS
            : column == ExposedCommColumn ? c.exposedCommunicationS
                                          : c.bubbleFraction;
    }
    if (const int type = collectiveIndex(column); type >= 0)
        return QVariant::fromValue<qint64>(s.collectiveBytes[static_cast<size_t>(type)]);
    switch (column) {
    case StageColumn:
        return QVariant::fromValue<qint64>(s.stage);
    case RanksColumn:
        return QVariant::fromValue<qint64>(s.ranks);
    case ExampleRankColumn:
        return QVariant::fromValue<qint64>(s.exampleRank.value);
    case ComputeColumn:
        return QVariant::fromValue<qint64>(s.flops);
    case NodesColumn:
        return QVariant::fromValue<qint64>(s.nodes);
    case SendColumn:
        return QVariant::fromValue<qint64>(s.sendBytes);
    case RecvColumn:
        return QVariant::fromValue<qint64>(s.recvBytes);
    case PeakMemoryColumn:
        // 0 until the memory analysis fills the summary: shown as a dash, not as "0 B".
        return s.peakBytes > 0 ? QVariant::fromValue<qint64>(s.peakBytes) : QVariant();
    default:
        return {};
    }
}

QString OverviewModel::displayText(int row, int column) const
{
    const QVariant raw = rawValue(row, column);
    if (!raw.isValid())
        return isEstimateColumn(column) && m_estimatePending ? QStringLiteral("\u2026") : QStringLiteral("\u2014");
    if (column == BubbleColumn)
        return QString::number(100.0 * raw.toDouble(), 'f', 1) + QLatin1Char('%');
    if (isEstimateColumn(column))
        return formatDuration(raw.toDouble());
    const qint64 value = raw.toLongLong();
    if (isBytesColumn(column))
        return formatByteCount(static_cast<double>(value));
    switch (column) {
    case ComputeColumn:
        return formatFlopCount(static_cast<double>(value));
    case StageColumn:
    case ExampleRankColumn:
        return QString::number(value);
    default:
        return formatExact(value);
    }
}

int64_t OverviewModel::hbmBytes() const
{
    if (!m_result)
        return 0;
    const std::optional<GpuSpec> gpu = gpuPreset(m_result->config.cluster.gpu);
    return gpu ? gpu->hbmBytes : 0;
}

bool OverviewModel::exceedsHbm(int row) const
{
    const int64_t hbm = hbmBytes();
    return hbm > 0 && m_result->summaries[static_cast<size_t>(row)].peakBytes > hbm;
}

QVariant OverviewModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid) || !m_result)
        return {};
    const int row = index.row();
    const int column = index.column();
    switch (role) {
    case Qt::DisplayRole:
        return displayText(row, column);
    case SortRole:
    case RawValueRole:
        return rawValue(row, column);
    case ClassRole:
        return row;
    case Qt::TextAlignmentRole:
        return QVariant::fromValue(Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
    case ExceedsHbmRole:
        return column == PeakMemoryColumn ? QVariant(exceedsHbm(row)) : QVariant();
    case Qt::BackgroundRole:
        if (column == PeakMemoryColumn && exceedsHbm(row))
            return QColor(0xf8, 0xd7, 0xda); // does not fit: light red
        return {};
    case Qt::ForegroundRole:
        if (column == PeakMemoryColumn && exceedsHbm(row))
            return QColor(0x84, 0x20, 0x29);
        return {};
    case Qt::ToolTipRole: {
        if (isEstimateColumn(column))
            return estimateTip(row, column);
        const QVariant raw = rawValue(row, column);
        if (!raw.isValid())
            return column == PeakMemoryColumn ? tr("Peak memory per rank is not computed yet.") : QVariant();
        if (column == PeakMemoryColumn) {
            const ClassSummary& s = m_result->summaries[static_cast<size_t>(row)];
            QString tip = tr("Peak %1 bytes per rank\nweights %2, gradients %3, optimizer %4, activations peak %5")
                              .arg(formatExact(s.peakBytes), formatByteCount(double(s.weightBytes)),
                                  formatByteCount(double(s.gradientBytes)), formatByteCount(double(s.optimizerBytes)),
                                  formatByteCount(double(s.activationPeakBytes)));
            if (const int64_t hbm = hbmBytes(); hbm > 0)
                tip += QLatin1Char('\n')
                    + (s.peakBytes > hbm ? tr("Does not fit: exceeds the %1 of HBM of one %2 by %3")
                                               .arg(formatByteCount(double(hbm)),
                                                   QString::fromStdString(m_result->config.cluster.gpu),
                                                   formatByteCount(double(s.peakBytes - hbm)))
                                         : tr("Fits: %1% of the %2 of HBM of one %3")
                                               .arg(QString::number(100.0 * double(s.peakBytes) / double(hbm), 'f', 0),
                                                   formatByteCount(double(hbm)),
                                                   QString::fromStdString(m_result->config.cluster.gpu)));
            return tip;
        }
        if (isBytesColumn(column))
            return tr("%1 bytes per rank per iteration").arg(formatExact(raw.toLongLong()));
        if (column == ComputeColumn)
            return tr("%1 FLOP per rank per iteration").arg(formatExact(raw.toLongLong()));
        return formatExact(raw.toLongLong());
    }
    default:
        return {};
    }
}

QVariant OverviewModel::estimateTip(int row, int column) const
{
    if (m_estimatePending)
        return tr("Estimating the step time\u2026");
    const QVariant raw = rawValue(row, column);
    if (!raw.isValid())
        return tr("No step-time estimate: %1").arg(m_estimateError);
    const QString gpu = QString::fromStdString(m_estimate->gpu);
    switch (column) {
    case StepTimeColumn:
        return tr("%1 s: the class's last node finishes (iteration %2 on %3)")
            .arg(QString::number(raw.toDouble(), 'g', 6), formatDuration(m_estimate->iterationTimeS), gpu);
    case ExposedCommColumn:
        return tr("%1 s of communication not hidden behind compute").arg(QString::number(raw.toDouble(), 'g', 6));
    default:
        return tr("Idle %1% of the pipeline period (%2), waiting for a neighbouring stage")
            .arg(QString::number(100.0 * raw.toDouble(), 'f', 2), formatDuration(m_estimate->pipelineTimeS));
    }
}

QVariant OverviewModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return QAbstractTableModel::headerData(section, orientation, role);
    if (role == Qt::DisplayRole) {
        switch (section) {
        case StageColumn:
            return tr("Stage");
        case RanksColumn:
            return tr("Ranks");
        case ExampleRankColumn:
            return tr("Example");
        case ComputeColumn:
            return tr("Compute");
        case NodesColumn:
            return tr("Nodes");
        case AllReduceColumn:
            return tr("All-reduce");
        case AllGatherColumn:
            return tr("All-gather");
        case ReduceScatterColumn:
            return tr("Reduce-scatter");
        case AllToAllColumn:
            return tr("All-to-all");
        case SendColumn:
            return tr("Send");
        case RecvColumn:
            return tr("Recv");
        case PeakMemoryColumn:
            // Serving: the programs' peak (prefill and first decode steps), not the generation's end (Sweep, Report).
            return m_result && isInference(m_result->config) ? tr("Program peak") : tr("Peak memory");
        case StepTimeColumn:
            return tr("Step time");
        case ExposedCommColumn:
            return tr("Exposed comm");
        case BubbleColumn:
            return tr("Bubble");
        }
    } else if (role == Qt::ToolTipRole) {
        switch (section) {
        case StageColumn:
            return tr("Pipeline stage of the rank class; every rank of a class runs the same program");
        case RanksColumn:
            return tr("Number of ranks in the class");
        case ExampleRankColumn:
            return tr("Example rank: the lowest rank of the class");
        case ComputeColumn:
            return tr("FLOPs of all compute nodes of one rank in one iteration");
        case NodesColumn:
            return tr("Nodes in the class's program (compute, collectives, send and receive)");
        case SendColumn:
        case RecvColumn:
            return tr("Pipeline point-to-point bytes per rank per iteration");
        case PeakMemoryColumn:
            return m_result && isInference(m_result->config)
                ? tr("Peak memory per rank over the synthesized programs (the prefill and the first decode steps): "
                     "weights, KV cache, activations. The Sweep and the report give the peak at the generation's "
                     "last token, the Overview's KV cache card the cache then")
                : tr("Peak memory per rank over the iteration (weights, gradients, optimizer state, activations)");
        case StepTimeColumn:
            return tr("Estimated time until the class's last node finishes in one iteration");
        case ExposedCommColumn:
            return tr("Estimated communication time per iteration not hidden behind compute");
        case BubbleColumn:
            return tr("Estimated share of the pipeline period the rank waits idle for a neighbouring stage");
        default:
            // The payload, as `report` counts it; the Communication tab shows the bytes each rank puts on the wire.
            return tr("Payload bytes per rank of this collective type (sum of comm_size, the data each rank "
                      "contributes). On the wire a ring all-reduce moves 2(n\u22121)/n of it, an all-gather or "
                      "reduce-scatter (n\u22121)/n: the Communication tab shows those bytes");
        }
    } else if (role == Qt::TextAlignmentRole) {
        return QVariant::fromValue(Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
    }
    return {};
}

} // namespace stagecraft
