#include "common/unix_socket.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/error.h"

namespace weft::net {
namespace {

sockaddr_un address(const std::string& path) {
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    if (path.size() >= sizeof(a.sun_path)) throw Error("socket path too long: " + path);
    memcpy(a.sun_path, path.c_str(), path.size() + 1);
    return a;
}

}  // namespace

int listen_unix(const std::string& path) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw Error("socket: " + std::string(strerror(errno)));
    sockaddr_un a = address(path);
    unlink(path.c_str());
    if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 || listen(fd, 16) != 0) {
        int e = errno;
        close(fd);
        throw Error("cannot listen on " + path + ": " + strerror(e));
    }
    return fd;
}

int connect_unix(const std::string& path) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw Error("socket: " + std::string(strerror(errno)));
    sockaddr_un a = address(path);
    if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
        int e = errno;
        close(fd);
        throw Error("cannot connect to " + path + ": " + strerror(e));
    }
    return fd;
}

namespace {

// One sendmsg, fds (if any) with its first byte.
ssize_t send_with_fds(int fd, const char* data, size_t len, const std::vector<int>& fds, int flags) {
    iovec iov{const_cast<char*>(data), len};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    std::vector<char> control;
    if (!fds.empty()) {
        control.resize(CMSG_SPACE(sizeof(int) * fds.size()));
        msg.msg_control = control.data();
        msg.msg_controllen = control.size();
        cmsghdr* c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
        memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
    }
    return sendmsg(fd, &msg, MSG_NOSIGNAL | flags);
}

}  // namespace

void send_line(int fd, const std::string& line, const std::vector<int>& fds) {
    std::string data = line + "\n";
    size_t off = 0;
    while (off < data.size()) {
        const ssize_t n = send_with_fds(fd, data.data() + off, data.size() - off, off ? std::vector<int>{} : fds, 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            throw Error("control socket send failed: " + std::string(strerror(errno)));
        }
        off += static_cast<size_t>(n);
    }
}

size_t send_some(int fd, const char* data, size_t len, const std::vector<int>& fds) {
    for (;;) {
        const ssize_t n = send_with_fds(fd, data, len, fds, MSG_DONTWAIT);
        if (n >= 0) return static_cast<size_t>(n);
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
        throw Error("control socket send failed: " + std::string(strerror(errno)));
    }
}

namespace {

// One recvmsg of up to `len` bytes after waiting for them; the fds that came
// along go to *fds (closed if nobody wants them). Returns 0 at EOF.
size_t receive_some(int fd, char* buf, size_t len, std::vector<int>* fds, int timeout_ms) {
    for (;;) {
        pollfd p{fd, POLLIN, 0};
        const int r = poll(&p, 1, timeout_ms);
        if (r < 0 && errno == EINTR) continue;
        if (r == 0) throw TimeoutError("no answer on the control socket within " + std::to_string(timeout_ms) + " ms");
        iovec iov{buf, len};
        msghdr msg{};
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        char control[CMSG_SPACE(sizeof(int) * 64)];
        msg.msg_control = control;
        msg.msg_controllen = sizeof(control);
        const ssize_t n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
        if (n < 0) {
            if (errno == EINTR) continue;
            throw Error("control socket receive failed: " + std::string(strerror(errno)));
        }
        for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
            if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
            const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (size_t i = 0; i < count; ++i) {
                int got;
                memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
                if (fds) fds->push_back(got);
                else
                    close(got);
            }
        }
        return static_cast<size_t>(n);
    }
}

}  // namespace

bool recv_line(int fd, std::string* line, std::vector<int>* fds, int timeout_ms) {
    line->clear();
    for (;;) {
        char c;
        if (receive_some(fd, &c, 1, fds, timeout_ms) == 0) return !line->empty();
        if (c == '\n') return true;
        line->push_back(c);
    }
}

bool LineReader::read(int fd, std::string* line, std::vector<int>* fds, int timeout_ms) {
    size_t end;
    while ((end = pending_.find('\n')) == std::string::npos) {
        char buf[65536];
        const size_t n = receive_some(fd, buf, sizeof buf, fds, timeout_ms);
        if (n == 0) {
            *line = std::move(pending_);
            pending_.clear();
            return !line->empty();
        }
        pending_.append(buf, n);
    }
    line->assign(pending_, 0, end);
    pending_.erase(0, end + 1);
    return true;
}

}  // namespace weft::net
