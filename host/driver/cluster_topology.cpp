#include "driver/cluster_topology.h"

#include <algorithm>

#include "common/error.h"

namespace weft {

ClusterTopology::ClusterTopology(uint32_t chips, std::vector<LinkInfo> links)
    : chips_(chips), links_(std::move(links)) {
    Mesh m;
    m.width = chips;
    m.topology = "custom";
    meshes_.push_back(m);
}

ClusterTopology ClusterTopology::from_spec(const ClusterSpec& spec) {
    ClusterTopology t;
    t.chips_ = spec.num_chips;
    t.meshes_ = spec.meshes;
    for (const LinkSpec& l : spec.links) t.links_.push_back({l.a.chip, l.a.port, l.b.chip, l.b.port, true});
    t.check();
    return t;
}

nlohmann::json ClusterTopology::meshes_json() const {
    nlohmann::json out = nlohmann::json::array();
    for (const Mesh& m : meshes_)
        out.push_back({{"id", m.id},
                       {"shape", {m.width, m.height}},
                       {"topology", m.topology},
                       {"planes", m.planes},
                       {"first_chip", m.first_chip}});
    return out;
}

ClusterTopology ClusterTopology::from_json(const nlohmann::json& info) {
    ClusterTopology t;
    try {
        t.chips_ = static_cast<uint32_t>(info.at("chips").size());
        for (const auto& m : info.at("meshes"))
            t.meshes_.push_back({m.at("id").get<uint32_t>(), m.at("shape").at(0).get<uint32_t>(),
                                 m.at("shape").at(1).get<uint32_t>(), m.at("topology").get<std::string>(),
                                 m.at("planes").get<uint32_t>(), m.at("first_chip").get<uint32_t>()});
        for (const auto& l : info.at("links"))
            t.links_.push_back({l.at("a").at("chip").get<uint32_t>(), l.at("a").at("port").get<uint32_t>(),
                                l.at("b").at("chip").get<uint32_t>(), l.at("b").at("port").get<uint32_t>(),
                                l.at("state").get<std::string>() == "up"});
    } catch (const nlohmann::json::exception& e) {
        throw Error(std::string("the cluster's info has no usable topology (bridge from another build?): ") + e.what());
    }
    t.check();
    return t;
}

void ClusterTopology::check() const {
    uint32_t covered = 0;
    for (const Mesh& m : meshes_) {
        if (m.first_chip != covered)
            throw Error("mesh " + std::to_string(m.id) + " does not start at chip " + std::to_string(covered));
        covered += m.chips();
    }
    if (covered != chips_)
        throw Error("the meshes hold " + std::to_string(covered) + " chips but the cluster has " +
                    std::to_string(chips_));
    for (const LinkInfo& l : links_)
        if (l.chip_a >= chips_ || l.chip_b >= chips_)
            throw Error("a cable names chip " + std::to_string(std::max(l.chip_a, l.chip_b)) + " of a " +
                        std::to_string(chips_) + "-chip cluster");
}

const Mesh& ClusterTopology::mesh(uint32_t id) const {
    for (const Mesh& m : meshes_)
        if (m.id == id) return m;
    throw Error("the cluster has no mesh " + std::to_string(id));
}

const Mesh& ClusterTopology::mesh_of(uint32_t chip) const {
    for (const Mesh& m : meshes_)
        if (chip >= m.first_chip && chip - m.first_chip < m.chips()) return m;
    throw Error("the cluster has no chip " + std::to_string(chip) + " (it has " + std::to_string(chips_) + ")");
}

ChipCoord ClusterTopology::coord(uint32_t chip) const {
    const Mesh& m = mesh_of(chip);
    const uint32_t i = chip - m.first_chip;
    return {m.id, i % m.width, i / m.width};
}

uint32_t ClusterTopology::chip_at(uint32_t id, uint32_t x, uint32_t y) const {
    const Mesh& m = mesh(id);
    if (x >= m.width || y >= m.height)
        throw Error("(" + std::to_string(x) + ", " + std::to_string(y) + ") is outside mesh " + std::to_string(id) +
                    " of shape " + std::to_string(m.width) + "x" + std::to_string(m.height));
    return m.first_chip + x + y * m.width;
}

std::vector<ExitNode> ClusterTopology::exit_nodes(uint32_t id) const {
    mesh(id);  // throws for an unknown mesh
    std::vector<ExitNode> out;
    for (const LinkInfo& l : links_) {
        const uint32_t a = mesh_of(l.chip_a).id, b = mesh_of(l.chip_b).id;
        if (a == b) continue;
        if (a == id) out.push_back({l.chip_a, l.port_a, b, l.chip_b, l.port_b, l.up});
        if (b == id) out.push_back({l.chip_b, l.port_b, a, l.chip_a, l.port_a, l.up});
    }
    std::sort(out.begin(), out.end(), [](const ExitNode& x, const ExitNode& y) {
        return x.chip != y.chip ? x.chip < y.chip : x.port < y.port;
    });
    return out;
}

}  // namespace weft
