// Two chips in one process: the pair cluster's chips on the host board, each
// with the ERISC core of its cabled port and two worker cores, run the real
// EDM firmware (firmware/edm) configured by the host EDM builder, and the
// devices library's NoC and Ethernet engines (TT-link frames over the cable
// between chip 0's E port and chip 1's W port) move the bytes. One channel
// carries pages from a worker on chip 0 to a worker on chip 1, another the
// other way. Deterministic: one thread steps the engines and the cores in
// turn on one fake clock, within a bounded number of steps.
#include <stdlib.h>

#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "driver/paths.h"
#include "edm/edm.h"
#include "edm/worker.h"
#include "edm_relocation.h"
#include "hal/noc.h"
#include "model/host_cluster.h"
#include "transport/edm/edm_builder.h"
#include "transport/l1_allocator.h"

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

constexpr uint32_t kPageSize = 256;
constexpr uint32_t kPages = 37;       // not a whole number of messages: the last one is short
constexpr uint32_t kSlotSize = 1024;  // 4 pages a message
constexpr uint32_t kSlots = 3;        // 10 messages wrap the slots three times
constexpr uint32_t kMessages = (kPages + kSlotSize / kPageSize - 1) / (kSlotSize / kPageSize);
constexpr uint64_t kTicksPerStep = 100;  // 10 µs: the handshake's 200 µs retry comes round
constexpr int kMaxSteps = 20000;
// argv[1]: the cluster, pair by default; pair-rv32 runs the same logic
// under the 32-bit chip's memory map, ports and cores (board qemu-virt32).
std::string g_cluster = "pair";

ClusterSpec pair_spec() {
    const char* source = getenv("WEFT_SOURCE_DIR");
    return load_cluster(std::string(source ? source : ".") + "/clusters/" + g_cluster + ".yaml",
                        paths::load_built_board);
}

// One channel's pages: read on one chip, landing on the other.
struct Stream {
    int from_end;
    uint64_t src, dst;  // board addresses, on the sending and the receiving chip
};

// A worker of one channel, written as a poll() state machine around the real
// WorkerConnection: it moves a message only once ready() says the EDM has
// handed its slot over, so it never waits for another core (its only waits
// are for a device, a full NoC ring, which its sleep serves). Not the
// kernel's blocking loop (wait_active) for every worker: on one thread, what
// a blocked worker waits for (its EDM, the far worker) can run only inside
// its sleeps, and two blocking workers would each have to sleep inside the
// other. test_blocking_sender_steps_the_rest_in_its_sleeps runs one that way.
class PageWorker {
public:
    PageWorker(host_board::Core& core, const abi::EdmWorkerConnection& connection, abi::Pages pages, bool send)
        : core_(core), conn_(connection), pages_(pages), send_(send) {}

    bool poll() {
        if (blocking_) return false;  // it is the one waiting further down this thread's stack
        return host_board::run_as(core_, [&] { return !finished() && conn_.ready() && move_next(); });
    }
    // The worker kernel's loop instead (firmware/kernels/edm_worker_common.h):
    // every page, waiting for each slot, then for its NoC ring to drain.
    void run_blocking() {
        blocking_ = true;
        host_board::run_as(core_, [&] {
            while (move_next()) {
            }
            noc::barrier();
        });
        blocking_ = false;
    }
    bool finished() const { return next_ == pages_.count; }
    uint32_t messages() const { return conn_.messages(); }
    host_board::Core& core() { return core_; }

private:
    bool move_next() {
        return send_ ? conn_.send_next(pages_, &next_, false) : conn_.receive_next(pages_, &next_, false);
    }

    host_board::Core& core_;
    edm::WorkerConnection conn_;
    abi::Pages pages_;
    uint32_t next_ = 0;
    bool send_;
    bool blocking_ = false;
};

// The EDM of one end of the link, on its ERISC core.
struct EdmCore {
    host_board::Core& core;
    abi::EdmConfig& config;  // in the chip's memory, where the builder wrote it
    std::unique_ptr<edm::Edm> edm;

    EdmCore(host_board::Core& c, abi::EdmConfig& cfg) : core(c), config(cfg) {
        host_board::run_as(core, [&] { edm = std::make_unique<edm::Edm>(config); });
    }
    bool poll() {
        return host_board::run_as(core, [&] { return edm->poll(); });
    }
};

// The pair cluster with one EDM link and a channel each way.
class PairRun {
public:
    PairRun()
        : spec_(pair_spec()),
          cluster_(spec_),
          mem_(spec_.board),
          link_(mem_, spec_.board, spec_.links.at(0).a, spec_.links.at(0).b, options()) {
        const Stream streams[2] = {{0, dram(0), dram(1)}, {1, dram(2), dram(3)}};
        for (const Stream& s : streams) add_channel(s);
        link_.write(cluster_);
        for (int end = 0; end < 2; ++end) start_edm(end);
        for (uint32_t id = 0; id < 2; ++id) start_workers(id, streams[id]);
    }

    // One round: the devices, then every core once; then time passes.
    void step() {
        cluster_.step_devices();
        for (EdmCore& e : edms_) e.poll();
        for (auto& w : workers_) w->poll();
        cluster_.clock().now += kTicksPerStep;
    }
    bool finished() {
        for (EdmCore& e : edms_)
            if (!e.edm->done()) return false;
        for (auto& w : workers_)
            if (!w->finished()) return false;
        return cluster_.rings_idle();
    }
    int run(int steps) {
        int n = 0;
        for (; n < steps && !finished(); ++n) step();
        return n;
    }

    void check_delivered(uint32_t channel);
    void check_terminated() const;

    model::HostCluster& cluster() { return cluster_; }
    PageWorker& worker(uint32_t channel, bool sender) { return *workers_[2 * channel + (sender ? 0 : 1)]; }

private:
    static transport::EdmOptions options() {
        transport::EdmOptions o;
        o.slots = kSlots;
        o.slot_size = kSlotSize;
        o.epoch = 7;  // fixed: the run is the same every time
        return o;
    }
    uint64_t dram(uint32_t i) const { return spec_.board.dram.base + i * (1u << 20); }
    uint32_t chip(int end) const { return link_.port(end).chip; }

    void add_channel(const Stream& s) {
        const transport::ChannelInterface ch =
            link_.add_sender_channel(s.from_end, {spec_.board.worker_core(0)}, kMessages);
        link_.add_receiver_channel(ch.id, {spec_.board.worker_core(1)});
        streams_.push_back(s);
        fill_source(s);
    }
    void fill_source(const Stream& s) {
        std::mt19937 random(s.src ^ s.from_end);
        uint8_t* src = cluster_.bytes(chip(s.from_end), s.src, kPages * kPageSize);
        for (uint32_t i = 0; i < kPages * kPageSize; ++i) src[i] = static_cast<uint8_t>(random());
    }
    void start_edm(int end) {
        HostChip& self = cluster_.memory(chip(end));
        auto* config = reinterpret_cast<abi::EdmConfig*>(
            cluster_.bytes(chip(end), link_.config_address(end), sizeof(abi::EdmConfig)));
        test::relocate(*config, self, cluster_.memory(chip(1 - end)));
        edms_.emplace_back(cluster_.core(chip(end), link_.erisc_core(end)), *config);
    }
    void start_workers(uint32_t id, const Stream& s) {
        const transport::ChannelInterface& ch = link_.channel(id);
        workers_.push_back(make_worker(ch.senders.at(0), s.src, true));
        workers_.push_back(make_worker(ch.receivers.at(0), s.dst, false));
    }
    std::unique_ptr<PageWorker> make_worker(const transport::WorkerInterface& w, uint64_t pages, bool send) {
        HostChip& chip = cluster_.memory(w.chip);
        auto* connection = reinterpret_cast<abi::EdmWorkerConnection*>(
            cluster_.bytes(w.chip, w.connection, sizeof(abi::EdmWorkerConnection)));
        test::relocate(*connection, chip);
        const abi::Pages p{chip.to_host(pages, kPages * kPageSize), kPageSize, kPages, kPageSize};
        return std::make_unique<PageWorker>(cluster_.core(w.chip, w.core), *connection, p, send);
    }

    ClusterSpec spec_;
    model::HostCluster cluster_;
    transport::L1Allocator mem_;
    transport::EdmLinkBuilder link_;
    std::vector<Stream> streams_;
    std::vector<EdmCore> edms_;
    std::vector<std::unique_ptr<PageWorker>> workers_;  // per channel: sender, receiver
};

// Every byte on the receiving chip, in order, and nothing past the last page.
void PairRun::check_delivered(uint32_t channel) {
    const Stream& s = streams_[channel];
    const uint8_t* src = cluster_.bytes(chip(s.from_end), s.src, kPages * kPageSize);
    const uint8_t* dst = cluster_.bytes(chip(1 - s.from_end), s.dst, kPages * kPageSize + kPageSize);
    for (uint32_t i = 0; i < kPages * kPageSize; ++i)
        if (dst[i] != src[i]) fail_msg("channel %u: byte %u of page %u differs", channel, i % kPageSize, i / kPageSize);
    for (uint32_t i = kPages * kPageSize; i < (kPages + 1) * kPageSize; ++i) assert_int_equal(dst[i], 0);
}

// Both EDMs finished every channel, and each sender saw each message acknowledged.
void PairRun::check_terminated() const {
    for (const EdmCore& e : edms_) {
        assert_true(e.edm->done());
        const auto& link_words = *reinterpret_cast<const abi::EdmLinkWords*>(e.config.link_words);
        for (uint32_t i = 0; i < e.config.num_channels; ++i) {
            const abi::EdmChannel& ch = e.config.channels[i];
            assert_int_equal(e.config.status[i].done, 1);
            assert_int_equal(e.config.status[i].sent_or_released, kMessages);
            if (ch.role == abi::kEdmSender) assert_int_equal(link_words.acked[ch.id], kMessages);
            else
                assert_int_equal(link_words.filled[ch.id], kMessages);
        }
    }
}

void check_cable_carried_both_ways(model::HostCluster& cluster) {
    const Link& link = *cluster.devices().ethernet().links().at(0);
    for (int end = 0; end < 2; ++end) {
        // At least the messages' payloads, their counters and the credits.
        assert_true(link.cable->counters(end).delivered.load() >= 2 * kMessages);
        assert_int_equal(link.cable->counters(end).retransmits.load(), 0);
    }
}

void test_pages_cross_both_ways(void**) {
    PairRun run;
    const int steps = run.run(kMaxSteps);
    if (steps == kMaxSteps) fail_msg("not finished after %d steps", kMaxSteps);
    for (uint32_t channel = 0; channel < 2; ++channel) {
        run.check_delivered(channel);
        assert_int_equal(run.worker(channel, true).messages(), kMessages);
        assert_int_equal(run.worker(channel, false).messages(), kMessages);
    }
    run.check_terminated();
    check_cable_carried_both_ways(run.cluster());
}

// The other way to run a worker on the host board: the kernel's own blocking
// loop, waiting in wait_active, with the rest of the cluster stepped in its
// sleeps: its EDM, which it waits for, runs only there.
void test_blocking_sender_steps_the_rest_in_its_sleeps(void**) {
    PairRun run;
    PageWorker& sender = run.worker(0, true);
    int steps = 0;
    sender.core().on_sleep = [&] {
        if (++steps > kMaxSteps) throw std::runtime_error("the blocking sender never finished");
        run.step();
    };
    try {
        sender.run_blocking();
    } catch (const std::runtime_error& e) {
        fail_msg("%s", e.what());
    }
    assert_true(sender.finished());
    assert_true(steps > 0);  // it did wait for its EDM
    if (run.run(kMaxSteps) == kMaxSteps) fail_msg("not finished after the sender");
    for (uint32_t channel = 0; channel < 2; ++channel) run.check_delivered(channel);
    run.check_terminated();
}

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1) g_cluster = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pages_cross_both_ways),
        cmocka_unit_test(test_blocking_sender_steps_the_rest_in_its_sleeps),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
