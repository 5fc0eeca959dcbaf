// How long a cluster has been stuck, as opposed to slow. A wait measured in
// wall time alone fails on a busy host: a cluster whose processes (its
// bridge and QEMUs) wait for the CPU has not stopped, it has not been run.
// So the clock counts the cluster's own time: wall time while none of its
// processes wanted the CPU (everything asleep: a deadlock, a dead cable), and
// the CPU time they got while some did (a kernel spinning counts; a cluster
// starved by other work does not).
#pragma once
#include <chrono>
#include <vector>

namespace weft {

class StallClock {
public:
    explicit StallClock(std::vector<int> pids);
    // A look at the cluster: `moved` if anything on it moved since the last.
    void look(bool moved);
    // The cluster's time since it last moved, and since the clock started.
    std::chrono::milliseconds stalled() const { return ms(stalled_ms_); }
    std::chrono::milliseconds total() const { return ms(total_ms_); }

private:
    struct Sample {
        double cpu_ms = 0;      // the processes' CPU time, all together
        bool runnable = false;  // a thread of theirs wants the CPU
    };
    Sample sample() const;
    static std::chrono::milliseconds ms(double v) { return std::chrono::milliseconds(static_cast<long long>(v)); }

    std::vector<int> pids_;
    std::chrono::steady_clock::time_point last_;
    Sample prev_;
    double stalled_ms_ = 0, total_ms_ = 0;
};

}  // namespace weft
