// net::LineReader: lines out of large reads, what follows a line kept for
// the next, descriptors passed with a line handed over, EOF and timeouts.
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include <string>
#include <vector>

#include "common/error.h"
#include "common/unix_socket.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

namespace {

struct Pair {
    int a = -1, b = -1;
    Pair() { assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, &a), 0); }
    ~Pair() {
        if (a >= 0) close(a);
        if (b >= 0) close(b);
    }
};

void write_all(int fd, const std::string& s) { assert_int_equal(write(fd, s.data(), s.size()), ssize_t(s.size())); }

void test_two_lines_in_one_write_come_out_one_by_one(void**) {
    Pair p;
    write_all(p.a, "first\nsecond\nthi");
    weft::net::LineReader r;
    std::string line;
    assert_true(r.read(p.b, &line, nullptr, 1000));
    assert_string_equal(line.c_str(), "first");
    assert_true(r.read(p.b, &line, nullptr, 1000));
    assert_string_equal(line.c_str(), "second");
    write_all(p.a, "rd\n");
    assert_true(r.read(p.b, &line, nullptr, 1000));
    assert_string_equal(line.c_str(), "third");
}

void test_a_line_longer_than_one_read(void**) {
    Pair p;
    const std::string big(200000, 'x');
    std::string line;
    weft::net::LineReader r;
    // The writer blocks once the socket is full: the reader drains it meanwhile.
    const pid_t writer = fork();
    assert_true(writer >= 0);
    if (writer == 0) {
        write_all(p.a, big + "\n");
        _exit(0);
    }
    assert_true(r.read(p.b, &line, nullptr, 5000));
    waitpid(writer, nullptr, 0);
    assert_int_equal(line.size(), big.size());
    assert_true(line == big);
}

void test_descriptors_come_with_their_line(void**) {
    Pair p;
    const int passed = open("/dev/null", O_RDONLY | O_CLOEXEC);
    weft::net::send_line(p.a, "here", {passed});
    close(passed);
    weft::net::LineReader r;
    std::string line;
    std::vector<int> fds;
    assert_true(r.read(p.b, &line, &fds, 1000));
    assert_string_equal(line.c_str(), "here");
    assert_int_equal(fds.size(), 1);
    assert_true(fcntl(fds[0], F_GETFD) >= 0);
    close(fds[0]);
}

void test_eof_ends_the_last_line_and_then_reads_false(void**) {
    Pair p;
    write_all(p.a, "tail");
    close(p.a);
    p.a = -1;
    weft::net::LineReader r;
    std::string line;
    assert_true(r.read(p.b, &line, nullptr, 1000));
    assert_string_equal(line.c_str(), "tail");
    assert_false(r.read(p.b, &line, nullptr, 1000));
}

void test_silence_times_out_naming_the_wait(void**) {
    Pair p;
    weft::net::LineReader r;
    std::string line;
    try {
        r.read(p.b, &line, nullptr, 20);
        fail_msg("a silent socket did not time out");
    } catch (const weft::TimeoutError& e) {
        assert_non_null(strstr(e.what(), "within 20 ms"));
    }
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_lines_in_one_write_come_out_one_by_one),
        cmocka_unit_test(test_a_line_longer_than_one_read),
        cmocka_unit_test(test_descriptors_come_with_their_line),
        cmocka_unit_test(test_eof_ends_the_last_line_and_then_reads_false),
        cmocka_unit_test(test_silence_times_out_naming_the_wait),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
