// The layout a firmware image was built for, kept in the image's ELF section
// .weft_layout (not loaded into the chip): the chip's name and a hash of
// everything the build took from the board DTBs of that chip
// (weft/board_layout.h). The host compares it with the board DTB it runs and
// refuses a mismatch, such as firmware built for another chip or before the
// chip's devicetree changed.
#pragma once
#include <stdint.h>

namespace weft::abi {

inline constexpr uint64_t kLayoutMagic = 0x0059414c54464557;  // "WEFTLAY" in memory
inline constexpr uint32_t kLayoutChipChars = 48;
[[deprecated("use kLayoutChipChars: the record names its chip")]] inline constexpr uint32_t kLayoutBoardChars =
    kLayoutChipChars;

struct LayoutRecord {
    uint64_t magic;        // kLayoutMagic
    uint32_t abi_version;  // kAbiVersion the image was built with
    uint32_t pad;
    uint64_t layout_hash;  // WEFT_LAYOUT_HASH of the chip's generated header
    union {
        char chip[kLayoutChipChars];  // the chip's name, NUL-terminated
        [[deprecated("firmware is built per chip: the record names its chip (LayoutRecord::chip)")]] char
            board[kLayoutChipChars];
    };
};
static_assert(sizeof(LayoutRecord) == 72, "LayoutRecord layout");

}  // namespace weft::abi
