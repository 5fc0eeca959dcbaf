// A cluster reads the one board it names from the build (paths::load_built_board):
// a broken DTB of another board stops nothing, and a missing or broken board
// of its own is an error naming that board. The build tree is one made up
// here, with the real qemu-virt DTB beside a broken one.
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "common/error.h"
#include "driver/cluster_file.h"
#include "driver/paths.h"

// cmocka last: its fail() macro would clash with the C++ headers.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

using namespace weft;
namespace fs = std::filesystem;

namespace {

struct FakeBuild {
    fs::path root = fs::temp_directory_path() / ("weft-test-built-boards-" + std::to_string(getpid()));
    std::string real_build = getenv("WEFT_BUILD_DIR");

    FakeBuild() {
        fs::create_directories(root / "boards" / "qemu-virt");
        fs::create_directories(root / "boards" / "broken");
        fs::create_directories(root / "firmware");
        fs::copy_file(real_build + "/boards/qemu-virt/board.dtb", root / "boards" / "qemu-virt" / "board.dtb");
        std::ofstream(root / "boards" / "broken" / "board.dtb") << "not a devicetree";
        setenv("WEFT_BUILD_DIR", root.c_str(), 1);
    }
    ~FakeBuild() {
        setenv("WEFT_BUILD_DIR", real_build.c_str(), 1);
        fs::remove_all(root);
    }
};

std::string cluster(const char* board) {
    return std::string("name: t\nboard: ") + board + "\nmeshes:\n  - {id: 0, shape: [2, 1], topology: line}\n";
}

std::string error_of(const std::string& yaml) {
    try {
        parse_cluster(yaml, "t.yaml", paths::load_built_board);
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

void expect_in(const std::string& text, const char* part) {
    if (text.find(part) == std::string::npos) fail_msg("expected '%s' in: %s", part, text.c_str());
}

void test_other_boards_broken_dtb_is_not_read(void**) {
    FakeBuild build;
    ClusterSpec s = parse_cluster(cluster("qemu-virt"), "t.yaml", paths::load_built_board);
    assert_string_equal(s.board.name.c_str(), "qemu-virt");
    assert_int_equal(s.board.cores.size(), 8);
}

void test_own_broken_dtb_is_named(void**) {
    FakeBuild build;
    const std::string e = error_of(cluster("broken"));
    expect_in(e, "t.yaml:2: board 'broken': ");
    expect_in(e, "boards/broken/board.dtb");
    expect_in(e, "not a valid flattened devicetree");
}

void test_unknown_board_lists_the_built_ones(void**) {
    FakeBuild build;
    expect_in(error_of(cluster("nope")), "t.yaml:2: unknown board 'nope' (known boards: broken, qemu-virt)");
}

// A DTB in another board's folder is not that board (its firmware would not fit it).
void test_dtb_must_describe_its_folders_board(void**) {
    FakeBuild build;
    fs::create_directories(build.root / "boards" / "copy");
    fs::copy_file(build.root / "boards" / "qemu-virt" / "board.dtb", build.root / "boards" / "copy" / "board.dtb");
    expect_in(error_of(cluster("copy")), "board 'copy': ");
    expect_in(error_of(cluster("copy")), "describes board 'qemu-virt'");
}

}  // namespace

int main() {
    if (!getenv("WEFT_BUILD_DIR")) {
        fprintf(stderr, "WEFT_BUILD_DIR must be set\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_other_boards_broken_dtb_is_not_read),
        cmocka_unit_test(test_own_broken_dtb_is_named),
        cmocka_unit_test(test_unknown_board_lists_the_built_ones),
        cmocka_unit_test(test_dtb_must_describe_its_folders_board),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
