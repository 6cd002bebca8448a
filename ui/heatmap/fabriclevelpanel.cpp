// SPDX-License-Identifier: MIT
#include "heatmap/fabriclevelpanel.h"

#include "estimate/networkusage.h"
#include "models/formatting.h"
#include "synthesis/synthesis.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>

namespace stagecraft {

FabricLevelSummary summarizeFabricLevels(const SynthesisResult& result)
{
    FabricLevelSummary s;
    const ClusterConfig& cluster = result.config.cluster;
    s.topology = cluster.topology.enabled();
    s.preset = cluster.topology.preset;
    const Fabric fabric = fabricOrStandIn(cluster);
    for (size_t c = 0; c < result.classes.size(); ++c) {
        const NetworkUsage usage = networkUsage(result, c, fabric);
        const double ranks = static_cast<double>(std::max<int64_t>(1, result.classes[c].rankCount));
        for (size_t l = 0; l < s.bytes.size(); ++l)
            s.bytes[l] += static_cast<double>(usage.bytesPerLevel[l]) * ranks;
        for (const NetworkUse& u : usage.uses) {
            std::vector<std::string>& list = s.uses[static_cast<size_t>(u.level)];
            const std::string text = u.what + (s.topology ? " (" + std::string(toString(u.algorithm)) + ")" : "");
            if (std::find(list.begin(), list.end(), text) == list.end())
                list.push_back(text);
        }
    }
    return s;
}

FabricLevelPanel::FabricLevelPanel(QWidget* parent)
    : QWidget(parent)
    , m_title(new QLabel(this))
    , m_table(new QTableWidget(0, 4, this))
{
    QFont bold = font();
    bold.setBold(true);
    m_title->setFont(bold);
    m_title->setWordWrap(true);
    m_table->setHorizontalHeaderLabels({ tr("Level"), tr("Comm size"), tr("Share"), tr("What crosses it (NCCL)") });
    m_table->setToolTip(tr("Comm size (S) per iteration summed over every rank, by the highest level of the fabric "
                           "its group or peer crosses; cluster.topology sets the levels"));
    m_table->verticalHeader()->hide();
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionMode(QAbstractItemView::NoSelection);
    m_table->setWordWrap(false);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setSectionResizeMode(3, QHeaderView::Stretch);
    m_table->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_title);
    layout->addWidget(m_table);
    clear();
}

FabricLevelPanel::~FabricLevelPanel() = default;

void FabricLevelPanel::clear()
{
    m_title->setText(tr("Comm size by fabric level"));
    m_table->setRowCount(0);
    m_table->setFixedHeight(m_table->horizontalHeader()->height() + 4);
}

void FabricLevelPanel::setSummary(const FabricLevelSummary& s)
{
    m_title->setText(s.topology ? tr("Comm size by fabric level (cluster.topology %1)")
                                      .arg(s.preset.empty() ? tr("custom") : QString::fromStdString(s.preset))
                                : tr("Comm size inside and across nodes (no cluster.topology)"));
    const QStringList names = s.topology
        ? QStringList { tr("NVLink domain"), tr("Leaf (NIC)"), tr("Spine"), tr("Core") }
        : QStringList { tr("Inside a node"), tr("Across nodes"), QString(), QString() };
    double total = 0;
    for (double b : s.bytes)
        total += b;
    const int levels = s.topology ? 4 : 2;
    m_table->setRowCount(levels);
    for (int l = 0; l < levels; ++l) {
        const double bytes = s.bytes[static_cast<size_t>(l)];
        QStringList uses;
        for (const std::string& u : s.uses[static_cast<size_t>(l)])
            uses << QString::fromStdString(u);
        auto* level = new QTableWidgetItem(names[l]);
        auto* amount = new QTableWidgetItem(formatByteCount(bytes));
        amount->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        auto* share = new QTableWidgetItem(
            total > 0 ? QStringLiteral("%1 %").arg(100.0 * bytes / total, 0, 'f', 1) : QStringLiteral("-"));
        share->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        auto* what = new QTableWidgetItem(uses.isEmpty() ? tr("nothing") : uses.join(QStringLiteral(", ")));
        what->setToolTip(uses.join(QLatin1Char('\n')));
        m_table->setItem(l, 0, level);
        m_table->setItem(l, 1, amount);
        m_table->setItem(l, 2, share);
        m_table->setItem(l, 3, what);
    }
    m_table->setFixedHeight(m_table->horizontalHeader()->height()
        + levels * m_table->verticalHeader()->defaultSectionSize() + 2 * m_table->frameWidth() + 2);
}

QTableWidget* FabricLevelPanel::table() const
{
    return m_table;
}

} // namespace stagecraft
