#include "common/child_tool.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/error.h"

extern char** environ;

namespace weft {
namespace {

std::string not_installed(const ChildTool& tool) {
    return std::string(tool.program) + " is not installed; " + tool.purpose + " need Debian's " + tool.package +
           " (scripts/install-deps installs it)";
}

// The diagnostic is the tool's last lines; a script echo before them can run long.
std::string tail_of(std::string text, size_t max) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    if (text.size() > max) text = "..." + text.substr(text.size() - max);
    return text;
}

class SpawnSetup {
public:
    explicit SpawnSetup(int stderr_fd) {
        posix_spawn_file_actions_init(&files_);
        posix_spawn_file_actions_addopen(&files_, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_addopen(&files_, 1, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_adddup2(&files_, stderr_fd, 2);
        // Nothing else of ours: a cluster's sockets and chip memory stay with us.
        posix_spawn_file_actions_addclosefrom_np(&files_, 3);
        // The caller may block or ignore signals (a CLI that waits on a
        // signalfd); the child must still die of Ctrl-C and of a closed pipe.
        posix_spawnattr_init(&attr_);
        sigset_t none, defaults;
        sigemptyset(&none);
        sigemptyset(&defaults);
        for (int s : {SIGINT, SIGTERM, SIGPIPE, SIGHUP}) sigaddset(&defaults, s);
        posix_spawnattr_setsigmask(&attr_, &none);
        posix_spawnattr_setsigdefault(&attr_, &defaults);
        posix_spawnattr_setflags(&attr_, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    }
    ~SpawnSetup() {
        posix_spawn_file_actions_destroy(&files_);
        posix_spawnattr_destroy(&attr_);
    }
    SpawnSetup(const SpawnSetup&) = delete;
    SpawnSetup& operator=(const SpawnSetup&) = delete;

    const posix_spawn_file_actions_t* files() const { return &files_; }
    const posix_spawnattr_t* attr() const { return &attr_; }

private:
    posix_spawn_file_actions_t files_;
    posix_spawnattr_t attr_;
};

std::string read_all(int fd) {
    std::string out;
    char buf[4096];
    for (;;) {
        const ssize_t n = read(fd, buf, sizeof buf);
        if (n > 0) out.append(buf, size_t(n));
        else if (n == 0 || errno != EINTR)
            return out;
    }
}

int wait_for(pid_t pid, const char* program) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) throw Error(std::string("waiting for ") + program + ": " + std::strerror(errno));
    return status;
}

}  // namespace

void run_child_tool(const ChildTool& tool, const std::vector<std::string>& args) {
    const std::string program = tool.program;
    int err[2];
    if (pipe2(err, O_CLOEXEC) != 0) throw Error("pipe for " + program + ": " + std::strerror(errno));
    std::vector<char*> argv{const_cast<char*>(tool.program)};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);

    pid_t pid = -1;
    int rc;
    {
        const SpawnSetup setup(err[1]);
        rc = posix_spawnp(&pid, tool.program, setup.files(), setup.attr(), argv.data(), environ);
    }
    close(err[1]);
    if (rc != 0) {
        close(err[0]);
        if (rc == ENOENT) throw Error(not_installed(tool));
        throw Error("cannot start " + program + ": " + std::strerror(rc));
    }
    // The child's stderr is drained to EOF before the wait, so it never blocks on a full pipe.
    const std::string diagnostics = read_all(err[0]);
    close(err[0]);
    const int status = wait_for(pid, tool.program);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return;
    const std::string said = diagnostics.empty() ? "" : ":\n" + tail_of(diagnostics, 2000);
    if (WIFSIGNALED(status)) throw Error(program + " was killed by signal " + std::to_string(WTERMSIG(status)) + said);
    throw Error(program + " failed (exit status " + std::to_string(WEXITSTATUS(status)) + ")" + said);
}

}  // namespace weft
