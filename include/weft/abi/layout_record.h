// The layout a firmware image was built for, kept in the image's ELF section
// .weft_layout (not loaded into the chip): the board's name and a hash of
// everything the build took from the board's DTB (weft/board_layout.h). The
// host compares it with the board DTB it runs and refuses a mismatch, such as
// firmware built for another board or before the board's devicetree changed.
#pragma once
#include <stdint.h>

namespace weft::abi {

inline constexpr uint64_t kLayoutMagic = 0x0059414c54464557;  // "WEFTLAY" in memory
inline constexpr uint32_t kLayoutBoardChars = 48;

struct LayoutRecord {
    uint64_t magic;        // kLayoutMagic
    uint32_t abi_version;  // kAbiVersion the image was built with
    uint32_t pad;
    uint64_t layout_hash;           // WEFT_LAYOUT_HASH of the board's generated header
    char board[kLayoutBoardChars];  // the board's name, NUL-terminated
};
static_assert(sizeof(LayoutRecord) == 72, "LayoutRecord layout");

}  // namespace weft::abi
