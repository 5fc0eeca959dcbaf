#include "ccl/calls.h"

#include "common/error.h"

namespace weft::ccl {
namespace {

// count elements (times `ranks` for a per-rank count) as the request's bytes.
OpRequest request(Collective c, uint64_t send, uint64_t recv, uint64_t count, uint64_t ranks, abi::DataType dtype) {
    if (count == 0) throw Error(collective_name(c) + " of 0 elements: the count must be at least 1");
    const uint64_t size = dtype_size(dtype);
    if (count > (uint64_t(1) << 40) / size / ranks)
        throw Error(collective_name(c) + " of " + std::to_string(count) + " elements is beyond any chip's DRAM");
    if (send == 0 || recv == 0)
        throw Error(collective_name(c) +
                    ": address 0 is not a buffer (give both send and recv; the same for in place)");
    OpRequest r;
    r.op = c;
    r.dtype = dtype;
    r.bytes = count * ranks * size;
    r.send = send;
    r.recv = recv;
    return r;
}

}  // namespace

PendingOp all_reduce(CollectiveRunner& runner, uint64_t send, uint64_t recv, uint64_t count, abi::DataType dtype,
                     abi::MathOp op) {
    OpRequest r = request(Collective::kAllReduce, send, recv, count, 1, dtype);
    r.redop = op;
    return runner.start(r);
}

PendingOp all_gather(CollectiveRunner& runner, uint64_t send, uint64_t recv, uint64_t sendcount, abi::DataType dtype) {
    return runner.start(request(Collective::kAllGather, send, recv, sendcount, runner.topology().size(), dtype));
}

PendingOp reduce_scatter(CollectiveRunner& runner, uint64_t send, uint64_t recv, uint64_t recvcount,
                         abi::DataType dtype, abi::MathOp op) {
    OpRequest r = request(Collective::kReduceScatter, send, recv, recvcount, runner.topology().size(), dtype);
    r.redop = op;
    return runner.start(r);
}

PendingOp broadcast(CollectiveRunner& runner, uint64_t send, uint64_t recv, uint64_t count, abi::DataType dtype,
                    uint32_t root) {
    OpRequest r = request(Collective::kBroadcast, send, recv, count, 1, dtype);
    r.root = root;
    return runner.start(r);
}

PendingOp reduce(CollectiveRunner& runner, uint64_t send, uint64_t recv, uint64_t count, abi::DataType dtype,
                 abi::MathOp op, uint32_t root) {
    OpRequest r = request(Collective::kReduce, send, recv, count, 1, dtype);
    r.redop = op;
    r.root = root;
    return runner.start(r);
}

}  // namespace weft::ccl
