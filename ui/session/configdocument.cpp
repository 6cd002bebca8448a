// SPDX-License-Identifier: MIT
#include "session/configdocument.h"

#include "config/configloader.h"
#include "config/configwriter.h"
#include "session/configeditcommand.h"
#include "session/outputsaver.h"

#include <QFileInfo>
#include <QUndoStack>

namespace stagecraft {

ConfigDocument::ConfigDocument(QObject* parent)
    : QObject(parent)
    , m_undoStack(new QUndoStack(this))
{
    connect(m_undoStack, &QUndoStack::cleanChanged, this, [this](bool clean) { Q_EMIT modifiedChanged(!clean); });
}

ConfigDocument::~ConfigDocument() = default;

const Config& ConfigDocument::config() const
{
    return m_config;
}

QUndoStack* ConfigDocument::undoStack() const
{
    return m_undoStack;
}

QString ConfigDocument::filePath() const
{
    return m_filePath;
}

QString ConfigDocument::presetName() const
{
    return m_presetName;
}

QString ConfigDocument::displayName() const
{
    if (!m_filePath.isEmpty())
        return QFileInfo(m_filePath).fileName();
    if (!m_presetName.isEmpty())
        return tr("%1 (preset)").arg(m_presetName);
    return tr("Untitled");
}

QString ConfigDocument::diagnosticFileName() const
{
    if (!m_filePath.isEmpty())
        return m_filePath;
    if (!m_presetName.isEmpty())
        return QString::fromStdString(presetFileName(m_presetName.toStdString()));
    return QStringLiteral("untitled.yaml");
}

bool ConfigDocument::isModified() const
{
    return !m_undoStack->isClean();
}

void ConfigDocument::reset(const Config& config, const QString& filePath, const QString& presetName)
{
    m_undoStack->clear(); // clean again: cleanChanged() reports modifiedChanged(false)
    m_config = config;
    const bool pathChanged = m_filePath != filePath || m_presetName != presetName;
    m_filePath = filePath;
    m_presetName = presetName;
    if (pathChanged)
        Q_EMIT filePathChanged();
    Q_EMIT documentReset();
    Q_EMIT configChanged();
}

void ConfigDocument::adoptFilePath(const QString& filePath)
{
    m_undoStack->clear();
    m_filePath = filePath;
    m_presetName.clear();
    m_undoStack->resetClean(); // no reachable clean state: the file on disk differs from the config
    Q_EMIT filePathChanged();
}

void ConfigDocument::edit(const Config& config, const QString& description, int fieldId)
{
    if (config == m_config)
        return;
    m_undoStack->push(new ConfigEditCommand(this, m_config, config, description, fieldId));
}

bool ConfigDocument::saveAs(const QString& filePath, QString* errorMessage)
{
    const std::string yaml = toYaml(m_config);
    if (!saveOutputFile(filePath, QByteArray(yaml.data(), static_cast<qsizetype>(yaml.size())), errorMessage))
        return false;
    const bool pathChanged = m_filePath != filePath || !m_presetName.isEmpty();
    m_filePath = filePath;
    m_presetName.clear();
    m_undoStack->setClean();
    if (pathChanged)
        Q_EMIT filePathChanged();
    return true;
}

void ConfigDocument::apply(const Config& config)
{
    if (config == m_config)
        return;
    m_config = config;
    Q_EMIT configChanged();
}

} // namespace stagecraft
