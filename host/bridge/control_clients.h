// The bridge's control socket, served to many clients at once without ever
// blocking on one: each client's bytes are read and its replies written as
// the socket allows, requests are bounded in size and time, and a client
// that sends a line too long, takes too long to finish one, or never reads
// its replies is dropped, not waited for. Only the cluster's owner (the
// bridge's user; root only with --allow-root) may connect at all, checked
// with the peer's credentials.
//
// The cluster is also claimed here: a client that runs ops asks for the
// cluster ("claim") and holds it until it lets go or disconnects (a client
// that dies lets go with its socket), so two clients never write over each
// other's inputs and device configuration; the second is told who holds it.
#pragma once
#include <poll.h>
#include <stdint.h>
#include <sys/types.h>

#include <deque>
#include <list>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace weft {

class Bridge;
class EventLog;

struct ControlLimits {
    size_t max_line = 64 * 1024;          // a request longer than this is refused and its client dropped
    size_t max_pending_reply = 8 << 20;   // replies a client leaves unread past this drop it
    uint64_t max_partial_line_ms = 5000;  // a request started and not finished within this drops its client
    size_t max_clients = 64;
};

class ControlClients {
public:
    ControlClients(Bridge& bridge, EventLog& events, const std::string& socket_path, bool allow_root,
                   ControlLimits limits = {});
    ~ControlClients();
    ControlClients(const ControlClients&) = delete;
    ControlClients& operator=(const ControlClients&) = delete;

    // Appends the listening socket and every client to poll for.
    void add_poll_fds(std::vector<pollfd>& fds) const;
    // Serves what poll reported in fds[first..] (as add_poll_fds laid them
    // out) and drops clients past their limits. Returns true once a client
    // asked the bridge to shut down.
    bool serve(const std::vector<pollfd>& fds, size_t first, uint64_t now_ms);
    size_t clients() const { return clients_.size(); }

private:
    struct Reply {
        std::string bytes;
        std::vector<int> fds;  // sent with its first byte
        size_t sent = 0;
    };
    struct Client {
        int fd = -1;
        pid_t pid = 0;
        std::string in;
        std::deque<Reply> out;
        size_t out_bytes = 0;  // not yet sent, over every reply
        uint64_t line_started_ms = 0;
    };

    void accept_clients();
    std::string refuse_reason(uid_t peer_uid) const;
    // False once the client must go (EOF, error, a limit passed).
    bool read_from(Client& c, uint64_t now_ms);
    bool write_to(Client& c);
    void answer(Client& c, const std::string& line);
    nlohmann::json claim(Client& c, const nlohmann::json& req, uint64_t now_ms);
    nlohmann::json release(Client& c);
    void drop(std::list<Client>::iterator it, const std::string& why);

    Bridge& bridge_;
    EventLog& events_;
    std::string path_;
    bool allow_root_;
    ControlLimits limits_;
    int listen_fd_ = -1;
    std::list<Client> clients_;
    bool shutdown_ = false;
    // The claim on the cluster: which client holds it, what it said it runs, since when.
    int holder_fd_ = -1;
    std::string holder_what_;
    pid_t holder_pid_ = 0;
    uint64_t held_since_ms_ = 0;
    uint64_t now_ms_ = 0;
};

}  // namespace weft
