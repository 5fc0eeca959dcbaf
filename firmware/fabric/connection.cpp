#include "fabric/connection.h"

#include <stddef.h>

#include "hal/noc.h"
#include "rt/address.h"

namespace weft::fabric {

uint32_t Connection::room() {
    if (!open_) open();
    return c_->lane.slots - (sent_ - noc::semaphore_read(c_->lane.freed));
}

void Connection::open() {
    const abi::FabricRing& lane = c_->lane;
    // Every packet before ours was freed, so `written` is where `freed` stands too.
    noc::async_read(lane.written, lane.freed, 4);
    noc::barrier();
    sent_ = noc::semaphore_read(lane.freed);
    // Ordered before our first packet's increment of `written` on this core's queue.
    noc::async_write(address_of(&lane.freed), c_->router_lane + offsetof(abi::FabricRing, freed), sizeof lane.freed);
    open_ = true;
}

void Connection::send(abi::FabricPacketHeader h, uint64_t payload) {
    if (!open_) open();
    const abi::FabricRing& lane = c_->lane;
    // Counters run free from where the lane stood at open: our slot is free
    // once `freed` counts the packet that used it last.
    if (room() == 0) noc::semaphore_wait_min(lane.freed, sent_ + 1 - lane.slots);
    const uint32_t slot = sent_ % lane.slots;
    h.seq = sent_;
    auto* staged = pointer_to<abi::FabricPacketHeader>(c_->headers + uint64_t(abi::kFabricHeaderBytes) * slot);
    *staged = h;
    const uint64_t dst = lane.buffer + uint64_t(c_->slot_size) * slot;
    noc::async_write(address_of(staged), dst, abi::kFabricHeaderBytes);
    if (h.payload_bytes) noc::async_write(payload, dst + abi::kFabricHeaderBytes, h.payload_bytes);
    noc::semaphore_inc(lane.written, 1);  // after the bytes on this core's NoC queue
    ++sent_;
}

abi::FabricPacketHeader Connection::header(const Route& to, uint8_t command) const {
    abi::FabricPacketHeader h{};
    h.src = c_->self;
    h.dst = to.dst;
    h.noc_command = command;
    h.send_type = to.count > 1 ? abi::kFabricMulticast : abi::kFabricUnicast;
    h.ttl = to.ttl;
    h.hops = to.hops;
    h.mcast_count = to.count;
    h.dst_core = to.core;
    h.route = to.route;
    return h;
}

Route Connection::route_to(uint16_t chip, uint8_t* first) const {
    const uint64_t entry = c_->route_table + offsetof(abi::FabricRouteTable, to) + sizeof(abi::FabricRouteEntry) * chip;
    noc::async_read(entry, c_->scratch, sizeof(abi::FabricRouteEntry));
    noc::barrier();
    const auto& e = *pointer_to<const volatile abi::FabricRouteEntry>(c_->scratch);
    Route r;
    r.dst = {c_->self.mesh, chip};
    r.hops = e.hops;
    r.route = e.route;
    *first = e.first;
    return r;
}

void Connection::write(const Route& to, uint64_t dst, uint64_t src, uint32_t bytes, uint64_t sem, uint32_t inc) {
    const uint32_t most = max_payload();
    do {
        const uint32_t n = bytes < most ? bytes : most;
        const bool last = n == bytes;
        abi::FabricPacketHeader h = header(to, last && sem ? abi::kFabricWriteInc : abi::kFabricWrite);
        h.payload_bytes = n;
        h.dst_address = dst;
        if (last && sem) {
            h.sem_address = sem;
            h.inc_value = inc;
        }
        send(h, src);
        dst += n;
        src += n;
        bytes -= n;
    } while (bytes);
}

void Connection::atomic_inc(const Route& to, uint64_t sem, uint32_t inc) {
    abi::FabricPacketHeader h = header(to, abi::kFabricAtomicInc);
    h.sem_address = sem;
    h.inc_value = inc;
    send(h, 0);
}

void Connection::inline_write(const Route& to, uint64_t dst, uint32_t value) {
    abi::FabricPacketHeader h = header(to, abi::kFabricInlineWrite);
    h.dst_address = dst;
    h.inc_value = value;
    send(h, 0);
}

void Connection::scatter_write(const Route& to, const uint64_t* dst, uint32_t parts, uint64_t src,
                               uint32_t part_bytes) {
    abi::FabricPacketHeader h = header(to, abi::kFabricScatterWrite);
    h.dst_address = dst[0];
    h.scatter[0] = parts > 1 ? dst[1] : 0;
    h.scatter[1] = parts > 2 ? dst[2] : 0;
    h.payload_bytes = part_bytes * (parts > 3 ? 3 : parts ? parts : 1);
    send(h, src);
}

void Connection::close() {
    if (sent_) noc::semaphore_wait_min(c_->lane.freed, sent_);
}

}  // namespace weft::fabric
