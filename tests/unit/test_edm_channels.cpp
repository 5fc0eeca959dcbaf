// The EDM's channel state machines on the host board: two EDM instances (the
// real firmware code) joined by a simulated link, with the test playing the
// NoC/Ethernet devices (the bridge's ring consumer) and the workers, step by
// step and in whatever order a case needs.
#include <cstring>
#include <memory>
#include <vector>

#include "devices/devices.h"
#include "edm/edm.h"
#include "host_board.h"
#include "weft/abi/fault.h"

// cmocka last: its fail() macro would clash with the C++ headers.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

using namespace weft;

namespace {

constexpr uint32_t kPort = 1, kEdmCore = 1;

using host_board::Panic;

uint64_t addr(const void* p) { return reinterpret_cast<uint64_t>(p); }

// One end of the link: its chip's control block, the EDM's L1 and a worker's L1.
struct End {
    std::unique_ptr<abi::ChipControlBlock> cb = std::make_unique<abi::ChipControlBlock>();
    abi::EdmConfig config{};
    abi::EdmLinkWords link{};
    std::vector<uint8_t> edm_buffers;
    uint32_t edm_sems[2 * abi::kEdmMaxSlots] = {};  // senders: message lengths after the semaphores
    uint32_t control_sem = 0;
    uint32_t worker_sems[abi::kEdmMaxSlots] = {};
    std::unique_ptr<host_board::Core> core;  // the EDM's core, on this end's chip
    std::unique_ptr<edm::Edm> edm;
    End() { *cb = abi::ChipControlBlock{}; }
};

// A link with one channel from end a to end b (and optionally one back).
struct Link {
    host_board::Clock clock;  // both ends on one time
    End end[2];
    ChipMemory everything{nullptr, 0, ~0ull};  // addresses are host pointers
    BoardInfo board;
    DeviceCounters counters;
    uint32_t slots, size;
    bool wire_up = true;
    uint32_t wire_budget = 64;  // Ethernet commands the wire completes per look at the ring

    Link(uint32_t slots_, uint32_t size_, uint32_t termination, uint32_t count, int initiator = 0)
        : slots(slots_), size(size_) {
        for (int e = 0; e < 2; ++e) {
            End& x = end[e];
            x.core = std::make_unique<host_board::Core>(*x.cb, kEdmCore, clock);
            x.core->on_sleep = [this] { devices(); };
            x.core->throw_on_panic();
            x.edm_buffers.assign(uint64_t(slots) * size, 0);
            abi::EdmConfig& c = x.config;
            c.magic = abi::kEdmMagic;
            c.port = kPort;
            c.epoch = 7;
            c.termination = termination;
            c.handshake_initiator = e == initiator;
            c.num_channels = 1;
            c.link_words = addr(&x.link);
            c.handshake_retry_us = 100;
            abi::EdmChannel& ch = c.channels[0];
            ch.id = 0;
            ch.role = e == 0 ? abi::kEdmSender : abi::kEdmReceiver;
            ch.slots = slots;
            ch.slot_size = size;
            ch.message_count = count;
            ch.num_workers = 1;
            ch.buffer_base = addr(x.edm_buffers.data());
            ch.semaphore_base = addr(x.edm_sems);
            if (e == 1) ch.control_semaphore = addr(&x.control_sem);
            ch.workers[0].semaphore_base = addr(x.worker_sems);
        }
        for (int e = 0; e < 2; ++e) end[e].config.peer_link_words = addr(&end[1 - e].link);
        end[0].config.channels[0].remote_buffer_base = addr(end[1].edm_buffers.data());
    }

    void start(int e) {
        host_board::Enter entered(*end[e].core);
        end[e].edm = std::make_unique<edm::Edm>(end[e].config);
    }
    // The bridge: NoC commands of the EDM core, Ethernet frames on the wire.
    void devices() {
        for (int e = 0; e < 2; ++e) {
            run_noc_ring(everything, board, end[e].cb->noc[kEdmCore], 64, counters);
            if (!wire_up) continue;
            consume_ring(end[e].cb->eth[kPort], wire_budget, [](const abi::EthCommand& c) -> uint32_t {
                if (c.op == abi::kEthSendBytes)
                    memcpy(reinterpret_cast<void*>(c.dst), reinterpret_cast<void*>(c.src), c.len);
                else
                    *reinterpret_cast<volatile uint32_t*>(c.dst) = c.value;
                return abi::kRingOk;
            });
        }
    }
    bool poll(int e) {
        if (!end[e].edm) return false;
        bool moved = host_board::run_as(*end[e].core, [&] { return end[e].edm->poll(); });
        devices();
        return moved;
    }
    bool done(int e) const { return end[e].edm && end[e].edm->done(); }
};

// Polls both EDMs, lets time pass, then lets the workers act, until both EDMs
// are done or the steps run out.
template <typename Workers>
void run(Link& l, int steps, Workers workers, uint64_t tick = 0) {
    for (int step = 0; step < steps && !(l.done(0) && l.done(1)); ++step) {
        l.poll(0);
        l.poll(1);
        l.clock.now += tick;
        workers();
    }
}

// The sender worker, the EDM protocol: wait for its semaphore, clear it, write, signal.
bool worker_send(Link& l, uint32_t message, uint32_t signal = abi::kEdmNextMessageAvailable) {
    End& a = l.end[0];
    const uint32_t slot = message % l.slots;
    if (a.worker_sems[slot] == 0) return false;
    a.worker_sems[slot] = 0;
    if (signal != abi::kEdmTerminateImmediately) memset(a.edm_buffers.data() + slot * l.size, int(message + 1), l.size);
    a.edm_sems[slot] += signal;
    return true;
}

// The receiver worker (pull): wait, clear, read, release.
bool worker_receive(Link& l, uint32_t message, std::vector<uint8_t>* got,
                    uint32_t signal = abi::kEdmNextMessageAvailable) {
    End& b = l.end[1];
    const uint32_t slot = message % l.slots;
    if (b.worker_sems[slot] == 0) return false;
    b.worker_sems[slot] = 0;
    got->push_back(b.edm_buffers[slot * l.size]);
    got->push_back(b.edm_buffers[slot * l.size + l.size - 1]);
    b.edm_sems[slot] += signal;
    return true;
}

void test_ordering_and_slot_wrap(void**) {
    Link l(3, 64, abi::kEdmMessageCount, 10);
    l.start(0);
    l.start(1);
    std::vector<uint8_t> got;
    uint32_t sent = 0, received = 0;
    run(l, 2000, [&] {
        if (sent < 10 && worker_send(l, sent)) ++sent;
        if (received < 10 && worker_receive(l, received, &got)) ++received;
    });
    assert_true(l.done(0) && l.done(1));
    assert_int_equal(got.size(), 20);
    for (uint32_t m = 0; m < 10; ++m) {  // every message whole and in order, across three slots' wrap
        assert_int_equal(got[2 * m], m + 1);
        assert_int_equal(got[2 * m + 1], m + 1);
    }
    assert_int_equal(l.end[0].link.acked[0], 10);
    assert_int_equal(l.end[1].link.filled[0], 10);
}

// The initiator resends its handshake until the late side answers; either side may initiate.
void run_late_start(int initiator, int late) {
    Link l(2, 32, abi::kEdmMessageCount, 4, initiator);
    l.start(1 - late);
    for (int step = 0; step < 200; ++step) {
        l.poll(1 - late);
        l.clock.now += 200;  // time passes: the initiator retries
    }
    assert_false(l.end[1 - late].edm->handshake_done());
    if (initiator != late) assert_true(l.end[initiator].cb->eth[kPort].tail > 1);  // it resent
    l.start(late);
    std::vector<uint8_t> got;
    uint32_t sent = 0, received = 0;
    run(
        l, 2000,
        [&] {
            if (sent < 4 && worker_send(l, sent)) ++sent;
            if (received < 4 && worker_receive(l, received, &got)) ++received;
        },
        200);
    assert_true(l.done(0) && l.done(1));
    assert_int_equal(received, 4);
}

void test_handshake_from_either_side(void**) {
    run_late_start(0, 1);
    run_late_start(0, 0);
    run_late_start(1, 0);
    run_late_start(1, 1);
}

void test_stale_handshake_is_ignored(void**) {
    Link l(2, 32, abi::kEdmMessageCount, 1, 0);
    l.end[1].link.handshake = 6;  // left by an earlier invocation (epoch 6)
    l.start(1);
    for (int i = 0; i < 50; ++i) l.poll(1);
    assert_false(l.end[1].edm->handshake_done());
    assert_int_equal(l.end[0].link.handshake_ack, 0);  // nothing was acknowledged
}

void test_worker_initiated_last_message(void**) {
    Link l(2, 32, abi::kEdmWorkerInitiated, 0);
    l.start(0);
    l.start(1);
    std::vector<uint8_t> got;
    uint32_t sent = 0, received = 0;
    run(l, 2000, [&] {
        if (sent < 5 && worker_send(l, sent, sent == 4 ? abi::kEdmNextMessageIsLast : abi::kEdmNextMessageAvailable))
            ++sent;
        if (received < 5 && worker_receive(l, received, &got,
                                           received == 4 ? abi::kEdmNextMessageIsLast : abi::kEdmNextMessageAvailable))
            ++received;
    });
    assert_true(l.done(0) && l.done(1));
    assert_int_equal(l.end[0].link.acked[0], 5);
}

// A sender worker that closes early with "terminate immediately", and a receiver that follows.
void test_worker_closes_early(void**) {
    Link l(2, 32, abi::kEdmWorkerInitiated, 0);
    l.start(0);
    l.start(1);
    std::vector<uint8_t> got;
    uint32_t sent = 0, received = 0;
    bool closed = false, receiver_closed = false;
    run(l, 2000, [&] {
        if (sent < 2 && worker_send(l, sent)) ++sent;
        else if (sent == 2 && !closed)
            closed = worker_send(l, 2, abi::kEdmTerminateImmediately);
        if (received < 2 && worker_receive(l, received, &got)) ++received;
        else if (received == 2 && !receiver_closed) {
            l.end[1].control_sem += abi::kEdmTerminateImmediately;
            receiver_closed = true;
        }
    });
    assert_true(l.done(0) && l.done(1));
    assert_int_equal(l.end[1].link.filled[0], 2);  // the terminate carried no payload
}

// A receiver worker that stops right after its last read: the terminate may
// land before the EDM has seen that read's release, and must not be lost in it.
void test_receiver_terminate_races_last_release(void**) {
    Link l(2, 32, abi::kEdmWorkerInitiated, 0);
    l.start(0);
    l.start(1);
    std::vector<uint8_t> got;
    uint32_t sent = 0, received = 0;
    bool closed = false, terminated = false;
    for (int step = 0; step < 2000 && !(l.done(0) && l.done(1)); ++step) {
        l.poll(0);
        if (sent < 3 && worker_send(l, sent)) ++sent;
        else if (sent == 3 && !closed)
            closed = worker_send(l, 3, abi::kEdmTerminateImmediately);
        if (received < 3 && worker_receive(l, received, &got)) {
            if (++received == 3) {
                l.end[1].control_sem += abi::kEdmTerminateImmediately;  // before end 1's EDM polls again
                terminated = true;
            }
        }
        l.poll(1);
    }
    assert_true(terminated);
    assert_true(l.done(0) && l.done(1));
    assert_int_equal(l.end[0].link.acked[0], 3);
}

// With message-count termination, a worker that stops early leaves the EDM
// waiting; what it has moved shows in its progress word for the hang report.
void test_message_count_waits_for_missing_messages(void**) {
    Link l(2, 32, abi::kEdmMessageCount, 5);
    l.start(0);
    l.start(1);
    std::vector<uint8_t> got;
    uint32_t sent = 0, received = 0;
    run(l, 500, [&] {  // never done: all 500 steps run
        if (sent < 3 && worker_send(l, sent)) ++sent;
        if (received < 3 && worker_receive(l, received, &got)) ++received;
    });
    assert_false(l.done(0));
    assert_false(l.done(1));
    assert_int_equal(l.end[0].cb->hart[kEdmCore].progress, 3);
}

void test_dead_link_panics_with_the_port(void**) {
    Link l(2, 32, abi::kEdmMessageCount, 1);
    l.start(0);
    abi::EthRing& ring = l.end[0].cb->eth[kPort];
    ring.error = abi::kRingLinkDown;  // what the bridge reports for a pulled cable
    try {
        l.poll(0);
        fail_msg("the EDM kept going on a dead link");
    } catch (const Panic& p) {
        assert_int_equal(p.code, abi::kPanicRingError);
        assert_int_equal(p.detail >> 56, abi::kRingEth);
        assert_int_equal((p.detail >> 48) & 0xff, kPort);
    }
}

// Channel 1 of a link: from end 1 back to end 0, with buffers of its own.
struct ReverseChannel {
    std::vector<uint8_t> buffers[2];
    uint32_t edm_sems[2][2 * abi::kEdmMaxSlots] = {};
    uint32_t worker_sems[2][abi::kEdmMaxSlots] = {};
    uint32_t sent = 0, received = 0;
    Link& l;

    explicit ReverseChannel(Link& link) : l(link) {
        for (int e = 0; e < 2; ++e) buffers[e].assign(uint64_t(l.slots) * l.size, 0);
        for (int e = 0; e < 2; ++e) {
            abi::EdmChannel& ch = l.end[e].config.channels[1];
            ch = l.end[e].config.channels[0];
            ch.id = 1;
            ch.role = e == 1 ? abi::kEdmSender : abi::kEdmReceiver;
            ch.buffer_base = addr(buffers[e].data());
            ch.semaphore_base = addr(edm_sems[e]);
            ch.control_semaphore = 0;
            ch.workers[0].semaphore_base = addr(worker_sems[e]);
            ch.remote_buffer_base = e == 1 ? addr(buffers[0].data()) : 0;
            l.end[e].config.num_channels = 2;
        }
    }
    // The workers of this channel, the EDM protocol, each as far as it can go.
    void work(uint32_t count) {
        for (; sent < count && worker_sems[1][sent % l.slots]; ++sent) {
            const uint32_t slot = sent % l.slots;
            worker_sems[1][slot] = 0;
            memset(buffers[1].data() + slot * l.size, int(sent + 1), l.size);
            edm_sems[1][slot] += abi::kEdmNextMessageAvailable;
        }
        for (; received < count && worker_sems[0][received % l.slots]; ++received) {
            const uint32_t slot = received % l.slots;
            worker_sems[0][slot] = 0;
            assert_int_equal(buffers[0][slot * l.size + l.size - 1], uint8_t(received + 1));
            edm_sems[0][slot] += abi::kEdmNextMessageAvailable;
        }
    }
};

// Both directions of a link at once, with a wire slower than the workers:
// each EDM keeps its Ethernet ring full of its own payloads, and the credits
// that free the peer's sender must still get out between them. Were they
// queued behind a full ring, the two directions would take turns instead of
// sharing the link.
void test_both_directions_share_a_busy_ring(void**) {
    constexpr uint32_t kCount = 600;
    Link l(abi::kEdmMaxSlots, 16, abi::kEdmMessageCount, kCount);
    ReverseChannel back(l);
    l.wire_budget = 2;  // one message (payload + its counter) per look
    l.start(0);
    l.start(1);
    std::vector<uint8_t> got;
    uint32_t sent = 0, received = 0, back_when_forward_done = 0;
    run(l, 100000, [&] {
        while (sent < kCount && worker_send(l, sent)) ++sent;
        while (received < kCount && worker_receive(l, received, &got)) ++received;
        back.work(kCount);
        if (received == kCount && !back_when_forward_done) back_when_forward_done = back.received;
    });
    assert_true(l.done(0) && l.done(1));
    assert_int_equal(received, kCount);
    assert_int_equal(back.received, kCount);
    for (uint32_t m = 0; m < kCount; ++m) assert_int_equal(got[2 * m + 1], uint8_t(m + 1));
    if (back_when_forward_done < kCount * 3 / 4)
        fail_msg("one direction finished while the other had moved only %u of %u messages", back_when_forward_done,
                 kCount);
}

void test_bad_config_panics(void**) {
    Link l(2, 32, abi::kEdmMessageCount, 1);
    l.end[0].config.channels[0].slots = abi::kEdmMaxSlots + 1;
    try {
        l.start(0);
        fail_msg("an impossible slot count was accepted");
    } catch (const Panic& p) {
        assert_int_equal(p.code, abi::kPanicBadArgs);
    }
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ordering_and_slot_wrap),
        cmocka_unit_test(test_handshake_from_either_side),
        cmocka_unit_test(test_stale_handshake_is_ignored),
        cmocka_unit_test(test_worker_initiated_last_message),
        cmocka_unit_test(test_worker_closes_early),
        cmocka_unit_test(test_receiver_terminate_races_last_release),
        cmocka_unit_test(test_message_count_waits_for_missing_messages),
        cmocka_unit_test(test_dead_link_panics_with_the_port),
        cmocka_unit_test(test_both_directions_share_a_busy_ring),
        cmocka_unit_test(test_bad_config_panics),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
