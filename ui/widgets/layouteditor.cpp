// SPDX-License-Identifier: MIT
#include "widgets/layouteditor.h"

#include "program/stageplan.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

namespace stagecraft {

namespace {

    enum Column
    {
        StageColumn,
        VirtualColumn,
        EmbeddingColumn,
        DecoderColumn,
        MtpColumn,
        LossColumn,
        ColumnCount
    };

    int64_t itemCount(const std::vector<LayoutItem>& chunk, LayoutItem item)
    {
        int64_t n = 0;
        for (LayoutItem i : chunk)
            n += i == item ? 1 : 0;
        return n;
    }

} // namespace

LayoutEditorDialog::LayoutEditorDialog(const Config& config, QWidget* parent)
    : QDialog(parent)
    , m_config(config)
    , m_table(new QTableWidget(this))
    , m_text(new QLabel(this))
    , m_status(new QLabel(this))
    , m_buttons(new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this))
{
    setWindowTitle(tr("Pipeline Layout"));
    const StagePlan plan = StagePlan::forConfig(config);
    const PipelineLayout& start = plan.layout();
    m_chunks = static_cast<int32_t>(start.chunkCount());

    auto* intro = new QLabel(tr("Where every layer runs: one row per pipeline chunk, on the stage and virtual stage "
                                "the %1 schedule gives it. The loss row also holds the final norm and the output "
                                "head; MTP modules follow the last decoder layer.")
                                 .arg(QString::fromLatin1(toString(config.parallelism.schedule))),
        this);
    intro->setWordWrap(true);
    m_table->setColumnCount(ColumnCount);
    m_table->setHorizontalHeaderLabels(
        { tr("Stage"), tr("Virtual stage"), tr("Embedding"), tr("Decoder layers"), tr("MTP modules"), tr("Loss") });
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 12);
    m_table->setRowCount(m_chunks);
    QStringList rowNames;
    for (int32_t g = 0; g < m_chunks; ++g) {
        rowNames << tr("chunk %1").arg(g);
        auto* stage = new QTableWidgetItem(QString::number(plan.stageOfChunk(g)));
        auto* virt = new QTableWidgetItem(QString::number(plan.localChunk(g)));
        for (QTableWidgetItem* item : { stage, virt }) {
            item->setFlags(Qt::ItemIsEnabled);
            item->setTextAlignment(Qt::AlignCenter);
        }
        m_table->setItem(g, StageColumn, stage);
        m_table->setItem(g, VirtualColumn, virt);
        for (int column : { EmbeddingColumn, LossColumn }) {
            auto* box = new QCheckBox(m_table);
            box->setObjectName(column == EmbeddingColumn ? QStringLiteral("embedding") : QStringLiteral("loss"));
            connect(box, &QCheckBox::toggled, this, &LayoutEditorDialog::refresh);
            m_table->setCellWidget(g, column, box);
        }
        for (int column : { DecoderColumn, MtpColumn }) {
            auto* spin = new QSpinBox(m_table);
            spin->setRange(0, column == DecoderColumn ? 1 << 20 : 64);
            connect(spin, &QSpinBox::valueChanged, this, &LayoutEditorDialog::refresh);
            m_table->setCellWidget(g, column, spin);
        }
    }
    m_table->setVerticalHeaderLabels(rowNames);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);

    m_text->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_text->setWordWrap(true);
    m_status->setWordWrap(true);
    QPushButton* even = m_buttons->addButton(tr("Spread &Evenly"), QDialogButtonBox::ResetRole);
    connect(even, &QPushButton::clicked, this, &LayoutEditorDialog::spreadEvenly);
    connect(m_buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(intro);
    layout->addWidget(m_table, 1);
    layout->addWidget(m_text);
    layout->addWidget(m_status);
    layout->addWidget(m_buttons);
    resize(680, 480);
    fill(start);
}

QTableWidget* LayoutEditorDialog::table() const
{
    return m_table;
}

void LayoutEditorDialog::fill(const PipelineLayout& layout)
{
    for (int32_t g = 0; g < m_chunks; ++g) {
        const std::vector<LayoutItem>& chunk = layout.chunks[static_cast<size_t>(g)];
        auto set = [&](int column, int value) {
            QWidget* w = m_table->cellWidget(g, column);
            const QSignalBlocker blocker(w);
            if (auto* box = qobject_cast<QCheckBox*>(w))
                box->setChecked(value != 0);
            else if (auto* spin = qobject_cast<QSpinBox*>(w))
                spin->setValue(value);
        };
        set(EmbeddingColumn, static_cast<int>(itemCount(chunk, LayoutItem::Embedding)));
        set(DecoderColumn, static_cast<int>(itemCount(chunk, LayoutItem::Decoder)));
        set(MtpColumn, static_cast<int>(itemCount(chunk, LayoutItem::Mtp)));
        set(LossColumn, static_cast<int>(itemCount(chunk, LayoutItem::Loss)));
    }
    refresh();
}

PipelineLayout LayoutEditorDialog::layout() const
{
    // Within a chunk the items run in model order: embedding, decoder layers, MTP modules, loss (Megatron-Core
    // computes the MTP modules' losses with the main loss, on the last chunk).
    PipelineLayout l;
    for (int32_t g = 0; g < m_chunks; ++g) {
        std::vector<LayoutItem> chunk;
        auto checked = [&](int column) {
            return qobject_cast<QCheckBox*>(m_table->cellWidget(g, column))->isChecked();
        };
        auto count = [&](int column) { return qobject_cast<QSpinBox*>(m_table->cellWidget(g, column))->value(); };
        if (checked(EmbeddingColumn))
            chunk.push_back(LayoutItem::Embedding);
        chunk.insert(chunk.end(), static_cast<size_t>(count(DecoderColumn)), LayoutItem::Decoder);
        chunk.insert(chunk.end(), static_cast<size_t>(count(MtpColumn)), LayoutItem::Mtp);
        if (checked(LossColumn))
            chunk.push_back(LayoutItem::Loss);
        l.chunks.push_back(std::move(chunk));
    }
    return l;
}

QString LayoutEditorDialog::layoutText() const
{
    return QString::fromStdString(layout().toString());
}

QString LayoutEditorDialog::problem() const
{
    // Checked on the parsed text, so that the offsets of the check refer to the string shown.
    LayoutError error;
    const std::string text = layout().toString();
    const std::optional<PipelineLayout> parsed = PipelineLayout::parse(text, error);
    if (!parsed)
        return QString::fromStdString(error.message);
    if (const std::optional<LayoutError> e =
            checkLayout(*parsed, m_config.model.layers, m_config.model.mtpModules, m_config.parallelism.pp))
        return QString::fromStdString(e->message);
    return {};
}

void LayoutEditorDialog::setDecoderLayers(int row, int layers)
{
    if (auto* spin = qobject_cast<QSpinBox*>(m_table->cellWidget(row, DecoderColumn)))
        spin->setValue(layers);
}

void LayoutEditorDialog::spreadEvenly()
{
    PipelineLayout l = layout();
    const int64_t layers = m_config.model.layers;
    for (int32_t g = 0; g < m_chunks; ++g) {
        std::vector<LayoutItem>& chunk = l.chunks[static_cast<size_t>(g)];
        std::erase(chunk, LayoutItem::Decoder);
        const int64_t n = layers / m_chunks + (g < layers % m_chunks ? 1 : 0);
        // After the embedding, before the MTP modules and the loss.
        const auto at =
            std::find_if(chunk.begin(), chunk.end(), [](LayoutItem i) { return i != LayoutItem::Embedding; });
        chunk.insert(at, static_cast<size_t>(n), LayoutItem::Decoder);
    }
    fill(l);
}

void LayoutEditorDialog::refresh()
{
    int64_t placed = 0;
    for (int32_t g = 0; g < m_chunks; ++g)
        placed += qobject_cast<QSpinBox*>(m_table->cellWidget(g, DecoderColumn))->value();
    m_text->setText(
        tr("Layout: %1   (%2 of %3 decoder layers placed)").arg(layoutText()).arg(placed).arg(m_config.model.layers));
    const QString why = problem();
    m_status->setText(why.isEmpty() ? tr("The layout fits the model and the pipeline.") : why);
    m_status->setProperty("severity", why.isEmpty() ? QString() : QStringLiteral("error"));
    m_status->setStyleSheet(why.isEmpty() ? QString() : QStringLiteral("color: #b00020"));
    m_buttons->button(QDialogButtonBox::Ok)->setEnabled(why.isEmpty());
}

} // namespace stagecraft
