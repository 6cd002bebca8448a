// SPDX-License-Identifier: MIT
#pragma once

#include "config/config.h"

#include <QUndoCommand>

namespace stagecraft {

class ConfigDocument;

/// One edit of a ConfigDocument: the whole config before and after (a Config is a few hundred bytes).
/// Consecutive edits of the same field merge (id() = field id); an edit merged back to its start is obsolete.
class ConfigEditCommand : public QUndoCommand
{
public:
    ConfigEditCommand(ConfigDocument* document, Config before, Config after, const QString& text, int fieldId = -1);
    ~ConfigEditCommand() override;

    void undo() override;
    void redo() override;
    int id() const override;
    bool mergeWith(const QUndoCommand* other) override;

private:
    ConfigDocument* m_document;
    Config m_before;
    Config m_after;
    int m_fieldId;
};

} // namespace stagecraft
