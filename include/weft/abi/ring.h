// Single-producer / single-consumer command ring shared by a chip's firmware
// (producer) and weft-bridge (consumer). Each index word has exactly one writer:
// guest atomics are not atomic against a host process under every TCG mode, so
// nothing here is ever read-modify-written by both sides.
#pragma once
#include <stdint.h>

namespace weft::abi {

enum RingError : uint32_t {
    kRingOk = 0,
    kRingBadAddress = 1,  // a command named memory outside the chip
    kRingBadOpcode = 2,
    kRingBadLength = 3,
    kRingLinkDown = 4,  // an Ethernet command on a port with no live link
    kRingBadArgument = 5,
};

template <typename Command, uint32_t Slots>
struct CommandRing {
    static_assert((Slots & (Slots - 1)) == 0, "slot count must be a power of two");
    static constexpr uint32_t kSlots = Slots;

    // Written by the producer (firmware) only.
    volatile uint32_t tail;       // commands issued so far
    volatile uint32_t reset_seq;  // bumped to ask the consumer to clear an error
    uint32_t producer_pad[14];
    // Written by the consumer (bridge) only.
    volatile uint32_t head;         // commands completed so far
    volatile uint32_t error;        // RingError of the first failed command, sticky until a reset
    volatile uint32_t error_index;  // its index
    volatile uint32_t reset_ack;    // reset_seq last honoured: error cleared, pending commands dropped
    uint32_t consumer_pad[12];
    Command slots[Slots];
};

}  // namespace weft::abi
