// SPDX-License-Identifier: MIT
#include "widgets/simulatedialog.h"

#include "estimate/stepestimate.h"
#include "models/formatting.h"
#include "models/simulationmodel.h"
#include "session/promiseprogress.h"
#include "simulate/astrasimconfig.h"
#include "simulate/simulationcomparison.h"

#include <QDesktopServices>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileInfo>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPromise>
#include <QPushButton>
#include <QTableView>
#include <QUrl>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>

namespace stagecraft {

namespace {

    const QString kFailColor = QStringLiteral("color: #b3261e;");
    const QString kPassColor = QStringLiteral("color: #1b6e20;");

    QString native(const std::filesystem::path& p)
    {
        return QDir::toNativeSeparators(QString::fromStdString(p.string()));
    }

} // namespace

SimulateDialog::SimulateDialog(Request request, QWidget* parent)
    : QDialog(parent)
    , m_request(std::move(request))
    , m_info(new QLabel(this))
    , m_progress(new QProgressBar(this))
    , m_elapsed(new QLabel(this))
    , m_status(new QLabel(this))
    , m_details(new QLabel(this))
    , m_table(new QTableView(this))
    , m_model(new SimulationModel(this))
    , m_summary(new QLabel(this))
{
    setObjectName(QStringLiteral("simulateDialog"));
    setWindowTitle(tr("Simulate with ASTRA-sim"));
    m_pool.setMaxThreadCount(1);
    const qint64 world = m_request.result ? m_request.result->worldSize() : 0;

    m_info->setObjectName(QStringLiteral("simulateInfo"));
    m_info->setWordWrap(true);
    m_info->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_info->setText(tr("Trace set %1 (%2) in %3, simulated by %4 with configs generated from the exported "
                       "config: roofline compute at the GPU's peak times the compute efficiency, one network "
                       "dimension per level (inside a node, across nodes) at the cluster's bandwidths.")
                        .arg(m_request.name, countNoun(world, tr("rank"), tr("ranks")),
                            QDir::toNativeSeparators(m_request.directory), m_request.binary));
    m_progress->setObjectName(QStringLiteral("simulateProgress"));
    m_progress->setRange(0, static_cast<int>(std::max<qint64>(1, world)));
    m_progress->setFormat(tr("%v of %m ranks finished"));
    m_elapsed->setObjectName(QStringLiteral("simulateElapsed"));
    m_status->setObjectName(QStringLiteral("simulateStatus"));
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    QFont bold = m_status->font();
    bold.setBold(true);
    m_status->setFont(bold);
    m_details->setObjectName(QStringLiteral("simulateDetails"));
    m_details->setWordWrap(true);
    m_details->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_details->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_details->setVisible(false);

    m_table->setObjectName(QStringLiteral("simulateTable"));
    m_table->setModel(m_model);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setAlternatingRowColors(true);
    m_table->verticalHeader()->setVisible(false);
    // Nine short columns share the width; the two-line headers keep them narrow enough for that.
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    m_summary->setObjectName(QStringLiteral("simulateSummary"));
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto* buttons = new QDialogButtonBox(this);
    m_cancelButton = buttons->addButton(tr("Cancel Simulation"), QDialogButtonBox::ActionRole);
    m_cancelButton->setObjectName(QStringLiteral("simulateCancelButton"));
    m_runAgainButton = buttons->addButton(tr("Run Again"), QDialogButtonBox::ActionRole);
    m_runAgainButton->setObjectName(QStringLiteral("simulateRunAgainButton"));
    m_openFolderButton = buttons->addButton(tr("Open Run Folder"), QDialogButtonBox::ActionRole);
    m_closeButton = buttons->addButton(QDialogButtonBox::Close);
    disconnect(buttons, nullptr, this, nullptr);
    connect(m_cancelButton, &QPushButton::clicked, this, &SimulateDialog::cancel);
    connect(m_runAgainButton, &QPushButton::clicked, this, &SimulateDialog::start);
    connect(m_closeButton, &QPushButton::clicked, this, &SimulateDialog::reject);
    connect(m_openFolderButton, &QPushButton::clicked, this, [this] {
        if (m_lastResult && !m_lastResult->files.runDirectory.empty())
            QDesktopServices::openUrl(
                QUrl::fromLocalFile(QString::fromStdString(m_lastResult->files.runDirectory.string())));
    });

    auto* progressRow = new QHBoxLayout;
    progressRow->addWidget(m_progress, 1);
    progressRow->addWidget(m_elapsed);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_info);
    layout->addLayout(progressRow);
    layout->addWidget(m_status);
    layout->addWidget(m_details);
    layout->addWidget(m_table, 1);
    layout->addWidget(m_summary);
    layout->addWidget(buttons);

    m_clock.setInterval(250);
    connect(&m_clock, &QTimer::timeout, this, &SimulateDialog::updateElapsed);
    connect(&m_watcher, &QFutureWatcher<void>::progressValueChanged, m_progress, &QProgressBar::setValue);
    connect(&m_watcher, &QFutureWatcher<void>::finished, this, &SimulateDialog::onFinished);
    setRunning(false);
    resize(900, 440);
}

SimulateDialog::~SimulateDialog()
{
    if (m_watcher.isRunning()) {
        m_watcher.disconnect(this);
        m_watcher.cancel();
        m_watcher.waitForFinished();
    }
}

void SimulateDialog::start()
{
    if (isRunning() || !m_request.result)
        return;
    m_lastResult.reset();
    m_model->setComparison(nullptr);
    m_status->setStyleSheet({});
    m_status->setText(tr("Simulating..."));
    m_details->clear();
    m_details->setVisible(false);
    m_summary->clear();
    m_progress->setValue(0);
    m_outcome = std::make_shared<Outcome>();
    m_started.start();
    setRunning(true);
    updateElapsed();
    const Request r = m_request;
    m_watcher.setFuture(QtConcurrent::run(&m_pool,
        [result = r.result, directory = r.directory.toStdString(), name = r.name.toStdString(),
            binary = r.binary.toStdString(), track = r.trackLocalMem, timeoutS = r.timeoutS,
            outcome = m_outcome](QPromise<void>& promise) {
            const int world = static_cast<int>(std::max<int64_t>(1, result->worldSize()));
            promise.setProgressRange(0, world);
            try {
                std::string error;
                const std::optional<GpuSpec> gpu = gpuForConfig(result->config, error);
                auto estimate = std::make_shared<StepEstimate>();
                if (!gpu || !estimateStep(*result, *gpu, EstimateOptions {}, *estimate, error)) {
                    outcome->error = QString::fromStdString("no step-time estimate: " + error);
                    return;
                }
                const std::optional<AstraSimSetup> setup =
                    astraSimSetup(result->config, *gpu, EstimateOptions {}, track, error);
                if (!setup) {
                    outcome->error = QString::fromStdString(error);
                    return;
                }
                const std::optional<TraceSet> traces = findTraceSet(directory, name, error);
                if (!traces) {
                    outcome->error = QString::fromStdString(error);
                    return;
                }
                PromiseProgress progress(promise, world);
                AstraSimRunOptions options;
                options.binary = binary;
                options.timeoutS = timeoutS;
                outcome->simulation = runAstraSim(*traces, *setup, options, &progress);
                outcome->estimate = estimate;
                outcome->comparison = std::make_shared<const SimulationComparison>(
                    compareWithEstimate(*result, *estimate, *outcome->simulation));
            } catch (const std::exception& e) {
                outcome->error = QStringLiteral("internal error: ") + QString::fromStdString(e.what());
            } catch (...) {
                outcome->error = QStringLiteral("internal error");
            }
        }));
}

void SimulateDialog::cancel()
{
    if (!isRunning())
        return;
    m_status->setText(tr("Stopping the simulator..."));
    m_watcher.cancel();
}

bool SimulateDialog::isRunning() const
{
    // The dialog's state until onFinished() has shown the outcome (the worker may end before its signal arrives).
    return m_running;
}

std::optional<AstraSimResult> SimulateDialog::lastResult() const
{
    return m_lastResult;
}

QString SimulateDialog::statusText() const
{
    return m_status->text();
}

SimulationModel* SimulateDialog::model() const
{
    return m_model;
}

void SimulateDialog::updateElapsed()
{
    if (m_started.isValid())
        m_elapsed->setText(formatDuration(static_cast<double>(m_started.elapsed()) / 1000.0));
}

void SimulateDialog::onFinished()
{
    const Outcome outcome = m_outcome ? *m_outcome : Outcome {};
    updateElapsed();
    m_started.invalidate();
    if (outcome.simulation)
        m_lastResult = *outcome.simulation;
    setRunning(false);
    if (!outcome.simulation) {
        m_status->setStyleSheet(kFailColor);
        m_status->setText(tr("Not simulated: %1")
                              .arg(outcome.error.isEmpty() ? tr("the run stopped without a result") : outcome.error));
        Q_EMIT simulationFinished(false);
        return;
    }
    const AstraSimResult& sim = *outcome.simulation;
    const QString reason = QString::fromStdString(sim.reason);
    const QString wall = formatDuration(sim.wallS);
    switch (sim.status) {
    case AstraSimStatus::Passed:
        m_status->setStyleSheet(kPassColor);
        m_status->setText(tr("PASS: %1 of %2 ranks finished in ASTRA-sim (exit code 0, no error line), wall time %3")
                              .arg(sim.ranks.size())
                              .arg(sim.npus)
                              .arg(wall));
        break;
    case AstraSimStatus::Failed:
        m_status->setStyleSheet(kFailColor);
        m_status->setText(tr("FAIL: %1; wall time %2").arg(reason, wall));
        break;
    case AstraSimStatus::BadInput:
        m_status->setStyleSheet(kFailColor);
        m_status->setText(tr("Not simulated: %1").arg(reason));
        break;
    case AstraSimStatus::Cancelled:
        m_status->setStyleSheet({});
        m_status->setText(tr("Cancelled: the simulator was stopped after %1.").arg(wall));
        break;
    }
    if (!sim.relevantLines.empty()) {
        QStringList lines;
        for (const std::string& line : sim.relevantLines)
            lines << QString::fromStdString(line);
        m_details->setText(lines.join(QLatin1Char('\n')));
        m_details->setVisible(true);
    }
    if (outcome.comparison && !sim.ranks.empty())
        m_model->setComparison(outcome.comparison);

    QStringList summary;
    if (const SimulationComparison* c = outcome.comparison.get(); c && c->slowestRank >= 0) {
        summary << tr("Slowest rank %1 (stage %2): %3 in ASTRA-sim, %4 in our estimate of the iteration (ratio %5).")
                       .arg(c->slowestRank)
                       .arg(c->slowestStage)
                       .arg(formatDuration(c->simulatedIterationNs * 1e-9),
                           formatDuration(c->estimatedIterationNs * 1e-9), QString::number(c->iterationRatio, 'f', 2));
    }
    double peakBytes = 0;
    for (const AstraSimRankResult& r : sim.ranks)
        peakBytes = std::max(peakBytes, r.peakMemoryBytes.value_or(0.0));
    if (peakBytes > 0)
        summary
            << tr("ASTRA-sim's peak tensor memory: %1 (the largest over the ranks).").arg(formatByteCount(peakBytes));
    if (!sim.files.runDirectory.empty())
        summary << tr("Run folder: %1 (configs, cmd.sh to repeat the run, stdout.txt, stderr.txt).")
                       .arg(native(sim.files.runDirectory));
    m_summary->setText(summary.join(QLatin1Char('\n')));
    Q_EMIT simulationFinished(sim.passed);
}

void SimulateDialog::setRunning(bool running)
{
    m_running = running;
    m_cancelButton->setVisible(running);
    m_cancelButton->setEnabled(running);
    m_runAgainButton->setEnabled(!running);
    m_openFolderButton->setEnabled(!running && m_lastResult && !m_lastResult->files.runDirectory.empty());
    if (running)
        m_clock.start();
    else
        m_clock.stop();
}

void SimulateDialog::reject()
{
    if (isRunning()) {
        cancel();
        return; // closes once the worker has stopped the simulator
    }
    QDialog::reject();
}

} // namespace stagecraft
