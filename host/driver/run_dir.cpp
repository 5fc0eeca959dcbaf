#include "driver/run_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

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

int open_log(const std::string& path) {
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        throw Error("cannot open " + path + (errno == ELOOP ? ": it is a symbolic link" : std::string(": ") + strerror(errno)));
    return fd;
}

}  // namespace weft::run_dir
