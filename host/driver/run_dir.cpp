#include "driver/run_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include <cstdio>
#include <cstdlib>

#include "common/error.h"

namespace weft::run_dir {
namespace {

std::string octal(mode_t m) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(m & 07777));
    return buf;
}

void check_private(const std::string& dir) {
    struct stat st;
    if (lstat(dir.c_str(), &st) != 0) throw Error("cannot look at run directory " + dir + ": " + strerror(errno));
    const std::string refuse = "refusing run directory " + dir + ": ";
    if (S_ISLNK(st.st_mode)) throw Error(refuse + "it is a symbolic link (remove it or set WEFT_RUN_DIR elsewhere)");
    if (!S_ISDIR(st.st_mode)) throw Error(refuse + "it is not a directory");
    if (st.st_uid != geteuid())
        throw Error(refuse + "it belongs to uid " + std::to_string(st.st_uid) + ", not to you (uid " +
                    std::to_string(geteuid()) + "); set WEFT_RUN_DIR to a directory of your own");
    if (st.st_mode & 077)
        throw Error(refuse + "its mode is " + octal(st.st_mode) + ", open to others (chmod 700 " + dir + ")");
}

}  // namespace

bool prepare(const std::string& dir) {
    if (dir.empty()) throw Error("the run directory is empty (WEFT_RUN_DIR?)");
    const bool created = mkdir(dir.c_str(), 0700) == 0;
    if (!created && errno != EEXIST) throw Error("cannot create run directory " + dir + ": " + strerror(errno));
    check_private(dir);
    return created;
}

namespace {

std::string lock_path(const std::string& dir) { return dir + "/bridge.lock"; }

int read_pid(int fd) {
    char buf[24] = {};
    const ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    return n > 0 ? std::atoi(buf) : 0;
}

}  // namespace

int take_lock(const std::string& dir) {
    const std::string path = lock_path(dir);
    const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) throw Error("cannot open " + path + ": " + strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        const int pid = read_pid(fd);
        close(fd);
        throw Error("a cluster is already up (or starting) in " + dir + ": weft-bridge pid " + std::to_string(pid) +
                    " holds " + path + "; 'weft down' stops it, or set WEFT_RUN_DIR for another cluster");
    }
    return fd;
}

void write_holder(int lock_fd, int pid) {
    const std::string text = std::to_string(pid) + "\n";
    if (ftruncate(lock_fd, 0) != 0 || pwrite(lock_fd, text.data(), text.size(), 0) != ssize_t(text.size())) {
        // The lock still works without the pid; only 'weft down' of an orphan needs it.
    }
}

int holder(const std::string& dir) {
    const int fd = open(lock_path(dir).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return 0;
    int pid = 0;
    if (flock(fd, LOCK_SH | LOCK_NB) != 0) pid = read_pid(fd);  // held: someone's bridge runs
    else
        flock(fd, LOCK_UN);
    close(fd);
    return pid;
}

bool wait_released(const std::string& dir, int timeout_ms) {
    for (int waited = 0; holder(dir) != 0; waited += 10) {
        if (waited >= timeout_ms) return false;
        usleep(10000);
    }
    return true;
}

std::string temporary(const std::string& base, int pid) { return base + "-tmp" + std::to_string(pid); }

std::vector<std::string> remove_stale_temporaries(const std::string& base) {
    const std::filesystem::path b(base);
    const std::string prefix = b.filename().string() + "-tmp";
    std::vector<std::string> removed;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(b.parent_path(), ec)) {
        const std::string name = e.path().filename().string();
        if (name.rfind(prefix, 0) != 0) continue;
        const std::string digits = name.substr(prefix.size());
        if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 9)
            continue;
        struct stat st {};
        if (lstat(e.path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) continue;
        const int pid = std::stoi(digits);
        if ((kill(pid, 0) == 0 || errno != ESRCH) || holder(e.path().string()) != 0) continue;
        std::filesystem::remove_all(e.path(), ec);
        if (!ec) removed.push_back(e.path().string());
    }
    return removed;
}

int open_log(const std::string& path) {
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        throw Error("cannot open " + path +
                    (errno == ELOOP ? ": it is a symbolic link" : std::string(": ") + strerror(errno)));
    return fd;
}

}  // namespace weft::run_dir
