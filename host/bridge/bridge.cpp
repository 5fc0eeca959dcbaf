#include "bridge/bridge.h"

#include <poll.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/error.h"
#include "common/knobs.h"
#include "driver/paths.h"

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

// ": " and the last line QEMU wrote to its log, which says why it would not
// start (a bad -accel, a missing ROM); "" when it wrote nothing.
std::string last_line_of(const std::string& log) {
    std::ifstream in(log);
    std::string line, last;
    while (std::getline(in, line))
        if (!line.empty()) last = line;
    return last.empty() ? "" : ": " + last.substr(0, 300);
}

}  // namespace

Bridge::Bridge(ClusterSpec spec, BridgeOptions options)
    : spec_(std::move(spec)), options_(std::move(options)), qemu_config_(QemuConfig::load(options_.qemu_config)) {
    if (!spec_.board.qemu)
        throw Error("board '" + spec_.board.name + "' (chip " + spec_.board.chip +
                    ") has no /chip/qemu-machine: weft-bridge only starts chips QEMU emulates");
    std::vector<DeviceChip*> device_chips;
    for (uint32_t i = 0; i < spec_.num_chips; ++i) {
        chips_.push_back(std::make_unique<ChipProcess>(i, spec_.board, options_.run_dir));
        device_chips.push_back(chips_.back().get());
    }
    devices_ = std::make_unique<ClusterDevices>(spec_, std::move(device_chips));
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
    devices_->ethernet().publish_port_states();
    for (auto& chip : chips_) chip->spawn(options_.qemu, qemu_config_, options_.boot_firmware);

    const uint64_t deadline = now_ms() + options_.boot_timeout_ms;
    const uint32_t cores = static_cast<uint32_t>(spec_.board.cores.size());
    for (;;) {
        reap_children();
        std::ostringstream missing;
        bool all = true;
        for (auto& chip : chips_) {
            if (!chip->alive())
                throw Error("chip " + std::to_string(chip->id()) + ": QEMU " + chip->describe_exit() + " during boot" +
                            last_line_of(chip->qemu_log_path()) + " (see " + chip->qemu_log_path() + ")");
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
                throw Error("chip " + std::to_string(id) + " core " + std::to_string(c) +
                            " did not come back READY within " + std::to_string(timeout_ms) + " ms of the reset");
            sleep_us(1000);
        }
    }
    // The reset ended every image the chip ran, resident ones too: their
    // kept L1 is free again (a driver would otherwise refuse the core).
    for (uint32_t c = 0; c < cores; ++c) {
        abi::CoreImage& image = chip.control().host.image[c];
        image.resident_control = image.resident_l1_base = image.resident_l1_size = 0;
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
            devices_->ethernet().chip_died(chip->id());
            died.push_back("chip " + std::to_string(chip->id()) + ": QEMU " + chip->describe_exit());
        }
    }
    return died;
}

void Bridge::start_engine() {
    const std::string kick = paths::kick_socket(options_.run_dir);
    unlink(kick.c_str());
    kick_fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (kick.size() >= sizeof addr.sun_path) throw Error("run directory path too long for a socket: " + kick);
    memcpy(addr.sun_path, kick.c_str(), kick.size() + 1);
    if (kick_fd_ < 0 || bind(kick_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
        throw Error("cannot bind " + kick + ": " + strerror(errno));
    // Read here, not in the engine's thread, so a bad value fails the start.
    const auto spin_passes = static_cast<uint32_t>(knobs::integer(knobs::knob("WEFT_BRIDGE_SPIN")));
    const long nap_us = static_cast<long>(knobs::integer(knobs::knob("WEFT_BRIDGE_NAP_US")));
    running_ = true;
    engine_ = std::thread([this, spin_passes, nap_us] { engine_loop(spin_passes, nap_us); });
}

void Bridge::stop() {
    running_ = false;
    if (engine_.joinable()) engine_.join();
    if (kick_fd_ >= 0) {
        close(kick_fd_);
        kick_fd_ = -1;
        unlink(paths::kick_socket(options_.run_dir).c_str());
    }
    for (auto& chip : chips_) chip->terminate(2000);
}

void Bridge::wake_cores(uint32_t id, const Touched& touched) {
    ChipProcess& chip = *chips_[id];
    if (!chip.alive()) return;
    const uint32_t cores = doorbells_[id].cores_to_ring(chip.control(), chip.memory(),
                                                        static_cast<uint32_t>(spec_.board.cores.size()), touched);
    if (cores) {
        chip.ring_doorbell(cores);
        devices_->counters(id).doorbell_rings++;
    }
}

bool Bridge::sleep_until_woken(long timeout_us) {
    std::vector<pollfd> fds;
    for (auto& chip : chips_)
        if (chip->uart_fd() >= 0) fds.push_back({chip->uart_fd(), POLLIN, 0});
    if (kick_fd_ >= 0) fds.push_back({kick_fd_, POLLIN, 0});
    const timespec ts{timeout_us / 1000000, (timeout_us % 1000000) * 1000};
    const int ready = ppoll(fds.data(), fds.size(), &ts, nullptr);
    // Read what woke us, or the next nap would return at once for the same bytes.
    if (ready > 0)
        for (auto& chip : chips_) chip->drain_uart();
    if (kick_fd_ >= 0) {
        char buf[64];
        while (recv(kick_fd_, buf, sizeof buf, MSG_DONTWAIT) > 0) {
        }
    }
    return ready > 0;
}

void Bridge::engine_loop(uint32_t spin_passes, long nap_us) {
    // Event driven both ways (firmware/hal/wake.h): after executing commands
    // the engine rings the doorbell of every chip they touched where a core
    // sleeps waiting. With nothing to do it spins briefly (ops issue commands
    // in bursts), then naps in short steps while an op is likely still going
    // (a core's command is picked up within a nap without the core having to
    // wake the engine, which costs it a device access and a thread switch),
    // then announces a deep sleep that only a core's UART or a driver ends.
    // WEFT_BRIDGE_SPIN / WEFT_BRIDGE_NAP_US tune spin and nap for experiments.
    prctl(PR_SET_TIMERSLACK, 1000UL);   // naps of µs: the default 50 µs slack would dwarf them
    constexpr uint64_t kNapForMs = 50;  // then the deep sleep
    const uint32_t n = static_cast<uint32_t>(chips_.size());
    doorbells_.assign(n, Doorbell{});
    for (uint32_t i = 0; i < n; ++i) doorbells_[i].reset(chips_[i]->control());
    std::vector<Touched> touched(n);
    uint64_t last_heartbeat = 0, last_console = 0, last_work = now_ms();
    uint32_t idle_passes = 0;
    bool last_look = false;  // the pass made after announcing the deep sleep
    while (running_) {
        bool work = false;
        std::fill(touched.begin(), touched.end(), Touched{});
        uint64_t now = 0;
        for (uint32_t i = 0; i < n; ++i) {
            work |= devices_->serve_chip(i, touched);
            // Ring the chip just served at once: its cores can go on while
            // the engine serves the others.
            wake_cores(i, touched[i]);
            // Beat between chips too: one pass over cold memory can take seconds,
            // and a driver must not mistake that for a dead bridge.
            now = now_ms();
            if (now - last_heartbeat >= 100) {
                last_heartbeat = now;
                for (auto& chip : chips_) chip->control().bridge.heartbeat = now;
            }
        }
        // Chips served before a later chip's Ethernet touched them.
        for (uint32_t i = 0; i < n; ++i)
            if (touched[i].any()) wake_cores(i, touched[i]);
        ++passes_;
        if (now - last_console >= 20) {
            last_console = now;
            for (auto& chip : chips_) chip->drain_uart();
        }
        if (work) last_work = now;
        if (last_look) {
            last_look = false;
            // Woken by a core or a driver: an op is likely starting, nap again.
            // Woken by the timeout (the heartbeat is due): sleep deep again.
            const bool woken = work || sleep_until_woken(100000);
            for (auto& chip : chips_) chip->control().bridge.sleeping = 0;
            idle_passes = 0;
            if (woken) last_work = now_ms();
            continue;
        }
        if (work) {
            idle_passes = 0;
            continue;
        }
        if (++idle_passes < spin_passes) {
            sched_yield();
            continue;
        }
        if (nap_us > 0 && (now - last_work < kNapForMs || devices_->ethernet().in_flight())) {
            // A frame on a shaped wire is due at its time: the nap ends then.
            // Else a nap only delays a core's next command or a retransmit,
            // and each costs a pass over every chip: beside another cluster
            // on the host's cores, 10 µs naps took ~15% of the tests' CPU.
            const long due = devices_->ethernet().until_frame_due_us();
            sleep_until_woken(due < 0 ? nap_us : std::min(due, nap_us));
            continue;
        }
        // Announce the deep sleep, then make one more pass: a core that queued
        // a command before it could see the announcement is served by that pass.
        if (++sleep_epoch_ == 0) ++sleep_epoch_;
        for (auto& chip : chips_) chip->control().bridge.sleeping = sleep_epoch_;
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        last_look = true;
    }
}

}  // namespace weft
