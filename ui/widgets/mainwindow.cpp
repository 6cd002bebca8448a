// SPDX-License-Identifier: MIT
#include "widgets/mainwindow.h"

#include "app/recentfiles.h"
#include "charts/memoryview.h"
#include "charts/servingview.h"
#include "config/boundedfile.h"
#include "config/configloader.h"
#include "config/confignode.h"
#include "config/configwriter.h"
#include "config/hfimport.h"
#include "config/presets.h"
#include "graph/graphview.h"
#include "heatmap/commview.h"
#include "models/formatting.h"
#include "session/configdocument.h"
#include "session/synthesissession.h"
#include "sweep/sweepview.h"
#include "synthesis/synthesis.h"
#include "timeline/timelineview.h"
#include "version.h"
#include "widgets/configeditor.h"
#include "widgets/exportdialog.h"
#include "widgets/layouteditor.h"
#include "widgets/overviewview.h"
#include "widgets/reportview.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QScreen>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>
#include <QToolButton>
#include <QUndoStack>
#include <algorithm>

namespace stagecraft {

namespace {

    constexpr int kSynthesisDelayMs = 150;

    bool isConfigFile(const QUrl& url)
    {
        if (!url.isLocalFile())
            return false;
        const QString suffix = QFileInfo(url.toLocalFile()).suffix().toLower();
        return suffix == QLatin1String("yaml") || suffix == QLatin1String("yml");
    }

    QString firstError(const QList<Diagnostic>& diagnostics)
    {
        for (const Diagnostic& d : diagnostics) {
            if (d.severity == Severity::Error) {
                QString text = QString::fromStdString(d.message);
                if (!d.keyPath.empty())
                    text = QString::fromStdString(d.keyPath) + QStringLiteral(": ") + text;
                return text;
            }
        }
        return {};
    }

    /// Why `bytes` cannot be a YAML config's text (a NUL or other control byte, a byte sequence that is not UTF-8),
    /// naming the first offending byte; empty when it is text.
    QString notConfigText(const std::string& bytes)
    {
        const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
        const size_t size = bytes.size();
        for (size_t i = 0; i < size;) {
            const unsigned char c = data[i];
            if (c < 0x80) {
                if (c < 0x20 && c != '\t' && c != '\n' && c != '\r')
                    return MainWindow::tr("byte %1 is the control character 0x%2: a binary file, not a YAML config")
                        .arg(i + 1)
                        .arg(c, 2, 16, QLatin1Char('0'));
                ++i;
                continue;
            }
            // The length of a well-formed UTF-8 sequence (RFC 3629: no overlong forms, surrogates or past U+10FFFF).
            const size_t length = c >= 0xC2 && c <= 0xDF ? 2
                : c >= 0xE0 && c <= 0xEF                 ? 3
                : c >= 0xF0 && c <= 0xF4                 ? 4
                                                         : 0;
            bool ok = length > 0 && i + length <= size;
            for (size_t k = 1; ok && k < length; ++k)
                ok = (data[i + k] & 0xC0) == 0x80;
            if (ok && length == 3)
                ok = !(c == 0xE0 && data[i + 1] < 0xA0) && !(c == 0xED && data[i + 1] >= 0xA0);
            if (ok && length == 4)
                ok = !(c == 0xF0 && data[i + 1] < 0x90) && !(c == 0xF4 && data[i + 1] >= 0x90);
            if (!ok)
                return MainWindow::tr("byte %1 (0x%2) is not UTF-8 text: a binary file or another encoding, not a "
                                      "YAML config")
                    .arg(i + 1)
                    .arg(c, 2, 16, QLatin1Char('0'));
            i += length;
        }
        return {};
    }

    QString savedText(const QString& path, bool withBaseline)
    {
        if (!withBaseline)
            return MainWindow::tr("Saved %1").arg(QDir::toNativeSeparators(path));
        return MainWindow::tr("Saved %1, and its baseline in %2")
            .arg(QDir::toNativeSeparators(path), QFileInfo(ConfigDocument::baselinePath(path)).fileName());
    }

} // namespace

MainWindow::MainWindow(bool persistSettings, QWidget* parent)
    : QMainWindow(parent)
    , m_persistSettings(persistSettings)
    , m_document(new ConfigDocument(this))
    , m_session(new SynthesisSession(this))
    , m_baselineSession(new SynthesisSession(this))
    , m_recentFiles(new RecentFiles(persistSettings, this))
    , m_editor(new ConfigEditor(m_document, this))
    , m_configDock(new QDockWidget(tr("Configuration"), this))
    , m_tabs(new QTabWidget(this))
    , m_overview(new OverviewView(this))
    , m_report(new ReportView(this))
    , m_synthesisTimer(new QTimer(this))
{
    setObjectName(QStringLiteral("mainWindow"));
    setAcceptDrops(true);
    setDockOptions(QMainWindow::AnimatedDocks | QMainWindow::AllowTabbedDocks);

    m_configDock->setObjectName(QStringLiteral("configDock"));
    m_configDock->setWidget(m_editor);
    m_configDock->setFeatures(
        QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable | QDockWidget::DockWidgetClosable);
    addDockWidget(Qt::LeftDockWidgetArea, m_configDock);
    resizeDocks({ m_configDock }, { 360 }, Qt::Horizontal);

    m_tabs->setObjectName(QStringLiteral("viewTabs"));
    m_tabs->setDocumentMode(true);
    setCentralWidget(m_tabs);

    createStatusBar();
    createMenus();
    addResultView(m_overview, tr("Overview"), QStringLiteral("overview"));
    addResultView(new GraphView(this), tr("Graph"), QStringLiteral("graph"));
    addResultView(new MemoryView(this), tr("Memory"), QStringLiteral("memory"));
    addResultView(new CommView(this), tr("Communication"), QStringLiteral("communication"));
    addResultView(new TimelineView(this), tr("Timeline"), QStringLiteral("timeline"));
    auto* sweep = new SweepView(this);
    addResultView(sweep, tr("Sweep"), QStringLiteral("sweep"));
    connect(sweep, &SweepView::planChosen, this, [this](const Config& config) {
        m_document->edit(config, tr("Load Sweep Plan"));
        setStatus(tr("Loaded the sweep's plan: %1 GPUs; Undo (Ctrl+Z) goes back").arg(config.parallelism.worldSize()));
    });
    addResultView(m_report, tr("Report"), QStringLiteral("report"));
    addResultView(new ServingView(this), tr("Serving"), QStringLiteral("serving"));

    m_synthesisTimer->setSingleShot(true);
    m_synthesisTimer->setInterval(kSynthesisDelayMs);
    connect(m_synthesisTimer, &QTimer::timeout, this, &MainWindow::startSynthesis);
    connect(m_document, &ConfigDocument::configChanged, m_synthesisTimer, qOverload<>(&QTimer::start));
    connect(m_document, &ConfigDocument::filePathChanged, this, &MainWindow::updateTitle);
    connect(m_document, &ConfigDocument::modifiedChanged, this, &MainWindow::updateTitle);
    connect(m_editor, &ConfigEditor::statusMessage, this, [this](const QString& text) { setStatus(text, true); });
    connect(m_document, &ConfigDocument::configChanged, this, &MainWindow::updateTitle); // a preset picked: its name
    connect(m_editor, &ConfigEditor::textReverted, this, &MainWindow::onTextReverted);

    connect(m_session, &SynthesisSession::synthesisStarted, this, &MainWindow::onSynthesisStarted);
    connect(m_session, &SynthesisSession::progressChanged, this, &MainWindow::onProgress);
    connect(m_session, &SynthesisSession::synthesisFinished, this, &MainWindow::onResult);
    connect(m_session, &SynthesisSession::synthesisFailed, this, &MainWindow::onFailure);
    connect(m_session, &SynthesisSession::cancelled, this, &MainWindow::onCancelled);

    connect(m_document, &ConfigDocument::baselineChanged, this, &MainWindow::onBaselineChanged);
    connect(m_baselineSession, &SynthesisSession::progressChanged, this,
        [this](int permille) { m_baselineProgress->setValue(permille); });
    connect(m_baselineSession, &SynthesisSession::synthesisFinished, this,
        [this](std::shared_ptr<const SynthesisResult> result) {
            m_baselineProgress->setVisible(false);
            if (m_document->adoptBaselineResult(std::move(result)))
                setStatus(tr("The saved baseline is synthesized again; the Overview and Memory tab compare with it"));
        });
    connect(m_baselineSession, &SynthesisSession::synthesisFailed, this, [this](const QList<Diagnostic>& diagnostics) {
        m_baselineProgress->setVisible(false);
        setStatus(tr("The saved baseline does not synthesize: %1").arg(firstError(diagnostics)), true);
        Q_EMIT baselineShown(); // the views keep showing none
    });

    // Never larger than the screen (a 1366 x 768 laptop, Xvfb without a window manager), and never growing past it
    // by itself: a minimum size set here keeps the layouts from raising the window's minimum to their content's
    // (the views scroll or shrink instead).
    const QSize available = screen() ? screen()->availableGeometry().size() : QSize(1440, 900);
    setMinimumSize(QSize(640, 480).boundedTo(available));
    resize(QSize(1440, 900).boundedTo(available));
    updateTitle();
}

MainWindow::~MainWindow() = default;

void MainWindow::createMenus()
{
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QMenu* presets = file->addMenu(tr("&New from Preset"));
    for (const std::string& name : presetNames()) {
        const QString qname = QString::fromStdString(name);
        QAction* action = presets->addAction(qname, this, [this, qname] {
            if (maybeSave())
                newFromPreset(qname);
        });
        action->setStatusTip(QString::fromStdString(presetSummary(name)));
        action->setToolTip(action->statusTip());
    }
    presets->setToolTipsVisible(true);
    QAction* open = file->addAction(tr("&Open..."), this, &MainWindow::openWithDialog);
    open->setShortcut(QKeySequence::Open);
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    connect(m_recentFiles, &RecentFiles::changed, this, &MainWindow::rebuildRecentMenu);
    rebuildRecentMenu();
    QAction* importHf =
        file->addAction(tr("Import &Hugging Face Config..."), this, &MainWindow::importHfConfigWithDialog);
    importHf->setObjectName(QStringLiteral("importHfConfigAction"));
    importHf->setStatusTip(tr("Replace the model with one read from a Hugging Face config.json"));
    file->addSeparator();
    QAction* saveAction = file->addAction(tr("&Save"), this, &MainWindow::save);
    saveAction->setShortcut(QKeySequence::Save);
    QAction* saveAsAction = file->addAction(tr("Save &As..."), this, &MainWindow::saveAs);
    saveAsAction->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S));
    file->addSeparator();
    m_exportAction = file->addAction(tr("&Export Chakra Trace..."), this, &MainWindow::openExportDialog);
    m_exportAction->setObjectName(QStringLiteral("exportTraceAction"));
    m_exportAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    m_exportAction->setStatusTip(tr("Write the shown result's rank files and communicator groups for ASTRA-sim"));
    m_exportAction->setEnabled(false);
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Q));
    quit->setMenuRole(QAction::QuitRole);

    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    QAction* undo = m_document->undoStack()->createUndoAction(this, tr("&Undo"));
    undo->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Z));
    QAction* redo = m_document->undoStack()->createRedoAction(this, tr("&Redo"));
    redo->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z));
    edit->addAction(undo);
    edit->addAction(redo);
    edit->addSeparator();
    m_pinAction = edit->addAction(tr("&Pin as Baseline"), this, &MainWindow::pinBaseline);
    m_pinAction->setObjectName(QStringLiteral("pinBaselineAction"));
    m_pinAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_B));
    m_pinAction->setStatusTip(tr("Keep the shown plan; the Overview compares every later plan with it"));
    m_pinAction->setEnabled(false);
    m_clearBaselineAction = edit->addAction(tr("C&lear Baseline"), this, &MainWindow::clearBaseline);
    m_clearBaselineAction->setObjectName(QStringLiteral("clearBaselineAction"));
    m_clearBaselineAction->setEnabled(false);
    edit->addSeparator();
    QAction* layoutAction = edit->addAction(tr("Pipeline &Layout..."), this, &MainWindow::openLayoutEditor);
    layoutAction->setObjectName(QStringLiteral("pipelineLayoutAction"));
    layoutAction->setStatusTip(tr("Edit which layers every pipeline chunk holds"));
    edit->addSeparator();
    QAction* resynth = edit->addAction(tr("Synthesize &Now"), this, &MainWindow::startSynthesis);
    resynth->setShortcut(QKeySequence(Qt::Key_F5));
    QAction* cancel = edit->addAction(tr("&Cancel Synthesis"), m_session, &SynthesisSession::cancel);
    cancel->setShortcut(QKeySequence(Qt::SHIFT | Qt::Key_Escape));

    m_viewMenu = menuBar()->addMenu(tr("&View"));
    m_tabActions = new QActionGroup(this);
    m_tabActions->setExclusive(true);
    m_viewMenu->addSeparator();
    m_viewMenu->addAction(m_configDock->toggleViewAction());
    m_configDock->toggleViewAction()->setText(tr("&Configuration Panel"));
    m_configDock->toggleViewAction()->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Backslash));
    connect(m_tabs, &QTabWidget::currentChanged, this, [this](int index) {
        deliverResult(qobject_cast<ResultView*>(m_tabs->widget(index)));
        const QList<QAction*> actions = m_tabActions->actions();
        if (index >= 0 && index < actions.size())
            actions[index]->setChecked(true);
    });

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About Stagecraft"), this, &MainWindow::about)->setMenuRole(QAction::AboutRole);
    help->addAction(tr("About &Qt"), qApp, &QApplication::aboutQt)->setMenuRole(QAction::AboutQtRole);
}

void MainWindow::createStatusBar()
{
    m_statusLabel = new QLabel(this);
    m_statusLabel->setObjectName(QStringLiteral("synthesisStatus"));
    m_statusLabel->setTextFormat(Qt::PlainText);
    m_progress = new QProgressBar(this);
    m_progress->setObjectName(QStringLiteral("synthesisProgress"));
    m_progress->setRange(0, 1000);
    m_progress->setMaximumWidth(180);
    m_progress->setTextVisible(false);
    m_progress->setVisible(false);
    m_cancelButton = new QToolButton(this);
    m_cancelButton->setObjectName(QStringLiteral("cancelButton"));
    m_cancelButton->setText(tr("Cancel"));
    m_cancelButton->setToolTip(tr("Stop the synthesis in progress (Shift+Esc)"));
    m_cancelButton->setAutoRaise(true);
    m_cancelButton->setEnabled(false);
    connect(m_cancelButton, &QToolButton::clicked, m_session, &SynthesisSession::cancel);
    m_baselineProgress = new QProgressBar(this);
    m_baselineProgress->setObjectName(QStringLiteral("baselineProgress"));
    m_baselineProgress->setRange(0, 1000);
    m_baselineProgress->setMaximumWidth(180);
    m_baselineProgress->setFormat(tr("baseline %p%"));
    m_baselineProgress->setToolTip(tr("Synthesizing the saved baseline's config again"));
    m_baselineProgress->setVisible(false);
    statusBar()->addWidget(m_statusLabel, 1);
    statusBar()->addPermanentWidget(m_baselineProgress);
    statusBar()->addPermanentWidget(m_progress);
    statusBar()->addPermanentWidget(m_cancelButton);
    statusBar()->setSizeGripEnabled(true);
}

void MainWindow::addResultView(ResultView* view, const QString& title, const QString& name)
{
    view->setObjectName(name);
    m_views.append(view);
    const int index = m_tabs->addTab(view, title);
    QAction* action = m_tabActions->addAction(title);
    action->setCheckable(true);
    action->setChecked(index == m_tabs->currentIndex());
    if (index < 9)
        action->setShortcut(QKeySequence(Qt::CTRL | static_cast<Qt::Key>(Qt::Key_1 + index)));
    connect(action, &QAction::triggered, this, [this, view] { m_tabs->setCurrentWidget(view); });
    // Tab actions go above the separator that precedes the panel toggle.
    const QList<QAction*> menuActions = m_viewMenu->actions();
    QAction* before = nullptr;
    for (QAction* a : menuActions) {
        if (a->isSeparator()) {
            before = a;
            break;
        }
    }
    m_viewMenu->insertAction(before, action);
    if (view == currentResultView())
        deliverResult(view);
}

void MainWindow::deliverResult(ResultView* view)
{
    if (!view || !m_shownResult || m_delivered.value(view) == m_resultGeneration)
        return;
    m_delivered.insert(view, m_resultGeneration);
    view->setResult(m_shownResult);
}

bool MainWindow::hasCurrentResult(const ResultView* view) const
{
    return m_shownResult && m_delivered.value(view) == m_resultGeneration;
}

bool MainWindow::showTab(const QString& name)
{
    for (int i = 0; i < m_tabs->count(); ++i) {
        QString title = m_tabs->tabText(i);
        title.remove(QLatin1Char('&'));
        if (m_tabs->widget(i)->objectName().compare(name, Qt::CaseInsensitive) == 0
            || title.compare(name, Qt::CaseInsensitive) == 0) {
            m_tabs->setCurrentIndex(i);
            return true;
        }
    }
    return false;
}

QStringList MainWindow::tabNames() const
{
    QStringList names;
    for (int i = 0; i < m_tabs->count(); ++i)
        names << m_tabs->widget(i)->objectName();
    return names;
}

bool MainWindow::pinBaseline()
{
    if (!m_shownResult)
        return false;
    m_document->setBaseline(m_shownResult, tr("Pin Baseline"));
    setStatus(tr("Pinned %1 on %2 GPUs as the baseline; the Overview and Memory tab compare later plans with it")
                  .arg(QString::fromStdString(m_shownResult->config.name))
                  .arg(m_shownResult->worldSize()));
    return true;
}

void MainWindow::clearBaseline()
{
    m_document->setBaseline(nullptr, tr("Clear Baseline"));
}

std::shared_ptr<const SynthesisResult> MainWindow::baselineResult() const
{
    return m_document->baseline().result;
}

bool MainWindow::isSynthesizingBaseline() const
{
    return m_baselineSession->isRunning();
}

void MainWindow::onBaselineChanged()
{
    const ConfigDocument::Baseline& baseline = m_document->baseline();
    if (baseline.config && !baseline.result) {
        // A loaded baseline (or one undone back to after a load): its result is made again from its config.
        m_baselineSession->start(*baseline.config);
        m_baselineProgress->setValue(0);
        m_baselineProgress->setVisible(true);
    } else if (m_baselineSession->isRunning()) {
        m_baselineSession->cancel();
        m_baselineProgress->setVisible(false);
    }
    m_clearBaselineAction->setEnabled(baseline.config.has_value());
    for (ResultView* view : std::as_const(m_views))
        view->setBaseline(baseline.result);
    Q_EMIT baselineShown();
}

std::optional<Config> MainWindow::readBaselineFor(const QString& path, QString* problem) const
{
    const QString sidecar = ConfigDocument::baselinePath(path);
    if (!QFileInfo(sidecar).isFile())
        return std::nullopt;
    const ConfigResult result = loadConfigFile(sidecar.toStdString());
    if (!result.config && problem) {
        QString first;
        for (const Diagnostic& d : result.diagnostics)
            if (d.severity == Severity::Error) {
                first = QString::fromStdString(d.toString());
                break;
            }
        *problem = tr("its baseline %1 does not load (%2)").arg(QFileInfo(sidecar).fileName(), first);
    }
    return result.config;
}

ConfigDocument* MainWindow::document() const
{
    return m_document;
}

SynthesisSession* MainWindow::session() const
{
    return m_session;
}

ConfigEditor* MainWindow::configEditor() const
{
    return m_editor;
}

OverviewView* MainWindow::overviewView() const
{
    return m_overview;
}

ReportView* MainWindow::reportView() const
{
    return m_report;
}

std::shared_ptr<const SynthesisResult> MainWindow::shownResult() const
{
    return m_shownResult;
}

ResultView* MainWindow::currentResultView() const
{
    return qobject_cast<ResultView*>(m_tabs->currentWidget());
}

int MainWindow::synthesisDelayMs() const
{
    return m_synthesisTimer->interval();
}

void MainWindow::setSynthesisDelayMs(int ms)
{
    m_synthesisTimer->setInterval(std::max(0, ms));
}

bool MainWindow::openConfigOrPreset(const QString& pathOrPreset, const QStringList& overrides, QString* error)
{
    const bool isFile = QFileInfo(pathOrPreset).isFile();
    if (overrides.isEmpty()) {
        if (isFile) {
            const bool opened = openFile(pathOrPreset);
            if (!opened && error)
                *error = m_statusLabel->text();
            return opened;
        }
        if (presetText(pathOrPreset.toStdString()))
            return newFromPreset(pathOrPreset);
    }
    std::vector<std::string> sets;
    for (const QString& set : overrides)
        sets.push_back(set.toStdString());
    const ConfigResult result = loadConfigOrPreset(pathOrPreset.toStdString(), sets);
    if (!result.config) {
        if (error) {
            // The loader's messages name the file or list the presets, and point at the offending override.
            QStringList lines;
            for (const Diagnostic& d : result.diagnostics)
                lines << QString::fromStdString(d.toString());
            *error =
                lines.isEmpty() ? tr("%1: no such file or preset").arg(pathOrPreset) : lines.join(QLatin1Char('\n'));
        }
        return false;
    }
    if (isFile) {
        m_document->reset(*result.config, pathOrPreset, {}, readBaselineFor(pathOrPreset, nullptr));
        m_document->adoptFilePath(pathOrPreset); // the overrides are not in the file yet
        m_recentFiles->add(pathOrPreset);
    } else {
        m_document->reset(*result.config, {}, pathOrPreset);
    }
    setStatus(tr("Opened %1 with %2").arg(pathOrPreset, overrides.join(QStringLiteral(", "))));
    return true;
}

bool MainWindow::openFile(const QString& path)
{
    // A file that is no config text (too large, binary, not UTF-8, not a regular file) is refused here, before it
    // reaches the editor: the document, its file and its undo history stay as they were.
    std::string bytes;
    QString problem = QString::fromStdString(
        readBoundedFile(path.toStdString(), kMaxConfigBytes, { "file", "a YAML config file", "a config" }, bytes));
    if (problem.isEmpty())
        problem = notConfigText(bytes);
    if (!problem.isEmpty()) {
        setStatus(tr("Not opened: %1: %2").arg(QDir::toNativeSeparators(path), problem), true);
        if (!QFileInfo(path).isFile())
            m_recentFiles->remove(path);
        return false;
    }
    const ConfigResult result = loadConfigText(bytes, path.toStdString());
    m_recentFiles->add(path);
    if (result.config) {
        QString problem;
        const std::optional<Config> baseline = readBaselineFor(path, &problem);
        m_document->reset(*result.config, path, {}, baseline);
        if (!problem.isEmpty())
            setStatus(tr("Opened %1, but %2").arg(QDir::toNativeSeparators(path), problem), true);
        else if (baseline)
            setStatus(tr("Opened %1 with its baseline (synthesizing it again)").arg(QDir::toNativeSeparators(path)));
        else
            setStatus(tr("Opened %1").arg(QDir::toNativeSeparators(path)));
        return true;
    }
    // Keep the last good config on screen and let the user fix the text where it is wrong. At start-up there is
    // none yet: the default preset stands in, so the form and the views show something sensible.
    if (m_document->config() == Config {}) {
        if (const ConfigResult fallback = loadConfigOrPreset("default"); fallback.config)
            m_document->reset(*fallback.config, {}, QStringLiteral("default"));
    }
    const QList<Diagnostic> diagnostics(result.diagnostics.begin(), result.diagnostics.end());
    m_document->adoptFilePath(path, false); // opening never dirties: nothing is to save until the user edits
    m_editor->showInvalidText(QString::fromStdString(bytes), diagnostics);
    m_configDock->show();
    setStale(m_shownResult != nullptr);
    setStatus(tr("%1 has %2; fix them in the YAML tab and Apply")
                  .arg(QFileInfo(path).fileName(),
                      countNoun(std::count_if(diagnostics.begin(), diagnostics.end(),
                                    [](const Diagnostic& d) { return d.severity == Severity::Error; }),
                          tr("error"), tr("errors"))),
        true);
    return true;
}

bool MainWindow::newFromPreset(const QString& name)
{
    const ConfigResult result = loadConfigOrPreset(name.toStdString());
    if (!result.config) {
        setStatus(tr("Preset %1 did not load").arg(name), true);
        return false;
    }
    m_document->reset(*result.config, {}, name);
    setStatus(tr("New configuration from preset %1").arg(name));
    return true;
}

bool MainWindow::importHfConfig(const QString& path)
{
    const std::string file = QFileInfo(path).absoluteFilePath().toStdString();
    const HfImport imported = importHfConfigFile(file);
    const QList<Diagnostic> diagnostics(imported.diagnostics.begin(), imported.diagnostics.end());
    const auto warnings = std::count_if(
        diagnostics.begin(), diagnostics.end(), [](const Diagnostic& d) { return d.severity == Severity::Warning; });
    if (imported.model) {
        Config config = m_document->config();
        config.model = *imported.model;
        config.name = hfDefaultName(file); // the workload is now this model's (output file names, title)
        m_document->edit(config, tr("Import %1").arg(QFileInfo(path).fileName()));
        QString status = tr("Imported the %1 model of %2")
                             .arg(QString::fromStdString(imported.architecture), QDir::toNativeSeparators(path));
        if (warnings > 0)
            status += tr(" (%1 ignored: %2)")
                          .arg(countNoun(warnings, tr("field"), tr("fields")),
                              QString::fromStdString(diagnostics.front().toString()));
        setStatus(status);
        return true;
    }
    // As a YAML file with errors: the current config with the model taken from the JSON, and the problems, which
    // point into the JSON file. Fixing the JSON and pressing Apply imports it.
    const std::string yaml = toYaml(m_document->config());
    std::string text;
    bool inModel = false;
    size_t start = 0;
    while (start < yaml.size()) {
        const size_t end = std::min(yaml.find('\n', start), yaml.size());
        const std::string line = yaml.substr(start, end - start);
        start = end + 1;
        if (line == "model:") {
            inModel = true;
            std::string quoted;
            for (const char c : file)
                quoted += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
            text += line + "\n  hf_config: \"" + quoted + "\"\n";
            continue;
        }
        if (inModel && line.rfind("  ", 0) == 0)
            continue;
        inModel = false;
        text += line + "\n";
    }
    m_editor->showInvalidText(QString::fromStdString(text), diagnostics);
    m_configDock->show();
    setStatus(tr("%1 has %2; fix the file and Apply")
                  .arg(QFileInfo(path).fileName(),
                      countNoun(std::count_if(diagnostics.begin(), diagnostics.end(),
                                    [](const Diagnostic& d) { return d.severity == Severity::Error; }),
                          tr("error"), tr("errors"))),
        true);
    return false;
}

void MainWindow::importHfConfigWithDialog()
{
    const QString dir = m_document->filePath().isEmpty() ? QString() : QFileInfo(m_document->filePath()).path();
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Import Hugging Face Config"), dir, tr("Hugging Face config (*.json);;All files (*)"));
    if (!path.isEmpty())
        importHfConfig(path);
}

void MainWindow::updateTitle()
{
    setWindowTitle(m_document->displayName() + QStringLiteral("[*]"));
    setWindowFilePath(m_document->filePath());
    setWindowModified(m_document->isModified());
}

void MainWindow::rebuildRecentMenu()
{
    m_recentMenu->clear();
    const QStringList files = m_recentFiles->files();
    for (int i = 0; i < files.size(); ++i) {
        const QString path = files[i];
        const QString text = QStringLiteral("&%1  %2").arg(i + 1).arg(QFileInfo(path).fileName());
        QAction* action = m_recentMenu->addAction(text, this, [this, path] {
            if (maybeSave())
                openFile(path);
        });
        action->setStatusTip(QDir::toNativeSeparators(path));
        action->setToolTip(action->statusTip());
    }
    m_recentMenu->setToolTipsVisible(true);
    if (!files.isEmpty())
        m_recentMenu->addSeparator();
    QAction* clear = m_recentMenu->addAction(tr("&Clear Menu"), m_recentFiles, &RecentFiles::clear);
    clear->setEnabled(!files.isEmpty());
}

bool MainWindow::hasUnsavedChanges() const
{
    return m_document->isModified() || m_editor->hasEditedText();
}

bool MainWindow::maybeSave()
{
    if (!hasUnsavedChanges())
        return true;
    if (m_editor->hasUnappliedText() && !m_editor->textLoads()) {
        // Text that does not load cannot be saved: offering Save would write the last good config over the file.
        const auto answer = QMessageBox::question(this, tr("Unsaved changes"),
            tr("The YAML text of \u201c%1\u201d has errors, so it cannot be saved. Discard your edits?")
                .arg(m_document->displayName()),
            QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Cancel);
        return answer == QMessageBox::Discard;
    }
    const auto answer = QMessageBox::question(this, tr("Unsaved changes"),
        tr("The configuration \u201c%1\u201d has unsaved changes. Save them?").arg(m_document->displayName()),
        QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
    if (answer == QMessageBox::Save)
        return save();
    return answer == QMessageBox::Discard;
}

bool MainWindow::save()
{
    if (m_document->filePath().isEmpty())
        return saveAs();
    if (m_editor->hasUnappliedText() && !m_editor->applyYaml()) {
        setStatus(tr("Not saved: the YAML text has errors (see Problems)"), true);
        return false;
    }
    QString error;
    if (!m_document->saveAs(m_document->filePath(), &error)) {
        setStatus(tr("Saving %1 failed: %2").arg(m_document->filePath(), error), true);
        return false;
    }
    m_recentFiles->add(m_document->filePath());
    setStatus(savedText(m_document->filePath(), m_document->baseline().config.has_value()));
    return true;
}

bool MainWindow::saveAs()
{
    if (m_editor->hasUnappliedText() && !m_editor->applyYaml()) {
        setStatus(tr("Not saved: the YAML text has errors (see Problems)"), true);
        return false;
    }
    QString suggestion = m_document->filePath();
    if (suggestion.isEmpty())
        suggestion = QString::fromStdString(m_document->config().name) + QStringLiteral(".yaml");
    QString path = QFileDialog::getSaveFileName(
        this, tr("Save Configuration"), suggestion, tr("YAML files (*.yaml *.yml);;All files (*)"));
    if (path.isEmpty())
        return false;
    if (QFileInfo(path).suffix().isEmpty())
        path += QStringLiteral(".yaml");
    QString error;
    if (!m_document->saveAs(path, &error)) {
        setStatus(tr("Saving %1 failed: %2").arg(path, error), true);
        return false;
    }
    m_recentFiles->add(path);
    setStatus(savedText(path, m_document->baseline().config.has_value()));
    return true;
}

ExportDialog* MainWindow::openExportDialog()
{
    if (!m_shownResult)
        return nullptr;
    if (m_editor->hasTextErrors() || m_session->isRunning())
        setStatus(tr("Exporting the shown result (%1), not the config being edited")
                      .arg(QString::fromStdString(m_shownResult->config.name)));
    auto* dialog = new ExportDialog(m_shownResult, m_persistSettings, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowModality(Qt::WindowModal);
    dialog->show();
    return dialog;
}

LayoutEditorDialog* MainWindow::openLayoutEditor()
{
    auto* dialog = new LayoutEditorDialog(m_document->config(), this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowModality(Qt::WindowModal);
    connect(dialog, &QDialog::accepted, this, [this, dialog] {
        Config config = m_document->config();
        ParallelismConfig& p = config.parallelism;
        p.pipelineLayout = dialog->layoutText().toStdString();
        // A layout says where every layer goes: the shorthands for one cannot stand beside it.
        p.firstStageLayers = p.lastStageLayers = 0;
        p.embeddingInSplit = p.lossInSplit = false;
        if (config != m_document->config())
            m_document->edit(config, tr("Set the pipeline layout to %1").arg(dialog->layoutText()));
    });
    dialog->show();
    return dialog;
}

void MainWindow::openWithDialog()
{
    if (!maybeSave())
        return;
    const QString dir = m_document->filePath().isEmpty() ? QString() : QFileInfo(m_document->filePath()).path();
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open Configuration"), dir, tr("YAML files (*.yaml *.yml);;All files (*)"));
    if (!path.isEmpty())
        openFile(path);
}

void MainWindow::about()
{
    QMessageBox::about(this, tr("About Stagecraft"),
        tr("<h3>Stagecraft %1</h3>"
           "<p>Synthesizes the per-GPU execution traces of distributed LLM training from a model and a "
           "parallelism plan (data, tensor, pipeline, context and expert parallelism, ZeRO), and exports them "
           "as Chakra execution traces.</p>"
           "<p>Built with Qt %2. MIT licence.</p>")
            .arg(QString::fromLatin1(versionString()), QString::fromLatin1(qVersion())));
}

void MainWindow::startSynthesis()
{
    m_synthesisTimer->stop();
    m_session->start(m_document->config());
}

void MainWindow::onSynthesisStarted()
{
    m_cancelButton->setEnabled(true);
    m_progress->setValue(0);
    m_progress->setVisible(true);
    setStatus(tr("Synthesizing %1\u2026").arg(QString::fromStdString(m_document->config().name)));
}

void MainWindow::onProgress(int permille, const QString& stage)
{
    m_progress->setValue(permille);
    if (!stage.isEmpty())
        setStatus(tr("Synthesizing: %1").arg(stage));
}

void MainWindow::onResult(std::shared_ptr<const SynthesisResult> result)
{
    m_cancelButton->setEnabled(false);
    m_progress->setVisible(false);
    m_shownResult = result;
    ++m_resultGeneration;
    m_exportAction->setEnabled(true);
    m_pinAction->setEnabled(true);
    // Only the tab on screen works on the new result now; the others get it when they are shown (each view's
    // work — layout, down-sampling, the estimate — is wasted on a tab nobody looks at before the next edit).
    for (ResultView* view : std::as_const(m_views))
        view->setStale(false);
    deliverResult(currentResultView());
    m_editor->setSynthesisDiagnostics({});
    const qint64 classes = static_cast<qint64>(result->classes.size());
    const qint64 ms = m_session->lastDurationMs();
    const QString duration =
        ms < 1000 ? tr("%1 ms").arg(ms) : tr("%1 s").arg(QString::number(double(ms) / 1000.0, 'f', 1));
    setStatus(tr("Synthesized %1, %2 in %3")
                  .arg(countNoun(result->worldSize(), tr("rank"), tr("ranks")),
                      countNoun(classes, tr("class"), tr("classes")), duration));
    if (m_editor->hasTextErrors()) {
        // A file that did not load: the result is of the last good config, not of the file.
        setStale(true);
        setStatus(tr("%1 has errors; fix them in the YAML tab and Apply (showing %2)")
                      .arg(m_document->displayName(), QString::fromStdString(result->config.name)),
            true);
    }
    Q_EMIT resultShown();
}

void MainWindow::onFailure(const QList<Diagnostic>& diagnostics)
{
    m_cancelButton->setEnabled(false);
    m_progress->setVisible(false);
    m_editor->setSynthesisDiagnostics(diagnostics);
    setStale(m_shownResult != nullptr);
    const QString reason = firstError(diagnostics);
    const qint64 errors = std::count_if(
        diagnostics.begin(), diagnostics.end(), [](const Diagnostic& d) { return d.severity == Severity::Error; });
    QString text = tr("Not synthesized: %1").arg(reason.isEmpty() ? tr("unknown error") : reason);
    if (errors > 1)
        text += tr(" (and %1)").arg(countNoun(errors - 1, tr("more error"), tr("more errors")));
    if (m_shownResult)
        text += tr(" \u2014 showing the last result");
    setStatus(text, true);
}

void MainWindow::onCancelled()
{
    m_cancelButton->setEnabled(false);
    m_progress->setVisible(false);
    setStale(m_shownResult != nullptr);
    setStatus(m_shownResult ? tr("Synthesis cancelled \u2014 showing the last result (F5 runs it again)")
                            : tr("Synthesis cancelled (F5 runs it again)"));
}

void MainWindow::onTextReverted()
{
    // The text of a file that did not load is gone: when the shown result is of the config now edited, it is no
    // longer stale and nothing is wrong; else synthesize the config now (the debounce has nothing to wait for).
    if (m_shownResult && m_shownResult->config == m_document->config()) {
        m_editor->setSynthesisDiagnostics({});
        setStale(false);
        setStatus(tr("Reverted the text: showing %1").arg(QString::fromStdString(m_shownResult->config.name)));
    } else {
        startSynthesis();
    }
}

void MainWindow::setStatus(const QString& text, bool error)
{
    m_statusLabel->setText(text);
    m_statusLabel->setStyleSheet(error ? QStringLiteral("color: #b71c1c;") : QString());
}

void MainWindow::setStale(bool stale)
{
    for (ResultView* view : std::as_const(m_views))
        view->setStale(stale);
}

void MainWindow::restoreSettings()
{
    if (!m_persistSettings)
        return;
    QSettings settings;
    settings.beginGroup(QStringLiteral("mainWindow"));
    restoreGeometry(settings.value(QStringLiteral("geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("state")).toByteArray());
    showTab(settings.value(QStringLiteral("tab")).toString());
    settings.endGroup();
}

void MainWindow::saveSettings()
{
    if (!m_persistSettings)
        return;
    QSettings settings;
    settings.beginGroup(QStringLiteral("mainWindow"));
    settings.setValue(QStringLiteral("geometry"), saveGeometry());
    settings.setValue(QStringLiteral("state"), saveState());
    if (QWidget* current = m_tabs->currentWidget())
        settings.setValue(QStringLiteral("tab"), current->objectName());
    settings.endGroup();
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    if (!maybeSave()) {
        event->ignore();
        return;
    }
    saveSettings();
    m_session->cancel();
    m_baselineSession->cancel();
    event->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event)
{
    const QList<QUrl> urls = event->mimeData()->urls();
    if (!urls.isEmpty() && isConfigFile(urls.front()))
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event)
{
    const QList<QUrl> urls = event->mimeData()->urls();
    if (urls.isEmpty() || !isConfigFile(urls.front()))
        return;
    event->acceptProposedAction();
    const QString path = urls.front().toLocalFile();
    // Ask about unsaved changes after the drop has returned to the source application.
    QTimer::singleShot(0, this, [this, path] {
        if (maybeSave())
            openFile(path);
    });
}

} // namespace stagecraft
