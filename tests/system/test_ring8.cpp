// System test on `ring8`: 8 QEMU chips; data over every link both ways at
// once, checked on the receiving chips and byte by byte on the host; chips
// launched in shuffled order; a one-word ping-pong round the ring.
#include <algorithm>
#include <random>
#include <thread>

#include "driver/link_test.h"
#include "system_test.h"
#include "weft/abi/pattern.h"

using namespace weft;
using namespace weft::test;
using std::chrono::milliseconds;

namespace {

std::unique_ptr<Cluster> g_cluster;

int setup(void**) { return start_for_group("ring8", &g_cluster); }

int teardown(void**) {
    g_cluster.reset();
    return 0;
}

void test_ring_topology(void**) {
    auto links = g_cluster->links();
    assert_int_equal(links.size(), 8);
    for (uint32_t chip = 0; chip < 8; ++chip) {
        const auto& port = g_cluster->chip(chip).control().port;
        assert_int_equal(port[1].state, abi::kLinkUp);  // E
        assert_int_equal(port[1].peer_chip, (chip + 1) % 8);
        assert_int_equal(port[3].state, abi::kLinkUp);  // W
        assert_int_equal(port[3].peer_chip, (chip + 7) % 8);
    }
}

void test_every_link_both_ways(void**) {
    for (uint64_t size : {4096ull, 256 * 1024ull}) {
        LinkTestOptions opt;
        opt.bytes = size;
        opt.packet = 8 * 1024;
        opt.seed = static_cast<uint32_t>(size);
        auto out = run_link_test(*g_cluster, opt);
        assert_int_equal(out.size(), 16);
        for (const auto& t : out) {
            assert_int_equal(t.bytes, size);
            assert_int_equal(t.wrong_bytes, 0);
            assert_int_equal(t.wrong_words, 0);
        }
    }
}

// Each chip's E-port ERISC sends to its east neighbour's worker; launches go
// out in a random order with random gaps, so receivers may start after senders.
void test_shuffled_launches(void**) {
    Cluster& c = *g_cluster;
    const BoardInfo& b = c.board();
    const uint32_t len = 32 * 1024, worker = 6;
    std::vector<Launch> launches;
    for (uint32_t chip = 0; chip < 8; ++chip) {
        const uint32_t peer = (chip + 1) % 8, seed = 1000 + chip;
        const uint64_t src = b.dram.base + 0x200000, dst = b.l1_free(worker).base + 0x1000;
        const uint64_t sem = b.l1_free(worker).base;
        std::vector<uint32_t> data(len / 4);
        for (uint32_t i = 0; i < data.size(); ++i) data[i] = abi::pattern_word(seed, i);
        c.chip(chip).write(src, data.data(), len);
        c.chip(peer).write32(sem, 0);
        launches.push_back(kernels::recv_check(b, peer, worker, sem, 1, dst, len, seed));
        launches.push_back(kernels::eth_send(b, chip, b.ports[1].core, 1, src, dst, len, 4096, 1, sem, 1));
    }
    std::mt19937 rng(12345);
    std::shuffle(launches.begin(), launches.end(), rng);
    std::vector<std::pair<CoreRef, uint32_t>> launched;
    for (const Launch& l : launches) {
        auto one = c.launch_all({l});
        launched.push_back(one[0]);
        std::this_thread::sleep_for(milliseconds(rng() % 20));
    }
    auto results = c.wait_all(launched, milliseconds(20000));
    for (const auto& r : results) assert_int_equal(r.return_code, 0);
}

void test_ping_pong(void**) {
    Cluster& c = *g_cluster;
    const BoardInfo& b = c.board();
    const uint32_t n = 200;
    const uint64_t flag0 = b.l1_free(b.ports[1].core).base, flag1 = b.l1_free(b.ports[3].core).base;
    c.chip(0).write32(flag0, 0);
    c.chip(1).write32(flag1, 0);
    Launch a = kernels::ping_pong(b, 0, b.ports[1].core, 1, true, n, flag0, flag1);
    Launch z = kernels::ping_pong(b, 1, b.ports[3].core, 3, false, n, flag1, flag0);
    auto r = c.run({z, a}, milliseconds(20000));
    assert_int_equal(r[0].return_code, 0);
    assert_int_equal(r[1].return_code, 0);
    assert_int_equal(c.chip(0).read32(flag0), n);
    assert_int_equal(c.chip(1).read32(flag1), n);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring_topology),
        cmocka_unit_test(test_every_link_both_ways),
        cmocka_unit_test(test_shuffled_launches),
        cmocka_unit_test(test_ping_pong),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
