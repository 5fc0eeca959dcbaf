#include "common/process.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sstream>
#include <string>

namespace weft {

bool process_running(int pid) {
    if (pid <= 0 || kill(pid, 0) != 0) return false;
    FILE* f = fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r");
    if (!f) return false;
    char state = 0;
    const int n = fscanf(f, "%*d %*s %c", &state);
    fclose(f);
    return n == 1 && state != 'Z';
}

std::string describe_exit_status(int status) {
    if (WIFSIGNALED(status)) return std::string("killed by signal ") + strsignal(WTERMSIG(status));
    return "exited with status " + std::to_string(WEXITSTATUS(status));
}

namespace {

bool executable_file(const std::string& path) {
    struct stat st {};
    return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

}  // namespace

std::string find_program(const std::string& program) {
    if (program.find('/') != std::string::npos) return executable_file(program) ? program : "";
    const char* path = getenv("PATH");
    std::istringstream dirs(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
    for (std::string dir; std::getline(dirs, dir, ':');) {
        const std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
        if (executable_file(candidate)) return candidate;
    }
    return "";
}

}  // namespace weft
