// SPDX-License-Identifier: MIT
#include "sweep/sweepview.h"

#include "charts/chartparts.h"
#include "config/configvalidator.h"
#include "estimate/stepestimate.h"
#include "models/formatting.h"
#include "sweep/sweepchartview.h"
#include "sweep/sweepmodel.h"
#include "sweep/sweepprogress.h"
#include "sweep/sweeprejectedmodel.h"
#include "synthesis/synthesis.h"

#include <QElapsedTimer>
#include <QEvent>
#include <QFontMetrics>
#include <QFrame>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QRegularExpressionValidator>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QSplitter>
#include <QStyle>
#include <QTabWidget>
#include <QTableView>
#include <QToolButton>
#include <QTreeView>
#include <QVBoxLayout>
#include <cmath>
#include <iterator>
#include <map>

namespace stagecraft {

namespace {

    /// The TPOT limit the field starts with, milliseconds: 20 tokens/s for each sequence. An interactive rate, a little
    /// looser than MLPerf Inference's interactive scenario for Llama 2 70B (P99 TPOT <= 40 ms; its server scenario
    /// allows 200 ms; mlcommons/inference: loadgen/mlperf.conf).
    constexpr double kDefaultTpotLimitMs = 50;
    /// The rejected plans' reason column, pixels (serving sweeps widen it where there is room).
    constexpr int kReasonWidth = 260;

    /// Milliseconds from the TPOT field: empty is 0 (no limit); nullopt when it is no non-negative number.
    std::optional<double> parseTpotLimitMs(const QString& text)
    {
        const QString trimmed = text.trimmed();
        if (trimmed.isEmpty())
            return 0.0;
        bool ok = false;
        const double value = trimmed.toDouble(&ok);
        if (!ok || !std::isfinite(value) || value < 0)
            return std::nullopt;
        return value;
    }

    std::optional<std::vector<int64_t>> parseMicroBatches(const QString& text)
    {
        std::vector<int64_t> out;
        for (const QString& part : text.split(QRegularExpression(QStringLiteral("[,\\s]+")), Qt::SkipEmptyParts)) {
            bool ok = false;
            const qint64 value = part.toLongLong(&ok);
            if (!ok || value < 1)
                return std::nullopt;
            out.push_back(value);
        }
        if (out.empty())
            return std::nullopt;
        return out;
    }

    QString microBatchText(const std::vector<int64_t>& values)
    {
        QStringList parts;
        for (int64_t v : values)
            parts << QString::number(v);
        return parts.join(QStringLiteral(", "));
    }

    void setupTableLook(QAbstractItemView* view, int rowHeight)
    {
        view->setSelectionBehavior(QAbstractItemView::SelectRows);
        view->setSelectionMode(QAbstractItemView::SingleSelection);
        view->setAlternatingRowColors(true);
        view->setEditTriggers(QAbstractItemView::NoEditTriggers);
        if (auto* table = qobject_cast<QTableView*>(view)) {
            table->setWordWrap(false);
            table->verticalHeader()->hide();
            table->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
            table->verticalHeader()->setDefaultSectionSize(rowHeight);
        }
    }

} // namespace

SweepView::SweepView(QWidget* parent)
    : ResultView(parent)
    , m_model(new SweepModel(this))
    , m_rejectedModel(new SweepRejectedModel(this))
    , m_proxy(new QSortFilterProxyModel(this))
    , m_chart(new SweepChartView(this))
    , m_table(new QTableView(this))
    , m_rejectedTree(new QTreeView(this))
    , m_tabs(new QTabWidget(this))
    , m_gpusSpin(new QSpinBox(this))
    , m_microBatchLabel(new QLabel(tr("Micro-batch sizes:"), this))
    , m_microBatchEdit(new QLineEdit(this))
    , m_tpotLimitLabel(new QLabel(tr("TPOT limit (ms):"), this))
    , m_tpotLimitEdit(new QLineEdit(this))
    , m_hint(new QLabel(this))
    , m_runButton(new QPushButton(tr("Run sweep"), this))
    , m_tryButton(new QToolButton(this))
    , m_tryFp8(new QAction(tr("FP8 training (where the GPU has an FP8 peak)"), this))
    , m_tryOverlap(new QAction(tr("The other expert all-to-all overlap setting (MoE)"), this))
    , m_trySplit(new QAction(tr("Balanced splits: embedding and loss counted as layers, uneven layouts"), this))
    , m_progressBar(new QProgressBar(this))
    , m_statusLabel(new QLabel(this))
    , m_banner(new QLabel(this))
    , m_legend(new QLabel(this))
{
    connect(&m_run, &LatestRun::settled, this, &ResultView::settled);

    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("GPUs:"), this));
    m_gpusSpin->setRange(1, static_cast<int>(kMaxWorldSize));
    m_gpusSpin->setMinimumWidth(90);
    m_gpusSpin->setToolTip(tr("GPUs to plan for: every plan has dp \u00d7 tp \u00d7 pp \u00d7 cp equal to this. "
                              "Follows the current config's world size until you change it."));
    controls->addWidget(m_gpusSpin);
    controls->addSpacing(12);
    controls->addWidget(m_microBatchLabel);
    m_microBatchEdit->setText(microBatchText(SweepOptions {}.microBatches));
    m_microBatchEdit->setValidator(
        new QRegularExpressionValidator(QRegularExpression(QStringLiteral("[0-9,\\s]*")), m_microBatchEdit));
    m_microBatchEdit->setToolTip(tr("Micro-batch sizes tried, e.g. \u201c1, 2, 4\u201d (those dividing the "
                                    "per-replica batch)"));
    m_microBatchEdit->setMaximumWidth(140);
    controls->addWidget(m_microBatchEdit);
    controls->addWidget(m_tpotLimitLabel);
    m_tpotLimitEdit->setText(QString::number(kDefaultTpotLimitMs));
    m_tpotLimitEdit->setPlaceholderText(tr("no limit"));
    m_tpotLimitEdit->setValidator(
        new QRegularExpressionValidator(QRegularExpression(QStringLiteral("[0-9]*([.][0-9]*)?")), m_tpotLimitEdit));
    const QString tpotTip = tr("Serving plans whose time per output token (the mean over the generation) exceeds this "
                               "many milliseconds are rejected; empty or 0 sets no limit. The default, %1 ms, is 20 "
                               "tokens/s for each sequence, an interactive rate: MLPerf Inference's Llama 2 70B "
                               "benchmark allows a 99th-percentile TPOT of 40 ms in its interactive scenario and "
                               "200 ms in its server scenario (mlcommons/inference, loadgen/mlperf.conf).")
                                .arg(kDefaultTpotLimitMs);
    m_tpotLimitLabel->setToolTip(tpotTip);
    m_tpotLimitEdit->setToolTip(tpotTip);
    m_tpotLimitEdit->setMaximumWidth(80);
    controls->addWidget(m_tpotLimitEdit);
    m_tpotLimitLabel->hide();
    m_tpotLimitEdit->hide();
    // What the sweep also tries beyond the degrees (sweep --precisions, --a2a-overlap, --balanced-split): a menu,
    // so that the row keeps its width at 1366 x 768.
    m_tryButton->setText(tr("Also try"));
    m_tryButton->setObjectName(QStringLiteral("sweepAlsoTry"));
    m_tryButton->setPopupMode(QToolButton::InstantPopup);
    m_tryButton->setToolTip(tr("Settings the sweep also tries for every plan, each doubling the plans it touches; "
                               "plans with the overlapped all-to-all are synthesized in full (at most 64)"));
    auto* tryMenu = new QMenu(m_tryButton);
    for (QAction* a : { m_tryFp8, m_tryOverlap, m_trySplit }) {
        a->setCheckable(true);
        tryMenu->addAction(a);
    }
    m_tryButton->setMenu(tryMenu);
    controls->addWidget(m_tryButton);
    controls->addSpacing(12);
    m_runButton->setMinimumWidth(m_runButton->fontMetrics().horizontalAdvance(tr("Run sweep")) + 40);
    controls->addWidget(m_runButton);
    m_progressBar->setRange(0, 1000);
    m_progressBar->setTextVisible(true);
    m_progressBar->setFormat(QStringLiteral("%p%"));
    m_progressBar->setMaximumWidth(220);
    m_progressBar->hide();
    controls->addWidget(m_progressBar);
    controls->addSpacing(12);
    m_statusLabel->setTextFormat(Qt::PlainText);
    m_statusLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    controls->addWidget(m_statusLabel, 1);

    m_banner->setStyleSheet(
        QStringLiteral("QLabel { background: #fff3cd; color: #664d03; padding: 4px 8px; border-radius: 3px; }"));
    m_banner->setWordWrap(true);
    m_banner->hide();

    const int rowHeight = fontMetrics().height() + 6;
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(SweepModel::SortRole);
    m_table->setModel(m_proxy);
    setupTableLook(m_table, rowHeight);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(SweepModel::RankColumn, Qt::AscendingOrder);
    m_table->horizontalHeader()->setMinimumSectionSize(24);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setResizeContentsPrecision(64); // thousands of plans; widths from the first rows
    m_table->horizontalHeader()->setStretchLastSection(true);

    m_rejectedTree->setModel(m_rejectedModel);
    setupTableLook(m_rejectedTree, rowHeight);
    m_rejectedTree->setUniformRowHeights(true);
    m_rejectedTree->header()->setStretchLastSection(false);
    m_rejectedTree->header()->setMinimumSectionSize(24);
    m_rejectedTree->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_rejectedTree->header()->setResizeContentsPrecision(64);
    m_rejectedTree->header()->setSectionResizeMode(SweepRejectedModel::ReasonColumn, QHeaderView::Interactive);
    m_rejectedTree->setColumnWidth(SweepRejectedModel::ReasonColumn, kReasonWidth);
    // The reason column takes the room the figures leave (serving): refit when they or the tree change size.
    m_rejectedTree->viewport()->installEventFilter(this);
    connect(m_rejectedTree->header(), &QHeaderView::sectionResized, this, [this](int logicalIndex) {
        if (logicalIndex != SweepRejectedModel::ReasonColumn)
            fitReasonColumn();
    });

    m_tabs->addTab(m_table, tr("Fitting plans"));
    m_tabs->addTab(m_rejectedTree, tr("Rejected plans"));

    m_hint->setWordWrap(true);
    m_hint->setStyleSheet(QStringLiteral("QLabel { color: palette(mid); }"));
    auto* side = new QWidget(this);
    auto* sideLayout = new QVBoxLayout(side);
    sideLayout->setContentsMargins(0, 0, 0, 0);
    sideLayout->addWidget(m_tabs, 1);
    sideLayout->addWidget(m_hint);

    QFrame* card = chartCard(m_chart, m_legend, this);

    auto* splitter = new QSplitter(Qt::Horizontal, this);
    splitter->addWidget(card);
    splitter->addWidget(side);
    // The table needs about 740 px for its columns; the chart takes the rest.
    splitter->setStretchFactor(0, 2);
    splitter->setStretchFactor(1, 3);
    splitter->setSizes({ 560, 840 });
    splitter->setChildrenCollapsible(false);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(m_banner);
    layout->addWidget(splitter, 1);

    connect(m_gpusSpin, &QSpinBox::valueChanged, this, [this](int value) {
        if (!m_syncing)
            m_gpusEdited = !m_config || value != m_config->parallelism.worldSize();
    });
    connect(m_runButton, &QPushButton::clicked, this, [this] {
        if (isRunning())
            cancel();
        else
            runSweep();
    });
    for (QLineEdit* edit : { m_microBatchEdit, m_tpotLimitEdit })
        connect(edit, &QLineEdit::returnPressed, this, [this] {
            if (!isRunning())
                runSweep();
        });
    connect(m_table, &QTableView::activated, this,
        [this](const QModelIndex& index) { chooseRow(m_proxy->mapToSource(index).row()); });
    connect(
        m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& current) {
            const int row = current.isValid() ? m_proxy->mapToSource(current).row() : -1;
            m_chart->setHighlightedPlan(row >= 0 ? SweepPlanRef { true, row } : SweepPlanRef {});
        });
    connect(m_rejectedTree, &QTreeView::activated, this, [this](const QModelIndex& index) {
        const int i = m_rejectedModel->rejectedIndex(index);
        if (i >= 0)
            choosePlan({ false, i });
    });
    connect(m_rejectedTree->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
        [this](const QModelIndex& current) {
            const int i = m_rejectedModel->rejectedIndex(current);
            m_chart->setHighlightedPlan(i >= 0 ? SweepPlanRef { false, i } : SweepPlanRef {});
        });
    connect(m_chart, &SweepChartView::planClicked, this, [this](SweepPlanRef plan) {
        // Show the plan in its table, then load it.
        if (plan.fitting) {
            m_tabs->setCurrentWidget(m_table);
            m_table->setCurrentIndex(m_proxy->mapFromSource(m_model->index(plan.index, 0)));
        }
        choosePlan(plan);
    });

    m_chart->setSweep(nullptr, {}, tr("Press \u201cRun sweep\u201d to rank every plan for the GPU count"));
    m_statusLabel->setText(tr("No sweep yet."));
    updateColumns();
    setEnabled(false);
}

SweepView::~SweepView()
{
    // The worker uses m_progress and its own copies only; stop it (m_run then waits for it).
    if (m_progress)
        m_progress->cancel();
}

void SweepView::setResult(std::shared_ptr<const SynthesisResult> result)
{
    if (!result)
        return;
    m_config = result->config;
    setEnabled(true);
    const int world = static_cast<int>(std::min<int64_t>(m_config->parallelism.worldSize(), kMaxWorldSize));
    if (!m_gpusEdited || m_gpusSpin->value() == world) {
        m_syncing = true;
        m_gpusSpin->setValue(world);
        m_syncing = false;
        m_gpusEdited = false;
    }
    updateControls();
    updateCurrentPlan();
    updateBanner();
}

void SweepView::updateControls()
{
    const bool serving = m_config && isInference(*m_config);
    m_microBatchLabel->setVisible(!serving);
    m_microBatchEdit->setVisible(!serving);
    m_tpotLimitLabel->setVisible(serving);
    m_tpotLimitEdit->setVisible(serving);
    m_tryButton->setVisible(!serving);
    m_tryOverlap->setEnabled(m_config && m_config->model.family == Family::Moe);
    m_runButton->setToolTip(serving
            ? tr("Estimate every serving plan (dp, tp, pp, ep) for this many GPUs in full and rank those that fit "
                 "under the TPOT limit by output tokens/s per GPU")
            : tr("Estimate every (dp, tp, pp, schedule, cp, ep, micro-batch, recompute, ZeRO) plan for this many GPUs "
                 "(1F1B and the config's own schedule); large models take seconds"));
}

void SweepView::setBaseline(std::shared_ptr<const SynthesisResult> baseline)
{
    m_baselineConfig = baseline ? std::optional<Config>(baseline->config) : std::nullopt;
    updateCurrentPlan();
}

void SweepView::setStale(bool stale)
{
    m_stale = stale;
    updateBanner();
}

bool SweepView::runSweep()
{
    if (isRunning())
        cancel();
    if (!m_config) {
        fail(tr("No config to sweep yet."));
        return false;
    }
    std::string error;
    const std::optional<GpuSpec> gpu = gpuForConfig(*m_config, error);
    if (!gpu) {
        fail(QString::fromStdString(error));
        return false;
    }
    SweepOptions sweepOptions;
    if (isInference(*m_config)) {
        // Serving plans keep the config's micro-batch: the micro-batch field is hidden and not read.
        const std::optional<double> tpotLimitMs = parseTpotLimitMs(m_tpotLimitEdit->text());
        if (!tpotLimitMs) {
            fail(tr("TPOT limit: expected milliseconds (empty or 0 for none), found \u201c%1\u201d")
                     .arg(m_tpotLimitEdit->text()));
            return false;
        }
        sweepOptions.tpotLimitS = *tpotLimitMs * 1e-3;
    } else {
        const std::optional<std::vector<int64_t>> microBatches = parseMicroBatches(m_microBatchEdit->text());
        if (!microBatches) {
            fail(tr("Micro-batch sizes: expected positive integers separated by commas, found \u201c%1\u201d")
                     .arg(m_microBatchEdit->text()));
            return false;
        }
        sweepOptions.microBatches = *microBatches;
        if (m_tryFp8->isChecked()) {
            const Precision own = m_config->training.precision;
            sweepOptions.precisions = { own, own == Precision::Fp8 ? Precision::Bf16 : Precision::Fp8 };
        }
        sweepOptions.tryA2aOverlap = m_tryOverlap->isChecked() && m_tryOverlap->isEnabled();
        sweepOptions.tryBalancedSplit = m_trySplit->isChecked();
    }
    const Config config = *m_config;
    const int64_t gpus = m_gpusSpin->value();
    auto* progress = new SweepProgress(this);
    m_progress = progress;
    connect(progress, &SweepProgress::progressed, this, [this, progress](double fraction) {
        if (progress == m_progress && isRunning())
            m_progressBar->setValue(static_cast<int>(fraction * 1000));
    });
    auto release = [this, progress] {
        progress->deleteLater();
        if (m_progress == progress)
            m_progress = nullptr;
    };

    // The worker gets copies only; `progress` stays alive until the run has been applied or dropped.
    m_run.start(
        [config, gpus, gpu = *gpu, sweepOptions, progress] {
            QElapsedTimer timer;
            timer.start();
            Outcome outcome;
            auto result = std::make_shared<SweepResult>();
            if (progress->cancelled()) {
                result->cancelled = true;
            } else {
                try {
                    *result = sweep(config, gpus, gpu, EstimateOptions {}, progress, sweepOptions);
                } catch (...) {
                    // sweep() reports its errors in the result; nothing may escape the worker anyway.
                    result->error = "internal error in the sweep";
                }
            }
            outcome.result = std::move(result);
            outcome.durationS = static_cast<double>(timer.nsecsElapsed()) * 1e-9;
            return outcome;
        },
        [this, config, release](const Outcome& outcome) {
            release();
            setRunning(false);
            if (!outcome.result->error.empty()) {
                fail(QString::fromStdString(outcome.result->error));
                return;
            }
            showOutcome(outcome, config);
            Q_EMIT sweepFinished();
        },
        [this, release](const std::optional<Outcome>& outcome) {
            // Cancelled, or superseded by a newer run (which stopped it).
            release();
            if (!isRunning())
                setStatus(m_sweep ? tr("Cancelled; showing the previous sweep: %1").arg(summary()) : tr("Cancelled."));
            Q_EMIT sweepCancelled(outcome && outcome->result->cancelled);
        });
    setRunning(true);
    setStatus(tr("Sweeping %1 on %2 GPUs\u2026").arg(QString::fromStdString(config.name), formatExact(gpus)));
    Q_EMIT sweepStarted();
    return true;
}

void SweepView::cancel()
{
    if (!isRunning())
        return;
    if (m_progress)
        m_progress->cancel();
    setRunning(false);
    m_run.cancel();
    setStatus(tr("Cancelling\u2026"));
}

bool SweepView::isRunning() const
{
    return m_run.isRunning();
}

bool SweepView::isSettled() const
{
    return !m_run.isRunning();
}

void SweepView::setRunning(bool running)
{
    m_runButton->setText(running ? tr("Cancel") : tr("Run sweep"));
    m_progressBar->setVisible(running);
    m_progressBar->setValue(0);
    m_gpusSpin->setEnabled(!running);
    m_microBatchEdit->setEnabled(!running);
    m_tpotLimitEdit->setEnabled(!running);
}

void SweepView::fail(const QString& message)
{
    setStatus(tr("Sweep failed: %1").arg(message), true);
    Q_EMIT sweepFailed(message);
}

void SweepView::showOutcome(const Outcome& outcome, const Config& config)
{
    m_sweep = outcome.result;
    m_sweepConfig = config;
    m_sweepDurationS = outcome.durationS;
    m_model->setResult(m_sweep);
    m_rejectedModel->setResult(m_sweep);
    const SweepResult& r = *m_sweep;
    // The TPOT limit is not in the title (the chart's line and legend show it): the card is narrow on small screens.
    const QString title =
        tr("%1 on %2 \u00d7 %3")
            .arg(QString::fromStdString(config.name), formatExact(r.gpus), QString::fromStdString(r.gpu));
    m_chart->setSweep(m_sweep, m_model->paretoRows(), title);
    m_tabs->setTabText(0, tr("Fitting plans (%1)").arg(formatExact(static_cast<qint64>(r.ranked.size()))));
    m_tabs->setTabText(1, tr("Rejected plans (%1)").arg(formatExact(static_cast<qint64>(r.rejected.size()))));
    updateColumns();
    updateCurrentPlan();
    updateBanner();
    setStatus(summary());
}

void SweepView::updateColumns()
{
    const bool serving = m_sweep && m_sweep->serving;
    if (serving != m_servingColumns) {
        // Other columns: the old sort column would be another field now. Sort by the ranking key.
        m_servingColumns = serving;
        if (serving)
            m_table->sortByColumn(m_model->column(SweepField::TokensPerGpu), Qt::DescendingOrder);
        else
            m_table->sortByColumn(SweepModel::RankColumn, Qt::AscendingOrder);
        // A handful of serving columns: a stretched last column would put its numbers far from the others.
        m_table->horizontalHeader()->setStretchLastSection(!serving);
        if (!serving)
            m_rejectedTree->setColumnWidth(SweepRejectedModel::ReasonColumn, kReasonWidth);
    }
    m_hint->setText(serving
            ? tr("Click a point or double-click a row to load its plan into the editor (undoable). Bold rows are on "
                 "the Pareto front: no plan has both a lower TPOT and a higher throughput.")
            : tr("Click a point or double-click a row to load its plan into the editor (undoable). Bold rows are on "
                 "the Pareto front."));

    // Columns every plan has at the same value would only take room: ep = 1 for dense models; for serving, cp = 1
    // unless the plans run only the prefill, no TPOT without a decode, no TTFT without a prefill.
    if (!m_sweep)
        return;
    bool experts = false, contexts = false, tpot = false, ttft = false;
    for (const auto* list : { &m_sweep->ranked, &m_sweep->rejected })
        for (const SweepCandidate& c : *list) {
            experts = experts || c.ep > 1;
            contexts = contexts || c.cp > 1;
            tpot = tpot || c.tpotS > 0;
            ttft = ttft || c.ttftS > 0;
        }
    std::vector<std::pair<SweepField, bool>> hidden { { SweepField::Ep, !experts } };
    if (serving)
        hidden.insert(
            hidden.end(), { { SweepField::Cp, !contexts }, { SweepField::Tpot, !tpot }, { SweepField::Ttft, !ttft } });
    for (int column = 0; column < m_model->columnCount(); ++column)
        m_table->setColumnHidden(column, false);
    // Serving: the rank is the row order under the default sort by tokens/s, and the room goes to the figures (with
    // ep, the columns fit beside the chart at 1366 pixels only without it).
    m_table->setColumnHidden(SweepModel::RankColumn, serving);
    for (int column = 0; column < m_rejectedModel->columnCount(); ++column)
        m_rejectedTree->setColumnHidden(column, false);
    for (const auto& [field, hide] : hidden) {
        if (const int column = m_model->column(field); column >= 0)
            m_table->setColumnHidden(column, hide);
        if (const int column = m_rejectedModel->column(field); column >= 0)
            m_rejectedTree->setColumnHidden(column, hide);
    }
    // Training: the figures a plan is ranked by come first, after the rank, so a table narrower than its columns
    // scrolls the plan's keys out of sight, never the step time, MFU and peak. (The serving table's few columns
    // fit beside the chart.)
    const SweepField figures[] = { SweepField::StepTime, SweepField::Mfu, SweepField::Peak };
    for (auto it = std::rbegin(figures); it != std::rend(figures) && !serving; ++it) {
        if (const int column = m_model->column(*it); column >= 0)
            m_table->horizontalHeader()->moveSection(m_table->horizontalHeader()->visualIndex(column), 1);
    }

    m_reasonWidth = 0;
    if (serving) {
        // The plans' reasons are indented under their group; the groups' titles are bold.
        const QFontMetrics plain(m_rejectedTree->font());
        QFont boldFont = m_rejectedTree->font();
        boldFont.setBold(true);
        const QFontMetrics bold(boldFont);
        const int indent = m_rejectedTree->indentation();
        for (int g = 0; g < m_rejectedModel->rowCount(); ++g) {
            const QModelIndex group = m_rejectedModel->index(g, 0);
            m_reasonWidth = std::max(m_reasonWidth, indent + bold.horizontalAdvance(group.data().toString()));
            for (int row = 0; row < m_rejectedModel->rowCount(group); ++row)
                m_reasonWidth = std::max(m_reasonWidth,
                    2 * indent + plain.horizontalAdvance(m_rejectedModel->index(row, 0, group).data().toString()));
        }
        m_reasonWidth += 2 * m_rejectedTree->style()->pixelMetric(QStyle::PM_FocusFrameHMargin) + 8;
    }
    fitReasonColumn();
}

void SweepView::fitReasonColumn()
{
    if (!m_servingColumns)
        return;
    QHeaderView* header = m_rejectedTree->header();
    int others = 0;
    for (int column = 1; column < header->count(); ++column)
        if (!header->isSectionHidden(column))
            others += header->sectionSize(column);
    const int room = m_rejectedTree->viewport()->width() - others;
    header->resizeSection(SweepRejectedModel::ReasonColumn, std::max(kReasonWidth, std::min(m_reasonWidth, room)));
}

bool SweepView::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_rejectedTree->viewport() && event->type() == QEvent::Resize)
        fitReasonColumn();
    return ResultView::eventFilter(watched, event);
}

void SweepView::updateCurrentPlan()
{
    SweepPlanRef current;
    if (m_sweep && m_config && sameSweepInputs(*m_config, m_sweepConfig))
        current = findSweepPlan(*m_sweep, *m_config);
    m_chart->setCurrentPlan(current);
    SweepPlanRef baseline;
    if (m_sweep && m_baselineConfig && sameSweepInputs(*m_baselineConfig, m_sweepConfig))
        baseline = findSweepPlan(*m_sweep, *m_baselineConfig);
    m_chart->setBaselinePlan(baseline);
    m_model->setCurrentRow(current.isValid() && current.fitting ? current.index : -1);
    m_legend->setText(m_chart->legendHtml());
}

void SweepView::updateBanner()
{
    QString text;
    if (m_stale)
        text = tr("The config has changed and does not synthesize: sweeps use the last good config.");
    else if (m_sweep && m_config && !sameSweepInputs(*m_config, m_sweepConfig))
        text = tr("The config has changed since this sweep (model, batch, schedule or cluster): run it again to "
                  "rank plans for the current config.");
    m_banner->setText(text);
    m_banner->setVisible(!text.isEmpty());
}

QString SweepView::summary() const
{
    return m_sweep ? summaryOf(*m_sweep, m_sweepDurationS) : tr("No sweep yet.");
}

QString SweepView::summaryOf(const SweepResult& r, double durationS)
{
    qint64 oom = 0, invalid = 0, overLimit = 0, failed = 0;
    std::map<std::string, qint64> failures; ///< why the estimate failed, and how often
    for (const SweepCandidate& c : r.rejected) {
        if (c.rejection == SweepRejection::OutOfMemory)
            ++oom;
        else if (c.rejection == SweepRejection::Invalid)
            ++invalid;
        else if (c.rejection == SweepRejection::OverTpotLimit)
            ++overLimit;
        else {
            ++failed;
            ++failures[c.reason];
        }
    }
    QString text;
    if (r.serving) {
        text = tr("%1: %2 fit, %3 out of memory")
                   .arg(countNoun(r.candidates, tr("serving plan"), tr("serving plans")),
                       formatExact(static_cast<qint64>(r.ranked.size())), formatExact(oom));
        if (r.tpotLimitS > 0)
            text += tr(", %1 over the TPOT limit of %2").arg(formatExact(overLimit), formatDuration(r.tpotLimitS));
        if (invalid > 0)
            text += tr(", %1 invalid").arg(formatExact(invalid));
    } else {
        text = tr("%1: %2 fit, %3 out of memory, %4 invalid")
                   .arg(countNoun(r.candidates, tr("plan"), tr("plans")),
                       formatExact(static_cast<qint64>(r.ranked.size())), formatExact(oom), formatExact(invalid));
    }
    if (failed > 0) {
        // Say why: the most common reason (the Rejected plans tab groups them all).
        const auto common = std::max_element(
            failures.begin(), failures.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
        QString why = QString::fromStdString(common->first);
        if (why.size() > 90)
            why = why.left(89) + QChar(0x2026);
        text += common->second == failed ? tr(", %1 failed (%2)").arg(formatExact(failed), why)
                                         : tr(", %1 failed (%2 of them: %3; the Rejected plans tab lists every reason)")
                                               .arg(formatExact(failed), formatExact(common->second), why);
    }
    const QString duration = durationS >= 1 ? tr("%1 s").arg(QString::number(durationS, 'f', 1))
                                            : tr("%1 ms").arg(std::max<qint64>(1, qRound64(durationS * 1000)));
    return text + QStringLiteral(" \u2014 ") + duration;
}

void SweepView::setStatus(const QString& text, bool error)
{
    m_statusLabel->setStyleSheet(error ? QStringLiteral("QLabel { color: #b00020; }") : QString());
    m_statusLabel->setText(text);
}

std::shared_ptr<const SweepResult> SweepView::sweepResult() const
{
    return m_sweep;
}

const Config& SweepView::sweepConfig() const
{
    return m_sweepConfig;
}

double SweepView::sweepDurationS() const
{
    return m_sweepDurationS;
}

bool SweepView::choosePlan(SweepPlanRef plan)
{
    const SweepCandidate* c = m_sweep ? sweepCandidate(*m_sweep, plan) : nullptr;
    if (!c || !m_config)
        return false;
    Q_EMIT planChosen(sweepPlanConfig(*m_config, *c));
    return true;
}

bool SweepView::chooseRow(int row)
{
    return choosePlan({ true, row });
}

SweepModel* SweepView::model() const
{
    return m_model;
}

SweepRejectedModel* SweepView::rejectedModel() const
{
    return m_rejectedModel;
}

QSortFilterProxyModel* SweepView::proxyModel() const
{
    return m_proxy;
}

SweepChartView* SweepView::chartView() const
{
    return m_chart;
}

QTableView* SweepView::table() const
{
    return m_table;
}

QTreeView* SweepView::rejectedTree() const
{
    return m_rejectedTree;
}

QSpinBox* SweepView::gpusSpin() const
{
    return m_gpusSpin;
}

QLineEdit* SweepView::microBatchEdit() const
{
    return m_microBatchEdit;
}

QLineEdit* SweepView::tpotLimitEdit() const
{
    return m_tpotLimitEdit;
}

QPushButton* SweepView::runButton() const
{
    return m_runButton;
}

QProgressBar* SweepView::progressBar() const
{
    return m_progressBar;
}

QLabel* SweepView::statusLabel() const
{
    return m_statusLabel;
}

QLabel* SweepView::legendLabel() const
{
    return m_legend;
}

} // namespace stagecraft
