// The run directory's checks (host/driver/run_dir.cpp): only a private
// directory of the user's own is used, and a link planted in it never
// redirects a write.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/error.h"
#include "driver/run_dir.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

using namespace weft;

namespace {

std::string g_base;

int setup(void**) {
    char tmpl[] = "/tmp/weft-run-dir-test-XXXXXX";
    if (!mkdtemp(tmpl)) return -1;
    g_base = tmpl;
    return 0;
}
int teardown(void**) {
    std::filesystem::remove_all(g_base);
    return 0;
}

std::string error_of(const std::string& dir) {
    try {
        run_dir::prepare(dir);
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

void test_a_new_directory_is_private(void**) {
    const std::string dir = g_base + "/fresh";
    assert_true(run_dir::prepare(dir));
    struct stat st;
    assert_int_equal(lstat(dir.c_str(), &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    assert_false(run_dir::prepare(dir));  // the second time it is only checked
}

void test_an_open_directory_is_refused(void**) {
    const std::string dir = g_base + "/open";
    assert_int_equal(mkdir(dir.c_str(), 0700), 0);
    chmod(dir.c_str(), 0755);
    assert_non_null(strstr(error_of(dir).c_str(), "its mode is 0755, open to others (chmod 700"));
}

void test_a_link_is_refused(void**) {
    const std::string target = g_base + "/target", link = g_base + "/link";
    assert_int_equal(mkdir(target.c_str(), 0700), 0);
    assert_int_equal(symlink(target.c_str(), link.c_str()), 0);
    assert_non_null(strstr(error_of(link).c_str(), "it is a symbolic link"));
    const std::string file = g_base + "/file";
    std::ofstream(file) << "x";
    assert_non_null(strstr(error_of(file).c_str(), "it is not a directory"));
}

void test_another_users_directory_is_refused(void**) {
    if (geteuid() != 0) {
        print_message("skipped: only root can give a directory to another user here\n");
        return;
    }
    const std::string dir = g_base + "/theirs";
    assert_int_equal(mkdir(dir.c_str(), 0700), 0);
    assert_int_equal(chown(dir.c_str(), 65534, 65534), 0);
    assert_non_null(strstr(error_of(dir).c_str(), "it belongs to uid 65534, not to you"));
}

void test_a_planted_link_is_not_followed(void**) {
    // Another user plants chip0.console -> a file of the victim's; the bridge
    // must not truncate the target.
    const std::string victim = g_base + "/victim", planted = g_base + "/chip0.console";
    std::ofstream(victim) << "precious";
    assert_int_equal(symlink(victim.c_str(), planted.c_str()), 0);
    std::string error;
    try {
        close(run_dir::open_log(planted));
    } catch (const Error& e) {
        error = e.what();
    }
    assert_non_null(strstr(error.c_str(), "it is a symbolic link"));
    std::ifstream in(victim);
    std::string kept;
    in >> kept;
    assert_string_equal(kept.c_str(), "precious");
    const int fd = run_dir::open_log(g_base + "/bridge.log");
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    close(fd);
}

// One bridge per run directory: the second one is refused and told whose
// the directory is; once the first lets go the directory is free again.
void test_one_bridge_per_run_directory(void**) {
    const std::string dir = g_base + "/locked";
    run_dir::prepare(dir);
    assert_int_equal(run_dir::holder(dir), 0);
    const int fd = run_dir::take_lock(dir);
    run_dir::write_holder(fd, 4242);
    assert_int_equal(run_dir::holder(dir), 4242);
    std::string error;
    try {
        close(run_dir::take_lock(dir));
    } catch (const Error& e) {
        error = e.what();
    }
    assert_non_null(strstr(error.c_str(), "a cluster is already up (or starting) in"));
    assert_non_null(strstr(error.c_str(), "weft-bridge pid 4242"));
    close(fd);
    assert_int_equal(run_dir::holder(dir), 0);
    close(run_dir::take_lock(dir));
}

// Temporary clusters' directories are removed once their process is gone and
// no bridge holds them; never one whose process lives or whose lock is held.
void test_stale_temporaries_are_removed(void**) {
    const std::string base = g_base + "/weft";
    pid_t dead = fork();
    if (dead == 0) _exit(0);
    waitpid(dead, nullptr, 0);
    const std::string gone = run_dir::temporary(base, dead), mine = run_dir::temporary(base, getpid()),
                      held = run_dir::temporary(base, dead + 1000000);
    for (const std::string& d : {gone, mine, held}) run_dir::prepare(d);
    const int fd = run_dir::take_lock(held);
    run_dir::write_holder(fd, getpid());  // as a bridge does: the lock names its holder
    const std::vector<std::string> removed = run_dir::remove_stale_temporaries(base);
    assert_int_equal(removed.size(), 1);
    assert_string_equal(removed[0].c_str(), gone.c_str());
    struct stat st {};
    assert_int_not_equal(stat(gone.c_str(), &st), 0);
    assert_int_equal(stat(mine.c_str(), &st), 0);
    assert_int_equal(stat(held.c_str(), &st), 0);
    close(fd);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_new_directory_is_private),
        cmocka_unit_test(test_stale_temporaries_are_removed),
        cmocka_unit_test(test_an_open_directory_is_refused),
        cmocka_unit_test(test_a_link_is_refused),
        cmocka_unit_test(test_another_users_directory_is_refused),
        cmocka_unit_test(test_a_planted_link_is_not_followed),
        cmocka_unit_test(test_one_bridge_per_run_directory),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
