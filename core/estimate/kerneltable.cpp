// SPDX-License-Identifier: MIT
#include "estimate/kerneltable.h"

#include "config/boundedfile.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <sys/stat.h>
#include <tuple>
#include <yaml-cpp/yaml.h>

namespace stagecraft {

namespace {

    /// Linear interpolation at `x` between the nearest points below and above it; None when `x` is not between two.
    TableLookup interpolate(const std::vector<std::pair<double, double>>& points, double x)
    {
        std::optional<std::pair<double, double>> below, above;
        for (const auto& p : points) {
            if (p.first == x)
                return { TableMatch::Exact, p.second * 1e-6 };
            if (p.first < x && (!below || p.first > below->first))
                below = p;
            if (p.first > x && (!above || p.first < above->first))
                above = p;
        }
        if (!below || !above)
            return {};
        const double t = (x - below->first) / (above->first - below->first);
        return { TableMatch::Interpolated, (below->second + t * (above->second - below->second)) * 1e-6 };
    }

    std::string lower(std::string_view s)
    {
        std::string out(s);
        for (char& c : out)
            c = char(std::tolower(static_cast<unsigned char>(c)));
        return out;
    }

    std::string number(double x)
    {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.9g", x);
        return buf;
    }

    std::string quoted(const std::string& s)
    {
        std::string out = "\"";
        for (char c : s) {
            if (c == '"' || c == '\\')
                out += '\\';
            if (static_cast<unsigned char>(c) < 0x20)
                continue;
            out += c;
        }
        return out + "\"";
    }

} // namespace

std::string normalizedCollective(std::string_view torchName)
{
    std::string n = lower(torchName);
    n.erase(std::remove(n.begin(), n.end(), '_'), n.end());
    if (n == "allreduce" || n == "allreducecoalesced")
        return "all_reduce";
    if (n == "allgather" || n == "allgatherbase" || n == "allgatherintotensor" || n == "allgathercoalesced"
        || n == "allgatherintotensorcoalesced")
        return "all_gather";
    if (n == "reducescatter" || n == "reducescatterbase" || n == "reducescattertensor"
        || n == "reducescattertensorcoalesced")
        return "reduce_scatter";
    if (n == "alltoall" || n == "alltoallv" || n == "alltoallbase" || n == "alltoallsingle")
        return "all_to_all";
    return "";
}

TableLookup lookupGemm(const KernelTable& table, const std::string& dtype, const GemmShape& s)
{
    std::vector<std::pair<double, double>> alongM, alongN, alongK;
    for (const KernelTableGemm& e : table.gemm) {
        if (e.dtype != dtype || e.batch != s.batch)
            continue;
        if (e.m == s.m && e.n == s.n && e.k == s.k)
            return { TableMatch::Exact, e.timeUs * 1e-6 };
        if (e.n == s.n && e.k == s.k)
            alongM.emplace_back(double(e.m), e.timeUs);
        else if (e.m == s.m && e.k == s.k)
            alongN.emplace_back(double(e.n), e.timeUs);
        else if (e.m == s.m && e.n == s.n)
            alongK.emplace_back(double(e.k), e.timeUs);
    }
    for (const auto& [points, x] :
        { std::pair { &alongM, s.m }, std::pair { &alongN, s.n }, std::pair { &alongK, s.k } })
        if (TableLookup r = interpolate(*points, double(x)); r.match != TableMatch::None)
            return r;
    return {};
}

TableLookup lookupAttention(const KernelTable& table, const std::string& dtype, bool backward, int64_t batch,
    int64_t seq, int64_t heads, int64_t headDim)
{
    std::vector<std::pair<double, double>> points;
    for (const KernelTableAttention& e : table.attention) {
        if (e.dtype != dtype || e.backward != backward || e.heads != heads || e.headDim != headDim)
            continue;
        if (e.batch == batch && e.seq == seq)
            return { TableMatch::Exact, e.timeUs * 1e-6 };
        points.emplace_back(double(e.batch) * double(e.seq) * double(e.seq), e.timeUs);
    }
    TableLookup r = interpolate(points, double(batch) * double(seq) * double(seq));
    if (r.match == TableMatch::Exact) // the same work at another batch and length: not this shape
        r.match = TableMatch::Interpolated;
    return r;
}

TableLookup lookupElementwise(const KernelTable& table, int64_t bytes)
{
    std::vector<std::pair<double, double>> points;
    points.reserve(table.elementwise.size());
    for (const KernelTableElementwise& e : table.elementwise)
        points.emplace_back(double(e.bytes), e.timeUs);
    return interpolate(points, double(bytes));
}

TableLookup lookupCollective(const KernelTable& table, const std::string& collective, int64_t bytes, int64_t group)
{
    std::vector<std::pair<double, double>> points;
    for (const KernelTableCollective& e : table.collectives)
        if (e.collective == collective && e.group == group)
            points.emplace_back(double(e.bytes), e.timeUs);
    return interpolate(points, double(bytes));
}

std::string kernelTableYaml(const KernelTable& t)
{
    std::string out =
        "# Kernel times measured from PyTorch profiler traces by `stagecraft calibrate` (median GPU time of\n"
        "# each op kind and shape). Use it with the config key cluster.kernel_table.\n";
    out += "kernel_table: 1\n";
    out += "gpu: " + quoted(t.gpu) + "\n";
    out += "device: " + quoted(t.device) + "\n";
    out += "sources:\n";
    for (const std::string& s : t.sources)
        out += "  - " + quoted(s) + "\n";
    out += t.gemm.empty() ? "gemm: []\n" : "gemm:\n";
    for (const KernelTableGemm& e : t.gemm)
        out += "  - {dtype: " + e.dtype + ", batch: " + std::to_string(e.batch) + ", m: " + std::to_string(e.m)
            + ", n: " + std::to_string(e.n) + ", k: " + std::to_string(e.k) + ", time_us: " + number(e.timeUs)
            + ", samples: " + std::to_string(e.samples) + "}\n";
    out += t.attention.empty() ? "attention: []\n" : "attention:\n";
    for (const KernelTableAttention& e : t.attention)
        out += "  - {dtype: " + e.dtype + ", pass: " + (e.backward ? "backward" : "forward")
            + ", batch: " + std::to_string(e.batch) + ", seq: " + std::to_string(e.seq)
            + ", heads: " + std::to_string(e.heads) + ", head_dim: " + std::to_string(e.headDim)
            + ", time_us: " + number(e.timeUs) + ", samples: " + std::to_string(e.samples) + "}\n";
    out += t.elementwise.empty() ? "elementwise: []\n" : "elementwise:\n";
    for (const KernelTableElementwise& e : t.elementwise)
        out += "  - {bytes: " + std::to_string(e.bytes) + ", time_us: " + number(e.timeUs)
            + ", samples: " + std::to_string(e.samples) + "}\n";
    out += t.collectives.empty() ? "collectives: []\n" : "collectives:\n";
    for (const KernelTableCollective& e : t.collectives)
        out += "  - {collective: " + e.collective + ", bytes: " + std::to_string(e.bytes)
            + ", group: " + std::to_string(e.group) + ", time_us: " + number(e.timeUs)
            + ", samples: " + std::to_string(e.samples) + "}\n";
    return out;
}

namespace {

    struct TableParser
    {
        std::string file;
        std::string error;

        std::string at(const YAML::Node& n) const
        {
            const YAML::Mark m = n.Mark();
            return file + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1) + ": ";
        }
        bool fail(const YAML::Node& n, const std::string& message)
        {
            if (error.empty())
                error = at(n) + message;
            return false;
        }
        bool integer(const YAML::Node& entry, const char* key, int64_t& out, int64_t minimum)
        {
            const YAML::Node v = entry[key];
            if (!v || !v.IsScalar())
                return fail(v ? v : entry, std::string(key) + ": expected an integer >= " + std::to_string(minimum));
            try {
                const std::string text = v.Scalar();
                size_t used = 0;
                out = std::stoll(text, &used);
                if (used != text.size() || out < minimum)
                    throw std::invalid_argument(text);
            } catch (const std::exception&) {
                return fail(v,
                    std::string(key) + ": expected an integer >= " + std::to_string(minimum) + ", found \""
                        + v.Scalar().substr(0, 40) + "\"");
            }
            return true;
        }
        bool time(const YAML::Node& entry, double& out)
        {
            const YAML::Node v = entry["time_us"];
            if (!v || !v.IsScalar())
                return fail(v ? v : entry, "time_us: expected a time in microseconds > 0");
            try {
                size_t used = 0;
                out = std::stod(v.Scalar(), &used);
                if (used != v.Scalar().size() || !std::isfinite(out) || !(out > 0) || out > 1e12)
                    throw std::invalid_argument(v.Scalar());
            } catch (const std::exception&) {
                return fail(
                    v, "time_us: expected a time in microseconds > 0, found \"" + v.Scalar().substr(0, 40) + "\"");
            }
            return true;
        }
        bool text(const YAML::Node& entry, const char* key, std::string& out)
        {
            const YAML::Node v = entry[key];
            if (!v || !v.IsScalar())
                return fail(v ? v : entry, std::string(key) + ": expected a name");
            out = v.Scalar();
            return true;
        }
        /// The entries of the sequence under `key` (absent = none).
        bool list(const YAML::Node& root, const char* key, std::vector<YAML::Node>& out)
        {
            out.clear();
            const YAML::Node v = root[key];
            if (!v || v.IsNull())
                return true;
            if (!v.IsSequence())
                return fail(v, std::string(key) + ": expected a list of entries");
            for (const YAML::Node& e : v) {
                if (!e.IsMap())
                    return fail(e, std::string(key) + ": expected an entry {key: value, ...}");
                out.push_back(e);
            }
            return true;
        }
    };

} // namespace

bool readKernelTable(const std::filesystem::path& path, KernelTable& table, std::string& error)
{
    std::string bytes;
    const BoundedFileKind kind { "kernel table", "a kernel table (YAML, from stagecraft calibrate)", "a kernel table" };
    if (std::string problem = readBoundedFile(path.string(), size_t { 64 } << 20, kind, bytes); !problem.empty()) {
        error = path.string() + ": " + problem;
        return false;
    }
    TableParser p { path.string(), {} };
    KernelTable t;
    try {
        const YAML::Node root = YAML::Load(bytes);
        if (!root.IsMap() || !root["kernel_table"]) {
            error = path.string()
                + ":1:1: not a kernel table (no \"kernel_table: 1\"; make one with stagecraft "
                  "calibrate)";
            return false;
        }
        if (root["kernel_table"].Scalar() != "1") {
            error = p.at(root["kernel_table"]) + "kernel_table: format version 1 expected, found \""
                + root["kernel_table"].Scalar().substr(0, 20) + "\"";
            return false;
        }
        if (root["gpu"] && root["gpu"].IsScalar())
            t.gpu = root["gpu"].Scalar();
        if (root["device"] && root["device"].IsScalar())
            t.device = root["device"].Scalar();
        if (root["sources"] && root["sources"].IsSequence())
            for (const YAML::Node& s : root["sources"])
                if (s.IsScalar())
                    t.sources.push_back(s.Scalar());
        std::vector<YAML::Node> list;
        bool ok = p.list(root, "gemm", list);
        for (const YAML::Node& e : list) {
            KernelTableGemm g;
            ok = ok && p.text(e, "dtype", g.dtype) && p.integer(e, "batch", g.batch, 1) && p.integer(e, "m", g.m, 1)
                && p.integer(e, "n", g.n, 1) && p.integer(e, "k", g.k, 1) && p.time(e, g.timeUs)
                && p.integer(e, "samples", g.samples, 1);
            t.gemm.push_back(g);
        }
        ok = ok && p.list(root, "attention", list);
        for (const YAML::Node& e : list) {
            KernelTableAttention a;
            std::string pass;
            ok = ok && p.text(e, "dtype", a.dtype) && p.text(e, "pass", pass);
            if (ok && pass != "forward" && pass != "backward")
                ok = p.fail(e["pass"], "pass: expected forward or backward, found \"" + pass.substr(0, 20) + "\"");
            a.backward = pass == "backward";
            ok = ok && p.integer(e, "batch", a.batch, 1) && p.integer(e, "seq", a.seq, 1)
                && p.integer(e, "heads", a.heads, 1) && p.integer(e, "head_dim", a.headDim, 1) && p.time(e, a.timeUs)
                && p.integer(e, "samples", a.samples, 1);
            t.attention.push_back(a);
        }
        ok = ok && p.list(root, "elementwise", list);
        for (const YAML::Node& e : list) {
            KernelTableElementwise w;
            ok =
                ok && p.integer(e, "bytes", w.bytes, 1) && p.time(e, w.timeUs) && p.integer(e, "samples", w.samples, 1);
            t.elementwise.push_back(w);
        }
        ok = ok && p.list(root, "collectives", list);
        for (const YAML::Node& e : list) {
            KernelTableCollective c;
            ok = ok && p.text(e, "collective", c.collective);
            if (ok && normalizedCollective(c.collective) != c.collective)
                ok = p.fail(e["collective"],
                    "collective: expected all_reduce, all_gather, reduce_scatter or "
                    "all_to_all, found \""
                        + c.collective.substr(0, 40) + "\"");
            ok = ok && p.integer(e, "bytes", c.bytes, 1) && p.integer(e, "group", c.group, 1) && p.time(e, c.timeUs)
                && p.integer(e, "samples", c.samples, 1);
            t.collectives.push_back(c);
        }
        if (!ok) {
            error = p.error;
            return false;
        }
    } catch (const YAML::Exception& e) {
        error = path.string() + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1)
            + ": invalid YAML: " + e.msg;
        return false;
    }
    table = std::move(t);
    return true;
}

std::shared_ptr<const KernelTable> cachedKernelTable(const std::filesystem::path& path, std::string& error)
{
    static std::mutex mutex;
    static std::map<std::tuple<std::string, int64_t, int64_t>, std::shared_ptr<const KernelTable>> cache;
    struct stat info
    {
    };
    const std::string name = path.string();
    const auto key = ::stat(name.c_str(), &info) == 0
        ? std::tuple { name, int64_t(info.st_size), int64_t(info.st_mtim.tv_sec) * 1000000000 + info.st_mtim.tv_nsec }
        : std::tuple { name, int64_t(-1), int64_t(-1) };
    {
        std::lock_guard lock(mutex);
        if (const auto it = cache.find(key); it != cache.end())
            return it->second;
    }
    auto table = std::make_shared<KernelTable>();
    if (!readKernelTable(path, *table, error))
        return nullptr;
    std::lock_guard lock(mutex);
    if (cache.size() > 16)
        cache.clear();
    cache[key] = table;
    return table;
}

} // namespace stagecraft
