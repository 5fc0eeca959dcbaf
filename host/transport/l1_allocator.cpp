#include "transport/l1_allocator.h"

#include <algorithm>

#include "common/error.h"
#include "driver/cluster_file.h"

namespace weft::transport {

Region L1Allocator::free_of(uint32_t chip, uint32_t core) const {
    Region free = board_.l1_free(core);
    if (auto it = end_.find({chip, core}); it != end_.end() && it->second < free.end())
        free.size = it->second > free.base ? it->second - free.base : 0;
    return free;
}

void L1Allocator::keep_out(uint32_t chip, uint32_t core, const Region& kept) {
    if (core >= board_.cores.size())
        throw Error("core " + std::to_string(core) + " does not exist on board " + board_.name);
    auto [it, fresh] = end_.try_emplace({chip, core}, kept.base);
    if (!fresh) it->second = std::min(it->second, kept.base);
}

uint64_t L1Allocator::allocate(uint32_t chip, uint32_t core, uint64_t bytes, uint64_t align, const std::string& what) {
    if (core >= board_.cores.size())
        throw Error("core " + std::to_string(core) + " does not exist on board " + board_.name);
    const Region free = free_of(chip, core);
    auto [it, fresh] = next_.try_emplace({chip, core}, free.base);
    const uint64_t at = (it->second + align - 1) / align * align;
    if (at + bytes > free.end()) {
        const CoreInfo& c = board_.cores[core];
        std::string name = role_name(c.role);
        if (c.port >= 0) name += " " + port_name(board_, static_cast<uint32_t>(c.port));
        throw L1Shortage("chip " + std::to_string(chip) + " core " + std::to_string(core) + " (" + name + ") L1: " + what +
                    " needs " + std::to_string(bytes) + " bytes but only " +
                    std::to_string(free.end() > at ? free.end() - at : 0) + " of its " + std::to_string(free.size) +
                    " free bytes are left" + (end_.count({chip, core}) ? " (a resident image keeps the rest)" : "") +
                    "; use fewer channels, slots or smaller packets");
    }
    it->second = at + bytes;
    return at;
}

uint64_t L1Allocator::used(uint32_t chip, uint32_t core) const {
    auto it = next_.find({chip, core});
    return it == next_.end() ? 0 : it->second - board_.l1_free(core).base;
}

}  // namespace weft::transport
