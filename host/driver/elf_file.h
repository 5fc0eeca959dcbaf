// An ELF file open for reading with libelf, closed when it goes (the kernel
// loader and the firmware layout check read images through it).
#pragma once
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

namespace weft {

struct ElfFile {
    int fd = -1;
    Elf* elf = nullptr;
    ElfFile() = default;
    ElfFile(const ElfFile&) = delete;
    ElfFile& operator=(const ElfFile&) = delete;
    ~ElfFile() {
        if (elf) elf_end(elf);
        if (fd >= 0) close(fd);
    }
};

}  // namespace weft
