// Runs one worker's part of a collective op: a program of sends and receives
// on its channels, local copies, and waits/signals between the workers of this
// chip, built by the host op lowering (host/ccl/lowering.cpp). Its arguments
// are abi::CclWorkerArgs; each channel is a stream end of whatever transport
// the host chose (abi::ChannelRef). Returns the instructions run.
#include "edm/edm_channel.h"
#include "fabric/fabric_channel.h"
#include "hal/math.h"
#include "hal/noc.h"
#include "kernels/kernel.h"
#include "rt/address.h"
#include "transport/page_stream.h"
#include "weft/abi/ccl.h"

using namespace weft;

namespace {

// Room for one open channel of any transport this kernel speaks.
struct ChannelStorage {
    edm::EdmChannel edm;
    fabric::FabricChannel fabric;
};

transport::Channel* open_channel(const abi::ChannelRef& ref, ChannelStorage& storage, fabric::ConnectionPool& pool) {
    switch (ref.transport) {
        case abi::kTransportEdm:
            storage.edm = edm::EdmChannel(*pointer_to<const abi::EdmWorkerConnection>(ref.address));
            return &storage.edm;
        case abi::kTransportFabric:
            storage.fabric = fabric::FabricChannel(*pointer_to<const abi::FabricStreamEnd>(ref.address), pool);
            return &storage.fabric;
    }
    mailbox::panic(abi::kPanicBadArgs, ref.transport);
    return nullptr;
}

// Every channel settles what its transport still owes: nothing may land in
// our L1 once we are gone. Receivers pay first: a peer's sender may be
// waiting for them while we wait for its receiver's. `sending`: bit c set
// when the program sent on channel c (a channel is one end of one stream).
void finish_channels(transport::Channel* const* channel, uint32_t channels, uint64_t sending) {
    for (uint32_t senders = 0; senders < 2; ++senders)
        for (uint32_t c = 0; c < channels; ++c)
            if (((sending >> c) & 1) == senders) channel[c]->finish();
}

bool uses_channel(uint32_t opcode) {
    return opcode == abi::kCclSend || opcode == abi::kCclRecv || opcode == abi::kCclRecvReduce;
}

// Ops whose last effects are queued on the math ring, not the NoC ring.
bool ends_on_math(uint32_t opcode) { return opcode == abi::kCclRecvReduce || opcode == abi::kCclReduce; }

bool moves_by_noc(uint32_t opcode) {
    return opcode == abi::kCclSend || opcode == abi::kCclRecv || opcode == abi::kCclCopy;
}

// A signal follows its op (the lowering emits it right after): it goes on the
// ring the op's last effects are queued on, so the consumer it wakes finds
// them done. On the NoC ring after a reduction it could land first: the
// engine may run a core's NoC ring a pass ahead of its math ring.
void signal(uint64_t semaphore, uint32_t after_opcode) {
    if (ends_on_math(after_opcode)) math::semaphore_inc(semaphore, 1);
    else
        noc::semaphore_inc(semaphore, 1);
}

void run(const abi::CclInstr& in, uint32_t i, transport::Channel* channel, uint64_t signals, uint32_t last_op) {
    switch (in.opcode) {
        case abi::kCclSend: transport::stream_send(*channel, in.src); break;
        case abi::kCclRecv: transport::stream_receive(*channel, in.dst); break;
        case abi::kCclRecvReduce:
            transport::stream_receive_reduce(*channel, in.src, in.dst, abi::ccl_reduce_op(in.arg), abi::ccl_reduce_dtype(in.arg));
            break;
        case abi::kCclCopy: transport::copy_pages(in.src, in.dst); break;
        case abi::kCclWait:
            if (in.arg >= abi::kCclMaxProducers) mailbox::panic(abi::kPanicBadArgs, i);
            noc::semaphore_wait_min(signals + 4ull * in.arg, in.count);
            break;
        case abi::kCclSignal: signal(in.dst.base, last_op); break;
        case abi::kCclReduce:
            transport::reduce_pages(in.src, in.dst, abi::ccl_reduce_op(in.arg), abi::ccl_reduce_dtype(in.arg));
            break;
        default: mailbox::panic(abi::kPanicBadArgs, i);
    }
}

}  // namespace

extern "C" int kernel_main(KernelArgs a) {
    const auto& args = a.as<abi::CclWorkerArgs>();
    const auto* program = pointer_to<const abi::CclInstr>(args.program);
    const uint32_t channels = args.channels ? args.channel_count : 0;
    if (channels > abi::kCclMaxChannels) mailbox::panic(abi::kPanicBadArgs, channels);
    const auto* refs = pointer_to<const abi::ChannelRef>(args.channels);
    ChannelStorage storage[abi::kCclMaxChannels];
    fabric::ConnectionPool pool;
    transport::Channel* channel[abi::kCclMaxChannels] = {};
    for (uint32_t c = 0; c < channels; ++c) channel[c] = open_channel(refs[c], storage[c], pool);
    uint32_t last_op = 0;       // the last op other than a signal
    bool math_pending = false;  // a reduction of ours may still be running
    uint64_t sending = 0;       // bit c: we sent on channel c
    for (uint32_t i = 0; i < args.instructions; ++i) {
        const abi::CclInstr& in = program[i];
        mailbox::set_progress(i);
        if (uses_channel(in.opcode) && in.channel >= channels) mailbox::panic(abi::kPanicBadArgs, i);
        // The NoC ring may run ahead of the math ring: an op that moves bytes
        // by NoC after a reduction of this worker (waits and signals between
        // them or not) must not touch them before the math engine is done.
        if (math_pending && moves_by_noc(in.opcode)) {
            math::barrier();
            math_pending = false;
        }
        run(in, i, uses_channel(in.opcode) ? channel[in.channel] : nullptr, args.signals, last_op);
        if (ends_on_math(in.opcode)) math_pending = true;
        if (in.opcode == abi::kCclSend) sending |= uint64_t(1) << in.channel;
        if (in.opcode != abi::kCclSignal) last_op = in.opcode;
    }
    finish_channels(channel, channels, sending);
    pool.close_all();  // the fabric's lanes: every packet sent before we go
    noc::barrier();
    math::barrier();
    return static_cast<int>(args.instructions);
}
