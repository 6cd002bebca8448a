// SPDX-License-Identifier: MIT
#include "charts/servingview.h"

#include "charts/chartparts.h"
#include "estimate/stepestimate.h"
#include "synthesis/synthesis.h"

#include <QChart>
#include <QChartView>
#include <QDoubleSpinBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLegend>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QPainter>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <atomic>
#include <cmath>

namespace stagecraft {

namespace {

    /// Progress of a core run, for the GUI: the fraction in an atomic the GUI polls, and the cancel flag.
    class AtomicProgress final : public ProgressSink
    {
    public:
        void report(double fraction, const char*) override
        {
            m_fraction.store(fraction);
        }
        bool cancelled() const override
        {
            return m_cancel.load();
        }
        std::atomic<double> m_fraction { 0 };
        std::atomic<bool> m_cancel { false };
    };

    QString ms(double seconds)
    {
        return seconds >= 1 ? QString::number(seconds, 'f', 2) + QStringLiteral(" s")
                            : QString::number(seconds * 1e3, 'f', seconds >= 0.01 ? 0 : 1) + QStringLiteral(" ms");
    }

    QLineSeries* series(const QString& name, const QColor& color)
    {
        auto* s = new QLineSeries;
        s->setName(name);
        QPen pen(color);
        pen.setWidthF(1.6);
        s->setPen(pen);
        return s;
    }

    QValueAxis* axis(const QString& title, double lo, double hi)
    {
        auto* a = new QValueAxis;
        a->setTitleText(title);
        const double interval = niceTickInterval(hi - lo, 5);
        setAxisTicks(a, lo, hi, interval, tickLabelFormat(interval));
        return a;
    }

    QChart* emptyChart(const QString& title)
    {
        auto* c = new QChart;
        c->setTitle(title);
        c->legend()->setAlignment(Qt::AlignBottom);
        c->setMargins(QMargins(4, 4, 4, 4));
        c->setBackgroundRoundness(0);
        return c;
    }

    void clearChart(QChart* c)
    {
        c->removeAllSeries();
        for (QAbstractAxis* a : c->axes())
            c->removeAxis(a), delete a;
    }

    /// The cumulative distribution of `values` (seconds) in ms, at most 400 points.
    QList<QPointF> cdf(std::vector<float> values)
    {
        QList<QPointF> out;
        if (values.empty())
            return out;
        std::sort(values.begin(), values.end());
        const size_t n = values.size();
        const size_t step = std::max<size_t>(1, n / 400);
        for (size_t i = 0; i < n; i += step)
            out.append(QPointF(double(values[i]) * 1e3, double(i + 1) / double(n)));
        out.append(QPointF(double(values.back()) * 1e3, 1.0));
        return out;
    }

} // namespace

ServingView::ServingView(QWidget* parent)
    : ResultView(parent)
    , m_rate(new QDoubleSpinBox(this))
    , m_requests(new QSpinBox(this))
    , m_ttftMs(new QDoubleSpinBox(this))
    , m_tpotMs(new QDoubleSpinBox(this))
    , m_simulateButton(new QPushButton(tr("Simulate"), this))
    , m_sizeButton(new QPushButton(tr("Size for rate"), this))
    , m_cancelButton(new QPushButton(tr("Cancel"), this))
    , m_progress(new QProgressBar(this))
    , m_summary(new QLabel(this))
    , m_overTime(emptyChart(tr("Requests over time")))
    , m_kvChart(emptyChart(tr("KV cache over time")))
    , m_latencyChart(emptyChart(tr("Latency distribution")))
    , m_overTimeView(new QChartView(m_overTime, this))
    , m_kvView(new QChartView(m_kvChart, this))
    , m_latencyView(new QChartView(m_latencyChart, this))
    , m_sweepTable(new QTableWidget(this))
    , m_sweepLabel(new QLabel(this))
{
    connect(&m_run, &LatestRun::settled, this, [this] {
        if (!m_sweepRun.isRunning())
            Q_EMIT settled();
    });
    connect(&m_sweepRun, &LatestRun::settled, this, [this] {
        if (!m_run.isRunning())
            Q_EMIT settled();
    });
    // Two rows, so that the tab's minimum width leaves the configuration dock its room at 1366 x 768: the load
    // and Simulate/Cancel, then the SLO bounds and the sizing that reads them.
    auto* controls = new QGridLayout;

    auto label = [this](const QString& text, QWidget* buddy, const QString& tip) {
        auto* l = new QLabel(text, this);
        l->setBuddy(buddy);
        l->setToolTip(tip);
        buddy->setToolTip(tip);
        return l;
    };
    m_rate->setRange(0.01, 1e6);
    m_rate->setDecimals(2);
    m_rate->setValue(4);
    m_rate->setObjectName(QStringLiteral("servingRate"));
    controls->addWidget(
        label(tr("&Rate (req/s):"), m_rate,
            tr("Requests per second over all replicas: Poisson arrivals at this rate, or the config's gamma process "
               "(its arrival_cv) at this rate; a trace keeps its own arrival times")),
        0, 0);
    controls->addWidget(m_rate, 0, 1);
    m_requests->setRange(10, 1000000);
    m_requests->setValue(1000);
    m_requests->setSingleStep(500);
    controls->addWidget(label(tr("Re&quests:"), m_requests, tr("Requests simulated (inference.requests)")), 0, 2);
    controls->addWidget(m_requests, 0, 3);
    m_ttftMs->setRange(0, 1e6);
    m_ttftMs->setDecimals(0);
    m_ttftMs->setSpecialValueText(tr("none"));
    m_ttftMs->setValue(2000);
    controls->addWidget(
        label(tr("TTFT SLO (ms):"), m_ttftMs,
            tr("Goodput counts requests whose time to first token is at most this (inference.slo_ttft_ms)")),
        1, 0);
    controls->addWidget(m_ttftMs, 1, 1);
    m_tpotMs->setRange(0, 1e6);
    m_tpotMs->setDecimals(0);
    m_tpotMs->setSpecialValueText(tr("none"));
    m_tpotMs->setValue(50);
    controls->addWidget(
        label(tr("TPOT SLO (ms):"), m_tpotMs,
            tr("... and whose time per output token is at most this (inference.slo_tpot_ms); 50 ms is 20 tokens/s")),
        1, 2);
    controls->addWidget(m_tpotMs, 1, 3);
    m_simulateButton->setToolTip(tr("Simulate the requests on the config's replicas (continuous batching, paged KV "
                                    "cache with preemption)"));
    m_sizeButton->setToolTip(tr("Rank replica plans (colocated and prefill/decode disaggregated, up to the config's "
                                "GPUs per node each) by the GPUs they need for this rate within both SLOs"));
    m_cancelButton->setEnabled(false);
    controls->addWidget(m_simulateButton, 0, 4);
    controls->addWidget(m_cancelButton, 0, 5);
    controls->addWidget(m_sizeButton, 1, 4, 1, 2);
    m_progress->setRange(0, 1000);
    m_progress->setMaximumWidth(160);
    m_progress->hide();
    controls->addWidget(m_progress, 0, 6);
    controls->setColumnStretch(7, 1);

    m_summary->setTextFormat(Qt::RichText);
    // Four lines broken by hand: a wrapped label's height is not known to the layout until it is shown.
    m_summary->setWordWrap(false);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_summary->setObjectName(QStringLiteral("servingSummary"));
    for (QChartView* v : { m_overTimeView, m_kvView, m_latencyView }) {
        v->setRenderHint(QPainter::Antialiasing);
        v->setMinimumSize(240, 180);
    }
    m_sweepTable->setColumnCount(5);
    m_sweepTable->setHorizontalHeaderLabels(
        { tr("Rank"), tr("Plan"), tr("GPUs"), tr("req/s per replica"), tr("req/s per prefill replica") });
    m_sweepTable->verticalHeader()->hide();
    m_sweepTable->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_sweepTable->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_sweepTable->horizontalHeader()->setStretchLastSection(true);
    m_sweepLabel->setWordWrap(true); // beside a chart at 1366 x 768 it takes two lines
    auto* sweepBox = new QWidget(this);
    auto* sweepLayout = new QVBoxLayout(sweepBox);
    sweepLayout->setContentsMargins(0, 0, 0, 0);
    sweepLayout->addWidget(m_sweepLabel);
    sweepLayout->addWidget(m_sweepTable, 1);

    auto* grid = new QGridLayout;
    grid->addWidget(m_overTimeView, 0, 0);
    grid->addWidget(m_kvView, 0, 1);
    grid->addWidget(m_latencyView, 1, 0);
    grid->addWidget(sweepBox, 1, 1);
    grid->setRowStretch(0, 1);
    grid->setRowStretch(1, 1);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(m_summary);
    layout->addLayout(grid, 1);

    connect(m_simulateButton, &QPushButton::clicked, this, &ServingView::simulate);
    connect(m_sizeButton, &QPushButton::clicked, this, &ServingView::sizeForRate);
    connect(m_cancelButton, &QPushButton::clicked, this, [this] {
        m_run.cancel();
        m_sweepRun.cancel();
        m_progress->hide();
        m_cancelButton->setEnabled(false);
        m_summary->setText(tr("Cancelled."));
    });
    m_summary->setText(tr("Synthesize a serving config (Workload: Inference) to simulate its requests over time."));
    m_sweepLabel->setText(tr("<i>Size for rate</i> ranks replica plans by the GPUs they need for the rate within both "
                             "SLOs."));
}

ServingView::~ServingView() = default;

bool ServingView::isSettled() const
{
    return !m_run.isRunning() && !m_sweepRun.isRunning();
}

std::shared_ptr<const ServingSimulation> ServingView::simulation() const
{
    return m_simulation;
}

void ServingView::setResult(std::shared_ptr<const SynthesisResult> result)
{
    m_result = std::move(result);
    const bool serving = m_result && isInference(m_result->config);
    m_simulateButton->setEnabled(serving);
    m_sizeButton->setEnabled(serving);
    if (!serving) {
        m_summary->setText(tr("The Serving tab simulates requests over time for a serving config: set the "
                              "Workload to Inference."));
        return;
    }
    const InferenceConfig& in = m_result->config.inference;
    // A trace brings its own arrival times: the rate is not a control then.
    m_rate->setEnabled(in.arrival != RequestArrival::Trace);
    if (in.arrival == RequestArrival::Poisson || in.arrival == RequestArrival::Gamma)
        m_rate->setValue(in.requestRate);
    if (in.arrival != RequestArrival::Batch)
        m_requests->setValue(static_cast<int>(std::clamp<int64_t>(in.requests, 10, 1000000)));
    if (in.sloTtftMs > 0)
        m_ttftMs->setValue(in.sloTtftMs);
    if (in.sloTpotMs > 0)
        m_tpotMs->setValue(in.sloTpotMs);
    simulate();
}

void ServingView::setRequestRate(double rate, bool run)
{
    m_rate->setValue(rate);
    if (run)
        simulate();
}

Config ServingView::configForControls() const
{
    Config c = m_result->config;
    InferenceConfig& in = c.inference;
    if (in.arrival == RequestArrival::Batch)
        in.arrival = RequestArrival::Poisson;
    in.requestRate = m_rate->value();
    in.requests = m_requests->value();
    in.sloTtftMs = m_ttftMs->value();
    in.sloTpotMs = m_tpotMs->value();
    return c;
}

void ServingView::simulate()
{
    if (!m_result || !isInference(m_result->config))
        return;
    Config config = configForControls();
    std::string gpuError;
    const std::optional<GpuSpec> gpu = gpuForConfig(config, gpuError);
    if (!gpu) {
        m_summary->setText(QString::fromStdString(gpuError).toHtmlEscaped());
        return;
    }
    auto progress = std::make_shared<AtomicProgress>();
    m_progress->setValue(0);
    m_progress->show();
    m_cancelButton->setEnabled(true);
    m_summary->setText(
        tr("Simulating %1 requests at %2 req/s\u2026").arg(config.inference.requests).arg(m_rate->value()));
    auto* timer = new QTimer(this);
    connect(
        timer, &QTimer::timeout, this, [this, progress] { m_progress->setValue(int(progress->m_fraction * 1000)); });
    timer->start(100);
    connect(m_cancelButton, &QPushButton::clicked, timer, [progress] { progress->m_cancel = true; });
    struct Outcome
    {
        std::shared_ptr<const ServingSimulation> simulation;
        QString error;
    };
    m_run.start(
        [config, gpu = *gpu, progress]() {
            auto s = std::make_shared<ServingSimulation>();
            std::string error;
            Outcome o;
            if (simulateServing(config, gpu, EstimateOptions {}, *s, error, progress.get()))
                o.simulation = std::move(s);
            else
                o.error = QString::fromStdString(error);
            return o;
        },
        [this, timer](Outcome o) {
            timer->deleteLater();
            m_progress->hide();
            m_cancelButton->setEnabled(m_sweepRun.isRunning());
            showSimulation(std::move(o.simulation), o.error);
        },
        [timer](auto) { timer->deleteLater(); });
}

void ServingView::showSimulation(std::shared_ptr<const ServingSimulation> s, const QString& error)
{
    if (!s) {
        m_summary->setText(tr("No simulation: %1").arg(error.toHtmlEscaped()));
        return;
    }
    m_simulation = s;
    const bool overloaded = s->meanWaiting > s->meanRunning || s->maxWaiting > 4 * std::max(1.0, s->meanRunning);
    m_summary->setText(
        tr("<b>%1 requests</b> at %2 req/s offered on %3 GPUs (%4 replica(s)%5): <b>%6 req/s</b> served, %7 output "
           "tokens/s (%8 per GPU)<br>"
           "TTFT p50 %10, p90 %11, <b>p99 %12</b> &nbsp; TPOT p50 %13, p90 %14, <b>p99 %15</b> &nbsp; E2E p50 %16, "
           "p99 %17<br>"
           "Goodput %18 req/s (%19% within the SLOs) &nbsp; preemptions %22 &nbsp; queue: mean %23, max %24%9<br>"
           "KV cache: %20 blocks per replica, peak %21%")
            .arg(s->requests)
            .arg(s->offeredRequestsPerS, 0, 'g', 4)
            .arg(s->gpus)
            .arg(s->replicas)
            .arg(s->prefillReplicas > 0 ? tr(" + %1 prefill").arg(s->prefillReplicas) : QString())
            .arg(s->requestsPerS, 0, 'g', 4)
            .arg(s->outputTokensPerS, 0, 'f', 0)
            .arg(s->outputTokensPerSPerGpu, 0, 'f', 0)
            .arg(overloaded ? tr(" \u2014 <span style='color:#b02a37'><b>overloaded</b>: the queue grows</span>")
                            : QString())
            .arg(ms(s->ttft.p50), ms(s->ttft.p90), ms(s->ttft.p99), ms(s->tpot.p50), ms(s->tpot.p90), ms(s->tpot.p99),
                ms(s->e2e.p50), ms(s->e2e.p99))
            .arg(s->goodputRequestsPerS, 0, 'g', 4)
            .arg(100 * s->goodputFraction, 0, 'f', 1)
            .arg(s->kvBlocksPerReplica)
            .arg(100 * s->peakKvOccupancy, 0, 'f', 1)
            .arg(s->preemptions)
            .arg(s->meanWaiting, 0, 'f', 1)
            .arg(s->maxWaiting, 0, 'f', 0));

    // Requests over time.
    clearChart(m_overTime);
    auto* running = series(tr("running"), QColor(0x1f, 0x77, 0xb4));
    auto* waiting = series(tr("waiting (queue)"), QColor(0xd6, 0x27, 0x28));
    double top = 1, end = 0;
    QList<QPointF> r, w, kv, pre;
    double maxPre = 1;
    for (const ServingSeriesPoint& p : s->series) {
        r.append(QPointF(p.timeS, p.running));
        w.append(QPointF(p.timeS, p.waiting));
        kv.append(QPointF(p.timeS, 100 * p.kvOccupancy));
        pre.append(QPointF(p.timeS, p.preemptions));
        top = std::max({ top, p.running, p.waiting });
        maxPre = std::max(maxPre, p.preemptions);
        end = p.timeS;
    }
    running->replace(r);
    waiting->replace(w);
    m_overTime->addSeries(running);
    m_overTime->addSeries(waiting);
    QValueAxis* x = axis(tr("time (s)"), 0, std::max(end, 1e-3));
    QValueAxis* y = axis(tr("requests"), 0, top * 1.05);
    m_overTime->addAxis(x, Qt::AlignBottom);
    m_overTime->addAxis(y, Qt::AlignLeft);
    for (QAbstractSeries* a : m_overTime->series())
        a->attachAxis(x), a->attachAxis(y);

    // KV occupancy and preemptions.
    clearChart(m_kvChart);
    auto* occupancy = series(tr("KV blocks in use (%)"), QColor(0x2c, 0xa0, 0x2c));
    auto* preempted = series(tr("preemptions (cumulative)"), QColor(0x94, 0x67, 0xbd));
    occupancy->replace(kv);
    preempted->replace(pre);
    m_kvChart->addSeries(occupancy);
    m_kvChart->addSeries(preempted);
    QValueAxis* kx = axis(tr("time (s)"), 0, std::max(end, 1e-3));
    QValueAxis* ky = axis(tr("occupancy (%)"), 0, 100);
    auto* py = new QValueAxis;
    py->setTitleText(tr("preemptions"));
    const double preInterval = std::max(1.0, niceTickInterval(maxPre, 5));
    setAxisTicks(py, 0, std::ceil(maxPre / preInterval) * preInterval, preInterval, QStringLiteral("%.0f"));
    m_kvChart->addAxis(kx, Qt::AlignBottom);
    m_kvChart->addAxis(ky, Qt::AlignLeft);
    m_kvChart->addAxis(py, Qt::AlignRight);
    occupancy->attachAxis(kx);
    occupancy->attachAxis(ky);
    preempted->attachAxis(kx);
    preempted->attachAxis(py);

    // Latency distribution (CDF), ms, on a logarithmic axis: TPOTs of milliseconds beside latencies of minutes.
    clearChart(m_latencyChart);
    double right = 1, left = 1e9;
    const std::pair<const std::vector<float>*, std::pair<QString, QColor>> kinds[] = {
        { &s->ttftSamples, { tr("TTFT"), QColor(0xff, 0x7f, 0x0e) } },
        { &s->tpotSamples, { tr("TPOT"), QColor(0x17, 0xbe, 0xcf) } },
        { &s->e2eSamples, { tr("end to end"), QColor(0x7f, 0x7f, 0x7f) } },
    };
    for (const auto& [values, style] : kinds) {
        auto* c = series(style.first, style.second);
        QList<QPointF> points = cdf(*values);
        points.removeIf([](const QPointF& p) { return !(p.x() > 0); });
        if (!points.isEmpty()) {
            right = std::max(right, points.back().x());
            left = std::min(left, points.front().x());
        }
        c->replace(points);
        m_latencyChart->addSeries(c);
    }
    auto* lx = new QLogValueAxis;
    lx->setTitleText(tr("latency (ms, log scale)"));
    lx->setBase(10);
    const double low = std::pow(10.0, std::floor(std::log10(std::min(left, right))));
    // Whole milliseconds in plain digits (10000, 100000, 1000000: %g wrote 1e+06 beside 100000); below 1 ms %g.
    lx->setLabelFormat(low >= 1 ? QStringLiteral("%.0f") : QStringLiteral("%g"));
    lx->setRange(low, std::pow(10.0, std::ceil(std::log10(right))));
    QValueAxis* ly = axis(tr("fraction of requests"), 0, 1);
    m_latencyChart->addAxis(lx, Qt::AlignBottom);
    m_latencyChart->addAxis(ly, Qt::AlignLeft);
    for (QAbstractSeries* a : m_latencyChart->series())
        a->attachAxis(lx), a->attachAxis(ly);
}

void ServingView::sizeForRate()
{
    if (!m_result || !isInference(m_result->config))
        return;
    const Config config = configForControls();
    std::string gpuError;
    const std::optional<GpuSpec> gpu = gpuForConfig(config, gpuError);
    if (!gpu)
        return;
    SloSweepOptions o;
    o.requestRate = m_rate->value();
    o.sloTtftS = m_ttftMs->value() / 1e3;
    o.sloTpotS = m_tpotMs->value() / 1e3;
    o.maxGpusPerReplica = config.cluster.gpusPerNode;
    o.requests = std::min<int64_t>(m_requests->value(), 600);
    auto progress = std::make_shared<AtomicProgress>();
    m_progress->setValue(0);
    m_progress->show();
    m_cancelButton->setEnabled(true);
    m_sweepLabel->setText(tr("Sizing for %1 req/s\u2026").arg(o.requestRate));
    auto* timer = new QTimer(this);
    connect(
        timer, &QTimer::timeout, this, [this, progress] { m_progress->setValue(int(progress->m_fraction * 1000)); });
    timer->start(100);
    connect(m_cancelButton, &QPushButton::clicked, timer, [progress] { progress->m_cancel = true; });
    m_sweepRun.start(
        [config, gpu = *gpu, o, progress]() { return sloSweep(config, gpu, EstimateOptions {}, o, progress.get()); },
        [this, timer](SloSweepResult r) {
            timer->deleteLater();
            m_progress->hide();
            m_cancelButton->setEnabled(m_run.isRunning());
            showSweep(r);
        },
        [timer](auto) { timer->deleteLater(); });
}

void ServingView::showSweep(const SloSweepResult& r)
{
    if (!r.error.empty()) {
        m_sweepLabel->setText(tr("No sizing: %1").arg(QString::fromStdString(r.error)));
        return;
    }
    m_sweepLabel->setText(tr("<b>%1 req/s</b>, TTFT \u2264 %2 ms, TPOT \u2264 %3 ms for %4% of requests: plans by "
                             "GPUs needed (%5 rejected)")
                              .arg(r.options.requestRate)
                              .arg(r.options.sloTtftS * 1e3)
                              .arg(r.options.sloTpotS * 1e3)
                              .arg(100 * r.options.attainment)
                              .arg(r.rejected.size()));
    m_sweepTable->setRowCount(int(r.ranked.size()));
    for (int i = 0; i < int(r.ranked.size()); ++i) {
        const SloPlan& p = r.ranked[size_t(i)];
        const QString plan = p.disaggregated ? tr("%1\u00d7 prefill tp%2 pp%3 + %4\u00d7 decode tp%5 pp%6")
                                                   .arg(p.prefillReplicas)
                                                   .arg(p.prefillTp)
                                                   .arg(p.prefillPp)
                                                   .arg(p.replicas)
                                                   .arg(p.tp)
                                                   .arg(p.pp)
                                             : tr("%1\u00d7 tp%2 pp%3").arg(p.replicas).arg(p.tp).arg(p.pp);
        const QStringList cells { QString::number(i + 1), plan, QString::number(p.gpus),
            QString::number(p.ratePerReplica, 'g', 4),
            p.disaggregated ? QString::number(p.ratePerPrefillReplica, 'g', 4) : QStringLiteral("\u2014") };
        for (int c = 0; c < cells.size(); ++c) {
            auto* item = new QTableWidgetItem(cells[c]);
            if (c != 1)
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            m_sweepTable->setItem(i, c, item);
        }
    }
}

} // namespace stagecraft
