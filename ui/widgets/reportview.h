// SPDX-License-Identifier: MIT
#pragma once

#include "widgets/resultview.h"

#include <QString>

class QPlainTextEdit;

namespace stagecraft {

/// The text report (core reportText(), what `stagecraft report` prints) in a read-only monospace view. Lines of prose
/// (notes, assumptions) wrap to the view's width; table rows keep their columns.
class ReportView : public ResultView
{
    Q_OBJECT
public:
    explicit ReportView(QWidget* parent = nullptr);
    ~ReportView() override;

    void setResult(std::shared_ptr<const SynthesisResult> result) override;
    QPlainTextEdit* textEdit() const;

    /// Characters a line of the view holds.
    int columns() const;

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    void reflow();

    QPlainTextEdit* m_text;
    QString m_report; ///< reportText() as it is, unwrapped
    int m_columns = 0; ///< the width it was wrapped to
};

} // namespace stagecraft
