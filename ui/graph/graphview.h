// SPDX-License-Identifier: MIT
#pragma once

#include "graph/graphspec.h"
#include "mesh/mesh.h"
#include "session/latestrun.h"
#include "widgets/resultview.h"

#include <QFutureWatcher>
#include <atomic>
#include <memory>

class QCheckBox;
class QComboBox;
class QGraphicsScene;
class QLabel;
class QLineEdit;
class QSpinBox;
class QTextBrowser;
class QTimer;

namespace stagecraft {

class GraphCanvas;
class GraphNodeItem;

/// The Graph tab: the program of one rank (its class's program, with the rank's groups and peers) over a layer and
/// micro-batch window, laid out by Graphviz dot in a worker and shown in a zoomable, pannable scene. Compute,
/// collective, send/recv and summary nodes have distinct shapes and colours; data edges are solid, schedule edges
/// dashed. A click shows the node's attributes, a double click on a summary opens its range. Layers and
/// micro-batches outside the window are collapsed into summary nodes, and no more than maxNodes() nodes are ever
/// laid out. While a layout runs the previous one stays on screen. Exports SVG and PNG.
///
/// A compressed result (SynthesisOptions::compressMicroBatches) holds only its first micro-batches; the micro-batch
/// range still spans the whole iteration, and a window past the kept ones synthesizes the plan in full, on demand
/// (in a worker, cancellable), and draws that instead.
class GraphView : public ResultView
{
    Q_OBJECT
public:
    explicit GraphView(QWidget* parent = nullptr);
    ~GraphView() override;

    void setStale(bool stale) override;

    std::shared_ptr<const SynthesisResult> result() const;
    /// What the shown graph was drawn from: result(), or, for a window past a compressed result's kept
    /// micro-batches, the same plan synthesized in full. Null before the first layout.
    std::shared_ptr<const SynthesisResult> drawnResult() const;
    /// True while the full synthesis a window past the kept micro-batches needs is running.
    bool isSynthesizingFull() const;
    /// Stops that synthesis and brings the window back into the kept micro-batches.
    void cancelFullSynthesis();
    /// The rank whose groups and peers the details show; its class's program is drawn.
    RankId rank() const;
    int32_t classIndex() const;
    /// The window asked for (the shown one may be smaller, see shownSpec().window).
    GraphWindow window() const;
    /// The node limit of the view (default kDefaultMaxNodes, at most GraphSpecOptions::kDefaultMaxNodes).
    int32_t maxNodes() const;
    /// dot needs about 1 to 3.5 s for 2,000 nodes of a real program window (3.9 to 7.5 s for 3,000).
    static constexpr int32_t kDefaultMaxNodes = 2000;

    /// Picks `rank` (clamped to the world); switching class resets the window to the class's default.
    void setRank(RankId rank);
    /// Picks the class's example rank.
    void setClassIndex(int32_t classIndex);
    void setWindow(const GraphWindow& window);
    void setMaxNodes(int32_t maxNodes);

    /// The spec and layout on screen (empty before the first layout arrives).
    const GraphSpec& shownSpec() const;
    const GraphLayout& shownLayout() const;
    /// True from a change of result, class or window until its layout is on screen.
    bool isLayingOut() const;
    /// Same as !isLayingOut(); settled() follows graphShown() and layoutFailed().
    bool isSettled() const override;

    QGraphicsScene* scene() const;
    GraphCanvas* canvas() const;
    /// The node item of spec node `specIndex`, or of program node `programNode`; null when not shown.
    GraphNodeItem* itemForSpecNode(int32_t specIndex) const;
    GraphNodeItem* itemForProgramNode(int32_t programNode) const;
    /// Selects and centres the item of `programNode`; false when it is not shown.
    bool selectProgramNode(int32_t programNode);
    /// Find: selects and centres the next drawn node (after the selected one, wrapping) whose title, subtitle or
    /// program node name contains `text` (case-insensitive). Returns how many drawn nodes match; 0 selects nothing.
    int findNode(const QString& text);
    /// The Find field of the toolbar (Ctrl+F; Return: the next match).
    QLineEdit* findEdit() const;
    /// The details panel as plain text.
    QString detailsText() const;
    /// The text under the graph (counts, layout time, window notes).
    QString statusText() const;

    bool exportSvg(const QString& path, QString* error = nullptr) const;
    bool exportPng(const QString& path, QString* error = nullptr) const;

public Q_SLOTS:
    void setResult(std::shared_ptr<const SynthesisResult> result) override;
    void fitToView();
    void zoomIn();
    void zoomOut();
    void resetZoom();
    /// Asks for a file name and exports SVG or PNG by its suffix.
    void exportGraph();

Q_SIGNALS:
    /// A layout arrived and the scene shows it.
    void graphShown();
    void layoutFailed(const QString& message);

private:
    struct Job
    {
        quint64 generation = 0;
        bool superseded = false;
        std::shared_ptr<const SynthesisResult> drawn; ///< the result the spec was built from
        GraphSpec spec;
        GraphLayout layout;
    };

    void buildUi();
    void populateSelectors();
    void syncControlsFromState();
    void controlsEdited();
    void scheduleLayout();
    void startLayout();
    void layoutFinished();
    void showJob(Job job);
    void updateDetails();
    void updateStatus();
    void activateNode(int specIndex);
    void followLink(const QUrl& link);
    void showWindowOf(int32_t programNode);
    /// The window reaches past the micro-batches a compressed result holds.
    bool needsFullResult() const;
    void startFullSynthesis();

    std::shared_ptr<const SynthesisResult> m_result;
    std::shared_ptr<const SynthesisResult> m_drawn; ///< what m_spec was built from
    /// m_result's plan synthesized in full, once a window needed it (kept while the config stays the same).
    std::shared_ptr<const SynthesisResult> m_fullResult;
    QString m_fullError; ///< why the full synthesis failed or was refused, for the same config
    LatestRun m_fullRun;
    std::shared_ptr<std::atomic<bool>> m_fullCancel; ///< stops the running full synthesis
    RankId m_rank {};
    int32_t m_class = 0;
    GraphWindow m_window;
    int32_t m_maxNodes;

    GraphSpec m_spec;
    GraphLayout m_layout;
    std::vector<GraphNodeItem*> m_items; ///< parallel to m_spec.nodes
    int32_t m_pendingSelection = -1; ///< program node to select when the next layout arrives
    bool m_fitOnShow = true;

    QFutureWatcher<Job> m_watcher;
    quint64 m_generation = 0;
    std::shared_ptr<std::atomic<quint64>> m_latestGeneration;
    bool m_busy = false;
    QTimer* m_debounce;
    bool m_updatingControls = false;

    QComboBox* m_classCombo;
    QSpinBox* m_rankSpin;
    QSpinBox* m_layerFirst;
    QSpinBox* m_layerLast;
    QSpinBox* m_mbFirst;
    QSpinBox* m_mbLast;
    QCheckBox* m_iterationWork;
    QLabel* m_busyLabel;
    QLabel* m_zoomLabel;
    QLineEdit* m_findEdit = nullptr;
    QLabel* m_findLabel = nullptr;
    QLabel* m_staleBanner;
    QLabel* m_status;
    QGraphicsScene* m_scene;
    GraphCanvas* m_canvas;
    QTextBrowser* m_details;
};

} // namespace stagecraft
