#include "bridge/control_clients.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include "bridge/control_server.h"
#include "common/error.h"
#include "common/unix_socket.h"

namespace weft {
namespace {

void log(const std::string& msg) { std::fprintf(stderr, "[weft-bridge] %s\n", msg.c_str()); }

// Best effort: the client may already be gone or its buffer full.
void say(int fd, const std::string& error) {
    const std::string line = nlohmann::json{{"ok", false}, {"error", error}}.dump() + "\n";
    if (send(fd, line.data(), line.size(), MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
    }
}

void say_and_close(int fd, const std::string& error) {
    say(fd, error);
    close(fd);
}

}  // namespace

ControlClients::ControlClients(Bridge& bridge, EventLog& events, const std::string& socket_path, bool allow_root,
                               ControlLimits limits)
    : bridge_(bridge), events_(events), path_(socket_path), allow_root_(allow_root), limits_(limits) {
    // Owner only, from the moment it exists (the run directory is private too).
    const mode_t old = umask(077);
    try {
        listen_fd_ = net::listen_unix(socket_path);
    } catch (...) {
        umask(old);
        throw;
    }
    umask(old);
    chmod(socket_path.c_str(), 0600);
    // accept_clients takes every waiting client and must stop, not block, when none is left.
    fcntl(listen_fd_, F_SETFL, fcntl(listen_fd_, F_GETFL) | O_NONBLOCK);
}

ControlClients::~ControlClients() {
    for (Client& c : clients_) close(c.fd);
    if (listen_fd_ >= 0) close(listen_fd_);
}

void ControlClients::add_poll_fds(std::vector<pollfd>& fds) const {
    fds.push_back({listen_fd_, POLLIN, 0});
    for (const Client& c : clients_) fds.push_back({c.fd, static_cast<short>(POLLIN | (c.out_bytes ? POLLOUT : 0)), 0});
}

std::string ControlClients::refuse_reason(uid_t peer_uid) const {
    const uid_t owner = geteuid();
    if (peer_uid == owner) return "";
    if (peer_uid == 0 && allow_root_) return "";
    if (peer_uid == 0)
        return "this cluster belongs to uid " + std::to_string(owner) +
               "; root may reach it only if it was started with WEFT_ALLOW_ROOT=1";
    return "this cluster belongs to uid " + std::to_string(owner) + ", not to uid " + std::to_string(peer_uid);
}

void ControlClients::accept_clients() {
    for (;;) {
        const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) return;
        struct ucred peer {};
        socklen_t len = sizeof peer;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0) {
            say_and_close(fd, "cannot tell who is connecting");
            continue;
        }
        if (const std::string why = refuse_reason(peer.uid); !why.empty()) {
            log("refused a control client (pid " + std::to_string(peer.pid) + ", uid " + std::to_string(peer.uid) +
                "): " + why);
            say_and_close(fd, why);
            continue;
        }
        if (clients_.size() >= limits_.max_clients) {
            say_and_close(fd, "too many control clients (" + std::to_string(clients_.size()) + ")");
            continue;
        }
        Client c;
        c.fd = fd;
        c.pid = peer.pid;
        clients_.push_back(std::move(c));
    }
}

bool ControlClients::read_from(Client& c, uint64_t now_ms) {
    char buf[4096];
    for (;;) {
        const ssize_t n = recv(c.fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n == 0) return false;
        if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
        if (c.in.empty()) c.line_started_ms = now_ms;
        c.in.append(buf, static_cast<size_t>(n));
        for (size_t nl; (nl = c.in.find('\n')) != std::string::npos;) {
            const std::string line = c.in.substr(0, nl);
            c.in.erase(0, nl + 1);
            c.line_started_ms = now_ms;
            answer(c, line);
        }
        if (c.in.size() > limits_.max_line) {
            say(c.fd, "request longer than " + std::to_string(limits_.max_line) + " bytes");
            return false;
        }
    }
}

bool ControlClients::write_to(Client& c) {
    while (!c.out.empty()) {
        Reply& r = c.out.front();
        size_t sent = 0;
        try {
            sent = net::send_some(c.fd, r.bytes.data() + r.sent, r.bytes.size() - r.sent,
                                  r.sent ? std::vector<int>{} : r.fds);
        } catch (const Error&) {
            return false;
        }
        if (sent == 0) return true;  // the socket is full: later
        r.sent += sent;
        c.out_bytes -= sent;
        if (r.sent == r.bytes.size()) c.out.pop_front();
    }
    return true;
}

void ControlClients::answer(Client& c, const std::string& line) {
    nlohmann::json body;
    std::vector<int> fds;
    nlohmann::json req = nlohmann::json::parse(line, nullptr, false);
    const std::string cmd =
        req.is_object() && req.contains("cmd") && req["cmd"].is_string() ? req["cmd"].get<std::string>() : "";
    if (cmd == "claim") {
        body = claim(c, req, now_ms_);
    } else if (cmd == "release") {
        body = release(c);
    } else {
        ControlReply reply = handle_control(bridge_, events_, line);
        body = std::move(reply.body);
        fds = std::move(reply.fds);
        if (reply.shutdown) shutdown_ = true;
        if ((cmd == "info" || cmd == "attach") && holder_fd_ >= 0)
            body["claimed_by"] = {{"what", holder_what_}, {"pid", holder_pid_}, {"for_ms", now_ms_ - held_since_ms_}};
    }
    Reply r;
    r.bytes = body.dump() + "\n";
    r.fds = std::move(fds);
    c.out_bytes += r.bytes.size();
    c.out.push_back(std::move(r));
}

nlohmann::json ControlClients::claim(Client& c, const nlohmann::json& req, uint64_t now_ms) {
    if (holder_fd_ >= 0 && holder_fd_ != c.fd)
        return {{"ok", false},
                {"busy", true},
                {"error", "the cluster is in use by " + holder_what_ + " (pid " + std::to_string(holder_pid_) +
                              ") for " + std::to_string((now_ms - held_since_ms_) / 1000) + " s"}};
    if (holder_fd_ != c.fd) held_since_ms_ = now_ms;
    holder_fd_ = c.fd;
    holder_pid_ = c.pid;
    holder_what_ = req.contains("what") && req["what"].is_string() ? req["what"].get<std::string>() : "a client";
    return {{"ok", true}};
}

nlohmann::json ControlClients::release(Client& c) {
    if (holder_fd_ == c.fd) holder_fd_ = -1;
    return {{"ok", true}};
}

void ControlClients::drop(std::list<Client>::iterator it, const std::string& why) {
    if (!why.empty()) log("control client (pid " + std::to_string(it->pid) + ") dropped: " + why);
    if (holder_fd_ == it->fd) holder_fd_ = -1;
    close(it->fd);
    clients_.erase(it);
}

bool ControlClients::serve(const std::vector<pollfd>& fds, size_t first, uint64_t now_ms) {
    now_ms_ = now_ms;
    // fds[first] is the listening socket, then the clients in list order.
    size_t i = first + 1;
    for (auto it = clients_.begin(); it != clients_.end(); ++i) {
        const short ev = i < fds.size() && fds[i].fd == it->fd ? fds[i].revents : 0;
        bool keep = true;
        std::string why;
        if (ev & (POLLIN | POLLHUP | POLLERR)) keep = read_from(*it, now_ms);
        if (keep && it->out_bytes) keep = write_to(*it);
        if (keep && it->out_bytes > limits_.max_pending_reply) keep = false, why = "it does not read its replies";
        if (keep && !it->in.empty() && now_ms - it->line_started_ms > limits_.max_partial_line_ms)
            keep = false, why = "a request unfinished for " + std::to_string(now_ms - it->line_started_ms) + " ms";
        if (keep) {
            ++it;
            continue;
        }
        drop(it++, why);
    }
    if (first < fds.size() && (fds[first].revents & POLLIN)) accept_clients();
    return shutdown_;
}

}  // namespace weft
