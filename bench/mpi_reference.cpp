// Runs the Open MPI all-reduce reference (bench/mpi_allreduce.cpp) under
// mpirun and parses its JSON lines; see mpi_reference.h.
//
// The mpirun command line, and why each part is there:
//   --allow-run-as-root       only as root (plus OMPI_ALLOW_RUN_AS_ROOT{,_CONFIRM}=1
//                             in its environment): Open MPI refuses root otherwise
//   --oversubscribe           8 ranks on a 2-core machine: more ranks than slots
//   --bind-to none            no core binding: with 4 ranks per core, binding
//                             only pins ranks onto the same busy cores
//   --mca pml ob1             the point-to-point layer over the BTLs below; keeps
//                             the UCX pml and the cm pml (libfabric/PSM MTLs),
//                             which probe InfiniBand/OmniPath hardware, unloaded
//   --mca btl self,vader      shared memory between ranks, nothing else: no TCP
//                             BTL sockets, no openib (InfiniBand) BTL
//   --mca osc ^ucx            one-sided layer: no UCX probing at MPI_Init either
//   --mca mpi_yield_when_idle 1   ranks waiting in MPI yield the CPU (Open MPI
//                             does so by itself when oversubscribed; explicit)
// If the kernel or a container's seccomp profile forbids process_vm_readv, the
// vader BTL's single-copy path (CMA) fails at the first large message; the run
// is then repeated once with --mca btl_vader_single_copy_mechanism none.
// mpirun still needs the loopback interface: Open MPI's PMIx server listens on
// 127.0.0.1 for its own ranks (a network namespace with lo down cannot run it).
#include "mpi_reference.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/process.h"

extern char** environ;

namespace weft::bench {
namespace {

using Clock = std::chrono::steady_clock;

using ChildRun = MpirunOutput;

bool executable_file(const std::string& path) {
    struct stat st {};
    return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

// SIGKILL every process left in the session the child started (the MPI ranks
// sit in their own process groups, but in mpirun's session).
void kill_session(pid_t sid) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
        const std::string name = entry.path().filename().string();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::ifstream in(entry.path() / "stat");
        std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        auto close_paren = s.rfind(')');
        if (close_paren == std::string::npos) continue;
        std::istringstream rest(s.substr(close_paren + 2));
        std::string state;
        long ppid = 0, pgrp = 0, session = 0;
        if (!(rest >> state >> ppid >> pgrp >> session)) continue;
        if (session == sid) kill(static_cast<pid_t>(std::stol(name)), SIGKILL);
    }
}

// fork/exec argv[0] (an absolute path) with env in a new session, stdin from
// /dev/null, stdout and stderr into pipes; stops it after timeout_sec.
// Returns false (and *error) only when it could not be started.
bool run_child(const std::vector<std::string>& args, const std::vector<std::string>& env, int timeout_sec,
               ChildRun* run, std::string* error) {
    // Everything the child needs is built before fork: the caller may have threads.
    std::vector<char*> argv, envp;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);

    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) != 0) {
        *error = std::string("pipe: ") + strerror(errno);
        return false;
    }
    if (pipe2(err, O_CLOEXEC) != 0) {
        *error = std::string("pipe: ") + strerror(errno);
        close(out[0]), close(out[1]);
        return false;
    }
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    const pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        *error = std::string("fork: ") + strerror(errno);
        for (int fd : {out[0], out[1], err[0], err[1], devnull})
            if (fd >= 0) close(fd);
        return false;
    }
    if (pid == 0) {
        // mpirun must not outlive the benchmark, whatever stops it; on SIGTERM
        // it takes its ranks down with it.
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent) _exit(127);
        sigset_t none;  // the caller may block signals (signalfd); mpirun must not inherit that
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        signal(SIGPIPE, SIG_DFL);
        signal(SIGCHLD, SIG_DFL);
        setsid();  // its own session: a terminal's Ctrl-C goes to the benchmark only
        if (devnull >= 0) dup2(devnull, 0);
        dup2(out[1], 1);
        dup2(err[1], 2);
        close_range(3, ~0U, 0);
        execve(argv[0], argv.data(), envp.data());
        dprintf(2, "cannot start %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(out[1]);
    close(err[1]);
    if (devnull >= 0) close(devnull);

    const auto deadline = Clock::now() + std::chrono::seconds(timeout_sec);
    auto hard_deadline = Clock::time_point::max();
    bool out_open = true, err_open = true, exited = false;
    auto exit_time = Clock::time_point::max();
    char buf[65536];
    while (!(exited && ((!out_open && !err_open) || Clock::now() > exit_time + std::chrono::seconds(2)))) {
        if (!exited) {
            pid_t r = waitpid(pid, &run->status, WNOHANG);
            if (r < 0 && errno == ECHILD) run->status = 0xff00;  // reaped elsewhere: report exit 255
            if (r == pid || (r < 0 && errno == ECHILD)) {
                exited = true;
                exit_time = Clock::now();
                continue;
            }
        }
        const auto now = Clock::now();
        if (!exited && !run->timed_out && now >= deadline) {
            run->timed_out = true;
            kill(pid, SIGTERM);
            hard_deadline = now + std::chrono::seconds(10);
        }
        if (!exited && now >= hard_deadline && !run->killed_hard) {
            run->killed_hard = true;
            kill_session(pid);
            kill(pid, SIGKILL);
        }
        pollfd fds[2];
        int nfds = 0;
        if (out_open) fds[nfds++] = {out[0], POLLIN, 0};
        if (err_open) fds[nfds++] = {err[0], POLLIN, 0};
        if (nfds == 0) {
            usleep(20000);
            continue;
        }
        if (poll(fds, nfds, 100) < 0 && errno != EINTR) break;
        for (int i = 0; i < nfds; ++i) {
            if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            ssize_t n = read(fds[i].fd, buf, sizeof buf);
            if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
            bool is_out = fds[i].fd == out[0];
            if (n <= 0) {
                (is_out ? out_open : err_open) = false;
                continue;
            }
            std::string& dst = is_out ? run->out : run->err;
            dst.append(buf, static_cast<size_t>(n));
            if (!is_out && dst.size() > 65536) dst.erase(0, dst.size() - 65536);
        }
    }
    if (!exited) waitpid(pid, &run->status, 0);
    // A rank that outlived mpirun (it should not) would keep the session alive.
    kill_session(pid);
    close(out[0]);
    close(err[0]);
    return true;
}

// The last few informative lines of mpirun's stderr, on one line. When a rank
// failed, what it said comes before mpirun's "Primary job terminated normally,
// but 1 process returned a non-zero exit code" banner: that part is kept.
std::string stderr_tail(const std::string& err, size_t max_lines = 6) {
    std::string text = err;
    auto banner = text.find("Primary job  terminated normally");
    if (banner == std::string::npos) banner = text.find("mpirun detected that one or more processes exited");
    if (banner != std::string::npos && text.substr(0, banner).find_first_not_of("-\n\r \t") != std::string::npos)
        text = text.substr(0, banner) + "\n(a rank exited with non-zero status)";
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        auto b = line.find_first_not_of(" \t\r");
        if (b == std::string::npos) continue;
        line = line.substr(b);
        while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
        if (line.find_first_not_of("-=*") == std::string::npos) continue;  // banner rules
        lines.push_back(line);
    }
    if (lines.size() > max_lines) lines.erase(lines.begin(), lines.end() - static_cast<long>(max_lines));
    std::string s;
    for (const auto& l : lines) s += (s.empty() ? "" : " | ") + l;
    return s.empty() ? "(no output on stderr)" : s;
}

std::string describe_status(int status) {
    if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) return std::string("signal ") + strsignal(WTERMSIG(status));
    return "status " + std::to_string(status);
}

bool cma_failed(const std::string& err) {
    // vader's process_vm_readv/writev path: "Read %ld, expected %lu, errno = %d";
    // or its check of the user namespaces.
    return (err.find(", expected ") != std::string::npos && err.find("errno = ") != std::string::npos) ||
           err.find("CMA support is") != std::string::npos;
}

// Known ways mpirun fails here, in words a benchmark reader can act on.
std::string explain_failure(const std::string& err) {
    if (err.find("listener thread failed") != std::string::npos)
        return "Open MPI could not open its local listener socket (is the loopback interface up? "
               "mpirun needs 127.0.0.1 even for one machine)";
    if (err.find("attempt to run as root") != std::string::npos) return "Open MPI refused to run as root";
    if (err.find("not enough slots") != std::string::npos) return "mpirun found not enough slots";
    if (err.find("No such file or directory") != std::string::npos && err.find("execve") != std::string::npos)
        return "mpirun could not start the program";
    return {};
}

std::vector<MpiPoint> parse_points(const std::string& out) {
    std::vector<MpiPoint> points;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);) {
        auto b = line.find('{');
        if (b == std::string::npos) continue;
        auto j = nlohmann::json::parse(line.substr(b), nullptr, /*allow_exceptions=*/false);
        if (!j.is_object() || !j.contains("bytes") || !j.contains("time_us")) continue;
        if (!j["bytes"].is_number() || !j["time_us"].is_number()) continue;
        MpiPoint p{};
        p.bytes = j.value("bytes", uint64_t{0});
        p.time_us = j.value("time_us", 0.0);
        p.algbw_gbs = j.value("algbw_gbs", 0.0);
        p.busbw_gbs = j.value("busbw_gbs", 0.0);
        p.wrong = j.value("wrong", uint64_t{0});
        points.push_back(p);
    }
    return points;
}

void set_env(std::vector<std::string>* env, const std::string& name, const std::string& value) {
    const std::string prefix = name + "=";
    for (auto& e : *env)
        if (e.compare(0, prefix.size(), prefix) == 0) {
            e = prefix + value;
            return;
        }
    env->push_back(prefix + value);
}

}  // namespace

std::string find_mpirun() { return find_program("mpirun"); }

bool MpirunOutput::ok() const { return !timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0; }

bool run_mpirun(const std::vector<std::string>& program_args, int ranks, int timeout_sec, bool verbose,
                MpirunOutput* run, std::string* why) {
    const std::string mpirun = find_mpirun();
    if (mpirun.empty()) {
        *why = "mpirun not found on PATH: install openmpi-bin";
        return false;
    }
    std::vector<std::string> env;
    for (char** e = environ; e && *e; ++e) env.emplace_back(*e);
    const bool root = geteuid() == 0;
    if (root) {
        set_env(&env, "OMPI_ALLOW_RUN_AS_ROOT", "1");
        set_env(&env, "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    }
    for (int attempt = 0; attempt < 2; ++attempt) {
        std::vector<std::string> args = {mpirun};
        if (root) args.push_back("--allow-run-as-root");
        for (const char* a : {"--oversubscribe", "--bind-to", "none", "--mca", "pml", "ob1", "--mca", "btl",
                              "self,vader", "--mca", "osc", "^ucx", "--mca", "mpi_yield_when_idle", "1"})
            args.emplace_back(a);
        if (attempt == 1)
            for (const char* a : {"--mca", "btl_vader_single_copy_mechanism", "none"}) args.emplace_back(a);
        args.insert(args.end(), {"-np", std::to_string(ranks)});
        args.insert(args.end(), program_args.begin(), program_args.end());
        if (verbose) {
            std::string cmd;
            for (const auto& a : args) cmd += (cmd.empty() ? "" : " ") + a;
            std::fprintf(stderr, "mpi reference: %s\n", cmd.c_str());
        }
        *run = MpirunOutput{};
        std::string error;
        if (!run_child(args, env, timeout_sec, run, &error)) {
            *why = "cannot start mpirun: " + error;
            return false;
        }
        if (attempt == 0 && !run->ok() && !run->timed_out && cma_failed(run->err)) {
            if (verbose) std::fprintf(stderr, "mpi reference: CMA single-copy failed, retrying without it\n");
            continue;
        }
        break;
    }
    return true;
}

std::string mpirun_failure(const MpirunOutput& run, int timeout_sec) {
    if (run.timed_out)
        return "mpirun did not finish within " + std::to_string(timeout_sec) + " s and was killed" +
               (run.killed_hard ? " (SIGKILL)" : "");
    const std::string known = explain_failure(run.err);
    return "mpirun failed (" + describe_status(run.status) + ")" + (known.empty() ? "" : ": " + known) +
           "; stderr: " + stderr_tail(run.err);
}

std::vector<MpiPoint> run_mpi_allreduce(const std::string& program, int ranks, uint64_t min_bytes, uint64_t max_bytes,
                                        int factor, std::string* why) {
    return run_mpi_allreduce(program, ranks, min_bytes, max_bytes, factor, MpiRunOptions{}, why);
}

std::vector<MpiPoint> run_mpi_allreduce(const std::string& program, int ranks, uint64_t min_bytes, uint64_t max_bytes,
                                        int factor, const MpiRunOptions& options, std::string* why) {
    std::string scratch;
    if (!why) why = &scratch;
    why->clear();
    if (ranks < 1 || factor < 2 || min_bytes < 4 || max_bytes < min_bytes) {
        *why = "bad arguments: need ranks >= 1, factor >= 2, 4 <= min_bytes <= max_bytes";
        return {};
    }
    if (find_mpirun().empty()) {
        *why = "mpirun not found on PATH: install openmpi-bin";
        return {};
    }
    if (!executable_file(program)) {
        *why = "MPI all-reduce program " + (program.empty() ? std::string("(none given)") : program) +
               " not found or not executable: build it with mpicxx (needs libopenmpi-dev)";
        return {};
    }
    std::string abs_program = program;
    {
        std::error_code ec;
        auto a = std::filesystem::absolute(program, ec);
        if (!ec) abs_program = a.string();
    }
    size_t expected = 0;
    for (uint64_t b = min_bytes;; b *= static_cast<uint64_t>(factor)) {
        ++expected;
        if (b > max_bytes / static_cast<uint64_t>(factor)) break;
    }

    MpirunOutput run;
    std::vector<std::string> program_args = {abs_program,
                                             "--min",
                                             std::to_string(min_bytes),
                                             "--max",
                                             std::to_string(max_bytes),
                                             "--factor",
                                             std::to_string(factor),
                                             "--dtype",
                                             options.dtype};
    if (options.iters > 0) program_args.insert(program_args.end(), {"--iters", std::to_string(options.iters)});
    if (options.warmup >= 0) program_args.insert(program_args.end(), {"--warmup", std::to_string(options.warmup)});
    if (!run_mpirun(program_args, ranks, options.timeout_sec, options.verbose, &run, why)) return {};

    std::vector<MpiPoint> points = parse_points(run.out);
    const std::string done = std::to_string(points.size()) + " of " + std::to_string(expected) + " sizes done";
    if (!run.ok()) {
        *why = mpirun_failure(run, options.timeout_sec) + "; " + done;
    } else if (points.size() < expected) {
        *why = "mpirun succeeded but reported " + done + "; stderr: " + stderr_tail(run.err);
    }
    return points;
}

}  // namespace weft::bench
