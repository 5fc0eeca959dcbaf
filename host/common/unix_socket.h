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
// timeout_ms < 0 waits forever. Reads a byte at a time, so that nothing past
// the line is taken from the socket: for sockets read by more than one reader.
bool recv_line(int fd, std::string* line, std::vector<int>* fds, int timeout_ms);

// Lines from one socket that only this reader reads, in large reads: a
// reply of 40 KB (a galaxy's counters) is a few system calls, not 80,000.
// What came after a line waits here for the next read.
class LineReader {
public:
    // As recv_line; timeout_ms bounds each wait for more bytes.
    bool read(int fd, std::string* line, std::vector<int>* fds, int timeout_ms);

private:
    std::string pending_;
};

}  // namespace weft::net
