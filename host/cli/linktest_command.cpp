// weft linktest: data over every link both ways at once, every byte checked.
#include <cstdio>

#include "cli/arguments.h"
#include "cli/commands.h"
#include "driver/cluster_file.h"
#include "driver/link_test.h"

namespace weft::cli {
namespace {

struct LinktestArgs {
    LinkTestOptions test;
    uint64_t packet = LinkTestOptions{}.packet;
    std::string cluster;
};

// One line per transfer; returns the wrong bytes and words it found.
uint64_t print_transfer(const LinkTransfer& t, const BoardInfo& b) {
    const std::string from = "chip " + std::to_string(t.from_chip) + "." + port_name(b, t.from_port);
    const std::string to = "chip " + std::to_string(t.to_chip) + "." + port_name(b, t.to_port);
    std::printf("  %-12s %-12s %10llu %12llu %12llu %12d %10.0f %8.2f\n", from.c_str(), to.c_str(),
                (unsigned long long)t.bytes, (unsigned long long)t.wrong_bytes, (unsigned long long)t.chip_checked,
                t.wrong_words, t.seconds * 1e6, t.seconds > 0 ? t.bytes / t.seconds / 1e9 : 0.0);
    return t.wrong_bytes + static_cast<uint64_t>(t.wrong_words);
}

int linktest(LinktestArgs a, const std::string& run_dir) {
    auto cluster = attach_or_start(run_dir, a.cluster, "ring8");
    a.test.packet = static_cast<uint32_t>(a.packet);
    std::printf("link test: %llu bytes each way over every link, packets of %u bytes\n",
                (unsigned long long)a.test.bytes, a.test.packet);
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<LinkTransfer> out = run_link_test(*cluster, a.test);
    std::printf("  %-12s %-12s %10s %12s %12s %12s %10s %8s\n", "from", "to", "bytes", "host: wrong", "chip checked",
                "chip: wrong", "send us", "GB/s");
    uint64_t wrong = 0, total = 0;
    for (const auto& t : out) {
        wrong += print_transfer(t, cluster->board());
        total += t.bytes;
    }
    const double wall = seconds_since(t0);
    std::printf(
        "%zu transfers over %zu links, %.1f MiB in %.2f s (%.2f GB/s aggregate, loading and checking included): %s\n",
        out.size(), out.size() / 2, total / 1048576.0, wall, total / wall / 1e9,
        wrong ? "DATA MISMATCH" : "every byte intact");
    return wrong ? 1 : 0;
}

}  // namespace

Command add_linktest(CLI::App& weft, Globals& g) {
    CLI::App* cmd = weft.add_subcommand("linktest", "move data over every link both ways at once, check every byte");
    auto a = std::make_shared<LinktestArgs>();
    add_size(*cmd, "--size", "SIZE", a->test.bytes, {4, kMaxBytes, 4},
             "bytes each way over each link; default " + size_text(a->test.bytes));
    add_size(*cmd, "--packet", "SIZE", a->packet, {1, UINT32_MAX}, "bytes per packet; default " + size_text(a->packet));
    add_cluster(*cmd, a->cluster);
    add_run_dir(*cmd, g.run_dir);
    return {cmd, [a, &g] { return linktest(*a, g.run_dir); }};
}

}  // namespace weft::cli
