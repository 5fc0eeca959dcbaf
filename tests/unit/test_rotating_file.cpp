// events.log's size limit: past it the file moves to PATH.1 and starts again,
// so the log holds at most two limits and always the latest lines; a link
// planted at the path is refused, not followed.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "bridge/rotating_file.h"
#include "common/error.h"

// cmocka last: its fail() macro would clash with the C++ headers.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

using namespace weft;

namespace {

std::string read_all(const std::string& path) {
    std::ifstream in(path);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void test_rotates_at_the_limit(void**) {
    const std::string dir = "/tmp/weft-test-rotating-" + std::to_string(getpid()), path = dir + "/events.log";
    std::filesystem::create_directories(dir);
    {
        RotatingFile f(path, 100);
        for (int i = 0; i < 25; ++i) f.append("line " + std::to_string(i + 10) + "\n");  // 8 bytes each
    }
    struct stat st {};
    assert_int_equal(stat(path.c_str(), &st), 0);
    assert_true(st.st_size <= 100);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_true(std::filesystem::file_size(path + ".1") <= 100);
    const std::string now = read_all(path), before = read_all(path + ".1");
    // 12 lines fit in 100 bytes: 10..21 went first, 22..33 are the older file, 34 the new one.
    assert_string_equal(now.c_str(), "line 34\n");
    assert_int_equal(before.size(), 96);
    assert_int_equal(before.find("line 22\n"), 0);
    assert_int_equal(before.rfind("line 33\n"), 88);
    // Reopened, it goes on from the size it has.
    {
        RotatingFile f(path, 100);
        for (int i = 0; i < 5; ++i) f.append("more " + std::to_string(i) + "\n");
    }
    assert_true(std::filesystem::file_size(path) <= 100);
    std::filesystem::remove_all(dir);
}

void test_a_planted_link_is_refused(void**) {
    const std::string dir = "/tmp/weft-test-rotating-link-" + std::to_string(getpid()), path = dir + "/events.log";
    std::filesystem::create_directories(dir);
    symlink("/tmp/weft-victim-file", path.c_str());
    std::string error;
    try {
        RotatingFile f(path, 100);
    } catch (const Error& e) {
        error = e.what();
    }
    assert_true(error.find(path) != std::string::npos);
    assert_false(std::filesystem::exists("/tmp/weft-victim-file"));
    std::filesystem::remove_all(dir);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rotates_at_the_limit),
        cmocka_unit_test(test_a_planted_link_is_refused),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
