#include "driver/symbolize.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "common/hex.h"
#include "common/knobs.h"
#include "driver/paths.h"

extern char** environ;

namespace weft {
namespace {

std::string addr2line_tool() { return knobs::text(knobs::knob("WEFT_ADDR2LINE")); }

// The tool's stdout, or "" if it could not run or failed.
std::string capture(const std::vector<std::string>& argv) {
    int out[2];
    if (pipe(out) != 0) return "";
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_addclose(&fa, out[0]);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = -1;
    const int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    close(out[1]);
    std::string text;
    char buf[512];
    for (ssize_t n; rc == 0 && (n = read(out[0], buf, sizeof buf)) > 0;) text.append(buf, n);
    close(out[0]);
    int status = 0;
    if (rc != 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return "";
    return text;
}

std::string without_root(std::string text) {
    static const std::string root = paths::source_root() + "/";
    for (size_t at; (at = text.find(root)) != std::string::npos;) text.erase(at, root.size());
    return text;
}

// "void weft::noc::ring_failed<weft::abi::X>(A const&) const" -> "weft::noc::ring_failed".
std::string short_name(const std::string& name) {
    std::string out;
    int depth = 0;
    for (char ch : name) {
        if (ch == '<' || ch == '(') ++depth;
        if (depth == 0) out += ch;
        if ((ch == '>' || ch == ')') && depth > 0) --depth;
    }
    // A member function's qualifiers follow its parameters: "as<T>() const" is as.
    for (bool trimmed = true; trimmed;) {
        while (!out.empty() && out.back() == ' ') out.pop_back();
        trimmed = false;
        for (const std::string q : {" const", " volatile", " noexcept", " &&", " &"})
            if (out.size() > q.size() && out.compare(out.size() - q.size(), q.size(), q) == 0) {
                out.erase(out.size() - q.size());
                trimmed = true;
            }
    }
    if (const size_t space = out.rfind(' '); space != std::string::npos) out.erase(0, space + 1);
    return out;
}

struct Frame {
    std::string function, position;
};

// A frame as "f at file:line"; LTO'd debug info names some inlined functions
// by a local label (".L0"): those go by their line only.
std::string frame_text(const Frame& f) {
    const std::string name = short_name(f.function);
    if (name.empty() || name[0] == '.' || name == "??") return "at " + f.position;
    return name + " at " + f.position;
}

}  // namespace

std::string source_position(const std::string& elf, uint64_t addr) {
    const std::string text = capture({addr2line_tool(), "-f", "-C", "-i", "-p", "-e", elf, hex(addr)});
    // -p -i: "f at file:line\n (inlined by) g at file:line\n", innermost first.
    std::vector<Frame> frames;
    size_t start = 0;
    for (size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1) {
        std::string line = text.substr(start, nl - start);
        if (line.rfind(" (inlined by) ", 0) == 0) line.erase(0, 14);
        const size_t at = line.rfind(" at ");
        if (at == std::string::npos || line.find("??") != std::string::npos) continue;
        frames.push_back({line.substr(0, at), without_root(line.substr(at + 4))});
    }
    // The kernels' entry wrapper, into which every kernel_main is inlined, says nothing.
    while (frames.size() > 1 && short_name(frames.back().function) == "weft_kernel_start") frames.pop_back();
    // A function inlined into itself by LTO: its innermost line is the one that matters.
    while (frames.size() > 2 && short_name(frames.back().function) == short_name(frames[frames.size() - 2].function))
        frames.pop_back();
    if (frames.empty()) return "";
    std::string where = frame_text(frames.front());
    if (frames.size() > 1) where += " inlined into " + frame_text(frames.back());
    return where;
}

}  // namespace weft
