// SPDX-License-Identifier: MIT
#pragma once

#include "widgets/resultview.h"

class QPlainTextEdit;

namespace stagecraft {

/// The text report (core reportText(), what `stagecraft report` prints) in a read-only monospace view.
class ReportView : public ResultView
{
    Q_OBJECT
public:
    explicit ReportView(QWidget* parent = nullptr);
    ~ReportView() override;

    void setResult(std::shared_ptr<const SynthesisResult> result) override;
    QPlainTextEdit* textEdit() const;

private:
    QPlainTextEdit* m_text;
};

} // namespace stagecraft
