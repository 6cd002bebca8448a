// SPDX-License-Identifier: MIT
#include "widgets/overviewview.h"

#include "estimate/stepestimate.h"
#include "models/formatting.h"
#include "models/overviewmodel.h"
#include "synthesis/synthesis.h"

#include <QApplication>
#include <QFrame>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QResizeEvent>
#include <QScrollBar>
#include <QSortFilterProxyModel>
#include <QStyle>
#include <QTableView>
#include <QVBoxLayout>

namespace stagecraft {

namespace {

    QLabel* sectionLabel(const QString& text, QWidget* parent)
    {
        auto* label = new QLabel(text, parent);
        QFont font = label->font();
        font.setBold(true);
        label->setFont(font);
        return label;
    }

    /// What the worker hands back: plain values only.
    struct EstimateOutcome
    {
        std::shared_ptr<const StepEstimate> estimate;
        std::string error;
    };

    EstimateOutcome runEstimate(const SynthesisResult& result)
    {
        EstimateOutcome outcome;
        try {
            const std::optional<GpuSpec> gpu = gpuForConfig(result.config, outcome.error);
            if (!gpu)
                return outcome;
            auto estimate = std::make_shared<StepEstimate>();
            if (estimateStep(result, *gpu, EstimateOptions {}, *estimate, outcome.error))
                outcome.estimate = std::move(estimate);
        } catch (...) {
            // estimateStep() promises not to throw; nothing may escape the worker anyway.
            outcome.estimate.reset();
            outcome.error = "internal error in the step-time estimate";
        }
        return outcome;
    }

    QString stepCard()
    {
        return QStringLiteral("step");
    }

} // namespace

OverviewView::OverviewView(QWidget* parent)
    : ResultView(parent)
    , m_model(new OverviewModel(this))
    , m_proxy(new QSortFilterProxyModel(this))
    , m_title(new QLabel(this))
    , m_subtitle(new QLabel(this))
    , m_staleBanner(new QLabel(this))
    , m_table(new QTableView(this))
    , m_warnings(new QListWidget(this))
    , m_warningsLabel(sectionLabel(tr("Warnings"), this))
{
    connect(&m_run, &LatestRun::settled, this, &ResultView::settled);
    setObjectName(QStringLiteral("overview"));
    setStyleSheet(
        QStringLiteral("QFrame#metricCard { background: palette(base); border: 1px solid #d5dce5; border-radius: 6px; }"
                       "QLabel#cardTitle { color: #5b6573; }"
                       "QLabel#cardDetail { color: #6b7480; }"
                       "QLabel#staleBanner { background: #fff4de; border: 1px solid #e6b35c; border-radius: 4px;"
                       " padding: 6px 10px; color: #6d4a00; }"));

    QFont titleFont = m_title->font();
    titleFont.setPointSizeF(titleFont.pointSizeF() * 1.6);
    titleFont.setBold(true);
    m_title->setFont(titleFont);
    m_title->setObjectName(QStringLiteral("overviewTitle"));
    m_title->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_subtitle->setObjectName(QStringLiteral("overviewSubtitle"));
    m_subtitle->setStyleSheet(QStringLiteral("color: #4a5563;"));
    m_subtitle->setWordWrap(true);
    m_subtitle->setTextInteractionFlags(Qt::TextSelectableByMouse);

    m_staleBanner->setObjectName(QStringLiteral("staleBanner"));
    m_staleBanner->setWordWrap(true);
    m_staleBanner->setText(tr("These figures are from the last valid configuration. The current one does not "
                              "synthesize; see the Problems list in the configuration panel."));
    m_staleBanner->hide();

    auto* cards = new QHBoxLayout;
    cards->setSpacing(10);
    cards->addWidget(addCard(QStringLiteral("world"), tr("World size"), tr("dp \u00d7 tp \u00d7 pp \u00d7 cp GPUs")));
    cards->addWidget(addCard(QStringLiteral("params"), tr("Parameters"), tr("Trainable parameters, unsharded")));
    cards->addWidget(addCard(QStringLiteral("flops"), tr("Compute / iteration"),
        tr("FLOPs of one training iteration over all GPUs (forward, backward, recompute, optimizer)")));
    cards->addWidget(addCard(QStringLiteral("microbatches"), tr("Micro-batches"),
        tr("Micro-batches each data-parallel replica runs per iteration: global_batch / (micro_batch \u00d7 dp)")));
    cards->addWidget(addCard(QStringLiteral("tokens"), tr("Tokens / iteration"), tr("global_batch \u00d7 seq_len")));
    cards->addWidget(addCard(
        QStringLiteral("classes"), tr("Rank classes"), tr("Distinct per-rank programs: one per pipeline stage")));
    // The estimate's detail (MFU and throughput, or why it failed) is the longest: a bit more room, and it wraps.
    cards->addWidget(addCard(stepCard(), tr("Step time (estimate)"), {}), 6);
    m_cards.value(stepCard()).detail->setWordWrap(true);
    for (int i = 0; i + 1 < cards->count(); ++i)
        cards->setStretch(i, 5);

    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(OverviewModel::SortRole);
    m_table->setObjectName(QStringLiteral("classTable"));
    m_table->setModel(m_proxy);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(OverviewModel::StageColumn, Qt::AscendingOrder);
    m_table->setAlternatingRowColors(true);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 10);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->horizontalHeader()->setDefaultAlignment(Qt::AlignRight | Qt::AlignVCenter);
    m_table->setWordWrap(false);

    m_warnings->setObjectName(QStringLiteral("warningList"));
    m_warnings->setWordWrap(true);
    m_warnings->setSelectionMode(QAbstractItemView::NoSelection);
    m_warnings->setFocusPolicy(Qt::NoFocus);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(14, 12, 14, 12);
    layout->setSpacing(8);
    layout->addWidget(m_title);
    layout->addWidget(m_subtitle);
    layout->addWidget(m_staleBanner);
    layout->addSpacing(4);
    layout->addLayout(cards);
    layout->addSpacing(6);
    layout->addWidget(sectionLabel(tr("Rank classes (per rank, one iteration)"), this));
    layout->addWidget(m_table, 10);
    layout->addSpacing(4);
    layout->addWidget(m_warningsLabel);
    layout->addWidget(m_warnings, 1);
    layout->addStretch(1);

    setCard(QStringLiteral("world"), QStringLiteral("\u2014"), {});
    m_title->setText(tr("No result yet"));
}

OverviewView::~OverviewView() = default;

QWidget* OverviewView::addCard(const QString& name, const QString& title, const QString& toolTip)
{
    auto* frame = new QFrame(this);
    frame->setObjectName(QStringLiteral("metricCard"));
    frame->setToolTip(toolTip);
    auto* titleLabel = new QLabel(title, frame);
    titleLabel->setObjectName(QStringLiteral("cardTitle"));
    auto* value = new QLabel(QStringLiteral("\u2014"), frame);
    value->setObjectName(QStringLiteral("cardValue"));
    QFont valueFont = value->font();
    valueFont.setPointSizeF(valueFont.pointSizeF() * 1.45);
    valueFont.setBold(true);
    value->setFont(valueFont);
    value->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* detail = new QLabel(frame);
    detail->setObjectName(QStringLiteral("cardDetail"));
    // Details may be clipped in a narrow window (the tooltip has the whole text); the values never are.
    detail->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    detail->setMinimumWidth(40);
    titleLabel->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    titleLabel->setMinimumWidth(40);
    auto* layout = new QVBoxLayout(frame);
    layout->setContentsMargins(12, 8, 12, 8);
    layout->setSpacing(2);
    layout->addWidget(titleLabel);
    layout->addWidget(value);
    layout->addWidget(detail);
    layout->addStretch(1); // a taller neighbour (a wrapped estimate failure) leaves the space below the text
    m_cards.insert(name, Card { frame, value, detail });
    return frame;
}

void OverviewView::setCard(const QString& name, const QString& value, const QString& detail)
{
    const Card card = m_cards.value(name);
    if (!card.value)
        return;
    card.value->setText(value);
    card.detail->setText(detail);
    card.detail->setToolTip(detail);
}

QString OverviewView::figure(const QString& name) const
{
    const Card card = m_cards.value(name);
    return card.value ? card.value->text() : QString();
}

QString OverviewView::figureDetail(const QString& name) const
{
    const Card card = m_cards.value(name);
    return card.detail ? card.detail->text() : QString();
}

QString OverviewView::figureToolTip(const QString& name) const
{
    const Card card = m_cards.value(name);
    return card.frame ? card.frame->toolTip() : QString();
}

bool OverviewView::isEstimating() const
{
    return m_run.isRunning();
}

bool OverviewView::isSettled() const
{
    return !m_run.isRunning();
}

void OverviewView::requestEstimate()
{
    const std::shared_ptr<const SynthesisResult> result = m_model->result();
    if (!result)
        return;
    // The worker gets a copy of the shared (immutable) result only.
    m_run.start([result] { return runEstimate(*result); },
        [this, result](const EstimateOutcome& outcome) {
            if (!m_model->setEstimate(result, outcome.estimate, QString::fromStdString(outcome.error)))
                return;
            showEstimate();
            Q_EMIT estimateAvailable();
        });
}

void OverviewView::showEstimate()
{
    updateEstimateCard();
    fitHeights();
}

void OverviewView::updateEstimateCard()
{
    const Card card = m_cards.value(stepCard());
    const QString method = tr("Roofline compute time per node, ring-algorithm collectives, a compute and a "
                              "communication stream per rank; the iteration ends when the slowest pipeline stage "
                              "finishes.");
    if (m_model->isEstimatePending()) {
        setCard(stepCard(), tr("estimating\u2026"), {});
        card.frame->setToolTip(method);
        return;
    }
    const std::shared_ptr<const StepEstimate>& estimate = m_model->estimate();
    if (!estimate) {
        setCard(stepCard(), tr("unavailable"), m_model->estimateError());
        card.frame->setToolTip(tr("No step-time estimate: %1").arg(m_model->estimateError()));
        return;
    }
    setCard(stepCard(), formatDuration(estimate->iterationTimeS),
        tr("MFU %1%, %2 tokens/s")
            .arg(QString::number(100.0 * estimate->mfu, 'f', 1), formatParameterCount(estimate->tokensPerS)));
    card.frame->setToolTip(method + QLatin1Char('\n')
        + tr("GPU: %1, dense %2/s per GPU")
              .arg(QString::fromStdString(estimate->gpu), formatFlopCount(estimate->peakFlops)));
}

void OverviewView::setResult(std::shared_ptr<const SynthesisResult> result)
{
    if (!result)
        return;
    m_model->setResult(result);
    const Config& config = result->config;
    const ModelConfig& model = config.model;
    m_title->setText(QString::fromStdString(config.name));

    QStringList facts;
    if (!model.preset.empty())
        facts << QString::fromStdString(model.preset);
    facts << QString::fromLatin1(toString(model.family));
    facts << tr("%1 layers").arg(model.layers);
    facts << tr("hidden %1").arg(model.hidden);
    facts << (model.kvHeads != model.heads ? tr("%1 heads (%2 KV)").arg(model.heads).arg(model.kvHeads)
                                           : tr("%1 heads").arg(model.heads));
    if (model.family == Family::Moe)
        facts << tr("%1 experts, top-%2").arg(model.experts).arg(model.topK);
    facts << tr("seq %1").arg(model.seqLen);
    facts << QString::fromLatin1(toString(config.training.precision));
    facts << tr("ZeRO-%1").arg(config.parallelism.zero);
    facts << tr("%1 schedule").arg(QString::fromLatin1(toString(config.parallelism.schedule)));
    m_subtitle->setText(facts.join(QStringLiteral("  \u00b7  ")));

    const qint64 world = result->worldSize();
    const qint64 perNode = std::max<qint64>(1, config.cluster.gpusPerNode);
    const qint64 nodes = (world + perNode - 1) / perNode;
    setCard(QStringLiteral("world"), countNoun(world, tr("GPU"), tr("GPUs")),
        tr("%1 \u00d7 %2").arg(countNoun(nodes, tr("node"), tr("nodes")), countNoun(perNode, tr("GPU"), tr("GPUs"))));
    setCard(QStringLiteral("params"), formatParameterCount(static_cast<double>(result->cost.params)),
        formatExact(result->cost.params));
    setCard(QStringLiteral("flops"), formatFlopCount(result->cost.flopsPerIteration),
        tr("%1 / GPU").arg(formatFlopCount(result->cost.flopsPerIteration / static_cast<double>(world))));
    setCard(QStringLiteral("microbatches"), formatExact(result->cost.microBatches),
        tr("per replica, of %1").arg(countNoun(config.training.microBatch, tr("seq"), tr("seqs"))));
    const double tokens = static_cast<double>(config.training.globalBatch) * static_cast<double>(model.seqLen);
    setCard(QStringLiteral("tokens"), formatParameterCount(tokens),
        tr("%1 seqs \u00d7 %2").arg(formatExact(config.training.globalBatch)).arg(model.seqLen));
    setCard(QStringLiteral("classes"), formatExact(static_cast<qint64>(result->classes.size())),
        tr("%1 each").arg(
            countNoun(result->classes.empty() ? 0 : result->classes.front().rankCount, tr("rank"), tr("ranks"))));
    showEstimate();
    requestEstimate();

    m_warnings->clear();
    const QIcon warningIcon = style()->standardIcon(QStyle::SP_MessageBoxWarning);
    for (const Diagnostic& d : result->warnings) {
        QString text = QString::fromStdString(d.message);
        if (!d.keyPath.empty())
            text = QString::fromStdString(d.keyPath) + QStringLiteral(": ") + text;
        m_warnings->addItem(new QListWidgetItem(warningIcon, text));
    }
    m_warningsLabel->setText(
        result->warnings.empty() ? tr("Warnings: none") : tr("Warnings (%1)").arg(result->warnings.size()));
    m_warnings->setVisible(!result->warnings.empty());
    fitHeights();
}

void OverviewView::fitHeights()
{
    // The table and the warnings take the height of their rows (the rest of the page stays empty below them)
    // and scroll when the page is too short for them.
    const int frame = 2 * m_table->frameWidth();
    int tableHeight = m_table->horizontalHeader()->height() + frame;
    for (int row = 0; row < m_proxy->rowCount(); ++row)
        tableHeight += m_table->rowHeight(row);
    if (m_table->horizontalScrollBar()->isVisible())
        tableHeight += m_table->horizontalScrollBar()->height();
    m_table->setMaximumHeight(std::max(tableHeight, m_table->horizontalHeader()->height() * 3));
    int listHeight = 2 * m_warnings->frameWidth() + 4;
    for (int row = 0; row < m_warnings->count(); ++row)
        listHeight += m_warnings->sizeHintForRow(row);
    m_warnings->setMaximumHeight(listHeight);
    // The box layouts do not grow the card row for a wrapped label: reserve the lines the estimate's detail needs.
    QLabel* detail = m_cards.value(stepCard()).detail;
    const int width = detail->width();
    const int height = width > 0 && !detail->text().isEmpty() ? detail->heightForWidth(width) : 0;
    if (height != detail->minimumHeight()) {
        detail->setMinimumHeight(height);
        m_cards.value(stepCard()).frame->updateGeometry(); // drops the card's cached height in the row
    }
}

void OverviewView::resizeEvent(QResizeEvent* event)
{
    ResultView::resizeEvent(event);
    fitHeights();
}

void OverviewView::setStale(bool stale)
{
    m_staleBanner->setVisible(stale);
}

OverviewModel* OverviewView::model() const
{
    return m_model;
}

QTableView* OverviewView::table() const
{
    return m_table;
}

QListWidget* OverviewView::warnings() const
{
    return m_warnings;
}

} // namespace stagecraft
