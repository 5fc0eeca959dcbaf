// Where weft's build products live, found relative to the running binary so a
// build tree works in place: bin/, boards/<board>/board.dtb and each board's
// firmware in firmware/<board>/.
#pragma once
#include <string>
#include <vector>

#include "driver/board.h"

namespace weft::paths {

// The weft tree in use: $WEFT_BUILD_DIR, else the install a program was
// built against (weft.h registers it), else the build tree or install prefix
// the running binary is in. build_root() is where its boards/ and firmware/
// are (the build tree, or PREFIX/share/weft); source_root() where its
// clusters/, qemu/ and data/ are (the source tree behind a build tree's
// links, or the install's own).
std::string build_root();
std::string source_root();
// weft.h: the install prefix (WEFT_TOOLS_DIR) a program was compiled against.
bool set_installed_prefix(const char* prefix);
// Where the benches write their recorded results (bench/results/, data/cost_model/):
// $WEFT_BENCH_OUT, else the build tree, never a source tree it was not told of.
std::string bench_out();  // clusters/, qemu/, data/: the install tree if installed, else the source tree
std::string bridge_binary();
std::string firmware_dir(const std::string& board);                     // firmware/<board>
std::string boot_firmware(const std::string& board);                    // firmware/<board>/boot.elf
std::string kernel(const std::string& board, const std::string& name);  // firmware/<board>/kernels/<name>.elf
// Where a board's kernels are built: the product's, the examples' and the tests'
// (firmware/<board>/kernels, example-kernels, test-kernels); resident images in
// resident_dirs (resident, test-resident).
std::vector<std::string> kernel_dirs(const std::string& board);
std::vector<std::string> resident_dirs(const std::string& board);
std::string board_dtb(const std::string& board);
// The boards the build made a DTB for, by name (none is read).
std::vector<std::string> built_boards();
// That one board's DTB, read and checked; throws weft::Error naming the board
// if it was not built or its DTB is bad. Other boards are not looked at.
BoardInfo load_built_board(const std::string& board);
std::string qemu_binary();  // $WEFT_QEMU, or "": the chip's own (BoardInfo::qemu)
// How a QEMU machine is started: qemu/<args>.args of the source tree (QemuMachine::args).
std::string qemu_config(const std::string& chip);
// Default run directory of a cluster: $WEFT_RUN_DIR or /tmp/weft-<uid>.
std::string default_run_dir();
std::string control_socket(const std::string& run_dir);
// Datagram socket: a driver that posted a launch wakes the bridge's engine.
std::string kick_socket(const std::string& run_dir);
// The cluster file named on the command line, or clusters/<name>.yaml of the source tree.
std::string cluster_file(const std::string& name_or_path);
// The names cluster_file takes without a path: clusters/*.yaml, sorted (none
// where the folder is missing).
std::vector<std::string> cluster_names();
std::string cluster_list();  // cluster_names(), joined with ", "

}  // namespace weft::paths
