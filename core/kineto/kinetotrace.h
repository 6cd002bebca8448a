// SPDX-License-Identifier: MIT
// One rank's PyTorch profiler (Kineto) trace as the Kineto reader keeps it: only the events a calibration and a
// comparison need (CPU ops, runtime launches, GPU kernels, copies and sets, annotations), their shapes and
// collective arguments, the distributed info block and the device name. Format: the Chrome trace event format
// ("traceEvents", phase "X" complete events, times in microseconds) with Kineto's categories and args, as
// torch.profiler's export_chrome_trace writes it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace stagecraft {

enum class KinetoEventKind : uint8_t
{
    CpuOp, ///< cat "cpu_op" (an ATen op or autograd function on a CPU thread)
    Runtime, ///< cat "cuda_runtime" / "cuda_driver" (a launch; links a kernel to its op by "correlation")
    Kernel, ///< cat "kernel"
    Memcpy, ///< cat "gpu_memcpy"
    Memset, ///< cat "gpu_memset"
    Annotation, ///< cat "user_annotation" (record_function ranges, "ProfilerStep#N")
    GpuAnnotation, ///< cat "gpu_user_annotation"
};
const char* toString(KinetoEventKind kind);

/// "Input Dims" and "Input type" of a CPU op recorded with record_shapes=True. An input that is not a tensor has
/// no dims (a scalar) or, for a list of tensors, the dims of its first tensor.
struct KinetoShape
{
    std::vector<std::vector<int64_t>> dims;
    std::vector<std::string> types; ///< "float", "c10::BFloat16", "c10::Half", "Scalar", ...
};

/// The collective arguments PyTorch's NCCL process group records ("record_param_comms" op and, in newer
/// profilers, the NCCL kernel itself).
struct KinetoCollective
{
    std::string name; ///< "Collective name": "allreduce", "allgather", "reduce_scatter", "all_to_all", ...
    int64_t inNelems = -1;
    int64_t outNelems = -1;
    int64_t groupSize = -1;
    std::string dtype; ///< "Float", "BFloat16", ...
    std::string groupName; ///< "Process Group Name"
    std::vector<int64_t> groupRanks; ///< "Process Group Ranks" (a list, or a string "[0, 1]")
};

struct KinetoEvent
{
    double tsUs = 0;
    double durUs = 0;
    int64_t externalId = -1; ///< args "External id"
    int64_t correlation = -1; ///< args "correlation" (runtime and GPU events)
    /// CPU ops recorded with shapes: bytes of their tensor inputs plus an output the size of the largest input (what
    /// an elementwise kernel reads and writes); -1 without shapes.
    int64_t bytes = -1;
    int32_t name = -1; ///< index into KinetoTrace::names
    int32_t thread = -1; ///< index into KinetoTrace::threads (CPU events) or the stream (GPU events)
    int32_t shape = -1; ///< index into KinetoTrace::shapes
    int32_t collective = -1; ///< index into KinetoTrace::collectives
    /// GPU events: the CPU op that launched them (index into events), -1 if none was found. Runtime events: the
    /// innermost CPU op around them on their thread.
    int32_t op = -1;
    int32_t device = -1;
    KinetoEventKind kind = KinetoEventKind::CpuOp;
};

struct KinetoProcessGroup
{
    std::string name;
    std::string description;
    int64_t size = -1;
    std::vector<int64_t> ranks;
};

/// The "distributedInfo" block.
struct KinetoDistributedInfo
{
    bool present = false;
    std::string backend;
    int64_t rank = -1;
    int64_t worldSize = -1;
    std::vector<KinetoProcessGroup> groups; ///< "pg_config"
};

struct KinetoTrace
{
    std::string source; ///< file name, for messages
    std::vector<std::string> names; ///< interned event names
    std::vector<std::string> threads; ///< "pid/tid" of CPU threads, "stream N" of GPU streams
    std::vector<KinetoEvent> events; ///< in file order
    std::vector<KinetoShape> shapes;
    std::vector<KinetoCollective> collectives;
    KinetoDistributedInfo distributed;
    std::string deviceName; ///< deviceProperties[0].name, "" if absent
    int64_t deviceCount = 0;

    /// Counts by kind; `ncclKernels` are kernels whose name contains "nccl" (any case).
    int64_t cpuOps = 0, runtimeEvents = 0, kernels = 0, ncclKernels = 0, memcpys = 0, memsets = 0, annotations = 0;
    int64_t linkedKernels = 0; ///< kernels whose launching CPU op was found
    int64_t droppedEvents = 0; ///< events of other categories or phases, not kept

    const std::string& nameOf(const KinetoEvent& e) const
    {
        static const std::string none;
        return e.name >= 0 ? names[size_t(e.name)] : none;
    }
    /// The rank: distributedInfo.rank, -1 when the trace does not say.
    int64_t rank() const
    {
        return distributed.rank;
    }
};

} // namespace stagecraft
