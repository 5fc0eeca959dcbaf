// Firmware and board must agree on the layout: the build bakes the chip's
// part of a board's DTB into each firmware image (weft/board_layout.h), and an
// image records which chip and layout that was (weft/abi/layout_record.h).
// Firmware is built per chip, so every board that carries the chip runs it.
// The host checks the record against the board DTB it runs before it starts
// anything.
#pragma once
#include <stdint.h>

#include <string>

#include "driver/board.h"

namespace weft {

// What a firmware image says it was built for.
struct FirmwareLayout {
    std::string chip;
    uint64_t hash = 0;
    uint32_t abi_version = 0;
};

// A hash of everything the firmware build takes from a board, which is its
// chip's part: the chip, ISA, memory map, L1 layout, QEMU machine and cores;
// not the board's name nor where its ports face. The generated header's
// WEFT_LAYOUT_HASH; the same function on the host side.
uint64_t layout_hash(const BoardInfo& board);

// The bytes of the ELF section `name` of the file at `path` ("" if it has
// none); throws weft::Error naming the file if it is not an ELF.
std::string section_bytes(const std::string& path, const char* name);

// The layout record of the firmware ELF at `path`; throws weft::Error naming
// the file if it cannot be read or has no record.
FirmwareLayout read_firmware_layout(const std::string& path);

// Throws weft::Error naming both files and both layouts unless the firmware
// at `elf_path` was built for the chip `board` carries, laid out as it is.
void check_firmware_layout(const BoardInfo& board, const std::string& dtb_path, const std::string& elf_path);

}  // namespace weft
