#include "driver/cluster.h"

#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "common/error.h"
#include "common/knobs.h"
#include "common/log.h"
#include "common/names.h"
#include "common/process.h"
#include "driver/paths.h"
#include "driver/resident.h"
#include "driver/run_dir.h"
#include "driver/stall_clock.h"

namespace weft {
namespace {

using Clock = std::chrono::steady_clock;

// How long the bridge may go without a heartbeat before we call it gone.
// A bridge process that is alive but has not beaten for this long of its own
// time (driver/stall_clock.h) is hung, whatever the host's load: it beats
// every 100 ms while it runs.
constexpr uint64_t kBridgeHungMs = 10000;

uint64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch()).count();
}

}  // namespace

const KernelImage& kernel_at(const std::string& path) {
    static std::mutex mu;
    static std::map<std::string, KernelImage> cache;
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(path);
    if (it == cache.end()) it = cache.emplace(path, load_kernel_image(path)).first;
    return it->second;
}

const KernelImage& kernel_named(const BoardInfo& board, const std::string& name) {
    return kernel_at(paths::kernel(board.name, name));
}

void Cluster::connect(const std::string& run_dir) {
    run_dir_ = run_dir;
    control_ = std::make_unique<ControlClient>(run_dir);
    std::vector<int> fds;
    info_ = control_->request({{"cmd", "attach"}}, &fds);
    board_ = load_board(info_.at("board_dtb").get<std::string>());
    const size_t n = info_.at("chips").size();
    if (fds.size() != n) {
        for (int fd : fds) close(fd);
        throw Error("weft-bridge passed " + std::to_string(fds.size()) + " memory handles for " + std::to_string(n) +
                    " chips");
    }
    for (size_t i = 0; i < n; ++i) chips_.push_back(std::make_unique<Chip>(static_cast<uint32_t>(i), board_, fds[i]));
    kick_fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
}

void Cluster::kick_bridge() {
    const std::string path = paths::kick_socket(run_dir_);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (kick_fd_ < 0 || path.size() >= sizeof addr.sun_path) return;
    memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    // Best effort: a full queue already holds a kick, and a bridge that is
    // gone is reported by its heartbeat.
    const char b = 1;
    (void)!sendto(kick_fd_, &b, 1, 0, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
}

std::unique_ptr<Cluster> Cluster::attach(const std::string& run_dir) {
    std::unique_ptr<Cluster> c(new Cluster());
    c->connect(run_dir);
    WEFT_INFO("cluster", "attached to cluster '%s' in %s: %zu chips of board %s", c->info_.value("name", "").c_str(),
              run_dir.c_str(), c->size(), c->board_.name.c_str());
    return c;
}

std::unique_ptr<Cluster> Cluster::start(const std::string& cluster_file, const std::string& run_dir) {
    spawn_bridge(cluster_file, run_dir, 60000, getpid());
    std::unique_ptr<Cluster> c(new Cluster());
    c->owned_ = true;
    try {
        c->connect(run_dir);
    } catch (...) {
        try {
            ControlClient(run_dir).request({{"cmd", "shutdown"}});
        } catch (...) {
        }
        throw;
    }
    WEFT_INFO("cluster", "started cluster '%s' from %s in %s: %zu chips of board %s",
              c->info_.value("name", "").c_str(), cluster_file.c_str(), run_dir.c_str(), c->size(),
              c->board_.name.c_str());
    return c;
}

void Cluster::write(uint32_t id, uint64_t address, const void* data, size_t bytes) {
    chip(id).write(address, data, bytes);
}

void Cluster::clear(uint32_t id, uint64_t address, size_t bytes) {
    std::memset(chip(id).host_ptr(address, bytes), 0, bytes);
}

void Cluster::read(uint32_t id, uint64_t address, void* data, size_t bytes) { chip(id).read(address, data, bytes); }

FabricSpec Cluster::fabric_spec() const {
    return FabricSpec::from_json(info_.value("fabric", nlohmann::json::object()));
}

Cluster::~Cluster() {
    if (kick_fd_ >= 0) close(kick_fd_);
    try {
        if (owned_) {
            shutdown();
            // A temporary cluster's run directory (logs, consoles) goes with it,
            // unless asked to keep it for a look.
            if (!knobs::flag(knobs::knob("WEFT_KEEP_RUN_DIR"))) std::filesystem::remove_all(run_dir_);
        }
    } catch (...) {
    }
}

void Cluster::shutdown() {
    if (!control_) return;
    chips_.clear();
    control_->request({{"cmd", "shutdown"}});
    control_->wait_closed(15000);
    control_.reset();
    run_dir::wait_released(run_dir_, 15000);  // the next cluster may take the directory at once
}

std::vector<LinkInfo> Cluster::links() {
    std::vector<LinkInfo> out;
    const nlohmann::json info = control_->request({{"cmd", "info"}});  // keep alive: the loop refers into it
    for (const auto& l : info.at("links"))
        out.push_back({l["a"]["chip"], l["a"]["port"], l["b"]["chip"], l["b"]["port"], l["state"] == "up"});
    return out;
}

ClusterTopology Cluster::topology() {
    nlohmann::json info = control_->request({{"cmd", "info"}});
    return ClusterTopology::from_json(info);
}

nlohmann::json Cluster::counters() { return control_->request({{"cmd", "counters"}}); }

void Cluster::set_link(uint32_t chip, uint32_t port, bool up) {
    control_->request({{"cmd", "link"}, {"chip", chip}, {"port", port}, {"up", up}});
}

nlohmann::json Cluster::events() { return control_->request({{"cmd", "events"}}); }

nlohmann::json Cluster::set_fault(uint32_t chip, uint32_t port, const nlohmann::json& faults) {
    nlohmann::json req = faults;
    req["cmd"] = "fault";
    req["chip"] = chip;
    req["port"] = port;
    return control_->request(req)["link"];
}

void Cluster::reset_chip(uint32_t chip) { control_->request({{"cmd", "reset"}, {"chip", chip}}, nullptr, 15000); }

void Cluster::apply_wake_override() {
    // Unset writes 0, the firmware's own: an earlier client's value must not
    // outlive it on the chips.
    const long long us = knobs::integer(knobs::knob("WEFT_ACTIVE_WAKE_US"));
    for (auto& chip : chips_) chip->control().host.active_wake_us = static_cast<uint32_t>(us);
}

std::chrono::milliseconds Cluster::claim_wait() {
    return std::chrono::milliseconds(knobs::integer(knobs::knob("WEFT_CLAIM_WAIT_MS")));
}

void Cluster::claim(const std::string& what, std::chrono::milliseconds wait) {
    if (claimed_) return;
    const auto deadline = Clock::now() + wait;
    bool told = false;
    for (;;) {
        const nlohmann::json reply = control_->exchange({{"cmd", "claim"}, {"what", what}});
        if (reply.value("ok", false)) break;
        const std::string error = reply.value("error", std::string("refused"));
        if (!reply.value("busy", false) || Clock::now() >= deadline)
            throw Error(error + (reply.value("busy", false) ? "; try again once it is done" : ""));
        if (!told) std::fprintf(stderr, "weft: waiting for the cluster: %s\n", error.c_str());
        told = true;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    claimed_ = true;
    stop_orphans();
}

void Cluster::release() {
    if (!claimed_) return;
    control_->request({{"cmd", "release"}});
    claimed_ = false;
}

void Cluster::stop_orphans() {
    std::vector<std::pair<CoreRef, uint32_t>> orphans;
    std::vector<CoreRef> residents;
    for (auto& chip : chips_)
        for (uint32_t c = 0; c < board_.cores.size(); ++c) {
            const uint32_t id = static_cast<uint32_t>(chip->id());
            if (!chip->resident_name(c).empty()) {
                if (!residents_.count({id, c})) residents.push_back({id, c});
                continue;
            }
            const abi::HartStatus& st = chip->status(c);
            if (st.state == abi::kHartRunning) orphans.push_back({CoreRef{id, c}, st.running_seq});
        }
    if (!orphans.empty()) {
        const std::string done = stop_kernels(orphans);
        std::fprintf(stderr, "weft: %zu kernel(s) of an op whose process is gone were still running%s\n",
                     orphans.size(), done.c_str());
    }
    // After the kernels, which may be sending through them.
    std::map<std::string, std::string> where;  // image name -> "chip.core, ..."
    std::string forced;
    for (const CoreRef& r : residents) {
        std::string& at = where[chip(r.chip).resident_name(r.core)];
        at += (at.empty() ? "" : " ") + std::to_string(r.chip) + "." + std::to_string(r.core);
        const std::string how = resident::stop(*this, r.chip, r.core, std::chrono::milliseconds(3000));
        if (!how.empty()) forced += "\n  " + how;
    }
    if (residents.empty()) return;
    std::string names;
    for (const auto& [name, at] : where) names += (names.empty() ? "" : "; ") + name + " on chip.core " + at;
    std::fprintf(stderr, "weft: stopped %zu resident image(s) left running by a process that is gone: %s%s\n",
                 residents.size(), names.c_str(), forced.c_str());
}

std::vector<std::pair<CoreRef, uint32_t>> Cluster::launch_all(const std::vector<Launch>& launches) {
    std::set<std::pair<uint32_t, uint32_t>> seen;
    for (const Launch& l : launches) {
        if (l.chip >= chips_.size())
            throw Error("launch on chip " + std::to_string(l.chip) + ": the cluster has " +
                        std::to_string(chips_.size()) + " chips");
        if (!l.kernel) throw Error("launch without a kernel");
        if (!chips_[l.chip]->alive()) throw Error(death_of(l.chip) + ": no kernel runs there");
        if (!seen.insert({l.chip, l.core}).second)
            throw Error("two launches on chip " + std::to_string(l.chip) + " core " + std::to_string(l.core));
    }
    if (!launches.empty()) claim("kernel " + launches.front().kernel->name);
    std::vector<LoadedKernel> loaded;
    for (const Launch& l : launches) loaded.push_back(chips_[l.chip]->load(l.core, *l.kernel));
    std::vector<std::pair<CoreRef, uint32_t>> launched;
    for (size_t i = 0; i < launches.size(); ++i) {
        const Launch& l = launches[i];
        launched.push_back({{l.chip, l.core}, chips_[l.chip]->launch(loaded[i], l.args)});
        if (observer_) observer_->launched(l.chip, l.core, l.kernel->name);
        WEFT_TRACE("launch", "chip %u core %u: kernel '%s' (%zu argument words)%s", l.chip, l.core,
                   l.kernel->name.c_str(), l.args.size(), loaded[i].new_code ? ", code written" : "");
    }
    kick_bridge();
    return launched;
}

void Cluster::ring_core(uint32_t id, uint32_t core) {
    abi::HostArea& host = chip(id).control().host;
    if (core >= abi::kMaxCores) throw Error("chip " + std::to_string(id) + " has no core " + std::to_string(core));
    __atomic_store_n(const_cast<uint32_t*>(&host.ring[core]), host.ring[core] + 1, __ATOMIC_RELEASE);
    kick_bridge();
}

std::string Cluster::stop_kernels(const std::vector<std::pair<CoreRef, uint32_t>>& launched,
                                  std::chrono::milliseconds timeout) {
    std::vector<std::pair<CoreRef, uint32_t>> running;
    for (const auto& [ref, seq] : launched) {
        Chip& chip = *chips_.at(ref.chip);
        if (!chip.alive() || chip.finished(ref.core, seq)) continue;
        __atomic_store_n(const_cast<uint32_t*>(&chip.control().host.stop[ref.core]), seq, __ATOMIC_RELEASE);
        running.push_back({ref, seq});
    }
    if (running.empty()) return "";
    for (const auto& [ref, seq] : running) ring_core(ref.chip, ref.core);
    // In the cluster's own time, as every wait: a busy host is no reason to
    // reset a chip whose kernel would have stopped.
    StallClock clock(processes());
    std::set<uint32_t> stuck;  // chips
    size_t stopped = 0;
    for (const auto& [ref, seq] : running) {
        Chip& chip = *chips_[ref.chip];
        while (chip.alive() && !chip.finished(ref.core, seq) && clock.total() < timeout) {
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
            clock.look(false);
        }
        if (chip.alive() && !chip.finished(ref.core, seq)) stuck.insert(ref.chip);
        else
            ++stopped;
    }
    std::string out = "; stopped " + std::to_string(stopped) + " kernel(s) still running";
    for (uint32_t c : stuck) {
        try {
            reset_chip(c);
            out += ", reset chip " + std::to_string(c) + " (a kernel there would not stop)";
        } catch (const std::exception& e) {
            out += ", could not reset chip " + std::to_string(c) + ": " + e.what();
        }
    }
    return out;
}

std::vector<KernelResult> Cluster::wait_all(const std::vector<std::pair<CoreRef, uint32_t>>& launched,
                                            std::chrono::milliseconds timeout, const Watch& watch) {
    try {
        return wait_all_or_throw(launched, timeout, watch);
    } catch (const TimeoutError& e) {
        const std::string stopped = stop_kernels(launched);
        throw TimeoutError(e.what() + stopped);
    } catch (const FaultError& e) {
        const std::string stopped = stop_kernels(launched);
        throw FaultError(e.what() + stopped);
    } catch (const Error& e) {
        const std::string stopped = stop_kernels(launched);
        throw Error(e.what() + stopped);
    }
}

namespace {

std::vector<CoreRef> unfinished(const std::vector<std::pair<CoreRef, uint32_t>>& launched,
                                const std::vector<bool>& done, size_t except = SIZE_MAX) {
    std::vector<CoreRef> out;
    for (size_t i = 0; i < launched.size(); ++i)
        if (!done[i] && i != except) out.push_back(launched[i].first);
    return out;
}

}  // namespace

Machine::Traffic Cluster::traffic() {
    const nlohmann::json c = counters();
    Traffic t;
    for (const auto& l : c["links"])
        for (const char* way : {"a_to_b", "b_to_a"})
            t.wire_bytes += l[way]["bytes"].get<uint64_t>() - l[way].value("bytes_resent", uint64_t(0));
    for (const auto& chip : c["chips"]) t.doorbells += chip.value("doorbell_rings", uint64_t(0));
    return t;
}

std::vector<int> Cluster::processes() const {
    std::vector<int> pids;
    if (const int bridge = info_.value("bridge_pid", 0)) pids.push_back(bridge);
    for (const auto& c : info_.value("chips", nlohmann::json::array()))
        if (const int pid = c.value("pid", 0)) pids.push_back(pid);
    return pids;
}

Cluster::BridgeWatch::BridgeWatch(const Cluster& cluster)
    : cluster_(cluster), pid_(cluster.info_.value("bridge_pid", 0)), clock_(std::vector<int>{pid_}) {}

void Cluster::BridgeWatch::look() {
    const uint64_t beat = cluster_.chips_.front()->control().bridge.heartbeat;
    clock_.look(beat != beat_);
    beat_ = beat;
    // A busy host may keep the engine off the CPU for a long time: only a
    // bridge that is gone, or silent for kBridgeHungMs of its own time (asleep
    // and not beating: blocked), has stopped.
    const bool gone = pid_ > 0 && !process_running(pid_);
    if (gone || clock_.stalled() > std::chrono::milliseconds(kBridgeHungMs))
        throw Error("weft-bridge " + std::string(gone ? "has exited" : "has stopped serving the chips") +
                    " (no heartbeat for " + std::to_string(now_ms() - beat) + " ms); see " + cluster_.run_dir_ +
                    "/bridge.log");
}

std::string Cluster::death_of(uint32_t chip) const {
    const std::string log = run_dir_ + "/chip" + std::to_string(chip) + ".qemu.log";
    return "chip " + std::to_string(chip) + " died (" +
           describe_exit_status(static_cast<int>(chips_.at(chip)->control().bridge.exit_status)) +
           "; its QEMU's log: " + log + ")";
}

std::vector<KernelResult> Cluster::wait_all_or_throw(const std::vector<std::pair<CoreRef, uint32_t>>& launched,
                                                     std::chrono::milliseconds timeout, const Watch& watch) {
    // The deadline is for a stall, in the cluster's own time (StallClock): it
    // starts again whenever anything on the cluster moves, and time the
    // cluster spent waiting for a busy host's CPU does not count. A cap of
    // kStallCapFactor deadlines still ends a kernel that keeps busy forever.
    StallClock clock(processes());
    BridgeWatch bridge(*this);
    auto next_look = Clock::now();
    uint64_t seen = weft::activity(*this);
    std::vector<bool> done(launched.size(), false);
    size_t remaining = launched.size();
    // A reset ends a kernel without its return: the boot firmware marks the launch done.
    std::vector<uint32_t> boots;
    for (const auto& [ref, seq] : launched) boots.push_back(uint32_t{chips_[ref.chip]->status(ref.core).boot_count});
    long nap_us = 20;
    while (remaining) {
        bool progressed = false;
        for (size_t i = 0; i < launched.size(); ++i) {
            if (done[i]) continue;
            const auto& [ref, seq] = launched[i];
            Chip& chip = *chips_[ref.chip];
            if (chip.finished(ref.core, seq)) {
                if (chip.status(ref.core).boot_count != boots[i])
                    throw Error(core_name(ref.chip, ref.core) + "'s kernel '" + chip.kernel_name(ref.core) +
                                "' did not end: the chip was reset under it");
                if (chip.status(ref.core).state == abi::kHartFault)
                    throw FaultError(chip.describe_fault(ref.core) + "\n" + hang_report(unfinished(launched, done, i)));
                done[i] = true;
                --remaining;
                if (observer_) observer_->finished(ref.chip, ref.core, chip.result(ref.core));
                progressed = true;
                continue;
            }
            if (!chip.alive())
                throw Error(death_of(ref.chip) + " while core " + std::to_string(ref.core) + " ran kernel '" +
                            chip.kernel_name(ref.core) + "'");
        }
        if (!remaining) break;
        const auto now = Clock::now();
        if (now >= next_look) {
            next_look = now + std::chrono::milliseconds(100);
            bridge.look();
            const uint64_t a = weft::activity(*this);
            clock.look(a != seen || progressed);
            seen = a;
            if (interrupt_asked()) throw Error("interrupted: the op was stopped while its kernels ran");
            if (const std::string failed = watch ? watch() : ""; !failed.empty())
                throw Error(failed + "\n" + hang_report(unfinished(launched, done)));
        }
        const bool capped = clock.total() >= timeout * kStallCapFactor;
        if (clock.stalled() >= timeout || capped) {
            const std::string why = capped ? "the op ran " + std::to_string(kStallCapFactor) + "x its deadline of " +
                                                 std::to_string(timeout.count()) + " ms"
                                           : "nothing moved on the cluster for " + std::to_string(timeout.count()) +
                                                 " ms of its own time (the deadline)";
            WEFT_WARN("launch", "%s with %zu kernel(s) unfinished", why.c_str(), remaining);
            throw TimeoutError(why + " with " + std::to_string(remaining) + " kernel(s) unfinished\n" +
                               hang_report(unfinished(launched, done)));
        }
        nap_us = progressed ? 20 : std::min<long>(nap_us * 2, 2000);
        std::this_thread::sleep_for(std::chrono::microseconds(nap_us));
    }
    std::vector<KernelResult> results;
    for (const auto& [ref, seq] : launched) results.push_back(chips_[ref.chip]->result(ref.core));
    return results;
}

std::vector<KernelResult> Cluster::run(const std::vector<Launch>& launches, std::chrono::milliseconds timeout) {
    return wait_all(launch_all(launches), timeout);
}

}  // namespace weft
