// SPDX-License-Identifier: MIT
#include "session/configdocument.h"

#include "config/configloader.h"
#include "config/configwriter.h"
#include "config/presets.h"
#include "session/baselinecommand.h"
#include "session/configeditcommand.h"
#include "session/outputsaver.h"
#include "synthesis/synthesis.h"

#include <QDir>
#include <QFile>
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

QString ConfigDocument::currentPreset() const
{
    // A preset picked in the editor (an undoable edit) names the document from then on.
    if (!m_presetName.isEmpty() && m_config.name != m_presetName.toStdString() && presetText(m_config.name))
        return QString::fromStdString(m_config.name);
    return m_presetName;
}

QString ConfigDocument::displayName() const
{
    if (!m_filePath.isEmpty())
        return QFileInfo(m_filePath).fileName();
    if (!m_presetName.isEmpty())
        return tr("%1 (preset)").arg(currentPreset());
    return tr("Untitled");
}

QString ConfigDocument::diagnosticFileName() const
{
    if (!m_filePath.isEmpty())
        return m_filePath;
    if (!m_presetName.isEmpty())
        return QString::fromStdString(presetFileName(currentPreset().toStdString()));
    return QStringLiteral("untitled.yaml");
}

bool ConfigDocument::isModified() const
{
    return !m_undoStack->isClean();
}

void ConfigDocument::reset(
    const Config& config, const QString& filePath, const QString& presetName, const std::optional<Config>& baseline)
{
    m_undoStack->clear(); // clean again: cleanChanged() reports modifiedChanged(false)
    m_config = config;
    m_adoptedBaseline.reset();
    if (m_baseline.config || baseline) {
        m_baseline = Baseline { baseline, nullptr };
        Q_EMIT baselineChanged();
    }
    const bool pathChanged = m_filePath != filePath || m_presetName != presetName;
    m_filePath = filePath;
    m_presetName = presetName;
    if (pathChanged)
        Q_EMIT filePathChanged();
    Q_EMIT documentReset();
    Q_EMIT configChanged();
}

void ConfigDocument::adoptFilePath(const QString& filePath, bool modified)
{
    m_undoStack->clear();
    m_filePath = filePath;
    m_presetName.clear();
    if (modified)
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
    // The baseline first: when it cannot be written, the config file is left as it was too.
    const QString sidecar = baselinePath(filePath);
    if (m_baseline.config) {
        const std::string yaml = toYaml(*m_baseline.config);
        QString error;
        if (!saveOutputFile(sidecar, QByteArray(yaml.data(), static_cast<qsizetype>(yaml.size())), &error)) {
            if (errorMessage)
                *errorMessage = tr("the baseline file %1: %2").arg(QDir::toNativeSeparators(sidecar), error);
            return false;
        }
    } else if (const QFileInfo info(sidecar); info.isFile() && !info.isSymLink() && !QFile::remove(sidecar)) {
        // A baseline cleared since the last save: its file would pin it again on the next load.
        if (errorMessage)
            *errorMessage = tr("cannot remove the cleared baseline's file %1").arg(QDir::toNativeSeparators(sidecar));
        return false;
    }
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

const ConfigDocument::Baseline& ConfigDocument::baseline() const
{
    return m_baseline;
}

void ConfigDocument::setBaseline(std::shared_ptr<const SynthesisResult> result, const QString& description)
{
    if (result == m_baseline.result && (result || !m_baseline.config))
        return;
    Baseline after;
    if (result)
        after = Baseline { result->config, result };
    m_undoStack->push(new BaselineCommand(this, m_baseline, std::move(after), description));
}

bool ConfigDocument::adoptBaselineResult(std::shared_ptr<const SynthesisResult> result)
{
    if (!result || m_baseline.result || !m_baseline.config || !(result->config == *m_baseline.config))
        return false;
    m_adoptedBaseline = result;
    m_baseline.result = std::move(result);
    Q_EMIT baselineChanged();
    return true;
}

QString ConfigDocument::baselinePath(const QString& filePath)
{
    const QFileInfo info(filePath);
    return info.dir().filePath(info.completeBaseName() + QStringLiteral(".baseline.yaml"));
}

void ConfigDocument::applyBaseline(Baseline baseline)
{
    if (baseline.config && !baseline.result && m_adoptedBaseline && m_adoptedBaseline->config == *baseline.config)
        baseline.result = m_adoptedBaseline;
    m_baseline = std::move(baseline);
    Q_EMIT baselineChanged();
}

void ConfigDocument::apply(const Config& config)
{
    if (config == m_config)
        return;
    m_config = config;
    Q_EMIT configChanged();
}

} // namespace stagecraft
