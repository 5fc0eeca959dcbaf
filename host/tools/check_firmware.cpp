// weft-check-firmware IMAGE.elf BOARD.dtb
// Whether a firmware image fits a board, by the layout record every weft
// image carries (weft/abi/layout_record.h): prints the name of the chip the
// image was built for, and exits 0 when that is the chip the board's DTB
// carries, laid out as it is now; else 1, with the reason on stderr (another
// chip, a build from before the devicetree changed, no record). For scripts that boot an image
// themselves (scripts/flash-and-run), before a mismatch boots and hangs.
#include <cstdio>

#include "../common/error.h"
#include "../driver/board.h"
#include "../driver/firmware_layout.h"

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s IMAGE.elf BOARD.dtb\n", argv[0]);
        return 2;
    }
    try {
        std::printf("%s\n", weft::read_firmware_layout(argv[1]).chip.c_str());
        weft::check_firmware_layout(weft::load_board(argv[2]), argv[2], argv[1]);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "weft-check-firmware: %s\n", e.what());
        return 1;
    }
    return 0;
}
