// SPDX-License-Identifier: MIT
#include "session/configeditcommand.h"

#include "session/configdocument.h"

namespace stagecraft {

ConfigEditCommand::ConfigEditCommand(
    ConfigDocument* document, Config before, Config after, const QString& text, int fieldId)
    : QUndoCommand(text)
    , m_document(document)
    , m_before(std::move(before))
    , m_after(std::move(after))
    , m_fieldId(fieldId)
{
}

ConfigEditCommand::~ConfigEditCommand() = default;

void ConfigEditCommand::undo()
{
    m_document->apply(m_before);
}

void ConfigEditCommand::redo()
{
    m_document->apply(m_after);
}

int ConfigEditCommand::id() const
{
    return m_fieldId;
}

bool ConfigEditCommand::mergeWith(const QUndoCommand* other)
{
    // QUndoStack only offers commands with an equal id() >= 0, so `other` is one of ours.
    const auto* edit = static_cast<const ConfigEditCommand*>(other);
    m_after = edit->m_after;
    setText(edit->text());
    setObsolete(m_after == m_before);
    return true;
}

} // namespace stagecraft
