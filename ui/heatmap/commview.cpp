// SPDX-License-Identifier: MIT
#include "heatmap/commview.h"

#include "heatmap/fabriclevelpanel.h"
#include "heatmap/heatmapwidget.h"
#include "models/commmatrixmodel.h"
#include "models/formatting.h"
#include "models/groupsmodel.h"
#include "synthesis/synthesis.h"
#include "widgets/flowlayout.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <set>

namespace stagecraft {

struct CommView::Built
{
    std::shared_ptr<const CommMatrix> matrix;
    QImage image;
    LogColorScale scale;
    FabricLevelSummary levels;
};

namespace {

    // Checkbox order of the axis filter and the Axis bit each one controls.
    constexpr std::array<Axis, 5> kFilterAxes { Axis::Tp, Axis::Cp, Axis::Ep, Axis::Edp, Axis::Pp };
    const char* const kFilterAxisNames[] = { "tp", "cp", "ep", "dp", "pp" };

    QLabel* mutedLabel(const QString& text, QWidget* parent)
    {
        auto* label = new QLabel(text, parent);
        label->setStyleSheet(QStringLiteral("QLabel { color: #555; }"));
        return label;
    }

} // namespace

CommView::CommView(QWidget* parent)
    : ResultView(parent)
    , m_matrixModel(new CommMatrixModel(this))
    , m_groupsModel(new GroupsModel(this))
    , m_groupsProxy(new QSortFilterProxyModel(this))
    , m_heatmap(new HeatmapWidget(this))
    , m_groupsTable(new QTableView(this))
    , m_groupingCombo(new QComboBox(this))
    , m_hoverLabel(new QLabel(this))
    , m_summaryLabel(new QLabel(this))
    , m_legendLabel(new QLabel(this))
    , m_groupsLabel(new QLabel(this))
    , m_staleBanner(new QLabel(this))
{
    connect(&m_run, &LatestRun::settled, this, &ResultView::settled);

    // Three groups of controls on one line, or wrapped onto two in a narrow window.
    auto* controls = new FlowLayout;
    controls->setSpacing(16);
    QHBoxLayout* resolution = addControlGroup(controls, this);
    resolution->addWidget(new QLabel(tr("Resolution:"), this));
    m_groupingCombo->setToolTip(tr("One row/column per rank, per node (cluster.gpus_per_node ranks) or per "
                                   "coordinate of a mesh axis"));
    m_groupingCombo->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    resolution->addWidget(m_groupingCombo);
    QHBoxLayout* kinds = addControlGroup(controls, this);
    kinds->addWidget(new QLabel(tr("Collectives:"), this));
    for (int k = 0; k < kCommKindCount; ++k) {
        auto* box = new QCheckBox(commKindName(static_cast<CommKind>(k)), this);
        box->setChecked(true);
        m_kindChecks[static_cast<size_t>(k)] = box;
        kinds->addWidget(box);
        connect(box, &QCheckBox::toggled, this, [this] { readControls(); });
    }
    QHBoxLayout* axes = addControlGroup(controls, this);
    axes->addWidget(new QLabel(tr("Axes:"), this));
    for (size_t a = 0; a < kFilterAxes.size(); ++a) {
        auto* box = new QCheckBox(QLatin1String(kFilterAxisNames[a]), this);
        box->setChecked(true);
        box->setToolTip(a == 4 ? tr("Pipeline send/recv between stages")
                               : tr("Collectives whose groups span only shown axes are counted"));
        m_axisChecks[a] = box;
        axes->addWidget(box);
        connect(box, &QCheckBox::toggled, this, [this] { readControls(); });
    }
    connect(m_groupingCombo, &QComboBox::activated, this, [this] { readControls(); });

    m_staleBanner->setText(tr("The config has changed and does not synthesize: this is the last good result."));
    m_staleBanner->setStyleSheet(
        QStringLiteral("QLabel { background: #fff3cd; color: #664d03; padding: 4px 8px; border-radius: 3px; }"));
    m_staleBanner->hide();

    m_heatmap->setModel(m_matrixModel);
    connect(m_heatmap, &HeatmapWidget::cellHovered, this, &CommView::showHovered);

    m_hoverLabel->setTextFormat(Qt::PlainText);
    m_hoverLabel->setMinimumHeight(fontMetrics().height() + 8);
    m_hoverLabel->setStyleSheet(QStringLiteral("QLabel { background: palette(alternate-base); padding: 3px 6px; }"));
    m_summaryLabel->setWordWrap(true);
    m_legendLabel->setWordWrap(true);
    m_legendLabel->setStyleSheet(QStringLiteral("QLabel { color: #555; }"));
    m_legendLabel->setText(
        tr("Attribution: ring algorithm. In a group of n ranks each member sends to its successor in ring order "
           "2(n\u22121)/n\u00b7S for all-reduce, (n\u22121)\u00b7S for all-gather (S = the shard) and "
           "(n\u22121)/n\u00b7S for reduce-scatter; all-to-all is pairwise: S/n to every other member. Send/recv "
           "goes from the sender to its peer stage. S = summed comm_size per rank and iteration."));

    auto* left = new QWidget(this);
    auto* leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(0, 0, 0, 0);
    leftLayout->addWidget(m_heatmap, 1);
    leftLayout->addWidget(m_hoverLabel);
    leftLayout->addWidget(m_summaryLabel);
    leftLayout->addWidget(m_legendLabel);

    m_groupsProxy->setSourceModel(m_groupsModel);
    m_groupsProxy->setSortRole(GroupsModel::SortRole);
    m_groupsTable->setModel(m_groupsProxy);
    m_groupsTable->setSortingEnabled(true);
    m_groupsTable->sortByColumn(GroupsModel::IdColumn, Qt::AscendingOrder);
    m_groupsTable->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_groupsTable->setSelectionMode(QAbstractItemView::SingleSelection);
    m_groupsTable->setAlternatingRowColors(true);
    m_groupsTable->setWordWrap(false);
    m_groupsTable->verticalHeader()->hide();
    m_groupsTable->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_groupsTable->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
    m_groupsTable->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    m_groupsTable->horizontalHeader()->setStretchLastSection(false);
    m_groupsTable->horizontalHeader()->setSectionResizeMode(GroupsModel::MembersColumn, QHeaderView::Stretch);
    connect(m_groupsTable->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
        &CommView::highlightSelectedGroup);

    auto* right = new QWidget(this);
    auto* rightLayout = new QVBoxLayout(right);
    rightLayout->setContentsMargins(0, 0, 0, 0);
    QFont bold = font();
    bold.setBold(true);
    m_groupsLabel->setFont(bold);
    m_levelPanel = new FabricLevelPanel(right);
    rightLayout->addWidget(m_levelPanel);
    rightLayout->addWidget(m_groupsLabel);
    rightLayout->addWidget(m_groupsTable, 1);
    rightLayout->addWidget(mutedLabel(tr("Select a group to mark its members on the heatmap."), this));

    auto* splitter = new QSplitter(Qt::Horizontal, this);
    splitter->addWidget(left);
    splitter->addWidget(right);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    splitter->setSizes({ 860, 500 });
    splitter->setChildrenCollapsible(false);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(m_staleBanner);
    layout->addWidget(splitter, 1);

    showHovered(-1, -1);
    setEnabled(false);
}

CommView::~CommView() = default;

void CommView::setResult(std::shared_ptr<const SynthesisResult> result)
{
    m_result = std::move(result);
    m_groupsModel->setResult(m_result);
    setEnabled(m_result != nullptr);
    if (!m_result) {
        m_matrixModel->setMatrix(nullptr, nullptr);
        m_heatmap->setImage(QImage(), LogColorScale(), QString());
        m_levelPanel->clear();
        return;
    }
    m_groupsLabel->setText(tr("Communicator groups (%1)").arg(formatExact(m_result->groups.groupCount())));
    // Column widths from the first rows (the header's precision): measuring every group's text (thousands of rows
    // at 16k ranks) took a third of the tab's update time; ids and sizes are alike down the table.
    m_groupsTable->horizontalHeader()->setResizeContentsPrecision(64);
    m_groupsTable->resizeColumnsToContents();
    m_groupsTable->horizontalHeader()->setSectionResizeMode(GroupsModel::MembersColumn, QHeaderView::Stretch);
    CommMatrixOptions o = m_options;
    if (!commGroupingAvailable(*m_result, o.grouping)
        || (o.grouping == CommGrouping::Rank && m_result->worldSize() > kDefaultRankLimit))
        o.grouping = defaultCommGrouping(*m_result);
    m_options = o;
    syncControls();
    requestMatrix();
}

void CommView::setStale(bool stale)
{
    m_staleBanner->setVisible(stale);
}

void CommView::setOptions(const CommMatrixOptions& options)
{
    m_options = options;
    if (m_result && !commGroupingAvailable(*m_result, m_options.grouping))
        m_options.grouping = defaultCommGrouping(*m_result);
    syncControls();
    requestMatrix();
}

CommMatrixOptions CommView::options() const
{
    return m_options;
}

void CommView::setGrouping(CommGrouping grouping)
{
    CommMatrixOptions o = m_options;
    o.grouping = grouping;
    setOptions(o);
}

bool CommView::isUpdating() const
{
    return m_run.isRunning();
}

bool CommView::isSettled() const
{
    return !m_run.isRunning();
}

void CommView::syncControls()
{
    m_syncing = true;
    m_groupingCombo->clear();
    if (m_result) {
        for (int g = 0; g < kCommGroupingCount; ++g) {
            const auto grouping = static_cast<CommGrouping>(g);
            if (!commGroupingAvailable(*m_result, grouping))
                continue;
            m_groupingCombo->addItem(
                tr("%1 (%2)").arg(commGroupingName(grouping)).arg(commUnitCount(*m_result, grouping)), g);
        }
        m_groupingCombo->setCurrentIndex(m_groupingCombo->findData(static_cast<int>(m_options.grouping)));
        for (size_t a = 0; a < kFilterAxes.size(); ++a)
            m_axisChecks[a]->setEnabled(m_result->mesh().degree(kFilterAxes[a]) > 1);
    }
    for (int k = 0; k < kCommKindCount; ++k)
        m_kindChecks[static_cast<size_t>(k)]->setChecked((m_options.kinds >> k) & 1u);
    for (size_t a = 0; a < kFilterAxes.size(); ++a)
        m_axisChecks[a]->setChecked((m_options.axes >> static_cast<unsigned>(kFilterAxes[a])) & 1u);
    m_syncing = false;
}

void CommView::readControls()
{
    if (m_syncing)
        return;
    CommMatrixOptions o = m_options;
    if (m_groupingCombo->currentIndex() >= 0)
        o.grouping = static_cast<CommGrouping>(m_groupingCombo->currentData().toInt());
    o.kinds = 0;
    for (int k = 0; k < kCommKindCount; ++k)
        if (m_kindChecks[static_cast<size_t>(k)]->isChecked())
            o.kinds |= static_cast<uint8_t>(1u << k);
    o.axes = 0;
    for (size_t a = 0; a < kFilterAxes.size(); ++a)
        if (m_axisChecks[a]->isChecked())
            o.axes |= static_cast<uint8_t>(1u << static_cast<unsigned>(kFilterAxes[a]));
    if (o == m_options)
        return;
    m_options = o;
    requestMatrix();
}

void CommView::requestMatrix()
{
    if (!m_result)
        return;
    // The worker gets copies only: the shared (immutable) result and the options.
    m_run.start(
        [result = m_result, options = m_options] {
            Built built;
            auto matrix = std::make_shared<CommMatrix>(buildCommMatrix(*result, options));
            built.scale = LogColorScale(matrix->minNonZeroCell, matrix->maxCell);
            built.image = renderCommMatrixImage(*matrix, built.scale, HeatmapWidget::emptyCellColor());
            built.matrix = std::move(matrix);
            built.levels = summarizeFabricLevels(*result);
            return built;
        },
        [this](const Built& built) { applyMatrix(built); });
}

void CommView::applyMatrix(const Built& built)
{
    const CommMatrix& m = *built.matrix;
    m_matrixModel->setMatrix(m_result, built.matrix);
    m_levelPanel->setSummary(built.levels);
    const QString unit = commGroupingName(m.options.grouping);
    m_heatmap->setImage(m.maxCell > 0 ? built.image : QImage(), built.scale, unit);
    m_heatmap->setEmptyText(tr("No traffic for the chosen collectives and axes."));
    // Separators: node boundaries on a rank matrix, pipeline-stage boundaries on a node matrix (when a stage is a
    // whole number of nodes).
    int boundary = 0;
    const int64_t gpn = std::max<int64_t>(1, m_result->config.cluster.gpusPerNode);
    const int64_t ranksPerStage = m.world / std::max<int64_t>(1, m_result->mesh().degree(Axis::Pp));
    if (m.options.grouping == CommGrouping::Rank)
        boundary = static_cast<int>(gpn);
    else if (m.options.grouping == CommGrouping::Node && ranksPerStage % gpn == 0 && ranksPerStage / gpn < m.units)
        boundary = static_cast<int>(ranksPerStage / gpn);
    m_heatmap->setBoundaryEvery(boundary);
    // Serving has no iteration: its programs are a prefill and decode steps.
    const bool serving = isInference(m_result->config);
    QString title = (serving ? tr("Bytes sent in the programs (prefill and decode steps), %1 \u2192 %1")
                             : tr("Bytes sent per iteration, %1 \u2192 %1"))
                        .arg(unit);
    if (m.options.grouping == CommGrouping::Node)
        title += tr(" (%1 nodes of %2 GPUs)").arg(m.units).arg(m.ranksPerUnit);
    else if (m.options.grouping != CommGrouping::Rank)
        title += tr(" (%1 \u00d7 %2 ranks each)").arg(m.units).arg(m.ranksPerUnit);
    else
        title += tr(" (%1 ranks, %2 GPUs per node)").arg(m.units).arg(m_result->config.cluster.gpusPerNode);
    m_heatmap->setTitle(title);

    QStringList parts;
    for (int k = 0; k < kCommKindCount; ++k)
        if (m.kindTotals[static_cast<size_t>(k)] > 0)
            parts << commKindName(static_cast<CommKind>(k)) + QLatin1Char(' ')
                    + formatByteCount(m.kindTotals[static_cast<size_t>(k)]);
    double offDiagonal = 0;
    for (int64_t i = 0; i < m.units; ++i)
        offDiagonal += m.at(i, i);
    offDiagonal = m.total - offDiagonal;
    QString summary =
        (serving ? tr("<b>Shown: %1 in the programs</b> over %2") : tr("<b>Shown: %1 per iteration</b> over %2"))
            .arg(formatByteCount(m.total), countNoun(m.world, tr("rank"), tr("ranks")));
    if (m.options.grouping != CommGrouping::Rank)
        summary += tr("; between different %1s %2, within one (the diagonal) %3")
                       .arg(unit, formatByteCount(offDiagonal), formatByteCount(m.total - offDiagonal));
    if (!parts.isEmpty())
        summary += QStringLiteral("<br>") + parts.join(QStringLiteral(" \u00b7 "));
    m_summaryLabel->setText(summary);
    showHovered(-1, -1);
    highlightSelectedGroup();
    Q_EMIT matrixAvailable();
}

void CommView::showHovered(int row, int column)
{
    const CommMatrix& m = m_matrixModel->matrix();
    if (row < 0 || column < 0 || row >= m.units || column >= m.units) {
        m_hoverLabel->setText(tr("Hover a cell: sender \u2192 receiver and the bytes by collective type."));
        return;
    }
    m_hoverLabel->setText(m.cellText(row, column));
}

void CommView::highlightSelectedGroup()
{
    if (!m_result)
        return;
    const QModelIndex current = m_groupsTable->selectionModel()->currentIndex();
    if (!current.isValid()) {
        m_heatmap->setHighlightedUnits({});
        return;
    }
    const auto members = current.data(GroupsModel::MembersRole).value<QList<qint64>>();
    std::set<int> units;
    for (qint64 rank : members)
        units.insert(static_cast<int>(commUnitOf(*m_result, m_matrixModel->matrix().options.grouping, rank)));
    m_heatmap->setHighlightedUnits(std::vector<int>(units.begin(), units.end()));
}

CommMatrixModel* CommView::matrixModel() const
{
    return m_matrixModel;
}

GroupsModel* CommView::groupsModel() const
{
    return m_groupsModel;
}

HeatmapWidget* CommView::heatmap() const
{
    return m_heatmap;
}

QTableView* CommView::groupsTable() const
{
    return m_groupsTable;
}

QComboBox* CommView::groupingCombo() const
{
    return m_groupingCombo;
}

QLabel* CommView::hoverLabel() const
{
    return m_hoverLabel;
}

FabricLevelPanel* CommView::levelPanel() const
{
    return m_levelPanel;
}

QLabel* CommView::summaryLabel() const
{
    return m_summaryLabel;
}

} // namespace stagecraft
