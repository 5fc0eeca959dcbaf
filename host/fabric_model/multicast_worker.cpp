#include "fabric_model/multicast_worker.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>

#include "ccl/algorithms.h"
#include "common/error.h"
#include "fabric/connection.h"
#include "hal/noc.h"
#include "transport/fabric/fabric_multicast.h"

namespace weft::fabric_model {
namespace {

using transport::FabricDirection;

class MulticastWorker {
public:
    MulticastWorker(model::FabricModel& m, uint32_t chip, uint32_t core, const transport::MulticastPart& part,
                    uint64_t sem)
        : m_(m), chip_(chip), core_(core), part_(part), sem_(sem) {
        const transport::MulticastReach reach = transport::multicast_reach(m.fabric(), chip);
        for (uint32_t d = 0; d < 2; ++d) {
            to_[d].count = 0;  // a Route's own default is one chip
            if (!part.sends || !reach.count[d]) continue;
            to_[d].dst = m.fabric().node(reach.first_chip[d]);
            to_[d].hops = 1;
            to_[d].count = reach.count[d];
        }
    }

    // One step of the kernel's sequence; false when it must wait.
    bool step() {
        if (!copied_) {
            if (part_.sends && part_.bytes) noc::async_write(part_.src, part_.dst, part_.bytes);
            copied_ = true;
            return true;
        }
        for (uint32_t d = 0; d < 2; ++d)
            if (to_[d].count && sent_[d] < to_send()) return send(d);
        if (m_.word(chip_, sem_) < part_.expect) return false;
        return close_all();
    }
    bool done() const { return closed_; }

private:
    // The block's bytes; an empty block still sends its increment (as one).
    uint32_t to_send() const { return std::max(part_.bytes, 1u); }

    fabric::Connection& way(uint32_t d) {
        if (!ways_[d])
            ways_[d].emplace(m_.connect(chip_, core_, d == 0 ? FabricDirection::kForward : FabricDirection::kBackward, 0));
        return *ways_[d];
    }

    // The next packet of the block that way; the last adds 1 to every chip's semaphore.
    bool send(uint32_t d) {
        fabric::Connection& c = way(d);
        if (c.room() == 0) return false;
        if (part_.bytes == 0) {
            c.atomic_inc(to_[d], sem_, 1);
            sent_[d] = 1;
            return true;
        }
        const uint32_t n = std::min(c.max_payload(), part_.bytes - sent_[d]);
        const bool last = sent_[d] + n == part_.bytes;
        c.write(to_[d], part_.dst + sent_[d], part_.src + sent_[d], n, last ? sem_ : 0, last ? 1 : 0);
        sent_[d] += n;
        return true;
    }

    // Every packet freed before its connection closes: closing must not wait.
    bool close_all() {
        if (closed_) return false;
        for (auto& w : ways_)
            if (w && w->packets() && w->room() < w->slots()) return false;
        for (auto& w : ways_)
            if (w && w->packets()) w->close();
        closed_ = true;
        return true;
    }

    model::FabricModel& m_;
    uint32_t chip_, core_;
    transport::MulticastPart part_;
    uint64_t sem_;
    fabric::Route to_[2];  // count 0: nothing that way
    std::optional<fabric::Connection> ways_[2];
    uint32_t sent_[2] = {0, 0};
    bool copied_ = false, closed_ = false;
};

}  // namespace

void add_multicast_workers(model::FabricModel& m, const ccl::OpRequest& r, const ccl::OpLayout& l, uint64_t sem) {
    if (m.fabric().dims() != 1)
        throw Error("the multicast algorithms run on a 1D fabric (its rows reach one line of chips); this cluster's "
                    "fabric is 2D");
    const std::vector<transport::MulticastPart> parts = ccl::multicast_parts(r, l);
    const uint32_t core = m.cluster().board().worker_core(0);  // the routers' lane 0, as on QEMU
    for (uint32_t chip = 0; chip < parts.size(); ++chip) {
        std::memset(m.bytes(chip, sem, 4), 0, 4);
        auto w = std::make_shared<MulticastWorker>(m, chip, core, parts[chip], sem);
        m.add_program(chip, core, [w] { return w->step(); }, [w] { return w->done(); });
    }
}

}  // namespace weft::fabric_model
