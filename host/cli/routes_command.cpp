// weft routes CLUSTER [--chip N] [--remove-row M:Y] [--remove-column M:X] [--json]:
// the 2D fabric's L0 routing tables of every mesh of a cluster file, as the
// control plane holds them (host/transport/fabric/control_plane.h), and its
// deadlock verdict on them; with a row or column taken out of a mesh (the
// spec's downshifted mesh), the tables the control plane gives the chips left.
// Reads the file only: no cluster starts.
#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>

#include "cli/arguments.h"
#include "cli/commands.h"
#include "cli/downshift.h"
#include "cli/exit_codes.h"
#include "common/error.h"
#include "driver/cluster_file.h"
#include "driver/paths.h"
#include "transport/fabric/control_plane.h"
#include "transport/fabric/fabric.h"
#include "transport/fabric/l1_routing.h"
#include "transport/fabric/routing2d.h"

namespace weft::cli {
namespace {

struct RoutesArgs {
    std::string cluster;
    uint32_t chip = 0;
    const CLI::Option* chip_option = nullptr;
    std::vector<std::string> remove_rows, remove_columns;  // "M:Y", or "Y" in a cluster of one mesh
    bool json = false;
};

// Every row of a mesh this large would be chips² routes: only --chip's is printed.
constexpr uint32_t kMaxTableChips = 64;

// `route(a, b)` in the mesh's numbers: kNoRoute where a chip was taken out.
void print_table(const Mesh& mesh, int only, const std::function<std::string(uint32_t, uint32_t)>& route) {
    const uint32_t n = mesh.chips();
    std::printf("mesh %u (%ux%u %s), chips %u-%u; row: a source chip's L0 table, X first then Y where no cable is "
                "down; x: a chip taken out\n",
                mesh.id, mesh.width, mesh.height, mesh.topology.c_str(), mesh.first_chip, mesh.first_chip + n - 1);
    if (only < 0 && n > kMaxTableChips) {
        std::printf("(%u chips: %u routes are too many to print; --chip N prints one chip's row)\n", n, n * n);
        return;
    }
    std::printf("| src\\dst |");
    for (uint32_t b = 0; b < n; ++b) std::printf(" %u |", b);
    std::printf("\n|---|");
    for (uint32_t b = 0; b < n; ++b) std::printf("---|");
    std::printf("\n");
    for (uint32_t a = 0; a < n; ++a) {
        if (only >= 0 && a != static_cast<uint32_t>(only)) continue;
        std::printf("| %u |", a);
        for (uint32_t b = 0; b < n; ++b) {
            const std::string way = a == b ? "-" : route(a, b);
            std::printf(" %s |", a != b && way == transport::kNoRoute ? "x" : way.c_str());
        }
        std::printf("\n");
    }
}

// L1: a row per source mesh and chip (its number in its mesh), a column per
// destination mesh; each cell the exit node's number in the source mesh.
void print_l1_tables(const transport::ControlPlane& control, int only_chip) {
    const transport::MeshRouting& routing = control.l1();
    const auto& meshes = routing.topology().meshes();
    std::printf("L1 tables: row: a source chip's exit node toward each mesh (its number in its own mesh)\n");
    std::printf("| src mesh | node |");
    for (const Mesh& m : meshes) std::printf(" mesh %u |", m.id);
    std::printf("\n|---|---|");
    for (size_t i = 0; i < meshes.size(); ++i) std::printf("---|");
    std::printf("\n");
    for (const Mesh& src : meshes)
        for (uint32_t i = 0; i < src.chips(); ++i) {
            const uint32_t chip = src.first_chip + i;
            if (only_chip >= 0 ? chip != uint32_t(only_chip) : src.chips() > kMaxTableChips) continue;
            std::printf("| %u | %u |", src.id, i);
            for (const Mesh& dst : meshes) {
                if (dst.id == src.id) std::printf(" - |");
                else if (control.removed(chip))
                    std::printf(" x |");
                else
                    std::printf(" %u |", routing.exit_toward(chip, dst.id) - src.first_chip);
            }
            std::printf("\n");
        }
    const transport::DependencyVerdict v = routing.check();
    if (v.acyclic) std::printf("mesh graph: acyclic (up*/down* from the lowest mesh id)\n\n");
    else
        std::printf("mesh graph: CYCLE %s\n\n", nlohmann::json(v.cycle).dump().c_str());
}

nlohmann::json l1_json(const transport::ControlPlane& control, int only_chip) {
    const transport::MeshRouting& routing = control.l1();
    nlohmann::json rows = nlohmann::json::object();
    const auto& meshes = routing.topology().meshes();
    for (const Mesh& src : meshes)
        for (uint32_t i = 0; i < src.chips(); ++i) {
            const uint32_t chip = src.first_chip + i;
            if (only_chip >= 0 ? chip != uint32_t(only_chip) : src.chips() > kMaxTableChips) continue;
            if (control.removed(chip)) continue;
            nlohmann::json row = nlohmann::json::object();
            for (const Mesh& dst : meshes)
                if (dst.id != src.id) row[std::to_string(dst.id)] = routing.exit_toward(chip, dst.id);
            rows[std::to_string(chip)] = row;
        }
    return {{"exits", rows}, {"acyclic", routing.check().acyclic}};
}

int routes(const RoutesArgs& a) {
    const ClusterSpec spec = load_cluster(paths::cluster_file(a.cluster), paths::load_built_board);
    const Downshift shifted = downshift(spec, a.remove_rows, a.remove_columns);
    const transport::ControlPlane& control = shifted.control;
    nlohmann::json out = nlohmann::json::array();
    bool any_cycle = !shifted.usable;
    if (!a.json)
        for (const std::string& d : shifted.decisions) std::printf("control plane: %s\n\n", d.c_str());
    const bool one_chip = a.chip_option && a.chip_option->count();
    if (one_chip && a.chip >= spec.num_chips)
        throw UsageError("--chip: " + spec.name + " has no chip " + std::to_string(a.chip) + " (chips 0-" +
                         std::to_string(spec.num_chips - 1) + ")");
    for (const Mesh& m : spec.meshes) {
        const int only = one_chip ? static_cast<int>(a.chip) - int(m.first_chip) : -1;
        if (one_chip && (only < 0 || only >= int(m.chips()))) continue;
        // A mesh the control plane could not route (cut, refused) has no tables; its decision is above.
        if (const std::string why = control.unusable(m); !why.empty()) {
            any_cycle = true;
            if (a.json) out.push_back({{"mesh", m.id}, {"unusable", why}});
            else
                std::printf("mesh %u (%ux%u %s): no tables: %s\n\n", m.id, m.width, m.height, m.topology.c_str(),
                            why.c_str());
            continue;
        }
        const auto route = [&](uint32_t x, uint32_t y) {
            return control.removed(m.first_chip + x) || control.removed(m.first_chip + y) ? std::string(transport::kNoRoute)
                                                                                          : control.l0_route(m, x, y);
        };
        const transport::DependencyVerdict v = transport::check_dependencies(m, route, m.wraps());
        any_cycle |= !v.acyclic;
        if (a.json) {
            nlohmann::json rows = nlohmann::json::object();
            const bool all = only < 0 && m.chips() <= kMaxTableChips;
            nlohmann::json removed = nlohmann::json::array();
            for (uint32_t s = 0; s < m.chips(); ++s) {
                if (control.removed(m.first_chip + s)) removed.push_back(m.first_chip + s);
                if ((!all && s != uint32_t(only)) || control.removed(m.first_chip + s)) continue;
                nlohmann::json row = nlohmann::json::array();
                for (uint32_t t = 0; t < m.chips(); ++t) row.push_back(s == t ? std::string() : route(s, t));
                rows[std::to_string(m.first_chip + s)] = row;
            }
            out.push_back({{"mesh", m.id},
                           {"shape", {m.width, m.height}},
                           {"topology", m.topology},
                           {"first_chip", m.first_chip},
                           {"routes", rows},
                           {"routes_omitted", only < 0 && !all},
                           {"removed", removed},
                           {"acyclic", v.acyclic},
                           {"cycle", v.cycle}});
            continue;
        }
        print_table(m, only, route);
        if (v.acyclic)
            std::printf("channel dependency graph: acyclic%s\n\n", m.wraps() ? " (a dateline VC per dimension)" : "");
        else
            std::printf("channel dependency graph: CYCLE %s\n\n", nlohmann::json(v.cycle).dump().c_str());
    }
    if (spec.meshes.size() > 1) {
        const transport::MeshRouting& l1 = control.l1();
        const int only_chip = one_chip ? static_cast<int>(a.chip) : -1;
        any_cycle |= !l1.check().acyclic;
        // The fabric the cluster would run: its builder walks every pair through the routers' own
        // decisions, intra- and inter-mesh channels in one graph, and refuses a cycle.
        std::string whole;
        try {
            transport::cluster_fabric(spec.board, ClusterTopology::from_spec(spec), spec.fabric);
        } catch (const Error& e) {
            whole = e.what();
            any_cycle = true;
        }
        const std::string as_filed = shifted.decisions.empty()
                                         ? ""
                                         : " (as the file cables it; with chips taken out, the control plane's "
                                           "checks above stand for it)";
        if (a.json) {
            out = {{"meshes", out},
                   {"l1", l1_json(control, only_chip)},
                   {"fabric", {{"acyclic", whole.empty()}, {"why", whole}}}};
        } else {
            print_l1_tables(control, only_chip);
            std::printf("whole fabric (every pair walked through the routers' decisions, both VC classes): %s%s\n",
                        whole.empty() ? "acyclic" : whole.c_str(), as_filed.c_str());
        }
    }
    if (a.json) {
        if (!shifted.decisions.empty()) out = {{"tables", out}, {"control_plane", shifted.decisions}};
        std::printf("%s\n", out.dump(2).c_str());
    }
    return any_cycle ? kFailed : kOk;
}

}  // namespace

Command add_routes(CLI::App& weft) {
    CLI::App* cmd = weft.add_subcommand("routes", "the fabric's L0 routing tables of a cluster file, its L1 tables "
                                                  "between meshes, and their deadlock verdicts (no cluster starts)");
    auto a = std::make_shared<RoutesArgs>();
    add_word(
        *cmd, "CLUSTER", "", a->cluster, [](const std::string& name) { paths::cluster_file(name); },
        "a cluster file or name")
        ->required();
    a->chip_option = add_whole(*cmd, "--chip", "N", a->chip, kIds, "only this chip's table");
    cmd->add_option("--remove-row", a->remove_rows,
                    "take row Y of mesh M out of the fabric (the spec's downshifted mesh) and print the tables the "
                    "control plane gives the chips left, or why it cannot (exit 1); Y alone in a one-mesh cluster")
        ->type_name("M:Y")
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    cmd->add_option("--remove-column", a->remove_columns, "the same for column X of mesh M")
        ->type_name("M:X")
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    cmd->add_flag("--json", a->json, "JSON for scripts");
    return {cmd, [a] { return routes(*a); }};
}

}  // namespace weft::cli
