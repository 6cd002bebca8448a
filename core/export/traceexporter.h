// SPDX-License-Identifier: MIT
#pragma once

#include "chakra/chakratrace.h"
#include "chakra/chakrawriter.h"
#include "synthesis/progress.h"
#include "synthesis/synthesis.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace stagecraft {

/// Bad export request (name, directory, range, files of another run present). what() is a complete message.
/// Disk and permission failures while writing surface as ChakraWriteError. Both map to exit code 2.
class ExportError : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

struct ExportOptions
{
    std::filesystem::path directory; ///< created if missing (its parent must exist)
    std::string name; ///< file prefix: <name>.<rank>.et and <name>.json; no path separators, no ".."
    ChakraFileFormat format = ChakraFileFormat::Protobuf;
    int64_t firstRank = 0; ///< the range [firstRank, endRank) of rank files to write
    int64_t endRank = -1; ///< -1 = world size
    bool force = false; ///< replace files of a previous export with the same name (only those)
    /// Without `force`: replace the files this export writes (rank files of the range, the group JSON) when an
    /// earlier Stagecraft export wrote them (exportownership.h); any other existing file of this name refuses.
    bool replaceOwn = false;
    std::string rankExtension; ///< rank file ending, e.g. ".json"; empty = ".et" (protobuf) or ".json" (JSON)
    bool tensorLists = false; ///< write `inputs`/`outputs` attributes for ASTRA-sim's memory check (§7.5)
    bool ctrlDepsAsData = false; ///< put the schedule's ordering edges into data_deps instead of ctrl_deps
    int threads = 1; ///< rank files written in parallel; output is identical for any count
    bool fsync = false;
};

struct ExportSummary
{
    int64_t files = 0; ///< rank files written
    uint64_t bytes = 0; ///< bytes of rank files written
    uint64_t nodes = 0;
    bool wroteGroups = false; ///< the communicator-group JSON was written (ranges starting at rank 0)
    bool cancelled = false; ///< the progress sink cancelled the export: nothing was written
    int64_t replaced = 0; ///< files of an earlier export that this one overwrote
    std::filesystem::path groupsPath;
    std::filesystem::path configPath; ///< `<name>.yaml`, the resolved config, written with the groups; else empty
    double seconds = 0;
};

/// Checks a name for output files: non-empty, no '/', '\\', no "..", no control characters.
/// Returns an empty string when valid, else the reason.
std::string checkExportName(const std::string& name);

/// The Chakra node list of one rank: the rank's class program with communicator group ids (pg_name) and
/// send/recv peers resolved for `rank`. Node ids are dense from 0 in program order; every dependency points to
/// an earlier node. Compute nodes: num_ops (FLOPs), tensor_size (bytes), op_type, is_cpu_op = false;
/// collectives: comm_type, comm_size (bytes, Chakra's per-type meaning), pg_name, is_cpu_op; send/recv:
/// comm_src, comm_dst, comm_tag, comm_size, is_cpu_op.
/// `num_ops` of a compute node: its FLOPs, or for a memory-bound op without FLOPs the elements it writes; at
/// least 1, since a roofline consumer divides by it (ASTRA-sim times num_ops 0 as NaN and the rank never ends).
int64_t traceNumOps(const SynthesisResult& result, const ClassProgram& program, const ProgramNode& n);
/// `tensor_size` of a compute node: the bytes it reads and writes, at least 1 (ASTRA-sim skips size 0).
uint64_t traceTensorSize(const ProgramNode& n);

std::vector<ChakraNode> rankTraceNodes(const SynthesisResult& result, RankId rank, const ExportOptions& options);
/// The GlobalMetadata Stagecraft writes (version "0.0.4", attr schema naming the producer and units).
ChakraMetadata traceMetadata();
/// The GlobalMetadata of the rank files of class `cls`: traceMetadata() plus `peak_memory_bytes`, the memory
/// peak the report states for those ranks (int64).
ChakraMetadata traceMetadata(const SynthesisResult& result, int32_t cls);
/// The communicator groups as group id -> member ranks (ring order), for writeCommGroups().
std::map<int, std::vector<int>> communicatorGroups(const SynthesisResult& result);

/// Writes the rank files of the range and, when the range starts at rank 0, the group JSON and the resolved config
/// (`<name>.yaml`, toYaml(), what `stagecraft simulate` re-synthesizes), as one set: under a lock on the folder
/// (output/directorylock.h; exclusive for the whole range, shared for a part), every file is written unnamed
/// beside the old ones and all are named only when complete (output/stagedfiles.h), then the rest of an old set
/// replaced with `force` goes. Throws ExportError or ChakraWriteError, and a cancel returns `cancelled` with
/// `files` 0: in either case nothing of the export is left and the folder is as it was. While another export holds
/// the folder, `progress` hears "waiting for another export into '<dir>' to finish" and the call waits (a cancel
/// ends the wait).
ExportSummary exportTrace(
    const SynthesisResult& result, const ExportOptions& options, ProgressSink* progress = nullptr);

} // namespace stagecraft
