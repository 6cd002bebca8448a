// SPDX-License-Identifier: MIT
// stagecraft calibrate TRACE... --gpu NAME -o table.yaml
#include "command.h"
#include "estimate/gpuspec.h"
#include "estimate/kernelcalibration.h"
#include "kineto/kinetoreader.h"
#include "output/outputfile.h"

#include <iostream>
#include <map>

namespace stagecraft::cli {

Command addCalibrateCommand(CLI::App& app)
{
    struct State
    {
        std::vector<std::string> traces;
        std::string gpu;
        std::string output;
    };
    auto st = std::make_shared<State>();
    CLI::App* cmd = app.add_subcommand("calibrate",
        "Time kernels from PyTorch profiler traces of your own hardware: a kernel table (GEMMs by M x N x K and dtype, "
        "attention by batch, sequence, heads and head size, elementwise kernels by bytes, NCCL collectives by "
        "collective, size and group) that the estimate uses with cluster.kernel_table: FILE");
    cmd->add_option("TRACE", st->traces,
           "Chrome-trace JSON files of torch.profiler (.json or .json.gz), one per rank; record_shapes=True gives "
           "the GEMM and attention shapes")
        ->required();
    cmd->add_option("--gpu", st->gpu, "The GPU the traces ran on, as a GPU preset name (stagecraft presets)")
        ->required();
    cmd->add_option("-o,--output", st->output, "The kernel table to write (YAML; - for standard output)")->required();
    return { cmd, [st]() -> int {
                std::string error;
                if (!gpuPreset(st->gpu)) {
                    std::cerr << "stagecraft: --gpu: " << unknownGpuMessage(st->gpu) << "\n";
                    return ExitBadInput;
                }
                std::vector<KinetoTrace> traces;
                traces.reserve(st->traces.size());
                std::map<int64_t, std::string> ranks;
                for (const std::string& path : st->traces) {
                    KinetoReadResult r = readKinetoFile(path);
                    if (!r.ok()) {
                        std::cerr << "stagecraft: " << r.error << "\n";
                        return ExitBadInput;
                    }
                    const int64_t rank = r.trace->rank();
                    if (rank >= 0) {
                        if (const auto it = ranks.find(rank); it != ranks.end())
                            std::cerr << "stagecraft: warning: " << path << " and " << it->second << " are both rank "
                                      << rank << "\n";
                        ranks.emplace(rank, path);
                    }
                    traces.push_back(std::move(*r.trace));
                }
                std::vector<const KinetoTrace*> pointers;
                for (const KinetoTrace& t : traces)
                    pointers.push_back(&t);
                CalibrationSummary summary;
                const KernelTable table = calibrateKernelTable(pointers, st->gpu, summary);
                if (table.gemm.empty() && table.attention.empty() && table.elementwise.empty()
                    && table.collectives.empty()) {
                    std::cerr << calibrationSummaryText(summary, table)
                              << "stagecraft: no kernel could be timed: the traces hold no GEMM or attention op with "
                                 "recorded shapes (profile with record_shapes=True), no elementwise kernel and no "
                                 "NCCL kernel with its collective arguments\n";
                    return ExitBadInput;
                }
                try {
                    writeOutputFile(st->output, kernelTableYaml(table));
                } catch (const OutputError& e) {
                    std::cerr << "stagecraft: " << e.what() << "\n";
                    return ExitBadInput;
                }
                std::cerr << calibrationSummaryText(summary, table);
                if (st->output != "-")
                    std::cerr << "wrote " << st->output << " (use it with cluster.kernel_table: " << st->output
                              << ")\n";
                return ExitOk;
            } };
}

} // namespace stagecraft::cli
