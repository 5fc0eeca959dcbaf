// weft-bridge --cluster FILE --run-dir DIR [--ready-fd N] [--qemu PATH]
// Started by `weft up` (or libweft) as a daemon; also runs in the foreground.
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bridge/bridge.h"
#include "bridge/control_server.h"
#include "bridge/event_log.h"
#include "common/error.h"
#include "common/unix_socket.h"
#include "driver/paths.h"

using namespace weft;

namespace {

void log(const std::string& msg) {
    std::time_t t = std::time(nullptr);
    char ts[32];
    std::strftime(ts, sizeof ts, "%H:%M:%S", std::localtime(&t));
    std::fprintf(stderr, "[%s weft-bridge] %s\n", ts, msg.c_str());
}

void tell_parent(int fd, const std::string& msg) {
    if (fd < 0) return;
    std::string line = msg + "\n";
    if (write(fd, line.data(), line.size()) < 0) {
    }
    close(fd);
}

int usage() {
    std::fprintf(stderr,
                 "usage: weft-bridge --cluster FILE --run-dir DIR [--ready-fd N] [--qemu PATH] [--owner-pid PID]\n");
    return 2;
}

bool socket_is_live(const std::string& path) {
    try {
        close(net::connect_unix(path));
        return true;
    } catch (const Error&) {
        return false;
    }
}

struct Args {
    BridgeOptions bridge;
    int ready_fd = -1;   // where `weft up` waits for "ok" or the error
    int owner_pid = 0;   // the bridge stops once this process is gone (0: never)
};

// nullopt: the command line is wrong.
std::optional<Args> parse_args(int argc, char** argv) {
    Args args;
    BridgeOptions& opt = args.bridge;
    opt.qemu = paths::qemu_binary();
    opt.boot_firmware = paths::boot_firmware();
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
        if (a == "--cluster") opt.cluster_file = next();
        else if (a == "--run-dir") opt.run_dir = next();
        else if (a == "--ready-fd") args.ready_fd = std::atoi(next().c_str());
        else if (a == "--qemu") opt.qemu = next();
        else if (a == "--owner-pid") args.owner_pid = std::atoi(next().c_str());
        else if (a == "--boot-timeout-ms") opt.boot_timeout_ms = std::atoi(next().c_str());
        else return std::nullopt;
    }
    if (opt.cluster_file.empty() || opt.run_dir.empty()) return std::nullopt;
    return args;
}

// The signals that stop the bridge, and SIGCHLD (a chip's QEMU exited): all
// taken through a signalfd in the control loop, never by handlers.
sigset_t control_signals() {
    sigset_t mask;
    sigemptyset(&mask);
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&mask, s);
    return mask;
}

void check_run_dir(const BridgeOptions& opt) {
    if (mkdir(opt.run_dir.c_str(), 0700) != 0 && errno != EEXIST)
        throw Error("cannot create run directory " + opt.run_dir + ": " + strerror(errno));
    if (socket_is_live(paths::control_socket(opt.run_dir)))
        throw Error("a cluster is already up in " + opt.run_dir + " (run 'weft down' first)");
}

// Boots every chip, then opens the control socket and starts the engine.
// Throws weft::Error; the bridge is stopped by then.
std::unique_ptr<Bridge> start_cluster(const BridgeOptions& opt, int* listen_fd) {
    ClusterSpec spec = load_cluster(opt.cluster_file, paths::known_boards());
    check_run_dir(opt);
    const sigset_t mask = control_signals();
    sigprocmask(SIG_BLOCK, &mask, nullptr);
    signal(SIGPIPE, SIG_IGN);
    log("starting " + std::to_string(spec.num_chips) + " chips of cluster '" + spec.name + "' (" + opt.cluster_file + ")");
    auto bridge = std::make_unique<Bridge>(std::move(spec), opt);
    bridge->start();
    *listen_fd = net::listen_unix(paths::control_socket(opt.run_dir));
    bridge->start_engine();
    return bridge;
}

// The main thread's work once the cluster is up: control clients, signals,
// the status mailboxes (drained every 100 ms into events.log) and the owner.
class ControlLoop {
public:
    ControlLoop(Bridge& bridge, EventLog& events, int listen_fd, int owner_pid)
        : bridge_(bridge), events_(events), listen_fd_(listen_fd), owner_pid_(owner_pid) {
        const sigset_t mask = control_signals();
        sig_fd_ = signalfd(-1, &mask, SFD_CLOEXEC);
    }
    // Returns once a signal, a shutdown request or the owner's exit stops the bridge.
    void run();

private:
    bool owner_gone() const;
    void take_signal();
    // Answers one request; false once the client is gone.
    bool serve_client(int fd);

    Bridge& bridge_;
    EventLog& events_;
    int listen_fd_, owner_pid_, sig_fd_;
    std::vector<int> clients_;
    bool stopping_ = false;
};

void ControlLoop::run() {
    while (!stopping_) {
        std::vector<pollfd> fds = {{sig_fd_, POLLIN, 0}, {listen_fd_, POLLIN, 0}};
        for (int c : clients_) fds.push_back({c, POLLIN, 0});
        if (poll(fds.data(), fds.size(), 100) < 0 && errno != EINTR) break;
        for (uint32_t n = events_.drain(); n; n = 0) log(std::to_string(n) + " status event(s), see " + events_.path());
        if (owner_gone()) break;
        if (fds[0].revents & POLLIN) take_signal();
        std::vector<int> keep;
        if (fds[1].revents & POLLIN) {
            int c = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
            if (c >= 0) keep.push_back(c);
        }
        for (size_t i = 2; i < fds.size(); ++i) {
            const bool readable = fds[i].revents & (POLLIN | POLLHUP | POLLERR);
            if (!readable || serve_client(fds[i].fd)) keep.push_back(fds[i].fd);
        }
        clients_ = keep;
    }
}

bool ControlLoop::owner_gone() const {
    if (owner_pid_ <= 0 || kill(owner_pid_, 0) == 0 || errno != ESRCH) return false;
    log("owner process " + std::to_string(owner_pid_) + " is gone, shutting down");
    return true;
}

void ControlLoop::take_signal() {
    signalfd_siginfo si;
    if (read(sig_fd_, &si, sizeof si) != sizeof si) return;
    if (si.ssi_signo == SIGCHLD) {
        for (const auto& msg : bridge_.reap_children()) log(msg + "; its links are down");
    } else {
        log(std::string("received ") + strsignal(si.ssi_signo) + ", shutting down");
        stopping_ = true;
    }
}

bool ControlLoop::serve_client(int c) {
    std::string line;
    try {
        if (!net::recv_line(c, &line, nullptr, 1000)) {
            close(c);
            return false;
        }
        ControlReply reply = handle_control(bridge_, events_, line);
        net::send_line(c, reply.body.dump(), reply.fds);
        if (reply.shutdown) {
            log("shutdown requested");
            stopping_ = true;
        }
        return true;
    } catch (const std::exception& e) {
        log(std::string("control client dropped: ") + e.what());
        close(c);
        return false;
    }
}

}  // namespace

int main(int argc, char** argv) {
    const std::optional<Args> args = parse_args(argc, argv);
    if (!args) return usage();
    const BridgeOptions& opt = args->bridge;
    if (args->ready_fd >= 0) fcntl(args->ready_fd, F_SETFD, FD_CLOEXEC);  // the chips must not hold our parent's pipe open

    int listen_fd = -1;
    std::unique_ptr<Bridge> bridge;
    try {
        bridge = start_cluster(opt, &listen_fd);
        log("cluster up; control socket " + paths::control_socket(opt.run_dir));
    } catch (const std::exception& e) {
        log(std::string("error: ") + e.what());
        tell_parent(args->ready_fd, std::string("error: ") + e.what());
        return 1;
    }
    tell_parent(args->ready_fd, "ok");

    EventLog events(*bridge, opt.run_dir + "/events.log");
    log("status events are logged to " + events.path());
    ControlLoop(*bridge, events, listen_fd, args->owner_pid).run();
    bridge->stop();
    close(listen_fd);
    unlink(paths::control_socket(opt.run_dir).c_str());
    log("all chips stopped");
    // Clients still connected see the socket close when this process is gone:
    // that is how `weft down` knows the whole cluster has stopped.
    return 0;
}
