// weft: one word per job.
//   weft up CLUSTER            start a cluster (a file, or a name from clusters/)
//   weft down                  stop it
//   weft status [--json]       chips, cores and links of the running cluster
//   weft linktest [--size S] [--packet P] [--cluster C]
//                              move data over every link both ways, check every byte
//   weft run OP [--size S ...]  run one collective op, check it, time it
//   weft bench OP -b MIN -e MAX -f FACTOR   nccl-tests style sweep
//   weft link CHIP PORT up|down   take a link down or bring it back
//   weft reset CHIP            reset a chip (its cores come back READY)
// Options for all: --run-dir DIR (default $WEFT_RUN_DIR or /tmp/weft-<uid>).
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/ccl_commands.h"
#include "common/error.h"
#include "common/sizes.h"
#include "driver/cluster.h"
#include "driver/cluster_file.h"
#include "driver/control_client.h"
#include "driver/link_test.h"
#include "driver/paths.h"

using namespace weft;

namespace {

struct Args {
    std::vector<std::string> words;
    std::string run_dir = paths::default_run_dir();
    std::string cluster;
    uint64_t size = 0;
    uint64_t packet = 0;
    bool json = false;
    cli::CclArgs ccl;
};

Args parse(int argc, char** argv) {
    Args a;
    for (int i = 1; i < argc; ++i) {
        std::string w = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw Error(w + " needs a value");
            return argv[++i];
        };
        if (w == "--run-dir") a.run_dir = value();
        else if (w == "--cluster") a.cluster = value();
        else if (w == "--size") a.size = parse_size(value());
        else if (w == "--packet") a.packet = parse_size(value());
        else if (w == "--json") a.json = true;
        else if (w == "--dtype") a.ccl.dtype = value();
        else if (w == "--redop") a.ccl.redop = value();
        else if (w == "--algo") a.ccl.algo = value();
        else if (w == "--root") a.ccl.root = static_cast<uint32_t>(parse_size(value()));
        else if (w == "--shape") a.ccl.shape = value();
        else if (w == "--dim") a.ccl.dim = static_cast<uint32_t>(parse_size(value()));
        else if (w == "-b" || w == "--minbytes") a.ccl.min_bytes = parse_size(value());
        else if (w == "-e" || w == "--maxbytes") a.ccl.max_bytes = parse_size(value());
        else if (w == "-f" || w == "--stepfactor") a.ccl.factor = static_cast<uint32_t>(parse_size(value()));
        else if (w == "-n" || w == "--iters") a.ccl.iters = static_cast<uint32_t>(parse_size(value()));
        else if (w == "-w" || w == "--warmup") a.ccl.warmup = static_cast<uint32_t>(parse_size(value()));
        else if (w == "--all-algos") a.ccl.all_algos = true;
        else if (w == "--no-check") a.ccl.check = false;
        else if (w == "--fit") a.ccl.fit = true;
        else if (w == "--json-out") a.ccl.json = value();
        else if (w == "--csv") a.ccl.csv = value();
        else if (w == "--png") a.ccl.png = value();
        else if (w.rfind("--", 0) == 0) throw Error("unknown option " + w + " (see 'weft help')");
        else a.words.push_back(w);
    }
    return a;
}

int help() {
    std::puts(
        "usage: weft COMMAND [options]\n"
        "  up CLUSTER              start a cluster from a cluster file or a name in clusters/ (ring8, pair, line4)\n"
        "  down                    stop the running cluster\n"
        "  status [--json]         chips, cores and links with their counters\n"
        "  linktest [--size S] [--packet P] [--cluster C]\n"
        "                          move S bytes over every link in both directions and check every byte\n"
        "                          (starts a temporary cluster C when none is up)\n"
        "  run OP [--size S --dtype T --redop R --algo A --root R --shape a,b,c,d --dim D --cluster C]\n"
        "                          run one collective op, check it against the host reference, time it\n"
        "                          ops: all_gather reduce_scatter all_reduce broadcast reduce gather scatter sendrecv\n"
        "                          types: f32 bf16 f16 i32; reductions: sum max min prod; --algo auto picks\n"
        "  bench OP -b MIN -e MAX -f FACTOR [--algo A|all] [-n ITERS] [--json-out F --csv F --png F] [--fit]\n"
        "                          nccl-tests style sweep: size, count, type, redop, time, algbw, busbw, #wrong\n"
        "  link CHIP PORT up|down  take a link down or bring it back\n"
        "  reset CHIP              reset one chip through QMP; its cores come back READY\n"
        "  fault CHIP PORT drop RATE | ber RATE | down | up | flap PERIOD_MS DOWN_MS | shape GB_PER_S [LATENCY_US]\n"
        "                | mode M | clear\n"
        "                          wire faults on the link at CHIP PORT: frame drop rate, bit-error rate,\n"
        "                          cable pulled or plugged, a flapping carrier; shape limits each direction\n"
        "                          to GB_PER_S (0: unshaped) and adds latency; clear removes them all;\n"
        "                          mode ttlink (Go-Back-N, lossless) or compliance (a bad frame is lost)\n"
        "options: --run-dir DIR    where the cluster's socket and logs live (default $WEFT_RUN_DIR or /tmp/weft-UID)");
    return 0;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int cmd_up(const Args& a) {
    if (a.words.size() != 2) throw Error("usage: weft up CLUSTER (e.g. weft up ring8)");
    const std::string file = paths::cluster_file(a.words[1]);
    // Refuse a bad file before starting anything, with the line that is wrong.
    ClusterSpec spec = load_cluster(file, paths::load_built_board);
    auto t0 = std::chrono::steady_clock::now();
    spawn_bridge(file, a.run_dir);
    std::printf("cluster '%s' up: %u chips of board %s, %zu links, in %.2f s (run dir %s)\n", spec.name.c_str(),
                spec.num_chips, spec.board_name.c_str(), spec.links.size(), seconds_since(t0), a.run_dir.c_str());
    return 0;
}

int cmd_down(const Args& a) {
    ControlClient c(a.run_dir);
    auto t0 = std::chrono::steady_clock::now();
    c.request({{"cmd", "shutdown"}});
    if (!c.wait_closed(20000)) throw Error("weft-bridge did not stop within 20 s (see " + a.run_dir + "/bridge.log)");
    std::printf("cluster down in %.2f s\n", seconds_since(t0));
    return 0;
}

// A link's wire faults in a few words: "none", or "drop 0.01 ber 1e-06 flap 100/20ms"
// (flap period/down time, as weft fault takes them).
std::string faults_text(const nlohmann::json& f) {
    std::string out;
    const auto add = [&](const char* fmt, auto... v) {
        char buf[64];
        std::snprintf(buf, sizeof buf, fmt, v...);
        out += out.empty() ? buf : std::string(" ") + buf;
    };
    if (const double d = f["drop_rate"].get<double>(); d > 0) add("drop %g", d);
    if (const double b = f["bit_error_rate"].get<double>(); b > 0) add("ber %g", b);
    if (const unsigned p = f["flap_period_ms"].get<unsigned>(); p > 0) add("flap %u/%ums", p, f["flap_down_ms"].get<unsigned>());
    return out.empty() ? "none" : out;
}

// A link's shaping: "unshaped" or e.g. "shaped 1.25 GB/s + 5 us".
std::string describe_shaping(double gbps, double latency_us) {
    if (gbps <= 0 && latency_us <= 0) return "unshaped";
    char buf[80];
    if (gbps > 0)
        std::snprintf(buf, sizeof buf, "shaped %g GB/s + %g us", gbps, latency_us);
    else
        std::snprintf(buf, sizeof buf, "shaped: full speed + %g us", latency_us);
    return buf;
}

// A status line's last column: the faults, and the shaping if there is any.
std::string faults_and_shaping(const nlohmann::json& link) {
    const std::string shaping = describe_shaping(link["shaping"]["bandwidth_gbps"], link["shaping"]["latency_us"]);
    return faults_text(link["faults"]) + (shaping == "unshaped" ? "" : ", " + shaping);
}

int cmd_status(const Args& a) {
    auto cluster = Cluster::attach(a.run_dir);
    nlohmann::json counters = cluster->counters();
    if (a.json) {
        nlohmann::json out = cluster->info();
        out["counters"] = counters;
        std::cout << out.dump(2) << "\n";
        return 0;
    }
    const nlohmann::json& info = cluster->info();
    std::printf("cluster '%s' (%s), board %s, %zu chips, bridge pid %d\n", info["name"].get<std::string>().c_str(),
                info["cluster_file"].get<std::string>().c_str(), info["board"].get<std::string>().c_str(), cluster->size(),
                info["bridge_pid"].get<int>());
    static const char* states = "-RrDF";  // off, ready, running, done, fault
    for (const auto& c : info["chips"]) {
        const uint32_t id = c["id"];
        Chip& chip = cluster->chip(id);
        std::string cores;
        for (uint32_t k = 0; k < cluster->board().cores.size(); ++k) cores += states[std::min<uint32_t>(uint32_t(chip.status(k).state), 4u)];
        std::printf("  chip %u  pid %-7d %-8s cores [%s]\n", id, c["pid"].get<int>(),
                    c["alive"].get<bool>() ? "alive" : c["state"].get<std::string>().c_str(), cores.c_str());
    }
    std::printf("  cores: R ready, r running, D done, F fault\n");
    std::printf("  %-14s %-14s %-10s %12s %14s %12s %14s %8s %8s %8s  %-10s %s\n", "link end a", "end b", "state",
                "frames a>b", "bytes a>b", "frames b>a", "bytes b>a", "retx", "crc err", "retrains", "mode", "faults");
    for (const auto& l : counters["links"]) {
        auto end = [](const nlohmann::json& e) {
            return "chip " + std::to_string(e["chip"].get<int>()) + "." + e["name"].get<std::string>();
        };
        const auto both = [&](const char* key) {
            return (unsigned long long)(l["a_to_b"][key].get<uint64_t>() + l["b_to_a"][key].get<uint64_t>());
        };
        std::printf("  %-14s %-14s %-10s %12llu %14llu %12llu %14llu %8llu %8llu %8llu  %-10s %s\n",
                    end(l["a"]).c_str(), end(l["b"]).c_str(), l["link_state"].get<std::string>().c_str(),
                    (unsigned long long)l["a_to_b"]["frames"], (unsigned long long)l["a_to_b"]["bytes"],
                    (unsigned long long)l["b_to_a"]["frames"], (unsigned long long)l["b_to_a"]["bytes"],
                    both("retransmits"), both("crc_errors"), (unsigned long long)l["retrains"].get<uint64_t>(),
                    (l["mode"].get<std::string>() + (l["mode_pending"].get<bool>() ? "*" : "")).c_str(),
                    faults_and_shaping(l).c_str());
    }
    const nlohmann::json ev = cluster->events();
    const auto& list = ev["events"];
    std::printf("  recent events (all in %s):%s\n", ev["log"].get<std::string>().c_str(), list.empty() ? " none" : "");
    for (size_t i = list.size() > 10 ? list.size() - 10 : 0; i < list.size(); ++i) {
        const auto& e = list[i];
        if (e["source"] == "bridge")
            std::printf("    %s  %s\n", e["when"].get<std::string>().c_str(), e["what"].get<std::string>().c_str());
        else
            std::printf("    %s  %s chip %d core %d port %s channel %d detail %llu%s%s\n",
                        e["when"].get<std::string>().c_str(), e["kind"].get<std::string>().c_str(), e["chip"].get<int>(),
                        e["core"].get<int>(), e["port_name"].get<std::string>().c_str(), e["channel"].get<int>(),
                        (unsigned long long)e["detail"].get<uint64_t>(), e.contains("link") ? "  link " : "",
                        e.contains("link") ? e["link"].get<std::string>().c_str() : "");
    }
    return 0;
}

// Attach to the running cluster, or start a temporary one from --cluster.
std::unique_ptr<Cluster> attach_or_start(const Args& a, const std::string& fallback) {
    try {
        if (a.cluster.empty()) return Cluster::attach(a.run_dir);
    } catch (const Error&) {
    }
    const std::string file = paths::cluster_file(a.cluster.empty() ? fallback : a.cluster);
    std::string run_dir = a.run_dir + "-tmp" + std::to_string(getpid());
    std::fprintf(stderr, "no cluster up in %s: starting a temporary one from %s\n", a.run_dir.c_str(), file.c_str());
    return Cluster::start(file, run_dir);
}

int cmd_linktest(const Args& a) {
    auto cluster = attach_or_start(a, "ring8");
    LinkTestOptions opt;
    if (a.size) opt.bytes = a.size;
    if (a.packet) opt.packet = static_cast<uint32_t>(a.packet);
    std::printf("link test: %llu bytes each way over every link, packets of %u bytes\n",
                (unsigned long long)opt.bytes, opt.packet);
    auto t0 = std::chrono::steady_clock::now();
    std::vector<LinkTransfer> out = run_link_test(*cluster, opt);
    const BoardInfo& b = cluster->board();
    std::printf("  %-12s %-12s %10s %12s %12s %12s %10s %8s\n", "from", "to", "bytes", "host: wrong", "chip checked",
                "chip: wrong", "send us", "GB/s");
    uint64_t wrong = 0, total = 0;
    for (const auto& t : out) {
        std::string from = "chip " + std::to_string(t.from_chip) + "." + port_name(b, t.from_port);
        std::string to = "chip " + std::to_string(t.to_chip) + "." + port_name(b, t.to_port);
        std::printf("  %-12s %-12s %10llu %12llu %12llu %12d %10.0f %8.2f\n", from.c_str(), to.c_str(),
                    (unsigned long long)t.bytes, (unsigned long long)t.wrong_bytes, (unsigned long long)t.chip_checked,
                    t.wrong_words, t.seconds * 1e6, t.seconds > 0 ? t.bytes / t.seconds / 1e9 : 0.0);
        wrong += t.wrong_bytes + static_cast<uint64_t>(t.wrong_words);
        total += t.bytes;
    }
    const double wall = seconds_since(t0);
    std::printf("%zu transfers over %zu links, %.1f MiB in %.2f s (%.2f GB/s aggregate, loading and checking included): %s\n",
                out.size(), out.size() / 2, total / 1048576.0, wall, total / wall / 1e9,
                wrong ? "DATA MISMATCH" : "every byte intact");
    return wrong ? 1 : 0;
}

int cmd_ccl(Args a, bool bench) {
    if (a.words.size() != 2)
        throw Error(std::string("usage: weft ") + (bench ? "bench OP -b MIN -e MAX -f FACTOR" : "run OP --size S") +
                    " [--dtype T --redop R --algo A --cluster C]");
    a.ccl.op = a.words[1];
    a.ccl.size = a.size;
    auto cluster = attach_or_start(a, "ring8");
    return bench ? cli::cmd_bench(*cluster, a.ccl) : cli::cmd_run(*cluster, a.ccl);
}

int cmd_link(const Args& a) {
    if (a.words.size() != 4 || (a.words[3] != "up" && a.words[3] != "down"))
        throw Error("usage: weft link CHIP PORT up|down");
    ControlClient c(a.run_dir);
    auto reply = c.request({{"cmd", "link"},
                            {"chip", std::stoul(a.words[1])},
                            {"port", std::stoul(a.words[2])},
                            {"up", a.words[3] == "up"}});
    std::printf("link chip %d.%s <-> chip %d.%s is %s\n", reply["link"]["a"]["chip"].get<int>(),
                reply["link"]["a"]["name"].get<std::string>().c_str(), reply["link"]["b"]["chip"].get<int>(),
                reply["link"]["b"]["name"].get<std::string>().c_str(), reply["link"]["state"].get<std::string>().c_str());
    return 0;
}

// The whole word as a number, or NaN (which every range check refuses).
double whole_number(const std::string& word) {
    size_t used = 0;
    try {
        const double r = std::stod(word, &used);
        if (used == word.size()) return r;
    } catch (const std::exception&) {
    }
    return std::nan("");
}

double parse_rate(const std::string& word, const char* what) {
    const double r = whole_number(word);
    if (!(r >= 0 && r <= 1))
        throw Error(std::string(what) + " must be a number from 0 to 1 (e.g. 0.01 or 1e-6), not '" + word + "'");
    return r;
}

double parse_number(const std::string& word, const char* what) {
    const double r = whole_number(word);
    if (!(r >= 0)) throw Error(std::string(what) + " must be a non-negative number, not '" + word + "'");
    return r;
}

uint32_t parse_ms(const std::string& word, const char* what) {
    if (word.empty() || word.find_first_not_of("0123456789") != std::string::npos || word.size() > 9)
        throw Error(std::string(what) + " must be a whole number of milliseconds, not '" + word + "'");
    return static_cast<uint32_t>(std::stoul(word));
}

int cmd_fault(const Args& a) {
    static const char* usage = "usage: weft fault CHIP PORT drop RATE | ber RATE | down | up | flap PERIOD_MS DOWN_MS | shape GB_PER_S [LATENCY_US] | mode ttlink|compliance | clear";
    if (a.words.size() < 4) throw Error(usage);
    const uint32_t chip = parse_ms(a.words[1], "CHIP"), port = parse_ms(a.words[2], "PORT");
    const std::string& what = a.words[3];
    const size_t args = a.words.size() - 4;
    nlohmann::json req = {{"chip", chip}, {"port", port}};
    auto cluster = Cluster::attach(a.run_dir);
    if ((what == "down" || what == "up") && args == 0) {
        cluster->set_link(chip, port, what == "up");
    } else if (what == "drop" && args == 1) {
        req["drop_rate"] = parse_rate(a.words[4], "drop RATE");
    } else if (what == "ber" && args == 1) {
        req["bit_error_rate"] = parse_rate(a.words[4], "ber RATE");
    } else if (what == "flap" && args == 2) {
        req["flap_period_ms"] = parse_ms(a.words[4], "flap PERIOD_MS");
        req["flap_down_ms"] = parse_ms(a.words[5], "flap DOWN_MS");
    } else if (what == "shape" && (args == 1 || args == 2)) {
        req["bandwidth_gbps"] = parse_number(a.words[4], "shape GB_PER_S");
        if (args == 2) req["latency_us"] = parse_number(a.words[5], "shape LATENCY_US");
    } else if (what == "mode" && args == 1) {
        if (a.words[4] != "ttlink" && a.words[4] != "compliance")
            throw Error("mode must be ttlink or compliance, not '" + a.words[4] + "'");
        req["mode"] = a.words[4];
    } else if (what == "clear" && args == 0) {
        req["clear"] = true;
    } else {
        throw Error(std::string(usage) + "\n(got '" + what + "' with " + std::to_string(args) + " value(s))");
    }
    const nlohmann::json l = cluster->set_fault(chip, port, req);
    const nlohmann::json& f = l["faults"];
    const nlohmann::json& shape = l["shaping"];
    std::printf("link chip %d.%s <-> chip %d.%s: %s (%s), drop %g, ber %g, flap %u/%u ms, %s, mode %s%s\n",
                l["a"]["chip"].get<int>(), l["a"]["name"].get<std::string>().c_str(), l["b"]["chip"].get<int>(),
                l["b"]["name"].get<std::string>().c_str(), l["state"].get<std::string>().c_str(),
                l["link_state"].get<std::string>().c_str(), f["drop_rate"].get<double>(),
                f["bit_error_rate"].get<double>(), f["flap_period_ms"].get<unsigned>(), f["flap_down_ms"].get<unsigned>(),
                describe_shaping(shape["bandwidth_gbps"].get<double>(), shape["latency_us"].get<double>()).c_str(),
                l["mode"].get<std::string>().c_str(),
                l["mode_pending"].get<bool>() ? " (switching once the link drains)" : "");
    return 0;
}

int cmd_reset(const Args& a) {
    if (a.words.size() != 2) throw Error("usage: weft reset CHIP");
    ControlClient c(a.run_dir);
    auto t0 = std::chrono::steady_clock::now();
    c.request({{"cmd", "reset"}, {"chip", std::stoul(a.words[1])}}, nullptr, 15000);
    std::printf("chip %s reset, all cores READY in %.2f s\n", a.words[1].c_str(), seconds_since(t0));
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        Args a = parse(argc, argv);
        if (a.words.empty() || a.words[0] == "help" || a.words[0] == "-h") return help();
        const std::string& cmd = a.words[0];
        if (cmd == "up") return cmd_up(a);
        if (cmd == "down") return cmd_down(a);
        if (cmd == "status") return cmd_status(a);
        if (cmd == "linktest") return cmd_linktest(a);
        if (cmd == "link") return cmd_link(a);
        if (cmd == "run") return cmd_ccl(a, false);
        if (cmd == "bench") return cmd_ccl(a, true);
        if (cmd == "reset") return cmd_reset(a);
        if (cmd == "fault") return cmd_fault(a);
        throw Error("unknown command '" + cmd + "' (see 'weft help')");
    } catch (const std::exception& e) {
        std::fprintf(stderr, "weft: %s\n", e.what());
        return 1;
    }
}
