// One chip as the host driver sees it: its memory mapped like a PCIe BAR
// window, its launch mailboxes, and the kernels loaded on its cores.
#pragma once
#include <stdint.h>

#include <string>
#include <vector>

#include "driver/board.h"
#include "driver/hart_state.h"
#include "driver/kernel_image.h"
#include "driver/kernel_launch.h"
#include "weft/abi/control_block.h"

namespace weft {

struct LoadedKernel {
    uint32_t core = 0;
    std::string name;
    uint64_t base = 0;   // L1 address of the image
    uint64_t entry = 0;  // absolute
    uint64_t end = 0;    // first free L1 byte after the image (8-aligned)
    uint64_t code_size = 0;
    bool new_code = false;  // code bytes changed since the core last ran
};

class Chip {
public:
    Chip(uint32_t id, const BoardInfo& board, int memfd);  // takes the fd
    ~Chip();
    Chip(const Chip&) = delete;
    Chip& operator=(const Chip&) = delete;

    uint32_t id() const { return id_; }
    const BoardInfo& board() const { return board_; }

    // Bounds-checked access to chip memory; throws weft::Error naming the range.
    uint8_t* host_ptr(uint64_t addr, uint64_t len) const;
    void write(uint64_t addr, const void* src, uint64_t len);
    void read(uint64_t addr, void* dst, uint64_t len) const;
    uint32_t read32(uint64_t addr) const;
    void write32(uint64_t addr, uint32_t value);

    abi::ChipControlBlock& control() const;
    const abi::HartStatus& status(uint32_t core) const { return control().hart[core]; }
    bool alive() const { return control().bridge.life != abi::kChipDead; }
    // The core's last kernel was stopped by the host (a failed op or launch
    // stops the kernels still running): a FAULT that is no fault of its own.
    bool stopped(uint32_t core) const;

    // Places a kernel at the bottom of the core's L1 and relocates it there.
    // Throws weft::Error if the image was built for another board's layout.
    LoadedKernel load(uint32_t core, const KernelImage& image);
    // Writes the runtime arguments and posts LAUNCH; returns the launch seq.
    uint32_t launch(const LoadedKernel& kernel, const std::vector<uint32_t>& args);
    bool finished(uint32_t core, uint32_t seq) const;
    // Result of a finished launch; throws FaultError describing a fault.
    KernelResult result(uint32_t core) const;
    // What the core holds (its abi::CoreImage), whichever process loaded it.
    std::string kernel_name(uint32_t core) const;
    const abi::CoreImage& image(uint32_t core) const { return control().host.image[core]; }
    // The resident image's name if one runs on the core, else "".
    std::string resident_name(uint32_t core) const;
    // The ELF of what the core holds: the one this process loaded, else the
    // built kernel (or test kernel) of that name; "" if none is found.
    std::string kernel_elf(uint32_t core) const;
    // One line per core describing a fault; empty if the core did not fault.
    std::string describe_fault(uint32_t core) const;

private:
    void check_built_for_board(const KernelImage& image) const;
    // " in f at file:line" of a pc in the core's kernel or the boot firmware.
    std::string where(uint32_t core, uint64_t pc) const;

    uint32_t id_;
    const BoardInfo& board_;
    uint64_t layout_hash_;  // of board_, what its kernels must have been built for
    int memfd_;
    uint8_t* mem_ = nullptr;
    std::vector<std::string> loaded_elf_;  // by core: the ELF this process loaded there
};

std::string describe_mcause(uint64_t mcause);
const char* ring_error_name(uint32_t error);  // abi::RingError
// A firmware panic's code and detail (abi::PanicCode), for people.
std::string describe_panic(int32_t code, uint64_t detail);

}  // namespace weft
