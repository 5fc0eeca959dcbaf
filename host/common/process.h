// Whether another process is still there to do its job.
#pragma once

namespace weft {

// `pid` exists and is not a zombie (in a container nobody may reap a daemon
// that exited, so a zombie counts as gone).
bool process_running(int pid);

}  // namespace weft
