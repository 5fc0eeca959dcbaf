// A cluster's run directory holds its control socket, logs and consoles:
// whoever can write into it controls the cluster. So, as sshd treats its own
// files, it must be a real directory (not a link), owned by the user who
// runs the cluster, and closed to everyone else; and files in it are opened
// without following links, so a link planted there cannot redirect a write.
#pragma once
#include <string>
#include <vector>

namespace weft::run_dir {

// Creates `dir` (mode 0700) or checks the existing one; throws weft::Error
// naming the problem and the way out. Returns true if it created it.
bool prepare(const std::string& dir);
// Opens `path` for writing, truncated, mode 0600, refusing a symbolic link;
// returns the fd or throws weft::Error naming the file.
int open_log(const std::string& path);

// The lock a cluster's bridge holds for its whole life (RUN_DIR/bridge.lock,
// the bridge's pid written in it): one cluster per run directory, and a way
// to find its bridge when its control socket is gone. Takes the lock and
// returns its fd (close-on-exec); throws weft::Error naming the holder's pid
// if a bridge holds it.
int take_lock(const std::string& dir);
// Records `pid` as the lock's holder (the bridge, after its fork).
void write_holder(int lock_fd, int pid);
// The pid of the bridge holding the lock of `dir`, or 0 if nobody holds it.
int holder(const std::string& dir);
// Waits up to timeout_ms for the lock of `dir` to be free (its bridge gone);
// true once it is.
bool wait_released(const std::string& dir, int timeout_ms);

// The run directory of a temporary cluster a process starts beside `base`
// (`base`-tmpPID), and the removal of those whose process is gone without
// shutting them down (killed): owned by this user, no bridge holding their
// lock, their process gone. Returns the directories removed.
std::string temporary(const std::string& base, int pid);
std::vector<std::string> remove_stale_temporaries(const std::string& base);

}  // namespace weft::run_dir
