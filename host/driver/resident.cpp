#include "driver/resident.h"

#include <cstddef>
#include <thread>

#include "common/error.h"
#include "common/names.h"
#include "driver/kernel_args.h"
#include "driver/stall_clock.h"

namespace weft::resident {
namespace {

void record(Machine& machine, uint32_t chip, uint32_t core, const Region& l1) {
    abi::CoreImage& held = machine.control(chip).host.image[core];
    held.resident_control = l1.base;
    held.resident_l1_base = l1.base;
    held.resident_l1_size = l1.size;
}

void forget(Machine& machine, uint32_t chip, uint32_t core) {
    record(machine, chip, core, Region{});
    machine.forget_resident(chip, core);
}

// Until the image says it runs; its launch ending first is a failure. The
// timeout is in the cluster's own time (driver/stall_clock.h): on a busy host
// a chip that has not been given the CPU has not failed to start.
void wait_running(Machine& machine, uint32_t chip_id, uint32_t core, uint32_t seq, std::chrono::milliseconds timeout) {
    const uint64_t state = machine.control(chip_id).host.image[core].resident_control +
                           offsetof(abi::ResidentControl, state);
    StallClock clock(machine.processes());
    while (MachineChip(machine, chip_id).read32(state) != abi::kResidentRunning) {
        if (finished(machine, chip_id, core, seq)) {
            forget(machine, chip_id, core);
            const KernelResult r = result(machine, chip_id, core);  // throws FaultError on a fault
            throw Error("resident image '" + kernel_name(machine, chip_id, core) + "' on " + core_name(chip_id, core) +
                        " returned " + std::to_string(r.return_code) + " before it ran");
        }
        if (!machine.alive(chip_id)) throw Error("chip " + std::to_string(chip_id) + " died starting a resident image");
        clock.look(false);
        if (clock.total() > timeout) {
            const std::string report = machine.hang_report({{chip_id, core}});
            const std::string stopped = machine.stop_kernels({{{chip_id, core}, seq}}, std::chrono::milliseconds(3000));
            const std::string name = kernel_name(machine, chip_id, core);
            forget(machine, chip_id, core);
            throw TimeoutError("resident image '" + name + "' on " + core_name(chip_id, core) +
                               " did not start within " + std::to_string(timeout.count()) + " ms" + stopped + "\n" +
                               report);
        }
        machine.pass_time(std::chrono::microseconds(200));
    }
}

}  // namespace

Region kept_l1(const BoardInfo& board, uint32_t chip, uint32_t core, uint64_t l1_bytes) {
    const Region free = board.l1_free(core);
    if (l1_bytes < sizeof(abi::ResidentControl) || l1_bytes > free.size)
        throw L1Shortage("a resident image on " + core_name(chip, core) + " cannot keep " + std::to_string(l1_bytes) +
                    " bytes of L1: it needs at least " + std::to_string(sizeof(abi::ResidentControl)) +
                    " and the core has " + std::to_string(free.size) + " free");
    const uint64_t base = (free.end() - l1_bytes) & ~uint64_t(63);
    return {base, free.end() - base};
}

Running start(Machine& machine, uint32_t chip_id, uint32_t core, const KernelImage& image, uint64_t l1_bytes,
              const Configure& configure, std::chrono::milliseconds timeout) {
    if (chip_id >= machine.chip_count()) throw Error("the cluster has no chip " + std::to_string(chip_id));
    const BoardInfo& board = machine.board();
    if (core >= board.cores.size())
        throw Error("chip " + std::to_string(chip_id) + " has no core " + std::to_string(core));
    machine.claim("resident image " + image.name);
    if (const std::string name = resident_name(machine, chip_id, core); !name.empty())
        throw Error(core_name(chip_id, core) + " already runs the resident image '" + name + "'");
    const Region l1 = kept_l1(board, chip_id, core, l1_bytes);
    constexpr uint64_t kControlBytes = abi::kResidentControlBytes;
    abi::ResidentControl control{};
    control.magic = abi::kResidentMagic;
    control.state = abi::kResidentStarting;
    control.l1_base = l1.base;
    control.l1_size = l1.size;
    if (configure)
        control.config = configure(machine, chip_id, Region{l1.base + kControlBytes, l1.size - kControlBytes});
    machine.write(chip_id, l1.base, &control, sizeof control);
    const auto launched = machine.launch_all({{chip_id, core, &image, KernelArgWords::of(abi::ResidentArgs{l1.base})}});
    record(machine, chip_id, core, l1);
    machine.adopt_resident(chip_id, core);
    wait_running(machine, chip_id, core, launched.front().second, timeout);
    return {chip_id, core, image.name, l1, l1.base};
}

std::string stop(Machine& machine, uint32_t chip_id, uint32_t core, std::chrono::milliseconds timeout) {
    if (chip_id >= machine.chip_count()) throw Error("the cluster has no chip " + std::to_string(chip_id));
    if (core >= machine.board().cores.size() || resident_name(machine, chip_id, core).empty())
        throw Error(core_name(chip_id, core) + " runs no resident image");
    const std::string name = resident_name(machine, chip_id, core);
    if (!machine.alive(chip_id)) {  // nothing runs there any more
        forget(machine, chip_id, core);
        return "resident image '" + name + "' on " + core_name(chip_id, core) + ": its chip is dead";
    }
    const uint32_t stop = 1;
    machine.write(chip_id,
                  machine.control(chip_id).host.image[core].resident_control + offsetof(abi::ResidentControl, stop),
                  &stop, sizeof stop);
    machine.ring_core(chip_id, core);
    const uint32_t seq = machine.control(chip_id).host.launch[core].seq;
    std::string forced;
    try {
        machine.wait_all({{{chip_id, core}, seq}}, timeout, {});
    } catch (const FaultError& e) {
        forced = std::string("it ended in a fault: ") + e.what();
    } catch (const Error& e) {
        // wait_all has stopped its launch by force (the host's stop word, or a
        // reset of the chip): the image is gone either way.
        const std::string what = e.what();
        const size_t done = what.rfind("; stopped ");
        forced = "it did not stop within " + std::to_string(timeout.count()) + " ms" +
                 (done == std::string::npos ? "" : what.substr(done));
    }
    forget(machine, chip_id, core);
    return forced.empty() ? "" : "resident image '" + name + "' on " + core_name(chip_id, core) + ": " + forced;
}

std::vector<Running> list(Machine& machine) {
    std::vector<Running> out;
    for (uint32_t c = 0; c < machine.chip_count(); ++c) {
        for (uint32_t core = 0; core < machine.board().cores.size(); ++core) {
            const abi::CoreImage& held = machine.control(c).host.image[core];
            if (held.resident_l1_size)
                out.push_back({c,
                               core,
                               kernel_name(machine, c, core),
                               {held.resident_l1_base, held.resident_l1_size},
                               held.resident_control});
        }
    }
    return out;
}

}  // namespace weft::resident
