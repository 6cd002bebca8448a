// SPDX-License-Identifier: MIT
#include "timeline/timelineview.h"

#include "estimate/chrometrace.h"
#include "kineto/messagequote.h"
#include "models/formatting.h"
#include "synthesis/synthesis.h"
#include "timeline/timeaxis.h"
#include "timeline/timelinechart.h"
#include "timeline/timelinestyle.h"
#include "widgets/int64spinbox.h"

#include <QComboBox>
#include <QCoreApplication>
#include <QFileDialog>
#include <QFrame>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QShortcut>
#include <QVBoxLayout>
#include <stdexcept>

namespace stagecraft {

namespace {

    QString percent(double fraction)
    {
        return QString::number(fraction * 100.0, 'f', 1) + QLatin1Char('%');
    }

    /// Swatches of the bar styles that `data` uses (all of them without data).
    QString legendHtml(const TimelineData* data)
    {
        QStringList entries;
        for (int s = 0; s < kTimelineBarStyleCount; ++s) {
            if (data && data->ok && !data->stylesUsed[static_cast<size_t>(s)])
                continue;
            const auto style = static_cast<TimelineBarStyle>(s);
            entries << QStringLiteral("<span style='color:%1; font-size:14px'>\u25a0</span>&nbsp;%2")
                           .arg(TimelineStyle::solidColor(style).name(), TimelineStyle::name(style));
        }
        if (data && data->ok && data->anyHidden)
            entries << QStringLiteral("<span style='color:%1; font-size:14px'>\u25a0</span>&nbsp;%2")
                           .arg(TimelineStyle::hiddenFillColor(TimelineBarStyle::AllToAll).name(),
                               QCoreApplication::translate("TimelineView", "pale: hidden under compute")
                                   .replace(QLatin1Char(' '), QStringLiteral("&nbsp;")));
        return entries.join(QStringLiteral("&nbsp;&nbsp;&nbsp; "));
    }

    /// The line under the legend; with a measured trace, how its lanes are coloured.
    QString hintText(bool measured)
    {
        QString text = QCoreApplication::translate("TimelineView",
            "Wheel: zoom around the mouse \u00b7 drag: pan \u00b7 Shift+drag: measure (Esc clears) \u00b7 "
            "double-click or Fit: whole iteration \u00b7 hover a bar for its node \u00b7 green arrows: pipeline "
            "sends between stages \u00b7 bars thinner than a pixel are merged");
        if (measured)
            text += QLatin1Char('\n')
                + QCoreApplication::translate("TimelineView",
                    "Measured lanes: compute kernels in the forward colour, NCCL kernels in their collective's, "
                    "send/recv, broadcasts and copies as sends; a kernel under an earlier one of another stream is "
                    "counted in the totals but not drawn");
        return text;
    }

    /// Writes the Chrome trace of every stage; the error text, empty on success. Any thread.
    QString writeTrace(const SynthesisResult& result, const TimelineData& data, const QString& path)
    {
        try {
            writeChromeTrace(path.toStdString(), chromeTraceJson(result, data.estimate, data.schedule));
        } catch (const std::exception& e) {
            return QString::fromStdString(e.what());
        }
        return {};
    }

} // namespace

TimelineView::TimelineView(QWidget* parent)
    : ResultView(parent)
    , m_chart(new TimelineChart(this))
    , m_classCombo(new QComboBox(this))
    , m_rankSpin(new Int64SpinBox(this))
    , m_rankClassLabel(new QLabel(this))
    , m_fitButton(new QPushButton(tr("Fit"), this))
    , m_exportButton(new QPushButton(tr("Export Chrome trace\u2026"), this))
    , m_overlayButton(new QPushButton(tr("Overlay measured trace\u2026"), this))
    , m_clearOverlayButton(new QPushButton(tr("Clear overlay"), this))
    , m_comparison(new QLabel(this))
    , m_summary(new QLabel(this))
    , m_message(new QLabel(this))
    , m_legend(new QLabel(this))
    , m_hint(new QLabel(this))
    , m_staleBanner(new QLabel(this))
{
    connect(&m_run, &LatestRun::settled, this, &ResultView::settled);

    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("Class:"), this));
    m_classCombo->setToolTip(tr("A rank class: all ranks of one pipeline stage run the same schedule"));
    m_classCombo->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    controls->addWidget(m_classCombo);
    controls->addSpacing(12);
    controls->addWidget(new QLabel(tr("Rank:"), this));
    m_rankSpin->setToolTip(tr("Pick any rank; the chart shows its class's schedule"));
    m_rankSpin->setMinimumWidth(90);
    controls->addWidget(m_rankSpin);
    controls->addWidget(m_rankClassLabel);
    controls->addStretch(1);
    m_findEdit = new QLineEdit(this);
    m_findEdit->setObjectName(QStringLiteral("timelineFind"));
    m_findEdit->setPlaceholderText(tr("Find (Ctrl+F)"));
    m_findEdit->setClearButtonEnabled(true);
    m_findEdit->setToolTip(tr("Outlines the bars whose node name contains the text; Return shows the next one"));
    m_findEdit->setMaximumWidth(180);
    m_findLabel = new QLabel(this);
    m_findLabel->setStyleSheet(QStringLiteral("QLabel { color: #4a505a; }"));
    controls->addWidget(m_findEdit);
    controls->addWidget(m_findLabel);
    connect(m_findEdit, &QLineEdit::textChanged, this, [this](const QString& text) {
        m_chart->setSearchText(text);
        const int count = m_chart->searchMatchCount();
        m_findLabel->setText(text.trimmed().isEmpty() ? QString()
                : count == 0                          ? tr("no match in stage %1").arg(m_class)
                                                      : tr("%1 in stage %2").arg(formatExact(count)).arg(m_class));
    });
    connect(m_findEdit, &QLineEdit::returnPressed, m_chart, &TimelineChart::showNextMatch);
    auto* findShortcut = new QShortcut(QKeySequence::Find, this);
    findShortcut->setContext(Qt::WidgetWithChildrenShortcut);
    connect(findShortcut, &QShortcut::activated, this, [this] {
        m_findEdit->setFocus(Qt::ShortcutFocusReason);
        m_findEdit->selectAll();
    });
    m_fitButton->setToolTip(tr("Show the whole iteration (double-click the chart does the same)"));
    controls->addWidget(m_fitButton);
    m_exportButton->setToolTip(tr("Save the schedule of every stage as Chrome trace JSON, which Perfetto and "
                                  "chrome://tracing open (one process per stage, one thread per stream)"));
    controls->addWidget(m_exportButton);
    m_overlayButton->setToolTip(tr("Lay one rank's PyTorch profiler trace (torch.profiler's Chrome-trace JSON, .json "
                                   "or .json.gz) beside this schedule: its kernels of one profiled step as two lanes, "
                                   "and GPU time per op kind, measured against ours"));
    controls->addWidget(m_overlayButton);
    m_clearOverlayButton->setToolTip(tr("Remove the measured trace from the chart"));
    m_clearOverlayButton->hide();
    controls->addWidget(m_clearOverlayButton);

    m_staleBanner->setText(tr("The config has changed and does not synthesize: this is the last good result."));
    m_staleBanner->setStyleSheet(
        QStringLiteral("QLabel { background: #fff3cd; color: #664d03; padding: 4px 8px; border-radius: 3px; }"));
    m_staleBanner->hide();

    m_summary->setTextFormat(Qt::RichText);
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);

    m_message->setWordWrap(true);
    m_message->setAlignment(Qt::AlignCenter);
    m_message->setStyleSheet(QStringLiteral(
        "QLabel { background: #f8d7da; color: #58151c; padding: 12px; border-radius: 3px; font-size: 13px; }"));
    m_message->hide();

    // The chart and its legend on one white card, as in the Memory tab.
    auto* card = m_card = new QFrame(this);
    card->setFrameShape(QFrame::StyledPanel);
    card->setAutoFillBackground(true);
    QPalette cardPalette = card->palette();
    cardPalette.setColor(QPalette::Window, Qt::white);
    card->setPalette(cardPalette);
    auto* cardLayout = new QVBoxLayout(card);
    cardLayout->setContentsMargins(0, 6, 0, 8);
    cardLayout->setSpacing(4);
    cardLayout->addWidget(m_chart);
    m_legend->setTextFormat(Qt::RichText);
    m_legend->setWordWrap(true);
    m_legend->setAlignment(Qt::AlignHCenter);
    m_legend->setText(legendHtml(nullptr));
    cardLayout->addWidget(m_legend);
    m_hint->setText(hintText(false));
    m_hint->setAlignment(Qt::AlignHCenter);
    m_hint->setWordWrap(true);
    m_hint->setStyleSheet(QStringLiteral("QLabel { color: #6c6c66; }"));
    cardLayout->addWidget(m_hint);
    cardLayout->addStretch(1);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(m_staleBanner);
    layout->addWidget(m_summary);
    m_comparison->setTextFormat(Qt::RichText);
    m_comparison->setWordWrap(true);
    m_comparison->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_comparison->hide();
    layout->addWidget(m_comparison);
    layout->addWidget(m_message);
    layout->addWidget(card, 1);
    layout->addStretch(0); // takes the room of the hidden card when the estimate failed

    connect(m_classCombo, &QComboBox::activated, this, [this](int index) { showClass(index); });
    connect(m_rankSpin, &Int64SpinBox::valueChanged, this, [this](qint64 rank) {
        if (!m_syncing)
            showRank(rank);
    });
    connect(m_fitButton, &QPushButton::clicked, m_chart, &TimelineChart::fit);
    connect(m_exportButton, &QPushButton::clicked, this, &TimelineView::exportInteractively);
    connect(m_overlayButton, &QPushButton::clicked, this, &TimelineView::overlayInteractively);
    connect(m_clearOverlayButton, &QPushButton::clicked, this, &TimelineView::clearMeasuredTrace);
    connect(&m_overlayRun, &LatestRun::settled, this, &ResultView::settled);
    connect(m_chart, &TimelineChart::classClicked, this, &TimelineView::showClass);

    setEnabled(false);
}

TimelineView::~TimelineView() = default;

void TimelineView::setResult(std::shared_ptr<const SynthesisResult> result)
{
    m_result = std::move(result);
    m_syncing = true;
    m_classCombo->clear();
    if (m_result) {
        for (const ClassSummary& s : m_result->summaries)
            m_classCombo->addItem(
                tr("stage %1 \u00b7 %2").arg(s.stage).arg(countNoun(s.ranks, tr("rank"), tr("ranks"))));
        m_rankSpin->setRange(0, m_result->worldSize() - 1);
    }
    m_syncing = false;
    setEnabled(m_result != nullptr);
    if (!m_result)
        return;
    m_class = std::clamp(m_class, 0, static_cast<int>(m_result->classes.size()) - 1);
    showClass(m_class);
    requestTimeline();
}

void TimelineView::setStale(bool stale)
{
    m_staleBanner->setVisible(stale);
}

void TimelineView::showClass(int classIndex)
{
    if (!m_result || classIndex < 0 || static_cast<size_t>(classIndex) >= m_result->classes.size())
        return;
    m_class = classIndex;
    m_syncing = true;
    m_classCombo->setCurrentIndex(classIndex);
    const qint64 example = m_result->summaries[static_cast<size_t>(classIndex)].exampleRank.value;
    if (m_result->classOf(RankId { m_rankSpin->value() }) != classIndex)
        m_rankSpin->setValue(example);
    m_rankClassLabel->setText(tr("\u2192 stage %1").arg(m_result->classes[static_cast<size_t>(classIndex)].stage));
    m_syncing = false;
    m_chart->setCurrentClass(classIndex);
    updateSummary();
}

void TimelineView::showRank(qint64 rank)
{
    if (!m_result)
        return;
    rank = std::clamp<qint64>(rank, 0, m_result->worldSize() - 1);
    if (m_rankSpin->value() != rank) {
        m_syncing = true;
        m_rankSpin->setValue(rank);
        m_syncing = false;
    }
    const int cls = m_result->classOf(RankId { rank });
    if (cls != m_class)
        showClass(cls);
}

int TimelineView::currentClass() const
{
    return m_class;
}

qint64 TimelineView::currentRank() const
{
    return m_rankSpin->value();
}

std::shared_ptr<const TimelineData> TimelineView::timelineData() const
{
    return m_data;
}

bool TimelineView::isUpdating() const
{
    return m_run.isRunning();
}

bool TimelineView::isSettled() const
{
    return !m_run.isRunning() && !m_overlayRun.isRunning();
}

void TimelineView::loadMeasuredTrace(const QString& path)
{
    m_overlayPath = path;
    m_overlayError.clear();
    requestOverlay();
}

void TimelineView::clearMeasuredTrace()
{
    m_overlayRun.cancel();
    m_overlayPath.clear();
    m_overlayError.clear();
    m_overlay.reset();
    m_chart->setMeasured(nullptr);
    m_hint->setText(hintText(false));
    m_clearOverlayButton->hide();
    updateComparison();
}

std::shared_ptr<const MeasuredOverlay> TimelineView::measuredOverlay() const
{
    return m_overlay;
}

QString TimelineView::measuredTraceError() const
{
    return m_overlayError;
}

QLabel* TimelineView::comparisonLabel() const
{
    return m_comparison;
}

void TimelineView::overlayInteractively()
{
    const QString path = QFileDialog::getOpenFileName(this, tr("Overlay measured trace"), QString(),
        tr("PyTorch profiler traces (*.json *.json.gz *.pt.trace.json *.gz);;All files (*)"));
    if (!path.isEmpty())
        loadMeasuredTrace(path);
}

void TimelineView::requestOverlay()
{
    if (m_overlayPath.isEmpty() || !m_dataResult || !m_data || !m_data->ok)
        return; // applyTimeline() asks again once there is an estimate
    m_overlayButton->setEnabled(false);
    m_overlayButton->setText(tr("Reading trace\u2026"));
    const qint64 rank = -1; // the trace's own rank: its stage is the one compared
    m_overlayRun.start(
        [path = m_overlayPath, result = m_dataResult, data = m_data, rank] {
            QString error;
            std::shared_ptr<const MeasuredOverlay> overlay = buildMeasuredOverlay(path, *result, *data, rank, &error);
            return std::make_pair(overlay, error);
        },
        [this](const std::pair<std::shared_ptr<const MeasuredOverlay>, QString>& done) {
            m_overlayButton->setEnabled(true);
            m_overlayButton->setText(tr("Overlay measured trace\u2026"));
            m_overlay = done.first;
            m_overlayError = done.second;
            m_chart->setMeasured(m_overlay);
            m_clearOverlayButton->setVisible(m_overlay != nullptr);
            m_hint->setText(hintText(m_overlay != nullptr));
            if (m_overlay && m_overlay->comparison.stage != m_class)
                showClass(m_overlay->comparison.stage);
            updateComparison();
            Q_EMIT measuredTraceLoaded();
        },
        [this](auto&&...) {
            if (m_overlayRun.isRunning())
                return; // superseded: the newer run resets the button
            m_overlayButton->setEnabled(true);
            m_overlayButton->setText(tr("Overlay measured trace\u2026"));
        });
}

void TimelineView::updateComparison()
{
    if (!m_overlay) {
        m_comparison->setVisible(!m_overlayError.isEmpty());
        m_comparison->setText(m_overlayError.isEmpty()
                ? QString()
                : tr("<span style='color:#9b1c1c'>Measured trace not overlaid: %1</span>")
                      .arg(QString::fromStdString(quoteForMessage(m_overlayError.toStdString(), 300)).toHtmlEscaped()));
        return;
    }
    const TraceComparison& c = m_overlay->comparison;
    QStringList kinds;
    for (size_t i = 0; i < c.kinds.size() && i < 6; ++i) {
        const KindComparison& k = c.kinds[i];
        kinds << tr("%1 %2 vs %3")
                     .arg(QString::fromStdString(k.kind).toHtmlEscaped(), formatDuration(k.measuredS),
                         formatDuration(k.syntheticS));
    }
    m_comparison->setText(
        tr("<b>Measured</b> %1 (rank %2, %3): GPU span %4 vs ours %5 \u00b7 exposed communication "
           "%6 vs %7<br>GPU time per kind, measured vs ours, largest difference first: %8")
            .arg(m_overlay->fileName.toHtmlEscaped())
            .arg(c.rank)
            .arg(QString::fromStdString(quoteForMessage(c.iteration, 40)).toHtmlEscaped(),
                formatDuration(c.measuredStepS), formatDuration(c.syntheticStepS),
                formatDuration(c.measuredExposedCommunicationS), formatDuration(c.syntheticExposedCommunicationS),
                kinds.join(QStringLiteral(" \u00b7 "))));
    m_comparison->setVisible(true);
}

void TimelineView::requestTimeline()
{
    if (!m_result)
        return;
    // The worker gets a copy of the shared (immutable) result only.
    m_run.start([result = m_result] { return std::make_shared<const TimelineData>(buildTimelineData(*result)); },
        [this, result = m_result](
            std::shared_ptr<const TimelineData> data) { applyTimeline(result, std::move(data)); });
}

void TimelineView::applyTimeline(
    std::shared_ptr<const SynthesisResult> result, std::shared_ptr<const TimelineData> data)
{
    m_dataResult = std::move(result);
    m_data = std::move(data);
    const bool ok = m_data && m_data->ok;
    if (!ok) {
        m_message->setText(
            (m_result && isInference(m_result->config) ? tr("No timeline: the serving estimate failed.\n%1")
                                                       : tr("No timeline: the step-time estimate failed.\n%1"))
                .arg(m_data ? m_data->error : tr("no estimate")));
    }
    m_message->setVisible(!ok);
    m_card->setVisible(ok);
    m_chart->setTimeline(m_dataResult, m_data);
    m_chart->setCurrentClass(m_class);
    m_legend->setText(legendHtml(m_data.get()));
    m_legend->setVisible(ok);
    m_hint->setVisible(ok);
    m_exportButton->setEnabled(ok && !m_exporting);
    m_fitButton->setEnabled(ok);
    updateSummary();
    if (!m_overlayPath.isEmpty())
        requestOverlay(); // the measured trace against the new estimate
    Q_EMIT timelineAvailable();
}

void TimelineView::updateSummary()
{
    if (m_result && m_data && m_data->ok && m_data->serving) {
        // Serving: what the lanes show is the programs' prefill and their first decode steps.
        const ServingEstimate& e = *m_data->serving;
        const InferenceConfig& in = m_dataResult->config.inference;
        const qint64 steps = decodeSteps(in);
        QStringList parts;
        if (runsPrefill(in))
            parts << tr("prefill of %1 prompts: time to first token %2")
                         .arg(formatExact(e.batch), formatDuration(e.ttftS));
        if (runsDecode(in))
            parts << tr("%1 (one token per sequence each): time per output token %2 (first %3, last %4 of %5)")
                         .arg(countNoun(steps, tr("decode step"), tr("decode steps")), formatDuration(e.tpotS),
                             formatDuration(e.tpotFirstS), formatDuration(e.tpotLastS),
                             formatExact(std::max<qint64>(0, in.outputTokens - 1)));
        m_summary->setText(tr("<b>Serving</b> on %1: the lanes end at %2 · %3 &nbsp;&mdash;&nbsp; <b>plan</b>: "
                              "the whole generation %4, %5 tokens/s per GPU")
                               .arg(QString::fromStdString(e.gpu).toHtmlEscaped(), formatDuration(m_data->totalS),
                                   parts.join(QStringLiteral(" · ")), formatDuration(e.generationTimeS),
                                   QString::number(e.tokensPerSPerGpu, 'f', 0)));
        m_summary->setVisible(true);
        return;
    }
    if (!m_result || !m_data || !m_data->ok || static_cast<size_t>(m_class) >= m_data->estimate.classes.size()) {
        m_summary->clear();
        m_summary->setVisible(false);
        return;
    }
    const StepEstimate& e = m_data->estimate;
    const ClassEstimate& c = e.classes[static_cast<size_t>(m_class)];
    const QString ranks = static_cast<size_t>(m_class) < m_data->classRanks.size()
        ? m_data->classRanks[static_cast<size_t>(m_class)]
        : QString();
    const double busy = c.stepTimeS > 0 ? c.computeTimeS / c.stepTimeS : 0;
    m_summary->setText(
        tr("<b>Stage %1</b> (%2): step %3 \u00b7 compute busy %4 (%5) \u00b7 exposed communication %6 \u00b7 "
           "bubble %7 &nbsp;&mdash;&nbsp; <b>plan</b>: iteration %8, MFU %9 on %10")
            .arg(c.stage)
            .arg(ranks, formatDuration(c.stepTimeS), formatDuration(c.computeTimeS), percent(busy),
                formatDuration(c.exposedCommunicationS), percent(c.bubbleFraction), formatDuration(e.iterationTimeS),
                percent(e.mfu))
            .arg(QString::fromStdString(e.gpu).toHtmlEscaped())
        + (m_data->keptMicroBatches > 0 ? QStringLiteral("<br>")
                    + tr("The lanes: %1; the figures above are the whole iteration's.")
                          .arg(keptMicroBatchesText(m_data->keptMicroBatches, m_data->microBatches))
                                        : QString()));
    m_summary->setVisible(true);
}

bool TimelineView::exportChromeTrace(const QString& path, QString* error) const
{
    if (!m_dataResult || !m_data || !m_data->ok) {
        if (error)
            *error = m_data && !m_data->error.isEmpty() ? m_data->error : tr("no step-time estimate to export");
        return false;
    }
    const QString message = writeTrace(*m_dataResult, *m_data, path);
    if (error)
        *error = message;
    return message.isEmpty();
}

void TimelineView::exportInteractively()
{
    if (!m_dataResult || !m_data || !m_data->ok)
        return;
    const QString suggested = QStringLiteral("%1-timeline.json").arg(QString::fromStdString(m_dataResult->config.name));
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export Chrome trace"), suggested, tr("Chrome trace JSON (*.json);;All files (*)"));
    if (path.isEmpty())
        return;
    // A plan of 100k nodes per stage makes a trace of tens of MB: written in the worker, the tab stays responsive.
    m_exporting = true;
    m_exportButton->setEnabled(false);
    m_exportButton->setText(tr("Exporting\u2026"));
    auto done = [this, path](const std::optional<QString>& written) {
        m_exporting = false;
        m_exportButton->setText(tr("Export Chrome trace\u2026"));
        m_exportButton->setEnabled(m_data && m_data->ok);
        const QString error = written ? *written : tr("cancelled");
        if (!error.isEmpty())
            QMessageBox::warning(this, tr("Export failed"), tr("Could not write %1: %2").arg(path, error));
    };
    m_exportRun.start([result = m_dataResult, data = m_data, path] { return writeTrace(*result, *data, path); },
        [done](const QString& error) { done(error); }, done);
}

TimelineChart* TimelineView::chart() const
{
    return m_chart;
}

QLabel* TimelineView::summaryLabel() const
{
    return m_summary;
}

QLabel* TimelineView::messageLabel() const
{
    return m_message;
}

} // namespace stagecraft
