// SPDX-License-Identifier: MIT
#pragma once

#include "config/config.h"
#include "config/diagnostic.h"

#include <QHash>
#include <QList>
#include <QMainWindow>
#include <memory>
#include <optional>

class QActionGroup;
class QDockWidget;
class QLabel;
class QMenu;
class QProgressBar;
class QTabWidget;
class QTimer;
class QToolButton;

namespace stagecraft {

class ConfigDocument;
class ConfigEditor;
class ExportDialog;
class LayoutEditorDialog;
class OverviewView;
class RecentFiles;
class ReportView;
class ResultView;
class SynthesisSession;
struct SynthesisResult;

/// The Stagecraft window: the config editor docked on the left, result views as tabs in the centre, synthesis
/// status, progress and Cancel in the status bar. Every config edit re-synthesizes after a short debounce; the
/// views keep the last good result while a run is in flight or has failed.
class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    /// `persistSettings` = false neither reads nor writes QSettings (tests, screenshots).
    explicit MainWindow(bool persistSettings = true, QWidget* parent = nullptr);
    ~MainWindow() override;

    /// Restores geometry, dock state and the current tab from the last run (QSettings).
    void restoreSettings();

    /// Opens `pathOrPreset` as a YAML file when such a file exists, else as a built-in preset, with `overrides`
    /// ("parallelism.tp=4", as `--set`) applied; a file with overrides opens modified. Returns false and sets
    /// `error` when it is neither, or when the overrides do not give a valid config. Does not ask about unsaved
    /// changes.
    bool openConfigOrPreset(const QString& pathOrPreset, const QStringList& overrides = {}, QString* error = nullptr);
    /// Opens a YAML file. A file with errors opens in the YAML tab with its problems listed.
    bool openFile(const QString& path);
    /// Starts a new, unsaved document from a built-in preset.
    bool newFromPreset(const QString& name);
    /// File > Import Hugging Face Config: replaces the model of the current config with the one mapped from the
    /// config.json at `path`, and its name with hfDefaultName(path), as one undoable edit. When the file does not map,
    /// the YAML tab shows the current config with `model.hf_config: <path>` and the problems (they point into the JSON
    /// file); Apply retries. Returns whether the model was replaced.
    bool importHfConfig(const QString& path);

    /// Adds a result tab; `name` is its id for showTab() and --tab (e.g. "graph").
    void addResultView(ResultView* view, const QString& title, const QString& name);
    /// Makes the tab with id or title `name` (case-insensitive) current; false when there is none.
    bool showTab(const QString& name);
    QStringList tabNames() const;
    /// The result view of the current tab.
    ResultView* currentResultView() const;
    /// True when `view` has been given the shown result (views get it when their tab is first shown).
    bool hasCurrentResult(const ResultView* view) const;

    /// File > Export Chakra Trace: opens the export dialog over the shown result (window-modal, deleted on
    /// close) and returns it; null when there is no result yet.
    ExportDialog* openExportDialog();
    /// Edit > Pipeline Layout: the layout editor over the config being edited (modal to the window); OK applies
    /// its layout as one undoable edit (clearing the split keys a layout replaces).
    LayoutEditorDialog* openLayoutEditor();

    /// Edit > Pin as Baseline: keeps the shown result (and its step-time estimate, when it has arrived) as the
    /// baseline the Overview, the Memory tab and the Sweep compare every later result with. An undo step of the
    /// document ("Pin Baseline"), saved with it (ConfigDocument::baselinePath()). False when there is no result yet.
    bool pinBaseline();
    /// Edit > Clear Baseline (an undo step, "Clear Baseline").
    void clearBaseline();
    /// The pinned result, or null (also while a loaded baseline is synthesized again).
    std::shared_ptr<const SynthesisResult> baselineResult() const;
    /// True while the baseline of a loaded document is being synthesized from its saved config.
    bool isSynthesizingBaseline() const;

    /// True when closing the document loses work: config edits not saved, or text typed in the YAML tab and not
    /// applied. Opening a file never makes it true.
    bool hasUnsavedChanges() const;

    ConfigDocument* document() const;
    SynthesisSession* session() const;
    ConfigEditor* configEditor() const;
    OverviewView* overviewView() const;
    ReportView* reportView() const;
    /// The result the views show (the last good one), or null.
    std::shared_ptr<const SynthesisResult> shownResult() const;
    /// Debounce between an edit and the synthesis it triggers, in ms.
    int synthesisDelayMs() const;
    /// Sets that debounce (benchmarks measure the work after it with 0).
    void setSynthesisDelayMs(int ms);

Q_SIGNALS:
    /// Every view has been given a new result.
    void resultShown();
    /// The views have been given a new baseline (or none), or a loaded baseline did not synthesize.
    void baselineShown();

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void createMenus();
    void createStatusBar();
    void updateTitle();
    void rebuildRecentMenu();
    bool maybeSave();
    bool save();
    bool saveAs();
    void openWithDialog();
    void importHfConfigWithDialog();

    void about();
    void startSynthesis();
    void onSynthesisStarted();
    void onProgress(int permille, const QString& stage);
    void onResult(std::shared_ptr<const SynthesisResult> result);
    void onFailure(const QList<Diagnostic>& diagnostics);
    void onCancelled();
    void onTextReverted();
    void onBaselineChanged();
    /// The baseline kept beside `path` (ConfigDocument::baselinePath()), when there is one that loads; `problem`
    /// says why one that is there does not.
    std::optional<Config> readBaselineFor(const QString& path, QString* problem) const;
    void setStatus(const QString& text, bool error = false);
    void setStale(bool stale);
    void saveSettings();
    /// Gives `view` the shown result unless it has it already.
    void deliverResult(ResultView* view);

    bool m_persistSettings;
    ConfigDocument* m_document;
    SynthesisSession* m_session;
    SynthesisSession* m_baselineSession; ///< synthesizes a loaded baseline's config
    RecentFiles* m_recentFiles;
    ConfigEditor* m_editor;
    QDockWidget* m_configDock;
    QTabWidget* m_tabs;
    OverviewView* m_overview;
    ReportView* m_report;
    QList<ResultView*> m_views;
    QMenu* m_viewMenu = nullptr;
    QAction* m_exportAction = nullptr;
    QAction* m_pinAction = nullptr;
    QAction* m_clearBaselineAction = nullptr;
    QProgressBar* m_baselineProgress = nullptr;
    QMenu* m_recentMenu = nullptr;
    QActionGroup* m_tabActions = nullptr;
    QLabel* m_statusLabel = nullptr;
    QProgressBar* m_progress = nullptr;
    QToolButton* m_cancelButton = nullptr;
    QTimer* m_synthesisTimer;
    std::shared_ptr<const SynthesisResult> m_shownResult;
    quint64 m_resultGeneration = 0; ///< counts the results shown; 0 = none
    /// The generation of the result each view was last given.
    QHash<const ResultView*, quint64> m_delivered;
};

} // namespace stagecraft
