#include "hal/cache.h"

namespace weft::cache {

// On silicon this is fence.i. Under QEMU, fence.i does not drop translated
// blocks, and QEMU only notices code changes made by the guest's own stores:
// the host loader's writes through shared memory are invisible to it. Storing
// each word back in place makes QEMU invalidate every translation of the range.
// This rewrites only the kernel's code, once per load of new code.
void invalidate_instructions(uint64_t base, uint64_t size) {
    volatile uint64_t* p = reinterpret_cast<volatile uint64_t*>(base & ~7ull);
    volatile uint64_t* end = reinterpret_cast<volatile uint64_t*>((base + size + 7) & ~7ull);
    for (; p < end; ++p) *p = *p;
    __asm__ volatile("fence.i" ::: "memory");
}

}  // namespace weft::cache
