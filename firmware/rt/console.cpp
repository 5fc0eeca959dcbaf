#include "rt/console.h"

#include "hal/mailbox.h"
#include "hal/uart.h"
#include "hal/wait.h"
#include "rt/address.h"

namespace weft::console {
namespace {

void put(char c) { uart::put(static_cast<uint8_t>(c)); }

void lock() {
    auto* word = const_cast<uint32_t*>(&mailbox::control().guest.console_lock);
    wait_until([&] { return __atomic_exchange_n(word, 1u, __ATOMIC_ACQUIRE) == 0; }, abi::kWaitWord, address_of(word),
               0, 100);
}
void unlock() { __atomic_store_n(const_cast<uint32_t*>(&mailbox::control().guest.console_lock), 0u, __ATOMIC_RELEASE); }

// Formats into buf; returns length. Kept tiny on purpose: kernels link it.
struct Out {
    char buf[256];
    unsigned n = 0;
    void c(char ch) {
        if (n < sizeof(buf) - 1) buf[n++] = ch;
    }
};

void number(Out& o, uint64_t v, unsigned base, bool neg, int width, char fill) {
    char tmp[24];
    int i = 0;
    do {
        unsigned d = v % base;
        tmp[i++] = static_cast<char>(d < 10 ? '0' + d : 'a' + d - 10);
        v /= base;
    } while (v);
    if (neg) tmp[i++] = '-';
    for (int pad = width - i; pad > 0; --pad) o.c(fill);
    while (i) o.c(tmp[--i]);
}

}  // namespace

void vprintf(const char* fmt, va_list ap) {
    Out o;
    for (const char* p = fmt; *p; ++p) {
        if (*p != '%') {
            o.c(*p);
            continue;
        }
        ++p;
        char fill = ' ';
        if (*p == '0') fill = '0', ++p;
        int width = 0;
        while (*p >= '0' && *p <= '9') width = width * 10 + (*p++ - '0');
        int longs = 0;
        while (*p == 'l') ++longs, ++p;
        switch (*p) {
            case 's': {
                const char* s = va_arg(ap, const char*);
                while (s && *s) o.c(*s++);
                break;
            }
            case 'c': o.c(static_cast<char>(va_arg(ap, int))); break;
            case 'd': {
                // long is a register wide: 32 bits on RV32, 64 on RV64.
                int64_t v = longs >= 2 ? va_arg(ap, long long) : longs ? va_arg(ap, long) : va_arg(ap, int);
                number(o, v < 0 ? uint64_t(-v) : uint64_t(v), 10, v < 0, width, fill);
                break;
            }
            case 'u':
            case 'x': {
                const uint64_t v = longs >= 2 ? va_arg(ap, unsigned long long)
                                   : longs    ? va_arg(ap, unsigned long)
                                              : va_arg(ap, unsigned);
                number(o, v, *p == 'u' ? 10 : 16, false, width, fill);
                break;
            }
            case 'p':
                o.c('0'), o.c('x');
                number(o, reinterpret_cast<uintptr_t>(va_arg(ap, void*)), 16, false, width, fill);
                break;
            case '%': o.c('%'); break;
            default: o.c('?'); break;
        }
        if (!*p) break;
    }
    o.buf[o.n] = 0;
    write(o.buf);
}

void printf(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
}

static void put_tag() {
    for (const char* t = "[core "; *t; ++t) put(*t);
    const uint32_t core = mailbox::core_id();
    if (core >= 10) put(static_cast<char>('0' + core / 10 % 10));
    put(static_cast<char>('0' + core % 10));
    put(']');
    put(' ');
}

// Each line starts with its core ("[core 3] "): `weft console --core 3` keeps
// one core's lines of the chip's one UART.
void write(const char* s) {
    lock();
    for (bool line_start = true; *s; ++s) {
        if (line_start) put_tag();
        if (*s == '\n') put('\r');
        put(*s);
        line_start = *s == '\n';
    }
    unlock();
}

}  // namespace weft::console
