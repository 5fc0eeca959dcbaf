#include "fabric_model/plan_traffic.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "ccl/algorithm_table.h"
#include "ccl/lowering.h"
#include "ccl/reference.h"
#include "common/error.h"
#include "driver/topology.h"
#include "fabric/connection.h"
#include "fabric_model/multicast_worker.h"
#include "fabric_model/timed_fabric.h"
#include "hal/math.h"
#include "hal/noc.h"
#include "transport/fabric/fabric_transport.h"

namespace weft::fabric_model {
namespace {

using transport::FabricDirection;

// Each chip's DRAM: the op's own buffers in its first 128 MiB, then the
// words the workers count in (what arrived on each stream, the credits back,
// the signals between workers) and the streams' rings of slots, below the
// 192 MiB a chip of a grid made in memory keeps (traffic.cpp).
constexpr uint64_t kOpBytes = 128ull << 20, kTopBytes = 64ull << 20;
constexpr uint64_t kArrived = 0, kCredits = 512 << 10, kSignals = 1 << 20, kMathDone = 3 << 19, kRings = 2 << 20;

struct StreamState {
    uint32_t from = 0, to = 0;  // chips
    uint32_t slots = 0, message = 0;
    uint64_t ring = 0;                  // slot i at ring + message * i, on `to`
    uint64_t arrived = 0, credits = 0;  // words on `to` and on `from`
    fabric::Route forth, back;
    FabricDirection forth_way{}, back_way{};
    uint32_t sent = 0, taken = 0;  // by its sender, by its receiver
};

// Calls f(address, bytes) for each contiguous run of [offset, offset + n) of `p`.
template <typename F>
void runs_of(const abi::Pages& p, uint64_t offset, uint64_t n, F f) {
    while (n) {
        const uint64_t page = offset / p.page_size, within = offset % p.page_size;
        const uint64_t len = std::min(n, p.page_size - within);
        f(p.base + page * p.stride + within, len);
        offset += len, n -= len;
    }
}

class ProgramWorker {
public:
    ProgramWorker(model::FabricModel& m, const ccl::WorkerProgram& p, std::vector<StreamState>& streams,
                  std::vector<int> stream_of, uint64_t top, uint32_t lane)
        : m_(m), p_(p), streams_(streams), stream_of_(std::move(stream_of)), top_(top), lane_(lane) {}

    bool step() {
        // A reduction's result (and the slot it read) is ready once the math engine counted it done.
        if (m_.word(p_.chip, math_done()) < math_issued_) return false;
        if (pc_ == p_.code.size()) return close_all();
        const abi::CclInstr& in = p_.code[pc_];
        switch (in.opcode) {
            case abi::kCclSend: return send(in);
            case abi::kCclRecv:
            case abi::kCclRecvReduce: return receive(in);
            case abi::kCclCopy: copy(in.src, in.dst); break;
            case abi::kCclReduce: reduce(in.src, in.dst, in.arg); break;
            case abi::kCclWait:
                if (m_.word(p_.chip, signal(p_.index, in.arg)) < in.count) return false;
                break;
            case abi::kCclSignal: noc::semaphore_inc(signal(in.arg, p_.index), 1); break;
            default: throw Error("the model does not know CCL opcode " + std::to_string(in.opcode));
        }
        ++pc_;
        return true;
    }
    bool done() const { return pc_ == p_.code.size() && closed_; }

private:
    uint64_t math_done() const { return top_ + kMathDone + 4 * uint64_t(p_.index); }
    uint64_t signal(uint32_t consumer, uint32_t producer) const {
        return top_ + kSignals + 4 * (uint64_t(consumer) * abi::kCclMaxProducers + producer);
    }
    StreamState& stream(const abi::CclInstr& in) {
        if (in.channel >= stream_of_.size() || stream_of_[in.channel] < 0)
            throw Error("internal: a CCL instruction names channel " + std::to_string(in.channel) +
                        " its worker has no stream on");
        return streams_[size_t(stream_of_[in.channel])];
    }
    fabric::Connection& way(FabricDirection d) {
        auto it = ways_.find(d);
        if (it == ways_.end()) it = ways_.emplace(d, m_.connect(p_.chip, p_.core, d, lane_)).first;
        return it->second;
    }
    uint32_t message_of(const StreamState& s, uint64_t total) const {
        return uint32_t(std::min<uint64_t>(s.message, total - uint64_t(part_) * s.message));
    }
    bool next_part(uint64_t total, uint32_t message) {
        if (uint64_t(++part_) * message >= total) part_ = 0, ++pc_;
        return true;
    }

    // One message into the receiver's next slot, once a credit says it is free.
    bool send(const abi::CclInstr& in) {
        StreamState& s = stream(in);
        const uint64_t total = in.src.bytes();
        if (!in.src.contiguous()) throw Error("the model sends contiguous buffers only (no --shape)");
        fabric::Connection& c = way(s.forth_way);
        if (s.sent - m_.word(s.from, s.credits) >= s.slots || c.room() == 0) return false;
        const uint32_t n = message_of(s, total);
        c.write(s.forth, s.ring + uint64_t(s.message) * (s.sent % s.slots), in.src.base + uint64_t(part_) * s.message,
                n, s.arrived, 1);
        ++s.sent;
        return next_part(total, s.message);
    }

    // The next message out of its slot into place, and the slot's credit back.
    bool receive(const abi::CclInstr& in) {
        StreamState& s = stream(in);
        const uint64_t total = in.dst.bytes();
        fabric::Connection& c = way(s.back_way);
        if (!reduced_ && (m_.word(s.to, s.arrived) <= s.taken || c.room() == 0)) return false;
        const uint32_t n = message_of(s, total);
        uint64_t from = s.ring + uint64_t(s.message) * (s.taken % s.slots);
        if (in.opcode == abi::kCclRecvReduce && !reduced_) {
            // The slot is credited back once the math engine has read it: on a later step.
            const uint64_t at = contiguous(in.dst) + uint64_t(part_) * s.message;
            const uint64_t with = (in.src.count ? contiguous(in.src) : in.dst.base) + uint64_t(part_) * s.message;
            eltwise(in.arg, with, from, at, n);
            reduced_ = true;
            return true;
        }
        if (reduced_) {
            reduced_ = false;
        } else {
            runs_of(in.dst, uint64_t(part_) * s.message, n, [&](uint64_t at, uint64_t len) {
                noc::async_write(from, at, uint32_t(len));
                from += len;
            });
        }
        c.atomic_inc(s.back, s.credits, 1);  // after the copy on this core's NoC queue
        ++s.taken;
        return next_part(total, s.message);
    }

    void copy(const abi::Pages& src, const abi::Pages& dst) {
        const uint64_t total = std::min(src.bytes(), dst.bytes());
        for (uint64_t off = 0; off < total;) {
            const uint64_t len = std::min(src.page_size - off % src.page_size, dst.page_size - off % dst.page_size);
            const uint64_t n = std::min(len, total - off);
            noc::async_write(src.base + off / src.page_size * src.stride + off % src.page_size,
                             dst.base + off / dst.page_size * dst.stride + off % dst.page_size, uint32_t(n));
            off += n;
        }
    }

    // dst = dst op src, as the firmware's reduce_pages.
    void reduce(const abi::Pages& src, const abi::Pages& dst, uint32_t arg) {
        eltwise(arg, contiguous(dst), contiguous(src), dst.base, std::min(src.bytes(), dst.bytes()));
    }

    // [at, at + bytes) = a op b on the chip's math engine, as the firmware
    // reduces (arg: abi::ccl_reduce_arg's). The
    // engine counts it done in math_done(), and step() goes on only then, so
    // the slot read may be credited back and a signal after it counts the
    // result (the firmware orders these on the math ring instead).
    void eltwise(uint32_t arg, uint64_t a, uint64_t b, uint64_t at, uint64_t bytes) {
        const auto dtype = static_cast<abi::DataType>(abi::ccl_reduce_dtype(arg));
        const uint32_t esize = ccl::dtype_size(dtype);
        if (bytes % esize)
            throw Error("internal: a reduction of " + std::to_string(bytes) + " bytes of " + ccl::dtype_name(dtype) +
                        " cuts an element");
        noc::barrier();  // earlier copies into a or b have landed
        math::eltwise(static_cast<abi::MathOp>(abi::ccl_reduce_op(arg)), dtype, a, b, at, uint32_t(bytes / esize));
        math::semaphore_inc(math_done(), 1);
        ++math_issued_;
    }

    static uint64_t contiguous(const abi::Pages& p) {
        if (p.count > 1 && p.stride != p.page_size) throw Error("the model reduces contiguous buffers only");
        return p.base;
    }

    // Every packet freed before its connection closes: closing must not wait.
    bool close_all() {
        if (closed_) return false;
        for (auto& [d, c] : ways_)
            if (c.packets() && c.room() < c.slots()) return false;
        for (auto& [d, c] : ways_)
            if (c.packets()) c.close();
        closed_ = true;
        return true;
    }

    model::FabricModel& m_;
    const ccl::WorkerProgram& p_;
    std::vector<StreamState>& streams_;
    std::vector<int> stream_of_;  // by channel
    uint64_t top_;
    uint32_t lane_;
    std::map<FabricDirection, fabric::Connection> ways_;
    size_t pc_ = 0;
    uint32_t part_ = 0;         // messages of the current send or receive done
    uint32_t math_issued_ = 0;  // reductions handed to the math engine
    bool reduced_ = false;      // the current receive's message is reduced; its credit is next
    bool closed_ = false;
};

constexpr uint32_t kStreamSlots = transport::FabricStreamOptions{}.slots;  // as weft run's fabric streams

fabric::Route route_of(const transport::FabricBuilder& f, uint32_t from, uint32_t to, FabricDirection* way) {
    const transport::FabricRoute r = f.route(from, to);
    fabric::Route out;
    out.dst = f.node(to);
    out.hops = uint8_t(r.hops);
    out.route = r.route;
    *way = r.direction;
    return out;
}

std::vector<StreamState> stream_states(model::FabricModel& m, const ccl::LoweredOp& op, uint32_t message,
                                       uint64_t top) {
    std::vector<StreamState> states(op.streams.size());
    std::map<uint32_t, uint32_t> incoming;  // chip -> streams into it so far
    for (size_t i = 0; i < op.streams.size(); ++i) {
        const ccl::Stream& x = op.streams[i];
        StreamState& s = states[i];
        s.from = x.chip, s.to = x.peer_chip, s.slots = kStreamSlots, s.message = message;
        s.ring = top + kRings + uint64_t(incoming[x.peer_chip]++) * kStreamSlots * message;
        s.arrived = top + kArrived + 4 * i;
        s.credits = top + kCredits + 4 * i;
        if (s.ring + uint64_t(kStreamSlots) * message > top + kTopBytes || 4 * i >= kCredits)
            throw Error("the model has no room for the streams of this op (" + std::to_string(op.streams.size()) + ")");
        s.forth = route_of(m.fabric(), s.from, s.to, &s.forth_way);
        s.back = route_of(m.fabric(), s.to, s.from, &s.back_way);
    }
    return states;
}

// Which stream each of a worker's channels is, as the runner wires them.
std::vector<int> streams_of(const ccl::LoweredOp& op, const ccl::WorkerProgram& p) {
    std::vector<int> of(p.ports.size(), -1);
    for (size_t i = 0; i < op.streams.size(); ++i) {
        const ccl::Stream& x = op.streams[i];
        const uint32_t channel = p.channel_of(p.receives ? x.peer_port : x.port);
        const bool mine = p.lane == x.lane && (p.receives ? p.chip == x.peer_chip : p.chip == x.chip);
        if (mine && channel < p.ports.size()) of[channel] = int(i);
    }
    return of;
}

ccl::LoweredOp lower_for(Simulation& sim, const ccl::OpRequest& r, const ccl::OpLayout& l, const Topology& topo,
                         uint32_t message) {
    const ccl::PlanContext ctx{r, l, topo, topo.ring_order(), topo.line_order(), ccl::CtringTuning{}};
    const ccl::Plan plan = ccl::build_plan(ctx, r.algo);
    ccl::LoweringOptions lo;
    lo.message_bytes = message;
    lo.piece_bytes = plan.piece_bytes ? plan.piece_bytes : uint64_t(kStreamSlots) * message;
    lo.element_size = l.element;
    lo.workers_per_link = 1;
    lo.planes = 1;
    lo.scratch = l.scratch;
    lo.reduce_arg = abi::ccl_reduce_arg(r.redop, r.dtype);
    return ccl::lower(plan, transport::FabricRouting(sim.model().fabric()),
                      sim.model().cluster().board().cores_with_role(CoreRole::kWorker), lo);
}

// The host reference's inputs on every chip, and poison in every output
// buffer (as weft run's check: a byte the op forgets to write fails).
ccl::OpData fill_inputs(model::FabricModel& m, const ccl::OpRequest& r, const ccl::OpLayout& l) {
    ccl::OpData data = ccl::make_inputs(r, l, 1);
    for (uint32_t rank = 0; rank < l.ranks; ++rank) {
        const abi::Pages in = l.input_of(rank), out = l.output_of(rank);
        if (!l.output_in_input) std::memset(m.bytes(rank, out.base, out.bytes()), 0x7f, out.bytes());
        std::memcpy(m.bytes(rank, in.base, in.bytes()), data.input[rank].data(), in.bytes());
    }
    return data;
}

// Every chip's output buffer. On MPI ranks a chip's bytes are those of the
// rank that ran it: each sends its own chips' to every rank, so that all of
// them check the same outputs and agree on the verdict.
std::vector<std::vector<uint8_t>> outputs(Simulation& sim, const ccl::OpLayout& l) {
    model::FabricModel& m = sim.model();
    TimedFabric& engine = sim.engine();
    std::vector<uint8_t> mine;
    for (uint32_t chip = 0; chip < l.ranks; ++chip) {
        if (!engine.owns(chip)) continue;
        const abi::Pages p = l.output_of(chip);
        const uint8_t* at = m.bytes(chip, p.base, p.bytes());
        mine.insert(mine.end(), reinterpret_cast<const uint8_t*>(&chip), reinterpret_cast<const uint8_t*>(&chip + 1));
        mine.insert(mine.end(), at, at + p.bytes());
    }
    const std::vector<uint8_t> all = from_every_rank(engine.ranks(), mine);
    std::vector<std::vector<uint8_t>> out(l.ranks);
    for (size_t at = 0; at < all.size();) {
        uint32_t chip;
        std::memcpy(&chip, all.data() + at, sizeof chip);
        at += sizeof chip;
        const size_t bytes = l.output_of(chip).bytes();
        out.at(chip).assign(all.data() + at, all.data() + at + bytes);
        at += bytes;
    }
    return out;
}

// "" when every chip's output is what the host reference computes.
std::string check_outputs(Simulation& sim, const ccl::OpRequest& r, const ccl::OpLayout& l, const ccl::OpData& in,
                          const std::vector<uint32_t>& ring) {
    const ccl::CheckResult res = ccl::check_outputs(r, l, in, outputs(sim, l), ring);
    if (res.wrong)
        return std::to_string(res.wrong) + " of " + std::to_string(res.checked) + " elements wrong, first " +
               res.first_wrong;
    return "";
}

// Inputs and outputs of every chip at once on the host: past this the op
// runs unchecked (a 512-chip all-reduce of 1 MiB would hold 1 GiB).
constexpr uint64_t kCheckedBytes = 256ull << 20;

}  // namespace

OpTime planned_collective(Simulation& sim, const std::string& op, const std::string& algo, uint64_t bytes) {
    model::FabricModel& m = sim.model();
    const Topology topo(m.cluster().topology());
    ccl::OpRequest r;
    r.op = ccl::parse_collective(op);
    r.bytes = bytes;
    const std::vector<std::string> fits = ccl::algorithms_on(r.op, topo.cluster());
    // The help names them as op/algorithm: either form is taken.
    const std::string prefix = ccl::collective_name(r.op) + "/";
    r.algo = algo.rfind(prefix, 0) == 0 ? algo.substr(prefix.size()) : algo;
    if (r.algo.empty() && !fits.empty()) r.algo = fits.front();
    const ccl::Algorithm* row = ccl::find_algorithm(r.op, r.algo);
    if (!row) {
        std::string own;
        for (const std::string& a : ccl::all_algorithms(r.op)) own += (own.empty() ? "" : ", ") + a;
        throw Error(op + " has no algorithm '" + algo + "'; its algorithms: " + own);
    }
    const BoardInfo& board = m.cluster().board();
    const ccl::OpLayout l = ccl::layout_op(r, sim.chips(), abi::Pages::run(board.dram.base, kOpBytes));
    const uint64_t top = board.dram.base + kOpBytes;
    const bool check = uint64_t(l.ranks) * (l.input_bytes + l.output_bytes) <= kCheckedBytes;
    const ccl::OpData inputs = check ? fill_inputs(m, r, l) : ccl::OpData{};
    ccl::LoweredOp lowered;  // the workers refer into these until the run ends
    std::vector<StreamState> streams;
    if (row->plan) {
        const uint32_t message = std::min(transport::FabricStreamOptions{}.message_bytes, sim.max_payload());
        lowered = lower_for(sim, r, l, topo, message);
        streams = stream_states(m, lowered, message, top);
        const std::vector<uint32_t> cores = board.cores_with_role(CoreRole::kWorker);
        for (const ccl::WorkerProgram& p : lowered.workers) {
            const uint32_t lane = uint32_t(std::find(cores.begin(), cores.end(), p.core) - cores.begin());
            auto w = std::make_shared<ProgramWorker>(m, p, streams, streams_of(lowered, p), top, lane);
            m.add_program(
                p.chip, p.core, [w] { return w->step(); }, [w] { return w->done(); });
        }
    } else {
        add_multicast_workers(m, r, l, top + kArrived);  // the fabric's own (multicast): no streams
    }
    const RunResult run = sim.finish();
    OpTime t{op, r.algo, sim.chips(), bytes, run.end_ns, run.events, "", sim.disruptions()};
    if (check) {
        const std::string wrong = check_outputs(sim, r, l, inputs, topo.ring_order());
        if (!wrong.empty()) throw Error(op + "/" + r.algo + " in the model: " + wrong);
        t.checked = "every element matches the host reference";
    }
    return t;
}

std::string planned_algorithms() {
    std::string out;
    for (const ccl::Algorithm& a : ccl::algorithm_table())
        out += (out.empty() ? "" : ", ") + ccl::collective_name(a.op) + "/" + a.name;
    return out;
}

}  // namespace weft::fabric_model
