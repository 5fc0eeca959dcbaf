// The few C++ runtime symbols freestanding code still needs (no libstdc++ here).
#include <stddef.h>

extern "C" void __cxa_pure_virtual() { __builtin_trap(); }
void operator delete(void*, size_t) noexcept {}
void operator delete(void*) noexcept {}
extern "C" int atexit(void (*)()) { return 0; }
