// weft gdb CHIP: GDB on a live chip. QEMU's gdbstub is started through the
// chip's QMP socket, and gdb-multiarch attaches with the boot firmware's
// symbols and every loaded kernel's at its core's L1 address (kernels are
// linked at 0). Each core is a GDB thread (core N: thread N+1). On leaving,
// GDB detaches (the chip runs on) and the gdbstub is closed again. The stub
// listens on a Unix socket in the run directory, which only the cluster's
// owner can reach (a TCP port on the loopback any local user could).
#include <signal.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "cli/arguments.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "common/error.h"
#include "common/hex.h"
#include "common/knobs.h"
#include "common/qmp.h"
#include "driver/paths.h"

namespace weft::cli {
namespace {

constexpr uint32_t kAnyCore = UINT32_MAX;

struct GdbArgs {
    uint32_t chip = 0, core = kAnyCore;
    std::vector<std::string> commands;  // --ex: run them and leave (no prompt)
    bool script_only = false;
};

// Where chip `chip`'s gdbstub listens; a socket left by an earlier stub is removed.
std::string stub_socket(const std::string& run_dir, uint32_t chip) {
    const std::string path = run_dir + "/chip" + std::to_string(chip) + ".gdb.sock";
    if (path.size() >= sizeof(sockaddr_un::sun_path))
        throw Error("the gdbstub's socket " + path + " is too long a path for a Unix socket: use a shorter --run-dir");
    unlink(path.c_str());
    return path;
}

// The GDB commands that load the symbols, attach and pick the core.
std::string gdb_script(Cluster& cluster, const GdbArgs& a, const std::string& stub) {
    const BoardInfo& b = cluster.board();
    Chip& chip = cluster.chip(a.chip);
    std::string s = "set pagination off\nset confirm off\nfile " + paths::boot_firmware(b.name) + "\n";
    for (uint32_t core = 0; core < b.cores.size(); ++core) {
        const std::string elf = chip.kernel_elf(core);
        if (elf.empty()) continue;
        s += "# core " + std::to_string(core) + ": kernel '" + chip.kernel_name(core) + "'\n";
        s += "add-symbol-file " + elf + " -o " + hex(b.cores[core].l1.base) + "\n";
    }
    // QEMU's gdbstub ends the whole chip on a kill: leaving always detaches.
    s += "define hook-quit\n  detach\nend\n";
    s += "target remote " + stub + "\n";
    if (a.core != kAnyCore) s += "thread " + std::to_string(a.core + 1) + "\n";
    return s;
}

int run_gdb(const std::string& script_path, const GdbArgs& a) {
    const std::string gdb = knobs::text(knobs::knob("WEFT_GDB"));
    std::vector<std::string> argv = {gdb, "-q", "-x", script_path};
    if (!a.commands.empty()) {
        argv.insert(argv.begin() + 1, "-batch");
        for (const std::string& c : a.commands) argv.insert(argv.end(), {"-ex", c});
        argv.insert(argv.end(), {"-ex", "detach"});
    }
    std::vector<char*> args;
    for (std::string& w : argv) args.push_back(w.data());
    args.push_back(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {
        execvp(args[0], args.data());
        std::fprintf(stderr, "weft gdb: cannot run %s: %s (install gdb-multiarch: make deps; or set WEFT_GDB)\n",
                     gdb.c_str(), strerror(errno));
        _exit(127);
    }
    // Ctrl-C belongs to GDB (it stops the chip), not to us.
    struct sigaction ignore {
    }, old{};
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGINT, &ignore, &old);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    sigaction(SIGINT, &old, nullptr);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int gdb(const GdbArgs& a, const std::string& run_dir) {
    auto cluster = Cluster::attach(run_dir);
    if (a.chip >= cluster->size())
        throw UsageError("CHIP: the cluster has chips 0 to " + std::to_string(cluster->size() - 1));
    if (a.core != kAnyCore && a.core >= cluster->board().cores.size())
        throw UsageError("--core: board " + cluster->board().name + " has cores 0 to " +
                         std::to_string(cluster->board().cores.size() - 1));
    if (!cluster->chip(a.chip).alive())
        throw Error(cluster->death_of(a.chip) +
                    ": there is nothing to attach to; weft down and weft up start it again");
    const std::string qmp_socket = cluster->info().at("chips").at(a.chip).at("qmp").get<std::string>();
    const std::string stub = stub_socket(run_dir, a.chip);
    const std::string script = gdb_script(*cluster, a, stub);
    const std::string script_path = run_dir + "/chip" + std::to_string(a.chip) + ".gdb";
    std::ofstream(script_path) << script;
    cluster.reset();                           // GDB halts the chip; no client of ours should wait on it
    qmp::human(qmp_socket, "gdbserver none");  // QEMU keeps one stub: one --script left open goes
    qmp::human(qmp_socket, "gdbserver unix:" + stub + ",server=on,wait=off");
    if (a.script_only) {  // for a GDB of the user's own: the stub stays open for it
        std::printf("%s", script.c_str());
        std::fprintf(stderr, "weft gdb: chip %u's gdbstub stays open on %s for this script\n", a.chip, stub.c_str());
        return 0;
    }
    std::fprintf(stderr, "weft gdb: chip %u's gdbstub on %s (each core a thread: core N is thread N+1)\n", a.chip,
                 stub.c_str());
    const int rc = run_gdb(script_path, a);
    try {
        qmp::human(qmp_socket, "gdbserver none");
    } catch (const Error& e) {
        std::fprintf(stderr, "weft gdb: could not close the gdbstub: %s\n", e.what());
    }
    unlink(stub.c_str());
    return rc == 0 ? 0 : 1;
}

}  // namespace

Command add_gdb(CLI::App& weft, Globals& g) {
    CLI::App* cmd = weft.add_subcommand(
        "gdb", "attach gdb-multiarch to a live chip, with the boot firmware's and every loaded kernel's symbols");
    auto a = std::make_shared<GdbArgs>();
    add_whole(*cmd, "CHIP", "", a->chip, kIds, "the chip")->required();
    add_whole(*cmd, "--core", "N", a->core, kIds, "select core N's thread first (core N is thread N+1)");
    cmd->add_option("--ex", a->commands, "run this GDB command (repeatable), then detach and leave: no prompt")
        ->type_name("CMD")
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    cmd->add_flag("--script", a->script_only,
                  "open the chip's gdbstub and print the GDB script (symbols, target) for a GDB of your own");
    add_run_dir(*cmd, g.run_dir);
    return {cmd, [a, &g] { return gdb(*a, g.run_dir); }};
}

}  // namespace weft::cli
