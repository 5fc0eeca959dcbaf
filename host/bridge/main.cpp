// weft-bridge --cluster FILE --run-dir DIR [--ready-fd N] [--lock-fd N] [--qemu PATH] [--owner-pid PID]
//             [--allow-root]
// Started by `weft up` (or libweft) as a daemon; also runs in the foreground.
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>

#include "bridge/bridge.h"
#include "bridge/control_clients.h"
#include "bridge/event_log.h"
#include "common/error.h"
#include "driver/firmware_layout.h"
#include "driver/paths.h"
#include "driver/run_dir.h"

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
    std::fprintf(stderr, "usage: weft-bridge --cluster FILE --run-dir DIR [--ready-fd N] [--lock-fd N] [--qemu PATH]"
                         " [--owner-pid PID] [--allow-root]\n");
    return 2;
}

uint64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

struct Args {
    BridgeOptions bridge;
    int ready_fd = -1;
    int lock_fd = -1;  // the run directory's lock, taken by whoever started us
    int owner_pid = 0;
    bool allow_root = false;
};

// False on a malformed command line.
bool parse_args(int argc, char** argv, Args* a) {
    a->bridge.qemu = paths::qemu_binary();
    for (int i = 1; i < argc; ++i) {
        std::string w = argv[i];
        auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
        if (w == "--cluster") a->bridge.cluster_file = next();
        else if (w == "--run-dir")
            a->bridge.run_dir = next();
        else if (w == "--ready-fd")
            a->ready_fd = std::atoi(next().c_str());
        else if (w == "--lock-fd")
            a->lock_fd = std::atoi(next().c_str());
        else if (w == "--qemu")
            a->bridge.qemu = next();
        else if (w == "--owner-pid")
            a->owner_pid = std::atoi(next().c_str());
        else if (w == "--boot-timeout-ms")
            a->bridge.boot_timeout_ms = std::atoi(next().c_str());
        else if (w == "--allow-root")
            a->allow_root = true;
        else
            return false;
    }
    return !a->bridge.cluster_file.empty() && !a->bridge.run_dir.empty();
}

// A daemon keeps no descriptor its starter happened to leave open (a test
// runner's lock, a terminal's pipe): it would hold them for the cluster's life.
void close_inherited_fds(const Args& a) {
    const int last = static_cast<int>(sysconf(_SC_OPEN_MAX));
    for (int fd = 3; fd < last && fd < 65536; ++fd)
        if (fd != a.ready_fd && fd != a.lock_fd) close(fd);
}

// Signals arrive through a signalfd in the main loop, never as handlers.
int block_signals() {
    sigset_t mask;
    sigemptyset(&mask);
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&mask, s);
    sigprocmask(SIG_BLOCK, &mask, nullptr);
    signal(SIGPIPE, SIG_IGN);
    return signalfd(-1, &mask, SFD_CLOEXEC);
}

// The run directory is private and ours alone for as long as we run.
void claim_run_dir(Args& a) {
    run_dir::prepare(a.bridge.run_dir);
    if (a.lock_fd < 0) {
        a.lock_fd = run_dir::take_lock(a.bridge.run_dir);
        run_dir::write_holder(a.lock_fd, getpid());
    }
    fcntl(a.lock_fd, F_SETFD, FD_CLOEXEC);  // held by us, not by the chips we start
}

std::unique_ptr<Bridge> start_cluster(Args& a) {
    ClusterSpec spec = load_cluster(a.bridge.cluster_file, paths::load_built_board);
    a.bridge.boot_firmware = paths::boot_firmware(spec.board_name);
    if (spec.board.qemu) {  // a chip without a QEMU machine is refused by the Bridge, naming it
        a.bridge.qemu_config = paths::qemu_config(spec.board.qemu->args);
        if (a.bridge.qemu.empty()) a.bridge.qemu = spec.board.qemu->program;
    }
    check_firmware_layout(spec.board, paths::board_dtb(spec.board_name), a.bridge.boot_firmware);
    log("starting " + std::to_string(spec.num_chips) + " chips of cluster '" + spec.name + "' (" +
        a.bridge.cluster_file + ")");
    auto bridge = std::make_unique<Bridge>(std::move(spec), a.bridge);
    bridge->start();
    return bridge;
}

// True when the main loop should end.
bool handle_signal(int sig_fd, Bridge& bridge, EventLog& events) {
    signalfd_siginfo si;
    if (read(sig_fd, &si, sizeof si) != sizeof si) return false;
    if (si.ssi_signo == SIGCHLD) {
        for (const auto& msg : bridge.reap_children()) {
            log(msg + "; its links are down");
            events.note(msg + "; its links are down");
        }
        return false;
    }
    log(std::string("received ") + strsignal(si.ssi_signo) + ", shutting down");
    return true;
}

bool owner_gone(int owner_pid) {
    if (owner_pid <= 0 || kill(owner_pid, 0) == 0 || errno != ESRCH) return false;
    log("owner process " + std::to_string(owner_pid) + " is gone, shutting down");
    return true;
}

// Serves the control socket and drains status events until told to stop.
void serve(Bridge& bridge, EventLog& events, ControlClients& control, int sig_fd, int owner_pid) {
    for (;;) {
        std::vector<pollfd> fds = {{sig_fd, POLLIN, 0}};
        control.add_poll_fds(fds);
        if (poll(fds.data(), fds.size(), 100) < 0 && errno != EINTR) return;
        for (uint32_t n = events.drain(); n; n = 0) log(std::to_string(n) + " status event(s), see " + events.path());
        if (owner_gone(owner_pid)) return;
        if ((fds[0].revents & POLLIN) && handle_signal(sig_fd, bridge, events)) return;
        if (control.serve(fds, 1, now_ms())) {
            log("shutdown requested");
            return;
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    Args a;
    if (!parse_args(argc, argv, &a)) return usage();
    close_inherited_fds(a);
    if (a.ready_fd >= 0) fcntl(a.ready_fd, F_SETFD, FD_CLOEXEC);  // the chips must not hold our parent's pipe open
    const int sig_fd = block_signals();
    const std::string sock_path = paths::control_socket(a.bridge.run_dir);
    std::unique_ptr<Bridge> bridge;
    std::unique_ptr<EventLog> events;
    std::unique_ptr<ControlClients> control;
    try {
        claim_run_dir(a);
        bridge = start_cluster(a);
        events = std::make_unique<EventLog>(*bridge, a.bridge.run_dir + "/events.log");
        control = std::make_unique<ControlClients>(*bridge, *events, sock_path, a.allow_root);
        bridge->start_engine();
        log("cluster up; control socket " + sock_path + "; status events are logged to " + events->path());
    } catch (const std::exception& e) {
        log(std::string("error: ") + e.what());
        tell_parent(a.ready_fd, std::string("error: ") + e.what());
        control.reset();
        bridge.reset();  // stops whatever chips started
        return 1;
    }
    tell_parent(a.ready_fd, "ok");
    serve(*bridge, *events, *control, sig_fd, a.owner_pid);
    bridge->stop();
    control.reset();
    unlink(sock_path.c_str());
    log("all chips stopped");
    // Clients still connected see the socket close when this process is gone:
    // that is how `weft down` knows the whole cluster has stopped.
    return 0;
}
