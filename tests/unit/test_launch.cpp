// The launch mailbox protocol, both halves: libweft's Chip (host side, over a
// memfd like the bridge hands out) and the boot firmware's launch_protocol.h
// (hart side), plus the kernel loader's placement and relocation.

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "boot/launch_protocol.h"
#include "common/error.h"
#include "common/knobs.h"
#include "driver/chip.h"
#include "driver/kernel_image.h"
#include "driver/paths.h"
#include "weft/abi/fault.h"
#include "weft/abi/kernel_args.h"

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

std::string build_dir() { return paths::build_root(); }
std::string kernel_path(const char* name) { return build_dir() + "/firmware/qemu-virt/test-kernels/" + name + ".elf"; }

struct Fixture {
    BoardInfo board = load_board(build_dir() + "/boards/qemu-virt/board.dtb");
    int memfd = -1;
    abi::ChipControlBlock* cb = nullptr;
    std::unique_ptr<Chip> chip;
    uint32_t core = 4;

    Fixture() {
        memfd = memfd_create("test-chip", MFD_CLOEXEC);
        assert_int_equal(ftruncate(memfd, board.ram.size), 0);
        void* p = mmap(nullptr, board.ram.size, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
        assert_true(p != MAP_FAILED);
        cb = reinterpret_cast<abi::ChipControlBlock*>(static_cast<uint8_t*>(p) +
                                                      (board.control_block.base - board.ram.base));
        cb->host.magic = abi::kControlMagic;
        cb->host.abi_version = abi::kAbiVersion;
        boot::post_ready(cb->host.launch[core], cb->hart[core]);
        chip = std::make_unique<Chip>(0, board, dup(memfd));
    }
    ~Fixture() {
        munmap(reinterpret_cast<uint8_t*>(cb) - (board.control_block.base - board.ram.base), board.ram.size);
        close(memfd);
    }
};

void test_launch_done_roundtrip(void**) {
    Fixture f;
    KernelImage img = load_kernel_image(kernel_path("wait_sem"));
    LoadedKernel k = f.chip->load(f.core, img);
    assert_int_equal(k.base, f.board.cores[f.core].l1.base);
    assert_int_equal(k.entry, k.base + img.entry);
    assert_true(k.new_code);
    assert_memory_equal(f.chip->host_ptr(k.base, img.bytes.size()), img.relocated(k.base).data(), img.bytes.size());

    abi::HartStatus& st = f.cb->hart[f.core];
    const abi::LaunchRequest& req = f.cb->host.launch[f.core];
    assert_false(boot::launch_pending(req, st));
    uint32_t seq = f.chip->launch(k, {11, 22, 33});
    assert_true(boot::launch_pending(req, st));
    assert_int_equal(req.entry, k.entry);
    assert_int_equal(req.arg_count, 3);
    assert_int_equal(req.args, f.board.args_base(f.core));
    assert_int_equal(f.chip->read32(req.args + 8), 33);
    assert_int_equal(req.flags & abi::kLaunchNewCode, abi::kLaunchNewCode);

    boot::Snapshot s = boot::begin_launch(req, st);
    assert_int_equal(s.seq, seq);
    assert_int_equal(st.state, abi::kHartRunning);
    assert_false(f.chip->finished(f.core, seq));
    // A running core takes no new kernel.
    bool refused = false;
    try {
        f.chip->load(f.core, img);
    } catch (const Error& e) {
        refused = std::string(e.what()).find("still running") != std::string::npos;
    }
    assert_true(refused);

    boot::post_done(st, s.seq, 7, 1234, 56);
    assert_true(f.chip->finished(f.core, seq));
    KernelResult r = f.chip->result(f.core);
    assert_int_equal(r.return_code, 7);
    assert_int_equal(r.cycles, 1234);
    assert_int_equal(r.ticks, 56);

    // Same image again: no new code, so the hart keeps its translations.
    LoadedKernel again = f.chip->load(f.core, img);
    assert_false(again.new_code);
    uint32_t seq2 = f.chip->launch(again, {});
    assert_int_equal(seq2, seq + 1);
    assert_int_equal(req.flags & abi::kLaunchNewCode, 0);
    LoadedKernel other = f.chip->load(f.core, load_kernel_image(kernel_path("fault")));
    assert_true(other.new_code);
}

void test_reboot_ignores_stale_launch(void**) {
    Fixture f;
    LoadedKernel k = f.chip->load(f.core, load_kernel_image(kernel_path("wait_sem")));
    f.chip->launch(k, {});
    abi::HartStatus& st = f.cb->hart[f.core];
    boot::post_ready(f.cb->host.launch[f.core], st);  // the hart rebooted
    assert_false(boot::launch_pending(f.cb->host.launch[f.core], st));
    assert_int_equal(st.boot_count, 2);
}

void test_fault_is_described(void**) {
    Fixture f;
    LoadedKernel k = f.chip->load(f.core, load_kernel_image(kernel_path("fault")));
    uint32_t seq = f.chip->launch(k, {0});
    abi::HartStatus& st = f.cb->hart[f.core];
    boot::begin_launch(f.cb->host.launch[f.core], st);
    boot::post_fault(st, 5, k.base + 0x22, 0x10, -1);
    assert_true(f.chip->finished(f.core, seq));
    std::string msg;
    try {
        f.chip->result(f.core);
    } catch (const FaultError& e) {
        msg = e.what();
    }
    assert_non_null(strstr(msg.c_str(), "chip 0 core 4 (worker) kernel 'fault' FAULT: load access fault"));
    assert_non_null(strstr(msg.c_str(), "(fault+0x22)"));
    assert_non_null(strstr(msg.c_str(), "mtval 0x10"));
}

void test_panic_is_decoded(void**) {
    Fixture f;
    LoadedKernel k = f.chip->load(f.core, load_kernel_image(kernel_path("fault")));
    f.chip->launch(k, {2});
    abi::HartStatus& st = f.cb->hart[f.core];
    boot::begin_launch(f.cb->host.launch[f.core], st);
    boot::post_fault(st, abi::kPanicCause, k.base + 0x40,
                     abi::ring_error_detail(abi::kRingEth, 1, abi::kRingLinkDown, 3), abi::kPanicRingError);
    std::string msg = f.chip->describe_fault(f.core);
    assert_non_null(strstr(msg.c_str(), "Ethernet port 1 refused command #3: link down"));
}

void test_launch_limits(void**) {
    Fixture f;
    KernelImage big = load_kernel_image(kernel_path("wait_sem"));
    big.bytes.resize(f.board.code_size + 8);
    bool refused = false;
    try {
        f.chip->load(f.core, big);
    } catch (const Error& e) {
        refused = strstr(e.what(), "does not fit") != nullptr;
    }
    assert_true(refused);

    LoadedKernel k = f.chip->load(f.core, load_kernel_image(kernel_path("wait_sem")));
    refused = false;
    try {
        f.chip->launch(k, std::vector<uint32_t>(f.board.args_size / 4 + 1));
    } catch (const Error& e) {
        refused = strstr(e.what(), "argument words exceed") != nullptr;
    }
    assert_true(refused);

    refused = false;
    try {
        f.chip->write(f.board.ram.end() - 4, "12345678", 8);
    } catch (const Error& e) {
        refused = strstr(e.what(), "outside its memory") != nullptr;
    }
    assert_true(refused);
}

void test_relocation_of_pointers(void**) {
    KernelImage img = load_kernel_image(kernel_path("reloc_probe"));
    // A pointer table (3), a vtable slot, an object pointer and .init_array.
    assert_true(img.abs64.size() >= 6);
    const uint64_t base = 0x80500000;
    std::vector<uint8_t> moved = img.relocated(base);
    for (uint64_t off : img.abs64) {
        uint64_t before, after;
        memcpy(&before, img.bytes.data() + off, 8);
        memcpy(&after, moved.data() + off, 8);
        assert_int_equal(after, before + base);
        assert_true(before < img.bytes.size());  // it pointed into the image
    }
    assert_true(img.code_size > 0 && img.entry < img.code_size);
}

void test_bad_kernel_files(void**) {
    auto message = [](const std::string& path) {
        try {
            load_kernel_image(path);
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    assert_non_null(strstr(message("/nonexistent/k.elf").c_str(), "cannot open"));
    const std::string src = knobs::text(knobs::knob("WEFT_SOURCE_DIR")) + "/tests/unit/test_launch.cpp";
    assert_non_null(strstr(message(src).c_str(), "not an ELF"));
    assert_non_null(strstr(message(build_dir() + "/bin/weft").c_str(), "not a RISC-V ELF"));
}

// The description adds up as the compiler lays the struct out; a bad one is 0.
static_assert(abi::described_args_size("sem:u64 value:u32 pad:u32") == 16);
static_assert(abi::described_args_size("a:u32 b:u64") == 16);  // b at 8
static_assert(abi::described_args_size("a:u32 b:u32 c:u32") == 12);
static_assert(abi::described_args_size("a:u16") == 0 && abi::described_args_size("a") == 0);

// A kernel's declared argument names, read from its ELF, fill its struct.
void test_named_arguments(void**) {
    const KernelImage img = load_kernel_image(kernel_path("wait_sem"));
    assert_int_equal(img.arg_fields.size(), 3);
    assert_string_equal(img.arg_fields[1].name.c_str(), "value");
    assert_int_equal(img.arg_fields[1].offset, 8);
    assert_int_equal(img.args_size, 16);
    const std::vector<uint32_t> w = named_argument_words(img, {{"value", 7}, {"sem", 0x123456789abull}, {"pad", 0}});
    assert_int_equal(w.size(), 4);
    assert_int_equal(w[0], 0x456789ab);
    assert_int_equal(w[1], 0x123);
    assert_int_equal(w[2], 7);
    auto refusal = [&](const std::vector<std::pair<std::string, uint64_t>>& v) {
        try {
            named_argument_words(img, v);
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    assert_non_null(strstr(refusal({{"value", 1ull << 32}, {"sem", 0}, {"pad", 0}}).c_str(), "is a u32"));
    assert_non_null(strstr(refusal({{"sem", 0}, {"sem", 0}}).c_str(), "given twice"));
    assert_non_null(strstr(refusal({{"sem", 0}}).c_str(), "missing: value (its arguments"));
    // The padding may be left out: it is 0.
    assert_int_equal(named_argument_words(img, {{"value", 7}, {"sem", 1}})[3], 0);
    const KernelImage none = load_kernel_image(kernel_path("reloc_probe"));
    assert_true(none.arg_fields.empty());
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_launch_done_roundtrip), cmocka_unit_test(test_reboot_ignores_stale_launch),
        cmocka_unit_test(test_fault_is_described),    cmocka_unit_test(test_panic_is_decoded),
        cmocka_unit_test(test_launch_limits),         cmocka_unit_test(test_relocation_of_pointers),
        cmocka_unit_test(test_bad_kernel_files),      cmocka_unit_test(test_named_arguments),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
