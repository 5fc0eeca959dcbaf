// The ERISC data mover's configuration, as the host EDM builder writes it into
// the EDM core's L1 and the EDM kernel reads it (tt-metal's CCL developer guide, "ERISC Data Mover").
// Every address here was placed by the builder; nothing is chosen by hand.
#pragma once
#include <stdint.h>

#include "weft/abi/kernel_args.h"

namespace weft::abi {

inline constexpr uint32_t kEdmMagic = 0x4544'4d31;  // "EDM1"
inline constexpr uint32_t kEdmMaxChannels = 16;     // per link, both directions together
inline constexpr uint32_t kEdmMaxSlots = 64;
inline constexpr uint32_t kEdmMaxWorkers = 4;

enum EdmTermination : uint32_t {
    kEdmMessageCount = 0,     // each channel moves a fixed number of messages
    kEdmWorkerInitiated = 1,  // each channel runs until its workers say stop
};

// What a worker adds to the EDM's slot semaphore (EriscDataMoverWorkerSignal).
enum EdmWorkerSignal : uint32_t {
    kEdmNextMessageAvailable = 1,
    kEdmNextMessageIsLast = 2,  // this message (or this read) is the channel's last
    kEdmTerminateImmediately = 3,
};

enum EdmSharing : uint32_t {
    kEdmNotShared = 0,   // one worker per channel
    kEdmRoundRobin = 1,  // workers take the channel's messages in turn
    kEdmShared = 2,      // every worker sees every message; the EDM waits for all of them
};

enum EdmChannelRole : uint32_t { kEdmSender = 1, kEdmReceiver = 2 };
enum EdmReceiveMode : uint32_t { kEdmPull = 0, kEdmPush = 1 };

// Words the peer EDM writes into this EDM's L1 over the link (one writer each).
struct EdmLinkWords {
    volatile uint32_t handshake;                // peer's epoch, from the handshake initiator
    volatile uint32_t handshake_ack;            // peer's epoch, from the responder
    uint32_t pad[2];                            // the guide's 16-byte handshake address
    volatile uint32_t filled[kEdmMaxChannels];  // receiver channels: messages the peer sender has sent
    volatile uint32_t acked[kEdmMaxChannels];   // sender channels: messages the peer receiver has released
};
static_assert(sizeof(EdmLinkWords) == 16 + 8 * kEdmMaxChannels, "EdmLinkWords layout");

struct EdmWorker {
    uint64_t semaphore_base;  // slot i's semaphore in the worker's L1: + 4 * i
    uint64_t buffer_base;     // push mode: slot i's landing buffer in the worker's L1: + slot_size * i
};

struct EdmChannel {
    uint32_t id;    // link-wide: sender channel id on one end, receiver channel id on the other
    uint32_t role;  // EdmChannelRole
    uint32_t slots;
    uint32_t slot_size;      // bytes per message
    uint32_t message_count;  // kEdmMessageCount
    uint32_t sharing;        // EdmSharing
    uint32_t receive_mode;   // EdmReceiveMode (receivers)
    uint32_t num_workers;
    uint64_t buffer_base;     // slot i in this EDM's L1: + slot_size * i
    uint64_t semaphore_base;  // slot i's EDM semaphore in this EDM's L1: + 4 * i
    // Senders also keep slot i's message length there, at + 4 * (slots + i):
    // written by the worker before its signal, so only the message's bytes
    // cross the cable (0: the whole slot, as shared channels always send).
    uint64_t remote_buffer_base;  // senders: the peer receiver channel's slot 0
    // Receivers: a worker ends the channel here (kEdmTerminateImmediately). Not
    // on a slot semaphore: a slot may still owe a release when the worker stops.
    uint64_t control_semaphore;
    EdmWorker workers[kEdmMaxWorkers];
};
static_assert(sizeof(EdmChannel) == 64 + 16 * kEdmMaxWorkers, "EdmChannel layout");

// Written by the EDM while it runs, read by the host's hang report.
struct EdmChannelStatus {
    volatile uint32_t granted_or_delivered;  // sender: slots granted to workers; receiver: messages delivered
    volatile uint32_t taken;                 // sender: payloads taken from workers
    volatile uint32_t sent_or_released;      // sender: messages sent; receiver: slots released
    volatile uint32_t done;
};

struct EdmConfig {
    uint32_t magic;
    uint32_t port;
    uint32_t epoch;                // bumped per invocation: stale handshakes never match
    uint32_t termination;          // EdmTermination
    uint32_t handshake_initiator;  // 1: this end sends the handshake (the guide's rule, decided by the builder)
    uint32_t num_channels;
    uint64_t link_words;       // this EDM's EdmLinkWords
    uint64_t peer_link_words;  // the peer EDM's, in its L1
    uint32_t handshake_retry_us;
    // Offset 44. How long the EDM may wait on its cable while it is down
    // before it posts timeout and link-down events (chip, port, stuck
    // channel) and fails; 0: never. With the cable up it waits as long as the
    // host lets it: slow is not stuck.
    uint32_t progress_timeout_us;
    EdmChannel channels[kEdmMaxChannels];
    // Written by the EDM only.
    volatile uint32_t handshake_done;
    uint32_t pad2[3];
    EdmChannelStatus status[kEdmMaxChannels];
};

// What a worker kernel needs to talk to one EDM channel, from the builder.
struct EdmWorkerConnection {
    uint64_t edm_buffer_base;        // the channel's slot 0 in the EDM's L1
    uint64_t edm_semaphore_base;     // the channel's slot-0 semaphore in the EDM's L1
    uint64_t worker_semaphore_base;  // this worker's slot-0 semaphore in its own L1
    uint64_t worker_buffer_base;     // push receivers: this worker's slot-0 landing buffer
    uint32_t role;                   // EdmChannelRole of the EDM channel
    uint32_t receive_mode;           // EdmReceiveMode
    uint32_t slots;
    uint32_t slot_size;
    uint32_t first_message;  // round robin: this worker's first message, then every stride-th
    uint32_t message_stride;
    uint32_t termination;  // EdmTermination
    uint32_t pad;
    uint64_t edm_control_semaphore;  // receivers: where a worker ends the channel
};
static_assert(sizeof(EdmWorkerConnection) == 72, "EdmWorkerConnection layout");

// firmware/kernels/edm's arguments.
struct EdmArgs {
    uint64_t config;  // this EDM's EdmConfig, in its L1
};
static_assert(sizeof(EdmArgs) == 8 && kIsKernelArgs<EdmArgs>, "EdmArgs layout");

// The EDM worker kernels (firmware/kernels/edm_sender_worker,
// edm_receiver_worker): one worker may serve several channels, taking one
// message from each in turn so the channels run concurrently.
inline constexpr uint32_t kEdmWorkerMaxJobs = kEdmMaxChannels;

enum EdmJobFinish : uint32_t {
    kEdmJobPlain = 0,
    kEdmJobMarkLast = 1,   // its last message carries kEdmNextMessageIsLast
    kEdmJobTerminate = 2,  // terminate the channel after the pages
};

struct EdmWorkerJob {
    uint64_t connection;  // this worker's EdmWorkerConnection for the channel
    uint64_t base;        // page i at base + i * stride
    uint32_t page_size;
    uint32_t stride;
    uint32_t page_count;
    uint32_t finish;  // EdmJobFinish
};
static_assert(sizeof(EdmWorkerJob) == 32, "EdmWorkerJob layout");

struct EdmWorkerArgs {
    uint32_t job_count;
    uint32_t pad;
    EdmWorkerJob jobs[kEdmWorkerMaxJobs];
};
static_assert(sizeof(EdmWorkerArgs) == 8 + 32 * kEdmWorkerMaxJobs && kIsKernelArgs<EdmWorkerArgs>,
              "EdmWorkerArgs layout");

}  // namespace weft::abi
