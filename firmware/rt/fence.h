// Memory ordering between a producer and the device (or host) consuming what
// it published. Portable so the ring code also builds for the host tests.
#pragma once

namespace weft::rt {

// Order the descriptor stores before the index store that publishes them.
inline void publish_fence() {
#if defined(__riscv)
    __asm__ volatile("fence rw, w" ::: "memory");
#else
    __atomic_thread_fence(__ATOMIC_RELEASE);
#endif
}

// Order the index load before the loads of what it covers.
inline void acquire_fence() {
#if defined(__riscv)
    __asm__ volatile("fence r, rw" ::: "memory");
#else
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
#endif
}

}  // namespace weft::rt
