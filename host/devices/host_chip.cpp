#include "devices/host_chip.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include <string>

#include "common/error.h"

namespace weft {

HostChip::HostChip(const BoardInfo& board, uint32_t id, uint32_t num_chips) : board_(board) {
    void* p = mmap(nullptr, board.ram.size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) throw Error("cannot map host chip " + std::to_string(id) + "'s memory: " + strerror(errno));
    mem_ = ChipMemory{static_cast<uint8_t*>(p), reinterpret_cast<uint64_t>(p), board.ram.size, board.ram.base};
    start(id, num_chips);
}

HostChip::HostChip(const BoardInfo& board, uint32_t id, uint32_t num_chips, uint8_t* memory, uint64_t bytes)
    : board_(board), owned_(false) {
    const uint64_t control_end = board.control_block.base + board.control_block.size - board.ram.base;
    if (bytes > board.ram.size || bytes < control_end)
        throw Error("host chip " + std::to_string(id) + " keeps " + std::to_string(bytes) +
                    " bytes of the board's RAM: at least its control block's " + std::to_string(control_end) +
                    ", at most the RAM's " + std::to_string(board.ram.size));
    mem_ = ChipMemory{memory, reinterpret_cast<uint64_t>(memory), bytes, board.ram.base};
    start(id, num_chips);
}

void HostChip::start(uint32_t id, uint32_t num_chips) {
    abi::ChipControlBlock& cb = control();
    cb.host.chip_id = id;
    cb.host.num_chips = num_chips;
    cb.host.abi_version = abi::kAbiVersion;
    cb.host.magic = abi::kControlMagic;
    cb.bridge.life = abi::kChipAlive;
}

HostChip::~HostChip() {
    if (owned_) munmap(mem_.host, mem_.size);
}

abi::ChipControlBlock& HostChip::control() const {
    return *reinterpret_cast<abi::ChipControlBlock*>(at(board_.control_block.base, sizeof(abi::ChipControlBlock)));
}

uint64_t HostChip::to_host(uint64_t addr, uint64_t len) const {
    if (!board_.ram.contains(addr, len)) {
        char range[64];
        snprintf(range, sizeof range, "[0x%llx, +%llu)", (unsigned long long)addr, (unsigned long long)len);
        throw Error(std::string(range) + " is outside the RAM of board " + board_.name);
    }
    if (addr + len - board_.ram.base > mem_.size) {
        char range[96];
        snprintf(range, sizeof range, "[0x%llx, +%llu) is past the first %llu MiB", (unsigned long long)addr,
                 (unsigned long long)len, (unsigned long long)(mem_.size >> 20));
        throw Error(std::string(range) + " of the board's RAM, all that this model's chips keep");
    }
    return mem_.base + (addr - board_.ram.base);
}

}  // namespace weft
