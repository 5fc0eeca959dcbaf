#include "driver/cluster_topology.h"

#include <algorithm>
#include <map>

#include "common/error.h"

namespace weft {

ClusterTopology::ClusterTopology(uint32_t chips, std::vector<LinkInfo> links)
    : chips_(chips), links_(std::move(links)) {
    Mesh m;
    m.width = chips;
    m.topology = "custom";
    meshes_.push_back(m);
    index();
}

ClusterTopology ClusterTopology::from_spec(const ClusterSpec& spec) {
    ClusterTopology t;
    t.chips_ = spec.num_chips;
    t.meshes_ = spec.meshes;
    for (const LinkSpec& l : spec.links) t.links_.push_back({l.a.chip, l.a.port, l.b.chip, l.b.port, true});
    t.systems_ = spec.systems;
    t.check();
    t.index();
    return t;
}

ClusterTopology ClusterTopology::from_meshes(std::vector<Mesh> meshes, std::vector<LinkInfo> links) {
    ClusterTopology t;
    for (const Mesh& m : meshes) t.chips_ += m.chips();
    t.meshes_ = std::move(meshes);
    t.links_ = std::move(links);
    t.check();
    t.index();
    return t;
}

const Mesh* ClusterTopology::whole_mesh(const std::vector<uint32_t>& chips) const {
    for (const Mesh& m : meshes_) {
        if (chips.size() != m.chips() || chips.empty() || chips[0] != m.first_chip) continue;
        for (uint32_t i = 0; i < chips.size(); ++i)
            if (chips[i] != m.first_chip + i) return nullptr;
        return &m;
    }
    return nullptr;
}

ClusterTopology ClusterTopology::among(const std::vector<uint32_t>& chips) const {
    if (chips.empty()) throw Error("a communicator needs at least one chip");
    std::map<uint32_t, uint32_t> rank;
    for (uint32_t r = 0; r < chips.size(); ++r) {
        if (chips[r] >= chips_)
            throw Error("chip " + std::to_string(chips[r]) + " is not a chip of this " + std::to_string(chips_) +
                        "-chip cluster");
        if (!rank.emplace(chips[r], r).second)
            throw Error("chip " + std::to_string(chips[r]) + " is in the communicator twice");
    }
    std::vector<LinkInfo> links;
    for (const LinkInfo& l : links_)
        if (rank.count(l.chip_a) && rank.count(l.chip_b))
            links.push_back({rank[l.chip_a], l.port_a, rank[l.chip_b], l.port_b, l.up, l.shaped});
    if (const Mesh* m = whole_mesh(chips)) {
        Mesh own = *m;
        own.id = 0, own.first_chip = 0, own.line = 0;
        return from_meshes({own}, std::move(links));
    }
    return ClusterTopology(static_cast<uint32_t>(chips.size()), links);
}

ClusterTopology ClusterTopology::with_links(std::vector<LinkInfo> links) const {
    ClusterTopology t = *this;
    t.links_ = std::move(links);
    t.check();
    t.index();
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
                                l.at("state").get<std::string>() == "up", l.value("shaped", false)});
        t.systems_ = SystemsSpec::from_json(info.value("systems", nlohmann::json::object()));
    } catch (const nlohmann::json::exception& e) {
        throw Error(std::string("the cluster's info has no usable topology (bridge from another build?): ") + e.what());
    }
    t.check();
    t.index();
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

void ClusterTopology::index() {
    mesh_ids_.clear();
    for (uint32_t i = 0; i < meshes_.size(); ++i) mesh_ids_.push_back({meshes_[i].id, i});
    // Stable: of two meshes with one id (an info no bridge writes) the first
    // answers, as a scan in file order would find it.
    std::stable_sort(mesh_ids_.begin(), mesh_ids_.end(), [](auto& a, auto& b) { return a.first < b.first; });
    mesh_ids_.erase(std::unique(mesh_ids_.begin(), mesh_ids_.end(),
                                [](auto& a, auto& b) { return a.first == b.first; }),
                    mesh_ids_.end());
    exits_.assign(mesh_ids_.size(), {});
    // One mesh has no cable out (and the unchecked line of chips may name a chip it lacks).
    if (meshes_.size() < 2) return;
    for (const LinkInfo& l : links_) {
        const uint32_t a = mesh_of(l.chip_a).id, b = mesh_of(l.chip_b).id;
        if (a == b) continue;
        exits_[id_slot(a)].push_back({l.chip_a, l.port_a, b, l.chip_b, l.port_b, l.up});
        exits_[id_slot(b)].push_back({l.chip_b, l.port_b, a, l.chip_a, l.port_a, l.up});
    }
    for (std::vector<ExitNode>& out : exits_)
        std::sort(out.begin(), out.end(), [](const ExitNode& x, const ExitNode& y) {
            return x.chip != y.chip ? x.chip < y.chip : x.port < y.port;
        });
}

size_t ClusterTopology::id_slot(uint32_t id) const {
    if (id < mesh_ids_.size() && mesh_ids_[id].first == id) return id;  // ids 0..n-1, every cluster file's
    const auto it = std::lower_bound(mesh_ids_.begin(), mesh_ids_.end(), std::pair<uint32_t, uint32_t>{id, 0});
    if (it == mesh_ids_.end() || it->first != id) throw Error("the cluster has no mesh " + std::to_string(id));
    return size_t(it - mesh_ids_.begin());
}

const Mesh& ClusterTopology::mesh(uint32_t id) const { return meshes_[mesh_ids_[id_slot(id)].second]; }

// check() proved the meshes tile the chips in order, so the last mesh that
// starts at or before the chip holds it (unless it is past the end).
const Mesh& ClusterTopology::mesh_of(uint32_t chip) const {
    // Meshes of one size (the common cluster): the chip's mesh by division.
    if (!meshes_.empty() && meshes_[0].chips() > 0) {
        const size_t guess = chip / meshes_[0].chips();
        if (guess < meshes_.size() && chip >= meshes_[guess].first_chip &&
            chip - meshes_[guess].first_chip < meshes_[guess].chips())
            return meshes_[guess];
    }
    auto it = std::upper_bound(meshes_.begin(), meshes_.end(), chip,
                               [](uint32_t c, const Mesh& m) { return c < m.first_chip; });
    if (it != meshes_.begin()) {
        const Mesh& m = *(it - 1);
        if (chip - m.first_chip < m.chips()) return m;
    }
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

const std::vector<ExitNode>& ClusterTopology::exit_nodes(uint32_t id) const { return exits_[id_slot(id)]; }

}  // namespace weft
