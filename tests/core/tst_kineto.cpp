// SPDX-License-Identifier: MIT
// Kineto (PyTorch profiler) trace reader and PyTorch memory timeline reader. The inputs are real traces from
// facebookresearch/HolisticTraceAnalysis tests/data (tests/data/kineto/README.md says which); every count below is
// an independent count made with Python's json module on the same file, quoted with its output where it is used.
#include "kineto/kinetoreader.h"
#include "kineto/memorytimeline.h"
#include "kineto/messagequote.h"

#include <QTemporaryDir>
#include <QTest>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sys/resource.h>
#include <sys/stat.h>
#include <zlib.h>

using namespace stagecraft;
namespace fs = std::filesystem;

namespace {
const fs::path s_data = fs::path(STAGECRAFT_TEST_DATA) / "kineto";

/// True when built with AddressSanitizer. Its allocator keeps freed blocks in a quarantine (256 MiB by default) and
/// maps shadow memory beside every allocation, so resident memory there says nothing about the reader's own bound;
/// the bounds below are asserted in the plain build, which the test command runs as well.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
#else
constexpr bool kAddressSanitizer = false;
#endif

constexpr const char* kAsanRssSkip =
    "under AddressSanitizer resident memory is not the reader's; the plain build checks it";

/// Peak resident memory of this process so far, MiB (Linux reports ru_maxrss in KiB).
double peakRssMiB()
{
    rusage usage {};
    getrusage(RUSAGE_SELF, &usage);
    return double(usage.ru_maxrss) / 1024.0;
}

/// Writes `head` and then `mib` MiB of `unit` as a gzip file of concatenated members (RFC 1952 §2.2; zlib reads
/// them as one stream): one member of 1 MiB of `unit` is compressed once and written `mib` times, so 1 GiB of
/// input costs a millisecond and about 1 MB of disk.
void writeGzip(const fs::path& path, const std::string& head, char unit, int64_t mib)
{
    const auto member = [](const std::string& text) {
        z_stream z {};
        deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY); // 15 + 16: gzip wrapper
        std::string out(deflateBound(&z, uLong(text.size())), '\0');
        z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
        z.avail_in = uInt(text.size());
        z.next_out = reinterpret_cast<Bytef*>(out.data());
        z.avail_out = uInt(out.size());
        deflate(&z, Z_FINISH);
        out.resize(z.total_out);
        deflateEnd(&z);
        return out;
    };
    std::ofstream out(path, std::ios::binary);
    const std::string first = member(head), block = member(std::string(size_t(1) << 20, unit));
    out.write(first.data(), std::streamsize(first.size()));
    for (int64_t i = 0; i < mib; ++i)
        out.write(block.data(), std::streamsize(block.size()));
}

std::string readAll(const fs::path& p)
{
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}
} // namespace

class TestKineto : public QObject
{
    Q_OBJECT

private slots:
    void htaTraces_data();
    void htaTraces();
    void largeHtaTraces_data();
    void largeHtaTraces();
    void ranksOfOneJob();
    void kernelsLinkToTheirOps();
    void collectiveArguments();
    void inputShapes();
    void memoryTimeline();
    void hostile_data();
    void hostile();
    void hostileFiles();
    void notRegularFiles();
    void eventLimit();
    void quoting();
    void memoryStaysBounded();
};

void TestKineto::htaTraces_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<qint64>("ops");
    QTest::addColumn<qint64>("kernels");
    QTest::addColumn<qint64>("nccl");
    QTest::addColumn<qint64>("rank");
    // Counted with (in tests/data/kineto):
    //   python3 -c "import json,gzip,glob
    //   for p in sorted(glob.glob('*.json*')):
    //     d=json.load((gzip.open if p.endswith('.gz') else open)(p,'rt')); e=d['traceEvents']
    //     X=[x for x in e if x.get('ph')=='X']; k=[x for x in X if x.get('cat','').lower()=='kernel']
    //     print(p, sum(x.get('cat')=='cpu_op' for x in X), len(k), sum('nccl' in x['name'].lower() for x in k),
    //           d.get('distributedInfo',{}).get('rank',-1))"
    // which printed (file, cpu ops, kernels, NCCL kernels, rank):
    //   backward_thread.json 3 1 0 0
    //   benchmark_result_2869224_1695835535_trace.json.gz 359 79 0 0
    //   benchmark_simple_add_trace.json.gz 28 4 0 0
    //   event_sync_multi_stream_trace.json.gz 6 3 0 0
    //   event_sync_trace.json.gz 10 4 0 0
    //   inference_rank_1.json.gz 0 4 0 1
    //   mi250_minitoy_train_ROCm6_2_kineto.json.gz 70 14 0 -1
    //   nccl_data.json.gz 14346 2700 21 0
    //   sampled_rank-0.json.gz 2329 1154 10 0
    //   sampled_rank-1.json.gz 2302 1104 10 1
    //   trace_compare_base.json.gz 6 6 0 1
    //   trace_compare_test.json.gz 9 5 0 1
    //   triton_example.json.gz 3 1 0 -1
    const auto row = [](const char* f, qint64 ops, qint64 kernels, qint64 nccl, qint64 rank) {
        QTest::newRow(f) << QString::fromLatin1(f) << ops << kernels << nccl << rank;
    };
    row("backward_thread.json", 3, 1, 0, 0);
    row("benchmark_result_2869224_1695835535_trace.json.gz", 359, 79, 0, 0);
    row("benchmark_simple_add_trace.json.gz", 28, 4, 0, 0);
    row("event_sync_multi_stream_trace.json.gz", 6, 3, 0, 0);
    row("event_sync_trace.json.gz", 10, 4, 0, 0);
    row("inference_rank_1.json.gz", 0, 4, 0, 1); // an older profiler: category "Kernel"
    row("mi250_minitoy_train_ROCm6_2_kineto.json.gz", 70, 14, 0, -1); // ROCm: streams written as "0x0"
    row("nccl_data.json.gz", 14346, 2700, 21, 0);
    row("sampled_rank-0.json.gz", 2329, 1154, 10, 0);
    row("sampled_rank-1.json.gz", 2302, 1104, 10, 1);
    row("trace_compare_base.json.gz", 6, 6, 0, 1);
    row("trace_compare_test.json.gz", 9, 5, 0, 1);
    row("triton_example.json.gz", 3, 1, 0, -1);
}

void TestKineto::htaTraces()
{
    QFETCH(QString, file);
    QFETCH(qint64, ops);
    QFETCH(qint64, kernels);
    QFETCH(qint64, nccl);
    QFETCH(qint64, rank);
    const KinetoReadResult r = readKinetoFile(s_data / file.toStdString());
    QVERIFY2(r.ok(), r.error.c_str());
    QCOMPARE(r.trace->cpuOps, ops);
    QCOMPARE(r.trace->kernels, kernels);
    QCOMPARE(r.trace->ncclKernels, nccl);
    QCOMPARE(r.trace->rank(), rank);
}

void TestKineto::largeHtaTraces_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<qint64>("ops");
    QTest::addColumn<qint64>("kernels");
    QTest::addColumn<qint64>("nccl");
    QTest::addColumn<qint64>("rank");
    // HolisticTraceAnalysis's traces over 1 MB (not committed: the repository keeps files under 1 MB). Counted with
    // the python3 line of htaTraces_data on each file, which printed:
    //   df_index_resolver/df_index_resolver.json.gz 56680 19370 2020 1
    //   negative_queue_length_values_check/rank0.json.gz 25185 6080 80 0
    //   ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz 23910 4350 0 0
    //   trace_diff/control/control.json.gz 40506 8568 60 3
    //   trace_diff/test/test.json.gz 31236 9876 64 1
    QTest::newRow("df_index_resolver") << "df_index_resolver/df_index_resolver.json.gz" << qint64(56680)
                                       << qint64(19370) << qint64(2020) << qint64(1);
    QTest::newRow("negative_queue_length") << "negative_queue_length_values_check/rank0.json.gz" << qint64(25185)
                                           << qint64(6080) << qint64(80) << qint64(0);
    QTest::newRow("ns_resolution") << "ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"
                                   << qint64(23910) << qint64(4350) << qint64(0) << qint64(0);
    QTest::newRow("trace_diff_control") << "trace_diff/control/control.json.gz" << qint64(40506) << qint64(8568)
                                        << qint64(60) << qint64(3);
    QTest::newRow("trace_diff_test") << "trace_diff/test/test.json.gz" << qint64(31236) << qint64(9876) << qint64(64)
                                     << qint64(1);
}

void TestKineto::largeHtaTraces()
{
    const char* root = std::getenv("STAGECRAFT_HTA_DATA");
    if (!root || !*root)
        QSKIP("set STAGECRAFT_HTA_DATA to a HolisticTraceAnalysis checkout's tests/data to read its large traces");
    QFETCH(QString, file);
    QFETCH(qint64, ops);
    QFETCH(qint64, kernels);
    QFETCH(qint64, nccl);
    QFETCH(qint64, rank);
    const KinetoReadResult r = readKinetoFile(fs::path(root) / file.toStdString());
    QVERIFY2(r.ok(), r.error.c_str());
    QCOMPARE(r.trace->cpuOps, ops);
    QCOMPARE(r.trace->kernels, kernels);
    QCOMPARE(r.trace->ncclKernels, nccl);
    QCOMPARE(r.trace->rank(), rank);
}

void TestKineto::ranksOfOneJob()
{
    // The two sampled ranks of one 128-GPU job: python3 -c "import json,gzip; [print(json.load(gzip.open(p,'rt'))
    // ['distributedInfo']) for p in ('sampled_rank-0.json.gz','sampled_rank-1.json.gz')]" printed
    // {'backend': 'nccl', 'rank': 0, 'world_size': 128} and {'backend': 'nccl', 'rank': 1, 'world_size': 128}.
    std::set<int64_t> ranks;
    for (const char* f : { "sampled_rank-0.json.gz", "sampled_rank-1.json.gz" }) {
        const KinetoReadResult r = readKinetoFile(s_data / f);
        QVERIFY2(r.ok(), r.error.c_str());
        QCOMPARE(r.trace->distributed.worldSize, int64_t(128));
        QCOMPARE(r.trace->distributed.backend, std::string("nccl"));
        ranks.insert(r.trace->rank());
    }
    QCOMPARE(ranks, (std::set<int64_t> { 0, 1 }));
    // nccl_data.json.gz's process groups: print(d['distributedInfo']['pg_config']) printed
    // [{'pg_name': '0', 'pg_desc': 'default_pg', 'backend_config': 'cuda:nccl', 'pg_size': 2, 'ranks': [0, 1]}].
    const KinetoReadResult r = readKinetoFile(s_data / "nccl_data.json.gz");
    QVERIFY2(r.ok(), r.error.c_str());
    QCOMPARE(r.trace->distributed.groups.size(), size_t(1));
    QCOMPARE(r.trace->distributed.groups[0].description, std::string("default_pg"));
    QCOMPARE(r.trace->distributed.groups[0].size, int64_t(2));
    QCOMPARE(r.trace->distributed.groups[0].ranks, (std::vector<int64_t> { 0, 1 }));
    QCOMPARE(r.trace->deviceName, std::string("NVIDIA A100-PG509-200"));
    QCOMPARE(r.trace->deviceCount, int64_t(8));
}

void TestKineto::kernelsLinkToTheirOps()
{
    // A kernel's launch (cuda_runtime, same "correlation") sits inside the CPU op that launched it on the same thread.
    // Counted independently with this python3 script on sampled_rank-0.json.gz (a stack sweep per thread over cpu_op
    // and cuda_runtime events sorted by (ts, op before launch, longer op first)):
    //   for each kernel, the innermost cpu_op around its launch; Counter of names:
    //   [('aten::mm', 232), ('aten::addmm', 114), ...]; and "1154 1138" for (kernels, kernels with such an op):
    //   16 kernels' launches are not in the (sampled) trace.
    const KinetoReadResult r = readKinetoFile(s_data / "sampled_rank-0.json.gz");
    QVERIFY2(r.ok(), r.error.c_str());
    const KinetoTrace& t = *r.trace;
    int64_t mm = 0, addmm = 0;
    for (const KinetoEvent& e : t.events) {
        if (e.kind != KinetoEventKind::Kernel || e.op < 0)
            continue;
        const std::string& op = t.nameOf(t.events[size_t(e.op)]);
        mm += op == "aten::mm";
        addmm += op == "aten::addmm";
    }
    QCOMPARE(mm, int64_t(232));
    QCOMPARE(addmm, int64_t(114));
    QCOMPARE(t.linkedKernels, int64_t(1138));
}

void TestKineto::collectiveArguments()
{
    // nccl_data.json.gz: python3 -c "import json,gzip; e=json.load(gzip.open('nccl_data.json.gz','rt'))
    //   ['traceEvents']; k=[x for x in e if x.get('cat')=='kernel' and 'nccl' in x['name'].lower()];
    //   print(len(k), sum('Collective name' in x['args'] for x in k), k[0]['args']['Collective name'],
    //   k[0]['args']['In msg nelems'], k[0]['args']['Group size'], k[0]['args']['dtype'])"
    // printed: 21 21 allreduce 6637568 2 Float
    const KinetoReadResult r = readKinetoFile(s_data / "nccl_data.json.gz");
    QVERIFY2(r.ok(), r.error.c_str());
    const KinetoTrace& t = *r.trace;
    int64_t withArgs = 0;
    const KinetoCollective* first = nullptr;
    for (const KinetoEvent& e : t.events)
        if (e.kind == KinetoEventKind::Kernel && e.collective >= 0) {
            ++withArgs;
            if (!first)
                first = &t.collectives[size_t(e.collective)];
        }
    QCOMPARE(withArgs, int64_t(21));
    QVERIFY(first);
    QCOMPARE(first->name, std::string("allreduce"));
    QCOMPARE(first->inNelems, int64_t(6637568));
    QCOMPARE(first->groupSize, int64_t(2));
    QCOMPARE(first->dtype, std::string("Float"));
    QCOMPARE(first->groupRanks, (std::vector<int64_t> { 0, 1 }));
}

void TestKineto::inputShapes()
{
    // sampled_rank-0.json.gz: the first aten::mm: python3 -c "import json,gzip; e=json.load(gzip.open(
    //   'sampled_rank-0.json.gz','rt'))['traceEvents']; m=[x for x in e if x.get('name')=='aten::mm'];
    //   print(len(m), m[0]['args']['Input Dims'], m[0]['args']['Input type'])"
    // printed: 231 [[2, 2048], [2048, 1]] ['float', 'float']
    const KinetoReadResult r = readKinetoFile(s_data / "sampled_rank-0.json.gz");
    QVERIFY2(r.ok(), r.error.c_str());
    const KinetoTrace& t = *r.trace;
    int64_t mm = 0;
    const KinetoShape* first = nullptr;
    for (const KinetoEvent& e : t.events)
        if (e.kind == KinetoEventKind::CpuOp && t.nameOf(e) == "aten::mm") {
            ++mm;
            if (!first && e.shape >= 0)
                first = &t.shapes[size_t(e.shape)];
        }
    QCOMPARE(mm, int64_t(231));
    QVERIFY(first);
    QCOMPARE(first->dims, (std::vector<std::vector<int64_t>> { { 2, 2048 }, { 2048, 1 } }));
    QCOMPARE(first->types, (std::vector<std::string> { "float", "float" }));
}

void TestKineto::memoryTimeline()
{
    // memory_timeline.raw.gz (HTA tests/data/memory_analysis): python3 -c "import json,gzip,itertools;
    //   ev=json.load(gzip.open('memory_timeline.raw.gz','rt')); t=[x[0] for x in ev if x[0]>=0];
    //   print(len(ev), t==sorted(t), len(set(t)), max(itertools.accumulate(x[2] for x in ev)))"
    // printed: 16845 True 7720 3082832104 (events, in time order, distinct times, peak live bytes). The reader adds
    // one point for the preexisting tensors (time -1) before the 7720 timed ones.
    const MemoryTimelineReadResult r = readMemoryTimelineFile(s_data / "memory_timeline.raw.gz");
    QVERIFY2(r.ok(), r.error.c_str());
    QCOMPARE(r.timeline->events, int64_t(16845));
    QCOMPARE(r.timeline->points.size(), size_t(7721));
    QCOMPARE(r.timeline->peakBytes, int64_t(3082832104));
    int64_t sum = 0;
    for (int64_t b : r.timeline->points.back().bytes)
        sum += b;
    QCOMPARE(sum, r.timeline->points.back().totalBytes);
}

void TestKineto::hostile_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QString>("error");
    const auto row = [](const char* name, const QByteArray& json, const char* error) {
        QTest::newRow(name) << json << QString::fromUtf8(error);
    };
    row("empty", "",
        "t:1:1: invalid JSON: syntax error while parsing value - unexpected end of input; expected '[', '{', or a "
        "literal");
    row("truncated", "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"na",
        "t:1:50: invalid JSON: syntax error while parsing object key - invalid string: missing closing quote; last "
        "read: '\"na'; expected string literal");
    row("brackets", QByteArray(100000, '['), "t:1:3: traceEvents[0]: expected an event object, found an array");
    row("deep", "{\"x\": " + QByteArray(100000, '['), "t:1:39: arrays and objects nested deeper than 32 levels");
    row("deep in args", "{\"traceEvents\":[{\"args\":{\"x\":" + QByteArray(40, '[') + QByteArray(40, ']') + "}}]}",
        "t:1:59: arrays and objects nested deeper than 32 levels");
    row("not a trace", "{\"schema\": 1}",
        "t:1:1: no \"traceEvents\" array: not a PyTorch profiler (Chrome trace) file");
    row("scalar root", "42",
        "t:1:3: expected a JSON object with \"traceEvents\" or an array of trace events, found the number 42");
    row("traceEvents not an array", "{\"traceEvents\": 5}",
        "t:1:19: \"traceEvents\": expected an array of events, found the number 5");
    row("event not an object", "{\"traceEvents\": [1]}",
        "t:1:20: traceEvents[0]: expected an event object, found the number 1");
    row("ts a string", "{\"traceEvents\": [{\"name\": \"aten::mm\", \"ts\": \"abc\"}]}",
        "t:1:50: traceEvents[0] (\"aten::mm\"): field \"ts\": expected a number (microseconds), found a string "
        "(\"abc\")");
    row("name a number", "{\"traceEvents\": [{\"name\": 7}]}",
        "t:1:29: traceEvents[0]: field \"name\": expected a string, found the number 7");
    row("args an array", "{\"traceEvents\": [{\"args\": []}]}",
        "t:1:28: traceEvents[0]: field \"args\": expected an object, found an array");
    row("dims not numbers", "{\"traceEvents\": [{\"args\": {\"Input Dims\": [[\"x\"]]}}]}",
        "t:1:47: traceEvents[0]: field \"Input Dims\": expected sizes (integers >= 0), found a string (\"x\")");
    row("huge ts", "{\"traceEvents\": [{\"ts\": 1e999}]}", "t:1:31: invalid JSON: number overflow parsing '1e999'");
    row("huge dur", "{\"traceEvents\": [{\"dur\": 123456789012345678901234567890}]}",
        "t:1:57: traceEvents[0]: field \"dur\": expected a duration from 0 to 1e17 microseconds, found the number "
        "123456789012345678901234567890");
    row("negative dur", "{\"traceEvents\": [{\"dur\": -5}]}",
        "t:1:29: traceEvents[0]: field \"dur\": expected a duration from 0 to 1e17 microseconds, found the number "
        "-5");
    row("huge id", "{\"traceEvents\": [{\"args\": {\"External id\": 1e30}}]}",
        "t:1:48: traceEvents[0]: field \"External id\": expected an integer, found the number 1e30");
    row("kernel without ts", "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\"}]}",
        "t:1:59: traceEvents[0] (\"k\"): a \"kernel\" event without \"ts\"");
    row("trailing garbage", "{\"traceEvents\": []} x",
        "t:1:22: invalid JSON: syntax error while parsing value - invalid literal; last read: '\"traceEvents\": []} "
        "x'; expected end of input");
    row("control bytes quoted", "{\"traceEvents\": [{\"ts\": \"\\u0001\\u001b[2J\"}]}",
        "t:1:42: traceEvents[0]: field \"ts\": expected a number (microseconds), found a string "
        "(\"\\x01\\x1B[2J\")");
    row("invalid utf-8", "{\"traceEvents\": [{\"name\": \"\xff\"}]}",
        "t:1:29: invalid JSON: syntax error while parsing value - invalid string: ill-formed UTF-8 byte; last "
        "read: '\"\\xFF'");
}

void TestKineto::hostile()
{
    QFETCH(QByteArray, json);
    QFETCH(QString, error);
    const KinetoReadResult r = readKinetoBytes(std::string_view(json.constData(), size_t(json.size())), "t");
    QVERIFY(!r.ok());
    QCOMPARE(QString::fromStdString(r.error), error);
}

void TestKineto::hostileFiles()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const fs::path root = dir.path().toStdString();
    const double rssBefore = peakRssMiB();
    {
        // 1 GiB of '[' (gzip, 1 MiB on disk): an array of events whose first event is an array; under a key, the
        // depth limit stops it after 32 levels.
        const fs::path p = root / "brackets.json.gz";
        writeGzip(p, "", '[', 1024);
        const KinetoReadResult r = readKinetoFile(p);
        QCOMPARE(QString::fromStdString(r.error),
            QString::fromStdString(p.string() + ":1:3: traceEvents[0]: expected an event object, found an array"));
        writeGzip(p, "{\"traceEvents\": [], \"x\": ", '[', 1024);
        const KinetoReadResult deep = readKinetoFile(p);
        QCOMPARE(QString::fromStdString(deep.error),
            QString::fromStdString(p.string() + ":1:58: arrays and objects nested deeper than 32 levels"));
        fs::remove(p);
    }
    {
        // A 1 GiB string: the token limit stops it after 4 MiB of input.
        const fs::path p = root / "string.json.gz";
        writeGzip(p, "{\"traceEvents\": [{\"name\": \"", 'a', 1024);
        const KinetoReadResult r = readKinetoFile(p);
        QVERIFY2(
            !r.ok() && r.error.find("more than 4 MiB of input without the end of a JSON value") != std::string::npos,
            r.error.c_str());
        fs::remove(p);
    }
    {
        // 1 GiB of spaces against a 1 MiB limit on the JSON text: the limit check, not the disk, is what is tested.
        const fs::path p = root / "spaces.json.gz";
        writeGzip(p, "", ' ', 1024);
        KinetoReadOptions options;
        options.limits.maxJsonBytes = 1 << 20;
        const KinetoReadResult r = readKinetoFile(p, options);
        QCOMPARE(QString::fromStdString(r.error),
            QString::fromStdString(p.string()
                + ":1:1048577: the JSON text is larger than the limit of 1048576 bytes (1 MiB) after decompression"));
        fs::remove(p);
    }
    {
        // A truncated gzip file: half of a real trace.
        const std::string bytes = readAll(s_data / "benchmark_result_2869224_1695835535_trace.json.gz");
        const fs::path p = root / "truncated.json.gz";
        std::ofstream(p, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size() / 2));
        const KinetoReadResult r = readKinetoFile(p);
        QVERIFY2(
            !r.ok() && r.error.find("the gzip data is truncated or corrupt") != std::string::npos, r.error.c_str());
    }
    {
        // A file over the size limit is refused before it is read.
        const fs::path p = root / "big.json";
        std::ofstream(p) << "{\"traceEvents\": []}\n";
        KinetoReadOptions options;
        options.limits.maxFileBytes = 10;
        const KinetoReadResult r = readKinetoFile(p, options);
        QCOMPARE(QString::fromStdString(r.error),
            QString::fromStdString(p.string() + ": the file has 20 bytes, more than the limit of 10 (0 MiB)"));
    }
    // Nothing above may have cost more than a few MiB (the 1 GiB inputs are never held).
    if (kAddressSanitizer)
        QSKIP(kAsanRssSkip);
    QVERIFY2(peakRssMiB() - rssBefore < 64, std::to_string(peakRssMiB() - rssBefore).c_str());
}

void TestKineto::notRegularFiles()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const fs::path fifo = fs::path(dir.path().toStdString()) / "fifo.json";
    QCOMPARE(mkfifo(fifo.c_str(), 0600), 0);
    const KinetoReadResult r = readKinetoFile(fifo); // must not block
    QCOMPARE(QString::fromStdString(r.error),
        QString::fromStdString(fifo.string()
            + ": is a FIFO (named pipe), expected a JSON or .json.gz file (a "
              "regular file)"));
    const KinetoReadResult d = readKinetoFile(dir.path().toStdString());
    QVERIFY(d.error.find("is a directory") != std::string::npos);
    const KinetoReadResult missing = readKinetoFile(fs::path(dir.path().toStdString()) / "nope.json");
    QVERIFY(missing.error.find("cannot open: No such file or directory") != std::string::npos);
}

void TestKineto::eventLimit()
{
    KinetoReadOptions options;
    options.maxEvents = 10;
    const KinetoReadResult r = readKinetoFile(s_data / "benchmark_simple_add_trace.json.gz", options);
    QVERIFY(!r.ok());
    QVERIFY2(r.error.find("more than 10 CPU ops, launches and GPU events") != std::string::npos, r.error.c_str());
}

void TestKineto::quoting()
{
    QCOMPARE(quoteForMessage("aten::mm"), std::string("aten::mm"));
    QCOMPARE(quoteForMessage("a\nb\x7f"), std::string("a\\x0Ab\\x7F"));
    QCOMPARE(quoteForMessage("\xc3\xa9\xc3"), std::string("\xc3\xa9\\xC3")); // é kept, a cut sequence escaped
    QCOMPARE(quoteForMessage("\xed\xa0\x80"), std::string("\\xED\\xA0\\x80")); // a UTF-16 surrogate
    QCOMPARE(quoteForMessage(std::string(500, 'x'), 10), std::string(10, 'x') + "...");
}

void TestKineto::memoryStaysBounded()
{
    // The whole test so far (every trace above, the 1 GiB inputs) within the 200 MB.
    if (kAddressSanitizer)
        QSKIP(kAsanRssSkip);
    QVERIFY2(peakRssMiB() < 200, std::to_string(peakRssMiB()).c_str());
}

QTEST_GUILESS_MAIN(TestKineto)
#include "tst_kineto.moc"
