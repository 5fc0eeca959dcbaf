// The fabric route to a tensor op's peer, as the host planned it
// (abi::TensorPeerRoute): the tensor kernels' one translation.
#pragma once
#include "fabric/connection.h"
#include "weft/abi/tensor.h"

namespace weft::kernels {

inline fabric::Route route_to(const abi::TensorPeerRoute& p) {
    fabric::Route to;
    to.dst = {p.mesh, p.chip};
    to.hops = p.hops;
    to.count = 1;
    to.ttl = p.ttl;
    to.route = p.route;
    return to;
}

}  // namespace weft::kernels
