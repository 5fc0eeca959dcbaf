// The control socket under hostile and careless clients, on a live `pair`
// cluster: random bytes, malformed JSON, wrong types, unknown commands,
// out-of-range ids, a 1 MiB line, a client that sends a byte at a time and one
// that never reads its replies. Throughout, a second client's `info` must be
// answered within a second; every bad request gets an error (never a crash or
// a silent success on a truncated id), and the cluster still runs a kernel at
// the end.
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "common/unix_socket.h"
#include "driver/control_client.h"
#include "system_test.h"
#include "test_kernels.h"

using namespace weft;
using namespace weft::test;
using std::chrono::milliseconds;

namespace {

std::unique_ptr<Cluster> g_cluster;

int setup(void**) { return start_for_group("pair", &g_cluster); }

int teardown(void**) {
    g_cluster.reset();
    return 0;
}

int connect_raw() { return net::connect_unix(paths::control_socket(g_cluster->run_dir())); }

// The reply to one line on a fresh connection.
nlohmann::json ask(const std::string& line) {
    const int fd = connect_raw();
    net::send_line(fd, line);
    std::string reply;
    const bool got = net::recv_line(fd, &reply, nullptr, 5000);
    close(fd);
    if (!got) fail_msg("no reply to %s", line.substr(0, 80).c_str());
    return nlohmann::json::parse(reply, nullptr, false);
}

// `info` on its own connection answered within a second.
void assert_responsive() {
    const auto t0 = std::chrono::steady_clock::now();
    ControlClient probe(g_cluster->run_dir());
    const nlohmann::json info = probe.request({{"cmd", "info"}}, nullptr, 1000);
    assert_int_equal(info["chips"].size(), 2);
    assert_true(std::chrono::steady_clock::now() - t0 < milliseconds(1000));
}

void test_bad_requests_are_refused_by_name(void**) {
    const std::pair<const char*, const char*> cases[] = {
        {"not json", "not JSON"},
        {"[1, 2]", "a JSON object"},
        {"{\"cmd\": 5}", "\"cmd\", a string"},
        {"{}", "\"cmd\", a string"},
        {"{\"cmd\": \"launch_missiles\"}", "unknown command"},
        {"{\"cmd\": \"reset\", \"chip\": 4294967296}", "chip must be a whole number from 0 to 1"},
        {"{\"cmd\": \"reset\", \"chip\": -1}", "chip must be a whole number"},
        {"{\"cmd\": \"reset\", \"chip\": 1.5}", "chip must be a whole number"},
        {"{\"cmd\": \"reset\", \"chip\": \"0\"}", "chip must be a whole number"},
        {"{\"cmd\": \"reset\"}", "missing chip"},
        {"{\"cmd\": \"link\", \"chip\": 4294967296, \"port\": 1, \"up\": false}", "chip must be a whole number"},
        {"{\"cmd\": \"link\", \"chip\": 0, \"port\": 99, \"up\": false}", "port must be a whole number"},
        {"{\"cmd\": \"link\", \"chip\": 0, \"port\": 1, \"up\": \"no\"}", "up must be true or false"},
        {"{\"cmd\": \"fault\", \"chip\": 0, \"port\": 1, \"drop_rate\": \"lots\"}", "drop_rate must be a number"},
        {"{\"cmd\": \"fault\", \"chip\": 0, \"port\": 1, \"clear\": 1}", "clear must be true or false"},
    };
    for (const auto& [line, why] : cases) {
        const nlohmann::json reply = ask(line);
        if (!reply.is_object() || reply.value("ok", true) || !contains(reply.value("error", ""), why))
            fail_msg("%s: %s (wanted an error with '%s')", line, reply.dump().c_str(), why);
    }
    // Nothing of that touched the cluster: chip 0 was not reset, the cable not pulled.
    assert_true(g_cluster->topology().links()[0].up);
    assert_responsive();
}

void test_random_bytes_and_json(void**) {
    std::mt19937 rng(1234);
    for (int i = 0; i < 200; ++i) {
        std::string line;
        const int len = rng() % 200;
        for (int k = 0; k < len; ++k) line += static_cast<char>(1 + rng() % 255);
        for (char& c : line)
            if (c == '\n') c = ' ';
        if (i % 2)
            line = "{\"cmd\": \"" + std::string(i % 4 ? "fault" : "link") +
                   "\", \"chip\": " + std::to_string(int64_t(rng()) - (1ll << 31)) +
                   ", \"port\": " + std::to_string(rng() % 9) + "}";
        const nlohmann::json reply = ask(line);
        if (!reply.is_object()) fail_msg("reply to request %d is not an object: %s", i, reply.dump().c_str());
        if (i % 10 == 0) assert_responsive();
    }
    // Random link commands may have pulled the one cable: put it back.
    g_cluster->set_fault(0, 1, {{"clear", true}});
    assert_responsive();
}

void test_huge_slow_and_deaf_clients(void**) {
    // A 1 MiB line without an end: dropped, not buffered without bound.
    const int huge = connect_raw();
    const std::string mib(1 << 20, 'x');
    send(huge, mib.data(), mib.size(), MSG_NOSIGNAL);
    assert_responsive();
    // A byte every 50 ms: the others are served meanwhile.
    const int slow = connect_raw();
    const std::string req = "{\"cmd\": \"info\"}";
    for (char c : req) {
        send(slow, &c, 1, MSG_NOSIGNAL);
        assert_responsive();
        std::this_thread::sleep_for(milliseconds(50));
    }
    // Asks for counters 5000 times and never reads a reply.
    const int deaf = connect_raw();
    const std::string many = [] {
        std::string s;
        for (int i = 0; i < 5000; ++i) s += "{\"cmd\": \"counters\"}\n";
        return s;
    }();
    send(deaf, many.data(), many.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    for (int i = 0; i < 10; ++i) {
        assert_responsive();
        std::this_thread::sleep_for(milliseconds(50));
    }
    close(huge);
    close(slow);
    close(deaf);
    // The cluster still works.
    auto r = g_cluster->run({reloc_probe(g_cluster->board(), 0, 5)}, milliseconds(5000));
    assert_int_equal(r[0].return_code, 1321);
}

// Another local user: cannot enter the run directory, and even with the
// directory and socket opened up (a careless chmod), is refused by uid.
void test_another_user_is_refused(void**) {
    if (geteuid() != 0) {
        fprintf(stderr, "skipped: creating a second user's process needs root\n");
        return;
    }
    const std::string dir = g_cluster->run_dir(), sock = paths::control_socket(dir);
    auto as_nobody = [&](auto body) {
        int pipefd[2];
        assert_int_equal(pipe(pipefd), 0);
        const pid_t child = fork();
        if (child == 0) {
            close(pipefd[0]);
            std::string out = "cannot become nobody";
            if (setgid(65534) == 0 && setuid(65534) == 0) out = body();
            if (write(pipefd[1], out.data(), out.size()) < 0) _exit(2);
            _exit(0);
        }
        close(pipefd[1]);
        char buf[512];
        const ssize_t n = read(pipefd[0], buf, sizeof buf);
        close(pipefd[0]);
        waitpid(child, nullptr, 0);
        return std::string(buf, n > 0 ? size_t(n) : 0);
    };
    const std::string entered = as_nobody([&] {
        return std::string(access((dir + "/bridge.log").c_str(), R_OK) == 0 ? "read the log" : strerror(errno));
    });
    if (!contains(entered, "Permission denied")) fail_msg("nobody in the run dir: %s", entered.c_str());
    chmod(dir.c_str(), 0711);
    chmod(sock.c_str(), 0666);
    const std::string answer = as_nobody([&]() -> std::string {
        try {
            ControlClient c(dir);
            // Let the bridge refuse and close first: the reason must still
            // reach a client whose request then cannot be sent.
            std::this_thread::sleep_for(milliseconds(200));
            return c.request({{"cmd", "info"}}).dump();
        } catch (const std::exception& e) {
            return e.what();
        }
    });
    chmod(sock.c_str(), 0600);
    chmod(dir.c_str(), 0700);
    if (!contains(answer, "belongs to uid 0, not to uid 65534")) fail_msg("nobody on the socket: %s", answer.c_str());
    assert_responsive();
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_requests_are_refused_by_name),
        cmocka_unit_test(test_random_bytes_and_json),
        cmocka_unit_test(test_huge_slow_and_deaf_clients),
        cmocka_unit_test(test_another_user_is_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
