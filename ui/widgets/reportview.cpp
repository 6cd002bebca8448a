// SPDX-License-Identifier: MIT
#include "widgets/reportview.h"

#include "report/report.h"

#include <QFontDatabase>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QVBoxLayout>

namespace stagecraft {

ReportView::ReportView(QWidget* parent)
    : ResultView(parent)
    , m_text(new QPlainTextEdit(this))
{
    m_text->setObjectName(QStringLiteral("reportText"));
    m_text->setReadOnly(true);
    m_text->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_text->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_text->setFrameShape(QFrame::NoFrame);
    m_text->document()->setDocumentMargin(10);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_text);
}

ReportView::~ReportView() = default;

void ReportView::setResult(std::shared_ptr<const SynthesisResult> result)
{
    if (!result)
        return;
    // Keep the reader's place when the report is regenerated after an edit.
    const int vertical = m_text->verticalScrollBar()->value();
    const int horizontal = m_text->horizontalScrollBar()->value();
    m_text->setPlainText(QString::fromStdString(reportText(*result)));
    m_text->verticalScrollBar()->setValue(vertical);
    m_text->horizontalScrollBar()->setValue(horizontal);
}

QPlainTextEdit* ReportView::textEdit() const
{
    return m_text;
}

} // namespace stagecraft
