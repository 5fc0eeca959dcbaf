#include "common/qmp.h"

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/unix_socket.h"

namespace weft::qmp {
namespace {

// Skips asynchronous events until the command's answer.
std::string expect_return(int fd, const std::string& what) {
    std::string line;
    for (;;) {
        if (!net::recv_line(fd, &line, nullptr, 5000)) throw Error("QMP closed or silent during " + what);
        if (line.find("\"return\"") != std::string::npos) return line;
        if (line.find("\"error\"") != std::string::npos) throw Error("QMP " + what + ": " + line);
    }
}

}  // namespace

std::string execute(const std::string& socket, const std::string& command, const std::string& what) {
    const int fd = net::connect_unix(socket);
    try {
        std::string greeting;
        if (!net::recv_line(fd, &greeting, nullptr, 5000)) throw Error("QMP sent no greeting");
        net::send_line(fd, R"({"execute":"qmp_capabilities"})");
        expect_return(fd, "qmp_capabilities");
        net::send_line(fd, command);
        std::string answer = expect_return(fd, what);
        close(fd);
        return answer;
    } catch (...) {
        close(fd);
        throw;
    }
}

std::string human(const std::string& socket, const std::string& command_line) {
    const nlohmann::json cmd = {{"execute", "human-monitor-command"}, {"arguments", {{"command-line", command_line}}}};
    return execute(socket, cmd.dump(), command_line);
}

}  // namespace weft::qmp
