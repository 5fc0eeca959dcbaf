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
#include <map>

#include "bridge/bridge.h"
#include "bridge/control_server.h"
#include "bridge/event_log.h"
#include "common/error.h"
#include "common/unix_socket.h"
#include "driver/firmware_layout.h"
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

}  // namespace

int main(int argc, char** argv) {
    BridgeOptions opt;
    opt.qemu = paths::qemu_binary();
    int ready_fd = -1;
    int owner_pid = 0;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
        if (a == "--cluster") opt.cluster_file = next();
        else if (a == "--run-dir") opt.run_dir = next();
        else if (a == "--ready-fd") ready_fd = std::atoi(next().c_str());
        else if (a == "--qemu") opt.qemu = next();
        else if (a == "--owner-pid") owner_pid = std::atoi(next().c_str());
        else if (a == "--boot-timeout-ms") opt.boot_timeout_ms = std::atoi(next().c_str());
        else return usage();
    }
    if (opt.cluster_file.empty() || opt.run_dir.empty()) return usage();
    if (ready_fd >= 0) fcntl(ready_fd, F_SETFD, FD_CLOEXEC);  // the chips must not hold our parent's pipe open

    const std::string sock_path = paths::control_socket(opt.run_dir);
    int listen_fd = -1;
    std::unique_ptr<Bridge> bridge;
    try {
        ClusterSpec spec = load_cluster(opt.cluster_file, paths::load_built_board);
        opt.boot_firmware = paths::boot_firmware(spec.board_name);
        opt.qemu_config = paths::qemu_config(spec.board.chip);
        check_firmware_layout(spec.board, paths::board_dtb(spec.board_name), opt.boot_firmware);
        if (mkdir(opt.run_dir.c_str(), 0700) != 0 && errno != EEXIST)
            throw Error("cannot create run directory " + opt.run_dir + ": " + strerror(errno));
        if (socket_is_live(sock_path))
            throw Error("a cluster is already up in " + opt.run_dir + " (run 'weft down' first)");

        sigset_t mask;
        sigemptyset(&mask);
        for (int s : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&mask, s);
        sigprocmask(SIG_BLOCK, &mask, nullptr);
        signal(SIGPIPE, SIG_IGN);

        log("starting " + std::to_string(spec.num_chips) + " chips of cluster '" + spec.name + "' (" + opt.cluster_file + ")");
        bridge = std::make_unique<Bridge>(std::move(spec), opt);
        bridge->start();
        listen_fd = net::listen_unix(sock_path);
        bridge->start_engine();
        log("cluster up; control socket " + sock_path);
    } catch (const std::exception& e) {
        log(std::string("error: ") + e.what());
        tell_parent(ready_fd, std::string("error: ") + e.what());
        bridge.reset();  // stops whatever chips started
        return 1;
    }
    tell_parent(ready_fd, "ok");

    sigset_t mask;
    sigemptyset(&mask);
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&mask, s);
    int sig_fd = signalfd(-1, &mask, SFD_CLOEXEC);

    // Status mailboxes drained every 100 ms into the run directory's events.log.
    EventLog events(*bridge, opt.run_dir + "/events.log");
    log("status events are logged to " + events.path());
    std::vector<int> clients;
    bool stopping = false;
    while (!stopping) {
        std::vector<pollfd> fds = {{sig_fd, POLLIN, 0}, {listen_fd, POLLIN, 0}};
        for (int c : clients) fds.push_back({c, POLLIN, 0});
        if (poll(fds.data(), fds.size(), 100) < 0 && errno != EINTR) break;
        for (uint32_t n = events.drain(); n; n = 0) log(std::to_string(n) + " status event(s), see " + events.path());
        if (owner_pid > 0 && kill(owner_pid, 0) != 0 && errno == ESRCH) {
            log("owner process " + std::to_string(owner_pid) + " is gone, shutting down");
            break;
        }
        if (fds[0].revents & POLLIN) {
            signalfd_siginfo si;
            if (read(sig_fd, &si, sizeof si) == sizeof si) {
                if (si.ssi_signo == SIGCHLD) {
                    for (const auto& msg : bridge->reap_children()) log(msg + "; its links are down");
                } else {
                    log(std::string("received ") + strsignal(si.ssi_signo) + ", shutting down");
                    stopping = true;
                }
            }
        }
        std::vector<int> keep;
        if (fds[1].revents & POLLIN) {
            int c = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
            if (c >= 0) keep.push_back(c);
        }
        for (size_t i = 2; i < fds.size(); ++i) {
            int c = fds[i].fd;
            if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) {
                keep.push_back(c);
                continue;
            }
            std::string line;
            try {
                if (!net::recv_line(c, &line, nullptr, 1000)) {
                    close(c);
                    continue;
                }
                ControlReply reply = handle_control(*bridge, events, line);
                net::send_line(c, reply.body.dump(), reply.fds);
                if (reply.shutdown) {
                    log("shutdown requested");
                    stopping = true;
                }
                keep.push_back(c);
            } catch (const std::exception& e) {
                log(std::string("control client dropped: ") + e.what());
                close(c);
            }
        }
        clients = keep;
    }
    bridge->stop();
    close(listen_fd);
    unlink(sock_path.c_str());
    log("all chips stopped");
    // Clients still connected see the socket close when this process is gone:
    // that is how `weft down` knows the whole cluster has stopped.
    return 0;
}
