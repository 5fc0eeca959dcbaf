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
    abi::ChipControlBlock& cb = control();
    cb.host.chip_id = id;
    cb.host.num_chips = num_chips;
    cb.host.abi_version = abi::kAbiVersion;
    cb.host.magic = abi::kControlMagic;
    cb.bridge.life = abi::kChipAlive;
}

HostChip::~HostChip() { munmap(mem_.host, mem_.size); }

abi::ChipControlBlock& HostChip::control() const {
    return *reinterpret_cast<abi::ChipControlBlock*>(at(board_.control_block.base, sizeof(abi::ChipControlBlock)));
}

uint64_t HostChip::to_host(uint64_t addr, uint64_t len) const {
    if (!board_.ram.contains(addr, len)) {
        char range[64];
        snprintf(range, sizeof range, "[0x%llx, +%llu)", (unsigned long long)addr, (unsigned long long)len);
        throw Error(std::string(range) + " is outside the RAM of board " + board_.name);
    }
    return mem_.base + (addr - board_.ram.base);
}

}  // namespace weft
