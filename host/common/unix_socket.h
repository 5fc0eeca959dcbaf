// Line-oriented JSON over a UNIX stream socket, with file descriptors passed
// alongside (SCM_RIGHTS) so a client can map the chips' memory.
#pragma once
#include <string>
#include <vector>

namespace weft::net {

int listen_unix(const std::string& path);   // throws weft::Error
int connect_unix(const std::string& path);  // throws weft::Error
// Sends one line (a '\n' is appended) and optional fds with its first byte.
void send_line(int fd, const std::string& line, const std::vector<int>& fds = {});
// Sends what the socket takes now of [data, +len), fds with the first byte;
// returns the bytes sent (0: the socket is full). Throws weft::Error if the
// peer is gone.
size_t send_some(int fd, const char* data, size_t len, const std::vector<int>& fds);
// Reads one line; appends received fds to *fds. Returns false on EOF.
// timeout_ms < 0 waits forever.
bool recv_line(int fd, std::string* line, std::vector<int>* fds, int timeout_ms);

}  // namespace weft::net
