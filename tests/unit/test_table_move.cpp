// The deadlock check of a live reroute (transport::check_table_move) walks
// route by route, so it scales to fabrics of thousands of chips. Here its
// dependency graph is checked, move by move, against the plain definition:
// every pair of chips walked through every mix of old and new tables a packet
// on its way may meet, on every single-cable failure of a torus, a mesh and
// two clusters of several meshes.
#include <string.h>

#include <string>
#include <vector>

#include "common/error.h"
#include "common/names.h"
#include "driver/cluster_file.h"
#include "driver/cluster_topology.h"
#include "driver/paths.h"
#include "fabric/route.h"
#include "fabric_model/grid_cluster.h"
#include "transport/fabric/fabric.h"
#include "transport/fabric/fabric_dependencies.h"
#include "transport/fabric/live_reroute.h"

// cmocka last: its fail() macro would clash with the C++ headers.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

using namespace weft;
using transport::FabricBuilder;
using transport::TableMove;

namespace {

// The definition: the packet from `from` to `to` may start by either table
// (only by the old where the new are only the dead cable's routers' detour
// tables); at every router it may be routed by either (old before new: once it took a
// new route it meets no old table again); where it meets the dead cable its
// chip's new table sends it on, on the escape VC, which it keeps into the
// next meshes if the move says so. Each channel it holds is joined to the next.
class PairWalker {
public:
    PairWalker(const FabricBuilder& f, const TableMove& move) : f_(f), move_(move), next_(graph_size(f), 0) {}

    void walk(uint32_t from, uint32_t to) {
        abi::FabricPacketHeader h = abi::fabric_unicast_write(f_.node(from), f_.node(to), 0, 0, 0, 0);
        const int tables = move_.everywhere ? 2 : 1;
        for (int table = 0; table < tables; ++table) {
            const abi::FabricRouteEntry e =
                abi::fabric_route_entry(table ? move_.next(from) : f_.table(from), h.src.mesh, h.dst);
            if (e.hops == 0) continue;
            h.hops = e.hops, h.route = e.route;
            go(h, from, e.first, 0, UINT32_MAX, table == 1, false, 0);
        }
    }
    const std::vector<transport::ChannelBits>& graph() const { return next_; }
    bool looped() const { return looped_; }
    static size_t graph_size(const FabricBuilder& f) { return size_t(f.order().back() + 1) * transport::kChipChannels; }

private:
    bool classes() const { return f_.spec().flags & abi::kFabricMeshClasses; }
    // Which tables (0 old, 1 new) a router where a route ends may route the
    // packet on by: one mesh, none (one walk on, `moved` as it was); the
    // old alone where only the dead cable's routers take new ones; else the
    // old, then the new, unless it took a new route already.
    std::vector<int> tables_on_the_way(bool moved) const {
        if (!classes()) return {int(moved)};
        if (!move_.everywhere) return {0};
        return moved ? std::vector<int>{1} : std::vector<int>{0, 1};
    }
    bool dead(uint32_t chip, uint32_t dir) const {
        return (chip == move_.chip && dir == move_.dir) || (chip == move_.peer_chip && dir == (move_.dir ^ 2));
    }
    void go(abi::FabricPacketHeader h, uint32_t chip, uint32_t dir, uint32_t vc, uint32_t held, bool moved, bool keeps,
            int depth) {
        if (depth > 1000) {  // round a loop until the TTL would end it (it counts routes, not cables)
            looped_ = true;
            return;
        }
        if (dead(chip, dir)) {
            const abi::FabricRouteEntry e = abi::fabric_route_entry(move_.next(chip), f_.node(chip).mesh, h.dst);
            if (e.hops == 0 || e.first == dir) return;
            h.hops = e.hops, h.route = e.route;
            return go(h, chip, e.first, fabric::vc_round_dead_cable(vc, f_.spec().flags), held, true, move_.keep_escape,
                      depth + 1);
        }
        const int r = f_.router_index(chip, transport::compass_direction(dir));
        assert_true(r >= 0);
        const transport::FabricRouterPlan& out = f_.routers()[size_t(r)];
        const uint32_t channel = transport::channel_id(chip, dir, vc);
        if (held != UINT32_MAX) next_[held] |= transport::channel_bit(dir, vc);
        if (abi::fabric_crosses_dateline(out.config.dateline, f_.spec().flags, vc, keeps)) vc = 1;
        const uint32_t at = out.peer_chip, compass = dir ^ 2;
        for (int table : tables_on_the_way(moved)) {
            abi::FabricPacketHeader next = h;
            const abi::FabricRouteTable* t = !classes() ? nullptr : table ? &move_.next(at) : &f_.table(at);
            const fabric::Decision d = fabric::on_receive(next, fabric::Hop{2, compass, f_.node(at), t});
            if (d.expired) {  // old and new tables send it round a loop: the move must be refused
                looped_ = true;
                continue;
            }
            if (d.lost || !d.forward) continue;
            go(next, at, d.next, fabric::vc_after_turn(vc, d.next, compass, f_.spec().flags), channel,
               moved || table == 1, keeps, depth + 1);
        }
    }

    const FabricBuilder& f_;
    const TableMove& move_;
    std::vector<transport::ChannelBits> next_;
    bool looped_ = false;
};

struct Compared {
    size_t moves = 0, adding_edges = 0, made = 0, looped = 0;
};

struct Walked {
    bool adding_edges = false, made = false, looped = false;
};

// One move's graph by the check and by every pair's walk, which must be
// equal; if a packet loops, both must find it and the check refuse the move.
Walked compare_move(const ClusterSpec& spec, const FabricBuilder& fabric, const TableMove& move, const LinkSpec& l,
                    const std::vector<transport::ChannelBits>& still) {
    Walked w;
    PairWalker reference(fabric, move);
    for (uint32_t from : fabric.order())
        for (uint32_t to : fabric.order())
            if (from != to) reference.walk(from, to);
    if (reference.looped()) {
        bool refused = false;
        try {
            transport::table_move_dependencies(fabric, move);
        } catch (const Error& e) {
            refused = std::string(e.what()).find("TTL runs out") != std::string::npos;
        }
        if (!refused)
            fail_msg("%s, cable %s.%u down: a packet loops, yet the move's walk went through", spec.name.c_str(),
                     chip_name(l.a.chip).c_str(), l.a.port);
        w.looped = true;
        return w;
    }
    const std::vector<transport::ChannelBits> got = transport::table_move_dependencies(fabric, move);
    for (size_t c = 0; c < got.size(); ++c)
        if (got[c] != reference.graph()[c])
            fail_msg("%s, cable %s.%u down%s: channel %s waits on 0x%04x, by every pair's walk 0x%04x",
                     spec.name.c_str(), chip_name(l.a.chip).c_str(), l.a.port,
                     move.keep_escape ? " (detours keeping VC 2)" : "", transport::channel_name(uint32_t(c)).c_str(),
                     got[c], reference.graph()[c]);
    w.adding_edges = got != still;
    w.made = transport::check_table_move(fabric, move).acyclic;
    return w;
}

// Every plane-0 cable of the cluster failed in turn: where the control
// plane gives new tables the fabric can take, both graphs must be equal.
Compared compare_every_move(const ClusterSpec& spec) {
    const ClusterTopology topology = ClusterTopology::from_spec(spec);
    const FabricBuilder fabric = transport::cluster_fabric(spec.board, topology, spec.fabric);
    assert_int_equal(fabric.dims(), 2);
    const std::vector<transport::ChannelBits> still = transport::table_move_dependencies(
        fabric, TableMove{[&](uint32_t c) -> const abi::FabricRouteTable& { return fabric.table(c); }, UINT32_MAX, 0,
                          UINT32_MAX});  // the old tables alone, no cable dead
    Compared seen;
    for (const LinkSpec& l : spec.links) {
        if (spec.board.ports.at(l.a.port).plane != 0) continue;
        const transport::FabricRouterPlan* end = nullptr;
        for (const transport::FabricRouterPlan& p : fabric.routers())
            if (p.chip == l.a.chip && p.port == l.a.port) end = &p;
        if (!end) continue;  // a cable the fabric does not use
        transport::ControlPlane control(spec.board, topology);
        if (control.cable_down(l.a.chip, l.a.port).kind != transport::RerouteDecision::kNewTables) continue;
        std::vector<abi::FabricRouteTable> next;
        try {
            next = transport::control_plane_tables(fabric, control);
        } catch (const Error&) {
            continue;
        }
        TableMove move{[&](uint32_t c) -> const abi::FabricRouteTable& { return next[fabric.position(c)]; }, l.a.chip,
                       static_cast<uint32_t>(end->direction), l.b.chip,
                       transport::moves_every_table(fabric, l.a.chip, l.b.chip)};
        // Between meshes the detours may keep the escape VC into the next
        // meshes or fall back to VC 1: both graphs are compared, and the
        // move is made if either is acyclic, as the control plane does.
        const bool keeps_too = fabric.meshes().size() > 1;
        bool made = false, looped = false;
        for (bool keep : {false, true}) {
            if (keep && !keeps_too) break;
            move.keep_escape = keep;
            const Walked w = compare_move(spec, fabric, move, l, still);
            made |= w.made, looped |= w.looped;
            seen.adding_edges += !keep && w.adding_edges;
        }
        ++seen.moves;
        seen.made += made;
        seen.looped += looped;
    }
    return seen;
}

ClusterSpec file(const std::string& name) {
    return load_cluster(paths::source_root() + "/clusters/" + name + ".yaml", paths::load_built_board);
}

// Returns how many moves were deadlock-free.
size_t check(const ClusterSpec& spec, size_t at_least) {
    const Compared seen = compare_every_move(spec);
    fprintf(stderr, "%s: %zu moves, %zu of them with dependencies of their own, %zu deadlock-free, %zu with a loop\n",
            spec.name.c_str(), seen.moves, seen.adding_edges, seen.made, seen.looped);
    assert_true(seen.moves >= at_least);
    assert_true(seen.adding_edges > 0);  // the mixes of tables walked something the old tables alone do not
    return seen.made;
}

// On a torus the detours ride VC 2, above the datelines' two: every move too.
void test_torus4x4(void**) { assert_int_equal(check(file("torus4x4"), 32), 32); }
// With the escape class every move off one cable of a mesh is deadlock-free
// (without it, 4 of mesh3x3's 12 were).
void test_mesh3x3(void**) { assert_int_equal(check(file("mesh3x3"), 12), 12); }
// Between meshes the escape class is VC 2: every move inside a mesh is
// deadlock-free (only the cable's routers take detours), and so is every
// move of a cable between meshes (every chip takes the new exits), with its
// detours keeping VC 2 into the next meshes where falling back to VC 1
// there is not: mesh 0's one cable to mesh 1, whose detours on VC 1, with
// the old exits still in use, close a cycle through all four meshes.
// Without VC 2, 20 of the 53 moves were deadlock-free.
void test_4mesh3x3(void**) { assert_int_equal(check(file("4mesh3x3"), 53), 53); }
void test_a_grid_of_six_meshes(void**) {
    assert_int_equal(check(fabric_model::grid_cluster_spec(fabric_model::GridCluster{6, 3, 3, 2}), 86), 86);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_torus4x4),
        cmocka_unit_test(test_mesh3x3),
        cmocka_unit_test(test_4mesh3x3),
        cmocka_unit_test(test_a_grid_of_six_meshes),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
