// Ethernet command queue of a port (layer 2 of docs/architecture.md, "Links"). A port's
// commands are sent in order: a word sent after a buffer lands after it.
#pragma once
#include <stdint.h>

namespace weft::eth {

// Send len bytes from local src to address dst of the chip at the other end.
void send_bytes(uint32_t port, uint64_t src, uint64_t dst, uint32_t len);
// Write one 32-bit word at the peer's address dst.
void send_word(uint32_t port, uint64_t dst, uint32_t value);
// Commands issued / completed on the port so far: a command numbered i (the
// value of issued() before it was sent) has completed once completed() > i.
uint32_t issued(uint32_t port);
uint32_t completed(uint32_t port);
// Commands a port holds queued: with fewer outstanding, a send does not wait for room.
uint32_t queue_capacity();
// Room on the port's queue for `commands` more, so a send does not wait:
// firmware that must never block in a full queue (where no timeout of its
// own could run: the EDM, a fabric router) asks first.
inline bool has_room(uint32_t port, uint32_t commands) {
    return issued(port) - completed(port) + commands <= queue_capacity();
}
// Has command number `cmd` (issued()'s value before it was sent) completed? Counters wrap.
inline bool done(uint32_t port, uint32_t cmd) { return static_cast<int32_t>(completed(port) - cmd) > 0; }
void wait_tx_idle(uint32_t port);
bool link_up(uint32_t port);
// Panics (FAULT naming the port and command) if the port refused a command,
// e.g. because its link went down. Returns true so it can sit in a wait predicate.
bool check(uint32_t port);
// Clears a refused command, if there is one, so the port can be used again
// (boot firmware, between kernels); drop_queued also discards commands still
// queued (after a kernel that faulted or was stopped: a send on a pulled cable).
void recover(uint32_t port, bool drop_queued);

// Deprecated since 0.8, removed in 0.7 without notice and restored: the chip
// at the other end of the port's cable (the control block's port state).
[[deprecated("read the port's peer from the control block's PortState")]] uint32_t peer_chip(uint32_t port);
// Deprecated since 0.8: has the port commands still to send?
[[deprecated("use issued(port) != completed(port)")]] inline bool tx_busy(uint32_t port) {
    return issued(port) != completed(port);
}

}  // namespace weft::eth
