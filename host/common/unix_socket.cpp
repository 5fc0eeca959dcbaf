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

bool recv_line(int fd, std::string* line, std::vector<int>* fds, int timeout_ms) {
    line->clear();
    for (;;) {
        pollfd p{fd, POLLIN, 0};
        int r = poll(&p, 1, timeout_ms);
        if (r < 0 && errno == EINTR) continue;
        if (r == 0) throw TimeoutError("no answer on the control socket within " + std::to_string(timeout_ms) + " ms");
        char buf[4096];
        iovec iov{buf, 1};  // one byte at a time: never read past the line's end
        msghdr msg{};
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        char control[CMSG_SPACE(sizeof(int) * 64)];
        msg.msg_control = control;
        msg.msg_controllen = sizeof(control);
        ssize_t n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
        if (n < 0) {
            if (errno == EINTR) continue;
            throw Error("control socket receive failed: " + std::string(strerror(errno)));
        }
        if (n == 0) return !line->empty();
        for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
            if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
                size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                for (size_t i = 0; i < count; ++i) {
                    int got;
                    memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
                    if (fds) fds->push_back(got);
                    else
                        close(got);
                }
            }
        }
        if (buf[0] == '\n') return true;
        line->push_back(buf[0]);
    }
}

}  // namespace weft::net
