#include "driver/control_client.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "common/error.h"
#include "common/knobs.h"
#include "common/unix_socket.h"
#include "driver/cluster_file.h"
#include "driver/host_resources.h"
#include "driver/paths.h"
#include "driver/run_dir.h"

namespace weft {

ControlClient::ControlClient(const std::string& run_dir) : run_dir_(run_dir) {
    const std::string sock = paths::control_socket(run_dir);
    try {
        fd_ = net::connect_unix(sock);
    } catch (const Error&) {
        throw NoClusterError("no cluster is up in " + run_dir + " (start one with 'weft up CLUSTER.yaml')");
    }
}

ControlClient::~ControlClient() {
    if (fd_ >= 0) close(fd_);
}

nlohmann::json ControlClient::exchange(const nlohmann::json& req, std::vector<int>* fds, int timeout_ms) {
    const std::lock_guard<std::mutex> one_at_a_time(mutex_);
    std::string line;
    try {
        net::send_line(fd_, req.dump());
    } catch (const Error& e) {
        // The bridge may have refused this client and closed before the
        // request went out; its reason is still waiting to be read.
        if (reader_.read(fd_, &line, nullptr, 200)) return parse_reply(line);
        throw;
    }
    if (!reader_.read(fd_, &line, fds, timeout_ms)) throw Error("weft-bridge closed the control socket");
    return parse_reply(line);
}

nlohmann::json ControlClient::parse_reply(const std::string& line) {
    nlohmann::json reply = nlohmann::json::parse(line, nullptr, false);
    if (!reply.is_object()) throw Error("weft-bridge answered with something that is not JSON");
    return reply;
}

nlohmann::json ControlClient::request(const nlohmann::json& req, std::vector<int>* fds, int timeout_ms) {
    nlohmann::json reply = exchange(req, fds, timeout_ms);
    if (!reply.value("ok", false)) throw Error("weft-bridge: " + reply.value("error", std::string("request failed")));
    return reply;
}

bool ControlClient::wait_closed(int timeout_ms) {
    pollfd p{fd_, POLLIN, 0};
    for (int waited = 0; waited < timeout_ms; waited += 100) {
        if (poll(&p, 1, 100) > 0) {
            char c;
            if (read(fd_, &c, 1) <= 0) return true;
        }
    }
    return false;
}

namespace {

// Starts the bridge (detached, its output into `out`, holding the run
// directory's `lock` for its life; both closed here) and waits for its word
// that the cluster is up.
void run_bridge(const std::string& cluster_file, const std::string& run_dir, int out, int lock, int timeout_ms,
                int owner_pid) {
    const std::string log = run_dir + "/bridge.log";
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) != 0) {
        close(out);
        close(lock);
        throw Error("pipe: " + std::string(strerror(errno)));
    }
    const std::string bridge = paths::bridge_binary();
    pid_t pid = fork();
    if (pid < 0) {
        close(out);
        close(lock);
        throw Error("fork: " + std::string(strerror(errno)));
    }
    if (pid == 0) {
        // Detach twice so the bridge outlives this process and is nobody's zombie.
        setsid();
        if (fork() != 0) _exit(0);
        run_dir::write_holder(lock, getpid());  // the bridge's pid: exec keeps it
        fcntl(lock, F_SETFD, 0);                // and the bridge keeps the lock
        int in = open("/dev/null", O_RDONLY);
        dup2(in, 0);
        dup2(out, 1);
        dup2(out, 2);
        int ready = dup(pipefd[1]);  // without CLOEXEC
        std::string ready_s = std::to_string(ready), owner_s = std::to_string(owner_pid), lock_s = std::to_string(lock);
        // Root may reach another user's cluster only when its owner says so.
        const bool root_ok = knobs::flag(knobs::knob("WEFT_ALLOW_ROOT"));
        execl(bridge.c_str(), bridge.c_str(), "--cluster", cluster_file.c_str(), "--run-dir", run_dir.c_str(),
              "--ready-fd", ready_s.c_str(), "--owner-pid", owner_s.c_str(), "--lock-fd", lock_s.c_str(),
              root_ok ? "--allow-root" : static_cast<char*>(nullptr), static_cast<char*>(nullptr));
        dprintf(2, "cannot run %s: %s\n", bridge.c_str(), strerror(errno));
        _exit(127);
    }
    close(pipefd[1]);
    close(out);
    waitpid(pid, nullptr, 0);
    close(lock);  // the bridge's copy holds it now
    std::string msg;
    pollfd p{pipefd[0], POLLIN, 0};
    for (;;) {
        int r = poll(&p, 1, timeout_ms);
        if (r <= 0) {
            close(pipefd[0]);
            throw TimeoutError("weft-bridge did not report ready within " + std::to_string(timeout_ms) + " ms (see " +
                               log + ")");
        }
        char buf[512];
        ssize_t n = read(pipefd[0], buf, sizeof buf);
        if (n <= 0) break;
        msg.append(buf, static_cast<size_t>(n));
        if (msg.find('\n') != std::string::npos) break;
    }
    close(pipefd[0]);
    while (!msg.empty() && msg.back() == '\n') msg.pop_back();
    if (msg == "ok") return;
    if (msg.rfind("error: ", 0) == 0) throw Error(msg.substr(7));
    throw Error("weft-bridge failed to start (see " + log + ")");
}

}  // namespace

void spawn_bridge(const std::string& cluster_file, const std::string& run_dir, int timeout_ms, int owner_pid) {
    // A bad file or one the host cannot hold is refused before anything starts.
    check_host_can_hold(load_cluster(cluster_file, paths::load_built_board), cluster_file);
    const bool created = run_dir::prepare(run_dir);
    const int lock = run_dir::take_lock(run_dir);
    const std::string log = run_dir + "/bridge.log";
    int out = -1;
    try {
        out = run_dir::open_log(log);
    } catch (...) {
        close(lock);
        throw;
    }
    try {
        run_bridge(cluster_file, run_dir, out, lock, timeout_ms, owner_pid);
    } catch (const TimeoutError&) {
        throw;  // its message sends the user to the log: keep it
    } catch (const Error& e) {
        // A directory made for nothing would only linger, unless the error
        // sends the user into it (a log to read).
        const bool cited = std::string(e.what()).find(run_dir) != std::string::npos;
        if (created && !cited && !knobs::flag(knobs::knob("WEFT_KEEP_RUN_DIR"))) std::filesystem::remove_all(run_dir);
        throw;
    }
}

}  // namespace weft
