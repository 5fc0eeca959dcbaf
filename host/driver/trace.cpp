#include "driver/trace.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>

#include "common/error.h"
#include "common/hex.h"
#include "driver/cluster_file.h"
#include "weft/abi/control_block.h"

namespace weft {
namespace {

constexpr size_t kMaxEvents = 2'000'000;  // ~200 MB of JSON: enough for any op one looks at

nlohmann::json metadata(const char* what, uint32_t pid, int64_t tid, const std::string& name) {
    nlohmann::json e = {{"ph", "M"}, {"name", what}, {"pid", pid}, {"args", {{"name", name}}}};
    if (tid >= 0) e["tid"] = tid;
    return e;
}

// A complete slice in whole ns, and the event it came from.
struct Slice {
    int64_t begin = 0, end = 0;
    nlohmann::json event;
};

Slice slice_of(nlohmann::json event) {
    const double ts = event["ts"].get<double>(), dur = event["dur"].get<double>();
    return {std::llround(ts * 1000), std::llround((ts + dur) * 1000), std::move(event)};
}

nlohmann::json event_of(Slice s) {
    s.event["ts"] = double(s.begin) / 1000;
    s.event["dur"] = double(s.end - s.begin) / 1000;
    return std::move(s.event);
}

bool is_kernel(const Slice& s) { return s.event.value("cat", "") == "kernel"; }

// One core runs one kernel at a time: the next launch shows the last had ended.
void end_before_next(std::vector<Slice>& kernels) {
    for (size_t i = 0; i + 1 < kernels.size(); ++i)
        kernels[i].end = std::max(kernels[i].begin, std::min(kernels[i].end, kernels[i + 1].begin));
}

// A wait happens within its kernel's run: where the samples say it reached
// past the kernel (kernels sorted by begin), the kernel's edges are the truer.
void clip_to_kernel(Slice& wait, const std::vector<Slice>& kernels) {
    for (const Slice& k : kernels)
        if (k.end > wait.begin && k.begin < wait.end) {
            wait.begin = std::max(wait.begin, k.begin);
            wait.end = std::min(wait.end, k.end);
            return;
        }
}

void nest_track(std::vector<Slice>& track) {
    const auto by_time = [](const Slice& a, const Slice& b) {
        return a.begin != b.begin ? a.begin < b.begin : a.end > b.end;  // a parent before its children
    };
    std::vector<Slice> kernels;
    for (const Slice& s : track)
        if (is_kernel(s)) kernels.push_back(s);
    std::sort(kernels.begin(), kernels.end(), by_time);
    end_before_next(kernels);
    for (Slice& s : track)
        if (!is_kernel(s)) clip_to_kernel(s, kernels);
    std::erase_if(track, [](const Slice& s) { return is_kernel(s); });
    track.insert(track.end(), kernels.begin(), kernels.end());
    std::sort(track.begin(), track.end(), by_time);
}

}  // namespace

void nest_slices(nlohmann::json& events) {
    std::map<std::pair<int64_t, int64_t>, std::vector<Slice>> tracks;
    nlohmann::json out = nlohmann::json::array();
    for (nlohmann::json& e : events) {
        if (e.value("ph", "") != "X") out.push_back(std::move(e));
        else {
            const auto track = std::make_pair(e["pid"].get<int64_t>(), e["tid"].get<int64_t>());
            tracks[track].push_back(slice_of(std::move(e)));
        }
    }
    for (auto& [where, track] : tracks) {
        nest_track(track);
        for (Slice& s : track) out.push_back(event_of(std::move(s)));
    }
    events = std::move(out);
}

std::string wait_kind_name(uint32_t kind) {
    switch (kind) {
        case abi::kWaitNone: return "running";
        case abi::kWaitLaunch: return "idle";
        case abi::kWaitSemaphore: return "wait semaphore";
        case abi::kWaitNocRing: return "wait NoC ring";
        case abi::kWaitEthRing: return "wait Ethernet port";
        case abi::kWaitMathRing: return "wait math ring";
        case abi::kWaitWord: return "wait word";
        case abi::kWaitEdm: return "EDM idle";
        case abi::kWaitFabricRouter: return "router idle";
    }
    return "wait kind " + std::to_string(kind);
}

Trace::Trace(Cluster& cluster, std::string path, std::chrono::microseconds period)
    : cluster_(cluster), path_(std::move(path)), period_(period), t0_(std::chrono::steady_clock::now()) {
    const BoardInfo& b = cluster.board();
    cores_.assign(cluster.size(), std::vector<CoreState>(b.cores.size()));
    ports_.assign(cluster.size(), std::vector<PortState>(b.ports.size()));
    for (uint32_t chip = 0; chip < cluster.size(); ++chip) {
        events_.push_back(metadata("process_name", chip, -1, "chip " + std::to_string(chip)));
        for (uint32_t core = 0; core < b.cores.size(); ++core) {
            const char* role = b.cores[core].role == CoreRole::kErisc ? "erisc" : "worker";
            events_.push_back(metadata("thread_name", chip, core, "core " + std::to_string(core) + " " + role));
            cores_[chip][core].rung = cores_[chip][core].first_rung = cluster.chip(chip).control().bells.rung[core];
        }
        for (uint32_t port = 0; port < b.ports.size(); ++port)
            ports_[chip][port].done = ports_[chip][port].first = cluster.chip(chip).control().eth[port].head;
    }
    cluster_.observe(this);
    thread_ = std::thread([this] { run(); });
}

void Trace::add(nlohmann::json event) {
    if (events_.size() < kMaxEvents) events_.push_back(std::move(event));
}

void Trace::launched(uint32_t chip, uint32_t core, const std::string& kernel) {
    std::lock_guard<std::mutex> lock(mutex_);
    cores_[chip][core].kernel = kernel;
    cores_[chip][core].launched_us = now_us();
}

// The core's own count of its run, placed at the launch: the host sees the end late.
void Trace::finished(uint32_t chip, uint32_t core, const KernelResult& result) {
    std::lock_guard<std::mutex> lock(mutex_);
    CoreState& s = cores_[chip][core];
    if (s.kernel.empty()) return;
    const double us = double(result.ticks) / cluster_.board().timebase_hz * 1e6;
    add({{"ph", "X"},
         {"name", s.kernel},
         {"cat", "kernel"},
         {"pid", chip},
         {"tid", core},
         {"ts", s.launched_us},
         {"dur", std::max(us, 0.1)},
         {"args", {{"kernel", s.kernel}, {"return_code", result.return_code}, {"cycles", result.cycles}}}});
    s.kernel.clear();
}

Trace::~Trace() {
    try {
        stop();
    } catch (const std::exception&) {
    }
}

double Trace::now_us() const {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0_).count();
}

void Trace::run() {
    while (!stop_.load(std::memory_order_relaxed)) {
        sample();
        std::this_thread::sleep_for(period_);
    }
}

void Trace::close_span(uint32_t chip, uint32_t core, CoreState& s, double now) {
    if (s.span.empty()) return;
    add({{"ph", "X"},
         {"name", s.span},
         {"pid", chip},
         {"tid", core},
         {"ts", s.since_us},
         {"dur", std::max(now - s.since_us, 0.1)},
         {"args", s.args}});
    s.span.clear();
}

// A core is in one span at a time: a kernel running (its name), one of its
// waits, or nothing (idle in the boot firmware: no span).
void Trace::sample() {
    std::lock_guard<std::mutex> lock(mutex_);
    const double now = now_us();
    for (uint32_t chip = 0; chip < cores_.size(); ++chip) {
        Chip& c = cluster_.chip(chip);
        for (uint32_t core = 0; core < cores_[chip].size(); ++core) {
            const abi::HartStatus& st = c.status(core);
            CoreState& s = cores_[chip][core];
            std::string span;
            nlohmann::json args;
            // The kernel's run is the observer's; a running core's waits are sampled.
            if (st.state == abi::kHartRunning && st.wait_kind != abi::kWaitNone && st.wait_kind != abi::kWaitLaunch) {
                span = wait_kind_name(st.wait_kind);
                args = {{"kernel", c.kernel_name(core)},
                        {"launch", st.running_seq},
                        {"address", hex(st.wait_addr)},
                        {"value", st.wait_value}};
            } else if (st.state == abi::kHartFault) {
                span = "FAULT";
            }
            if (span != s.span) {
                close_span(chip, core, s, now);
                s.span = span;
                s.args = args;
                s.since_us = now;
            }
            const uint32_t rung = c.control().bells.rung[core];
            if (rung != s.rung)
                add({{"ph", "C"},
                     {"name", "doorbells core " + std::to_string(core)},
                     {"pid", chip},
                     {"ts", now},
                     {"args", {{"rings since the trace began", rung - s.first_rung}}}});
            s.rung = rung;
        }
        sample_ports(chip, now);
    }
}

// Each port's Ethernet TX engine: the commands it completed since the trace
// began, a counter track per port that climbs while the EDM or a router sends.
void Trace::sample_ports(uint32_t chip, double now) {
    Chip& c = cluster_.chip(chip);
    for (uint32_t port = 0; port < ports_[chip].size(); ++port) {
        PortState& p = ports_[chip][port];
        const uint32_t done = c.control().eth[port].head;
        if (done == p.done) continue;
        p.done = done;
        add({{"ph", "C"},
             {"name", "Ethernet TX port " + port_name(cluster_.board(), port)},
             {"pid", chip},
             {"ts", now},
             {"args", {{"commands since the trace began", done - p.first}}}});
    }
}

size_t Trace::stop() {
    if (stopped_) return events_.size();
    stopped_ = true;
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    cluster_.observe(nullptr);
    sample();
    const double now = now_us();
    for (uint32_t chip = 0; chip < cores_.size(); ++chip)
        for (uint32_t core = 0; core < cores_[chip].size(); ++core) close_span(chip, core, cores_[chip][core], now);
    nest_slices(events_);
    std::ofstream out(path_);
    if (!out) throw Error("cannot write the trace " + path_);
    out << nlohmann::json{{"traceEvents", events_}, {"displayTimeUnit", "ms"}}.dump() << "\n";
    if (!out) throw Error("cannot write the trace " + path_);
    return events_.size();
}

}  // namespace weft
