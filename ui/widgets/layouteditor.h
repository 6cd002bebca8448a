// SPDX-License-Identifier: MIT
#pragma once

#include "config/config.h"
#include "config/pipelinelayout.h"

#include <QDialog>

class QDialogButtonBox;
class QLabel;
class QTableWidget;

namespace stagecraft {

/// Edit ▸ Pipeline Layout: the config's pipeline layout as a table, one row per pipeline chunk (its stage and
/// virtual stage as the config's schedule places it), with the embedding, the decoder layers, the MTP modules and
/// the loss of each. Starts from parallelism.pipeline_layout, or from the split the config implies (the even split
/// or the first/last-stage and account-for keys). Every edit re-checks the layout against the model (the same check
/// as the config validator) and shows the Megatron-Core layout string it makes; OK is enabled only for a layout
/// that fits. "Spread Evenly" deals the decoder layers over the chunks as Megatron's even split does.
class LayoutEditorDialog : public QDialog
{
    Q_OBJECT
public:
    explicit LayoutEditorDialog(const Config& config, QWidget* parent = nullptr);

    /// The layout as the table holds it.
    PipelineLayout layout() const;
    /// Its Megatron-Core string (PipelineLayout::toString()).
    QString layoutText() const;
    /// The problem checkLayout() finds, empty when the layout fits the model and the pipeline.
    QString problem() const;
    QTableWidget* table() const;
    /// Sets the decoder layers of chunk `row` (as an edit in the table would).
    void setDecoderLayers(int row, int layers);
    /// Deals model.layers over the chunks: L / chunks each, the remainder to the earliest.
    void spreadEvenly();

private:
    void fill(const PipelineLayout& layout);
    void refresh();

    Config m_config;
    int32_t m_chunks = 0;
    QTableWidget* m_table;
    QLabel* m_text;
    QLabel* m_status;
    QDialogButtonBox* m_buttons;
};

} // namespace stagecraft
