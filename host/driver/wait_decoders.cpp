#include "driver/wait_decoders.h"

#include <cstdio>
#include <map>
#include <mutex>

namespace weft {
namespace {

struct Registered {
    std::string owner;
    WaitDecoder decode;
};

std::mutex& registry_mutex() {
    static std::mutex mu;
    return mu;
}

std::map<uint32_t, Registered>& registry() {
    static std::map<uint32_t, Registered> decoders;
    return decoders;
}

}  // namespace

void register_wait_decoder(uint32_t kind, const std::string& owner, WaitDecoder decode) {
    std::lock_guard<std::mutex> lock(registry_mutex());
    registry()[kind] = {owner, std::move(decode)};
}

std::string decode_owned_wait(uint32_t kind, const MachineChip& chip, const abi::HartStatus& status) {
    Registered r;
    {
        std::lock_guard<std::mutex> lock(registry_mutex());
        auto it = registry().find(kind);
        if (it == registry().end()) return "";
        r = it->second;
    }
    try {
        return r.decode(chip, status);
    } catch (const std::exception& e) {
        char at[32];
        std::snprintf(at, sizeof at, "0x%llx", static_cast<unsigned long long>(status.wait_addr));
        return r.owner + " wait at " + at + " (undecodable: " + e.what() + ")";
    }
}

}  // namespace weft
