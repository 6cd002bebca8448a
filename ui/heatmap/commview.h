// SPDX-License-Identifier: MIT
#pragma once

#include "heatmap/commmatrix.h"
#include "session/latestrun.h"
#include "widgets/resultview.h"

#include <array>

class QCheckBox;
class QComboBox;
class QLabel;
class QSortFilterProxyModel;
class QTableView;

namespace stagecraft {

class CommMatrixModel;
class FabricLevelPanel;
class GroupsModel;
class HeatmapWidget;

/// The Communication tab: a sender x receiver heatmap of the bytes exchanged per iteration (HeatmapWidget over
/// CommMatrixModel), filtered by collective type and mesh axis, at the resolution of ranks, nodes or one mesh
/// axis; a colour legend, the attribution rule (ring; all-to-all pairwise), the hovered pair, and the table of
/// communicator groups (GroupsModel). The matrix and its image are built in a worker (LatestRun): results of
/// superseded requests are dropped.
///
/// Embed: `auto* v = new CommView; window->addResultView(v, tr("Communication"), "communication");`.
class CommView : public ResultView
{
    Q_OBJECT
public:
    explicit CommView(QWidget* parent = nullptr);
    ~CommView() override;

    void setResult(std::shared_ptr<const SynthesisResult> result) override;
    void setStale(bool stale) override;

    /// Applies `options` (an unavailable grouping falls back to the default) and rebuilds the matrix.
    void setOptions(const CommMatrixOptions& options);
    CommMatrixOptions options() const;
    void setGrouping(CommGrouping grouping);
    /// True while a matrix request is running or queued.
    bool isUpdating() const;
    /// False while the matrix of the latest request is still being built.
    bool isSettled() const override;

    CommMatrixModel* matrixModel() const;
    GroupsModel* groupsModel() const;
    HeatmapWidget* heatmap() const;
    QTableView* groupsTable() const;
    QComboBox* groupingCombo() const;
    QLabel* hoverLabel() const;
    QLabel* summaryLabel() const;
    /// Bytes by fabric level (cluster.topology), refreshed with the matrix.
    FabricLevelPanel* levelPanel() const;

Q_SIGNALS:
    /// The heatmap and the matrix model show the latest request.
    void matrixAvailable();

private:
    struct Built;
    void requestMatrix();
    void applyMatrix(const Built& built);
    void readControls();
    void syncControls();
    void showHovered(int row, int column);
    void highlightSelectedGroup();

    std::shared_ptr<const SynthesisResult> m_result;
    CommMatrixOptions m_options;
    CommMatrixModel* m_matrixModel;
    GroupsModel* m_groupsModel;
    QSortFilterProxyModel* m_groupsProxy;
    HeatmapWidget* m_heatmap;
    QTableView* m_groupsTable;
    QComboBox* m_groupingCombo;
    std::array<QCheckBox*, kCommKindCount> m_kindChecks {};
    std::array<QCheckBox*, 5> m_axisChecks {};
    QLabel* m_hoverLabel;
    QLabel* m_summaryLabel;
    QLabel* m_legendLabel;
    QLabel* m_groupsLabel;
    QLabel* m_staleBanner;
    FabricLevelPanel* m_levelPanel = nullptr;
    LatestRun m_run;
    bool m_syncing = false;
};

} // namespace stagecraft
