// Routing where every hop between workers is one cable: a message to a chip
// further away is received and sent on by a worker on every chip between
// (the EDM of tt-metal's CCL developer guide moves data between neighbours only). The routes are the
// underlay's shortest (ccl/topology.h).
#pragma once
#include "driver/topology.h"
#include "transport/transport.h"

namespace weft::transport {

class CableRouting : public Routing {
public:
    explicit CableRouting(const Topology& topo) : topo_(topo) {}
    uint32_t chips() const override { return topo_.size(); }
    const std::vector<Hop>& worker_hops(uint32_t from, uint32_t to) const override { return topo_.route(from, to); }
    const std::vector<Hop>& parallel(uint32_t from, uint32_t to) const override { return topo_.cables(from, to); }
    const Hop& hop_at(uint32_t chip, uint32_t port) const override { return topo_.neighbour(chip, port); }
    uint32_t max_parallel() const override { return topo_.max_cables(); }

private:
    const Topology& topo_;
};

}  // namespace weft::transport
