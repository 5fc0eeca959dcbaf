// Firmware and board DTB must agree on the layout (driver/firmware_layout.h):
// the built images carry their board's layout record, and a board whose DTB
// differs from what the firmware was built for is refused, the message
// naming both.
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" {
#include <libfdt.h>
}

#include "common/error.h"
#include "driver/board.h"
#include "driver/firmware_layout.h"
#include "driver/kernel_image.h"

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

std::string build() { return getenv("WEFT_BUILD_DIR") ? getenv("WEFT_BUILD_DIR") : "."; }
std::string dtb(const char* board) { return build() + "/boards/" + board + "/board.dtb"; }
std::string boot_elf(const char* board) { return build() + "/firmware/" + board + "/boot.elf"; }

std::string error_of(const BoardInfo& board, const std::string& dtb_path, const std::string& elf) {
    try {
        check_firmware_layout(board, dtb_path, elf);
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

void expect_in(const std::string& text, const std::string& part) {
    if (text.find(part) == std::string::npos) fail_msg("expected '%s' in: %s", part.c_str(), text.c_str());
}

// The qemu-virt DTB with its code area changed: a board edited after its firmware was built.
BoardInfo edited_qemu_virt() {
    std::ifstream in(dtb("qemu-virt"), std::ios::binary);
    std::vector<char> b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    b.resize(b.size() + 1024);
    assert_int_equal(fdt_open_into(b.data(), b.data(), static_cast<int>(b.size())), 0);
    const int chip = fdt_path_offset(b.data(), "/chip");
    assert_int_equal(fdt_setprop_u32(b.data(), chip, "code-size", 0x8000), 0);
    return parse_board(b.data(), b.size());
}

void test_every_built_board_matches_its_firmware(void**) {
    for (const char* board : {"qemu-virt", "qemu-virt-2plane", "qemu-virt32"}) {
        const BoardInfo b = load_board(dtb(board));
        assert_string_equal(error_of(b, dtb(board), boot_elf(board)).c_str(), "");
        const FirmwareLayout fw = read_firmware_layout(boot_elf(board));
        assert_string_equal(fw.chip.c_str(), b.chip.c_str());
        assert_true(fw.hash == layout_hash(b));
        // Kernels carry the same record as the boot firmware.
        const KernelImage k = load_kernel_image(build() + "/firmware/" + board + "/kernels/edm.elf");
        assert_true(k.layout.hash == fw.hash);
    }
}

// The build compiles a chip once: its boards' firmware is one set of files.
void test_boards_of_one_chip_share_its_firmware(void**) {
    const BoardInfo one = load_board(dtb("qemu-virt"));
    const BoardInfo two = load_board(dtb("qemu-virt-2plane"));
    assert_string_equal(one.chip.c_str(), two.chip.c_str());
    assert_true(layout_hash(one) == layout_hash(two));  // the ports differ; the chip does not
    assert_true(fs::equivalent(boot_elf("qemu-virt"), boot_elf("qemu-virt-2plane")));
    assert_string_equal(error_of(two, dtb("qemu-virt-2plane"), boot_elf("qemu-virt")).c_str(), "");
}

void test_edited_board_is_refused_naming_both(void**) {
    const BoardInfo edited = edited_qemu_virt();
    const uint64_t built = layout_hash(load_board(dtb("qemu-virt")));
    assert_true(layout_hash(edited) != built);
    const std::string e = error_of(edited, dtb("qemu-virt"), boot_elf("qemu-virt"));
    expect_in(e, "firmware " + boot_elf("qemu-virt") + " was built for chip 'qemu-virt'");
    expect_in(e, "but " + dtb("qemu-virt") + " is board 'qemu-virt' of chip 'qemu-virt'");
    char hashes[64];
    snprintf(hashes, sizeof hashes, "layout 0x%llx", static_cast<unsigned long long>(built));
    expect_in(e, hashes);
    snprintf(hashes, sizeof hashes, "layout 0x%llx", static_cast<unsigned long long>(layout_hash(edited)));
    expect_in(e, hashes);
}

void test_other_chips_firmware_is_refused(void**) {
    const BoardInfo b32 = load_board(dtb("qemu-virt32"));
    const std::string e = error_of(b32, dtb("qemu-virt32"), boot_elf("qemu-virt"));
    expect_in(e, "was built for chip 'qemu-virt'");
    expect_in(e, "is board 'qemu-virt32' of chip 'qemu-virt32'");
}

void test_image_without_record_is_refused(void**) {
    const std::string host_binary = build() + "/bin/weft-board-header";
    bool threw = false;
    try {
        read_firmware_layout(host_binary);
    } catch (const Error& e) {
        threw = true;
        expect_in(e.what(), host_binary + " has no layout record");
    }
    assert_true(threw);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_built_board_matches_its_firmware),
        cmocka_unit_test(test_boards_of_one_chip_share_its_firmware),
        cmocka_unit_test(test_edited_board_is_refused_naming_both),
        cmocka_unit_test(test_other_chips_firmware_is_refused),
        cmocka_unit_test(test_image_without_record_is_refused),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
