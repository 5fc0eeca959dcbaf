// The ERISC data mover on real QEMU chips: every channel count, both
// directions at once, chips launched in shuffled order with random delays,
// both termination modes, pull and push receivers, shared and round-robin
// buffers, and a link that dies under it. Every byte is checked on the host.
#include <thread>
#include "edm_harness.h"

using namespace weft;
using namespace weft::test;

namespace {

std::unique_ptr<Cluster> g_pair, g_ring;
constexpr uint32_t kE = 1, kW = 3;

std::string g_suffix;  // argv[1] "rv32": pair-rv32 and ring8-rv32

int setup(void**) {
    const std::string dash = g_suffix.empty() ? "" : "-" + g_suffix;
    return start_for_group("pair" + dash, &g_pair) != 0 ? -1 : start_for_group("ring8" + dash, &g_ring);
}

int teardown(void**) {
    g_pair.reset();
    g_ring.reset();
    return 0;
}

void expect_intact(const std::vector<EdmResult>& out) {
    for (const EdmResult& r : out) {
        assert_true(r.bytes > 0);
        assert_int_equal(r.wrong, 0);
    }
}

transport::EdmOptions small_slots() {
    transport::EdmOptions o;
    o.slots = 2;
    o.slot_size = 8192;  // 16 channels x 2 slots x 8 KiB fit in an ERISC's L1
    return o;
}

void test_pair_every_channel_count_shuffled(void**) {
    for (uint32_t channels = 1; channels <= 8; ++channels) {
        EdmRun r{{0, kE}, {1, kW}, small_slots()};
        r.channels = channels;
        r.pages = 12;
        r.shuffle = true;
        r.seed = channels;
        expect_intact(run_edm(*g_pair, {r}));
    }
}

// Every link of the ring at once: each chip runs two EDMs and all four workers.
void test_ring8_every_link_every_channel_count(void**) {
    for (uint32_t channels = 1; channels <= 8; ++channels) {
        std::vector<EdmRun> runs;
        for (uint32_t chip = 0; chip < 8; ++chip) {
            EdmRun r{{chip, kE}, {(chip + 1) % 8, kW}, small_slots()};
            r.channels = channels;
            r.pages = 6;
            r.seed = 100 + channels;
            r.shuffle = channels % 2 == 1;
            r.first_worker_a = g_ring->board().worker_core(0);  // a chip's east link uses its first two workers ...
            r.first_worker_b = g_ring->board().worker_core(2);  // ... and its west link the next two
            runs.push_back(r);
        }
        expect_intact(run_edm(*g_ring, runs));
    }
}

void test_worker_initiated_termination(void**) {
    EdmRun r{{0, kE}, {1, kW}, small_slots()};
    r.options.termination = abi::kEdmWorkerInitiated;
    r.channels = 3;
    r.finish = 1;  // the last message carries "next message is last"
    expect_intact(run_edm(*g_pair, {r}));
    r.finish = 2;  // or the workers send "terminate immediately" after their pages
    r.seed = 9;
    expect_intact(run_edm(*g_pair, {r}));
}

void test_push_mode(void**) {
    EdmRun r{{0, kE}, {1, kW}, small_slots()};
    r.options.receive_mode = abi::kEdmPush;
    r.channels = 4;
    r.shuffle = true;
    expect_intact(run_edm(*g_pair, {r}));
}

void test_buffer_sharing(void**) {
    EdmRun rr{{0, kE}, {1, kW}, small_slots()};
    rr.options.sharing = abi::kEdmRoundRobin;
    rr.page_size = rr.options.slot_size;  // one page per message, so workers alternate pages
    rr.pages = 8;
    rr.sender_workers = 2;
    rr.receiver_workers = 2;
    rr.both_directions = false;
    expect_intact(run_edm(*g_pair, {rr}));

    EdmRun shared{{0, kE}, {1, kW}, small_slots()};
    shared.options.sharing = abi::kEdmShared;
    shared.receiver_workers = 2;  // both receivers see every message
    shared.both_directions = false;
    expect_intact(run_edm(*g_pair, {shared}));
}

void test_builder_refuses_what_does_not_fit(void**) {
    const BoardInfo& b = g_pair->board();
    transport::L1Allocator mem(b);
    transport::EdmOptions big;
    big.slots = 8;
    // Half an ERISC L1 a channel (2 MiB on qemu-virt): chip 1's W core holds the
    // first channel's receiver buffers, then overflows with its own sender's.
    big.slot_size = static_cast<uint32_t>(b.cores[b.ports[kW].core].l1.size / 16);
    transport::EdmLinkBuilder link(mem, b, {0, kE}, {1, kW}, big);
    std::string msg;
    try {
        for (int i = 0; i < 8; ++i) link.add_sender_channel(i % 2, {g_pair->board().worker_core(0)}, 1);
    } catch (const Error& e) {
        msg = e.what();
    }
    const std::string expect = "chip 1 core " + std::to_string(b.ports[kW].core) +
                               " (erisc W) L1: EDM sender channel 1 buffers needs " +
                               std::to_string(8 * big.slot_size) + " bytes";
    if (!contains(msg, expect) || !contains(msg, "use fewer channels")) fail_msg("got: %s", msg.c_str());
}

// A cable pulled for good: the EDM's commands wait (TT-link does not fail
// them), so its progress timeout (which runs only while the cable is down)
// must end it with an event naming the link.
void test_dead_link_faults_the_edm(void**) {
    Cluster& c = *g_pair;
    transport::L1Allocator mem(c.board());
    transport::EdmOptions o = small_slots();
    o.progress_timeout_us = 500'000;
    transport::EdmLinkBuilder link(mem, c.board(), {0, kE}, {1, kW}, o);
    auto ch = link.add_sender_channel(0, {c.board().worker_core(0)}, 1000);
    link.add_receiver_channel(ch.id, {c.board().worker_core(1)});
    link.write(c);
    c.set_link(0, kE, false);
    std::string msg;
    try {
        c.run({link.edm_launch(0)}, std::chrono::seconds(10));  // the initiator's handshake cannot go out
    } catch (const FaultError& e) {
        msg = e.what();
    } catch (const Error& e) {
        msg = std::string("not a fault: ") + e.what();
    }
    const auto t0 = std::chrono::steady_clock::now();
    nlohmann::json events = c.events();
    c.set_link(0, kE, true);
    if (!contains(msg, "kernel 'edm' FAULT: EDM timeout: port 1 channel 0 could not move for"))
        fail_msg("got: %s", msg.c_str());
    // The status mailbox told the control plane which link, within the bridge's 100 ms drain.
    bool timeout = false, down = false;
    for (int i = 0; i < 20 && !(timeout && down); ++i) {
        for (const auto& e : events["events"]) {
            if (e["source"] != "firmware" || e["chip"] != 0 || e["port"] != kE) continue;
            timeout |= e["kind"] == "timeout" && e["link"] == "chip 0.E <-> chip 1.W";
            down |= e["kind"] == "link_down";
        }
        if (!(timeout && down)) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            events = c.events();
        }
    }
    assert_true(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2));
    if (!timeout || !down) fail_msg("no timeout + link_down event for chip 0.E in %s", events.dump().c_str());
    assert_true(contains(events["log"].get<std::string>(), "events.log"));
}

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1) g_suffix = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pair_every_channel_count_shuffled),
        cmocka_unit_test(test_ring8_every_link_every_channel_count),
        cmocka_unit_test(test_worker_initiated_termination),
        cmocka_unit_test(test_push_mode),
        cmocka_unit_test(test_buffer_sharing),
        cmocka_unit_test(test_builder_refuses_what_does_not_fit),
        cmocka_unit_test(test_dead_link_faults_the_edm),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
