// SPDX-License-Identifier: MIT
#pragma once

#include "session/configdocument.h"

#include <QUndoCommand>

namespace stagecraft {

/// Pinning or clearing a ConfigDocument's baseline, as an undo step ("Pin Baseline", "Clear Baseline"): the
/// baseline before and after. It keeps both results alive, so that undo and redo show them again at once instead
/// of synthesizing them again.
class BaselineCommand : public QUndoCommand
{
public:
    BaselineCommand(
        ConfigDocument* document, ConfigDocument::Baseline before, ConfigDocument::Baseline after, const QString& text);
    ~BaselineCommand() override;

    void undo() override;
    void redo() override;

private:
    ConfigDocument* m_document;
    ConfigDocument::Baseline m_before;
    ConfigDocument::Baseline m_after;
};

} // namespace stagecraft
