// One command to a QEMU over its QMP socket (the chips' <run dir>/chipN.qmp).
#pragma once
#include <string>

namespace weft::qmp {

// Connects, negotiates, sends `command` (a QMP JSON object) and returns the
// "return" line. Throws weft::Error naming `what` if QEMU refuses or does not
// answer within 5 s.
std::string execute(const std::string& socket, const std::string& command, const std::string& what);
// A human monitor command (e.g. "gdbserver tcp:127.0.0.1:1234") through QMP.
std::string human(const std::string& socket, const std::string& command_line);

}  // namespace weft::qmp
