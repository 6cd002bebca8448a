// SPDX-License-Identifier: MIT
#include "charts/memoryview.h"

#include "charts/chartparts.h"
#include "charts/memorychartview.h"
#include "estimate/gpuspec.h"
#include "models/formatting.h"
#include "models/memorymodel.h"
#include "synthesis/synthesis.h"
#include "widgets/flowlayout.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
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
    , m_xAxisCombo(new QComboBox(this))
    , m_axisNote(new QLabel(this))
    , m_exportButton(new QPushButton(tr("Export CSV\u2026"), this))
    , m_measuredButton(new QPushButton(tr("Overlay measured memory\u2026"), this))
    , m_measuredIterations(new QSpinBox(this))
    , m_clearMeasuredButton(new QPushButton(tr("Clear"), this))
    , m_measuredNote(new QLabel(this))
    , m_cursorTitle(new QLabel(this))
    , m_legend(new QLabel(this))
    , m_staleBanner(new QLabel(this))
{
    connect(&m_run, &LatestRun::settled, this, &MemoryView::emitIfSettled);
    connect(&m_timesRun, &LatestRun::settled, this, &MemoryView::emitIfSettled);

    // Three groups of controls on one line, or wrapped onto two in a narrow window.
    auto* controls = new FlowLayout;
    controls->setSpacing(16);
    QHBoxLayout* selection = addControlGroup(controls, this);
    selection->addWidget(new QLabel(tr("Class:"), this));
    m_classCombo->setToolTip(tr("A rank class: all ranks of one pipeline stage run the same program"));
    m_classCombo->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    selection->addWidget(m_classCombo);
    selection->addSpacing(12);
    selection->addWidget(new QLabel(tr("Rank:"), this));
    m_rankSpin->setToolTip(tr("Pick any rank; the chart shows its class"));
    m_rankSpin->setMinimumWidth(90);
    selection->addWidget(m_rankSpin);
    selection->addWidget(m_rankClassLabel);
    QHBoxLayout* compare = addControlGroup(controls, this);
    m_compareCheck->setToolTip(tr("Overlay the total memory of a second class as a line"));
    compare->addWidget(m_compareCheck);
    m_compareCombo->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    compare->addWidget(m_compareCombo);
    QHBoxLayout* axis = addControlGroup(controls, this);
    axis->addWidget(new QLabel(tr("X axis:"), this));
    m_xAxisCombo->addItem(tr("Program step"), int(StepAxis));
    m_xAxisCombo->addItem(tr("Estimated time (ms)"), int(TimeAxis));
    m_xAxisCombo->setToolTip(tr("Program step: node order of the schedule. Estimated time: each step at the start "
                                "of its node in the step-time estimate, as on the Timeline tab"));
    m_xAxisCombo->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    axis->addWidget(m_xAxisCombo);
    QHBoxLayout* measured = addControlGroup(controls, this);
    m_measuredButton->setToolTip(tr("Lay a memory timeline PyTorch's profiler measured (profile.export_memory_timeline "
                                    "to a .raw.json name, or its .gz) over this one"));
    measured->addWidget(m_measuredButton);
    auto* iterationsLabel = new QLabel(tr("iterations in it:"), this);
    measured->addWidget(iterationsLabel);
    m_measuredIterations->setRange(1, 100000);
    m_measuredIterations->setToolTip(tr("How many training iterations the measured recording holds: its first one is "
                                        "stretched over ours"));
    measured->addWidget(m_measuredIterations);
    m_clearMeasuredButton->setToolTip(tr("Remove the measured timeline"));
    measured->addWidget(m_clearMeasuredButton);
    for (QWidget* w : std::initializer_list<QWidget*> { iterationsLabel, m_measuredIterations, m_clearMeasuredButton })
        w->hide();
    connect(m_measuredButton, &QPushButton::clicked, this, [this, iterationsLabel] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Overlay measured memory timeline"), QString(),
            tr("PyTorch memory timelines (*.json *.raw *.gz);;All files (*)"));
        if (!path.isEmpty())
            loadMeasuredMemory(path);
        Q_UNUSED(iterationsLabel);
    });
    connect(&m_measuredRun, &LatestRun::settled, this, &MemoryView::emitIfSettled);
    connect(this, &MemoryView::measuredMemoryLoaded, this, [this, iterationsLabel] {
        for (QWidget* w :
            std::initializer_list<QWidget*> { iterationsLabel, m_measuredIterations, m_clearMeasuredButton })
            w->setVisible(m_measured != nullptr);
    });
    connect(m_measuredIterations, &QSpinBox::valueChanged, this, [this](int) { applyMeasured(); });
    connect(m_clearMeasuredButton, &QPushButton::clicked, this, [this, iterationsLabel] {
        clearMeasuredMemory();
        for (QWidget* w :
            std::initializer_list<QWidget*> { iterationsLabel, m_measuredIterations, m_clearMeasuredButton })
            w->hide();
    });
    m_measuredNote->setWordWrap(true);
    m_measuredNote->setTextFormat(Qt::RichText);
    m_measuredNote->hide();
    controls->addStretch();
    m_exportButton->setToolTip(
        tr("Save the shown class's timeline at full resolution: step, bytes per category, total"));
    controls->addWidget(m_exportButton);

    m_axisNote->setWordWrap(true);
    m_axisNote->setStyleSheet(QStringLiteral("QLabel { color: #555; }"));
    m_axisNote->hide();

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
    layout->addWidget(m_axisNote);
    layout->addWidget(m_measuredNote);
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
    connect(m_xAxisCombo, &QComboBox::activated, this,
        [this](int index) { setXAxis(static_cast<XAxis>(m_xAxisCombo->itemData(index).toInt())); });
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

QString MemoryView::baselineName(int baselineClass) const
{
    if (!m_baseline || baselineClass < 0 || static_cast<size_t>(baselineClass) >= m_baseline->summaries.size())
        return {};
    const ParallelismConfig& p = m_baseline->config.parallelism;
    QString name = tr("%1, stage %2")
                       .arg(QString::fromStdString(m_baseline->config.name))
                       .arg(m_baseline->summaries[static_cast<size_t>(baselineClass)].stage);
    if (baselineClass != currentClass())
        name += tr(" (its last)");
    return name
        + tr(", %1 (dp %2 \u00b7 tp %3 \u00b7 pp %4)")
              .arg(countNoun(m_baseline->worldSize(), tr("GPU"), tr("GPUs")))
              .arg(p.dp)
              .arg(p.tp)
              .arg(p.pp);
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
    if (m_timesFor != m_result) {
        m_times.reset(); // and the old result they were of
        m_timesFor.reset();
    }
    if (m_xAxis == TimeAxis)
        requestTimes();
    showClass(0);
}

void MemoryView::setStale(bool stale)
{
    m_staleBanner->setVisible(stale);
}

void MemoryView::setBaseline(std::shared_ptr<const SynthesisResult> baseline)
{
    if (baseline == m_baseline)
        return;
    m_baseline = std::move(baseline);
    if (m_baselineTimesFor != m_baseline) {
        m_baselineTimes.reset();
        m_baselineTimesFor.reset();
    }
    if (m_xAxis == TimeAxis)
        requestTimes();
    requestChart();
}

void MemoryView::setXAxis(XAxis axis)
{
    m_xAxisCombo->setCurrentIndex(m_xAxisCombo->findData(int(axis)));
    if (axis == m_xAxis)
        return;
    m_xAxis = axis;
    if (m_xAxis == TimeAxis)
        requestTimes();
    requestChart();
}

MemoryView::XAxis MemoryView::xAxis() const
{
    return m_xAxis;
}

int MemoryView::baselineClass() const
{
    if (!m_baseline || m_baseline->classes.empty() || currentClass() < 0)
        return -1;
    return std::min(currentClass(), static_cast<int>(m_baseline->classes.size()) - 1);
}

std::shared_ptr<const MemoryTimes> MemoryView::times() const
{
    return m_timesFor == m_result ? m_times : nullptr;
}

void MemoryView::requestTimes()
{
    const bool needResult = m_result && m_timesFor != m_result;
    const bool needBaseline = m_baseline && m_baselineTimesFor != m_baseline;
    if (!needResult && !needBaseline)
        return;
    // Either may be the one already known (a new result keeps the baseline's times, and the other way round).
    const auto result = needResult ? m_result : nullptr;
    const auto baseline = needBaseline ? m_baseline : nullptr;
    using Pair = std::pair<std::shared_ptr<const MemoryTimes>, std::shared_ptr<const MemoryTimes>>;
    m_timesRun.start(
        [result, baseline]() -> Pair {
            auto of = [](const std::shared_ptr<const SynthesisResult>& r) -> std::shared_ptr<const MemoryTimes> {
                return r ? std::make_shared<const MemoryTimes>(computeMemoryTimes(*r)) : nullptr;
            };
            return { of(result), of(baseline) };
        },
        [this, result, baseline](const Pair& times) {
            if (result && result == m_result) {
                m_times = times.first;
                m_timesFor = result;
            }
            if (baseline && baseline == m_baseline) {
                m_baselineTimes = times.second;
                m_baselineTimesFor = baseline;
            }
            requestChart();
        });
    updateAxisNote();
}

void MemoryView::updateAxisNote()
{
    QString note;
    if (m_xAxis == TimeAxis && m_result) {
        if (m_timesRun.isRunning())
            note = tr("Placing the steps on the estimated time\u2026 (the chart shows program steps until then)");
        else if (const auto t = times(); t && !t->ok)
            note = tr("No estimated times (%1): the x axis shows program steps.").arg(t->error);
    }
    m_axisNote->setText(note);
    m_axisNote->setVisible(!note.isEmpty());
}

void MemoryView::emitIfSettled()
{
    updateAxisNote();
    if (isSettled())
        Q_EMIT settled();
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
    return m_run.isRunning() || m_timesRun.isRunning();
}

bool MemoryView::isSettled() const
{
    return !m_run.isRunning() && !m_timesRun.isRunning() && !m_measuredRun.isRunning();
}

void MemoryView::loadMeasuredMemory(const QString& path)
{
    m_measuredPath = path;
    m_measuredButton->setEnabled(false);
    m_measuredRun.start(
        [path] {
            MemoryTimelineReadResult r = readMemoryTimelineFile(path.toStdString());
            std::shared_ptr<const MeasuredMemoryTimeline> timeline;
            if (r.ok())
                timeline = std::make_shared<const MeasuredMemoryTimeline>(std::move(*r.timeline));
            return std::make_pair(timeline, QString::fromStdString(r.error));
        },
        [this](const std::pair<std::shared_ptr<const MeasuredMemoryTimeline>, QString>& done) {
            m_measuredButton->setEnabled(true);
            m_measured = done.first;
            m_measuredError = done.second;
            applyMeasured();
            Q_EMIT measuredMemoryLoaded();
        },
        [this](auto&&...) {
            if (!m_measuredRun.isRunning())
                m_measuredButton->setEnabled(true);
        });
}

void MemoryView::clearMeasuredMemory()
{
    m_measuredRun.cancel();
    m_measuredPath.clear();
    m_measuredError.clear();
    m_measured.reset();
    applyMeasured();
}

void MemoryView::setMeasuredIterations(int iterations)
{
    m_measuredIterations->setValue(iterations); // valueChanged -> applyMeasured()
}

std::shared_ptr<const MeasuredMemoryTimeline> MemoryView::measuredMemory() const
{
    return m_measured;
}

QString MemoryView::measuredMemoryError() const
{
    return m_measuredError;
}

QLabel* MemoryView::measuredNote() const
{
    return m_measuredNote;
}

void MemoryView::applyMeasured()
{
    if (!m_measured) {
        m_chart->setMeasured({}, {}, {});
        m_measuredNote->setText(m_measuredError.isEmpty()
                ? QString()
                : tr("<span style='color:#9b1c1c'>Measured memory not overlaid: %1</span>")
                      .arg(m_measuredError.toHtmlEscaped()));
        m_measuredNote->setVisible(!m_measuredError.isEmpty());
        m_legend->setText(m_chart->legendHtml());
        return;
    }
    // One measured iteration: the first 1/N of the recording, stretched over our iteration's x range.
    const MeasuredMemoryTimeline& t = *m_measured;
    const int n = std::max(1, m_measuredIterations->value());
    const double span = t.points.empty() ? 0.0 : t.points.back().timeUs;
    const double window = span > 0 ? span / n : 1.0;
    const MemoryChartData& data = m_chart->chartData();
    const double xMax = std::max(data.xMax, 1e-9);
    std::vector<int64_t> totals;
    std::vector<size_t> inWindow;
    for (size_t i = 0; i < t.points.size() && t.points[i].timeUs <= window; ++i) {
        totals.push_back(t.points[i].totalBytes);
        inWindow.push_back(i);
    }
    QList<QPointF> points;
    QPointF peak;
    int64_t peakBytes = -1;
    double peakTimeUs = 0;
    for (size_t i : inWindow)
        if (t.points[i].totalBytes > peakBytes) {
            peakBytes = t.points[i].totalBytes;
            peakTimeUs = t.points[i].timeUs;
        }
    // The maxima of 2000 buckets keep the peak; the last point keeps the end of the iteration in view.
    std::vector<int64_t> kept = maximaSampleIndices(totals, 2000);
    if (!totals.empty() && (kept.empty() || kept.back() != int64_t(totals.size()) - 1))
        kept.push_back(int64_t(totals.size()) - 1);
    for (int64_t k : kept) {
        const MeasuredMemoryPoint& p = t.points[inWindow[size_t(k)]];
        points.append(QPointF(p.timeUs / window * xMax, double(p.totalBytes)));
    }
    peak = QPointF(peakTimeUs / window * xMax, double(std::max<int64_t>(peakBytes, 0)));
    const QString file = QFileInfo(m_measuredPath).fileName();
    const QString which = n > 1 ? tr("its iteration 1 of %1").arg(n) : tr("the whole recording");
    m_chart->setMeasured(points, peak,
        tr("measured: %1 (%2, peak %3)").arg(file, which, formatByteCount(double(std::max<int64_t>(peakBytes, 0)))));
    m_measuredNote->setText(tr("<b>Measured</b> %1: %2 (%3 of a %4 recording) stretched over our iteration; "
                               "measured peak <b>%5</b> at %6 into it, ours <b>%7</b>.")
                                .arg(file.toHtmlEscaped(), which, formatDuration(window * 1e-6),
                                    formatDuration(span * 1e-6), formatByteCount(double(peakBytes)),
                                    formatDuration(peakTimeUs * 1e-6), formatByteCount(double(data.peakBytes))));
    m_measuredNote->setVisible(true);
    m_legend->setText(m_chart->legendHtml());
}

void MemoryView::requestChart()
{
    if (!m_result)
        return;
    // The worker gets copies only: the shared (immutable) results and times, and indices.
    MemoryChartRequest request;
    request.classIndex = currentClass();
    request.compareClass = compareClass();
    if (m_xAxis == TimeAxis)
        request.times = times();
    if (m_baseline) {
        request.baseline = m_baseline;
        request.baselineClass = baselineClass();
        if (m_baselineTimesFor == m_baseline)
            request.baselineTimes = m_baselineTimes;
    }
    m_run.start([result = m_result, request] { return buildMemoryChartData(*result, request); },
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
    m_chart->setChartData(data, title, className(data.compareClass), hbmBytes, gpu, baselineName(data.baselineClass));
    m_legend->setText(m_chart->legendHtml());
    if (m_measured)
        applyMeasured(); // to the new x range
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
    const MemoryChartData& shown = m_chart->chartData();
    const QString at = shown.timeAxis && shown.classIndex == cls
        ? tr(" \u00b7 %1").arg(formatDuration(m_chart->xOfStep(step) / 1000.0))
        : QString();
    m_chart->setCursor(step,
        tr("step %1%2 \u00b7 %3%4").arg(step).arg(at, formatByteCount(total), atPeak ? tr(" \u00b7 peak") : QString()));
    m_cursorTitle->setText(tr("<b>Live at step %1%2%3</b>: %4 in %5<br><span style='color:#555'>running: %6</span>")
                               .arg(step)
                               .arg(at, atPeak ? tr(" (the peak)") : QString(), formatByteCount(total),
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

QComboBox* MemoryView::xAxisCombo() const
{
    return m_xAxisCombo;
}

QLabel* MemoryView::axisNote() const
{
    return m_axisNote;
}

} // namespace stagecraft
