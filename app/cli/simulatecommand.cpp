// SPDX-License-Identifier: MIT
// stagecraft simulate DIR --astrasim BINARY [--name NAME] [--config CONFIG] [--timeout S] [--track-mem] [--json]
//                    [--backend congestion-unaware|congestion-aware]
// Runs ASTRA-sim's analytical simulator on an exported trace set with configs generated from the set's config, and
// sets its per-stage times against our step-time estimate.
#include "command.h"
#include "estimate/servingestimate.h"
#include "estimate/stepestimate.h"
#include "interruptguard.h"
#include "output/messagetext.h"
#include "simulate/astrasimconfig.h"
#include "simulate/astrasimrunner.h"
#include "simulate/simulationcomparison.h"

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <unistd.h>

namespace stagecraft::cli {

namespace {

    /// Ranks finished so far on a terminal's stderr; cancelled by Ctrl+C.
    class SimulateProgress final : public ProgressSink
    {
    public:
        explicit SimulateProgress(int64_t ranks)
            : m_ranks(ranks)
        {
        }
        ~SimulateProgress() override
        {
            if (m_shown)
                std::fprintf(stderr, "\r\033[K");
        }
        SimulateProgress(const SimulateProgress&) = delete;
        SimulateProgress& operator=(const SimulateProgress&) = delete;

        void report(double fraction, const char* stage) override
        {
            if (!m_tty)
                return;
            m_shown = true;
            std::fprintf(stderr, "\r%s: %lld/%lld ranks finished", stage,
                static_cast<long long>(fraction * static_cast<double>(m_ranks) + 0.5), static_cast<long long>(m_ranks));
            std::fflush(stderr);
        }
        bool cancelled() const override
        {
            return InterruptGuard::signal() != 0;
        }

    private:
        int64_t m_ranks;
        bool m_tty = isatty(STDERR_FILENO) != 0;
        bool m_shown = false;
    };

    /// Overrides of keys outside `cluster.` change the workload, so the traces no longer match it.
    std::vector<std::string> workloadOverrides(const std::vector<std::string>& overrides)
    {
        std::vector<std::string> out;
        for (const std::string& o : overrides)
            if (o.rfind("cluster.", 0) != 0)
                out.push_back(o.substr(0, o.find('=')));
        return out;
    }

} // namespace

Command addSimulateCommand(CLI::App& app)
{
    struct State
    {
        ConfigFlags flags;
        std::string directory;
        std::string binary;
        std::string name;
        double timeoutS = 300;
        bool trackMem = false;
        bool json = false;
        std::string backend; ///< empty: from the binary's name
    };
    auto st = std::make_shared<State>();
    CLI::App* cmd = app.add_subcommand("simulate",
        "Run ASTRA-sim's analytical simulator on an exported trace set, with system, network and memory configs "
        "generated from the set's config, and compare its per-stage times with our estimate");
    cmd->add_option("DIR", st->directory, "Folder of a trace set written by synth (<name>.<rank>.et, <name>.json)")
        ->required();
    cmd->add_option("--astrasim", st->binary,
           "The simulator, e.g. AstraSim_Analytical_Congestion_Unaware (a path, or a name looked up in PATH)")
        ->envname("STAGECRAFT_ASTRASIM")
        ->type_name("BINARY")
        ->required();
    cmd->add_option("--name", st->name, "The trace set's name when DIR holds several");
    cmd->add_option("--config", st->flags.config,
           "Config of the traces (file or preset); default: DIR/<name>.yaml, written by synth")
        ->type_name("CONFIG");
    cmd->add_option("--timeout", st->timeoutS, "Stop the simulator after S seconds of wall time (default 300)")
        ->type_name("S")
        ->check(CLI::Validator(
            [](std::string& text) {
                char* end = nullptr;
                const double v = std::strtod(text.c_str(), &end);
                return end != text.c_str() && *end == '\0' && v > 0
                    ? std::string()
                    : "expected a positive number of seconds, found '" + text + "'";
            },
            "", "positive"));
    cmd->add_flag("--track-mem", st->trackMem,
        "Let ASTRA-sim track each rank's tensor memory (traces written with --tensor-lists) and print its peak");
    cmd->add_flag("--json", st->json, "Print the result as JSON");
    cmd->add_option("--backend", st->backend,
           "congestion-unaware | congestion-aware: the analytical backend the binary was built with (default: from "
           "its name, AstraSim_Analytical_Congestion_Aware or _Unaware); the network is written for it")
        ->type_name("BACKEND")
        ->check(CLI::IsMember({ "congestion-unaware", "congestion-aware" }));
    st->flags.addOverrides(cmd, false);
    cmd->footer("Writes system.json, network.yml, memory.json and cmd.sh (to repeat the run by hand) into "
                "DIR/<name>.astrasim/, with the simulator's stdout.txt, stderr.txt and log/. Override cluster.* "
                "keys (--set cluster.inter_node_bandwidth_gbps=100) to simulate the same traces on another "
                "network. Exit codes: 0 the run passed (every rank finished, exit code 0, no error line, within the "
                "time limit), 1 it did not, 2 bad input (no trace set, no binary, a config that does not match).");

    return { cmd, [st]() -> int {
                State& s = *st;
                std::string error;
                const std::optional<TraceSet> traces = findTraceSet(s.directory, s.name, error);
                if (!traces) {
                    std::cerr << "stagecraft: " << escapedText(error) << "\n";
                    return ExitBadInput;
                }
                if (!resolveAstraSimBinary(s.binary, error)) {
                    std::cerr << "stagecraft: " << error << "\n";
                    return ExitBadInput;
                }
                if (s.flags.config.empty()) {
                    if (traces->configPath.empty()) {
                        std::cerr << "stagecraft: " << (traces->directory / (traces->name + ".yaml")).string()
                                  << " not found: give the config of the traces with --config CONFIG\n";
                        return ExitBadInput;
                    }
                    s.flags.config = traces->configPath.string();
                }
                const std::vector<std::string> changed = workloadOverrides(s.flags.overrides());
                int exitCode = ExitOk;
                const auto result = loadAndSynthesize(s.flags, exitCode, true); // the figures, not every node
                if (!result)
                    return exitCode;
                if (result->worldSize() != traces->ranks) {
                    std::cerr << "stagecraft: the config describes " << result->worldSize()
                              << " ranks but the trace set '" << traces->name << "' has " << traces->ranks
                              << " rank files\n";
                    return ExitBadInput;
                }
                // The set must hold this workload: a config edited after the export, another --config, a
                // tampered group file or an empty rank file is found here, not when the simulator aborts.
                if (const std::string mismatch = checkTraceSetMatches(*traces, *result); !mismatch.empty()) {
                    std::cerr << "stagecraft: " << escapedText(mismatch) << "\n";
                    return ExitBadInput;
                }
                if (!changed.empty()) {
                    std::string keys;
                    for (const std::string& k : changed)
                        keys += (keys.empty() ? "" : ", ") + k;
                    std::cerr << "stagecraft: warning: " << keys
                              << " changed: the estimate describes another workload than the traces\n";
                }
                const std::optional<GpuSpec> gpu = gpuForConfig(result->config, error);
                StepEstimate estimate;
                if (gpu && isInference(result->config)) {
                    // Serving programs are a prefill and the first decode steps: ASTRA-sim runs them once, so the
                    // comparison is with the schedule of those programs.
                    ServingEstimate serving;
                    EstimateSchedule schedule;
                    if (!estimateServing(*result, *gpu, EstimateOptions {}, serving, error, &schedule)) {
                        std::cerr << "stagecraft: no serving estimate: " << error << "\n";
                        return ExitBadInput;
                    }
                    estimate = programsEstimate(*result, schedule);
                } else if (!gpu || !estimateStep(*result, *gpu, EstimateOptions {}, estimate, error)) {
                    std::cerr << "stagecraft: no step-time estimate: " << error << "\n";
                    return ExitBadInput;
                }
                AstraSimBackend backend = AstraSimBackend::CongestionUnaware;
                if (s.backend == "congestion-aware"
                    || (s.backend.empty() && s.binary.find("Congestion_Aware") != std::string::npos))
                    backend = AstraSimBackend::CongestionAware;
                const std::optional<AstraSimSetup> setup =
                    astraSimSetup(result->config, *gpu, EstimateOptions {}, s.trackMem, error, backend);
                if (!setup) {
                    std::cerr << "stagecraft: " << error << "\n";
                    return ExitBadInput;
                }
                for (const std::string& note : setup->notes)
                    std::cerr << "stagecraft: note: " << note << "\n";

                AstraSimRunOptions options;
                options.binary = s.binary;
                options.timeoutS = s.timeoutS;
                AstraSimResult sim;
                int caught = 0;
                {
                    // Ctrl+C, SIGTERM and SIGHUP stop the simulator's process group (it sits outside the
                    // terminal's foreground group, so it would not hear them) before we exit.
                    InterruptGuard guard;
                    SimulateProgress progress(setup->npus);
                    sim = runAstraSim(*traces, *setup, options, &progress);
                    caught = InterruptGuard::signal();
                }
                if (caught != 0) {
                    std::cerr << "stagecraft: stopped by signal " << caught << " (" << strsignal(caught)
                              << "); the simulator was stopped with it\n";
                    return InterruptGuard::exitCodeFor(caught);
                }
                if (sim.status == AstraSimStatus::BadInput) {
                    std::cerr << "stagecraft: " << escapedText(sim.reason) << "\n";
                    return ExitBadInput;
                }
                if (sim.status == AstraSimStatus::Passed)
                    checkSimulatedTimes(*result, *setup, sim);
                const SimulationComparison comparison = compareWithEstimate(*result, estimate, sim);
                if (s.json)
                    std::cout << simulationJson(sim, &comparison).dump(2) << "\n";
                else
                    std::cout << simulationText(sim, &comparison);
                return sim.passed ? ExitOk : ExitInternal;
            } };
}

} // namespace stagecraft::cli
