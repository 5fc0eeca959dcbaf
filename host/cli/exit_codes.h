// weft's exit codes, one scheme for every command (weft --help and the
// README list them).
#pragma once
#include "common/error.h"

namespace weft::cli {

enum ExitCode : int {
    kOk = 0,
    kFailed = 1,  // the operation failed, or the data it moved or computed came back wrong
    kUsage = 2,   // the command line or a WEFT_* variable is wrong
};

inline constexpr const char* kExitCodesHelp =
    "Exit codes:\n"
    "  0  success\n"
    "  1  the operation failed (no cluster up, the cluster refused it, a kernel faulted or timed out)\n"
    "     or the data it moved or computed came back wrong\n"
    "  2  usage: an unknown command or option, an option the command does not take, a missing or\n"
    "     extra argument, a value out of its range, or a bad WEFT_* variable ('weft help env')";

// A command line that parsed but does not make sense (-b above -e, an
// algorithm the op does not have): exit code 2, with the command's usage.
class UsageError : public Error {
public:
    using Error::Error;
};

}  // namespace weft::cli
