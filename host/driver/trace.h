// A timeline of what every core did while an op ran, as Chrome trace event
// JSON (open it in Perfetto or chrome://tracing): one process per chip, one
// thread per core; each kernel's run (from its launch, as long as the core
// counted, exact whatever the sampling), each of its waits as a span (what it
// waited on in the span's args), the doorbells the bridge rang for each core
// as a counter, and each Ethernet port's traffic (what the EDM or a fabric
// router sends: commands and bytes its TX engine completed) as a counter. Waits and doorbells are sampled from every
// chip's hart status (shared memory, no request to the bridge) on a thread of its own, every `period`: waits shorter
// than that may be missed, and the sampling takes some host CPU from the chips, so a traced op is a little slower.
#pragma once
#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "driver/cluster.h"

namespace weft {

class Trace : private LaunchObserver {
public:
    // Starts sampling now; the file is written by stop() (or the destructor).
    Trace(Cluster& cluster, std::string path, std::chrono::microseconds period = std::chrono::microseconds(100));
    ~Trace();
    Trace(const Trace&) = delete;
    Trace& operator=(const Trace&) = delete;
    // Stops sampling and writes the file; returns the number of events.
    // Throws weft::Error naming the file if it cannot be written.
    size_t stop();

private:
    struct CoreState {
        std::string span;  // the open span's name ("" none)
        nlohmann::json args;
        double since_us = 0;
        uint32_t rung = 0, first_rung = 0;
        std::string kernel;  // launched by this process, not yet seen finished
        double launched_us = 0;
    };
    void launched(uint32_t chip, uint32_t core, const std::string& kernel) override;
    void finished(uint32_t chip, uint32_t core, const KernelResult& result) override;
    void add(nlohmann::json event);
    void run();
    void sample();
    void sample_ports(uint32_t chip, double now);
    void close_span(uint32_t chip, uint32_t core, CoreState& s, double now_us);
    double now_us() const;

    Cluster& cluster_;
    std::string path_;
    std::chrono::microseconds period_;
    std::chrono::steady_clock::time_point t0_;
    std::vector<std::vector<CoreState>> cores_;  // [chip][core]
    struct PortState {
        uint32_t done = 0, first = 0;  // the TX ring's completed commands
    };
    std::vector<std::vector<PortState>> ports_;  // [chip][port]
    std::mutex mutex_;                           // events_ and cores_: the sampler and the launching thread
    nlohmann::json events_ = nlohmann::json::array();
    std::atomic<bool> stop_{false};
    bool stopped_ = false;
    std::thread thread_;
};

// Makes the complete ("X") slices on each track (pid, tid) of `events` nest,
// as Perfetto expects of one thread: a kernel's slice is the core's own count
// from its launch, but a wait's is sampled, so it may be seen to end after its
// kernel did, or to begin before the launch was recorded. Each wait is clipped
// to the kernel it overlaps first; a kernel ends where the next one on its
// core was launched. Times become whole nanoseconds, so that nesting holds in
// the JSON too; the slices come last, each track's in time order, a parent
// before the children that begin with it.
void nest_slices(nlohmann::json& events);

// The name a wait kind goes by in traces and reports ("semaphore", "EDM idle").
std::string wait_kind_name(uint32_t kind);

}  // namespace weft
