// Source positions of firmware addresses, for fault reports: the function and
// file:line of a pc, read from the ELF's debug info by binutils' addr2line.
#pragma once
#include <stdint.h>

#include <string>

namespace weft {

// "kernel_main at firmware/kernels/foo.cpp:12": the innermost function and,
// where it was inlined, " inlined into " the outermost one (the function a
// backtrace would show); paths relative to the source tree. "" when the ELF
// has no line for it or the cross addr2line is not installed
// ($WEFT_ADDR2LINE names another).
std::string source_position(const std::string& elf, uint64_t addr);

}  // namespace weft
