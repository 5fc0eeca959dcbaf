// A first host program: start a cluster, run the exchange kernel on both ends
// of its first cable, and check every word that crossed it.
//   build/bin/exchange_host [CLUSTER]     (default: pair; or a cluster file)
// Exit status 0 when both chips received the other's buffer intact.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <vector>

#include "exchange.h"
#include "weft.h"  // the driver; built against an install, it also finds that install's tools

using namespace weft;

int main(int argc, char** argv) {
    try {
        const std::string name = argc > 1 ? argv[1] : "pair";
        auto cluster = Cluster::start(paths::cluster_file(name), "/tmp/weft-example-" + std::to_string(getpid()));
        const BoardInfo& board = cluster->board();
        const LinkInfo cable = cluster->links().at(0);
        const KernelImage kernel = load_kernel_image(paths::firmware_dir(board.name) + "/example-kernels/exchange.elf");

        // Both chips use the same DRAM offsets: buffer, inbox, flag.
        constexpr uint32_t kWords = 4096;
        const uint64_t buffer = board.dram.base, inbox = buffer + 0x10000, flag = buffer + 0x20000;
        const uint32_t chips[2] = {cable.chip_a, cable.chip_b}, ports[2] = {cable.port_a, cable.port_b};
        std::vector<Launch> launches;
        for (int side = 0; side < 2; ++side) {
            cluster->chip(chips[side]).write32(flag, 0);
            example::ExchangeArgs a{};
            a.local_buffer = buffer;
            a.local_inbox = inbox;
            a.remote_inbox = inbox;
            a.local_flag = flag;
            a.remote_flag = flag;
            a.port = ports[side];
            a.words = kWords;
            a.chip = chips[side];
            a.peer = chips[1 - side];
            // The port's own ERISC core drives its Ethernet queue.
            launches.push_back({chips[side], board.ports.at(ports[side]).core, &kernel, KernelArgWords::of(a)});
        }
        const std::vector<KernelResult> results = cluster->run(launches, std::chrono::seconds(20));
        int wrong = 0;
        for (int side = 0; side < 2; ++side) {
            std::printf("chip %u: %d of %u words wrong\n", chips[side], results[side].return_code, kWords);
            wrong += results[side].return_code;
        }
        std::printf("%s\n", wrong ? "FAILED" : "both buffers crossed the cable intact");
        return wrong ? 1 : 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "exchange_host: %s\n", e.what());
        return 1;
    }
}
