// The board description as read from its DTB with libfdt. The same reader feeds
// the build-time header generator (firmware) and the driver and bridge at run
// time, so host and firmware cannot disagree on the memory map.
#pragma once
#include <stdint.h>

#include <optional>
#include <string>
#include <vector>

#include "weft/abi/fabric.h"

namespace weft {

enum class CoreRole { kErisc, kWorker };
const char* role_name(CoreRole role);

struct Region {
    uint64_t base = 0;
    uint64_t size = 0;
    uint64_t end() const { return base + size; }
    bool contains(uint64_t addr, uint64_t len) const {
        return addr >= base && len <= size && addr - base <= size - len;
    }
};

struct CoreInfo {
    uint32_t id = 0;
    CoreRole role = CoreRole::kWorker;
    int port = -1;  // Ethernet port served, ERISC cores only
    Region l1;
};

struct PortInfo {
    uint32_t id = 0;
    abi::FabricCompass direction = abi::kFabricNorth;  // the board file's N, E, S or W
    uint32_t plane = 0;
    uint32_t core = 0;
};

// What a chip emulated by a QEMU machine (chips/qemu-virt) has beyond the
// memory map and cores: the machine's devices its HAL backend drives and the
// RAM QEMU keeps for itself. A chip on silicon has none of it.
struct QemuMachine {
    std::string program;  // "qemu-system-riscv64" ($WEFT_QEMU overrides)
    std::string args;     // "qemu-virt": its arguments are qemu/<args>.args
    Region reserved;      // top of RAM: QEMU writes the machine's DTB there at every reset
    uint64_t uart = 0;
    uint32_t uart_irq = 0;  // the UART's source on the PLIC: the chip's doorbell
    uint64_t plic = 0, clint = 0, test_device = 0;
};

struct BoardInfo {
    std::string name;  // "qemu-virt": the board, boards/<name>/
    std::string model;
    std::string chip;      // "qemu-virt": the chip it carries, chips/<chip>/
    std::string isa, abi;  // its cores': "rv64imac", "lp64"
    uint32_t xlen() const { return isa.rfind("rv32", 0) == 0 ? 32 : 64; }
    Region ram, boot_firmware, control_block, dram;
    uint32_t dram_banks = 1;  // equal slices of dram (/chip/dram-banks; 1 without it)
    uint32_t timebase_hz = 0;
    uint32_t code_size = 0, stack_size = 0, args_size = 0;
    std::vector<CoreInfo> cores;
    std::vector<PortInfo> ports;
    std::optional<QemuMachine> qemu;  // the chip is a QEMU machine (/chip/qemu-machine)

    // L1 layout of a core: [code | free | args | stack]
    uint64_t stack_top(uint32_t core) const { return cores.at(core).l1.end(); }
    uint64_t args_base(uint32_t core) const { return stack_top(core) - stack_size - args_size; }
    // The part of a core's L1 free for buffers and semaphores.
    Region l1_free(uint32_t core) const {
        return Region{cores.at(core).l1.base + code_size, args_base(core) - cores.at(core).l1.base - code_size};
    }
    Region dram_bank(uint32_t bank) const {
        const uint64_t size = dram.size / dram_banks;
        return Region{dram.base + bank * size, size};
    }
    uint32_t planes() const;
    // Port serving (direction, plane), or -1.
    int port_for(abi::FabricCompass direction, uint32_t plane) const;
    std::vector<uint32_t> cores_with_role(CoreRole role) const;
    // The i-th worker core (qemu-virt: 4..7, qemu-virt32: 8..13); throws past the last.
    uint32_t worker_core(uint32_t i) const { return cores_with_role(CoreRole::kWorker).at(i); }
};

// Parse and validate a board DTB; throws weft::Error naming the bad node.
BoardInfo parse_board(const void* blob, size_t size);
BoardInfo load_board(const std::string& dtb_path);

}  // namespace weft
