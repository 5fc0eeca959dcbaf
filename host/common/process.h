// Whether another process is still there to do its job, and how it ended.
#pragma once

#include <string>

namespace weft {

// A waitpid() status in words: "killed by signal Killed", "exited with status 1".
std::string describe_exit_status(int status);

// `pid` exists and is not a zombie (in a container nobody may reap a daemon
// that exited, so a zombie counts as gone).
bool process_running(int pid);

// Where `program` runs from: itself when it names a path, else the first
// executable regular file of that name on $PATH (or the usual bin folders
// without one); "" when there is none.
std::string find_program(const std::string& program);

}  // namespace weft
