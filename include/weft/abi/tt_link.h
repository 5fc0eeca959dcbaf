// A TT-link frame on the wire between two chips' Ethernet MACs (the TT-Fabric architecture spec,
// "TT-link mode"): a 16-byte header, the payload, and a CRC-32 trailer.
//
//   | TtLinkHeader (16) | payload (header.length bytes) | TtLinkTrailer (4) |
//
// Every field is little-endian, the byte order of both the host and the RISC-V
// chips. The trailer's CRC-32 is Ethernet's FCS (IEEE 802.3, reflected) over
// the header and the payload. The same framing is used in compliance mode,
// where only dst, length and the DATA flag mean anything.
#pragma once
#include <stdint.h>

namespace weft::abi {

enum TtLinkFlags : uint16_t {
    kTtLinkData = 1,  // carries a payload for dst
    kTtLinkAck = 2,   // acknowledgement only, no payload
    // Link resynchronisation. Alone: a request; with kTtLinkAck: the answer.
    // Both carry the sender's rx_seq, which the peer takes as an exact ack.
    kTtLinkRetrain = 4,
};

struct TtLinkHeader {
    uint64_t dst;     // where the payload lands in the receiving chip's memory
    uint16_t tx_seq;  // this frame's sequence number (DATA); the sender's next or oldest otherwise
    uint16_t rx_seq;  // cumulative ack: the next sequence number the sender of this frame expects
    uint16_t length;  // payload bytes
    uint16_t flags;   // TtLinkFlags
};
static_assert(sizeof(TtLinkHeader) == 16, "TT-link header is 16 bytes on the wire");

struct TtLinkTrailer {
    uint32_t crc;  // CRC-32 of header + payload
};
static_assert(sizeof(TtLinkTrailer) == 4, "TT-link trailer is the 4-byte FCS");

inline constexpr uint32_t kTtLinkMaxPayload = 0xffff;  // what header.length can say

}  // namespace weft::abi
