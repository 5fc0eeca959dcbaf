#include "ccl/lowering.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <string>
#include <tuple>

#include "ccl/lanes.h"
#include "common/error.h"

namespace weft::ccl {
namespace {

enum Role : uint32_t { kSend = 0, kReceive = 1, kCopy = 2 };

// Which worker runs an op: its role, the port it serves (with planes shared,
// the first port to that neighbour stands for all of them) and its lane.
struct WorkerKey {
    uint32_t role, port, lane;
    bool operator<(const WorkerKey& o) const {
        return role != o.role ? role < o.role : port != o.port ? port < o.port : lane < o.lane;
    }
};

struct LowOp {
    uint32_t chip;
    WorkerKey key;
    uint32_t port = 0;  // a send or receive: the cable it uses
    abi::CclOpcode opcode;
    Pages src, dst;                   // a reduction's src: its other operand (empty: dst)
    bool reads_dst = false;          // a reduction reads what it overwrites
    uint64_t piece = 0;              // its piece's index in its transfer
    int direction = -1;              // a send or receive: the cable direction it uses (its lanes)
    int worker = -1;                 // index into the chip's workers
    std::map<int, size_t> deps;      // producer worker -> its latest op this one must follow
    std::map<int, uint32_t> signal;  // consumer worker -> number of this op's signal to it
    int partner_chip = -1;           // a receive: the send it drains
    size_t partner = 0;
    uint32_t depth = 0;  // ops on the longest chain of waits ending here
};

class ScratchRing {
public:
    explicit ScratchRing(Pages arena) : arena_(arena), next_(arena.base) {}
    Pages take(uint64_t len) {
        len = (len + 63) & ~uint64_t(63);
        if (len > arena_.bytes())
            throw Error("a forwarded piece of " + std::to_string(len) + " bytes does not fit the " +
                        std::to_string(arena_.bytes()) + "-byte scratch ring");
        if (next_ + len > arena_.base + arena_.bytes()) next_ = arena_.base;  // reuse waits on the old readers
        Pages s = Pages::run(next_, len);
        next_ += len;
        return s;
    }

private:
    Pages arena_;
    uint64_t next_;
};

bool reads_src(const LowOp& o) {
    return o.opcode == abi::kCclSend || o.opcode == abi::kCclCopy || o.opcode == abi::kCclRecvReduce ||
           o.opcode == abi::kCclReduce;
}

uint64_t lcm64(uint64_t a, uint64_t b) { return a / std::gcd(a, b) * b; }

// The later of two op indices, SIZE_MAX standing for none.
size_t later_of(size_t a, size_t b) { return a == SIZE_MAX ? b : b == SIZE_MAX ? a : std::max(a, b); }

// The runs of pages one worker's ops touched so far, by address, each with
// the op's index: which of them a new run overlaps is a look at the runs
// starting within the longest one's length below it, not a scan of every op.
class Footprint {
public:
    void add(const Pages& p, size_t op) {
        if (!p.bytes()) return;
        runs_.insert({p.base, {p, op}});
        longest_ = std::max(longest_, p.end() - p.base);
    }
    // The latest op whose run overlaps `p` (overlaps()), or SIZE_MAX.
    size_t latest_overlapping(const Pages& p) const {
        if (!p.bytes() || runs_.empty()) return SIZE_MAX;
        size_t latest = SIZE_MAX;
        const uint64_t from = p.base > longest_ ? p.base - longest_ : 0;
        for (auto it = runs_.lower_bound(from); it != runs_.end() && it->first < p.end(); ++it)
            if (overlaps(it->second.pages, p)) latest = later_of(latest, it->second.op);
        return latest;
    }

private:
    struct Run {
        Pages pages;
        size_t op;
    };
    std::multimap<uint64_t, Run> runs_;
    uint64_t longest_ = 0;
};

// One lowering attempt, phase by phase: route every piece into per-chip ops,
// hand the ops to workers (and lanes), give each link worker its channels,
// gather the streams, order the workers of each chip with signals, then
// measure the critical path and the planes used. planes: cables a hop stripes
// over at most; share_planes: one worker serves all the cables to a
// neighbour (a channel each) instead of one per cable.
class PlaneLowering {
public:
    PlaneLowering(const transport::Routing& routing, const std::vector<uint32_t>& worker_cores,
                  const LoweringOptions& opt, uint32_t planes, bool share_planes, bool fold = false)
        : routing_(routing),
          cores_(worker_cores),
          opt_(opt),
          planes_(planes),
          share_planes_(share_planes),
          fold_(fold),
          n_(routing.chips()),
          ops_(n_),
          scratch_(n_, ScratchRing(opt.scratch)),
          worker_of_(n_),
          first_worker_(n_) {}

    LoweredOp run(const Plan& plan) {
        std::vector<Transfer> order = plan.transfers;
        std::stable_sort(order.begin(), order.end(),
                         [](const Transfer& a, const Transfer& b) { return a.round < b.round; });
        for (size_t first = 0; first < order.size();) {
            size_t last = first;
            while (last < order.size() && order[last].round == order[first].round) ++last;
            route_round(order, first, last);
            first = last;
        }
        assign_lanes(fit_workers());
        assign_workers();
        give_channels();
        gather_streams();
        for (uint32_t c = 0; c < n_; ++c) order_chip(c);
        measure_critical_path();
        count_planes();
        return std::move(out_);
    }

private:
    uint64_t piece_size(const Transfer& x) const {
        uint64_t grain = lcm64(lcm64(x.src.grain(), x.dst.grain()), x.reduce ? opt_.element_size : 1);
        if (x.with.bytes()) grain = lcm64(grain, x.with.grain());
        if (x.src_chip == x.dst_chip) return x.src.bytes();  // a local copy is one NoC command stream
        // Striped over several cables, pieces are what the caller asked for
        // then (LoweringOptions::stripe_piece_bytes).
        // Tiny messages (a fabric of 64-byte packets) would cut a transfer
        // into so many pieces that planning alone takes minutes: a piece
        // then carries several messages.
        const uint64_t at_least = (x.src.bytes() + kMaxPieces - 1) / kMaxPieces;
        const uint64_t wanted = planes_ > 1 && opt_.stripe_piece_bytes ? opt_.stripe_piece_bytes : opt_.piece_bytes;
        return std::max(grain, std::max(wanted, at_least + grain - 1) / grain * grain);
    }
    static constexpr uint64_t kMaxPieces = 256;  // per transfer

    // Pieces of every transfer of a round, interleaved: piece k of all, then piece k + 1.
    void route_round(const std::vector<Transfer>& order, size_t first, size_t last) {
        std::vector<uint64_t> piece(last - first), pieces(last - first);
        uint64_t most = 0;
        for (size_t t = first; t < last; ++t) {
            piece[t - first] = piece_size(order[t]);
            pieces[t - first] = (order[t].src.bytes() + piece[t - first] - 1) / piece[t - first];
            most = std::max(most, pieces[t - first]);
        }
        for (uint64_t k = 0; k < most; ++k)
            for (size_t t = first; t < last; ++t)
                if (k < pieces[t - first]) route_piece(order[t], k, piece[t - first], pieces[t - first]);
    }

    void route_piece(const Transfer& x, uint64_t k, uint64_t piece, uint64_t pieces) {
        const uint64_t off = k * piece;
        const uint64_t len = std::min(piece, x.src.bytes() - off);
        const Pages src = cut(x.src, off, len), dst = cut(x.dst, off, len);
        if (x.src_chip == x.dst_chip) {
            if (x.reduce && x.with.bytes()) throw Error("internal: a local reduction with a third operand");
            push(x.src_chip, {kCopy, 0, 0}, x.reduce ? abi::kCclReduce : abi::kCclCopy, src, dst, x.reduce, k, -1);
            return;
        }
        const std::vector<Hop>& route = routing_.worker_hops(x.src_chip, x.dst_chip);
        Pages from = src;
        for (size_t h = 0; h < route.size(); ++h) {
            // Piece k crosses on cable k % planes of the hop's neighbours.
            const std::vector<Hop>& cables = routing_.parallel(route[h].from_chip, route[h].to_chip);
            const Hop hop = cables[k % std::min<size_t>(planes_, cables.size())];
            const bool final_hop = h + 1 == route.size();
            const Pages to = final_hop ? dst : cut(scratch_[hop.to_chip].take(len), 0, len);
            const bool reduce = final_hop && x.reduce;
            const Pages with = reduce && x.with.bytes() ? cut(x.with, off, len) : Pages{};
            add_hop(hop, cables, k, direction(hop, pieces), from, to, reduce, with);
            out_.bytes_on_links += len * routing_.cables_crossed(hop);
            from = to;
        }
    }

    // A send on the hop's source chip and the receive that drains it.
    void add_hop(const Hop& hop, const std::vector<Hop>& cables, uint64_t k, int dir, Pages from, Pages to, bool reduce,
                 Pages with) {
        // The worker's port: the cable's own, or with planes shared the first
        // cable's to this neighbour (parallel() is sorted by port).
        uint32_t send_key = routing_.worker_port(hop.from_chip, hop.from_port);
        uint32_t receive_key = routing_.worker_port(hop.to_chip, hop.to_port);
        if (share_planes_)
            for (const Hop& c : cables) {
                send_key = std::min(send_key, routing_.worker_port(c.from_chip, c.from_port));
                receive_key = std::min(receive_key, routing_.worker_port(c.to_chip, c.to_port));
            }
        push(hop.from_chip, {kSend, send_key, 0}, abi::kCclSend, from, Pages{}, false, k, dir);
        ops_[hop.from_chip].back().port = hop.from_port;
        push(hop.to_chip, {kReceive, receive_key, 0}, reduce ? abi::kCclRecvReduce : abi::kCclRecv, with, to,
             reduce && with.bytes() == 0, k, dir);
        LowOp& receive = ops_[hop.to_chip].back();
        receive.port = hop.to_port;
        receive.partner_chip = static_cast<int>(hop.from_chip);
        receive.partner = ops_[hop.from_chip].size() - 1;
        out_.hops++;
    }

    int direction(const Hop& hop, uint64_t pieces) {
        auto [it, fresh] =
            direction_of_.try_emplace({hop.from_chip, hop.from_port}, static_cast<int>(directions_.size()));
        if (fresh) directions_.push_back({hop.from_chip, hop.from_port, hop.to_chip, 0});
        directions_[it->second].pieces = std::max(directions_[it->second].pieces, pieces);
        return it->second;
    }

    void push(uint32_t chip, WorkerKey key, abi::CclOpcode code, Pages src, Pages dst, bool reads_dst, uint64_t piece,
              int dir) {
        created_.push_back({chip, ops_[chip].size()});
        LowOp o{};
        o.chip = chip;
        o.key = key;
        o.piece = piece;
        o.direction = dir;
        o.opcode = code;
        o.src = src;
        o.dst = dst;
        o.reads_dst = reads_dst;
        ops_[chip].push_back(o);
    }

    // Worker cores each chip needs before lanes: one per (role, port) it
    // uses, or one for copies alone. Folding (the last resort), a chip that
    // would need more than the board has gets a few senders, each serving
    // several ports, and as many receivers (as seed 003's pe0 serves every
    // neighbour): each worker still runs its ops in the one global order, so
    // no cycle of waits can form; the ports' traffic only takes turns.
    // Throws WorkerShortage past even that.
    std::vector<uint32_t> fit_workers() {
        std::vector<uint32_t> in_use(n_);
        for (uint32_t c = 0; c < n_; ++c) {
            in_use[c] = workers_needed(c);
            if (in_use[c] > cores_.size() && fold_) {
                fold_ports(c);
                in_use[c] = workers_needed(c);
            }
            if (in_use[c] > cores_.size())
                throw WorkerShortage("chip " + std::to_string(c) + " would need " + std::to_string(in_use[c]) +
                                     " worker cores (a sender and a receiver per port it uses) but the board has " +
                                     std::to_string(cores_.size()));
        }
        return in_use;
    }

    uint32_t workers_needed(uint32_t c) const {
        std::set<WorkerKey> keys;
        bool copies = false;
        for (const LowOp& o : ops_[c]) {
            if (o.key.role == kCopy) copies = true;
            else
                keys.insert(o.key);
        }
        return static_cast<uint32_t>(keys.size() + (copies && keys.empty() ? 1 : 0));
    }

    // Chip c's sends shared among half the board's worker cores and its
    // receives among the other half, ports dealt round in order (each group
    // keyed by its lowest port): four sending and four receiving ports on
    // four cores make two senders and two receivers, not one of each.
    void fold_ports(uint32_t c) {
        std::set<uint32_t> ports[2];
        for (const LowOp& o : ops_[c])
            if (o.key.role != kCopy) ports[o.key.role].insert(o.key.port);
        std::map<uint32_t, uint32_t> key_of[2];
        for (uint32_t role = 0; role < 2; ++role) {
            const std::vector<uint32_t> sorted(ports[role].begin(), ports[role].end());
            const size_t groups = std::max<size_t>(1, std::min(sorted.size(), cores_.size() / 2));
            for (size_t i = 0; i < sorted.size(); ++i) key_of[role][sorted[i]] = sorted[i % groups];
        }
        for (LowOp& o : ops_[c])
            if (o.key.role != kCopy) o.key.port = key_of[o.key.role].at(o.key.port);
    }

    // More lanes where spare cores allow (lanes.h): piece k takes lane k % lanes.
    void assign_lanes(const std::vector<uint32_t>& in_use) {
        const std::vector<uint32_t> lanes =
            choose_lanes(directions_, in_use, static_cast<uint32_t>(cores_.size()), opt_.workers_per_link);
        for (uint32_t c = 0; c < n_; ++c)
            for (LowOp& o : ops_[c])
                if (o.direction >= 0)
                    o.key.lane = static_cast<uint32_t>(o.piece % lanes[static_cast<size_t>(o.direction)]);
    }

    // A worker per (role, port, lane) a chip uses; copies get their own if a
    // core is still spare, else the first link worker does them.
    void assign_workers() {
        for (uint32_t c = 0; c < n_; ++c) {
            std::set<WorkerKey> keys;
            for (const LowOp& o : ops_[c]) keys.insert(o.key);
            std::vector<WorkerKey> link_keys;
            for (const WorkerKey& k : keys)
                if (k.role != kCopy) link_keys.push_back(k);
            const bool copies = keys.size() > link_keys.size();
            first_worker_[c] = out_.workers.size();
            for (const WorkerKey& k : link_keys) worker_of_[c][k] = add_worker(c, k);
            if (copies)
                worker_of_[c][{kCopy, 0, 0}] = link_keys.size() < cores_.size() ? add_worker(c, {kCopy, 0, 0})
                                                                                : worker_of_[c].at(link_keys.front());
            for (LowOp& o : ops_[c]) o.worker = worker_of_[c].at(o.key);
        }
    }

    int add_worker(uint32_t chip, WorkerKey k) {
        WorkerProgram w;
        w.chip = chip;
        w.index = static_cast<uint32_t>(out_.workers.size() - first_worker_[chip]);
        w.core = cores_[w.index];
        w.receives = k.role == kReceive;
        w.port = k.port;
        w.lane = k.lane;
        out_.workers.push_back(w);
        return static_cast<int>(w.index);
    }

    WorkerProgram& worker(uint32_t chip, int index) { return out_.workers[first_worker_[chip] + index]; }

    // Each link worker's cables, in channel order (sorted ports).
    void give_channels() {
        for (uint32_t c = 0; c < n_; ++c)
            for (const LowOp& o : ops_[c]) {
                if (o.direction < 0) continue;
                WorkerProgram& w = worker(c, o.worker);
                std::vector<uint32_t>& ports = w.ports;
                if (w.channel_of(o.port) == ports.size()) {  // a cable new to this worker
                    ports.insert(std::upper_bound(ports.begin(), ports.end(), o.port), o.port);
                    if (ports.size() > abi::kCclMaxChannels)
                        throw WorkerShortage("a worker on chip " + std::to_string(c) + " would serve " +
                                             std::to_string(ports.size()) + " streams, more than its " +
                                             std::to_string(abi::kCclMaxChannels) + " channels");
                }
                if (o.opcode != abi::kCclSend) receiver_of_[{c, o.port, o.key.lane}] = o.worker;
            }
    }

    // One stream per (chip, port, lane) that sends, counted in messages.
    void gather_streams() {
        std::map<std::tuple<uint32_t, uint32_t, uint32_t>, int> stream_of;  // (chip, port, lane) -> stream
        for (uint32_t c = 0; c < n_; ++c)
            for (const LowOp& o : ops_[c]) {
                if (o.opcode != abi::kCclSend) continue;
                auto [it, fresh] =
                    stream_of.try_emplace({c, o.port, o.key.lane}, static_cast<int>(out_.streams.size()));
                if (fresh) out_.streams.push_back(new_stream(c, o));
                out_.streams[it->second].messages +=
                    static_cast<uint32_t>((o.src.bytes() + opt_.message_bytes - 1) / opt_.message_bytes);
            }
        for (Stream& s : out_.streams) {
            auto r = receiver_of_.find({s.peer_chip, s.peer_port, s.lane});
            if (r == receiver_of_.end()) throw Error("internal: a stream without a receiver");
            s.receiver_core = worker(s.peer_chip, r->second).core;
        }
    }

    Stream new_stream(uint32_t chip, const LowOp& send) {
        Stream s;
        s.chip = chip;
        s.port = send.port;
        s.lane = send.key.lane;
        const Hop& h = routing_.hop_at(chip, s.port);
        s.peer_chip = h.to_chip;
        s.peer_port = h.to_port;
        s.sender_core = worker(chip, worker_of_[chip].at(send.key)).core;
        return s;
    }

    // Dependencies between the workers of a chip, their signal numbers, and
    // each worker's code: its waits, the op, its signals.
    void order_chip(uint32_t c) {
        std::vector<LowOp>& v = ops_[c];
        const size_t workers = (c + 1 < n_ ? first_worker_[c + 1] : out_.workers.size()) - first_worker_[c];
        // Each op follows, of every other worker, the latest earlier op it
        // conflicts with: one that writes what it reads, or reads or writes
        // what it writes (a send writes nothing of this chip's).
        std::vector<Footprint> written(workers), read(workers);
        for (size_t i = 0; i < v.size(); ++i) {
            const LowOp& o = v[i];
            for (size_t w = 0; w < workers; ++w) {
                if (static_cast<int>(w) == o.worker) continue;
                size_t latest = SIZE_MAX;
                if (reads_src(o)) latest = later_of(latest, written[w].latest_overlapping(o.src));
                if (o.opcode != abi::kCclSend) {
                    latest = later_of(latest, written[w].latest_overlapping(o.dst));
                    latest = later_of(latest, read[w].latest_overlapping(o.dst));
                }
                if (latest != SIZE_MAX) v[i].deps[static_cast<int>(w)] = latest;
            }
            const size_t w = static_cast<size_t>(o.worker);
            if (o.opcode != abi::kCclSend) written[w].add(o.dst, i);
            if (reads_src(o)) read[w].add(o.src, i);
            if (o.reads_dst) read[w].add(o.dst, i);
        }
        for (size_t i = 0; i < v.size(); ++i)
            for (auto& [w, j] : v[i].deps) v[j].signal[v[i].worker] = 0;
        std::map<std::pair<int, int>, uint32_t> sent;  // (producer, consumer) -> signals so far
        for (LowOp& o : v)
            for (auto& [consumer, number] : o.signal) number = ++sent[{o.worker, consumer}];
        for (const LowOp& o : v) emit(worker(c, o.worker), o, v);
    }

    void emit(WorkerProgram& w, const LowOp& o, const std::vector<LowOp>& chip_ops) const {
        for (auto& [producer, j] : o.deps) {
            abi::CclInstr in{};
            in.opcode = abi::kCclWait;
            in.arg = static_cast<uint32_t>(producer);
            in.count = chip_ops[j].signal.at(o.worker);
            w.code.push_back(in);
        }
        abi::CclInstr in{};
        in.opcode = o.opcode;
        in.src = collapsed(o.src);
        in.dst = collapsed(o.dst);
        if (o.opcode == abi::kCclRecvReduce || o.opcode == abi::kCclReduce) in.arg = opt_.reduce_arg;
        if (o.direction >= 0) in.channel = w.channel_of(o.port);
        w.code.push_back(in);
        for (auto& [consumer, number] : o.signal) {
            abi::CclInstr s{};
            s.opcode = abi::kCclSignal;
            s.arg = static_cast<uint32_t>(consumer);
            w.code.push_back(s);
        }
    }

    // Each op follows the previous op of its worker, the ops it waits for,
    // and (a receive) its send. Plan order is a topological order.
    void measure_critical_path() {
        std::vector<std::map<int, uint32_t>> last_depth(n_);  // per chip: worker -> depth of its last op
        for (const auto& [chip, i] : created_) {
            LowOp& o = ops_[chip][i];
            uint32_t d = last_depth[chip][o.worker];
            for (const auto& [w, j] : o.deps) d = std::max(d, ops_[chip][j].depth);
            if (o.partner_chip >= 0) d = std::max(d, ops_[static_cast<uint32_t>(o.partner_chip)][o.partner].depth);
            o.depth = d + 1;
            last_depth[chip][o.worker] = o.depth;
            out_.critical_path = std::max(out_.critical_path, o.depth);
        }
    }

    // The planes the op really uses: the most cables any two chips talk over.
    void count_planes() {
        std::map<std::pair<uint32_t, uint32_t>, std::set<uint32_t>> ports_between;
        for (const Stream& s : out_.streams) ports_between[{s.chip, s.peer_chip}].insert(s.port);
        out_.planes = 1;
        for (const auto& [pair, ports] : ports_between)
            out_.planes = std::max(out_.planes, static_cast<uint32_t>(ports.size()));
    }

    const transport::Routing& routing_;
    const std::vector<uint32_t>& cores_;
    const LoweringOptions& opt_;
    const uint32_t planes_;
    const bool share_planes_;
    const bool fold_;  // a chip short of cores gets one sender and one receiver (fit_workers)
    const uint32_t n_;
    std::vector<std::vector<LowOp>> ops_;
    std::vector<ScratchRing> scratch_;
    LoweredOp out_;
    std::vector<std::pair<uint32_t, size_t>> created_;  // every op, in plan order
    std::vector<LinkDirection> directions_;
    std::map<std::pair<uint32_t, uint32_t>, int> direction_of_;  // (sending chip, port) -> direction
    std::vector<std::map<WorkerKey, int>> worker_of_;
    std::vector<size_t> first_worker_;
    std::map<std::tuple<uint32_t, uint32_t, uint32_t>, int> receiver_of_;  // (chip, port, lane) -> worker
};

}  // namespace

LoweredOp lower(const Plan& plan, const transport::Routing& routing, const std::vector<uint32_t>& worker_cores,
                const LoweringOptions& opt) {
    check_workers_per_link(opt.workers_per_link, static_cast<uint32_t>(worker_cores.size()));
    // Every plane the hops have, unless a chip then runs out of worker cores
    // (a sender and a receiver per cable it uses): then one plane fewer.
    const uint32_t most =
        std::max(1u, opt.planes ? std::min(opt.planes, routing.max_parallel()) : routing.max_parallel());
    // With a worker per cable first (each runs on its own core), then with one
    // worker serving all the cables to a neighbour (a two-way ring on two
    // planes needs 8 workers the first way, 4 the second).
    for (uint32_t planes = most; planes > 1; --planes)
        for (bool share : {false, true}) {
            try {
                return PlaneLowering(routing, worker_cores, opt, planes, share).run(plan);
            } catch (const WorkerShortage&) {
            }
        }
    if (!opt.fold) return PlaneLowering(routing, worker_cores, opt, 1, false).run(plan);
    try {
        return PlaneLowering(routing, worker_cores, opt, 1, false).run(plan);
    } catch (const WorkerShortage&) {
    }
    // Last, a chip short of cores sends on all its ports from one worker.
    return PlaneLowering(routing, worker_cores, opt, 1, false, true).run(plan);
}

}  // namespace weft::ccl
