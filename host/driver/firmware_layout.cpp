#include "driver/firmware_layout.h"
#include "driver/elf_file.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>

#include <sstream>

#include "common/error.h"
#include "common/fnv1a.h"
#include "common/hex.h"
#include "weft/abi/control_protocol.h"
#include "weft/abi/layout_record.h"

namespace weft {
namespace {

// The chip's layout as text, one value after another: what changes it changes
// the hash. The board's ports are left out: firmware finds where they face at
// run time, so boards of one chip share its firmware.
std::string describe(const BoardInfo& b) {
    std::ostringstream o;
    auto region = [&](const char* name, const Region& r) { o << name << '=' << r.base << '+' << r.size << ';'; };
    o << "chip=" << b.chip << ";isa=" << b.isa << ";abi=" << b.abi << ';';
    region("ram", b.ram);
    region("boot", b.boot_firmware);
    region("control", b.control_block);
    region("dram", b.dram);
    o << "timebase=" << b.timebase_hz << ";code=" << b.code_size << ";stack=" << b.stack_size << ";args=" << b.args_size
      << ';';
    if (b.qemu) {
        region("qemu-reserved", b.qemu->reserved);
        o << "uart=" << b.qemu->uart << ";uart-irq=" << b.qemu->uart_irq << ";plic=" << b.qemu->plic
          << ";clint=" << b.qemu->clint << ";test-device=" << b.qemu->test_device << ';';
    }
    for (const CoreInfo& c : b.cores) {
        o << "core" << c.id << '=' << role_name(c.role) << ',' << c.port << ',';
        region("l1", c.l1);
    }
    return o.str();
}

std::string describe_layout(const std::string& chip, uint64_t hash, uint32_t abi) {
    return "chip '" + chip + "', layout " + hex(hash) + ", ABI v" + std::to_string(abi);
}

}  // namespace

uint64_t layout_hash(const BoardInfo& board) { return fnv1a(describe(board)); }

std::string section_bytes(const std::string& path, const char* name) {
    auto fail = [&](const std::string& msg) { return Error("firmware " + path + ": " + msg); };
    if (elf_version(EV_CURRENT) == EV_NONE) throw fail("libelf is unusable");
    ElfFile f;
    f.fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (f.fd < 0) throw fail(std::string("cannot open: ") + strerror(errno) + " (was it built? run 'make')");
    f.elf = elf_begin(f.fd, ELF_C_READ, nullptr);
    size_t names = 0;
    if (!f.elf || elf_kind(f.elf) != ELF_K_ELF || elf_getshdrstrndx(f.elf, &names) != 0) throw fail("not an ELF file");
    for (Elf_Scn* scn = elf_nextscn(f.elf, nullptr); scn; scn = elf_nextscn(f.elf, scn)) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh)) continue;
        const char* n = elf_strptr(f.elf, names, sh.sh_name);
        if (!n || strcmp(n, name) != 0) continue;
        Elf_Data* d = elf_getdata(scn, nullptr);
        if (!d || !d->d_buf) throw fail(std::string("section ") + name + " is empty");
        return std::string(static_cast<const char*>(d->d_buf), d->d_size);
    }
    return "";
}

FirmwareLayout read_firmware_layout(const std::string& path) {
    const std::string bytes = section_bytes(path, ".weft_layout");
    abi::LayoutRecord rec{};
    if (bytes.size() != sizeof rec)
        throw Error("firmware " + path +
                    " has no layout record (section .weft_layout): built before weft recorded "
                    "layouts, or not weft firmware; rebuild it ('make')");
    memcpy(&rec, bytes.data(), sizeof rec);
    if (rec.magic != abi::kLayoutMagic || memchr(rec.chip, 0, sizeof rec.chip) == nullptr)
        throw Error("firmware " + path + ": its layout record (section .weft_layout) is garbled");
    return FirmwareLayout{rec.chip, rec.layout_hash, rec.abi_version};
}

void check_firmware_layout(const BoardInfo& board, const std::string& dtb_path, const std::string& elf_path) {
    const FirmwareLayout fw = read_firmware_layout(elf_path);
    const uint64_t hash = layout_hash(board);
    if (fw.chip == board.chip && fw.hash == hash && fw.abi_version == abi::kAbiVersion) return;
    throw Error("firmware " + elf_path + " was built for " + describe_layout(fw.chip, fw.hash, fw.abi_version) +
                ", but " + dtb_path + " is board '" + board.name + "' of " +
                describe_layout(board.chip, hash, abi::kAbiVersion) +
                ": the firmware does not fit this board; rebuild it ('make')");
}

}  // namespace weft
