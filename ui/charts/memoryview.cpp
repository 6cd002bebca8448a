// SPDX-License-Identifier: MIT
#include "charts/memoryview.h"

#include "charts/chartparts.h"
#include "charts/memorychartview.h"
#include "estimate/gpuspec.h"
#include "models/formatting.h"
#include "models/memorymodel.h"
#include "synthesis/synthesis.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFrame>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

namespace stagecraft {

MemoryView::MemoryView(QWidget* parent)
    : ResultView(parent)
    , m_model(new MemoryModel(this))
    , m_proxy(new QSortFilterProxyModel(this))
    , m_chart(new MemoryChartView(this))
    , m_table(new QTableView(this))
    , m_classCombo(new QComboBox(this))
    , m_rankSpin(new QSpinBox(this))
    , m_rankClassLabel(new QLabel(this))
    , m_compareCheck(new QCheckBox(tr("Compare with"), this))
    , m_compareCombo(new QComboBox(this))
    , m_exportButton(new QPushButton(tr("Export CSV\u2026"), this))
    , m_cursorTitle(new QLabel(this))
    , m_legend(new QLabel(this))
    , m_staleBanner(new QLabel(this))
{
    connect(&m_run, &LatestRun::settled, this, &ResultView::settled);

    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("Class:"), this));
    m_classCombo->setToolTip(tr("A rank class: all ranks of one pipeline stage run the same program"));
    m_classCombo->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    controls->addWidget(m_classCombo);
    controls->addSpacing(12);
    controls->addWidget(new QLabel(tr("Rank:"), this));
    m_rankSpin->setToolTip(tr("Pick any rank; the chart shows its class"));
    m_rankSpin->setMinimumWidth(90);
    controls->addWidget(m_rankSpin);
    controls->addWidget(m_rankClassLabel);
    controls->addSpacing(18);
    m_compareCheck->setToolTip(tr("Overlay the total memory of a second class as a line"));
    controls->addWidget(m_compareCheck);
    m_compareCombo->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    controls->addWidget(m_compareCombo);
    controls->addStretch(1);
    m_exportButton->setToolTip(
        tr("Save the shown class's timeline at full resolution: step, bytes per category, total"));
    controls->addWidget(m_exportButton);

    m_staleBanner->setText(tr("The config has changed and does not synthesize: this is the last good result."));
    m_staleBanner->setStyleSheet(
        QStringLiteral("QLabel { background: #fff3cd; color: #664d03; padding: 4px 8px; border-radius: 3px; }"));
    m_staleBanner->hide();

    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(MemoryModel::SortRole);
    m_table->setModel(m_proxy);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(MemoryModel::BytesColumn, Qt::DescendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setAlternatingRowColors(true);
    m_table->setWordWrap(false);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_table->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
    m_table->horizontalHeader()->setSectionResizeMode(MemoryModel::NameColumn, QHeaderView::Stretch);
    for (int c : { int(MemoryModel::CategoryColumn), int(MemoryModel::BytesColumn), int(MemoryModel::FromColumn),
             int(MemoryModel::ToColumn) })
        m_table->horizontalHeader()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    // Size those columns from the first rows only: measuring a thousand cells' text on every cursor move and every
    // new result was a tenth of the tab's update time; the values are short and alike.
    m_table->horizontalHeader()->setResizeContentsPrecision(64);

    m_cursorTitle->setWordWrap(true);
    m_cursorTitle->setTextFormat(Qt::RichText);
    auto* hint = new QLabel(tr("Hover the chart to move the cursor; click to pin it."), this);
    hint->setStyleSheet(QStringLiteral("QLabel { color: palette(mid); }"));

    auto* side = new QWidget(this);
    auto* sideLayout = new QVBoxLayout(side);
    sideLayout->setContentsMargins(0, 0, 0, 0);
    sideLayout->addWidget(m_cursorTitle);
    sideLayout->addWidget(m_table, 1);
    sideLayout->addWidget(hint);

    QFrame* card = chartCard(m_chart, m_legend, this);

    auto* splitter = new QSplitter(Qt::Horizontal, this);
    splitter->addWidget(card);
    splitter->addWidget(side);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    splitter->setSizes({ 840, 520 });
    splitter->setChildrenCollapsible(false);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(m_staleBanner);
    layout->addWidget(splitter, 1);

    connect(m_classCombo, &QComboBox::activated, this, [this](int index) { showClass(index); });
    connect(m_rankSpin, &QSpinBox::valueChanged, this, [this](int rank) {
        if (!m_syncing)
            showRank(rank);
    });
    connect(m_compareCheck, &QCheckBox::toggled, this, [this](bool on) {
        if (!m_syncing)
            setCompareClass(on ? m_compareCombo->currentIndex() : -1);
    });
    connect(m_compareCombo, &QComboBox::activated, this, [this](int index) {
        m_compareCheck->setChecked(true);
        setCompareClass(index);
    });
    connect(m_exportButton, &QPushButton::clicked, this, &MemoryView::exportCsvInteractively);
    connect(m_chart, &MemoryChartView::stepHovered, this, [this](qint64 step) {
        m_hoverStep = step;
        updateCursor();
    });
    connect(m_chart, &MemoryChartView::stepClicked, this, [this](qint64 step) { setCursorStep(step, true); });

    setEnabled(false);
}

MemoryView::~MemoryView() = default;

QString MemoryView::className(int classIndex) const
{
    if (!m_result || classIndex < 0 || static_cast<size_t>(classIndex) >= m_result->summaries.size())
        return {};
    const ClassSummary& s = m_result->summaries[static_cast<size_t>(classIndex)];
    return tr("stage %1").arg(s.stage);
}

void MemoryView::setResult(std::shared_ptr<const SynthesisResult> result)
{
    m_result = std::move(result);
    m_syncing = true;
    m_classCombo->clear();
    m_compareCombo->clear();
    if (m_result) {
        for (size_t c = 0; c < m_result->summaries.size(); ++c) {
            const ClassSummary& s = m_result->summaries[c];
            const QString text = tr("stage %1 \u00b7 %2 \u00b7 peak %3")
                                     .arg(s.stage)
                                     .arg(countNoun(s.ranks, tr("rank"), tr("ranks")),
                                         formatByteCount(static_cast<double>(s.peakBytes)));
            m_classCombo->addItem(text);
            m_compareCombo->addItem(text);
        }
        m_rankSpin->setRange(0, static_cast<int>(std::min<int64_t>(m_result->worldSize() - 1, INT_MAX)));
        const int last = static_cast<int>(m_result->classes.size()) - 1;
        m_compareCombo->setCurrentIndex(last);
        // Comparing the first with the last stage shows the pipeline's memory imbalance.
        m_compareCheck->setEnabled(last > 0);
        m_compareCombo->setEnabled(last > 0);
        m_compareCheck->setChecked(last > 0);
    }
    m_syncing = false;
    m_model->setResult(m_result);
    setEnabled(m_result != nullptr);
    if (!m_result)
        return;
    m_pinnedStep = -1;
    m_hoverStep = -1;
    showClass(0);
}

void MemoryView::setStale(bool stale)
{
    m_staleBanner->setVisible(stale);
}

void MemoryView::showClass(int classIndex)
{
    if (!m_result || classIndex < 0 || static_cast<size_t>(classIndex) >= m_result->classes.size())
        return;
    m_syncing = true;
    m_classCombo->setCurrentIndex(classIndex);
    const qint64 example = m_result->summaries[static_cast<size_t>(classIndex)].exampleRank.value;
    if (m_result->classOf(RankId { m_rankSpin->value() }) != classIndex)
        m_rankSpin->setValue(static_cast<int>(example));
    m_rankClassLabel->setText(tr("\u2192 %1").arg(className(classIndex)));
    m_syncing = false;
    m_model->setClass(classIndex);
    m_pinnedStep = m_result->memory[static_cast<size_t>(classIndex)].peakStep;
    m_hoverStep = -1;
    requestChart();
}

void MemoryView::showRank(qint64 rank)
{
    if (!m_result)
        return;
    rank = std::clamp<qint64>(rank, 0, m_result->worldSize() - 1);
    const int cls = m_result->classOf(RankId { rank });
    if (m_rankSpin->value() != rank) {
        m_syncing = true;
        m_rankSpin->setValue(static_cast<int>(rank));
        m_syncing = false;
    }
    if (cls != currentClass())
        showClass(cls);
}

void MemoryView::setCompareClass(int classIndex)
{
    if (!m_result)
        return;
    m_syncing = true;
    const bool on = classIndex >= 0 && static_cast<size_t>(classIndex) < m_result->classes.size();
    m_compareCheck->setChecked(on);
    if (on)
        m_compareCombo->setCurrentIndex(classIndex);
    m_syncing = false;
    requestChart();
}

int MemoryView::currentClass() const
{
    return m_model->classIndex();
}

int MemoryView::compareClass() const
{
    return m_compareCheck->isChecked() ? m_compareCombo->currentIndex() : -1;
}

qint64 MemoryView::cursorStep() const
{
    return m_model->step();
}

bool MemoryView::isUpdating() const
{
    return m_run.isRunning();
}

bool MemoryView::isSettled() const
{
    return !m_run.isRunning();
}

void MemoryView::requestChart()
{
    if (!m_result)
        return;
    // The worker gets copies only: the shared (immutable) result and two indices.
    m_run.start([result = m_result, cls = currentClass(),
                    cmp = compareClass()] { return buildMemoryChartData(*result, cls, cmp); },
        [this](const MemoryChartData& data) { applyChart(data); });
}

void MemoryView::applyChart(const MemoryChartData& data)
{
    qint64 hbmBytes = 0;
    QString gpu = QString::fromStdString(m_result->config.cluster.gpu);
    if (const auto spec = gpuPreset(m_result->config.cluster.gpu))
        hbmBytes = spec->hbmBytes;
    const ClassSummary& s = m_result->summaries[static_cast<size_t>(data.classIndex)];
    const QString title = tr("%1 \u2014 memory per rank of stage %2 (%3, e.g. rank %4)")
                              .arg(QString::fromStdString(m_result->config.name))
                              .arg(s.stage)
                              .arg(countNoun(s.ranks, tr("rank"), tr("ranks")))
                              .arg(s.exampleRank.value);
    m_chart->setChartData(data, title, className(data.compareClass), hbmBytes, gpu);
    m_legend->setText(m_chart->legendHtml());
    updateCursor();
    Q_EMIT chartDataAvailable();
}

void MemoryView::setCursorStep(qint64 step, bool pin)
{
    if (pin)
        m_pinnedStep = step;
    else
        m_hoverStep = step;
    updateCursor();
}

void MemoryView::updateCursor()
{
    if (!m_result)
        return;
    const int cls = currentClass();
    const MemoryTimeline& timeline = m_result->memory[static_cast<size_t>(cls)];
    const qint64 steps = static_cast<qint64>(timeline.series.size());
    qint64 step = m_hoverStep >= 0 ? m_hoverStep : m_pinnedStep;
    step = std::min(step, steps - 1);
    m_model->setStep(step);
    if (step < 0) {
        m_chart->setCursor(-1, {});
        m_cursorTitle->clear();
        return;
    }
    const auto total = static_cast<double>(timeline.total(static_cast<size_t>(step)));
    const ProgramNode& node = m_result->classes[static_cast<size_t>(cls)].nodes[static_cast<size_t>(step)];
    const bool atPeak = step == timeline.peakStep;
    m_chart->setCursor(
        step, tr("step %1 \u00b7 %2%3").arg(step).arg(formatByteCount(total), atPeak ? tr(" \u00b7 peak") : QString()));
    m_cursorTitle->setText(tr("<b>Live at step %1%2</b>: %3 in %4<br><span style='color:#555'>running: %5</span>")
                               .arg(step)
                               .arg(atPeak ? tr(" (the peak)") : QString(), formatByteCount(total),
                                   countNoun(m_model->rowCount(), tr("buffer"), tr("buffers")),
                                   QString::fromStdString(node.name).toHtmlEscaped()));
}

bool MemoryView::exportCsv(const QString& path, QString* error) const
{
    if (!m_result) {
        if (error)
            *error = tr("no result to export");
        return false;
    }
    return saveMemoryCsv(path, m_result->memory[static_cast<size_t>(currentClass())], error);
}

void MemoryView::exportCsvInteractively()
{
    if (!m_result)
        return;
    const QString suggested = QStringLiteral("%1-stage%2-memory.csv")
                                  .arg(QString::fromStdString(m_result->config.name))
                                  .arg(m_result->summaries[static_cast<size_t>(currentClass())].stage);
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export memory timeline"), suggested, tr("CSV files (*.csv);;All files (*)"));
    if (path.isEmpty())
        return;
    QString error;
    if (!exportCsv(path, &error))
        QMessageBox::warning(this, tr("Export failed"), tr("Could not write %1: %2").arg(path, error));
}

MemoryModel* MemoryView::model() const
{
    return m_model;
}

MemoryChartView* MemoryView::chartView() const
{
    return m_chart;
}

QTableView* MemoryView::table() const
{
    return m_table;
}

QLabel* MemoryView::cursorTitle() const
{
    return m_cursorTitle;
}

} // namespace stagecraft
