// SPDX-License-Identifier: MIT
#include "session/baselinecommand.h"

namespace stagecraft {

BaselineCommand::BaselineCommand(
    ConfigDocument* document, ConfigDocument::Baseline before, ConfigDocument::Baseline after, const QString& text)
    : QUndoCommand(text)
    , m_document(document)
    , m_before(std::move(before))
    , m_after(std::move(after))
{
}

BaselineCommand::~BaselineCommand() = default;

void BaselineCommand::undo()
{
    m_document->applyBaseline(m_before);
}

void BaselineCommand::redo()
{
    m_document->applyBaseline(m_after);
}

} // namespace stagecraft
