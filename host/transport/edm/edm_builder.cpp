#include "transport/edm/edm_builder.h"

#include <atomic>
#include <chrono>

#include "common/error.h"
#include "driver/kernel_args.h"
#include "transport/edm/edm_wait.h"

namespace weft::transport {
namespace {

uint32_t next_epoch() {
    // Distinct per invocation, and unlikely to repeat across processes on the same cluster.
    static std::atomic<uint32_t> counter{
        static_cast<uint32_t>(std::chrono::steady_clock::now().time_since_epoch().count() & 0x7fffffff) | 1u};
    return counter.fetch_add(1);
}

// A sender channel keeps each slot's message length after its semaphores (abi::EdmChannel).
uint64_t semaphore_bytes(const abi::EdmChannel& ch) { return 4ull * ch.slots * (ch.role == abi::kEdmSender ? 2 : 1); }

std::string where(const PortRef& p, const BoardInfo& b) {
    return "chip " + std::to_string(p.chip) + " port " + port_name(b, p.port);
}

}  // namespace

EdmLinkBuilder::EdmLinkBuilder(L1Allocator& mem, const BoardInfo& board, PortRef a, PortRef b, EdmOptions options)
    : mem_(mem), board_(board), options_(options) {
    register_edm_wait_decoder();
    if (options_.epoch == 0) options_.epoch = next_epoch();
    if (options_.slots == 0 || options_.slots > abi::kEdmMaxSlots)
        throw Error("EDM slots per channel must be 1.." + std::to_string(abi::kEdmMaxSlots));
    if (options_.slot_size == 0 || options_.slot_size % 16)
        throw Error("EDM packet size must be a positive multiple of 16 bytes");
    const PortRef ends[2] = {a, b};
    for (int e = 0; e < 2; ++e) {
        End& end = end_[e];
        end.port = ends[e];
        if (ends[e].port >= board.ports.size()) throw Error(where(ends[e], board) + " does not exist");
        end.core = board.ports[ends[e].port].core;
        end.config_address = mem_.allocate(ends[e].chip, end.core, sizeof(abi::EdmConfig), 64, "EDM configuration");
        end.link_words = mem_.allocate(ends[e].chip, end.core, sizeof(abi::EdmLinkWords), 16, "EDM link words");
        abi::EdmConfig& c = end.config;
        c.magic = abi::kEdmMagic;
        c.port = ends[e].port;
        c.epoch = options_.epoch;
        c.termination = options_.termination;
        c.link_words = end.link_words;
        c.handshake_retry_us = options_.handshake_retry_us;
        c.progress_timeout_us = options_.progress_timeout_us;
    }
    for (int e = 0; e < 2; ++e) end_[e].config.peer_link_words = end_[1 - e].link_words;
}

WorkerInterface EdmLinkBuilder::make_worker(uint32_t chip, uint32_t core, const abi::EdmChannel& ch, uint32_t index,
                                            uint32_t count, const std::string& what) {
    if (core >= board_.cores.size() || board_.cores[core].role != CoreRole::kWorker)
        throw Error("core " + std::to_string(core) + " is not a worker core of board " + board_.name);
    WorkerInterface w;
    w.chip = chip;
    w.core = core;
    w.connection = mem_.allocate(chip, core, sizeof(abi::EdmWorkerConnection), 64, what + " connection");
    abi::EdmWorkerConnection& i = w.info;
    i.edm_buffer_base = ch.buffer_base;
    i.edm_semaphore_base = ch.semaphore_base;
    i.edm_control_semaphore = ch.control_semaphore;
    i.worker_semaphore_base = mem_.allocate(chip, core, 4ull * ch.slots, 16, what + " semaphores");
    if (ch.role == abi::kEdmReceiver && ch.receive_mode == abi::kEdmPush)
        i.worker_buffer_base = mem_.allocate(chip, core, uint64_t(ch.slots) * ch.slot_size, 64, what + " push buffers");
    i.role = ch.role;
    i.receive_mode = ch.receive_mode;
    i.slots = ch.slots;
    i.slot_size = ch.slot_size;
    i.termination = options_.termination;
    if (ch.sharing == abi::kEdmRoundRobin) {
        i.first_message = index;
        i.message_stride = count;
    } else {
        i.first_message = 0;
        i.message_stride = 1;
    }
    return w;
}

ChannelInterface EdmLinkBuilder::add_sender_channel(int from_end, const std::vector<uint32_t>& workers,
                                                    uint32_t message_count) {
    if (from_end != 0 && from_end != 1) throw Error("EDM channel end must be 0 or 1");
    if (channels_.size() >= abi::kEdmMaxChannels)
        throw Error("an EDM has at most " + std::to_string(abi::kEdmMaxChannels) + " channels per link");
    if (workers.empty() || workers.size() > abi::kEdmMaxWorkers)
        throw Error("an EDM channel takes 1.." + std::to_string(abi::kEdmMaxWorkers) + " workers per end");
    if (options_.sharing == abi::kEdmNotShared && workers.size() != 1)
        throw Error("buffer sharing 'not shared' takes exactly one worker per channel end");
    if (options_.sharing == abi::kEdmShared && options_.termination == abi::kEdmWorkerInitiated)
        throw Error("shared channels need message-count termination (their workers cannot each end the channel)");
    if (options_.termination == abi::kEdmMessageCount && message_count == 0)
        throw Error("message-count termination needs a message count for every channel");

    const uint32_t id = static_cast<uint32_t>(channels_.size());
    ChannelInterface ci;
    ci.id = id;
    ci.from_end = from_end;
    ci.message_count = message_count;
    abi::EdmChannel* made[2] = {};
    for (int side = 0; side < 2; ++side) {
        End& end = end_[side == 0 ? from_end : 1 - from_end];
        abi::EdmChannel& ch = end.config.channels[end.config.num_channels];
        ch.id = id;
        ch.role = side == 0 ? abi::kEdmSender : abi::kEdmReceiver;
        ch.slots = options_.slots;
        ch.slot_size = options_.slot_size;
        ch.message_count = message_count;
        ch.sharing = options_.sharing;
        ch.receive_mode = options_.receive_mode;
        const std::string what = std::string("EDM ") + (side == 0 ? "sender" : "receiver") + " channel " +
                                 std::to_string(id);
        ch.buffer_base =
            mem_.allocate(end.port.chip, end.core, uint64_t(ch.slots) * ch.slot_size, 64, what + " buffers");
        ch.semaphore_base = mem_.allocate(end.port.chip, end.core, semaphore_bytes(ch), 16, what + " semaphores");
        if (ch.role == abi::kEdmReceiver)
            ch.control_semaphore = mem_.allocate(end.port.chip, end.core, 4, 4, what + " control semaphore");
        made[side] = &ch;
        ++end.config.num_channels;
    }
    made[0]->remote_buffer_base = made[1]->buffer_base;
    made[0]->num_workers = static_cast<uint32_t>(workers.size());
    ci.eth_buffer_address = made[0]->buffer_base;
    ci.eth_semaphore_address = made[0]->semaphore_base;
    const uint32_t chip = end_[from_end].port.chip;
    for (uint32_t w = 0; w < workers.size(); ++w) {
        ci.senders.push_back(make_worker(chip, workers[w], *made[0], w, static_cast<uint32_t>(workers.size()),
                                         "EDM channel " + std::to_string(id) + " sender worker"));
        made[0]->workers[w].semaphore_base = ci.senders.back().info.worker_semaphore_base;
    }
    channels_.push_back(ci);
    return channels_.back();
}

ChannelInterface EdmLinkBuilder::add_receiver_channel(uint32_t id, const std::vector<uint32_t>& workers) {
    if (id >= channels_.size())
        throw Error("EDM channel " + std::to_string(id) + " was never added as a sender channel");
    ChannelInterface& ci = channels_[id];
    if (!ci.receivers.empty()) throw Error("EDM channel " + std::to_string(id) + " already has its receivers");
    if (workers.empty() || workers.size() > abi::kEdmMaxWorkers)
        throw Error("an EDM channel takes 1.." + std::to_string(abi::kEdmMaxWorkers) + " workers per end");
    if (options_.sharing == abi::kEdmNotShared && workers.size() != 1)
        throw Error("buffer sharing 'not shared' takes exactly one worker per channel end");
    End& end = end_[1 - ci.from_end];
    abi::EdmChannel* ch = nullptr;
    for (uint32_t i = 0; i < end.config.num_channels; ++i)
        if (end.config.channels[i].id == id) ch = &end.config.channels[i];
    ch->num_workers = static_cast<uint32_t>(workers.size());
    for (uint32_t w = 0; w < workers.size(); ++w) {
        ci.receivers.push_back(make_worker(end.port.chip, workers[w], *ch, w, static_cast<uint32_t>(workers.size()),
                                           "EDM channel " + std::to_string(id) + " receiver worker"));
        ch->workers[w].semaphore_base = ci.receivers.back().info.worker_semaphore_base;
        ch->workers[w].buffer_base = ci.receivers.back().info.worker_buffer_base;
    }
    return ci;
}

int EdmLinkBuilder::handshake_initiator() const {
    for (const ChannelInterface& ci : channels_) return ci.from_end;  // channel ids ascend: the first is the lowest
    return 0;
}

const abi::EdmConfig& EdmLinkBuilder::config(int end) const { return end_[end].config; }

void EdmLinkBuilder::check_complete() const {
    if (channels_.empty()) throw Error("EDM link " + where(end_[0].port, board_) + " has no channels");
    for (const ChannelInterface& ci : channels_)
        if (ci.receivers.empty())
            throw Error("EDM channel " + std::to_string(ci.id) + " has no receiver workers (add_receiver_channel)");
}

void EdmLinkBuilder::write(ChipWriter& memory) const {
    check_complete();
    const int initiator = handshake_initiator();
    for (int e = 0; e < 2; ++e) {
        abi::EdmConfig c = end_[e].config;
        c.handshake_initiator = e == initiator ? 1 : 0;
        const uint32_t chip = end_[e].port.chip;
        memory.write(chip, end_[e].config_address, &c, sizeof c);
        for (uint32_t i = 0; i < c.num_channels; ++i) {
            memory.clear(chip, c.channels[i].semaphore_base, semaphore_bytes(c.channels[i]));
            if (c.channels[i].control_semaphore) memory.clear(chip, c.channels[i].control_semaphore, 4);
        }
    }
    for (const ChannelInterface& ci : channels_) {
        for (const auto* list : {&ci.senders, &ci.receivers}) {
            for (const WorkerInterface& w : *list) {
                memory.write(w.chip, w.connection, &w.info, sizeof w.info);
                memory.clear(w.chip, w.info.worker_semaphore_base, 4ull * w.info.slots);
            }
        }
    }
}

Launch EdmLinkBuilder::edm_launch(int end) const {
    return {end_[end].port.chip, end_[end].core, &kernel_named(board_, "edm"),
            KernelArgWords::of(abi::EdmArgs{end_[end].config_address})};
}

Launch EdmLinkBuilder::worker_launch(const std::vector<WorkerJob>& jobs, bool sender) const {
    if (jobs.empty() || jobs.size() > abi::kEdmWorkerMaxJobs)
        throw Error("a worker serves 1.." + std::to_string(abi::kEdmWorkerMaxJobs) + " EDM channels");
    abi::EdmWorkerArgs args{};
    args.job_count = static_cast<uint32_t>(jobs.size());
    const WorkerInterface* first = nullptr;
    for (size_t k = 0; k < jobs.size(); ++k) {
        const WorkerJob& j = jobs[k];
        const ChannelInterface& ci = channels_.at(j.channel);
        const WorkerInterface& w = (sender ? ci.senders : ci.receivers).at(j.worker);
        if (first && (w.chip != first->chip || w.core != first->core))
            throw Error("jobs of one worker launch must all be on one core");
        if (!first) first = &w;
        if (j.page_size == 0 || j.page_size > w.info.slot_size)
            throw Error("page size " + std::to_string(j.page_size) + " does not fit the channel's " +
                        std::to_string(w.info.slot_size) + "-byte messages");
        args.jobs[k] = {w.connection, j.base, j.page_size, j.stride, j.page_count, j.finish};
    }
    return {first->chip, first->core, &kernel_named(board_, sender ? "edm_sender_worker" : "edm_receiver_worker"),
            KernelArgWords::of(args)};
}

Launch EdmLinkBuilder::sender_worker(const std::vector<WorkerJob>& jobs) const { return worker_launch(jobs, true); }
Launch EdmLinkBuilder::receiver_worker(const std::vector<WorkerJob>& jobs) const { return worker_launch(jobs, false); }

}  // namespace weft::transport
