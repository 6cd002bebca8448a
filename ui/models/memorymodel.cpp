// SPDX-License-Identifier: MIT
#include "models/memorymodel.h"

#include "models/formatting.h"
#include "synthesis/synthesis.h"

#include <algorithm>

namespace stagecraft {

namespace {

    QString collectiveName(CollectiveType type)
    {
        switch (type) {
        case CollectiveType::AllReduce:
            return QStringLiteral("all-reduce");
        case CollectiveType::AllGather:
            return QStringLiteral("all-gather");
        case CollectiveType::ReduceScatter:
            return QStringLiteral("reduce-scatter");
        case CollectiveType::AllToAll:
            return QStringLiteral("all-to-all");
        }
        return {};
    }

} // namespace

MemoryModel::MemoryModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

MemoryModel::~MemoryModel() = default;

void MemoryModel::setResult(std::shared_ptr<const SynthesisResult> result)
{
    beginResetModel();
    m_result = std::move(result);
    m_class = 0;
    m_step = m_result && !m_result->memory.empty() ? m_result->memory.front().peakStep : -1;
    rebuild();
    endResetModel();
}

const std::shared_ptr<const SynthesisResult>& MemoryModel::result() const
{
    return m_result;
}

void MemoryModel::setClass(int classIndex)
{
    if (!m_result || classIndex < 0 || static_cast<size_t>(classIndex) >= m_result->memory.size())
        return;
    beginResetModel();
    m_class = classIndex;
    m_step = m_result->memory[static_cast<size_t>(classIndex)].peakStep;
    rebuild();
    endResetModel();
}

int MemoryModel::classIndex() const
{
    return m_class;
}

void MemoryModel::setStep(qint64 step)
{
    if (m_result && static_cast<size_t>(m_class) < m_result->memory.size()) {
        const qint64 steps = static_cast<qint64>(m_result->memory[static_cast<size_t>(m_class)].series.size());
        step = step < 0 ? -1 : std::min(step, steps - 1);
    }
    if (step == m_step)
        return;
    beginResetModel();
    m_step = step;
    rebuild();
    endResetModel();
}

qint64 MemoryModel::step() const
{
    return m_step;
}

qint64 MemoryModel::liveBytes() const
{
    return m_liveBytes;
}

void MemoryModel::rebuild()
{
    m_rows.clear();
    m_liveBytes = 0;
    if (!m_result || m_step < 0 || static_cast<size_t>(m_class) >= m_result->memory.size())
        return;
    const MemoryTimeline& timeline = m_result->memory[static_cast<size_t>(m_class)];
    const ClassProgram& program = m_result->classes[static_cast<size_t>(m_class)];
    // One pass over the buffers: cheap enough per cursor move (a 70B stage has ~4k buffers).
    for (size_t b = 0; b < program.buffers.size(); ++b) {
        const int32_t first = timeline.firstUse[b];
        if (first >= 0 && first <= m_step && timeline.lastUse[b] >= m_step) {
            m_rows.push_back(static_cast<int>(b));
            m_liveBytes += program.buffers[b].bytes;
        }
    }
    std::stable_sort(m_rows.begin(), m_rows.end(), [&](int a, int b) {
        return program.buffers[static_cast<size_t>(a)].bytes > program.buffers[static_cast<size_t>(b)].bytes;
    });
}

QString MemoryModel::bufferName(const SynthesisResult& result, int classIndex, int buffer)
{
    const ClassProgram& program = result.classes[static_cast<size_t>(classIndex)];
    const MemoryTimeline& timeline = result.memory[static_cast<size_t>(classIndex)];
    const Buffer& buf = program.buffers[static_cast<size_t>(buffer)];
    QString name = buf.tensor >= 0 && result.graph && static_cast<size_t>(buf.tensor) < result.graph->tensors.size()
        ? QString::fromStdString(result.graph->tensors[static_cast<size_t>(buf.tensor)].name)
        : QStringLiteral("buffer %1").arg(buffer);
    if (buf.microBatch >= 0)
        name = QStringLiteral("mb%1/").arg(buf.microBatch) + name;
    if (buf.resident) {
        if (buf.category == MemoryCategory::Optimizer)
            name += QStringLiteral(" (optimizer state)");
        return name;
    }
    if (buf.category == MemoryCategory::Weights)
        return name + QStringLiteral(" (gathered)");
    // Name communication outputs after the collective (or receive) that produced them.
    const int32_t writer = timeline.firstUse[static_cast<size_t>(buffer)];
    if (writer >= 0 && static_cast<size_t>(writer) < program.nodes.size()) {
        const ProgramNode& node = program.nodes[static_cast<size_t>(writer)];
        if (node.kind == NodeKind::Collective)
            name += QStringLiteral(" (") + collectiveName(node.collective) + QStringLiteral(" out)");
        else if (node.kind == NodeKind::Recv)
            name += QStringLiteral(" (received)");
    }
    return name;
}

QColor MemoryModel::categoryColor(int category)
{
    switch (static_cast<MemoryCategory>(category)) {
    case MemoryCategory::Weights:
        return QColor(0x1f, 0x77, 0xb4);
    case MemoryCategory::Gradients:
        return QColor(0xff, 0x7f, 0x0e);
    case MemoryCategory::Optimizer:
        return QColor(0x94, 0x67, 0xbd);
    case MemoryCategory::Activations:
        return QColor(0x2c, 0xa0, 0x2c);
    case MemoryCategory::KvCache:
        return QColor(0xd6, 0x27, 0x28);
    case MemoryCategory::Other:
        break;
    }
    return QColor(0x7f, 0x7f, 0x7f);
}

QString MemoryModel::categoryName(int category)
{
    return QString::fromLatin1(toString(static_cast<MemoryCategory>(category)));
}

int MemoryModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int MemoryModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant MemoryModel::rawValue(int row, int column) const
{
    const int buffer = m_rows[static_cast<size_t>(row)];
    const Buffer& buf = m_result->classes[static_cast<size_t>(m_class)].buffers[static_cast<size_t>(buffer)];
    const MemoryTimeline& timeline = m_result->memory[static_cast<size_t>(m_class)];
    switch (column) {
    case NameColumn:
        return bufferName(*m_result, m_class, buffer);
    case CategoryColumn:
        return static_cast<int>(buf.category);
    case BytesColumn:
        return QVariant::fromValue<qint64>(buf.bytes);
    case FromColumn:
        return QVariant::fromValue<qint64>(timeline.firstUse[static_cast<size_t>(buffer)]);
    case ToColumn:
        return QVariant::fromValue<qint64>(timeline.lastUse[static_cast<size_t>(buffer)]);
    default:
        return {};
    }
}

QVariant MemoryModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid) || !m_result)
        return {};
    const int row = index.row();
    const int column = index.column();
    const int buffer = m_rows[static_cast<size_t>(row)];
    const Buffer& buf = m_result->classes[static_cast<size_t>(m_class)].buffers[static_cast<size_t>(buffer)];
    switch (role) {
    case Qt::DisplayRole:
        switch (column) {
        case CategoryColumn:
            return categoryName(static_cast<int>(buf.category));
        case BytesColumn:
            return formatByteCount(static_cast<double>(buf.bytes));
        case FromColumn:
        case ToColumn:
            return QString::number(rawValue(row, column).toLongLong());
        default:
            return rawValue(row, column);
        }
    case Qt::ToolTipRole:
        if (column == BytesColumn)
            return QString(formatExact(buf.bytes) + QStringLiteral(" bytes"));
        if (column == NameColumn)
            return rawValue(row, column);
        if (column == CategoryColumn)
            return buf.resident ? tr("resident: alive for the whole iteration")
                                : tr("allocated and freed within the iteration");
        return {};
    case Qt::DecorationRole:
        return column == CategoryColumn ? QVariant(categoryColor(static_cast<int>(buf.category))) : QVariant();
    case Qt::TextAlignmentRole:
        return column >= BytesColumn ? QVariant(int(Qt::AlignRight | Qt::AlignVCenter)) : QVariant();
    case SortRole:
    case RawValueRole:
        return rawValue(row, column);
    case BufferRole:
        return buffer;
    case CategoryRole:
        return static_cast<int>(buf.category);
    default:
        return {};
    }
}

QVariant MemoryModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return QAbstractTableModel::headerData(section, orientation, role);
    if (role == Qt::DisplayRole) {
        switch (section) {
        case NameColumn:
            return QStringLiteral("Buffer");
        case CategoryColumn:
            return QStringLiteral("Category");
        case BytesColumn:
            return QStringLiteral("Bytes");
        case FromColumn:
            return QStringLiteral("From");
        case ToColumn:
            return QStringLiteral("To");
        default:
            break;
        }
    }
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case FromColumn:
            return QStringLiteral("First step (program node) at which the buffer is alive");
        case ToColumn:
            return QStringLiteral("Last step (program node) at which the buffer is alive");
        default:
            break;
        }
    }
    return QAbstractTableModel::headerData(section, orientation, role);
}

} // namespace stagecraft
