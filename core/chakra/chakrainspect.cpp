// SPDX-License-Identifier: MIT
// inspect's public entry points; the work is done in inspectrank.cpp (one file), inspectread.cpp (a set's
// files), inspectcross.cpp (checks across ranks) and inspectprint.cpp (renderings).
#include "chakra/chakrainspect.h"

#include "chakra/inspectinternal.h"

namespace stagecraft {

using inspect::Findings;
using inspect::TraceInspector;

const char* findingSeverityName(FindingSeverity severity)
{
    switch (severity) {
    case FindingSeverity::Error:
        return "error";
    case FindingSeverity::Warning:
        return "warning";
    case FindingSeverity::Note:
        return "note";
    }
    return "note";
}

size_t TraceSummary::count(FindingSeverity severity) const
{
    return static_cast<size_t>(
        std::count_if(findings.begin(), findings.end(), [severity](const auto& f) { return f.severity == severity; }));
}

size_t TraceSetSummary::count(FindingSeverity severity) const
{
    return static_cast<size_t>(
        std::count_if(findings.begin(), findings.end(), [severity](const auto& f) { return f.severity == severity; }));
}

TraceSummary inspectTrace(const ChakraTrace& trace, std::string source)
{
    TraceInspector inspector(std::move(source), false);
    inspector.addMetadata(trace.metadata);
    for (const auto& node : trace.nodes)
        inspector.addNode(node);
    return inspector.finish(trace.framing);
}

TraceSummary inspectTraceFile(const std::filesystem::path& path, std::string* readError)
{
    TraceInspector inspector(path.string(), false);
    const ChakraReadStatus status = visitChakraFile(path, inspector);
    TraceSummary s = inspector.finish(status.framing);
    if (readError)
        *readError = status.error;
    if (!status.ok()) {
        TraceFinding f;
        f.severity = FindingSeverity::Error;
        f.check = "read-error";
        f.message = status.error + " (the statistics cover the records before it)";
        f.count = 1;
        s.findings.insert(s.findings.begin(), std::move(f));
    }
    return s;
}

TraceSetSummary inspectTraceSet(const std::filesystem::path& directory, const std::string& prefix, unsigned threads)
{
    TraceSetSummary set;
    set.directory = directory;
    Findings findings;
    const std::map<int, std::filesystem::path> files = inspect::discoverRankFiles(directory, prefix, set, findings);
    if (!files.empty()) {
        inspect::CrossRankChecks cross(set, findings, inspect::readCommGroups(set, findings));
        inspect::readRanksInOrder(files, threads, [&](inspect::RankRead&& rank) { cross.add(std::move(rank)); });
        cross.finish();
    }
    set.findings = findings.take();
    return set;
}

} // namespace stagecraft
