// Where weft's build products live, found relative to the running binary so a
// build tree works in place: bin/, firmware/, boards/<name>/board.dtb.
#pragma once
#include <map>
#include <string>

#include "driver/board.h"

namespace weft::paths {

std::string build_root();
std::string source_root();                // the source tree this build came from                 // $WEFT_BUILD_DIR or <binary>/..
std::string bridge_binary();
std::string firmware_dir();
std::string boot_firmware();
std::string kernel(const std::string& name);  // firmware/kernels/<name>.elf
std::string board_dtb(const std::string& board);
std::map<std::string, BoardInfo> known_boards();
std::string qemu_binary();                // $WEFT_QEMU or qemu-system-riscv64
// Default run directory of a cluster: $WEFT_RUN_DIR or /tmp/weft-<uid>.
std::string default_run_dir();
std::string control_socket(const std::string& run_dir);
// Datagram socket: a driver that posted a launch wakes the bridge's engine.
std::string kick_socket(const std::string& run_dir);
// The cluster file named on the command line, or clusters/<name>.yaml of the source tree.
std::string cluster_file(const std::string& name_or_path);

}  // namespace weft::paths
