// Client of weft-bridge's control socket.
#pragma once
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/unix_socket.h"

namespace weft {

// Nothing answers on the run directory's control socket: no cluster is up there.
class NoClusterError : public Error {
public:
    using Error::Error;
};

class ControlClient {
public:
    // Throws NoClusterError telling the user to run `weft up` when no cluster is up.
    explicit ControlClient(const std::string& run_dir);
    ~ControlClient();
    ControlClient(const ControlClient&) = delete;
    ControlClient& operator=(const ControlClient&) = delete;

    // Sends a request; throws weft::Error with the bridge's message if it says ok=false.
    nlohmann::json request(const nlohmann::json& req, std::vector<int>* fds = nullptr, int timeout_ms = 10000);
    // The bridge's reply as it is, ok or not.
    nlohmann::json exchange(const nlohmann::json& req, std::vector<int>* fds = nullptr, int timeout_ms = 10000);
    // After "shutdown": waits until the bridge closes the socket (all chips stopped).
    bool wait_closed(int timeout_ms);

private:
    static nlohmann::json parse_reply(const std::string& line);
    int fd_ = -1;
    net::LineReader reader_;  // the replies, read in large reads
    std::string run_dir_;
    // One request and its reply at a time: a program's threads share the
    // connection (a test pulls a cable while an op runs).
    std::mutex mutex_;
};

// Starts weft-bridge as a daemon for `cluster_file` in `run_dir` and waits
// until every chip is READY. Throws weft::Error with the bridge's reason.
// With an owner pid, the cluster stops by itself once that process is gone
// (a library user or test that dies never leaves chips running).
void spawn_bridge(const std::string& cluster_file, const std::string& run_dir, int timeout_ms = 60000,
                  int owner_pid = 0);

}  // namespace weft
