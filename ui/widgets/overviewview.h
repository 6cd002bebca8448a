// SPDX-License-Identifier: MIT
#pragma once

#include "session/latestrun.h"
#include "widgets/resultview.h"

#include <QHash>

class QFrame;
class QGridLayout;
class QLabel;
class QListWidget;
class QTableView;

namespace stagecraft {

class ClassTableProxy;
class ComparisonModel;
class ElidedLabel;
class OverviewModel;
struct ServingEstimate;
struct StepEstimate;

/// The Overview tab: the workload at a glance (world, parameters, FLOPs, batches, step time), one table row per rank
/// class (OverviewModel) and the result's warnings. The figure cards flow into as many columns as the width gives
/// them room for (one row on a wide window, two on a laptop); a detail that still does not fit is elided, with the
/// whole text as its tooltip.
///
/// With a baseline pinned (setBaseline(), MainWindow's "Pin as Baseline"), a table compares it with the shown
/// result figure by figure (ComparisonModel: step time, MFU, tokens/s, peak memory per stage, bytes per collective).
///
/// The step-time estimate (estimateStep() on the config's GPU, default options) runs in a worker (LatestRun);
/// estimates of superseded results are dropped. Until it arrives the card
/// says "estimating…"; when it fails the card shows the reason.
///
/// A serving result (workload: inference) shows the serving figures instead of a training iteration's: the
/// sequences served, the KV cache per rank at the end of the generation and how many sequences fit, and from
/// estimateServing() the time to first token, the time per output token (with what a decode step reads and its
/// HBM-bound time) and the throughput; the class table leaves out the training estimate's columns.
class OverviewView : public ResultView
{
    Q_OBJECT
public:
    explicit OverviewView(QWidget* parent = nullptr);
    ~OverviewView() override;

    void setResult(std::shared_ptr<const SynthesisResult> result) override;
    void setStale(bool stale) override;

    OverviewModel* model() const;
    QTableView* table() const;
    QListWidget* warnings() const;
    /// The value text of a header figure ("world", "params", "flops", "microbatches", "tokens", "classes", "step";
    /// serving: "sequences", "kvcache", "ttft", "tpot", "throughput" in place of "microbatches", "tokens", "step").
    QString figure(const QString& name) const;
    /// The smaller text under a header figure ("1,705,216" under "1.71 M").
    QString figureDetail(const QString& name) const;
    /// The tooltip of a header figure's card.
    QString figureToolTip(const QString& name) const;
    /// True while the step-time estimate of the shown result runs.
    bool isEstimating() const;
    /// The serving estimate of the shown result: null for a training result, while it runs, or when it failed.
    const std::shared_ptr<const ServingEstimate>& servingEstimate() const;
    /// Whether the card `name` is shown for the current result (training and serving show different cards).
    bool isFigureShown(const QString& name) const;

    /// Compares the shown result with `baseline` (null: clears it). Its estimate is the one this view has when
    /// `baseline` is the shown result; otherwise (a baseline synthesized again after a load) it runs in a second
    /// worker, and its estimate rows show a dash until it arrives.
    void setBaseline(std::shared_ptr<const SynthesisResult> baseline) override;
    ComparisonModel* comparisonModel() const;
    QTableView* comparisonTable() const;
    /// False while the step-time estimate of the shown result runs.
    bool isSettled() const override;

Q_SIGNALS:
    /// The step-time estimate of the shown result arrived (succeeded or failed) and the model and card show it.
    void estimateAvailable();

protected:
    void resizeEvent(QResizeEvent* event) override;
    /// The page's width changes with the scroll bar: the columns and heights follow.
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    struct Card
    {
        QFrame* frame = nullptr;
        QLabel* value = nullptr;
        QLabel* detail = nullptr; ///< an ElidedLabel, but the step card's wraps
    };
    void addCard(const QString& name, const QString& title, const QString& toolTip);
    void setCard(const QString& name, const QString& value, const QString& detail);
    /// Puts the cards in as many columns as fit the width at their preferred size (rows of equal length).
    void reflowCards();
    /// Sizes the table's columns to their header and values and spreads the rest of the width over them; when that
    /// is too wide, the headers go on two lines first.
    void fitColumns();
    void fitHeights();
    void requestEstimate();
    void requestBaselineEstimate();
    void emitIfSettled();
    void showEstimate();
    void updateEstimateCard();
    void updateServingCards();
    /// Shows the cards of a training or a serving result and the class table's estimate columns for training.
    void showCardsFor(bool serving);

    OverviewModel* m_model;
    ClassTableProxy* m_proxy;
    QLabel* m_title;
    QLabel* m_subtitle;
    QLabel* m_staleBanner;
    QLabel* m_assumptions; ///< what the estimate assumed: kernel efficiencies, links, overlaps
    QLabel* m_tableLabel = nullptr;
    QTableView* m_table;
    QListWidget* m_warnings;
    ComparisonModel* m_comparison;
    QLabel* m_comparisonLabel;
    QTableView* m_comparisonTable;
    QLabel* m_warningsLabel;
    QHash<QString, Card> m_cards;
    QList<QFrame*> m_cardOrder;
    QWidget* m_cardArea;
    /// The page in a vertical scroll area: a long page (a baseline's comparison, many notes) scrolls instead of
    /// squeezing its tables or raising the window's minimum height.
    QWidget* m_page = nullptr;
    bool m_fitting = false; ///< fitHeights() from a resize of the page is running
    QGridLayout* m_cardGrid;
    int m_cardColumns = 0;
    LatestRun m_run;
    LatestRun m_baselineRun; ///< the baseline's estimate, when it is not the shown result's
    std::shared_ptr<const SynthesisResult> m_baselineEstimateFor;
    std::shared_ptr<const StepEstimate> m_baselineEstimate;
    std::shared_ptr<const ServingEstimate> m_serving; ///< of m_model->result(), a serving result's
    QString m_servingError;
    bool m_showsServing = false;
};

} // namespace stagecraft
