#include "driver/chip.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <sstream>

#include "common/error.h"
#include "common/hex.h"
#include "driver/paths.h"
#include "driver/symbolize.h"
#include "weft/abi/fault.h"

namespace weft {

std::string describe_panic(int32_t code, uint64_t detail) {
    switch (code) {
        case abi::kPanicRingError: {
            static const char* kinds[] = {"?", "NoC", "Ethernet", "math"};
            uint32_t kind = static_cast<uint32_t>(detail >> 56), ring = (detail >> 48) & 0xff;
            uint32_t err = (detail >> 32) & 0xffff, index = static_cast<uint32_t>(detail);
            std::ostringstream o;
            o << (kind < 4 ? kinds[kind] : "?") << (kind == abi::kRingEth ? " port " : " ring ") << ring
              << " refused command #" << index << ": " << ring_error_name(err);
            return o.str();
        }
        case abi::kPanicAssert: return "assertion failed at line " + std::to_string(detail);
        case abi::kPanicBadArgs: return "missing or bad runtime argument #" + std::to_string(detail);
        case abi::kPanicDeadline: return "firmware deadline passed waiting on " + hex(detail);
        case abi::kPanicStopped: return "stopped by the host (launch " + std::to_string(detail) + ")";
        case abi::kPanicEdmTimeout:
            return "EDM timeout: port " + std::to_string(detail >> 48) + " channel " +
                   std::to_string((detail >> 32) & 0xffff) + " could not move for " +
                   std::to_string(static_cast<uint32_t>(detail)) + " us: its cable is down (see events.log)";
    }
    return "panic code " + std::to_string(code);
}

const char* ring_error_name(uint32_t error) {
    static const char* names[] = {
        "ok", "address outside the chip", "unknown opcode", "bad length", "link down", "bad argument"};
    return error < sizeof(names) / sizeof(names[0]) ? names[error] : "unknown error";
}

std::string describe_mcause(uint64_t mcause) {
    static const char* names[] = {"instruction address misaligned",
                                  "instruction access fault",
                                  "illegal instruction",
                                  "breakpoint",
                                  "load address misaligned",
                                  "load access fault",
                                  "store address misaligned",
                                  "store access fault",
                                  "ecall from U",
                                  "ecall from S",
                                  "reserved",
                                  "ecall from M",
                                  "instruction page fault",
                                  "load page fault",
                                  "reserved",
                                  "store page fault"};
    if (mcause < 16) return names[mcause];
    if (mcause == abi::kPanicCause) return "firmware panic";
    return "mcause " + std::to_string(mcause);
}

Chip::Chip(uint32_t id, const BoardInfo& board, int memfd)
    : id_(id), board_(board), layout_hash_(layout_hash(board)), memfd_(memfd) {
    void* p = mmap(nullptr, board.ram.size, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
    if (p == MAP_FAILED) throw Error("cannot map chip " + std::to_string(id) + " memory: " + strerror(errno));
    mem_ = static_cast<uint8_t*>(p);
    if (control().host.magic != abi::kControlMagic || control().host.abi_version != abi::kAbiVersion)
        throw Error("chip " + std::to_string(id) + ": control block has no weft ABI v" +
                    std::to_string(abi::kAbiVersion) + " (bridge and driver from different builds?)");
}

Chip::~Chip() {
    if (mem_) munmap(mem_, board_.ram.size);
    if (memfd_ >= 0) close(memfd_);
}

uint8_t* Chip::host_ptr(uint64_t addr, uint64_t len) const {
    if (!board_.ram.contains(addr, len))
        throw Error("chip " + std::to_string(id_) + ": [" + hex(addr) + ", +" + std::to_string(len) +
                    ") is outside its memory [" + hex(board_.ram.base) + ", " + hex(board_.ram.end()) + ")");
    return mem_ + (addr - board_.ram.base);
}

// An empty vector's data() may be null, which memcpy may not be given even for 0 bytes.
void Chip::write(uint64_t addr, const void* src, uint64_t len) {
    if (len) memcpy(host_ptr(addr, len), src, len);
}
void Chip::read(uint64_t addr, void* dst, uint64_t len) const {
    if (len) memcpy(dst, host_ptr(addr, len), len);
}
uint32_t Chip::read32(uint64_t addr) const {
    return __atomic_load_n(reinterpret_cast<uint32_t*>(host_ptr(addr, 4)), __ATOMIC_ACQUIRE);
}
void Chip::write32(uint64_t addr, uint32_t value) {
    __atomic_store_n(reinterpret_cast<uint32_t*>(host_ptr(addr, 4)), value, __ATOMIC_RELEASE);
}

abi::ChipControlBlock& Chip::control() const {
    return *reinterpret_cast<abi::ChipControlBlock*>(mem_ + (board_.control_block.base - board_.ram.base));
}

void Chip::check_built_for_board(const KernelImage& image) const {
    if (image.xlen != board_.xlen())
        throw Error("kernel '" + image.name + "' (" + image.path + ") is RV" + std::to_string(image.xlen) +
                    " code, but chip " + std::to_string(id_) + "'s cores are RV" + std::to_string(board_.xlen()) +
                    " (board '" + board_.name + "', isa " + board_.isa + "): load the kernel built for that board");
    const FirmwareLayout& built = image.layout;
    if (built.chip == board_.chip && built.hash == layout_hash_ && built.abi_version == abi::kAbiVersion) return;
    throw Error("kernel '" + image.name + "' (" + image.path + ") was built for chip '" + built.chip + "' (layout " +
                hex(built.hash) + ", ABI v" + std::to_string(built.abi_version) + "), but chip " + std::to_string(id_) +
                " is board '" + board_.name + "' of chip '" + board_.chip + "' (layout " + hex(layout_hash_) +
                ", ABI v" + std::to_string(abi::kAbiVersion) +
                "): load the kernel built for the cluster's chip, rebuilt ('make')");
}

LoadedKernel Chip::load(uint32_t core, const KernelImage& image) {
    check_built_for_board(image);
    if (core >= board_.cores.size())
        throw Error("chip " + std::to_string(id_) + " has no core " + std::to_string(core));
    const abi::HartStatus& st = status(core);
    if (const std::string resident = resident_name(core); !resident.empty())
        throw Error("chip " + std::to_string(id_) + " core " + std::to_string(core) + " runs the resident image '" +
                    resident + "' (stop it first)");
    if (st.state == abi::kHartRunning)
        throw Error("chip " + std::to_string(id_) + " core " + std::to_string(core) + " is still running kernel '" +
                    kernel_name(core) + "'");
    const uint64_t base = board_.cores[core].l1.base;
    if (image.bytes.size() > board_.code_size)
        throw Error("kernel '" + image.name + "' (" + std::to_string(image.bytes.size()) +
                    " bytes) does not fit in core " + std::to_string(core) + "'s L1 code area (" +
                    std::to_string(board_.code_size) + " bytes)");
    LoadedKernel k;
    k.core = core;
    k.name = image.name;
    k.base = base;
    k.entry = base + image.entry;
    k.end = (base + image.bytes.size() + 7) & ~7ull;
    k.code_size = image.code_size;
    // Same bytes at the same place (any process may have put them there: the
    // hash is in the chip): neither relocated nor written again, and the
    // core's translations are still valid.
    loaded_elf_.resize(board_.cores.size());
    loaded_elf_[core] = image.path;
    const uint64_t hash = image.content_hash ^ base;
    abi::CoreImage& held = control().host.image[core];
    k.new_code = held.content_hash != hash;
    if (!k.new_code) return k;
    const std::vector<uint8_t> bytes = image.relocated(base);
    write(base, bytes.data(), bytes.size());
    held = abi::CoreImage{};
    std::snprintf(held.name, sizeof held.name, "%s", image.name.c_str());
    held.content_hash = hash;
    return k;
}

std::string Chip::kernel_name(uint32_t core) const { return image_name(image(core)); }

std::string Chip::resident_name(uint32_t core) const { return image(core).resident_l1_size ? kernel_name(core) : ""; }

uint32_t Chip::launch(const LoadedKernel& k, const std::vector<uint32_t>& args) {
    const uint32_t core = k.core;
    if (args.size() * 4 > board_.args_size)
        throw Error("kernel '" + k.name + "': " + std::to_string(args.size()) + " argument words exceed the " +
                    std::to_string(board_.args_size) + "-byte argument block");
    const abi::HartStatus& st = status(core);
    if (st.state != abi::kHartReady && st.state != abi::kHartDone && st.state != abi::kHartFault)
        throw Error("chip " + std::to_string(id_) + " core " + std::to_string(core) +
                    " is not ready for a launch (state " + std::to_string(st.state) + ")");
    const uint64_t args_addr = board_.args_base(core);
    if (!args.empty()) write(args_addr, args.data(), args.size() * 4);
    abi::LaunchRequest& req = control().host.launch[core];
    req.flags = k.new_code ? uint32_t(abi::kLaunchNewCode) : 0u;
    req.entry = k.entry;
    req.args = args_addr;
    req.arg_count = args.size();
    req.code_base = k.base;
    req.code_size = k.code_size;
    const uint32_t seq = req.seq + 1;
    __atomic_store_n(const_cast<uint32_t*>(&req.seq), seq, __ATOMIC_RELEASE);
    return seq;
}

bool Chip::stopped(uint32_t core) const { return stopped_by_host(status(core)); }

bool Chip::finished(uint32_t core, uint32_t seq) const { return launch_ended(status(core), seq); }

std::string Chip::describe_fault(uint32_t core) const {
    const abi::HartStatus& st = status(core);
    if (st.state != abi::kHartFault) return "";
    std::ostringstream o;
    o << "chip " << id_ << " core " << core << " (" << role_name(board_.cores[core].role) << ") kernel '"
      << kernel_name(core) << "' FAULT: ";
    if (st.mcause == abi::kPanicCause) {
        o << describe_panic(st.return_code, st.mtval) << " (pc " << hex(st.mepc) << where(core, st.mepc) << ")";
        // ra is the return address: the call is the instruction before it.
        if (st.ra) o << ", called from " << hex(st.ra) << where(core, st.ra - 1);
    } else {
        o << describe_mcause(st.mcause) << " (mcause " << st.mcause << ") at pc " << hex(st.mepc);
        const uint64_t base = board_.cores[core].l1.base;
        if (st.mepc >= base && st.mepc < base + board_.cores[core].l1.size)
            o << " (" << kernel_name(core) << "+" << hex(st.mepc - base) << ")";
        o << where(core, st.mepc) << ", mtval " << hex(st.mtval);
        if (st.ra >= base && st.ra < base + board_.code_size)  // a leaf function's caller in the kernel
            o << "; return address " << hex(st.ra) << where(core, st.ra - 1);
    }
    return o.str();
}

std::string Chip::kernel_elf(uint32_t core) const {
    if (core < loaded_elf_.size() && !loaded_elf_[core].empty()) return loaded_elf_[core];
    const std::string name = kernel_name(core);
    if (name.empty()) return "";
    std::vector<std::string> dirs = paths::kernel_dirs(board_.name);
    for (const std::string& dir : paths::resident_dirs(board_.name)) dirs.push_back(dir);
    for (const std::string& dir : dirs)
        if (const std::string elf = dir + "/" + name + ".elf"; std::filesystem::exists(elf)) return elf;
    return "";
}

std::string Chip::where(uint32_t core, uint64_t pc) const {
    const uint64_t base = board_.cores[core].l1.base;
    std::string position;
    if (pc >= base && pc < base + board_.code_size) {
        if (const std::string elf = kernel_elf(core); !elf.empty()) position = source_position(elf, pc - base);
    } else {
        position = source_position(paths::boot_firmware(board_.name), pc);
    }
    if (position.empty()) return "";
    return position.rfind("at ", 0) == 0 ? " " + position : " in " + position;
}

KernelResult Chip::result(uint32_t core) const {
    const abi::HartStatus& st = status(core);
    if (st.state == abi::kHartFault) throw FaultError(describe_fault(core));
    return returned(st);
}

}  // namespace weft
