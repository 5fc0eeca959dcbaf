// weft launch KERNEL: one kernel on one core of the running cluster, with raw
// argument words, waited for with a deadline; prints its return code, or the
// fault (with the source line) or the hang report.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "cli/arguments.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "common/error.h"
#include "driver/kernel_image.h"
#include "driver/paths.h"

namespace weft::cli {
namespace {

struct LaunchArgs {
    std::string kernel, cluster;
    uint32_t chip = 0, core = 0;
    std::vector<std::string> args;
    double timeout_s = 10;
};

// A path to an ELF, else a kernel of the board's build (the user's own kernels
// in firmware/kernels/ are built there too) or one of the test kernels.
std::string kernel_path(const std::string& kernel, const std::string& board) {
    if (kernel.find('/') != std::string::npos || kernel.ends_with(".elf")) {
        if (!std::filesystem::exists(kernel)) throw UsageError("no kernel ELF at '" + kernel + "'");
        return kernel;
    }
    std::vector<std::string> known;
    for (const std::string& folder : paths::kernel_dirs(board)) {
        if (std::filesystem::exists(folder + "/" + kernel + ".elf")) return folder + "/" + kernel + ".elf";
        if (std::filesystem::is_directory(folder))
            for (const auto& e : std::filesystem::directory_iterator(folder))
                if (e.path().extension() == ".elf") known.push_back(e.path().stem());
    }
    std::sort(known.begin(), known.end());
    std::string names;
    for (const std::string& k : known) names += (names.empty() ? "" : ", ") + k;
    throw UsageError("board " + board + " has no kernel '" + kernel + "' (built: " + names +
                     "), and it is not a path to an ELF");
}

// A 64-bit number, decimal or 0x hex; false if `text` is not one.
bool parse_u64(const std::string& text, uint64_t& v) {
    char* end = nullptr;
    errno = 0;
    v = std::strtoull(text.c_str(), &end, 0);
    return !text.empty() && !*end && !errno && text[0] != '-';
}

// name=value pairs, by the kernel's declared names (every field once).
std::vector<uint32_t> named_words(const KernelImage& kernel, const std::vector<std::string>& args) {
    std::vector<std::pair<std::string, uint64_t>> values;
    for (const std::string& a : args) {
        const size_t eq = a.find('=');
        if (eq == std::string::npos || eq == 0)
            throw UsageError("--args: '" + a + "' is not NAME=VALUE (give every argument by name, or none)");
        uint64_t v = 0;
        if (!parse_u64(a.substr(eq + 1), v))
            throw UsageError("--args: '" + a + "': the value must be a number (decimal or 0x hex)");
        values.push_back({a.substr(0, eq), v});
    }
    try {
        return named_argument_words(kernel, values);
    } catch (const Error& e) {
        throw UsageError(std::string("--args: ") + e.what());
    }
}

// "7", "0x81000000": one 32-bit word; "u64:V": V as two words, low first;
// NAME=VALUE: by the kernel's declared argument names.
std::vector<uint32_t> argument_words(const KernelImage& kernel, const std::vector<std::string>& args) {
    for (const std::string& a : args)
        if (a.find('=') != std::string::npos) return named_words(kernel, args);
    std::vector<uint32_t> words;
    for (const std::string& a : args) {
        const bool wide = a.rfind("u64:", 0) == 0;
        uint64_t v = 0;
        if (!parse_u64(wide ? a.substr(4) : a, v) || (!wide && v > UINT32_MAX))
            throw UsageError("--args: '" + a + "' must be a 32-bit number (decimal or 0x hex) or u64:NUMBER");
        words.push_back(static_cast<uint32_t>(v));
        if (wide) words.push_back(static_cast<uint32_t>(v >> 32));
    }
    return words;
}

int launch(const LaunchArgs& a, const std::string& run_dir) {
    auto cluster = attach_or_start(run_dir, a.cluster, "ring8");
    const std::string path = kernel_path(a.kernel, cluster->board().name);
    const KernelImage image = load_kernel_image(path);
    const auto deadline = std::chrono::milliseconds(static_cast<int64_t>(a.timeout_s * 1000));
    const auto t0 = std::chrono::steady_clock::now();
    try {
        const KernelResult r = cluster->run({{a.chip, a.core, &image, argument_words(image, a.args)}}, deadline).at(0);
        std::printf("kernel '%s' on chip %u core %u returned %d (%.3f ms on the core, %.3f ms launch to end)\n",
                    image.name.c_str(), a.chip, a.core, r.return_code,
                    double(r.ticks) / cluster->board().timebase_hz * 1e3, seconds_since(t0) * 1e3);
        return r.return_code == 0 ? 0 : 1;
    } catch (const FaultError& e) {
        std::printf("%s\n", e.what());
    } catch (const TimeoutError& e) {
        std::printf("kernel '%s' did not end within %.1f s; stopped. %s\n", image.name.c_str(), a.timeout_s, e.what());
    }
    return 1;
}

}  // namespace

Command add_launch(CLI::App& weft, Globals& g) {
    CLI::App* cmd = weft.add_subcommand(
        "launch",
        "run one kernel on one core and wait for it: its return code, fault (with source line) or hang report");
    auto a = std::make_shared<LaunchArgs>();
    add_word(
        *cmd, "KERNEL", "", a->kernel, [](const std::string&) {},
        "a kernel of the board's build by name (e.g. fault, wait_sem) or a path to a kernel ELF")
        ->required();
    add_whole(*cmd, "--chip", "C", a->chip, kIds, "the chip; default 0");
    add_whole(*cmd, "--core", "N", a->core, kIds, "the core")->required();
    cmd->add_option("--args", a->args,
                    "the kernel's arguments: NAME=VALUE for each field where the kernel names them "
                    "(WEFT_KERNEL_ARG_NAMES), or words in order: 32-bit numbers (decimal or 0x hex), u64:NUMBER for a "
                    "64-bit value as two words")
        ->type_name("ARG...");
    add_real(*cmd, "--timeout", a->timeout_s, 0.1, 3600, "seconds before the hang report; default 10");
    add_cluster(*cmd, a->cluster);
    add_run_dir(*cmd, g.run_dir);
    return {cmd, [a, &g] { return launch(*a, g.run_dir); }};
}

}  // namespace weft::cli
