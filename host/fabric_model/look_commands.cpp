#include "fabric_model/look_commands.h"

#include <stdio.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "ccl/collective.h"
#include "common/error.h"
#include "driver/cluster_file.h"
#include "fabric_model/cluster_dot.h"
#include "fabric_model/occupancy.h"
#include "fabric_model/plan_traffic.h"
#include "fabric_model/ranks.h"
#include "fabric_model/state_json.h"
#include "fabric_model/timed_fabric.h"
#include "fabric_model/traffic_record.h"

namespace weft::fabric_model {
namespace {

bool ring_packets(const Traffic& t) {
    return t.algo.empty() && (t.op == "all_gather" || t.op == "reduce_scatter" || t.op == "all_reduce");
}

OpTime run_traffic(Simulation& sim, const Traffic& t) {
    if (t.op == "shift") return ring_shift(sim, t.distance, t.bytes);
    if (ring_packets(t)) return ring_collective(sim, t.op, t.bytes);
    return planned_collective(sim, t.op, t.algo, t.bytes);
}

void check_traffic(const Traffic& t) {
    if (t.op != "shift" && t.distance != 1) throw Error("--distance is shift's: " + t.op + " takes none");
    if (t.op == "shift") {
        if (!t.algo.empty()) throw Error("shift has no algorithms: it is every chip writing to one further on");
        return;
    }
    try {
        ccl::parse_collective(t.op);
    } catch (const Error& e) {
        throw Error(std::string(e.what()) + ", or shift");
    }
}

// `options` with the cables of --fail out from the start.
ModelOptions unplugging(ModelOptions options, const Failures& fail) {
    options.unplugged.insert(options.unplugged.end(), fail.begin(), fail.end());
    return options;
}

// Said once the fabric was planned without them (a bad cable end throws first).
void say_unplugged(const Failures& fail) {
    for (const std::string& end : fail)
        fprintf(stderr, "cable %s is out: the fabric is planned without it\n", end.c_str());
}

// On MPI ranks a router's state is that of the rank that runs its chip (the
// others hold a copy that never ran): each sends its own routers' entries to
// every rank, once every rank has taken its state at the same virtual time.
void take_routers_from_their_ranks(Simulation& sim, nlohmann::json& state) {
    Ranks& ranks = sim.engine().ranks();
    if (ranks.size() == 1) return;
    nlohmann::json mine = nlohmann::json::array();
    for (const nlohmann::json& r : state["routers"])
        if (sim.engine().owns(r["chip"].get<uint32_t>())) mine.push_back(r);
    const std::string text = mine.dump() + "\n";
    const std::vector<uint8_t> all = from_every_rank(ranks, std::vector<uint8_t>(text.begin(), text.end()));
    std::map<uint64_t, nlohmann::json> by_index;
    std::string lines(all.begin(), all.end());
    for (size_t at = 0, nl; (nl = lines.find('\n', at)) != std::string::npos; at = nl + 1)
        for (nlohmann::json& r : nlohmann::json::parse(lines.substr(at, nl - at))) {
            const uint64_t index = r["index"];
            by_index[index] = std::move(r);
        }
    nlohmann::json routers = nlohmann::json::array();
    for (auto& [index, r] : by_index) routers.push_back(std::move(r));
    state["routers"] = std::move(routers);
}

std::string describe(const Traffic& t) {
    return t.op + (t.op == "shift" ? " by " + std::to_string(t.distance) : "") + (t.algo.empty() ? "" : "/" + t.algo) +
           ", " + std::to_string(t.bytes) + " bytes";
}

}  // namespace

void state_command(const ModelOptions& options, const StateRequest& request) {
    Simulation sim(unplugging(options, request.fail));
    say_unplugged(request.fail);
    const StateOptions state{request.tables};
    if (!request.traffic) {
        printf("%s\n", state_json(sim, state).dump(1).c_str());
        return;
    }
    check_traffic(*request.traffic);
    // The state as it was when virtual time passed at_ns: nothing changes between events.
    std::optional<nlohmann::json> taken;
    bool ran = false;  // virtual time passed: an error after it is the traffic's (a deadlock), not the request's
    sim.engine().on_advance = [&](uint64_t from, uint64_t to) {
        ran = true;
        if (!taken && from <= request.at_ns && request.at_ns < to)
            taken = state_json(sim.model(), request.at_ns, state);
    };
    std::string failed;
    try {
        run_traffic(sim, *request.traffic);
    } catch (const Error& e) {
        if (!ran) throw;
        failed = e.what();
    }
    sim.engine().on_advance = nullptr;
    if (!taken) taken = state_json(sim, state);  // it ended (or stuck) before at_ns
    take_routers_from_their_ranks(sim, *taken);
    printf("%s\n", taken->dump(1).c_str());
    if (!failed.empty()) throw Error(failed);  // after the state: a deadlock's is the one to see
}

void trace_command(const ModelOptions& options, const TraceRequest& request) {
    check_traffic(request.traffic);
    Simulation sim(unplugging(options, request.fail));
    say_unplugged(request.fail);
    TrafficRecorder recorder(sim.engine(), request.max_packets);
    const OpTime t = run_traffic(sim, request.traffic);
    recorder.gather();
    if (sim.engine().ranks().rank() == 0) {  // the others hold the same record
        std::ofstream out(request.out);
        if (!out) throw Error("cannot write '" + request.out + "'");
        recorder.write(out, {{"cluster", options.cluster},
                             {"op", request.traffic.op},
                             {"bytes", request.traffic.bytes},
                             {"chips", t.chips},
                             {"op_ns", t.ns}});
        if (!out.flush()) throw Error("cannot write '" + request.out + "'");
    }
    uint64_t hops = 0, arrived = 0;
    for (const RecordedPacket& p : recorder.packets()) hops += p.hops.size(), arrived += p.arrived;
    printf("%s on %u chips: %.3f us virtual; %zu packets (%llu arrived), %llu hops%s -> %s\n",
           describe(request.traffic).c_str(), t.chips, double(t.ns) / 1e3, recorder.packets().size(),
           (unsigned long long)arrived, (unsigned long long)hops,
           recorder.truncated() ? " (record full: see its note)" : "", request.out.c_str());
}

void picture_command(const ModelOptions& options, const PictureRequest& request) {
    Simulation sim(unplugging(options, request.fail));
    say_unplugged(request.fail);
    if (request.routes_of && *request.routes_of >= sim.chips())  // before any picture is drawn
        throw Error("--routes-of: the cluster has chips 0-" + std::to_string(sim.chips() - 1) + ", not " +
                    std::to_string(*request.routes_of));
    const bool draws = sim.engine().ranks().rank() == 0;  // every rank makes the pictures' text; one draws them
    if (draws) std::filesystem::create_directories(request.out_dir);
    const std::string cluster = request.out_dir + "/cluster.svg";
    const std::string dot = cluster_dot(sim);
    if (draws) draw_picture(dot, cluster);
    printf("%s\n", cluster.c_str());
    if (request.routes_of) {
        PictureOptions o;
        o.routes_of = request.routes_of;
        o.title = options.cluster + ": the routes of chip " + std::to_string(*request.routes_of);
        const std::string routes = request.out_dir + "/routes-of-" + std::to_string(*request.routes_of) + ".svg";
        const std::string routes_dot = cluster_dot(sim, o);
        if (draws) draw_picture(routes_dot, routes);
        printf("%s\n", routes.c_str());
    }
}

OpTime run_command(const ModelOptions& options, const RunRequest& request) {
    check_traffic(request.traffic);
    Simulation sim(unplugging(options, request.fail));
    say_unplugged(request.fail);
    std::optional<OccupancySampler> sampler;
    if (!request.occupancy_png.empty()) sampler.emplace(sim.engine(), request.every_ns);
    // Every rank gathers what the pictures show; rank 0 draws them.
    const bool draws = sim.engine().ranks().rank() == 0;
    auto draw = [&](const std::string& title) {
        if (sampler) {
            sampler->sample_end();
            sampler->gather();
            if (draws) occupancy_heatmap(sampler->samples(), request.occupancy_png, title);
            fprintf(stderr, "occupancy: %s\n", request.occupancy_png.c_str());
        }
        if (!request.picture.empty()) {
            PictureOptions o;
            o.title = title;
            const std::string dot = cluster_dot(sim, o);
            if (draws) draw_picture(dot, request.picture);
            fprintf(stderr, "picture: %s\n", request.picture.c_str());
        }
    };
    const std::string title = options.cluster + ": " + describe(request.traffic);
    try {
        const OpTime t = run_traffic(sim, request.traffic);
        draw(title);
        return t;
    } catch (const Error&) {
        if (sim.engine().events_run() == 0) throw;  // refused before it ran: nothing to draw
        draw(title + " (stuck at " + std::to_string(sim.engine().now_ns()) + " ns)");
        throw;
    }
}

}  // namespace weft::fabric_model
