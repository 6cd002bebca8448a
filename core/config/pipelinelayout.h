// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stagecraft {

/// What one place of a pipeline chunk holds (Megatron-Core's LayerType of a layout string).
enum class LayoutItem : uint8_t
{
    Embedding, ///< `E`: the input embedding
    Decoder, ///< `t`: one decoder (transformer) layer
    Mtp, ///< `m`: one multi-token prediction module
    Loss ///< `L`: the final norm, the output head and the loss
};

/// A problem with a layout string: what is wrong and at which character (0-based byte offset into the string the
/// user wrote, before any `*N` is expanded).
struct LayoutError
{
    size_t offset = 0;
    std::string message;
};

/// A pipeline layout: the items of every global pipeline chunk, in chunk order. Chunk g runs on pipeline stage
/// g % pp as its local (virtual) chunk g / pp, so pp * v chunks give v virtual stages per rank. Written in
/// Megatron-Core's `--pipeline-model-parallel-layout` syntax (megatron/core/transformer/
/// pipeline_parallel_layer_layout.py, PipelineParallelLayerLayout, NVIDIA/Megatron-LM commit db57c152,
/// 2026-08-11): `E` embedding, `t` decoder layer, `m` MTP module, `L` loss; `|` ends a chunk; `X*N` repeats one
/// character, `(...)*N` a group (not nested); commas are cosmetic. "Et*3|(tt|)*29,m|L" is 32 chunks.
/// Plain value type.
struct PipelineLayout
{
    std::vector<std::vector<LayoutItem>> chunks;
    /// For every chunk, the offset in the parsed text of the character that put its first item there (or of the
    /// `|` that opened it when it is empty), so that a problem found later can point into the string.
    std::vector<size_t> chunkOffsets;
    std::vector<std::vector<size_t>> itemOffsets; ///< per chunk and item: the offset of the character that put it there

    /// Parses `text`. Returns nullopt and sets `error` on a syntax error, an unknown character or a string that
    /// expands past 1,048,576 characters. Never throws but std::bad_alloc.
    static std::optional<PipelineLayout> parse(std::string_view text, LayoutError& error);

    /// The shortest form this printer makes: runs of equal chunks as `(...|)*N`, runs of an item as `t*N`
    /// ("Et*3|(tt|)*29m|L"). parse(toString()) gives the same chunks.
    std::string toString() const;

    int64_t count(LayoutItem item) const;
    int64_t chunkCount() const
    {
        return static_cast<int64_t>(chunks.size());
    }
    friend bool operator==(const PipelineLayout& a, const PipelineLayout& b)
    {
        return a.chunks == b.chunks;
    }
};

/// Checks a layout against a model and a pipeline: pp * v chunks (v >= 1), the embedding first and the loss last
/// in chunk order, exactly once each, `layers` decoder layers and `mtpModules` MTP modules, every MTP module after
/// the last decoder layer, in one chunk, and in a rank's last virtual stage (Megatron-Core's
/// validate_layer_layout). Returns nullopt when it fits, else the problem and the offset
/// of the character it concerns.
std::optional<LayoutError> checkLayout(const PipelineLayout& layout, int64_t layers, int64_t mtpModules, int64_t pp);

/// The one-character name of an item ("E", "t", "m", "L").
char layoutChar(LayoutItem item);

} // namespace stagecraft
