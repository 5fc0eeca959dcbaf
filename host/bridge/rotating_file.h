// An append-only log file that never grows past a size: the line that would
// pass it first moves the file to PATH.1 (replacing the older one) and starts
// PATH afresh, so the log keeps between one and two limits of the latest
// lines. Opened without following links, mode 0600; each line is flushed,
// so it survives a crash right after.
#pragma once
#include <stdint.h>

#include <cstdio>
#include <string>

namespace weft {

class RotatingFile {
public:
    RotatingFile(const std::string& path, uint64_t max_bytes);  // throws weft::Error naming the path
    ~RotatingFile();
    RotatingFile(const RotatingFile&) = delete;
    RotatingFile& operator=(const RotatingFile&) = delete;

    void append(const std::string& line);  // `line` ends in '\n'
    const std::string& path() const { return path_; }

private:
    void open_file();

    std::string path_;
    uint64_t max_bytes_;
    FILE* file_ = nullptr;
    uint64_t written_ = 0;  // bytes in the current file
};

}  // namespace weft
