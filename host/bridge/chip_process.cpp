#include "bridge/chip_process.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <vector>

#include "common/error.h"
#include "common/knobs.h"
#include "common/process.h"
#include "common/qmp.h"
#include "common/unix_socket.h"

namespace weft {

ChipProcess::ChipProcess(uint32_t id, const BoardInfo& board, const std::string& run_dir)
    : id_(id), board_(board), run_dir_(run_dir) {
    std::string name = "weft-chip" + std::to_string(id);
    memfd_ = memfd_create(name.c_str(), MFD_CLOEXEC);
    if (memfd_ < 0) throw Error("memfd_create: " + std::string(strerror(errno)));
    if (ftruncate(memfd_, static_cast<off_t>(board.ram.size)) != 0)
        throw Error("cannot size chip " + std::to_string(id) + " memory: " + strerror(errno));
    void* p = mmap(nullptr, board.ram.size, PROT_READ | PROT_WRITE, MAP_SHARED, memfd_, 0);
    if (p == MAP_FAILED) throw Error("cannot map chip " + std::to_string(id) + " memory: " + strerror(errno));
    mem_ = ChipMemory{static_cast<uint8_t*>(p), board.ram.base, board.ram.size};
}

ChipProcess::~ChipProcess() {
    if (alive()) terminate(1000);
    if (mem_.host) munmap(mem_.host, mem_.size);
    if (uart_fd_ >= 0) close(uart_fd_);
    if (console_fd_ >= 0) close(console_fd_);
    if (memfd_ >= 0) close(memfd_);
}

std::string ChipProcess::qmp_path() const { return run_dir_ + "/chip" + std::to_string(id_) + ".qmp"; }
std::string ChipProcess::console_path() const { return run_dir_ + "/chip" + std::to_string(id_) + ".console"; }
std::string ChipProcess::qemu_log_path() const { return run_dir_ + "/chip" + std::to_string(id_) + ".qemu.log"; }

void ChipProcess::spawn(const std::string& qemu, const QemuConfig& config, const std::string& boot_firmware) {
    // QEMU opens its RAM through /proc/self/fd: the memfd is inherited, no file exists.
    const int child_fd = 200;  // high, so it cannot collide with the log or stdio descriptors
    const int child_uart = 201;
    const std::string accel = knobs::text(knobs::knob("WEFT_QEMU_ACCEL"));
    std::vector<std::string> args = config.args({
        {"RAM_MB", std::to_string(board_.ram.size >> 20)},
        {"RAM_FD", std::to_string(child_fd)},
        {"HARTS", std::to_string(board_.cores.size())},
        {"BOOT_ELF", boot_firmware},
        {"UART_FD", std::to_string(child_uart)},
        {"QMP_SOCKET", qmp_path()},
        {"QEMU_ACCEL", accel},
    });
    args.insert(args.begin(), qemu);
    int uart_pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, uart_pair) != 0)
        throw Error("socketpair for chip " + std::to_string(id_) + "'s UART: " + strerror(errno));
    uart_fd_ = uart_pair[0];
    fcntl(uart_fd_, F_SETFL, O_NONBLOCK);
    console_fd_ = open(console_path().c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int log = open(qemu_log_path().c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    pid_t pid = fork();
    if (pid < 0) throw Error("fork: " + std::string(strerror(errno)));
    if (pid == 0) {
        // QEMU must not outlive the bridge, whatever kills it.
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        // Guest back-off naps are tens of µs; the default 50 µs timer slack would double them.
        prctl(PR_SET_TIMERSLACK, 1000UL);
        sigset_t none;  // the bridge blocks its signals for signalfd; QEMU must not inherit that
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        if (getppid() == 1) _exit(127);
        if (memfd_ == child_fd) fcntl(child_fd, F_SETFD, 0);
        else
            dup2(memfd_, child_fd);  // dup2 clears close-on-exec on the copy
        dup2(uart_pair[1], child_uart);
        int devnull = open("/dev/null", O_RDONLY);
        dup2(devnull, 0);
        if (log >= 0) {
            dup2(log, 1);
            dup2(log, 2);
        }
        setpgid(0, 0);  // a Ctrl-C on the terminal reaches the bridge, which stops the chips in order
        execvp(argv[0], argv.data());
        dprintf(2, "cannot start %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    if (log >= 0) close(log);
    close(uart_pair[1]);
    pid_ = pid;
}

void ChipProcess::ring_doorbell(uint32_t cores) {
    abi::doorbell_post(control().bells, cores);
    // One byte is a ring; if the socket is full, rings are already pending
    // and the core that takes the next one finds these cores in the mask.
    if (uart_fd_ >= 0) (void)!write(uart_fd_, &abi::kDoorbellByte, 1);
}

void ChipProcess::drain_uart() {
    char buf[4096];
    while (uart_fd_ >= 0) {
        ssize_t n = read(uart_fd_, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return;  // EAGAIN: nothing more
        if (n == 0) {       // QEMU is gone
            close(uart_fd_);
            uart_fd_ = -1;
            return;
        }
        ssize_t text = 0;
        for (ssize_t i = 0; i < n; ++i)
            if (buf[i] != 0) buf[text++] = buf[i];
        if (text && console_fd_ >= 0) (void)!write(console_fd_, buf, text);
    }
}

void ChipProcess::mark_exited(int status) {
    exited_ = true;
    exit_status_ = status;
    unlink(qmp_path().c_str());  // a QEMU that crashed leaves its socket
}

void ChipProcess::reset() {
    if (!alive())
        throw Error("chip " + std::to_string(id_) + " is not running (" + describe_exit() +
                    "): a reset restarts a chip's cores, not its QEMU; weft down and weft up start the cluster again");
    qmp::execute(qmp_path(), R"({"execute":"system_reset"})", "system_reset");
}

std::string ChipProcess::describe_exit() const {
    if (!exited_) return "running";
    return describe_exit_status(exit_status_);
}

void ChipProcess::terminate(int grace_ms) {
    if (!alive()) return;
    kill(pid_, SIGTERM);
    for (int waited = 0; waited <= grace_ms; waited += 10) {
        int st;
        pid_t r = waitpid(pid_, &st, WNOHANG);
        if (r == pid_ || (r < 0 && errno == ECHILD)) {
            mark_exited(r == pid_ ? st : 0);
            return;
        }
        timespec ts{0, 10 * 1000 * 1000};
        nanosleep(&ts, nullptr);
    }
    kill(pid_, SIGKILL);
    int st = 0;
    waitpid(pid_, &st, 0);
    mark_exited(st);
}

}  // namespace weft
