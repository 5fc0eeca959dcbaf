#include "driver/paths.h"

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.h"
#include "common/knobs.h"

#ifndef WEFT_SOURCE_DIR
#define WEFT_SOURCE_DIR "."
#endif

namespace weft::paths {
namespace {

bool exists(const std::string& p) {
    struct stat st;
    return stat(p.c_str(), &st) == 0;
}

std::string self_dir() {
    char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
    if (n <= 0) return ".";
    std::string exe(buf, static_cast<size_t>(n));
    return exe.substr(0, exe.rfind('/'));
}

}  // namespace

std::string build_root() {
    if (std::string e = knobs::text(knobs::knob("WEFT_BUILD_DIR")); !e.empty()) return e;
    std::string dir = self_dir();
    // Binaries live in <build>/bin; tests may live deeper, so walk up to the tree that has firmware/.
    for (std::string d = dir; !d.empty(); d = d.substr(0, d.rfind('/'))) {
        if (exists(d + "/firmware/boot.elf")) return d;
        if (d.find('/') == std::string::npos) break;
    }
    return dir + "/..";
}

std::string source_root() { return WEFT_SOURCE_DIR; }

std::string bridge_binary() { return build_root() + "/bin/weft-bridge"; }
std::string firmware_dir() { return build_root() + "/firmware"; }
std::string boot_firmware() { return firmware_dir() + "/boot.elf"; }
std::string kernel(const std::string& name) { return firmware_dir() + "/kernels/" + name + ".elf"; }
std::string board_dtb(const std::string& board) { return build_root() + "/boards/" + board + "/board.dtb"; }

std::map<std::string, BoardInfo> known_boards() {
    std::map<std::string, BoardInfo> boards;
    std::string dir = build_root() + "/boards";
    DIR* d = opendir(dir.c_str());
    if (!d) throw Error("no boards in " + dir + " (run 'make' first)");
    while (dirent* e = readdir(d)) {
        std::string name = e->d_name;
        if (name[0] == '.' || !exists(board_dtb(name))) continue;
        boards.emplace(name, load_board(board_dtb(name)));
    }
    closedir(d);
    return boards;
}

std::string qemu_binary() { return knobs::text(knobs::knob("WEFT_QEMU")); }

std::string default_run_dir() {
    if (std::string e = knobs::text(knobs::knob("WEFT_RUN_DIR")); !e.empty()) return e;
    return "/tmp/weft-" + std::to_string(getuid());
}

std::string control_socket(const std::string& run_dir) { return run_dir + "/control.sock"; }
std::string kick_socket(const std::string& run_dir) { return run_dir + "/kick.sock"; }

std::string cluster_file(const std::string& name_or_path) {
    if (exists(name_or_path)) return name_or_path;
    for (const std::string& cand : {std::string(WEFT_SOURCE_DIR) + "/clusters/" + name_or_path,
                                    std::string(WEFT_SOURCE_DIR) + "/clusters/" + name_or_path + ".yaml"})
        if (exists(cand)) return cand;
    throw Error("cluster file '" + name_or_path + "' not found (give a path, or a name from " WEFT_SOURCE_DIR
                "/clusters)");
}

}  // namespace weft::paths
