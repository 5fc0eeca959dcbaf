#include "driver/paths.h"

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <optional>

#include "common/error.h"
#include "common/knobs.h"

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

std::string& installed_prefix() {
    static std::string prefix;
    return prefix;
}

// A weft tree: a build tree (bin/, boards/, firmware/, and links to the
// source's clusters/, qemu/, data/) or an install prefix (bin/, and
// share/weft/ with the boards, firmware, clusters, qemu configs and data).
struct Tree {
    std::string bin, data;
};

std::optional<Tree> tree_at(const std::string& d) {
    if (exists(d + "/boards") && exists(d + "/firmware")) return Tree{d + "/bin", d};
    if (exists(d + "/share/weft/boards")) return Tree{d + "/bin", d + "/share/weft"};
    return std::nullopt;
}

// $WEFT_BUILD_DIR, else the install a program was built against (weft.h
// registers it), else the tree the running binary is in.
const Tree& tree() {
    static const Tree t = [] {
        if (std::string e = knobs::text(knobs::knob("WEFT_BUILD_DIR")); !e.empty())
            return tree_at(e).value_or(Tree{e + "/bin", e});
        if (!installed_prefix().empty())
            if (auto t = tree_at(installed_prefix())) return *t;
        // Binaries live in <build>/bin or <prefix>/bin; tests may live deeper.
        const std::string dir = self_dir();
        for (std::string d = dir; !d.empty(); d = d.substr(0, d.rfind('/'))) {
            if (auto t = tree_at(d)) return *t;
            if (d.find('/') == std::string::npos) break;
        }
        return Tree{dir, dir + "/.."};
    }();
    return t;
}

}  // namespace

bool set_installed_prefix(const char* prefix) {
    installed_prefix() = prefix ? prefix : "";
    return true;
}

std::string build_root() { return tree().data; }

// The clusters, QEMU configs and data beside the firmware: in a build tree
// links into the source tree (resolved, so reports can name source files
// relative to it), in an install copies of their own.
std::string source_root() {
    static const std::string root = [] {
        char buf[PATH_MAX];
        const std::string clusters = build_root() + "/clusters";
        if (!realpath(clusters.c_str(), buf)) return build_root();
        const std::string real(buf);
        return real.substr(0, real.rfind('/'));
    }();
    return root;
}

std::string bench_out() {
    if (std::string e = knobs::text(knobs::knob("WEFT_BENCH_OUT")); !e.empty()) return e;
    return build_root();
}

std::string bridge_binary() { return tree().bin + "/weft-bridge"; }
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
    const std::string dir = source_root() + "/clusters/";
    for (const std::string& cand : {dir + name_or_path, dir + name_or_path + ".yaml"})
        if (exists(cand)) return cand;
    const std::string names = cluster_list();
    throw Error("cluster file '" + name_or_path + "' not found (give a path, or a name from " + dir +
                (names.empty() ? "" : ": " + names) + ")");
}

std::vector<std::string> cluster_names() {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(source_root() + "/clusters", ec))
        if (e.path().extension() == ".yaml") names.push_back(e.path().stem());
    std::sort(names.begin(), names.end());
    return names;
}

std::string cluster_list() {
    std::string list;
    for (const std::string& n : cluster_names()) list += (list.empty() ? "" : ", ") + n;
    return list;
}

}  // namespace weft::paths
