// SPDX-License-Identifier: MIT
#include "graph/graphview.h"

#include "config/programsize.h"
#include "graph/graphcanvas.h"
#include "graph/graphedgeitem.h"
#include "graph/graphlayouter.h"
#include "graph/graphlegend.h"
#include "graph/graphlogging.h"
#include "graph/graphnodedetails.h"
#include "graph/graphnodeitem.h"
#include "graph/graphspecbuilder.h"
#include "graph/graphsvgwriter.h"
#include "models/formatting.h"
#include "session/outputsaver.h"
#include "synthesis/synthesis.h"
#include "widgets/flowlayout.h"

#include <QBuffer>
#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QGraphicsScene>
#include <QHBoxLayout>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QPainter>
#include <QShortcut>
#include <QSpinBox>
#include <QSplitter>
#include <QTextBrowser>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <cmath>
#include <limits>

namespace stagecraft {

namespace {

    // Shows layers as "emb", "L0".."L<n-1>", "head" (the LM head and loss live one past the last layer).
    class LayerSpinBox : public QSpinBox
    {
    public:
        using QSpinBox::QSpinBox;
        int32_t modelLayers = 0;

    protected:
        QString textFromValue(int value) const override
        {
            return GraphSpecBuilder::layerName(value, modelLayers);
        }
        int valueFromText(const QString& text) const override
        {
            const QString t = text.trimmed();
            if (t.compare(QLatin1String("emb"), Qt::CaseInsensitive) == 0)
                return -1;
            if (t.compare(QLatin1String("head"), Qt::CaseInsensitive) == 0)
                return modelLayers;
            QString digits = t;
            if (digits.startsWith(QLatin1Char('L'), Qt::CaseInsensitive))
                digits = digits.mid(1);
            return digits.toInt();
        }
        QValidator::State validate(QString& input, int& pos) const override
        {
            Q_UNUSED(pos);
            const QString t = input.trimmed();
            if (t.isEmpty() || QStringLiteral("emb").startsWith(t, Qt::CaseInsensitive)
                || QStringLiteral("head").startsWith(t, Qt::CaseInsensitive))
                return t.compare(QLatin1String("emb"), Qt::CaseInsensitive) == 0
                        || t.compare(QLatin1String("head"), Qt::CaseInsensitive) == 0
                    ? QValidator::Acceptable
                    : QValidator::Intermediate;
            QString digits = t;
            if (digits.startsWith(QLatin1Char('L'), Qt::CaseInsensitive))
                digits = digits.mid(1);
            if (digits.isEmpty())
                return QValidator::Intermediate;
            bool ok = false;
            const int v = digits.toInt(&ok);
            if (!ok)
                return QValidator::Invalid;
            return v >= minimum() && v <= maximum() ? QValidator::Acceptable : QValidator::Intermediate;
        }
    };

    QLabel* caption(const QString& text, QWidget* parent)
    {
        auto* label = new QLabel(text, parent);
        label->setContentsMargins(8, 0, 2, 0);
        return label;
    }

    QString placeholderHtml()
    {
        return QStringLiteral("<p style='color:#6a707a'>Click a node to see its attributes. Double-click a grey "
                              "summary to show its range node by node.</p>");
    }

    /// Cancellation of the on-demand full synthesis: a flag the view sets, polled by synthesize().
    class CancelFlag : public ProgressSink
    {
    public:
        explicit CancelFlag(std::shared_ptr<std::atomic<bool>> flag)
            : m_flag(std::move(flag))
        {
        }
        void report(double, const char*) override { }
        bool cancelled() const override
        {
            return m_flag->load();
        }

    private:
        std::shared_ptr<std::atomic<bool>> m_flag;
    };

} // namespace

GraphView::GraphView(QWidget* parent)
    : ResultView(parent)
    , m_maxNodes(kDefaultMaxNodes)
    , m_latestGeneration(std::make_shared<std::atomic<quint64>>(0))
    , m_debounce(new QTimer(this))
{
    m_debounce->setSingleShot(true);
    m_debounce->setInterval(250);
    connect(m_debounce, &QTimer::timeout, this, &GraphView::startLayout);
    connect(&m_watcher, &QFutureWatcher<Job>::finished, this, &GraphView::layoutFinished);
    buildUi();
    syncControlsFromState();
    updateStatus();
}

GraphView::~GraphView()
{
    // A running job holds only copies and shared pointers; it finishes on its own and its result is dropped.
    m_latestGeneration->store(~quint64(0));
    m_watcher.disconnect(this);
    if (m_fullCancel)
        m_fullCancel->store(true); // m_fullRun waits for its task as it dies: let it stop early
    // The scene deselects its items as it dies, after the details panel is gone.
    m_scene->disconnect(this);
}

void GraphView::buildUi()
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);

    auto* bar = new QWidget(this);
    bar->setObjectName(QStringLiteral("graphToolbar"));
    // Groups of controls on one line, wrapped onto more in a narrow window.
    auto* barLayout = new FlowLayout(bar);
    barLayout->setContentsMargins(8, 6, 8, 6);
    barLayout->setSpacing(10);
    auto group = [bar, barLayout] {
        auto* widget = new QWidget(bar);
        auto* row = new QHBoxLayout(widget);
        row->setContentsMargins(0, 0, 0, 0);
        row->setSpacing(4);
        barLayout->addWidget(widget);
        return row;
    };

    m_classCombo = new QComboBox(bar);
    m_classCombo->setToolTip(tr("Rank class (pipeline stage): ranks of a class run the same program"));
    m_classCombo->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_rankSpin = new QSpinBox(bar);
    m_rankSpin->setToolTip(tr("Rank whose communicator groups and pipeline peers the details show"));
    QHBoxLayout* rankRow = group();
    rankRow->addWidget(caption(tr("Class"), bar));
    rankRow->addWidget(m_classCombo);
    rankRow->addWidget(caption(tr("Rank"), bar));
    rankRow->addWidget(m_rankSpin);

    auto* layerFirst = new LayerSpinBox(bar);
    auto* layerLast = new LayerSpinBox(bar);
    m_layerFirst = layerFirst;
    m_layerLast = layerLast;
    const QString layerTip = tr("Layers shown node by node; \"emb\" is the embedding, \"head\" the LM head and loss. "
                                "Other layers are collapsed into summaries.");
    m_layerFirst->setToolTip(layerTip);
    m_layerLast->setToolTip(layerTip);
    QHBoxLayout* layerRow = group();
    layerRow->addWidget(caption(tr("Layers"), bar));
    layerRow->addWidget(m_layerFirst);
    layerRow->addWidget(new QLabel(QStringLiteral("–"), bar));
    layerRow->addWidget(m_layerLast);

    m_mbFirst = new QSpinBox(bar);
    m_mbLast = new QSpinBox(bar);
    const QString mbTip = tr("Micro-batches shown node by node; the others are collapsed into summaries.");
    m_mbFirst->setToolTip(mbTip);
    m_mbLast->setToolTip(mbTip);
    QHBoxLayout* mbRow = group();
    mbRow->addWidget(caption(tr("Micro-batches"), bar));
    mbRow->addWidget(m_mbFirst);
    mbRow->addWidget(new QLabel(QStringLiteral("–"), bar));
    mbRow->addWidget(m_mbLast);

    m_iterationWork = new QCheckBox(tr("Gradient sync && optimizer"), bar);
    m_iterationWork->setToolTip(tr("Show the once-per-iteration work of the window's layers (gradient reduction, "
                                   "optimizer step) node by node"));
    barLayout->addWidget(m_iterationWork);
    barLayout->addStretch();

    // Find a node by name among the drawn ones (the window's nodes and the summaries' titles).
    QHBoxLayout* findRow = group();
    m_findEdit = new QLineEdit(bar);
    m_findEdit->setObjectName(QStringLiteral("graphFind"));
    m_findEdit->setPlaceholderText(tr("Find node (Ctrl+F)"));
    m_findEdit->setClearButtonEnabled(true);
    m_findEdit->setToolTip(tr("Selects the next drawn node whose name contains the text; Return: the next match"));
    m_findEdit->setMinimumWidth(140);
    m_findLabel = new QLabel(bar);
    m_findLabel->setStyleSheet(QStringLiteral("color:#4a505a;"));
    findRow->addWidget(m_findEdit);
    findRow->addWidget(m_findLabel);
    connect(m_findEdit, &QLineEdit::returnPressed, this, [this] { findNode(m_findEdit->text()); });
    connect(m_findEdit, &QLineEdit::textEdited, this, [this](const QString& text) {
        m_scene->clearSelection();
        findNode(text);
    });
    auto* findShortcut = new QShortcut(QKeySequence::Find, this);
    findShortcut->setContext(Qt::WidgetWithChildrenShortcut);
    connect(findShortcut, &QShortcut::activated, this, [this] {
        m_findEdit->setFocus(Qt::ShortcutFocusReason);
        m_findEdit->selectAll();
    });

    QHBoxLayout* zoomRow = group();
    m_busyLabel = new QLabel(tr("Laying out…"), bar);
    m_busyLabel->setStyleSheet(QStringLiteral("color:#8a5a00; padding: 0 8px;"));
    m_busyLabel->setVisible(false);
    m_busyLabel->setTextFormat(Qt::RichText);
    connect(m_busyLabel, &QLabel::linkActivated, this, [this] { cancelFullSynthesis(); });
    zoomRow->addWidget(m_busyLabel);

    auto addButton = [&](const QString& text, const QString& tip, auto slot) {
        auto* button = new QToolButton(bar);
        button->setText(text);
        button->setToolTip(tip);
        button->setAutoRaise(true);
        connect(button, &QToolButton::clicked, this, slot);
        zoomRow->addWidget(button);
        return button;
    };
    addButton(tr("Fit"), tr("Fit the graph into the view"), &GraphView::fitToView);
    addButton(QStringLiteral("−"), tr("Zoom out (or turn the wheel)"), &GraphView::zoomOut);
    m_zoomLabel = new QLabel(QStringLiteral("100 %"), bar);
    m_zoomLabel->setMinimumWidth(44);
    m_zoomLabel->setAlignment(Qt::AlignCenter);
    zoomRow->addWidget(m_zoomLabel);
    addButton(QStringLiteral("+"), tr("Zoom in (or turn the wheel)"), &GraphView::zoomIn);
    addButton(tr("100%"), tr("Actual size"), &GraphView::resetZoom);
    addButton(tr("Export…"), tr("Save the graph as SVG or PNG"), &GraphView::exportGraph);
    layout->addWidget(bar);

    auto* line = new QFrame(this);
    line->setFrameShape(QFrame::HLine);
    line->setFrameShadow(QFrame::Sunken);
    layout->addWidget(line);

    m_staleBanner = new QLabel(tr("The configuration has errors: this graph shows the last good result."), this);
    m_staleBanner->setStyleSheet(QStringLiteral("background:#fff3cd; color:#664d03; padding:4px 8px;"));
    m_staleBanner->setVisible(false);
    layout->addWidget(m_staleBanner);

    auto* splitter = new QSplitter(Qt::Horizontal, this);
    m_scene = new QGraphicsScene(this);
    m_scene->setItemIndexMethod(QGraphicsScene::BspTreeIndex);
    m_canvas = new GraphCanvas(m_scene, splitter);
    splitter->addWidget(m_canvas);

    auto* panel = new QWidget(splitter);
    auto* panelLayout = new QVBoxLayout(panel);
    panelLayout->setContentsMargins(8, 8, 8, 8);
    auto* legendTitle = new QLabel(tr("<b>Legend</b>"), panel);
    panelLayout->addWidget(legendTitle);
    panelLayout->addWidget(new GraphLegend(panel));
    auto* detailsTitle = new QLabel(tr("<b>Details</b>"), panel);
    panelLayout->addSpacing(6);
    panelLayout->addWidget(detailsTitle);
    m_details = new QTextBrowser(panel);
    m_details->setOpenLinks(false);
    m_details->setHtml(placeholderHtml());
    panelLayout->addWidget(m_details, 1);
    splitter->addWidget(panel);
    splitter->setStretchFactor(0, 1);
    splitter->setStretchFactor(1, 0);
    splitter->setSizes({ 1000, 340 });
    layout->addWidget(splitter, 1);

    m_status = new QLabel(this);
    m_status->setContentsMargins(8, 3, 8, 3);
    m_status->setTextFormat(Qt::RichText);
    m_status->setWordWrap(true); // counts, notes and the compressed range: a long line must not widen the window
    layout->addWidget(m_status);

    connect(m_classCombo, &QComboBox::currentIndexChanged, this, [this](int index) {
        if (!m_updatingControls && index >= 0)
            setClassIndex(index);
    });
    connect(m_rankSpin, &QSpinBox::valueChanged, this, [this](int value) {
        if (!m_updatingControls)
            setRank(RankId { value });
    });
    for (QSpinBox* spin : { m_layerFirst, m_layerLast, m_mbFirst, m_mbLast })
        connect(spin, &QSpinBox::valueChanged, this, &GraphView::controlsEdited);
    connect(m_iterationWork, &QCheckBox::toggled, this, &GraphView::controlsEdited);
    connect(m_scene, &QGraphicsScene::selectionChanged, this, &GraphView::updateDetails);
    connect(m_canvas, &GraphCanvas::nodeActivated, this, &GraphView::activateNode);
    connect(m_canvas, &GraphCanvas::zoomChanged, this,
        [this](double scale) { m_zoomLabel->setText(QStringLiteral("%1 %").arg(qRound(scale * 100))); });
    connect(m_details, &QTextBrowser::anchorClicked, this, &GraphView::followLink);
}

std::shared_ptr<const SynthesisResult> GraphView::result() const
{
    return m_result;
}

std::shared_ptr<const SynthesisResult> GraphView::drawnResult() const
{
    return m_drawn;
}

bool GraphView::isSynthesizingFull() const
{
    return m_fullRun.isRunning();
}

void GraphView::cancelFullSynthesis()
{
    if (!m_fullRun.isRunning())
        return;
    if (m_fullCancel)
        m_fullCancel->store(true);
    m_fullRun.cancel();
    if (m_result && m_result->compression) {
        // Back to what the compressed programs hold.
        const auto last = static_cast<int32_t>(m_result->compression->keptMicroBatches - 1);
        GraphWindow w = m_window;
        w.microBatchLast = std::min(w.microBatchLast, last);
        w.microBatchFirst = std::min(w.microBatchFirst, w.microBatchLast);
        m_window = w;
        syncControlsFromState();
    }
    startLayout();
}

bool GraphView::needsFullResult() const
{
    return m_result && m_result->compression && m_window.microBatchLast >= m_result->compression->keptMicroBatches;
}

void GraphView::startFullSynthesis()
{
    const Config& config = m_result->config;
    const int64_t nodes = builtStageNodes(config, false);
    if (nodes > config.maxProgramNodes) {
        m_fullError = tr("micro-batches past %1 need the whole iteration synthesized, about %2 program nodes on "
                         "the largest stage, more than the limit of %3 per stage")
                          .arg(formatExact(m_result->compression->keptMicroBatches), formatExact(nodes),
                              formatExact(config.maxProgramNodes));
        return;
    }
    if (m_fullCancel)
        m_fullCancel->store(true);
    auto cancel = std::make_shared<std::atomic<bool>>(false);
    m_fullCancel = cancel;
    m_busy = true;
    m_busyLabel->setText(tr("Synthesizing all %1 micro-batches for this window… <a href=\"cancel\">Cancel</a>")
                             .arg(formatExact(m_result->compression->microBatches)));
    m_busyLabel->setVisible(true);
    m_fullRun.start(
        [config, graph = m_result->graph, cancel] {
            CancelFlag sink(cancel);
            SynthesisOptions options;
            options.memorySeries = false; // the graph draws programs, not memory
            return synthesize(config, &sink, graph, options);
        },
        [this, config](const SynthesisOutcome& outcome) {
            if (!m_result || m_result->config != config)
                return;
            if (outcome.result) {
                m_fullResult = outcome.result;
            } else {
                m_fullError = tr("the whole iteration could not be synthesized");
                for (const Diagnostic& d : outcome.diagnostics)
                    if (d.severity == Severity::Error) {
                        m_fullError += QStringLiteral(": ") + QString::fromStdString(d.message);
                        break;
                    }
            }
            startLayout();
        });
}

RankId GraphView::rank() const
{
    return m_rank;
}

int32_t GraphView::classIndex() const
{
    return m_class;
}

GraphWindow GraphView::window() const
{
    return m_window;
}

int32_t GraphView::maxNodes() const
{
    return m_maxNodes;
}

const GraphSpec& GraphView::shownSpec() const
{
    return m_spec;
}

const GraphLayout& GraphView::shownLayout() const
{
    return m_layout;
}

bool GraphView::isLayingOut() const
{
    return m_busy;
}

bool GraphView::isSettled() const
{
    return !m_busy && !m_fullRun.isRunning();
}

QGraphicsScene* GraphView::scene() const
{
    return m_scene;
}

GraphCanvas* GraphView::canvas() const
{
    return m_canvas;
}

void GraphView::setStale(bool stale)
{
    m_staleBanner->setVisible(stale);
}

void GraphView::setResult(std::shared_ptr<const SynthesisResult> result)
{
    const bool sameShape = m_result && result && m_result->classes.size() == result->classes.size()
        && m_result->worldSize() == result->worldSize();
    if (!result || !m_result || result->config != m_result->config) {
        // A full synthesis belongs to one plan.
        if (m_fullCancel)
            m_fullCancel->store(true);
        m_fullRun.cancel();
        m_fullResult.reset();
        m_fullError.clear();
    }
    m_result = std::move(result);
    if (!m_result || m_result->classes.empty()) {
        m_scene->clear();
        m_items.clear();
        m_drawn.reset();
        m_spec = {};
        m_layout = {};
        syncControlsFromState();
        updateDetails();
        updateStatus();
        return;
    }
    if (!sameShape) {
        m_class = 0;
        m_rank = m_result->classes.front().exampleRank;
        m_window = GraphSpecBuilder::defaultWindow(m_result->classes.front());
        m_fitOnShow = true;
    } else {
        m_class = std::clamp<int32_t>(m_class, 0, int32_t(m_result->classes.size()) - 1);
        m_rank = RankId { std::clamp<int64_t>(m_rank.value, 0, m_result->worldSize() - 1) };
        if (m_result->classOf(m_rank) != m_class)
            m_rank = m_result->classes[size_t(m_class)].exampleRank;
    }
    populateSelectors();
    syncControlsFromState();
    startLayout();
}

void GraphView::setRank(RankId rank)
{
    if (!m_result)
        return;
    rank = RankId { std::clamp<int64_t>(rank.value, 0, m_result->worldSize() - 1) };
    const int32_t cls = m_result->classOf(rank);
    m_rank = rank;
    if (cls != m_class) {
        m_class = cls;
        m_window = GraphSpecBuilder::defaultWindow(m_result->classes[size_t(cls)]);
        m_fitOnShow = true;
        syncControlsFromState();
        startLayout();
        return;
    }
    syncControlsFromState();
    updateDetails(); // groups and peers depend on the rank, the drawing does not
}

void GraphView::setClassIndex(int32_t classIndex)
{
    if (!m_result || classIndex < 0 || size_t(classIndex) >= m_result->classes.size())
        return;
    if (classIndex == m_class && m_result->classOf(m_rank) == classIndex)
        return;
    setRank(m_result->classes[size_t(classIndex)].exampleRank);
}

void GraphView::setWindow(const GraphWindow& window)
{
    if (window == m_window)
        return;
    m_window = window;
    m_fitOnShow = true;
    syncControlsFromState();
    if (m_result)
        startLayout();
}

void GraphView::setMaxNodes(int32_t maxNodes)
{
    maxNodes = std::clamp(maxNodes, GraphSpecOptions::kSmallestMaxNodes, GraphSpecOptions::kDefaultMaxNodes);
    if (maxNodes == m_maxNodes)
        return;
    m_maxNodes = maxNodes;
    if (m_result)
        startLayout();
}

void GraphView::populateSelectors()
{
    m_updatingControls = true;
    m_classCombo->clear();
    for (const ClassProgram& program : m_result->classes)
        m_classCombo->addItem(tr("Stage %1 · %2")
                                  .arg(program.stage)
                                  .arg(countNoun(program.rankCount, QStringLiteral("rank"), QStringLiteral("ranks"))));
    m_rankSpin->setRange(0, int(std::min<int64_t>(m_result->worldSize() - 1, std::numeric_limits<int>::max())));
    m_updatingControls = false;
}

void GraphView::syncControlsFromState()
{
    m_updatingControls = true;
    const bool enabled = m_result && !m_result->classes.empty();
    for (QWidget* w : std::initializer_list<QWidget*> {
             m_classCombo, m_rankSpin, m_layerFirst, m_layerLast, m_mbFirst, m_mbLast, m_iterationWork })
        w->setEnabled(enabled);
    if (enabled) {
        const ClassProgram& program = m_result->classes[size_t(m_class)];
        const auto [lo, hi] = GraphSpecBuilder::layerRange(program);
        const int32_t layers = m_result->graph ? m_result->graph->layers : 0;
        for (QSpinBox* spin : { m_layerFirst, m_layerLast }) {
            static_cast<LayerSpinBox*>(spin)->modelLayers = layers;
            spin->setRange(lo, hi);
        }
        // A compressed result's range is still the whole iteration's: past the kept micro-batches it is
        // synthesized in full when asked for.
        const int32_t mbs = m_result->compression
            ? static_cast<int32_t>(std::min<int64_t>(m_result->compression->microBatches, INT32_MAX))
            : std::max(GraphSpecBuilder::microBatchCount(program), 1);
        m_mbFirst->setRange(0, mbs - 1);
        m_mbLast->setRange(0, mbs - 1);
        m_classCombo->setCurrentIndex(m_class);
        m_rankSpin->setValue(int(m_rank.value));
        m_layerFirst->setValue(m_window.layerFirst);
        m_layerLast->setValue(m_window.layerLast);
        m_mbFirst->setValue(m_window.microBatchFirst);
        m_mbLast->setValue(m_window.microBatchLast);
        m_iterationWork->setChecked(m_window.iterationWork);
    }
    m_updatingControls = false;
}

void GraphView::controlsEdited()
{
    if (m_updatingControls || !m_result)
        return;
    GraphWindow w;
    w.layerFirst = m_layerFirst->value();
    w.layerLast = m_layerLast->value();
    w.microBatchFirst = m_mbFirst->value();
    w.microBatchLast = m_mbLast->value();
    w.iterationWork = m_iterationWork->isChecked();
    // Keep first <= last by moving the other end along.
    QObject* from = sender();
    if (w.layerFirst > w.layerLast) {
        if (from == m_layerFirst)
            w.layerLast = w.layerFirst;
        else
            w.layerFirst = w.layerLast;
    }
    if (w.microBatchFirst > w.microBatchLast) {
        if (from == m_mbFirst)
            w.microBatchLast = w.microBatchFirst;
        else
            w.microBatchFirst = w.microBatchLast;
    }
    if (w == m_window)
        return;
    m_window = w;
    m_fitOnShow = true;
    syncControlsFromState();
    scheduleLayout();
}

void GraphView::scheduleLayout()
{
    m_busy = true;
    if (!m_fullRun.isRunning())
        m_busyLabel->setText(tr("Laying out…"));
    m_busyLabel->setVisible(true);
    m_debounce->start();
}

void GraphView::startLayout()
{
    m_debounce->stop();
    if (!m_result || m_result->classes.empty()) {
        // Nothing to lay out: settled as it is.
        const bool wasBusy = m_busy;
        m_busy = false;
        m_busyLabel->setVisible(false);
        if (wasBusy)
            Q_EMIT settled();
        return;
    }
    const bool full = needsFullResult() && m_fullError.isEmpty();
    if (full && !m_fullResult) {
        if (!m_fullRun.isRunning())
            startFullSynthesis();
        if (m_fullError.isEmpty()) {
            m_latestGeneration->store(++m_generation); // a layout still running is for the old window
            return; // the layout starts when the whole iteration is there
        }
    } else if (!full && m_fullRun.isRunning()) {
        // The window is back inside the kept micro-batches: the full synthesis is no longer needed.
        m_fullCancel->store(true);
        m_fullRun.cancel();
    }
    const quint64 generation = ++m_generation;
    m_latestGeneration->store(generation);
    m_busy = true;
    m_busyLabel->setText(tr("Laying out…"));
    m_busyLabel->setVisible(true);
    const auto drawn = full && m_fullResult ? m_fullResult : m_result;

    // Everything the worker needs, by value or shared and immutable; it never reads this widget.
    GraphSpecOptions options;
    options.maxNodes = m_maxNodes;
    auto job = [result = drawn, cls = m_class, window = m_window, options, generation,
                   latest = m_latestGeneration]() -> Job {
        Job out;
        out.generation = generation;
        out.drawn = result;
        if (latest->load() != generation) {
            out.superseded = true;
            return out;
        }
        out.spec = GraphSpecBuilder::build(*result, cls, window, options);
        if (latest->load() != generation) {
            out.superseded = true;
            return out;
        }
        out.layout = GraphLayouter::layout(out.spec);
        return out;
    };
    m_watcher.setFuture(QtConcurrent::run(QThreadPool::globalInstance(), std::move(job)));
}

void GraphView::layoutFinished()
{
    const QFuture<Job> future = m_watcher.future();
    if (future.isCanceled() || future.resultCount() == 0)
        return;
    Job job = future.result();
    if (job.superseded || job.generation != m_generation)
        return;
    m_busy = false;
    m_busyLabel->setVisible(false);
    if (!job.layout.ok) {
        qCWarning(lcGraph) << "layout failed:" << job.layout.error;
        m_status->setText(
            QStringLiteral("<span style='color:#b02a37'>%1</span>").arg(job.layout.error.toHtmlEscaped()));
        Q_EMIT layoutFailed(job.layout.error);
        Q_EMIT settled();
        return;
    }
    showJob(std::move(job));
}

void GraphView::showJob(Job job)
{
    // Remember the selection across the swap: the same program node, if it is still shown.
    int32_t reselect = m_pendingSelection;
    m_pendingSelection = -1;
    if (reselect < 0) {
        const QList<QGraphicsItem*> selected = m_scene->selectedItems();
        if (!selected.isEmpty() && selected.front()->type() == GraphNodeItem::Type)
            reselect = static_cast<GraphNodeItem*>(selected.front())->node().programNode;
    }

    const QSignalBlocker blocker(m_scene);
    m_scene->clear();
    m_items.clear();
    m_spec = std::move(job.spec);
    m_layout = std::move(job.layout);
    m_drawn = std::move(job.drawn);

    m_items.resize(m_spec.nodes.size(), nullptr);
    for (size_t i = 0; i < m_spec.nodes.size(); ++i) {
        auto* item = new GraphNodeItem(int32_t(i), m_spec.nodes[i], m_layout.nodeRects[i]);
        m_scene->addItem(item);
        m_items[i] = item;
    }
    for (size_t i = 0; i < m_spec.edges.size(); ++i) {
        const GraphSpecEdge& e = m_spec.edges[i];
        auto* item = new GraphEdgeItem(e, m_layout.edges[i]);
        m_scene->addItem(item);
        m_items[size_t(e.from)]->addEdge(item);
        m_items[size_t(e.to)]->addEdge(item);
    }
    m_scene->setSceneRect(m_layout.bounds.adjusted(-24, -24, 24, 24));
    if (m_fitOnShow) {
        // Readable first: a graph that does not fit at 70 % is shown from the window's first node, where reading
        // starts ("Fit" shows all of it).
        if (!m_canvas->fitScene(0.7)) {
            const GraphNodeItem* first = nullptr;
            for (const GraphNodeItem* item : m_items)
                if (item->node().programNode >= 0 && (!first || item->node().programNode < first->node().programNode))
                    first = item;
            if (first)
                m_canvas->showNearTop(QPointF(first->boundingRect().center().x(), first->boundingRect().top()));
        }
        m_fitOnShow = false;
    }
    if (reselect >= 0) {
        if (GraphNodeItem* item = itemForProgramNode(reselect)) {
            item->setSelected(true);
            m_canvas->centerOn(item);
        }
    }
    updateDetails();
    updateStatus();
    Q_EMIT graphShown();
    Q_EMIT settled();
}

GraphNodeItem* GraphView::itemForSpecNode(int32_t specIndex) const
{
    if (specIndex < 0 || size_t(specIndex) >= m_items.size())
        return nullptr;
    return m_items[size_t(specIndex)];
}

GraphNodeItem* GraphView::itemForProgramNode(int32_t programNode) const
{
    for (GraphNodeItem* item : m_items)
        if (item && item->node().programNode == programNode && programNode >= 0)
            return item;
    return nullptr;
}

bool GraphView::selectProgramNode(int32_t programNode)
{
    GraphNodeItem* item = itemForProgramNode(programNode);
    if (!item)
        return false;
    m_scene->clearSelection();
    item->setSelected(true);
    m_canvas->centerOn(item);
    return true;
}

int GraphView::findNode(const QString& text)
{
    const QString needle = text.trimmed();
    const ClassProgram* program =
        m_drawn && m_spec.classIndex >= 0 && static_cast<size_t>(m_spec.classIndex) < m_drawn->classes.size()
        ? &m_drawn->classes[static_cast<size_t>(m_spec.classIndex)]
        : nullptr;
    std::vector<int32_t> matches;
    for (int32_t i = 0; !needle.isEmpty() && i < static_cast<int32_t>(m_spec.nodes.size()); ++i) {
        const GraphSpecNode& node = m_spec.nodes[static_cast<size_t>(i)];
        bool match =
            node.title.contains(needle, Qt::CaseInsensitive) || node.subtitle.contains(needle, Qt::CaseInsensitive);
        if (!match && program && node.programNode >= 0 && static_cast<size_t>(node.programNode) < program->nodes.size())
            match = QString::fromStdString(program->nodes[static_cast<size_t>(node.programNode)].name)
                        .contains(needle, Qt::CaseInsensitive);
        if (match && itemForSpecNode(i))
            matches.push_back(i);
    }
    if (needle.isEmpty()) {
        m_findLabel->clear();
        return 0;
    }
    if (matches.empty()) {
        m_findLabel->setText(tr("no match"));
        return 0;
    }
    // The match after the selected node, wrapping around.
    int32_t after = -1;
    const QList<QGraphicsItem*> selected = m_scene->selectedItems();
    for (int32_t i = 0; i < static_cast<int32_t>(m_items.size()) && !selected.isEmpty(); ++i)
        if (m_items[static_cast<size_t>(i)] == selected.front())
            after = i;
    const auto next = std::upper_bound(matches.begin(), matches.end(), after);
    const int32_t chosen = next == matches.end() ? matches.front() : *next;
    GraphNodeItem* item = itemForSpecNode(chosen);
    m_scene->clearSelection();
    item->setSelected(true);
    m_canvas->centerOn(item);
    m_findLabel->setText(tr("%1 of %2")
                             .arg(std::find(matches.begin(), matches.end(), chosen) - matches.begin() + 1)
                             .arg(matches.size()));
    return static_cast<int>(matches.size());
}

QLineEdit* GraphView::findEdit() const
{
    return m_findEdit;
}

QString GraphView::detailsText() const
{
    return m_details->toPlainText();
}

QString GraphView::statusText() const
{
    return m_status->text();
}

void GraphView::updateDetails()
{
    const QList<QGraphicsItem*> selected = m_scene->selectedItems();
    if (!m_result || selected.isEmpty() || selected.front()->type() != GraphNodeItem::Type) {
        m_details->setHtml(placeholderHtml());
        return;
    }
    const auto* item = static_cast<const GraphNodeItem*>(selected.front());
    m_details->setHtml(GraphNodeDetails::html(m_drawn ? *m_drawn : *m_result, m_spec, item->specIndex(), m_rank));
}

void GraphView::updateStatus()
{
    if (!m_result) {
        m_status->setText(tr("No result yet."));
        return;
    }
    if (m_spec.nodes.empty()) {
        m_status->setText(m_busy ? tr("Laying out…") : tr("Nothing to show."));
        return;
    }
    QString text = tr("Stage %1: %2 of %3 program nodes shown, %4, %5 · layout %6 ms")
                       .arg(m_spec.classIndex)
                       .arg(formatExact(m_spec.individualCount), formatExact(m_spec.programNodeCount),
                           countNoun(qint64(m_spec.summaries.size()), tr("summary"), tr("summaries")),
                           countNoun(qint64(m_spec.edges.size()), tr("edge"), tr("edges")))
                       .arg(m_layout.elapsedMs);
    if (!m_spec.note.isEmpty())
        text += QStringLiteral(" · <span style='color:#8a5a00'>%1</span>").arg(m_spec.note.toHtmlEscaped());
    if (m_drawn && m_drawn->compression)
        text += QStringLiteral(" · ")
            + keptMicroBatchesText(m_drawn->compression->keptMicroBatches, m_drawn->compression->microBatches)
            + tr("; a later micro-batch synthesizes them all");
    else if (m_drawn && m_drawn != m_result)
        text += tr(" · the whole iteration, synthesized for this window");
    if (!m_fullError.isEmpty() && needsFullResult())
        text += QStringLiteral(" · <span style='color:#b02a37'>%1</span>").arg(m_fullError.toHtmlEscaped());
    m_status->setText(text);
}

void GraphView::activateNode(int specIndex)
{
    if (specIndex < 0 || size_t(specIndex) >= m_spec.nodes.size())
        return;
    const GraphSpecNode& node = m_spec.nodes[size_t(specIndex)];
    if (node.kind != GraphNodeKind::Summary)
        return;
    const GraphSummary& s = m_spec.summaries[size_t(node.summary)];
    GraphWindow w = m_window;
    w.layerFirst = s.layerFirst;
    w.layerLast = s.layerLast;
    if (s.microBatchFirst >= 0) {
        w.microBatchFirst = s.microBatchFirst;
        w.microBatchLast = s.microBatchLast;
    } else {
        w.iterationWork = true;
    }
    setWindow(w);
}

void GraphView::followLink(const QUrl& link)
{
    const int32_t programNode = GraphNodeDetails::programNodeOfLink(link.toString());
    if (programNode < 0)
        return;
    if (!selectProgramNode(programNode))
        showWindowOf(programNode);
}

void GraphView::showWindowOf(int32_t programNode)
{
    const auto& drawn = m_drawn ? m_drawn : m_result;
    if (!drawn || size_t(m_class) >= drawn->classes.size())
        return;
    const ClassProgram& program = drawn->classes[size_t(m_class)];
    if (programNode < 0 || size_t(programNode) >= program.nodes.size())
        return;
    const ProgramNode& n = program.nodes[size_t(programNode)];
    GraphWindow w = m_window;
    w.layerFirst = w.layerLast = n.layer;
    if (n.microBatch >= 0)
        w.microBatchFirst = w.microBatchLast = n.microBatch;
    else
        w.iterationWork = true;
    m_pendingSelection = programNode;
    setWindow(w);
}

void GraphView::fitToView()
{
    m_canvas->fitScene(GraphCanvas::kMinScale);
}

void GraphView::zoomIn()
{
    m_canvas->zoomBy(1.25);
}

void GraphView::zoomOut()
{
    m_canvas->zoomBy(1 / 1.25);
}

void GraphView::resetZoom()
{
    m_canvas->setZoom(1.0);
}

bool GraphView::exportSvg(const QString& path, QString* error) const
{
    if (m_spec.nodes.empty()) {
        if (error)
            *error = tr("There is no graph to export.");
        return false;
    }
    return GraphSvgWriter::writeFile(path, m_spec, m_layout, error);
}

bool GraphView::exportPng(const QString& path, QString* error) const
{
    if (m_spec.nodes.empty()) {
        if (error)
            *error = tr("There is no graph to export.");
        return false;
    }
    const QRectF source = m_scene->sceneRect();
    // Twice the screen resolution, unless that exceeds what image viewers cope with.
    constexpr double kMaxSide = 16000;
    const double scale = std::min(2.0, kMaxSide / std::max(source.width(), source.height()));
    QImage image(QSize(int(std::ceil(source.width() * scale)), int(std::ceil(source.height() * scale))),
        QImage::Format_ARGB32_Premultiplied);
    if (image.isNull()) {
        if (error)
            *error = tr("The graph is too large for an image.");
        return false;
    }
    image.fill(Qt::white);
    {
        QPainter painter(&image);
        painter.setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
        m_scene->render(&painter, QRectF(QPointF(0, 0), QSizeF(image.size())), source);
    }
    QByteArray png;
    QBuffer buffer(&png);
    buffer.open(QIODevice::WriteOnly);
    if (!image.save(&buffer, "PNG")) {
        if (error)
            *error = tr("Could not encode the graph as PNG.");
        return false;
    }
    return saveOutputFile(path, png, error);
}

void GraphView::exportGraph()
{
    if (m_spec.nodes.empty())
        return;
    QString selectedFilter;
    const QString path = QFileDialog::getSaveFileName(this, tr("Export graph"),
        QStringLiteral("stage%1-graph.svg").arg(m_spec.classIndex), tr("SVG image (*.svg);;PNG image (*.png)"),
        &selectedFilter);
    if (path.isEmpty())
        return;
    QString error;
    const bool png = QFileInfo(path).suffix().compare(QLatin1String("png"), Qt::CaseInsensitive) == 0;
    const bool ok = png ? exportPng(path, &error) : exportSvg(path, &error);
    if (!ok)
        QMessageBox::warning(this, tr("Export graph"), tr("The graph could not be exported: %1").arg(error));
}

} // namespace stagecraft
