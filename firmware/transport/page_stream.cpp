#include "transport/page_stream.h"

#include "hal/mailbox.h"
#include "hal/math.h"
#include "hal/noc.h"
#include "weft/abi/fault.h"

namespace weft::transport {
namespace {

// Walks the bytes of a page run in order, a contiguous segment at a time.
class PageCursor {
public:
    explicit PageCursor(const Pages& p) : p_(p) {}
    uint64_t remaining() const { return p_.bytes() - done_; }
    // Calls f(address, length) for the next `bytes` bytes.
    template <typename F>
    void take(uint32_t bytes, F f) {
        while (bytes > 0) {
            const uint32_t seg = p_.page_size - offset_ < bytes ? static_cast<uint32_t>(p_.page_size - offset_) : bytes;
            f(p_.base + page_ * p_.stride + offset_, seg);
            bytes -= seg;
            done_ += seg;
            offset_ += seg;
            if (offset_ == p_.page_size) {
                offset_ = 0;
                ++page_;
            }
        }
    }

private:
    Pages p_;
    uint64_t page_ = 0, offset_ = 0;
    uint64_t done_ = 0;
};

uint32_t next_message(const Channel& c, const PageCursor& cur) {
    return cur.remaining() < c.max_message() ? static_cast<uint32_t>(cur.remaining()) : c.max_message();
}

uint32_t element_size(uint32_t dtype) { return dtype == abi::kBF16 || dtype == abi::kF16 ? 2 : 4; }

}  // namespace

void stream_send(Channel& c, const Pages& src) {
    PageCursor cur(src);
    while (cur.remaining() > 0) {
        const uint32_t n = next_message(c, cur);
        uint64_t into = c.acquire();
        cur.take(n, [&](uint64_t from, uint32_t len) {
            noc::async_write(from, into, len);
            into += len;
        });
        c.release(n);  // queued after the writes on the same ring: lands after the payload
    }
}

void stream_receive(Channel& c, const Pages& dst) {
    PageCursor cur(dst);
    while (cur.remaining() > 0) {
        const uint32_t n = next_message(c, cur);
        uint64_t from = c.acquire();
        cur.take(n, [&](uint64_t to, uint32_t len) {
            noc::async_read(from, to, len);
            from += len;
        });
        c.release(n);  // after the reads on the same ring: the sender refills the room only then
    }
}

void copy_pages(const Pages& src, const Pages& dst) {
    PageCursor from(src), to(dst);
    // Walk both runs together: each source segment may span destination pages.
    while (from.remaining() > 0) {
        const uint64_t left = from.remaining();
        const uint32_t n = left > 0xffffffffull ? 0xffffffffu : static_cast<uint32_t>(left);
        from.take(n, [&](uint64_t s, uint32_t len) {
            to.take(len, [&](uint64_t d, uint32_t part) {
                noc::async_write(s, d, part);
                s += part;
            });
        });
    }
}

void reduce_pages(const Pages& src, const Pages& dst, uint32_t op, uint32_t dtype) {
    if (dst.count > 1 && dst.stride != dst.page_size) mailbox::panic(abi::kPanicBadArgs, dst.stride);
    if (src.count > 1 && src.stride != src.page_size) mailbox::panic(abi::kPanicBadArgs, src.stride);
    const uint64_t bytes = dst.bytes();
    const uint32_t esize = element_size(dtype);
    if (src.bytes() != bytes || bytes % esize || bytes / esize > 0xffffffffull)
        mailbox::panic(abi::kPanicBadArgs, bytes);
    // Earlier NoC writes of this core into either run must land before the math engine reads them.
    noc::barrier();
    math::eltwise(static_cast<abi::MathOp>(op), static_cast<abi::DataType>(dtype), dst.base, src.base, dst.base,
                  static_cast<uint32_t>(bytes / esize));
}

void stream_receive_reduce(Channel& c, const Pages& with, const Pages& dst, uint32_t op, uint32_t dtype) {
    if (dst.count > 1 && dst.stride != dst.page_size) mailbox::panic(abi::kPanicBadArgs, dst.stride);
    if (with.count > 1 && with.stride != with.page_size) mailbox::panic(abi::kPanicBadArgs, with.stride);
    const uint32_t esize = element_size(dtype);
    // Earlier NoC writes of this core into dst or with must land before the math engine reads them.
    noc::barrier();
    uint64_t at = dst.base, left = uint64_t(dst.page_size) * dst.count;
    if (with.count > 0 && uint64_t(with.page_size) * with.count != left)
        mailbox::panic(abi::kPanicBadArgs, with.page_size);
    uint64_t other = with.count > 0 ? with.base : dst.base;
    while (left > 0) {
        const uint32_t n = left < c.max_message() ? static_cast<uint32_t>(left) : c.max_message();
        if (n % esize) mailbox::panic(abi::kPanicBadArgs, n);
        const uint64_t from = c.acquire();
        math::eltwise(static_cast<abi::MathOp>(op), static_cast<abi::DataType>(dtype), other, from, at, n / esize);
        // The room may be refilled only once the math engine has read it: the
        // release goes on the math ring behind the reduction, and we go on.
        c.release_after_math();
        at += n;
        other += n;
        left -= n;
    }
}

}  // namespace weft::transport
