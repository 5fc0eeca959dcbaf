// Reading the board DTB with libfdt: the real qemu-virt board, and broken
// variants of it made with libfdt's read-write API.

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" {
#include <libfdt.h>
}

#include "common/error.h"
#include "driver/board.h"
#include "driver/paths.h"
#include "weft/abi/control_block.h"

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

std::string dtb_path(const std::string& board = "qemu-virt") {
    return paths::build_root() + "/boards/" + board + "/board.dtb";
}

std::vector<char> blob(const std::string& board = "qemu-virt") {
    std::ifstream in(dtb_path(board), std::ios::binary);
    std::vector<char> b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    b.resize(b.size() + 4096);  // room for edits
    assert_int_equal(fdt_open_into(b.data(), b.data(), static_cast<int>(b.size())), 0);
    return b;
}

std::string error_of(const std::vector<char>& b) {
    try {
        parse_board(b.data(), b.size());
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

void test_qemu_virt_board(void**) {
    BoardInfo b = load_board(dtb_path());
    assert_string_equal(b.name.c_str(), "qemu-virt");
    assert_string_equal(b.chip.c_str(), "qemu-virt");
    assert_int_equal(b.ram.base, 0x80000000);
    assert_int_equal(b.cores.size(), 8);
    assert_int_equal(b.ports.size(), 4);
    assert_int_equal(b.planes(), 1);
    assert_int_equal(b.cores_with_role(CoreRole::kErisc).size(), 4);
    assert_int_equal(b.cores_with_role(CoreRole::kWorker).size(), 4);
    for (const PortInfo& p : b.ports) {
        assert_int_equal(b.cores[p.core].role, CoreRole::kErisc);
        assert_int_equal(b.cores[p.core].port, p.id);
    }
    assert_int_equal(b.port_for(abi::kFabricEast, 0), 1);
    assert_int_equal(b.port_for(abi::kFabricWest, 0), 3);
    assert_int_equal(b.port_for(abi::kFabricEast, 1), -1);
    assert_true(b.control_block.size >= sizeof(abi::ChipControlBlock));
    // L1 free space sits between the code area and the argument block.
    Region free = b.l1_free(4);
    assert_int_equal(free.base, b.cores[4].l1.base + b.code_size);
    assert_int_equal(free.end(), b.args_base(4));
    assert_int_equal(b.stack_top(4), b.cores[4].l1.end());
    assert_true(b.qemu.has_value());
    assert_int_equal(b.qemu->reserved.end(), b.ram.end());
    assert_int_equal(b.qemu->uart_irq, 10);
}

void test_missing_property_is_named(void**) {
    auto b = blob();
    int chip = fdt_path_offset(b.data(), "/chip");
    assert_int_equal(fdt_delprop(b.data(), chip, "dram"), 0);
    std::string e = error_of(b);
    assert_non_null(strstr(e.c_str(), "/chip"));
    assert_non_null(strstr(e.c_str(), "missing property 'dram'"));
}

void test_overlap_is_refused(void**) {
    auto b = blob();
    int chip = fdt_path_offset(b.data(), "/chip");
    fdt32_t cells[4] = {cpu_to_fdt32(0), cpu_to_fdt32(0x80040000), cpu_to_fdt32(0), cpu_to_fdt32(0x100000)};
    assert_int_equal(fdt_setprop(b.data(), chip, "dram", cells, sizeof cells), 0);
    assert_non_null(strstr(error_of(b).c_str(), "overlaps"));
}

void test_bad_role_and_port(void**) {
    auto b = blob();
    int core = fdt_path_offset(b.data(), "/chip/cores/core@5");
    assert_int_equal(fdt_setprop_string(b.data(), core, "role", "dsp"), 0);
    std::string e = error_of(b);
    assert_non_null(strstr(e.c_str(), "/chip/cores/core@5"));
    assert_non_null(strstr(e.c_str(), "unknown role 'dsp'"));

    auto c = blob();
    int port = fdt_path_offset(c.data(), "/chip/ports/port@2");
    assert_int_equal(fdt_setprop_u32(c.data(), port, "core", 5), 0);
    assert_non_null(strstr(error_of(c).c_str(), "is not the ERISC core of this port"));
}

// The build takes the HAL of the chip weft,chip names; a board that includes
// another chip's devicetree would run that HAL on the wrong chip.
void test_chip_must_match_its_include(void**) {
    auto b = blob();
    assert_int_equal(fdt_setprop_string(b.data(), 0, "weft,chip", "other-chip"), 0);
    std::string e = error_of(b);
    assert_non_null(strstr(e.c_str(), "names chip 'other-chip'"));
    assert_non_null(strstr(e.c_str(), "includes chip 'weft,qemu-virt'"));
}

// A chip on silicon has no QEMU machine: the board need not invent one.
void test_qemu_machine_is_optional(void**) {
    auto b = blob();
    int node = fdt_path_offset(b.data(), "/chip/qemu-machine");
    assert_true(node >= 0);
    assert_int_equal(fdt_del_node(b.data(), node), 0);
    BoardInfo info = parse_board(b.data(), b.size());
    assert_false(info.qemu.has_value());
    assert_int_equal(info.cores.size(), 8);

    auto c = blob();  // but a QEMU machine comes whole
    node = fdt_path_offset(c.data(), "/chip/qemu-machine");
    assert_int_equal(fdt_delprop(c.data(), node, "clint"), 0);
    std::string e = error_of(c);
    assert_non_null(strstr(e.c_str(), "/chip/qemu-machine"));
    assert_non_null(strstr(e.c_str(), "missing property 'clint'"));
}

// The second chip: RV32, its own memory map, cores and ports, its own QEMU.
void test_qemu_virt32_board(void**) {
    BoardInfo b = load_board(dtb_path("qemu-virt32"));
    assert_string_equal(b.chip.c_str(), "qemu-virt32");
    assert_string_equal(b.isa.c_str(), "rv32imac");
    assert_string_equal(b.abi.c_str(), "ilp32");
    assert_int_equal(b.xlen(), 32);
    assert_int_equal(b.cores_with_role(CoreRole::kErisc).size(), 8);
    assert_int_equal(b.cores_with_role(CoreRole::kWorker).size(), 6);
    assert_int_equal(b.ports.size(), 8);
    assert_int_equal(b.planes(), 2);
    assert_int_equal(b.cores[0].l1.size, 0x180000);
    assert_true(b.ram.end() <= (uint64_t(1) << 32));
    assert_string_equal(b.qemu->program.c_str(), "qemu-system-riscv32");
    assert_int_equal(load_board(dtb_path()).xlen(), 64);
}

// An RV32 chip cannot address RAM beyond 4 GiB; an ISA that is neither is refused.
void test_rv32_ram_must_fit_4gib(void**) {
    auto b = blob("qemu-virt32");
    const int chip = fdt_path_offset(b.data(), "/chip");
    const uint32_t ram[4] = {cpu_to_fdt32(0), cpu_to_fdt32(0x80000000u), cpu_to_fdt32(1), cpu_to_fdt32(0)};
    assert_int_equal(fdt_setprop(b.data(), chip, "ram", ram, sizeof ram), 0);
    assert_non_null(strstr(error_of(b).c_str(), "beyond the 4 GiB an RV32 core (isa rv32imac) can address"));
    auto c = blob();
    assert_int_equal(fdt_setprop_string(c.data(), fdt_path_offset(c.data(), "/chip"), "isa", "x86_64"), 0);
    assert_non_null(strstr(error_of(c).c_str(), "isa 'x86_64' is not an RV32 or RV64 ISA string"));
}

void test_not_a_dtb(void**) {
    std::vector<char> junk(256, 'x');
    assert_non_null(strstr(error_of(junk).c_str(), "not a valid flattened devicetree"));
    bool threw = false;
    try {
        load_board("/nonexistent.dtb");
    } catch (const Error& e) {
        threw = strstr(e.what(), "cannot open board DTB") != nullptr;
    }
    assert_true(threw);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_qemu_virt_board),
        cmocka_unit_test(test_missing_property_is_named),
        cmocka_unit_test(test_overlap_is_refused),
        cmocka_unit_test(test_bad_role_and_port),
        cmocka_unit_test(test_chip_must_match_its_include),
        cmocka_unit_test(test_qemu_machine_is_optional),
        cmocka_unit_test(test_qemu_virt32_board),
        cmocka_unit_test(test_rv32_ram_must_fit_4gib),
        cmocka_unit_test(test_not_a_dtb),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
