// The hang report: where every chip and core of the cluster stands, read
// straight from the chips' control blocks, with the cores still owed a result
// marked. It names the wait each stuck core posted (semaphore, ring, launch),
// and what TT-link makes of the stuck chips' cables (from the bridge).
#include <iomanip>
#include <set>
#include <sstream>

#include "common/hex.h"
#include "driver/cluster.h"
#include "driver/cluster_file.h"
#include "driver/hart_state.h"
#include "driver/wait_decoders.h"

namespace weft {
namespace {

const char* state_name(uint32_t s) {
    switch (s) {
        case abi::kHartOff: return "OFF";
        case abi::kHartReady: return "READY";
        case abi::kHartRunning: return "RUNNING";
        case abi::kHartDone: return "DONE";
        case abi::kHartFault: return "FAULT";
    }
    return "?";
}

const char* link_name(uint32_t s) {
    switch (s) {
        case abi::kLinkUp: return "up";
        case abi::kLinkDown: return "DOWN";
    }
    return "-";
}

std::string describe_wait(const MachineChip& chip, const abi::HartStatus& st) {
    const abi::ChipControlBlock& cb = chip.control();
    switch (st.wait_kind) {
        case abi::kWaitNone: return "";
        case abi::kWaitLaunch: return "idle, waiting for a launch";
        case abi::kWaitSemaphore:
        case abi::kWaitWord: {
            std::string now = "?";
            try {
                now = std::to_string(chip.read32(st.wait_addr));
            } catch (...) {
            }
            return std::string(st.wait_kind == abi::kWaitSemaphore ? "semaphore " : "word ") + hex(st.wait_addr) +
                   " to reach " + std::to_string(st.wait_value) + " (now " + now + ")";
        }
        case abi::kWaitNocRing: {
            const auto& r = cb.noc[st.wait_addr % abi::kMaxCores];
            return "NoC ring (issued " + std::to_string(r.tail) + ", completed " + std::to_string(r.head) + ")";
        }
        case abi::kWaitEthRing: {
            const uint32_t port = static_cast<uint32_t>(st.wait_addr % abi::kMaxPorts);
            const auto& r = cb.eth[port];
            return "Ethernet port " + port_name(chip.board(), port) + " TX (issued " + std::to_string(r.tail) +
                   ", sent " + std::to_string(r.head) + ", link " + link_name(cb.port[port].state) + ")";
        }
        case abi::kWaitMathRing: {
            const auto& r = cb.math[st.wait_addr % abi::kMaxCores];
            return "math ring (issued " + std::to_string(r.tail) + ", completed " + std::to_string(r.head) + ")";
        }
    }
    const std::string owned = decode_owned_wait(st.wait_kind, chip, st);
    return owned.empty() ? "wait kind " + std::to_string(st.wait_kind) + " at " + hex(st.wait_addr) : owned;
}

template <typename Ring>
void ring_line(std::ostringstream& o, const char* what, const std::string& which, const Ring& r) {
    if (r.tail == r.head && r.error == abi::kRingOk) return;
    o << "      " << what << " " << which << ": issued " << r.tail << ", completed " << r.head;
    if (r.error) o << ", REFUSED command #" << r.error_index << ": " << ring_error_name(r.error);
    o << "\n";
}

// One line per TT-link cable touching `chips`, from the bridge's counters: a
// link that keeps retransmitting, retraining or is down explains most hangs.
void tt_link_lines(std::ostringstream& o, const nlohmann::json& links, const std::set<uint32_t>& chips) {
    for (const auto& l : links) {
        if (!chips.count(l["a"]["chip"].get<uint32_t>()) && !chips.count(l["b"]["chip"].get<uint32_t>())) continue;
        const auto end = [](const nlohmann::json& e) {
            return "chip " + std::to_string(e["chip"].get<int>()) + "." + e["name"].get<std::string>();
        };
        const auto dir = [](const nlohmann::json& d) {
            return "frames " + d["frames"].dump() + " delivered " + d["delivered"].dump() + " retx " +
                   d["retransmits"].dump() + " crc " + d["crc_errors"].dump() + " dropped " + d["dropped"].dump() +
                   " timeouts " + d["timeouts"].dump();
        };
        const auto& f = l["faults"];
        o << "  TT-link " << end(l["a"]) << " <-> " << end(l["b"]) << ": " << l["link_state"].get<std::string>()
          << " (cable " << l["state"].get<std::string>() << "), mode " << l["mode"].get<std::string>() << ", retrains "
          << l["retrains"].dump() << "\n      a>b " << dir(l["a_to_b"]) << "\n      b>a " << dir(l["b_to_a"])
          << "\n      faults: drop " << f["drop_rate"].get<double>() << " ber " << f["bit_error_rate"].get<double>()
          << " flap " << f["flap_period_ms"].dump() << "/" << f["flap_down_ms"].dump() << " ms\n";
    }
}

// Dead chips and pulled cables first: they explain most hangs at a glance.
void down_cables(std::ostringstream& o, Machine& machine) {
    const BoardInfo& board = machine.board();
    std::string down, dead;
    for (uint32_t chip = 0; chip < machine.chip_count(); ++chip) {
        if (!machine.alive(chip)) dead += " " + std::to_string(chip);
        for (uint32_t p = 0; p < board.ports.size(); ++p) {
            const abi::PortState& ps = machine.control(chip).port[p];
            // Each cable once, from its lower end.
            if (ps.state != abi::kLinkDown || std::make_pair(chip, p) > std::make_pair(ps.peer_chip, ps.peer_port))
                continue;
            down += " chip " + std::to_string(chip) + "." + port_name(board, p) + " <-> chip " +
                    std::to_string(ps.peer_chip) + "." + port_name(board, ps.peer_port) + ";";
        }
    }
    if (!dead.empty()) o << "DEAD chips:" << dead << "\n";
    if (!down.empty()) o << "DOWN cables:" << down.substr(0, down.size() - 1) << "\n";
}

void core_lines(std::ostringstream& o, Machine& machine, uint32_t chip,
                const std::set<std::pair<uint32_t, uint32_t>>& owed) {
    const BoardInfo& board = machine.board();
    const abi::ChipControlBlock& cb = machine.control(chip);
    for (uint32_t c = 0; c < board.cores.size(); ++c) {
        const abi::HartStatus& st = cb.hart[c];
        const bool stuck = owed.count({chip, c}) != 0;
        const bool busy = st.state == abi::kHartRunning || st.state == abi::kHartFault;
        if (!stuck && !busy) continue;  // idle cores would only bury the ones that matter
        const CoreInfo& ci = board.cores[c];
        std::string role = role_name(ci.role);
        if (ci.port >= 0) role += "/" + port_name(board, static_cast<uint32_t>(ci.port));
        if (!resident_name(machine, chip, c).empty()) role += " resident";
        o << "  core " << c << " " << std::left << std::setw(9) << role << " " << std::setw(8)
          << (stopped_by_host(st) ? "STOPPED" : state_name(st.state)) << " kernel '" << kernel_name(machine, chip, c)
          << "' launch " << cb.host.launch[c].seq << " (finished " << st.done_seq << ")";
        if (st.progress) o << " progress " << st.progress;
        if (stuck) o << "   <-- not finished";
        o << "\n";
        std::string wait = describe_wait(MachineChip(machine, chip), st);
        if (!wait.empty()) {
            // Asleep on its doorbell or between checks: a core that sleeps on a
            // condition already true was not rung for it (a missed doorbell).
            o << "      waiting on " << wait
              << (abi::doorbell_armed(cb.doorbell[c].seq) ? " (asleep on its doorbell)" : "") << "\n";
        }
        if (st.state == abi::kHartFault) o << "      " << machine.describe_fault(chip, c) << "\n";
        ring_line(o, "NoC ring", "of core " + std::to_string(c), cb.noc[c]);
        ring_line(o, "math ring", "of core " + std::to_string(c), cb.math[c]);
        if (ci.port >= 0)
            ring_line(o, "Ethernet TX", port_name(board, static_cast<uint32_t>(ci.port)), cb.eth[ci.port]);
    }
}

}  // namespace

std::string machine_hang_report(Machine& machine, const std::vector<CoreRef>& waiting) {
    std::set<std::pair<uint32_t, uint32_t>> owed;
    for (const CoreRef& r : waiting) owed.insert({r.chip, r.core});
    const BoardInfo& board = machine.board();
    std::ostringstream o;
    o << "=== weft hang report: cluster '" << machine.name() << "', " << machine.chip_count() << " chips ===\n";
    down_cables(o, machine);
    for (uint32_t chip = 0; chip < machine.chip_count(); ++chip) {
        const abi::ChipControlBlock& cb = machine.control(chip);
        o << "chip " << chip << (machine.alive(chip) ? "" : "  ** DEAD (QEMU exited) **") << "  links:";
        for (uint32_t p = 0; p < board.ports.size(); ++p) {
            o << " " << port_name(board, p) << ":" << link_name(cb.port[p].state);
            if (cb.port[p].state != abi::kLinkUnwired)
                o << "->" << cb.port[p].peer_chip << "." << port_name(board, cb.port[p].peer_port);
        }
        o << "\n";
        core_lines(o, machine, chip, owed);
    }
    return o.str();
}

std::string Cluster::hang_report(const std::vector<CoreRef>& waiting) {
    std::ostringstream o;
    o << machine_hang_report(*this, waiting);
    std::set<uint32_t> stuck_chips;
    for (const CoreRef& r : waiting) stuck_chips.insert(r.chip);
    if (!stuck_chips.empty() && control_) {
        o << "TT-link cables of the chips with unfinished cores (from weft-bridge):\n";
        try {
            // A short deadline: the report must come out even when the bridge is stuck too.
            tt_link_lines(o, control_->request({{"cmd", "counters"}}, nullptr, 2000)["links"], stuck_chips);
        } catch (const std::exception& e) {
            o << "  (unavailable: " << e.what() << ")\n";
        }
    }
    return o.str();
}

}  // namespace weft
