// How a chip type is started: qemu/<chip>.args, QEMU's arguments one option
// per line with ${NAME} placeholders the bridge fills in for each chip (the
// file documents the format and the names). Read once when the cluster
// starts, so a missing or malformed file stops `weft up` before any QEMU runs.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace weft {

class QemuConfig {
public:
    // The placeholders the bridge fills in (all of them required but QEMU_ACCEL).
    static const std::vector<std::string>& placeholders();

    // Throws weft::Error "PATH:LINE: ..." for a malformed file, or naming the
    // file and the placeholder it leaves out.
    static QemuConfig parse(const std::string& text, const std::string& path);
    // Reads and parses; a missing file is an error naming it.
    static QemuConfig load(const std::string& path);

    // The arguments with the placeholders replaced by `values` (by name); an
    // unset value takes the file's default, if it gives one.
    std::vector<std::string> args(const std::map<std::string, std::string>& values) const;
    const std::string& path() const { return path_; }

private:
    struct Piece {
        bool placeholder = false;
        std::string text;  // literal text, or the placeholder's name
        bool has_default = false;
        std::string fallback;  // ${NAME:-fallback}
    };
    struct Arg {
        int line = 0;
        std::vector<Piece> pieces;
    };
    class Parser;

    std::string path_;
    std::vector<Arg> args_;
};

}  // namespace weft
