// SPDX-License-Identifier: MIT
#include "widgets/exportdialog.h"

#include "chakra/chakrawriter.h"
#include "models/formatting.h"
#include "session/promiseprogress.h"
#include "simulate/astrasimrunner.h"
#include "widgets/int64spinbox.h"
#include "widgets/simulatedialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDesktopServices>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPromise>
#include <QPushButton>
#include <QRadioButton>
#include <QRegularExpression>
#include <QSettings>
#include <QSpinBox>
#include <QThread>
#include <QUrl>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <cmath>

namespace stagecraft {

namespace {

    constexpr int kProgressMax = 1000;
    const QString kDirectoryKey = QStringLiteral("export/directory");
    const QString kFormatKey = QStringLiteral("export/format");
    const QString kAstraSimKey = QStringLiteral("simulate/astrasimBinary");

    QString rateText(double bytes, double seconds)
    {
        if (!(seconds > 0))
            return {};
        return QStringLiteral(", %1/s").arg(formatByteCount(bytes / seconds));
    }

} // namespace

ExportDialog::ExportDialog(std::shared_ptr<const SynthesisResult> result, bool persistSettings, QWidget* parent)
    : QDialog(parent)
    , m_result(std::move(result))
    , m_persistSettings(persistSettings)
    , m_directory(new QLineEdit(this))
    , m_browse(new QPushButton(tr("Browse..."), this))
    , m_name(new QLineEdit(this))
    , m_format(new QComboBox(this))
    , m_allRanks(new QRadioButton(tr("All ranks"), this))
    , m_someRanks(new QRadioButton(tr("Ranks from"), this))
    , m_firstRank(new Int64SpinBox(this))
    , m_endRank(new Int64SpinBox(this))
    , m_tensorLists(new QCheckBox(tr("Tensor lists (inputs/outputs) for ASTRA-sim's memory check"), this))
    , m_ctrlAsData(new QCheckBox(tr("Schedule order as data dependencies (for readers without ctrl_deps)"), this))
    , m_replace(new QCheckBox(tr("Replace files of an earlier export with this name"), this))
    , m_threads(new QSpinBox(this))
    , m_plan(new QLabel(this))
    , m_validation(new QLabel(this))
    , m_progress(new QProgressBar(this))
    , m_resultLabel(new QLabel(this))
    , m_buttons(new QDialogButtonBox(this))
    , m_astrasim(new QLineEdit(this))
    , m_browseAstrasim(new QPushButton(tr("Browse..."), this))
{
    setObjectName(QStringLiteral("exportDialog"));
    setWindowTitle(tr("Export Chakra Trace"));
    m_pool.setMaxThreadCount(1);
    const Config& config = m_result->config;
    const qint64 world = m_result->worldSize();

    QString initialDirectory = QDir::home().filePath(QStringLiteral("stagecraft-traces"));
    int format = 0;
    QString astrasim;
    if (m_persistSettings) {
        QSettings settings;
        initialDirectory = settings.value(kDirectoryKey, initialDirectory).toString();
        format = settings.value(kFormatKey, 0).toInt();
        // The CLI's `simulate --astrasim` reads the same variable.
        astrasim = settings.value(kAstraSimKey, qEnvironmentVariable("STAGECRAFT_ASTRASIM")).toString();
    }
    m_astrasim->setObjectName(QStringLiteral("astrasimBinary"));
    m_astrasim->setText(QDir::toNativeSeparators(astrasim));
    m_astrasim->setPlaceholderText(tr("path to AstraSim_Analytical_Congestion_Unaware"));
    m_astrasim->setToolTip(tr("ASTRA-sim's analytical simulator, which \"Simulate with ASTRA-sim...\" runs on the "
                              "exported traces (a path, or a name found in PATH); remembered"));
    m_directory->setObjectName(QStringLiteral("exportDirectory"));
    m_directory->setText(QDir::toNativeSeparators(initialDirectory));
    m_directory->setToolTip(tr("Created if missing (its parent must exist). Nothing outside it is written."));
    m_name->setObjectName(QStringLiteral("exportName"));
    m_name->setText(QString::fromStdString(config.name));
    m_name->setToolTip(tr("Files are named <name>.<rank>.et and <name>.json (the communicator groups)"));
    m_format->setObjectName(QStringLiteral("exportFormat"));
    m_format->addItem(tr("Chakra ET (protobuf, what ASTRA-sim reads)"), static_cast<int>(ChakraFileFormat::Protobuf));
    m_format->addItem(tr("JSON (one readable document per rank)"), static_cast<int>(ChakraFileFormat::Json));
    m_format->setCurrentIndex(std::clamp(format, 0, 1));

    m_allRanks->setChecked(true);
    m_firstRank->setObjectName(QStringLiteral("exportFirstRank"));
    m_endRank->setObjectName(QStringLiteral("exportEndRank"));
    m_firstRank->setRange(0, std::max<qint64>(0, world - 1));
    m_endRank->setRange(1, world);
    m_endRank->setValue(world);
    m_firstRank->setToolTip(tr("The first rank file written"));
    m_endRank->setToolTip(tr("One past the last rank written, as the CLI's --ranks A:B. The communicator-group "
                             "JSON is written by ranges that start at rank 0."));
    m_replace->setObjectName(QStringLiteral("exportReplace"));
    m_threads->setObjectName(QStringLiteral("exportThreads"));
    m_threads->setRange(1, std::max(1, QThread::idealThreadCount()) * 2);
    m_threads->setValue(std::max(1, QThread::idealThreadCount()));
    m_threads->setToolTip(tr("Rank files written in parallel; the output is identical for any count"));

    auto* folderRow = new QHBoxLayout;
    folderRow->addWidget(m_directory, 1);
    folderRow->addWidget(m_browse);
    auto* rangeRow = new QHBoxLayout;
    rangeRow->addWidget(m_allRanks);
    rangeRow->addSpacing(12);
    rangeRow->addWidget(m_someRanks);
    rangeRow->addWidget(m_firstRank);
    rangeRow->addWidget(new QLabel(tr("to (not including)"), this));
    rangeRow->addWidget(m_endRank);
    rangeRow->addStretch(1);

    auto* form = new QFormLayout;
    form->addRow(tr("Output folder:"), folderRow);
    form->addRow(tr("Name:"), m_name);
    form->addRow(tr("Format:"), m_format);
    form->addRow(tr("Ranks:"), rangeRow);
    auto* threadsRow = new QHBoxLayout;
    threadsRow->addWidget(m_threads);
    threadsRow->addWidget(new QLabel(tr("(the files are identical for any count)"), this));
    threadsRow->addStretch(1);
    form->addRow(tr("Threads:"), threadsRow);
    auto* astrasimRow = new QHBoxLayout;
    astrasimRow->addWidget(m_astrasim, 1);
    astrasimRow->addWidget(m_browseAstrasim);
    form->addRow(tr("ASTRA-sim:"), astrasimRow);
    auto* optionsBox = new QGroupBox(tr("Options"), this);
    auto* optionsLayout = new QVBoxLayout(optionsBox);
    optionsLayout->addWidget(m_tensorLists);
    optionsLayout->addWidget(m_ctrlAsData);
    optionsLayout->addWidget(m_replace);

    m_plan->setObjectName(QStringLiteral("exportPlan"));
    m_plan->setWordWrap(true);
    m_validation->setObjectName(QStringLiteral("exportValidation"));
    m_validation->setWordWrap(true);
    m_validation->setStyleSheet(QStringLiteral("color: #b3261e;"));
    m_progress->setObjectName(QStringLiteral("exportProgress"));
    m_progress->setRange(0, kProgressMax);
    m_progress->setVisible(false);
    m_resultLabel->setObjectName(QStringLiteral("exportResult"));
    m_resultLabel->setWordWrap(true);
    m_resultLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);

    m_exportButton = m_buttons->addButton(tr("Export"), QDialogButtonBox::AcceptRole);
    m_exportButton->setObjectName(QStringLiteral("exportButton"));
    m_exportButton->setDefault(true);
    m_cancelButton = m_buttons->addButton(tr("Cancel Export"), QDialogButtonBox::ActionRole);
    m_cancelButton->setObjectName(QStringLiteral("exportCancelButton"));
    m_openFolderButton = m_buttons->addButton(tr("Open Folder"), QDialogButtonBox::ActionRole);
    m_simulateButton = m_buttons->addButton(tr("Simulate with ASTRA-sim..."), QDialogButtonBox::ActionRole);
    m_simulateButton->setObjectName(QStringLiteral("simulateButton"));
    m_closeButton = m_buttons->addButton(QDialogButtonBox::Close);
    // The buttons act themselves; the box's accepted()/rejected() would close the dialog on Export.
    disconnect(m_buttons, nullptr, this, nullptr);
    connect(m_exportButton, &QPushButton::clicked, this, &ExportDialog::startExport);
    connect(m_cancelButton, &QPushButton::clicked, this, &ExportDialog::cancelExport);
    connect(m_closeButton, &QPushButton::clicked, this, &ExportDialog::reject);
    connect(m_simulateButton, &QPushButton::clicked, this, &ExportDialog::openSimulateDialog);
    connect(m_browseAstrasim, &QPushButton::clicked, this, &ExportDialog::browseAstraSim);
    connect(m_astrasim, &QLineEdit::textChanged, this, &ExportDialog::updateSimulateState);
    connect(m_openFolderButton, &QPushButton::clicked, this,
        [this] { QDesktopServices::openUrl(QUrl::fromLocalFile(QDir::fromNativeSeparators(directory()))); });

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(optionsBox);
    layout->addWidget(m_plan);
    layout->addWidget(m_validation);
    layout->addWidget(m_progress);
    layout->addWidget(m_resultLabel);
    layout->addStretch(1);
    layout->addWidget(m_buttons);

    for (QLineEdit* edit : { m_directory, m_name })
        connect(edit, &QLineEdit::textChanged, this, &ExportDialog::updateState);
    for (QAbstractButton* button : { static_cast<QAbstractButton*>(m_allRanks),
             static_cast<QAbstractButton*>(m_someRanks), static_cast<QAbstractButton*>(m_replace) })
        connect(button, &QAbstractButton::toggled, this, &ExportDialog::updateState);
    connect(m_firstRank, &Int64SpinBox::valueChanged, this, [this] {
        m_someRanks->setChecked(true);
        updateState();
    });
    connect(m_endRank, &Int64SpinBox::valueChanged, this, [this] {
        m_someRanks->setChecked(true);
        updateState();
    });
    connect(m_format, &QComboBox::currentIndexChanged, this, &ExportDialog::updateState);
    connect(m_browse, &QPushButton::clicked, this, &ExportDialog::browse);
    connect(&m_watcher, &QFutureWatcher<void>::progressValueChanged, m_progress, &QProgressBar::setValue);
    connect(&m_watcher, &QFutureWatcher<void>::finished, this, &ExportDialog::onFinished);

    setRunning(false);
    updateState();
    resize(720, sizeHint().height());
}

ExportDialog::~ExportDialog()
{
    if (m_watcher.isRunning()) {
        m_watcher.disconnect(this);
        m_watcher.cancel();
        m_watcher.waitForFinished();
    }
}

void ExportDialog::setDirectory(const QString& directory)
{
    m_directory->setText(QDir::toNativeSeparators(directory));
}

QString ExportDialog::directory() const
{
    return QDir::fromNativeSeparators(m_directory->text().trimmed());
}

void ExportDialog::setName(const QString& name)
{
    m_name->setText(name);
}

void ExportDialog::setFormat(ChakraFileFormat format)
{
    m_format->setCurrentIndex(m_format->findData(static_cast<int>(format)));
}

void ExportDialog::setRankRange(qint64 first, qint64 end)
{
    if (end < 0) {
        m_allRanks->setChecked(true);
        return;
    }
    m_firstRank->setValue(first);
    m_endRank->setValue(end);
    m_someRanks->setChecked(true);
}

void ExportDialog::setReplaceExisting(bool replace)
{
    m_replace->setChecked(replace);
}

ExportOptions ExportDialog::options() const
{
    ExportOptions o;
    o.directory = std::filesystem::path(directory().toStdString());
    o.name = m_name->text().trimmed().toStdString();
    o.format = static_cast<ChakraFileFormat>(m_format->currentData().toInt());
    if (m_someRanks->isChecked()) {
        o.firstRank = m_firstRank->value();
        o.endRank = m_endRank->value();
    }
    o.force = m_replace->isChecked();
    o.tensorLists = m_tensorLists->isChecked();
    o.ctrlDepsAsData = m_ctrlAsData->isChecked();
    o.threads = m_threads->value();
    return o;
}

QStringList ExportDialog::existingFiles(const ExportOptions& o, int limit) const
{
    QStringList found;
    const QDir dir(QString::fromStdString(o.directory.string()));
    if (!dir.exists())
        return found;
    const QString name = QString::fromStdString(o.name);
    const qint64 first = o.firstRank;
    const qint64 end = o.endRank < 0 ? m_result->worldSize() : o.endRank;
    const QRegularExpression rankFile(
        QStringLiteral("^%1\\.(\\d+)\\.(et|json)$").arg(QRegularExpression::escape(name)));
    const QStringList entries = dir.entryList({ name + QStringLiteral(".*") }, QDir::Files | QDir::Hidden);
    for (const QString& file : entries) {
        bool conflict =
            first == 0 && (file == name + QStringLiteral(".json") || file == name + QStringLiteral(".yaml"));
        if (const QRegularExpressionMatch m = rankFile.match(file); m.hasMatch()) {
            const qint64 r = m.captured(1).toLongLong();
            conflict = r >= first && r < end;
        }
        if (conflict) {
            found << file;
            if (found.size() >= limit)
                break;
        }
    }
    return found;
}

namespace {

    /// Whether `a` and `b` write the same files (folder, name, format, rank range).
    bool sameFiles(const ExportOptions& a, const ExportOptions& b)
    {
        return a.directory == b.directory && a.name == b.name && a.format == b.format && a.firstRank == b.firstRank
            && a.endRank == b.endRank && a.rankExtension == b.rankExtension;
    }

} // namespace

QString ExportDialog::validationMessage() const
{
    const ExportOptions o = options();
    if (directory().isEmpty())
        return tr("Choose an output folder.");
    const QFileInfo dirInfo(directory());
    if (dirInfo.exists() && !dirInfo.isDir())
        return tr("'%1' exists and is not a folder.").arg(m_directory->text());
    if (!dirInfo.exists() && !QFileInfo(dirInfo.absolutePath()).isDir())
        return tr("The folder's parent '%1' does not exist.").arg(QDir::toNativeSeparators(dirInfo.absolutePath()));
    if (const std::string why = checkExportName(o.name); !why.empty())
        return tr("Name: %1.").arg(QString::fromStdString(why));
    if (o.endRank >= 0 && o.firstRank >= o.endRank)
        return tr("The rank range is empty: the first rank must be below the end rank.");
    // The files this dialog has just written are no conflict: exporting them again replaces only them (replaceOwn).
    if (!o.force && !(m_lastOptions && sameFiles(*m_lastOptions, o))) {
        const QStringList existing = existingFiles(o, 3);
        if (!existing.isEmpty())
            return tr("The folder already holds files of an export named '%1' (%2). Tick \"Replace\" to replace "
                      "them, or choose another name or folder.")
                .arg(m_name->text().trimmed(), existing.join(QStringLiteral(", ")));
    }
    return {};
}

void ExportDialog::updateState()
{
    const ExportOptions o = options();
    const qint64 world = m_result->worldSize();
    const qint64 first = o.firstRank;
    const qint64 end = o.endRank < 0 ? world : o.endRank;
    qint64 nodes = 0;
    if (end > first) {
        for (size_t c = 0; c < m_result->classes.size(); ++c) {
            const ClassProgram& program = m_result->classes[c];
            qint64 ranks = 0;
            if (end - first == world)
                ranks = program.rankCount;
            else
                for (qint64 r = first; r < end; ++r)
                    ranks += m_result->classOf(RankId { r }) == static_cast<int32_t>(c) ? 1 : 0;
            // The summary's count: a compressed result's programs hold only some micro-batches; the export all.
            nodes += ranks * static_cast<qint64>(m_result->summaries[c].nodes);
        }
    }
    const QString extension = o.format == ChakraFileFormat::Json ? QStringLiteral("json") : QStringLiteral("et");
    QString plan = tr("Writes %1 (%2.<rank>.%3, %4 nodes in all)")
                       .arg(countNoun(std::max<qint64>(0, end - first), tr("rank file"), tr("rank files")),
                           QString::fromStdString(o.name), extension, formatExact(nodes));
    plan += first == 0 ? tr(", %1.json, the communicator groups ASTRA-sim reads, and %1.yaml, the config.")
                             .arg(QString::fromStdString(o.name))
                       : tr("; the communicator groups are written by the range that starts at rank 0.");
    m_plan->setText(plan);
    const QString why = validationMessage();
    m_validation->setText(why);
    m_validation->setVisible(!why.isEmpty());
    m_exportButton->setEnabled(!isRunning() && why.isEmpty());
    updateSimulateState();
}

void ExportDialog::setAstraSimBinary(const QString& binary)
{
    m_astrasim->setText(QDir::toNativeSeparators(binary));
}

QString ExportDialog::astraSimBinary() const
{
    return QDir::fromNativeSeparators(m_astrasim->text().trimmed());
}

QString ExportDialog::simulateUnavailableReason() const
{
    if (isRunning())
        return tr("Wait for the export to finish.");
    if (!m_lastSummary || !m_lastOptions)
        return tr("Export the trace set first: ASTRA-sim runs on the files written.");
    if (m_lastSummary->cancelled)
        return tr("The last export was cancelled: export the whole set first.");
    const ExportOptions& o = *m_lastOptions;
    if (o.format != ChakraFileFormat::Protobuf)
        return tr("ASTRA-sim reads Chakra ET (protobuf) files: export in that format.");
    if (o.firstRank != 0 || (o.endRank >= 0 && o.endRank != m_result->worldSize()))
        return tr("ASTRA-sim needs every rank: export all ranks.");
    if (m_result->worldSize() < 2)
        return tr("ASTRA-sim's analytical network needs at least 2 ranks.");
    if (astraSimBinary().isEmpty())
        return tr("Set the ASTRA-sim binary (the analytical simulator) first.");
    std::string error;
    if (!resolveAstraSimBinary(astraSimBinary().toStdString(), error))
        return QString::fromStdString(error) + QLatin1Char('.');
    return {};
}

void ExportDialog::updateSimulateState()
{
    const QString why = simulateUnavailableReason();
    m_simulateButton->setEnabled(why.isEmpty());
    m_simulateButton->setToolTip(why.isEmpty() ? tr("Run ASTRA-sim's analytical simulator on the exported traces "
                                                    "and compare its times with our estimate")
                                               : why);
}

void ExportDialog::browseAstraSim()
{
    const QString chosen = QFileDialog::getOpenFileName(this, tr("ASTRA-sim Binary"), astraSimBinary());
    if (!chosen.isEmpty())
        setAstraSimBinary(chosen);
}

SimulateDialog* ExportDialog::openSimulateDialog()
{
    if (!simulateUnavailableReason().isEmpty())
        return nullptr;
    if (m_persistSettings)
        QSettings().setValue(kAstraSimKey, astraSimBinary());
    const ExportOptions& o = *m_lastOptions;
    SimulateDialog::Request request;
    request.result = m_result;
    request.directory = QString::fromStdString(o.directory.string());
    request.name = QString::fromStdString(o.name);
    request.binary = astraSimBinary();
    request.trackLocalMem = o.tensorLists;
    auto* dialog = new SimulateDialog(std::move(request), this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->show();
    dialog->start();
    return dialog;
}

void ExportDialog::browse()
{
    const QString chosen = QFileDialog::getExistingDirectory(this, tr("Output Folder"), directory());
    if (!chosen.isEmpty())
        setDirectory(chosen);
}

void ExportDialog::startExport()
{
    if (isRunning())
        return;
    updateState();
    const QString why = validationMessage();
    if (!why.isEmpty())
        return;
    ExportOptions o = options();
    if (!o.force && m_lastOptions && sameFiles(*m_lastOptions, o))
        o.replaceOwn = true; // again over the files of the last export (and only those)
    if (m_persistSettings) {
        QSettings settings;
        settings.setValue(kDirectoryKey, directory());
        settings.setValue(kFormatKey, m_format->currentIndex());
    }
    m_lastSummary.reset();
    m_lastOptions.reset();
    m_runningOptions = o;
    m_resultLabel->setStyleSheet({});
    m_resultLabel->setText(tr("Exporting..."));
    m_progress->setValue(0);
    setRunning(true);
    m_outcome = std::make_shared<Outcome>();
    m_watcher.setFuture(
        QtConcurrent::run(&m_pool, [result = m_result, o, outcome = m_outcome](QPromise<void>& promise) {
            promise.setProgressRange(0, kProgressMax);
            try {
                PromiseProgress progress(promise, kProgressMax);
                outcome->summary = exportTrace(*result, o, &progress);
            } catch (const std::exception& e) {
                outcome->error = QString::fromStdString(e.what());
            }
        }));
}

void ExportDialog::cancelExport()
{
    if (!isRunning())
        return;
    m_resultLabel->setText(tr("Cancelling..."));
    m_watcher.cancel();
}

bool ExportDialog::isRunning() const
{
    // The dialog's state, from startExport() until onFinished() has shown the outcome: the worker thread may end
    // a moment before its finished signal is delivered, and the buttons must not change in between.
    return m_running;
}

std::optional<ExportSummary> ExportDialog::lastSummary() const
{
    return m_lastSummary;
}

QString ExportDialog::resultText() const
{
    return m_resultLabel->text();
}

void ExportDialog::onFinished()
{
    Outcome outcome = m_outcome ? *m_outcome : Outcome {};
    if (outcome.error.isEmpty() && !outcome.summary)
        outcome.error = tr("the export stopped without a result");
    setRunning(false);
    const QString folder = QDir::toNativeSeparators(directory());
    if (!outcome.error.isEmpty() || !outcome.summary) {
        m_resultLabel->setStyleSheet(QStringLiteral("color: #b3261e;"));
        m_resultLabel->setText(
            tr("Export failed: %1\nNothing of this export was kept: the folder is as it was.").arg(outcome.error));
        updateState();
        Q_EMIT exportFinished(false);
        return;
    }
    const ExportSummary& s = *outcome.summary;
    m_lastSummary = s;
    m_lastOptions = m_runningOptions;
    const QString files = countNoun(s.files, tr("rank file"), tr("rank files"));
    const QString size = formatByteCount(static_cast<double>(s.bytes));
    if (s.cancelled) {
        m_resultLabel->setText(tr("Cancelled after %1 s. Nothing was written: an export replaces a set whole or "
                                  "not at all, so the folder is as it was.")
                                   .arg(QString::number(s.seconds, 'f', 1)));
    } else {
        QString text =
            tr("Wrote %1 (%2, %3 nodes) in %4 s%5 to %6.")
                .arg(files, size, formatExact(static_cast<qint64>(s.nodes)), QString::number(s.seconds, 'f', 2),
                    rateText(static_cast<double>(s.bytes), s.seconds), folder);
        if (s.wroteGroups)
            text += tr("\nCommunicator groups: %1.")
                        .arg(QDir::toNativeSeparators(QString::fromStdString(s.groupsPath.string())));
        if (!s.configPath.empty())
            text += tr("\nConfig: %1 (what stagecraft simulate reads).")
                        .arg(QDir::toNativeSeparators(QString::fromStdString(s.configPath.string())));
        text += tr("\nCheck the set with: stagecraft inspect %1").arg(folder);
        m_resultLabel->setText(text);
    }
    m_progress->setValue(kProgressMax);
    updateState();
    Q_EMIT exportFinished(true);
}

void ExportDialog::setRunning(bool running)
{
    m_running = running;
    m_progress->setVisible(running || m_lastSummary.has_value());
    m_cancelButton->setVisible(running);
    m_cancelButton->setEnabled(running);
    m_exportButton->setEnabled(!running);
    m_openFolderButton->setEnabled(!running && QFileInfo(directory()).isDir());
    for (QWidget* w : std::initializer_list<QWidget*> { m_directory, m_browse, m_name, m_format, m_allRanks,
             m_someRanks, m_firstRank, m_endRank, m_tensorLists, m_ctrlAsData, m_replace, m_threads })
        w->setEnabled(!running);
    updateSimulateState();
}

void ExportDialog::reject()
{
    if (isRunning()) {
        cancelExport();
        return; // closes once the worker has stopped: the user sees the cancel note first
    }
    QDialog::reject();
}

} // namespace stagecraft
