#include "driver/machine.h"

#include "common/error.h"
#include "driver/hart_state.h"

namespace weft {

std::string kernel_name(Machine& machine, uint32_t chip, uint32_t core) {
    return image_name(machine.control(chip).host.image[core]);
}

std::string resident_name(Machine& machine, uint32_t chip, uint32_t core) {
    return machine.control(chip).host.image[core].resident_l1_size ? kernel_name(machine, chip, core) : "";
}

bool finished(Machine& machine, uint32_t chip, uint32_t core, uint32_t seq) {
    return launch_ended(machine.control(chip).hart[core], seq);
}

KernelResult result(Machine& machine, uint32_t chip, uint32_t core) {
    const abi::HartStatus& st = machine.control(chip).hart[core];
    if (st.state == abi::kHartFault) throw FaultError(machine.describe_fault(chip, core));
    return returned(st);
}

uint64_t activity(Machine& machine) {
    uint64_t sum = 0;
    for (uint32_t chip = 0; chip < machine.chip_count(); ++chip)
        sum += activity(machine.control(chip), machine.board());
    return sum;
}

std::vector<std::pair<CoreRef, uint32_t>> MappedMachine::to_whole(
    std::vector<std::pair<CoreRef, uint32_t>> launched) const {
    for (auto& [ref, seq] : launched) ref.chip = chips_.at(ref.chip);
    return launched;
}

std::vector<std::pair<CoreRef, uint32_t>> MappedMachine::launch_all(const std::vector<Launch>& launches) {
    std::vector<Launch> whole = launches;
    for (Launch& l : whole) l.chip = chips_.at(l.chip);
    std::vector<std::pair<CoreRef, uint32_t>> launched = whole_.launch_all(whole);
    for (size_t i = 0; i < launched.size(); ++i) launched[i].first.chip = launches[i].chip;
    return launched;
}

std::string MappedMachine::hang_report(const std::vector<CoreRef>& waiting) {
    std::vector<CoreRef> whole = waiting;
    for (CoreRef& r : whole) r.chip = chips_.at(r.chip);
    return whole_.hang_report(whole);
}

}  // namespace weft
