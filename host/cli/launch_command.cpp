// weft launch KERNEL [: KERNEL ...]: kernels on cores of the running cluster,
// with raw argument words, launched together and waited for with a deadline;
// prints each one's return code, or the fault (with the source line) or the
// hang report.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "cli/arguments.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "common/error.h"
#include "driver/kernel_image.h"
#include "driver/paths.h"
#include "weft/abi/fault.h"

namespace weft::cli {
namespace {

// One kernel of the launch: what runs where, with which arguments.
struct KernelGroup {
    std::string kernel;
    uint32_t chip = 0, core = 0;
    std::vector<std::string> args;
};

// What applies to every kernel of the launch.
struct LaunchArgs {
    KernelGroup first;
    std::string cluster;
    double timeout_s = 10;
    std::set<std::string> shared_given;  // the launch's own options given so far, in any group
};

// The options every kernel of a launch shares: each may be given once, in
// whichever group (a second value would silently win over the first).
void note_shared(const CLI::App& app, LaunchArgs& a, const std::string& where) {
    for (const char* name : {"--timeout", "--cluster", "--run-dir"}) {
        const CLI::Option* o = app.get_option_no_throw(name);
        if (!o || !o->count()) continue;
        if (!a.shared_given.insert(name).second)
            throw UsageError(where + std::string(name) + " is the whole launch's: give it once");
    }
}

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
    // A kernel that declares its fields says how many words it reads: more
    // or fewer would fault on the chip, or read stale words as arguments.
    // (Its struct's tail padding may be given or left out.)
    uint32_t end = 0;
    for (const KernelImage::ArgField& f : kernel.arg_fields) end = std::max(end, f.offset + f.bytes);
    const size_t given = words.size() * 4;
    if (kernel.args_size && !args.empty() && given != end && given != kernel.args_size)
        throw UsageError("--args: kernel '" + kernel.name + "' takes " + std::to_string(end / 4) + " words (" +
                         kernel.arg_fields_text() + "), not " + std::to_string(words.size()));
    return words;
}

void add_kernel_options(CLI::App& app, KernelGroup& k) {
    add_word(
        app, "KERNEL", "", k.kernel, [](const std::string&) {},
        "a kernel of the board's build by name (e.g. fault, wait_sem) or a path to a kernel ELF")
        ->required();
    add_whole(app, "--chip", "C", k.chip, kIds, "the chip; default 0");
    add_whole(app, "--core", "N", k.core, kIds, "the core")->required();
    app.add_option("--args", k.args,
                   "the kernel's arguments: NAME=VALUE for each field where the kernel names them "
                   "(WEFT_KERNEL_ARG_NAMES), or words in order: 32-bit numbers (decimal or 0x hex), u64:NUMBER for a "
                   "64-bit value as two words")
        ->type_name("ARG...");
}

void add_launch_options(CLI::App& app, LaunchArgs& a, Globals& g) {
    add_real(app, "--timeout", a.timeout_s, 0.1, 3600, "seconds before the hang report; default 10");
    add_cluster(app, a.cluster);
    add_run_dir(app, g.run_dir);
}

// The kernel after the n-th ':', parsed as the first is; the options every
// kernel shares may be given in its group too.
KernelGroup parse_group(const std::vector<std::string>& words, size_t n, LaunchArgs& a, Globals& g) {
    const std::string which = "kernel " + std::to_string(n + 1) + " (after ':' number " + std::to_string(n) + ")";
    if (words.empty()) throw UsageError(which + ": a ':' must be followed by a kernel and its --core");
    KernelGroup k;
    CLI::App app(which, "launch");
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    add_kernel_options(app, k);
    add_launch_options(app, a, g);
    std::vector<std::string> reversed(words.rbegin(), words.rend());  // CLI11 takes them last first
    try {
        app.parse(reversed);
    } catch (const CLI::ParseError& e) {
        throw UsageError(which + ": " + e.what());
    }
    note_shared(app, a, which + ": ");
    return k;
}

std::vector<KernelGroup> kernel_groups(LaunchArgs& a, Globals& g) {
    std::vector<KernelGroup> kernels = {a.first};
    for (size_t n = 0; n < g.groups.size(); ++n) kernels.push_back(parse_group(g.groups[n], n + 1, a, g));
    std::set<std::pair<uint32_t, uint32_t>> taken;
    for (const KernelGroup& k : kernels)
        if (!taken.insert({k.chip, k.core}).second)
            throw UsageError("chip " + std::to_string(k.chip) + " core " + std::to_string(k.core) +
                             " is given two kernels: one core runs one kernel at a time");
    return kernels;
}

// Where a kernel of a failed launch ended: the failure stopped the ones still running.
std::string outcome(Chip& chip, uint32_t core, uint32_t seq) {
    const abi::HartStatus& st = chip.status(core);
    if (!chip.finished(core, seq)) return "did not end (its chip was reset)";
    if (st.state != abi::kHartFault) return "returned " + std::to_string(st.return_code);
    if (chip.stopped(core)) return "stopped, still running";
    return "FAULT (above)";
}

// Every kernel's image and arguments, checked before any kernel is launched.
std::vector<KernelImage> images_of(const std::vector<KernelGroup>& kernels, const std::string& board) {
    std::vector<KernelImage> images;
    for (const KernelGroup& k : kernels) images.push_back(load_kernel_image(kernel_path(k.kernel, board)));
    return images;
}

std::vector<Launch> launches_of(const std::vector<KernelGroup>& kernels, const std::vector<KernelImage>& images) {
    std::vector<Launch> launches;
    for (size_t i = 0; i < kernels.size(); ++i)
        launches.push_back({kernels[i].chip, kernels[i].core, &images[i], argument_words(images[i], kernels[i].args)});
    return launches;
}

// Exit code 0 only when every kernel returned 0.
int print_results(const std::vector<KernelGroup>& kernels, const std::vector<KernelImage>& images,
                  const std::vector<KernelResult>& results, double timebase_hz, double seconds) {
    bool all_zero = true;
    for (size_t i = 0; i < kernels.size(); ++i) {
        std::printf("kernel '%s' on chip %u core %u returned %d (%.3f ms on the core, %.3f ms launch to end)\n",
                    images[i].name.c_str(), kernels[i].chip, kernels[i].core, results[i].return_code,
                    double(results[i].ticks) / timebase_hz * 1e3, seconds * 1e3);
        all_zero = all_zero && results[i].return_code == 0;
    }
    return all_zero ? kOk : kFailed;
}

void print_outcomes(Cluster& cluster, const std::vector<KernelGroup>& kernels, const std::vector<KernelImage>& images,
                    const std::vector<std::pair<CoreRef, uint32_t>>& launched) {
    for (size_t i = 0; i < kernels.size(); ++i)
        std::printf("kernel '%s' on chip %u core %u: %s\n", images[i].name.c_str(), kernels[i].chip, kernels[i].core,
                    outcome(cluster.chip(kernels[i].chip), kernels[i].core, launched[i].second).c_str());
}

int launch(LaunchArgs& a, Globals& g) {
    const std::vector<KernelGroup> kernels = kernel_groups(a, g);
    auto cluster = attach_or_start(g.run_dir, a.cluster, "ring8");
    const std::vector<KernelImage> images = images_of(kernels, cluster->board().name);
    const std::vector<Launch> launches = launches_of(kernels, images);
    const auto deadline = std::chrono::milliseconds(static_cast<int64_t>(a.timeout_s * 1000));
    const auto t0 = std::chrono::steady_clock::now();
    const auto launched = cluster->launch_all(launches);
    try {
        const std::vector<KernelResult> results = cluster->wait_all(launched, deadline);
        return print_results(kernels, images, results, cluster->board().timebase_hz, seconds_since(t0));
    } catch (const FaultError& e) {
        std::printf("%s\n", e.what());
    } catch (const TimeoutError& e) {
        const std::string who = kernels.size() == 1 ? "kernel '" + images[0].name + "'" : "the launch";
        std::printf("%s did not end within %.1f s; stopped. %s\n", who.c_str(), a.timeout_s, e.what());
    }
    if (kernels.size() > 1) print_outcomes(*cluster, kernels, images, launched);
    return kFailed;
}

constexpr const char* kSeveralKernelsHelp =
    "Several kernels at once, as mpirun runs several programs: each ':' starts the next kernel, with its own\n"
    "KERNEL, --chip, --core and --args; all are launched together (one claim of the cluster) and waited for\n"
    "together, and each one's result is printed (exit code 0 when every kernel returned 0). --timeout,\n"
    "--cluster and --run-dir are the whole launch's, in any group. The exchange example on a pair, both ends\n"
    "of the cable (chip 0 port E is core 1, chip 1 port W is core 3):\n"
    "  weft launch exchange --chip 0 --core 1 --args local_buffer=0x9f000000 local_inbox=0x9f010000 \\\n"
    "        remote_inbox=0x9f010000 local_flag=0x9f020000 remote_flag=0x9f020000 port=1 words=4096 chip=0 peer=1 \\\n"
    "      : exchange --chip 1 --core 3 --args local_buffer=0x9f000000 local_inbox=0x9f010000 \\\n"
    "        remote_inbox=0x9f010000 local_flag=0x9f020000 remote_flag=0x9f020000 port=3 words=4096 chip=1 peer=0";

}  // namespace

Command add_launch(CLI::App& weft, Globals& g) {
    CLI::App* cmd = weft.add_subcommand(
        "launch",
        "run kernels on cores and wait for them: each one's return code, fault (with source line) or hang report; "
        "several at once with ':'");
    auto a = std::make_shared<LaunchArgs>();
    add_kernel_options(*cmd, a->first);
    add_launch_options(*cmd, *a, g);
    cmd->footer(kSeveralKernelsHelp);
    return {cmd, [a, &g, cmd] {
                note_shared(*cmd, *a, "");
                return launch(*a, g);
            }};
}

}  // namespace weft::cli
