#include "common/process.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

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

}  // namespace weft
