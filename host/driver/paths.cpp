#include "driver/paths.h"

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

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
    // Binaries live in <build>/bin; tests may live deeper, so walk up to the
    // tree that has the boards' DTBs and firmware.
    for (std::string d = dir; !d.empty(); d = d.substr(0, d.rfind('/'))) {
        if (exists(d + "/boards") && exists(d + "/firmware")) return d;
        if (d.find('/') == std::string::npos) break;
    }
    return dir + "/..";
}

// An installed tree (cmake --install) carries its clusters, QEMU configs and
// data beside its firmware; a build tree reads them from its source tree.
std::string source_root() {
    static const std::string root = exists(build_root() + "/clusters") ? build_root() : WEFT_SOURCE_DIR;
    return root;
}

std::string bench_out() {
    if (std::string e = knobs::text(knobs::knob("WEFT_BENCH_OUT")); !e.empty()) return e;
    return build_root();
}

std::string bridge_binary() { return build_root() + "/bin/weft-bridge"; }
std::string firmware_dir(const std::string& board) { return build_root() + "/firmware/" + board; }
std::string boot_firmware(const std::string& board) { return firmware_dir(board) + "/boot.elf"; }
std::string kernel(const std::string& board, const std::string& name) {
    return firmware_dir(board) + "/kernels/" + name + ".elf";
}
std::vector<std::string> kernel_dirs(const std::string& board) {
    const std::string dir = firmware_dir(board);
    return {dir + "/kernels", dir + "/example-kernels", dir + "/test-kernels"};
}
std::vector<std::string> resident_dirs(const std::string& board) {
    return {firmware_dir(board) + "/resident", firmware_dir(board) + "/test-resident"};
}
std::string board_dtb(const std::string& board) { return build_root() + "/boards/" + board + "/board.dtb"; }

std::vector<std::string> built_boards() {
    std::vector<std::string> names;
    DIR* d = opendir((build_root() + "/boards").c_str());
    if (!d) return names;
    while (dirent* e = readdir(d)) {
        std::string name = e->d_name;
        if (name[0] != '.' && exists(board_dtb(name))) names.push_back(name);
    }
    closedir(d);
    std::sort(names.begin(), names.end());
    return names;
}

BoardInfo load_built_board(const std::string& board) {
    if (board.empty() || board.find('/') != std::string::npos || !exists(board_dtb(board))) {
        std::string known;
        for (const std::string& name : built_boards()) known += (known.empty() ? "" : ", ") + name;
        throw Error("unknown board '" + board + "' (" +
                    (known.empty() ? "no boards are built; run 'make'" : "known boards: " + known) + ")");
    }
    BoardInfo b;
    try {
        b = load_board(board_dtb(board));
    } catch (const Error& e) {
        throw Error("board '" + board + "': " + e.what());
    }
    if (b.name != board)
        throw Error("board '" + board + "': " + board_dtb(board) + " describes board '" + b.name + "'");
    return b;
}

std::string qemu_binary() { return knobs::text(knobs::knob("WEFT_QEMU")); }

std::string qemu_config(const std::string& chip) { return source_root() + "/qemu/" + chip + ".args"; }

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
    throw Error("cluster file '" + name_or_path +
                "' not found (give a path, or a name from " WEFT_SOURCE_DIR "/clusters)");
}

}  // namespace weft::paths
