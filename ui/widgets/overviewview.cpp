// SPDX-License-Identifier: MIT
#include "widgets/overviewview.h"

#include "estimate/servingestimate.h"
#include "estimate/stepestimate.h"
#include "models/comparisonmodel.h"
#include "models/formatting.h"
#include "models/overviewmodel.h"
#include "synthesis/synthesis.h"
#include "widgets/elidedlabel.h"

#include <QApplication>
#include <QFrame>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QResizeEvent>
#include <QScrollArea>
#include <QScrollBar>
#include <QSortFilterProxyModel>
#include <QStyle>
#include <QTableView>
#include <QVBoxLayout>
#include <numeric>

namespace stagecraft {

/// The table's sort proxy; it can also put the column titles on two lines ("Peak memory" -> "Peak\nmemory",
/// "Reduce-scatter" -> "Reduce-\nscatter") when the table is narrow.
class ClassTableProxy : public QSortFilterProxyModel
{
public:
    using QSortFilterProxyModel::QSortFilterProxyModel;

    bool twoLineHeaders() const
    {
        return m_twoLines;
    }

    void setTwoLineHeaders(bool on)
    {
        if (on == m_twoLines)
            return;
        m_twoLines = on;
        Q_EMIT headerDataChanged(Qt::Horizontal, 0, std::max(0, columnCount() - 1));
    }

    QVariant headerData(int section, Qt::Orientation orientation, int role) const override
    {
        QVariant value = QSortFilterProxyModel::headerData(section, orientation, role);
        if (!m_twoLines || role != Qt::DisplayRole || orientation != Qt::Horizontal)
            return value;
        QString text = value.toString();
        qsizetype cut = text.indexOf(QLatin1Char(' '));
        if (cut > 0) {
            text[cut] = QLatin1Char('\n');
        } else if (text.size() > 8 && (cut = text.indexOf(QLatin1Char('-'))) > 0) {
            text.insert(cut + 1, QLatin1Char('\n'));
        }
        return text;
    }

private:
    bool m_twoLines = false;
};

namespace {

    QLabel* sectionLabel(const QString& text, QWidget* parent)
    {
        auto* label = new QLabel(text, parent);
        QFont font = label->font();
        font.setBold(true);
        label->setFont(font);
        return label;
    }

    /// What the worker hands back: plain values only. A training result gets a step-time estimate, a serving
    /// result a serving estimate; `error` says why the one it needed failed.
    struct EstimateOutcome
    {
        std::shared_ptr<const StepEstimate> estimate;
        std::shared_ptr<const ServingEstimate> serving;
        std::string error;
    };

    EstimateOutcome runEstimate(const SynthesisResult& result)
    {
        EstimateOutcome outcome;
        try {
            const std::optional<GpuSpec> gpu = gpuForConfig(result.config, outcome.error);
            if (!gpu)
                return outcome;
            if (isInference(result.config)) {
                auto serving = std::make_shared<ServingEstimate>();
                if (estimateServing(result, *gpu, EstimateOptions {}, *serving, outcome.error))
                    outcome.serving = std::move(serving);
                return outcome;
            }
            auto estimate = std::make_shared<StepEstimate>();
            if (estimateStep(result, *gpu, EstimateOptions {}, *estimate, outcome.error))
                outcome.estimate = std::move(estimate);
        } catch (...) {
            // The estimates promise not to throw; nothing may escape the worker anyway.
            outcome.estimate.reset();
            outcome.serving.reset();
            outcome.error = "internal error in the estimate";
        }
        return outcome;
    }

    /// The cards only a training result shows, and those only a serving result shows.
    const QStringList& trainingCards()
    {
        static const QStringList names { QStringLiteral("microbatches"), QStringLiteral("tokens"),
            QStringLiteral("step") };
        return names;
    }
    const QStringList& servingCards()
    {
        static const QStringList names { QStringLiteral("sequences"), QStringLiteral("kvcache"), QStringLiteral("ttft"),
            QStringLiteral("tpot"), QStringLiteral("throughput") };
        return names;
    }

    QString tpotToolTip()
    {
        return QCoreApplication::translate("OverviewView",
            "Time between two tokens of a sequence, the mean over the generation (its first and last decode step, "
            "each measured on a decode-only synthesis at that context). Below it: what one decode step reads per GPU "
            "and that many bytes' time at the HBM bandwidth the estimate assumes");
    }

    QString stepCard()
    {
        return QStringLiteral("step");
    }

    constexpr int kCardSpacing = 10;

} // namespace

OverviewView::OverviewView(QWidget* parent)
    : ResultView(parent)
    , m_model(new OverviewModel(this))
    , m_proxy(new ClassTableProxy(this))
    , m_title(new QLabel(this))
    , m_subtitle(new QLabel(this))
    , m_staleBanner(new QLabel(this))
    , m_assumptions(new QLabel(this))
    , m_table(new QTableView(this))
    , m_warnings(new QListWidget(this))
    , m_comparison(new ComparisonModel(this))
    , m_comparisonLabel(sectionLabel(QString(), this))
    , m_comparisonTable(new QTableView(this))
    , m_warningsLabel(sectionLabel(tr("Warnings"), this))
    , m_cardArea(new QWidget(this))
    , m_cardGrid(new QGridLayout(m_cardArea))
{
    connect(&m_run, &LatestRun::settled, this, &OverviewView::emitIfSettled);
    connect(&m_baselineRun, &LatestRun::settled, this, &OverviewView::emitIfSettled);
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

    m_cardGrid->setContentsMargins(0, 0, 0, 0);
    m_cardGrid->setSpacing(kCardSpacing);
    addCard(QStringLiteral("world"), tr("World size"), tr("dp \u00d7 tp \u00d7 pp \u00d7 cp GPUs"));
    addCard(QStringLiteral("params"), tr("Parameters"), tr("Trainable parameters, unsharded"));
    addCard(QStringLiteral("flops"), tr("Compute / iteration"),
        tr("FLOPs of one training iteration over all GPUs (forward, backward, recompute, optimizer)"));
    addCard(QStringLiteral("microbatches"), tr("Micro-batches"),
        tr("Micro-batches each data-parallel replica runs per iteration: global_batch / (micro_batch \u00d7 dp)"));
    addCard(QStringLiteral("tokens"), tr("Tokens / iteration"), tr("global_batch \u00d7 seq_len"));
    addCard(QStringLiteral("classes"), tr("Rank classes"), tr("Distinct per-rank programs: one per pipeline stage"));
    // The estimate's detail (MFU and throughput, or why it failed) is the longest: it wraps.
    addCard(stepCard(), tr("Step time (estimate)"), {});
    // Serving: the batch and its cache, then the serving estimate.
    addCard(QStringLiteral("sequences"), tr("Sequences"),
        tr("inference.batch: concurrent sequences over all data-parallel replicas, each a prompt of "
           "inference.prompt_tokens generating inference.output_tokens"));
    addCard(QStringLiteral("kvcache"), tr("KV cache / GPU"),
        tr("KV cache of the fullest rank when every sequence has its last token (prompt + output - 1 positions in "
           "whole blocks of inference.block_size); below it, the most sequences whose cache fits beside the weights "
           "and the transient peak in the GPU's HBM"));
    addCard(QStringLiteral("ttft"), tr("Time to first token"),
        tr("From the start, every prompt present, until the last stage has sampled the first token of every "
           "sequence: the prefill of the whole batch (static batching)"));
    addCard(QStringLiteral("tpot"), tr("Time per output token"), tpotToolTip());
    addCard(QStringLiteral("throughput"), tr("Throughput"),
        tr("Output tokens per second per GPU over the generation: batch \u00d7 output_tokens / (TTFT + "
           "(output_tokens - 1) \u00d7 TPOT) / GPUs; below it, all GPUs together and the decode alone "
           "(batch / TPOT / GPUs)"));

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
    // Widths from fitColumns(): every column shows its title and values, and the table never scrolls sideways
    // on a laptop.
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_table->horizontalHeader()->setStretchLastSection(false);
    m_table->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    m_table->horizontalHeader()->setDefaultAlignment(Qt::AlignRight | Qt::AlignVCenter);
    m_table->setWordWrap(false);

    connect(m_model, &QAbstractItemModel::modelReset, this, &OverviewView::fitColumns);
    connect(m_model, &QAbstractItemModel::dataChanged, this, &OverviewView::fitColumns);
    connect(m_table->horizontalHeader(), &QHeaderView::sortIndicatorChanged, this, &OverviewView::fitColumns);

    m_warnings->setObjectName(QStringLiteral("warningList"));
    m_warnings->setWordWrap(true);
    m_warnings->setSelectionMode(QAbstractItemView::NoSelection);
    m_warnings->setFocusPolicy(Qt::NoFocus);

    m_page = new QWidget(this);
    m_page->setObjectName(QStringLiteral("overviewPage"));
    auto* scroll = new QScrollArea(this);
    scroll->setObjectName(QStringLiteral("overviewScroll"));
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidgetResizable(true);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    outer->addWidget(scroll);
    auto* layout = new QVBoxLayout(m_page);
    layout->setContentsMargins(14, 12, 14, 12);
    layout->setSpacing(8);
    layout->addWidget(m_title);
    layout->addWidget(m_subtitle);
    layout->addWidget(m_staleBanner);
    layout->addSpacing(4);
    layout->addWidget(m_cardArea);
    layout->addSpacing(6);
    m_tableLabel = sectionLabel(tr("Rank classes (per rank, one iteration)"), this);
    layout->addWidget(m_tableLabel);
    layout->addWidget(m_table, 10);
    layout->addWidget(m_assumptions);
    layout->addSpacing(4);
    layout->addSpacing(4);
    layout->addWidget(m_comparisonLabel);
    layout->addWidget(m_comparisonTable, 4);
    layout->addSpacing(4);
    layout->addWidget(m_warningsLabel);
    layout->addWidget(m_warnings, 1);
    layout->addStretch(1);
    scroll->setWidget(m_page);
    m_page->installEventFilter(this);

    m_assumptions->setObjectName(QStringLiteral("estimateAssumptions"));
    m_assumptions->setWordWrap(true);
    m_assumptions->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_assumptions->setStyleSheet(QStringLiteral("color: #5b6573;"));
    m_assumptions->setToolTip(tr("Every figure is a config key: cluster.gemm_efficiency, cluster.attention_efficiency, "
                                 "cluster.hbm_efficiency, the cluster's bandwidths, efficiencies and latencies, and "
                                 "the parallelism.overlap_* switches (Cluster and Parallelism in the form)."));

    m_comparisonTable->setObjectName(QStringLiteral("comparisonTable"));
    m_comparisonTable->setModel(m_comparison);
    m_comparisonTable->setAlternatingRowColors(true);
    m_comparisonTable->setSelectionMode(QAbstractItemView::NoSelection);
    m_comparisonTable->setFocusPolicy(Qt::NoFocus);
    m_comparisonTable->setWordWrap(false);
    m_comparisonTable->verticalHeader()->hide();
    m_comparisonTable->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 8);
    m_comparisonTable->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_comparisonTable->horizontalHeader()->setStretchLastSection(false); // the change next to the values
    m_comparisonLabel->hide();
    m_comparisonTable->hide();

    setCard(QStringLiteral("world"), QStringLiteral("\u2014"), {});
    m_title->setText(tr("No result yet"));
    showCardsFor(false);
    reflowCards();
}

OverviewView::~OverviewView() = default;

void OverviewView::addCard(const QString& name, const QString& title, const QString& toolTip)
{
    auto* frame = new QFrame(m_cardArea);
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
    // Titles and details are elided in a narrow window (the tooltip has the whole text); the values never are.
    // The step card's detail (MFU and throughput, or why the estimate failed) wraps instead.
    QLabel* detail = nullptr;
    if (name == stepCard()) {
        detail = new QLabel(frame);
        detail->setWordWrap(true);
        detail->setAlignment(Qt::AlignLeft | Qt::AlignTop); // the lines reserved for a long reason stay below it
        detail->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
        detail->setMinimumWidth(40);
    } else {
        detail = new ElidedLabel(frame);
    }
    detail->setObjectName(QStringLiteral("cardDetail"));
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
    m_cardOrder.append(frame);
}

void OverviewView::reflowCards()
{
    // The width each card asks for: its value, title and detail on one line. The step card's detail wraps: a short
    // one (MFU and throughput) counts, a long one (why the estimate failed) wraps at twice a card's width.
    QList<QFrame*> shown;
    for (QFrame* frame : std::as_const(m_cardOrder))
        if (!frame->isHidden())
            shown.append(frame);
    QList<int> wants;
    int widest = 0;
    int least = 0;
    for (const QFrame* frame : std::as_const(shown)) {
        const QMargins m = frame->layout()->contentsMargins();
        int text = 0;
        const QLabel* wrapping = nullptr;
        for (const QLabel* label : frame->findChildren<QLabel*>()) {
            if (label->wordWrap())
                wrapping = label;
            else
                text = std::max(text, label->sizeHint().width());
        }
        if (wrapping && !wrapping->text().isEmpty())
            text = std::max(text, std::min(wrapping->fontMetrics().horizontalAdvance(wrapping->text()), 2 * text));
        wants << text + m.left() + m.right() + 2 * frame->frameWidth() + 2;
        widest = std::max(widest, wants.back());
        least = std::max(least, frame->minimumSizeHint().width());
    }
    const int count = static_cast<int>(shown.size());
    const QMargins margins = m_page->layout() ? m_page->layout()->contentsMargins() : QMargins();
    const int available = m_page->width() - margins.left() - margins.right();
    const int oneRow = std::accumulate(wants.begin(), wants.end(), 0) + (count - 1) * kCardSpacing;
    // Before the view is first laid out (a tab not shown yet) its width means nothing: one row, as on a wide window.
    int columns = count;
    if ((testAttribute(Qt::WA_WState_Visible) || testAttribute(Qt::WA_Resized)) && available < oneRow) {
        // Rows of cards as wide as the widest, at least two a row (the minimum width below allows two).
        columns = std::clamp((available + kCardSpacing) / (widest + kCardSpacing), std::min(2, count), count - 1);
        const int rows = (count + columns - 1) / columns;
        columns = (count + rows - 1) / rows; // rows of equal length: 4 + 3 rather than 6 + 1
    }
    // Never ask the window for more than two narrowest cards side by side; the cards reflow below that.
    m_cardArea->setMinimumWidth(2 * least + kCardSpacing);
    // On one row each card gets room in proportion to what it asks for; on several, the columns are alike.
    // Every column the grid has had: a column left over from the other kind of result gets no stretch.
    for (int c = 0; c < std::max(count, m_cardGrid->columnCount()); ++c)
        m_cardGrid->setColumnStretch(c, c >= columns ? 0 : columns == count ? wants[c] : 1);
    const bool sameCards = m_cardGrid->count() == count
        && std::all_of(shown.begin(), shown.end(), [this](QFrame* f) { return m_cardGrid->indexOf(f) >= 0; });
    if (columns == m_cardColumns && sameCards)
        return;
    m_cardColumns = columns;
    for (QFrame* frame : std::as_const(m_cardOrder))
        m_cardGrid->removeWidget(frame);
    for (int i = 0; i < count; ++i)
        m_cardGrid->addWidget(shown[i], i / columns, i % columns);
}

void OverviewView::setCard(const QString& name, const QString& value, const QString& detail)
{
    const Card card = m_cards.value(name);
    if (!card.value)
        return;
    card.value->setText(value);
    if (auto* elided = qobject_cast<ElidedLabel*>(card.detail)) {
        elided->setText(detail); // the tooltip follows: the whole text when it is elided
    } else {
        card.detail->setText(detail);
        card.detail->setToolTip(detail);
    }
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
    return !m_run.isRunning() && !m_baselineRun.isRunning();
}

void OverviewView::emitIfSettled()
{
    if (isSettled())
        Q_EMIT settled();
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
            m_serving = outcome.serving;
            m_servingError = QString::fromStdString(outcome.error);
            if (m_comparison->baseline().result == result && !m_comparison->baseline().estimate)
                m_comparison->setBaseline({ result, m_model->estimate() }); // pinned before its estimate arrived
            showEstimate();
            Q_EMIT estimateAvailable();
        });
}

void OverviewView::showEstimate()
{
    updateEstimateCard();
    m_comparison->setCurrent({ m_model->result(), m_model->estimate() });
    fitHeights();
}

void OverviewView::requestBaselineEstimate()
{
    const std::shared_ptr<const SynthesisResult> baseline = m_comparison->baseline().result;
    m_baselineRun.start([baseline] { return runEstimate(*baseline); },
        [this, baseline](const EstimateOutcome& outcome) {
            m_baselineEstimateFor = baseline;
            m_baselineEstimate = outcome.estimate;
            if (m_comparison->baseline().result != baseline)
                return;
            m_comparison->setBaseline({ baseline, outcome.estimate });
            fitHeights();
        });
}

void OverviewView::setBaseline(std::shared_ptr<const SynthesisResult> baseline)
{
    std::shared_ptr<const StepEstimate> estimate;
    bool estimateElsewhere = false;
    if (baseline && baseline == m_model->result())
        estimate = m_model->estimate();
    else if (baseline && baseline == m_baselineEstimateFor)
        estimate = m_baselineEstimate;
    else if (baseline)
        estimateElsewhere = true;
    m_comparison->setBaseline({ baseline, std::move(estimate) });
    if (estimateElsewhere)
        requestBaselineEstimate();
    else
        m_baselineRun.cancel();
    m_comparison->setCurrent({ m_model->result(), m_model->estimate() });
    const bool on = baseline != nullptr;
    if (on) {
        const ParallelismConfig& p = baseline->config.parallelism;
        m_comparisonLabel->setText(
            tr("Compared with the baseline: %1, %2 (dp %3 \u00b7 tp %4 \u00b7 pp %5 \u00b7 cp %6)")
                .arg(QString::fromStdString(baseline->config.name),
                    countNoun(baseline->worldSize(), tr("GPU"), tr("GPUs")))
                .arg(p.dp)
                .arg(p.tp)
                .arg(p.pp)
                .arg(p.cp));
    }
    m_comparisonLabel->setVisible(on);
    m_comparisonTable->setVisible(on);
    fitHeights();
}

ComparisonModel* OverviewView::comparisonModel() const
{
    return m_comparison;
}

QTableView* OverviewView::comparisonTable() const
{
    return m_comparisonTable;
}

void OverviewView::showCardsFor(bool serving)
{
    m_showsServing = serving;
    for (const QString& name : trainingCards())
        m_cards.value(name).frame->setHidden(serving);
    for (const QString& name : servingCards())
        m_cards.value(name).frame->setHidden(!serving);
    // The training estimate's per-class columns mean nothing for serving: its figures are in the cards.
    for (const int column :
        { OverviewModel::StepTimeColumn, OverviewModel::ExposedCommColumn, OverviewModel::BubbleColumn })
        m_table->setColumnHidden(column, serving);
    m_cards.value(QStringLiteral("flops"))
        .frame->setToolTip(serving ? tr("FLOPs of the programs over all GPUs: the prefill and the decode steps they "
                                        "hold (inference.decode_steps)")
                                   : tr("FLOPs of one training iteration over all GPUs (forward, backward, "
                                        "recompute, optimizer)"));
    m_cards.value(QStringLiteral("flops"))
        .frame->findChild<QLabel*>(QStringLiteral("cardTitle"))
        ->setText(serving ? tr("Compute / programs") : tr("Compute / iteration"));
    m_tableLabel->setText(serving
            ? tr("Rank classes (per rank, the programs: the prefill and the decode steps; collectives as payload)")
            : tr("Rank classes (per rank, one iteration; collectives as payload)"));
}

bool OverviewView::isFigureShown(const QString& name) const
{
    const Card card = m_cards.value(name);
    return card.frame && !card.frame->isHidden();
}

const std::shared_ptr<const ServingEstimate>& OverviewView::servingEstimate() const
{
    return m_serving;
}

void OverviewView::updateServingCards()
{
    const QStringList estimated { QStringLiteral("ttft"), QStringLiteral("tpot"), QStringLiteral("throughput") };
    const std::shared_ptr<const SynthesisResult>& result = m_model->result();
    m_cards.value(QStringLiteral("tpot")).frame->setToolTip(tpotToolTip());
    if (m_model->isEstimatePending()) {
        for (const QString& name : estimated)
            setCard(name, tr("estimating\u2026"), {});
        return;
    }
    if (!m_serving) {
        for (const QString& name : estimated)
            setCard(name, tr("unavailable"), name == estimated.front() ? m_servingError : QString());
        m_assumptions->clear();
        return;
    }
    const ServingEstimate& e = *m_serving;
    const InferenceConfig& in = result->config.inference;
    setCard(QStringLiteral("ttft"), e.ttftS > 0 ? formatDuration(e.ttftS) : QStringLiteral("\u2014"),
        e.ttftS > 0
            ? tr("prefill of %1 \u00d7 %2 tokens").arg(formatExact(in.batch), formatExact(promptTokens(result->config)))
            : tr("no prefill phase"));
    const ServingClassEstimate* decode = e.classes.empty()
        ? nullptr
        : &e.classes[static_cast<size_t>(std::clamp<int32_t>(e.decodeStage, 0, int32_t(e.classes.size()) - 1))];
    if (e.tpotS > 0 && decode) {
        const DecodeStepCost mean = meanDecodeStep(*decode);
        const double bytes = static_cast<double>(mean.bytes);
        const double hbm = mean.hbmTimeS;
        const double compute = mean.computeTimeS;
        setCard(QStringLiteral("tpot"), formatDuration(e.tpotS),
            // The mean step's bytes (the assumptions line gives the last step's: two named quantities).
            (hbm >= compute ? tr("memory-bound: mean step reads %1, %2 at HBM")
                            : tr("compute-bound: mean step reads %1, %2 at HBM"))
                .arg(formatByteCount(bytes), formatDuration(hbm)));
        m_cards.value(QStringLiteral("tpot"))
            .frame->setToolTip(tpotToolTip() + QLatin1Char('\n')
                + tr("A decode step at the mean context reads %1 per GPU: %2 at the HBM bandwidth the estimate "
                     "assumes; its kernels compute for %3.")
                      .arg(formatByteCount(bytes), formatDuration(hbm), formatDuration(compute)));
    } else {
        setCard(QStringLiteral("tpot"), QStringLiteral("\u2014"), tr("no decode phase"));
    }
    setCard(QStringLiteral("throughput"), tr("%1 tok/s").arg(formatParameterCount(e.tokensPerSPerGpu)),
        e.decodeTokensPerSPerGpu > 0
            ? tr("per GPU; %1 in all; decode alone %2")
                  .arg(formatParameterCount(e.tokensPerS), formatParameterCount(e.decodeTokensPerSPerGpu))
            : tr("per GPU; %1 in all").arg(formatParameterCount(e.tokensPerS)));
    int64_t cache = 0;
    for (const ServingClassEstimate& c : e.classes)
        cache = std::max(cache, c.generationKvCacheBytes);
    setCard(QStringLiteral("kvcache"), formatByteCount(double(cache)),
        e.maxSequences > 0
            ? tr("at the last token; %1 fit").arg(countNoun(e.maxSequences, tr("sequence"), tr("sequences")))
            : tr("at the last token; no sequence fits"));
    QString decodeText;
    if (decode && e.tpotS > 0)
        decodeText = tr("; decode: the last step reads %1 per GPU (weights %2, KV cache %3, activations %4), at %5 "
                        "of %6 GB/s HBM")
                         .arg(formatByteCount(double(decode->lastStep.bytes)),
                             formatByteCount(double(decode->lastStep.weightBytes)),
                             formatByteCount(double(decode->lastStep.kvCacheBytes)),
                             formatByteCount(double(decode->lastStep.activationBytes)),
                             QString::number(e.assumptions.hbmEfficiency, 'f', 2),
                             QString::number(e.hbmBytesPerS / 1e9, 'f', 0));
    m_assumptions->setText(tr("Estimate assumes: %1")
                               .arg(QString::fromStdString(assumptionsText(e.assumptions))
                                        .trimmed()
                                        .replace(QLatin1Char('\n'), QStringLiteral("; ")))
        + decodeText);
}

void OverviewView::updateEstimateCard()
{
    if (m_showsServing) {
        updateServingCards();
        return;
    }
    const Card card = m_cards.value(stepCard());
    const QString method = tr("Per-kernel roofline compute (GEMM tile, wave and K-depth losses on the GPU's best "
                              "measured GEMM), NCCL-like collectives, four streams per rank (compute, collectives, "
                              "data-parallel collectives, sends); the iteration ends when the slowest pipeline stage "
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
        m_assumptions->clear();
        return;
    }
    // Which source timed each op class (cluster.kernel_table's measured kernels or the model), on its own line.
    m_assumptions->setText(tr("Estimate assumes: %1")
                               .arg(QString::fromStdString(assumptionsText(estimate->assumptions))
                                        .trimmed()
                                        .replace(QLatin1Char('\n'), QStringLiteral("; ")))
        + QLatin1Char('\n')
        + QString::fromStdString(kernelSourcesText(estimate->kernelSources))
              .trimmed()
              .replace(QStringLiteral(":\n  "), QStringLiteral(": "))
              .replace(QStringLiteral("\n  "), QStringLiteral("; ")));
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
    m_serving.reset();
    m_servingError.clear();
    const Config& config = result->config;
    const ModelConfig& model = config.model;
    const bool serving = isInference(config);
    showCardsFor(serving);
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
    if (serving) {
        const InferenceConfig& in = config.inference;
        facts << QString::fromLatin1(toString(config.training.precision));
        facts << tr("serving: %1 prompt + %2 output tokens")
                     .arg(formatExact(promptTokens(config)), formatExact(in.outputTokens));
        facts << tr("%1 KV cache").arg(QString::fromLatin1(toString(in.kvCacheDtype)));
        facts << tr("phases: %1").arg(QString::fromLatin1(toString(in.phases)));
    } else {
        facts << tr("seq %1").arg(model.seqLen);
        facts << QString::fromLatin1(toString(config.training.precision));
        facts << tr("ZeRO-%1").arg(config.parallelism.zero);
        facts << tr("%1 schedule").arg(QString::fromLatin1(toString(config.parallelism.schedule)));
    }
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
    if (serving) {
        const InferenceConfig& in = config.inference;
        const qint64 dp = std::max<qint64>(1, config.parallelism.dp);
        setCard(QStringLiteral("sequences"), formatExact(in.batch),
            dp > 1
                ? tr("%1 per replica, %2 \u00d7 %3 tokens")
                      .arg(formatExact(in.batch / dp), formatExact(promptTokens(config)), formatExact(in.outputTokens))
                : tr("%1 prompt, %2 output tokens each")
                      .arg(formatExact(promptTokens(config)), formatExact(in.outputTokens)));
        int64_t cache = 0;
        for (const ClassSummary& c : result->summaries)
            cache = std::max(cache, c.kvCacheBytes);
        // The programs' own cache until the estimate gives the cache at the end of the generation.
        setCard(QStringLiteral("kvcache"), formatByteCount(double(cache)),
            tr("after %1").arg(countNoun(decodeSteps(in), tr("decode step"), tr("decode steps"))));
    }
    setCard(QStringLiteral("classes"), formatExact(static_cast<qint64>(result->classes.size())),
        tr("%1 each").arg(
            countNoun(result->classes.empty() ? 0 : result->classes.front().rankCount, tr("rank"), tr("ranks"))));
    showEstimate();
    requestEstimate();

    m_warnings->clear();
    // Notes (e.g. the vocabulary padded for tp) need no action: an information icon, not a warning.
    const QIcon warningIcon = style()->standardIcon(QStyle::SP_MessageBoxWarning);
    const QIcon noteIcon = style()->standardIcon(QStyle::SP_MessageBoxInformation);
    qsizetype warningCount = 0;
    for (const Diagnostic& d : result->warnings) {
        QString text = QString::fromStdString(d.message);
        if (!d.keyPath.empty())
            text = QString::fromStdString(d.keyPath) + QStringLiteral(": ") + text;
        const bool note = d.severity == Severity::Note;
        warningCount += note ? 0 : 1;
        m_warnings->addItem(new QListWidgetItem(note ? noteIcon : warningIcon, text));
    }
    const qsizetype noteCount = qsizetype(result->warnings.size()) - warningCount;
    m_warningsLabel->setText(result->warnings.empty() ? tr("Warnings: none")
            : noteCount == 0                          ? tr("Warnings (%1)").arg(warningCount)
            : warningCount == 0                       ? tr("Notes (%1)").arg(noteCount)
                                : tr("Warnings (%1) and notes (%2)").arg(warningCount).arg(noteCount));
    m_warnings->setVisible(!result->warnings.empty());
    fitHeights();
}

void OverviewView::fitColumns()
{
    QHeaderView* header = m_table->horizontalHeader();
    const int columns = m_proxy->columnCount();
    const int available = m_table->viewport()->width();
    if (columns == 0 || available <= 0)
        return;
    const QAbstractItemView* items = m_table; // sizeHintForColumn() is public there
    const QFontMetrics metrics(header->font());
    const int margin = 2 * header->style()->pixelMetric(QStyle::PM_HeaderMargin, nullptr, header);
    // The sorted column draws its arrow beside the title.
    const int arrow = header->style()->pixelMetric(QStyle::PM_HeaderMarkSize, nullptr, header) + margin;
    auto needed = [&](bool twoLines) {
        m_proxy->setTwoLineHeaders(twoLines);
        QList<int> widths;
        for (int c = 0; c < columns; ++c) {
            if (m_table->isColumnHidden(c)) {
                widths << 0;
                continue;
            }
            int title = 0;
            for (const QString& line :
                m_proxy->headerData(c, Qt::Horizontal, Qt::DisplayRole).toString().split(QLatin1Char('\n')))
                title = std::max(title, metrics.horizontalAdvance(line));
            title += margin + 2 + (header->sortIndicatorSection() == c ? arrow : 0);
            widths << std::max(title, items->sizeHintForColumn(c));
        }
        return widths;
    };
    auto total = [](const QList<int>& widths) { return std::accumulate(widths.begin(), widths.end(), 0); };
    QList<int> widths = needed(false);
    if (total(widths) > available)
        widths = needed(true);
    // The rest of the width goes to the columns in proportion; a table still too wide scrolls.
    const int slack = std::max(0, available - total(widths));
    const int sum = total(widths);
    int given = 0;
    int lastShown = columns - 1;
    while (lastShown > 0 && m_table->isColumnHidden(lastShown))
        --lastShown;
    for (int c = 0; c < columns; ++c) {
        if (m_table->isColumnHidden(c))
            continue;
        int extra = static_cast<int>(static_cast<qint64>(slack) * widths[c] / std::max(1, sum));
        if (c == lastShown)
            extra = slack - given;
        given += extra;
        header->resizeSection(c, widths[c] + extra);
    }
}

void OverviewView::fitHeights()
{
    reflowCards(); // a new value may need a wider card
    if (layout() && m_page->layout() && isVisible()) {
        layout()->activate(); // the scroll area, then the page at its width
        m_page->layout()->activate(); // the cards' and the table's widths below are the reflowed ones
    }
    fitColumns();
    // The table and the warnings take the height of their rows (the rest of the page stays empty below them)
    // and scroll when the page is too short for them.
    const int frame = 2 * m_table->frameWidth();
    // The header's hint: it may just have gone to two lines.
    const int headerHeight = m_table->horizontalHeader()->sizeHint().height();
    int tableHeight = headerHeight + frame;
    for (int row = 0; row < m_proxy->rowCount(); ++row)
        tableHeight += m_table->rowHeight(row);
    if (m_table->horizontalScrollBar()->isVisible())
        tableHeight += m_table->horizontalScrollBar()->height();
    m_table->setMaximumHeight(std::max(tableHeight, headerHeight * 3));
    // The page scrolls: the tables keep their rows (up to twelve) rather than shrink to a slit.
    const int rowHeight = m_table->verticalHeader()->defaultSectionSize();
    m_table->setMinimumHeight(std::min(std::max(tableHeight, headerHeight * 3), headerHeight + frame + 12 * rowHeight));
    // Each message at the height of its text wrapped to the list's width (sizeHintForRow() measures it unwrapped,
    // which clipped every message after the first).
    int listHeight = 2 * m_warnings->frameWidth() + 4;
    const int iconWidth = m_warnings->style()->pixelMetric(QStyle::PM_SmallIconSize, nullptr, m_warnings);
    const int textWidth = std::max(80, m_warnings->viewport()->width() - iconWidth - 16);
    const QFontMetrics listMetrics(m_warnings->font());
    for (int row = 0; row < m_warnings->count(); ++row) {
        const QRect text =
            listMetrics.boundingRect(QRect(0, 0, textWidth, 100000), Qt::TextWordWrap, m_warnings->item(row)->text());
        listHeight += std::max({ m_warnings->sizeHintForRow(row), text.height() + 4, iconWidth + 4 });
    }
    m_warnings->setMaximumHeight(listHeight);
    m_warnings->setMinimumHeight(std::min(listHeight, 3 * listMetrics.height()));
    int comparisonHeight = m_comparisonTable->horizontalHeader()->sizeHint().height() + frame;
    for (int row = 0; row < m_comparison->rowCount(); ++row)
        comparisonHeight += m_comparisonTable->rowHeight(row);
    m_comparisonTable->setMaximumHeight(comparisonHeight);
    m_comparisonTable->setMinimumHeight(std::min(comparisonHeight,
        m_comparisonTable->horizontalHeader()->sizeHint().height() + frame
            + 16 * m_comparisonTable->verticalHeader()->defaultSectionSize()));
    // The box layouts do not grow the card row for a wrapped label: reserve the lines the estimate's detail needs.
    QLabel* detail = m_cards.value(stepCard()).detail;
    const int width = detail->width();
    const int height = width > 0 && !detail->text().isEmpty() ? detail->heightForWidth(width) : 0;
    if (height != detail->minimumHeight()) {
        detail->setMinimumHeight(height);
        m_cards.value(stepCard()).frame->updateGeometry(); // drops the card's cached height in the row
    }
}

bool OverviewView::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_page && event->type() == QEvent::Resize && !m_fitting) {
        m_fitting = true;
        fitHeights();
        m_fitting = false;
    }
    return ResultView::eventFilter(watched, event);
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
