// Host EDM builder (tt-metal's CCL developer guide, "Host CCL Op Builder Components"): describe one
// Ethernet link's channels once, and get back both ends' EDM configurations
// and every worker's connection, with all buffers and semaphores placed by the
// builder in the cores' L1.
//
//   transport::L1Allocator mem(board);
//   transport::EdmLinkBuilder link(mem, board, {0, E}, {1, W}, options);
//   auto& ch = link.add_sender_channel(0, {4}, messages);   // workers on chip 0 send ...
//   link.add_receiver_channel(ch.id, {5});                   // ... to workers on chip 1
//   link.write(cluster);
//   cluster.run({link.edm_launch(0), link.edm_launch(1), link.sender_worker(ch.id, 0, ...), ...});
#pragma once
#include <stdint.h>

#include <functional>
#include <string>
#include <vector>

#include "driver/chip_writer.h"
#include "driver/cluster.h"
#include "driver/cluster_file.h"
#include "transport/l1_allocator.h"
#include "weft/abi/edm.h"

namespace weft::transport {

struct EdmOptions {
    abi::EdmTermination termination = abi::kEdmMessageCount;
    abi::EdmSharing sharing = abi::kEdmNotShared;
    abi::EdmReceiveMode receive_mode = abi::kEdmPull;
    uint32_t slots = 4;              // buffers per channel
    uint32_t slot_size = 16 * 1024;  // bytes per message (4-16 KiB is where links run well)
    uint32_t handshake_retry_us = 200;
    // An EDM that cannot move for this long with its cable down posts a
    // timeout event naming its port and stuck channel and fails (0: waits
    // forever). Long enough for a flapping cable; short of the drivers' op
    // deadlines. A busy host never trips it: the cable must be down.
    uint32_t progress_timeout_us = 5'000'000;
    uint32_t epoch = 0;  // 0: the next value of a process-wide counter
};

struct WorkerInterface {
    uint32_t chip = 0, core = 0;
    uint64_t connection = 0;  // its abi::EdmWorkerConnection, in its L1: the worker kernel's argument
    abi::EdmWorkerConnection info{};
};

struct ChannelInterface {
    uint32_t id = 0;
    int from_end = 0;  // messages go from this end to the other
    uint32_t message_count = 0;
    uint64_t eth_buffer_address = 0;     // sender end: slot 0 of the channel in the sending EDM's L1
    uint64_t eth_semaphore_address = 0;  // sender end: slot 0's semaphore there
    std::vector<WorkerInterface> senders, receivers;
};

class EdmLinkBuilder {
public:
    EdmLinkBuilder(L1Allocator& mem, const BoardInfo& board, PortRef a, PortRef b, EdmOptions options = {});

    // A channel carrying messages from end `from_end` (0: a, 1: b), fed by
    // worker cores on that end's chip. Creates the matching receiver channel
    // at the other end. Throws weft::Error if it does not fit.
    ChannelInterface add_sender_channel(int from_end, const std::vector<uint32_t>& worker_cores,
                                        uint32_t message_count = 0);
    // The workers on the receiving chip that drain channel `id`.
    ChannelInterface add_receiver_channel(uint32_t id, const std::vector<uint32_t>& worker_cores);

    // tt-metal's CCL developer guide: the end with sender channels starts the handshake; if both
    // have some, the end holding the lowest sender channel id.
    int handshake_initiator() const;
    const abi::EdmConfig& config(int end) const;  // final once every channel has its receivers
    uint64_t config_address(int end) const { return end_[end].config_address; }
    uint32_t erisc_core(int end) const { return end_[end].core; }
    const PortRef& port(int end) const { return end_[end].port; }
    const ChannelInterface& channel(uint32_t id) const { return channels_.at(id); }
    size_t channels() const { return channels_.size(); }

    // Writes the EDM configurations and worker connections into chip memory
    // and clears every semaphore. Checks the description is complete.
    void write(ChipWriter& memory) const;

    Launch edm_launch(int end) const;
    static constexpr uint32_t kMaxJobWorkers = abi::kEdmMaxWorkers;
    uint32_t pages_per_message(uint32_t page_size) const { return options_.slot_size / page_size; }

    // One worker's part in one channel: page_count pages of page_size bytes at
    // base + i * stride, then `finish` (abi::EdmJobFinish).
    struct WorkerJob {
        uint32_t channel = 0, worker = 0;
        uint64_t base = 0;
        uint32_t page_size = 0, stride = 0, page_count = 0, finish = abi::kEdmJobPlain;
    };
    // The worker kernels (firmware/kernels/edm_*_worker): one core may serve
    // several channels, all jobs must name workers on the same core.
    Launch sender_worker(const std::vector<WorkerJob>& jobs) const;
    Launch receiver_worker(const std::vector<WorkerJob>& jobs) const;

private:
    struct End {
        PortRef port;
        uint32_t core = 0;
        uint64_t config_address = 0;
        uint64_t link_words = 0;
        abi::EdmConfig config{};
    };
    WorkerInterface make_worker(uint32_t chip, uint32_t core, const abi::EdmChannel& edm_channel, uint32_t index,
                                uint32_t count, const std::string& what);
    void check_complete() const;
    Launch worker_launch(const std::vector<WorkerJob>& jobs, bool sender) const;

    L1Allocator& mem_;
    const BoardInfo& board_;
    EdmOptions options_;
    End end_[2];
    std::vector<ChannelInterface> channels_;
};

}  // namespace weft::transport
