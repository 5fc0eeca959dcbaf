#include "board.h"

#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>

extern "C" {
#include <libfdt.h>
}

#include "../common/error.h"
#include "common/hex.h"
#include "weft/abi/control_block.h"

namespace weft {

const char* role_name(CoreRole role) { return role == CoreRole::kErisc ? "erisc" : "worker"; }

uint32_t BoardInfo::planes() const {
    uint32_t n = 0;
    for (const auto& p : ports) n = std::max(n, p.plane + 1);
    return n;
}

int BoardInfo::port_for(abi::FabricCompass direction, uint32_t plane) const {
    for (const auto& p : ports)
        if (p.direction == direction && p.plane == plane) return static_cast<int>(p.id);
    return -1;
}

std::vector<uint32_t> BoardInfo::cores_with_role(CoreRole role) const {
    std::vector<uint32_t> out;
    for (const auto& c : cores)
        if (c.role == role) out.push_back(c.id);
    return out;
}

namespace {

struct Reader {
    const void* fdt;
    std::string where;

    [[noreturn]] void fail(const std::string& msg) const { throw Error("board DTB: " + where + ": " + msg); }
    const void* prop(int node, const char* name, int* len) const {
        const void* p = fdt_getprop(fdt, node, name, len);
        if (!p) fail(std::string("missing property '") + name + "'");
        return p;
    }
    uint32_t u32(int node, const char* name) const {
        int len = 0;
        const void* p = prop(node, name, &len);
        if (len != 4) fail(std::string("property '") + name + "' must be one cell");
        return fdt32_ld(static_cast<const fdt32_t*>(p));
    }
    uint64_t addr(int node, const char* name) const {
        int len = 0;
        const auto* p = static_cast<const fdt32_t*>(prop(node, name, &len));
        if (len != 8) fail(std::string("property '") + name + "' must be <hi lo>");
        return (uint64_t(fdt32_ld(p)) << 32) | fdt32_ld(p + 1);
    }
    Region region(int node, const char* name) const {
        int len = 0;
        const auto* p = static_cast<const fdt32_t*>(prop(node, name, &len));
        if (len != 16) fail(std::string("property '") + name + "' must be <base-hi base-lo size-hi size-lo>");
        Region r;
        r.base = (uint64_t(fdt32_ld(p)) << 32) | fdt32_ld(p + 1);
        r.size = (uint64_t(fdt32_ld(p + 2)) << 32) | fdt32_ld(p + 3);
        return r;
    }
    std::string str(int node, const char* name) const {
        int len = 0;
        const char* p = static_cast<const char*>(prop(node, name, &len));
        if (len < 1 || p[len - 1] != '\0') fail(std::string("property '") + name + "' must be a string");
        return std::string(p);
    }
    int subnode(int parent, const char* name) const {
        int n = fdt_subnode_offset(fdt, parent, name);
        if (n < 0) fail(std::string("missing node '") + name + "'");
        return n;
    }
};

void check_inside(const Reader& r, const Region& ram, const Region& reg, const std::string& what) {
    if (!ram.contains(reg.base, reg.size))
        r.fail(what + " [" + hex(reg.base) + ", " + hex(reg.end()) + ") lies outside RAM");
}

void check_header(const void* blob, size_t size) {
    if (size < sizeof(fdt_header) || fdt_check_header(blob) != 0 || fdt_totalsize(blob) > size)
        throw Error("board DTB: not a valid flattened devicetree");
}

// The root: which board this is and which chip it carries.
void read_identity(const Reader& r, BoardInfo& b) {
    std::string compat = r.str(0, "compatible");
    if (compat.rfind("weft,", 0) != 0) r.fail("compatible '" + compat + "' is not a weft board");
    b.name = compat.substr(5);
    b.model = r.str(0, "model");
    b.chip = r.str(0, "weft,chip");
}

// The board names its chip for the build; the chip's include says which it is.
void check_chip_include(const Reader& r, int chip, const BoardInfo& b) {
    const std::string included = r.str(chip, "compatible");
    if (included != "weft," + b.chip)
        r.fail("the board names chip '" + b.chip + "' (weft,chip) but includes chip '" + included + "'");
}

void read_isa(const Reader& r, int chip, BoardInfo& b) {
    b.isa = r.str(chip, "isa");
    b.abi = r.str(chip, "abi");
    if (b.isa.rfind("rv32", 0) != 0 && b.isa.rfind("rv64", 0) != 0)
        r.fail("isa '" + b.isa + "' is not an RV32 or RV64 ISA string (rv32imac, rv64imac, ...)");
}

void read_memory_map(const Reader& r, int chip, BoardInfo& b) {
    b.ram = r.region(chip, "ram");
    b.boot_firmware = r.region(chip, "boot-firmware");
    b.control_block = r.region(chip, "control-block");
    b.dram = r.region(chip, "dram");
    if (fdt_getprop(r.fdt, chip, "dram-banks", nullptr)) b.dram_banks = r.u32(chip, "dram-banks");
    if (b.dram_banks == 0 || b.dram.size % (uint64_t(b.dram_banks) * 4096))
        r.fail("dram-banks " + std::to_string(b.dram_banks) + " does not cut dram (" + hex(b.dram.size) +
               " bytes) into equal banks of whole 4 KiB pages");
    b.timebase_hz = r.u32(chip, "timebase-frequency");
    if (b.control_block.size < sizeof(abi::ChipControlBlock))
        r.fail("control-block is " + hex(b.control_block.size) + " bytes; the ABI needs " +
               hex(sizeof(abi::ChipControlBlock)));
}

void read_l1_layout(const Reader& r, int chip, BoardInfo& b) {
    b.code_size = r.u32(chip, "code-size");
    b.stack_size = r.u32(chip, "stack-size");
    b.args_size = r.u32(chip, "args-size");
}

// Only a chip QEMU emulates has this node; within it every property is required.
std::optional<QemuMachine> read_qemu_machine(Reader r, int chip) {
    const int node = fdt_subnode_offset(r.fdt, chip, "qemu-machine");
    if (node < 0) return std::nullopt;
    r.where = "/chip/qemu-machine";
    QemuMachine q;
    q.program = r.str(node, "program");
    q.args = r.str(node, "args");
    q.reserved = r.region(node, "reserved");
    q.uart = r.addr(node, "uart");
    q.uart_irq = r.u32(node, "uart-irq");
    q.plic = r.addr(node, "plic");
    q.clint = r.addr(node, "clint");
    q.test_device = r.addr(node, "test-device");
    return q;
}

CoreInfo read_core(const Reader& r, int node, const BoardInfo& b) {
    CoreInfo c;
    c.id = r.u32(node, "reg");
    std::string role = r.str(node, "role");
    if (role == "erisc") c.role = CoreRole::kErisc;
    else if (role == "worker")
        c.role = CoreRole::kWorker;
    else
        r.fail("unknown role '" + role + "' (expected erisc or worker)");
    if (c.role == CoreRole::kErisc) c.port = static_cast<int>(r.u32(node, "eth-port"));
    c.l1 = r.region(node, "l1");
    if (c.l1.size < uint64_t(b.code_size) + b.stack_size + b.args_size + 4096)
        r.fail("l1 is too small for code-size, stack-size and args-size plus 4 KiB of buffers");
    if (c.id != b.cores.size()) r.fail("cores must be numbered 0, 1, 2, ... in order");
    return c;
}

void read_cores(Reader r, int chip, BoardInfo& b) {
    const int cores = r.subnode(chip, "cores");
    int node;
    fdt_for_each_subnode(node, r.fdt, cores) {
        r.where = std::string("/chip/cores/") + fdt_get_name(r.fdt, node, nullptr);
        b.cores.push_back(read_core(r, node, b));
    }
    r.where = "/chip/cores";
    if (b.cores.empty()) r.fail("no cores");
    if (b.cores.size() > abi::kMaxCores) r.fail("more cores than the ABI's " + std::to_string(abi::kMaxCores));
}

PortInfo read_port(const Reader& r, int node, const BoardInfo& b) {
    PortInfo p;
    p.id = r.u32(node, "reg");
    std::string dir = r.str(node, "direction");
    if (dir.size() != 1 || abi::fabric_compass_of(dir[0]) > 3)
        r.fail("direction '" + dir + "' is not one of N, E, S, W");
    p.direction = static_cast<abi::FabricCompass>(abi::fabric_compass_of(dir[0]));
    p.plane = r.u32(node, "plane");
    p.core = r.u32(node, "core");
    if (p.id != b.ports.size()) r.fail("ports must be numbered 0, 1, 2, ... in order");
    if (p.core >= b.cores.size() || b.cores[p.core].role != CoreRole::kErisc ||
        b.cores[p.core].port != static_cast<int>(p.id))
        r.fail("core " + std::to_string(p.core) + " is not the ERISC core of this port");
    return p;
}

void read_ports(Reader r, int chip, BoardInfo& b) {
    const int ports = r.subnode(chip, "ports");
    int node;
    fdt_for_each_subnode(node, r.fdt, ports) {
        r.where = std::string("/chip/ports/") + fdt_get_name(r.fdt, node, nullptr);
        b.ports.push_back(read_port(r, node, b));
    }
    r.where = "/chip/ports";
    if (b.ports.size() > abi::kMaxPorts) r.fail("more ports than the ABI's " + std::to_string(abi::kMaxPorts));
    for (const auto& c : b.cores)
        if (c.role == CoreRole::kErisc && (c.port < 0 || c.port >= static_cast<int>(b.ports.size())))
            r.fail("ERISC core " + std::to_string(c.id) + " names a port that does not exist");
}

// Every window of RAM the board names lies inside RAM and apart from the others.
void check_regions(const Reader& r, const BoardInfo& b) {
    std::vector<std::pair<std::string, Region>> regions = {{"boot-firmware", b.boot_firmware},
                                                           {"control-block", b.control_block},
                                                           {"dram", b.dram}};
    if (b.qemu) regions.push_back({"qemu-machine reserved", b.qemu->reserved});
    for (const auto& c : b.cores) regions.push_back({"/chip/cores/core@" + std::to_string(c.id) + " l1", c.l1});
    for (size_t i = 0; i < regions.size(); ++i) {
        check_inside(r, b.ram, regions[i].second, regions[i].first);
        for (size_t j = i + 1; j < regions.size(); ++j) {
            const Region& a = regions[i].second;
            const Region& c = regions[j].second;
            if (a.base < c.end() && c.base < a.end()) r.fail(regions[i].first + " overlaps " + regions[j].first);
        }
    }
    if (b.xlen() == 32 && b.ram.end() > (uint64_t(1) << 32))
        r.fail("ram ends at " + hex(b.ram.end()) + ", beyond the 4 GiB an RV32 core (isa " + b.isa + ") can address");
    // QEMU writes its machine's DTB at the top of RAM at every reset.
    if (b.qemu && b.qemu->reserved.end() != b.ram.end()) r.fail("qemu-machine reserved must be the top of RAM");
}

}  // namespace

BoardInfo parse_board(const void* blob, size_t size) {
    check_header(blob, size);
    Reader r{blob, "/"};
    BoardInfo b;
    read_identity(r, b);
    const int chip = r.subnode(0, "chip");
    r.where = "/chip";
    check_chip_include(r, chip, b);
    read_isa(r, chip, b);
    read_memory_map(r, chip, b);
    read_l1_layout(r, chip, b);
    b.qemu = read_qemu_machine(r, chip);
    read_cores(r, chip, b);
    read_ports(r, chip, b);
    r.where = "/chip";
    check_regions(r, b);
    return b;
}

BoardInfo load_board(const std::string& dtb_path) {
    std::ifstream in(dtb_path, std::ios::binary);
    if (!in) throw Error("cannot open board DTB '" + dtb_path + "' (was the project built? run 'make')");
    std::string blob((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    try {
        return parse_board(blob.data(), blob.size());
    } catch (const Error& e) {
        throw Error(dtb_path + ": " + e.what());
    }
}

}  // namespace weft
