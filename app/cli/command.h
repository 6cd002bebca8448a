// SPDX-License-Identifier: MIT
#pragma once

#include "cliapp.h"
#include "config/configloader.h"
#include "synthesis/synthesis.h"

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace stagecraft::cli {

/// A subcommand: its CLI11 app (owned by the parent) and what runs when it was chosen. `run` returns an ExitCode.
struct Command
{
    CLI::App* app = nullptr;
    std::function<int()> run;
};

/// Flags shared by every command that takes a CONFIG: each is a config override (README.md, Configuration reference),
/// applied with the same validation as the file.
struct ConfigFlags
{
    std::string config;
    std::vector<std::string> sets;
    std::optional<int64_t> dp, tp, pp, cp, ep, layers, microBatch, globalBatch, zero, virtualStages;
    std::optional<std::string> schedule, recompute, precision, name;
    std::optional<bool> sequenceParallel;
    std::optional<int64_t> maxNodes;

    /// Adds CONFIG and the override flags to `cmd`.
    void add(CLI::App* cmd, bool configRequired = true);
    /// Adds the override flags only (not CONFIG; not --name when `withName` is false), for commands whose
    /// positional argument is something else.
    void addOverrides(CLI::App* cmd, bool withName = true);
    /// The overrides as `key=value` strings, flags first, then --set in order.
    std::vector<std::string> overrides() const;
    /// Applies the options that are not config fields (--max-nodes); call before loading.
    void applyOptions() const;
};

/// A CLI11 transform (it rewrites the text to canonical decimal) for an integer option: decimal digits only (no octal
/// "010" or hex "0x10", which CLI11 would read), within minimum … maximum, else "expected 1 … 16777216, found 0" or
/// "99999999999999999999 is out of range: expected …" (CLI11 puts the flag name in front). `help` is what --help shows
/// after the type ("" for nothing, "POSITIVE" as CLI11's own check).
CLI::Validator integerIn(int64_t minimum, int64_t maximum, std::string help = {});

/// Prints diagnostics as file:line:col: severity: key: message on stderr.
void printDiagnostics(const std::vector<Diagnostic>& diagnostics);

/// Loads the config (file or preset) with the overrides; prints diagnostics; nullopt on errors
/// (exitCode = ExitBadInput).
std::optional<Config> loadConfig(const ConfigFlags& flags, int& exitCode);

/// Loads and synthesizes; prints diagnostics. Null on failure with `exitCode` set (2 bad input, 1 internal).
/// `compressed`: the repeated steady-state micro-batches stay folded (SynthesisOptions::compressMicroBatches), so
/// the program-size limit bounds only the programs built; the figures are extended exactly to the iteration.
/// Commands that need every node (an export, a full dump) pass false.
std::shared_ptr<const SynthesisResult> loadAndSynthesize(
    const ConfigFlags& flags, int& exitCode, bool compressed = false);

// Each command registers itself; the order here is the order in --help.
Command addSynthCommand(CLI::App& app);
Command addReportCommand(CLI::App& app);
Command addSweepCommand(CLI::App& app);
Command addInspectCommand(CLI::App& app);
Command addSimulateCommand(CLI::App& app);
Command addPresetsCommand(CLI::App& app);
Command addImportHfCommand(CLI::App& app);
Command addCalibrateCommand(CLI::App& app);
Command addCompareTraceCommand(CLI::App& app);

} // namespace stagecraft::cli
