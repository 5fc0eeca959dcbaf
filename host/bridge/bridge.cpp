#include "bridge/bridge.h"

#include <sched.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>

#include <chrono>
#include <cstdlib>
#include <sstream>

#include "common/error.h"

namespace weft {
namespace {

void sleep_us(long us) {
    timespec ts{us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, nullptr);
}

uint64_t now_ms() {
    using namespace std::chrono;
    return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
}

// Commands served per ring per pass: keeps one busy ring from starving the rest.
constexpr uint32_t kBudget = 64;

}  // namespace

Bridge::Bridge(ClusterSpec spec, BridgeOptions options) : spec_(std::move(spec)), options_(std::move(options)) {
    // Refused rather than ignored: a comparison run on "shaped" links that are not would mislead.
    if (spec_.link_model.bandwidth_gbps > 0 || spec_.link_model.latency_us > 0)
        throw Error(options_.cluster_file +
                    ": link shaping (link: bandwidth_gbps, latency_us) is not implemented by this weft-bridge yet; "
                    "set them to 0 or leave them out");
    for (uint32_t i = 0; i < spec_.num_chips; ++i) {
        chips_.push_back(std::make_unique<ChipProcess>(i, spec_.board, options_.run_dir));
        counters_.push_back(std::make_unique<DeviceCounters>());
    }
    ethernet_ = std::make_unique<Ethernet>(spec_, chips_);
}

Bridge::~Bridge() { stop(); }

void Bridge::start() {
    for (auto& chip : chips_) {
        abi::ChipControlBlock& cb = chip->control();
        cb.host.chip_id = chip->id();
        cb.host.num_chips = spec_.num_chips;
        cb.host.abi_version = abi::kAbiVersion;
        cb.bridge.life = abi::kChipStarting;
        cb.host.magic = abi::kControlMagic;
    }
    ethernet_->publish_port_states();
    for (auto& chip : chips_) chip->spawn(options_.qemu, options_.boot_firmware);

    const uint64_t deadline = now_ms() + options_.boot_timeout_ms;
    const uint32_t cores = static_cast<uint32_t>(spec_.board.cores.size());
    for (;;) {
        reap_children();
        std::ostringstream missing;
        bool all = true;
        for (auto& chip : chips_) {
            if (!chip->alive())
                throw Error("chip " + std::to_string(chip->id()) + ": QEMU " + chip->describe_exit() + " during boot (see " +
                            chip->qemu_log_path() + ")");
            for (uint32_t c = 0; c < cores; ++c) {
                if (chip->control().hart[c].state != abi::kHartReady) {
                    all = false;
                    missing << " chip" << chip->id() << "/core" << c;
                }
            }
        }
        if (all) break;
        if (now_ms() > deadline)
            throw Error("cores not READY after " + std::to_string(options_.boot_timeout_ms) + " ms:" + missing.str());
        sleep_us(2000);
    }
    for (auto& chip : chips_) chip->control().bridge.life = abi::kChipAlive;
}

void Bridge::reset_chip(uint32_t id, int timeout_ms) {
    if (id >= chips_.size()) throw Error("no chip " + std::to_string(id) + " in this cluster");
    ChipProcess& chip = *chips_[id];
    const uint32_t cores = static_cast<uint32_t>(spec_.board.cores.size());
    std::vector<uint32_t> boots(cores);
    for (uint32_t c = 0; c < cores; ++c) boots[c] = chip.control().hart[c].boot_count;
    chip.reset();
    const uint64_t deadline = now_ms() + timeout_ms;
    for (uint32_t c = 0; c < cores; ++c) {
        const abi::HartStatus& st = chip.control().hart[c];
        while (st.boot_count == boots[c] || st.state != abi::kHartReady) {
            if (now_ms() > deadline)
                throw Error("chip " + std::to_string(id) + " core " + std::to_string(c) + " did not come back READY within " +
                            std::to_string(timeout_ms) + " ms of the reset");
            sleep_us(1000);
        }
    }
}

std::vector<std::string> Bridge::reap_children() {
    std::vector<std::string> died;
    for (;;) {
        int st;
        pid_t pid = waitpid(-1, &st, WNOHANG);
        if (pid <= 0) break;
        for (auto& chip : chips_) {
            if (chip->pid() != pid) continue;
            chip->mark_exited(st);
            chip->control().bridge.exit_status = st;
            __atomic_store_n(const_cast<uint32_t*>(&chip->control().bridge.life), abi::kChipDead, __ATOMIC_RELEASE);
            ethernet_->chip_died(chip->id());
            died.push_back("chip " + std::to_string(chip->id()) + ": QEMU " + chip->describe_exit());
        }
    }
    return died;
}

void Bridge::start_engine() {
    running_ = true;
    engine_ = std::thread([this] { engine_loop(); });
}

void Bridge::stop() {
    running_ = false;
    if (engine_.joinable()) engine_.join();
    for (auto& chip : chips_) chip->terminate(2000);
}

bool Bridge::serve_chip(uint32_t id) {
    ChipProcess& chip = *chips_[id];
    if (!chip.alive()) return false;
    abi::ChipControlBlock& cb = chip.control();
    const ChipMemory& mem = chip.memory();
    DeviceCounters& counters = *counters_[id];
    uint32_t work = 0;
    const uint32_t cores = static_cast<uint32_t>(spec_.board.cores.size());
    for (uint32_t c = 0; c < cores; ++c) {
        work += run_noc_ring(mem, spec_.board, cb.noc[c], kBudget, counters);
        work += run_math_ring(mem, cb.math[c], kBudget, counters);
    }
    for (uint32_t p = 0; p < spec_.board.ports.size(); ++p) work += ethernet_->run_port(id, p, kBudget);
    return work != 0;
}

void Bridge::engine_loop() {
    // Spin briefly after work (ops issue commands in bursts), then back off:
    // short naps while recently busy, long ones once idle, so an idle cluster
    // costs next to nothing. Naps of tens of µs need a tight timer slack (the
    // default 50 µs would double them). WEFT_BRIDGE_SPIN / WEFT_BRIDGE_NAP_US
    // tune the spin and the short nap for experiments; the defaults measured best.
    prctl(PR_SET_TIMERSLACK, 1000UL);
    const uint32_t spin_passes = getenv("WEFT_BRIDGE_SPIN") ? std::atoi(getenv("WEFT_BRIDGE_SPIN")) : 256;
    const long nap_us = getenv("WEFT_BRIDGE_NAP_US") ? std::atol(getenv("WEFT_BRIDGE_NAP_US")) : 10;
    uint64_t last_work = now_ms();
    uint64_t last_heartbeat = 0;
    uint32_t idle_passes = 0;
    while (running_) {
        bool work = false;
        uint64_t now = 0;
        for (uint32_t i = 0; i < chips_.size(); ++i) {
            work |= serve_chip(i);
            // Beat between chips too: one pass over cold memory can take seconds,
            // and a driver must not mistake that for a dead bridge.
            now = now_ms();
            if (now - last_heartbeat >= 100) {
                last_heartbeat = now;
                for (auto& chip : chips_) chip->control().bridge.heartbeat = now;
            }
        }
        ++passes_;
        if (work) {
            last_work = now;
            idle_passes = 0;
            continue;
        }
        if (++idle_passes < spin_passes) {
            sched_yield();
            continue;
        }
        const uint64_t idle_ms = now - last_work;
        sleep_us(idle_ms < 50 ? nap_us : idle_ms < 1000 ? 100 : 2000);
    }
}

}  // namespace weft
