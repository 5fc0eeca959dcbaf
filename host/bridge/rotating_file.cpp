#include "bridge/rotating_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.h"

namespace weft {

RotatingFile::RotatingFile(const std::string& path, uint64_t max_bytes) : path_(path), max_bytes_(max_bytes) {
    open_file();
}

RotatingFile::~RotatingFile() {
    if (file_) fclose(file_);
}

void RotatingFile::open_file() {
    const int fd = open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
    file_ = fd >= 0 ? fdopen(fd, "a") : nullptr;
    if (!file_) {
        if (fd >= 0) close(fd);
        throw Error("cannot open the log " + path_);
    }
    struct stat st {};
    written_ = fstat(fd, &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

void RotatingFile::append(const std::string& line) {
    if (written_ > 0 && written_ + line.size() > max_bytes_) {
        fclose(file_);
        file_ = nullptr;
        rename(path_.c_str(), (path_ + ".1").c_str());
        open_file();
    }
    fputs(line.c_str(), file_);
    fflush(file_);
    written_ += line.size();
}

}  // namespace weft
