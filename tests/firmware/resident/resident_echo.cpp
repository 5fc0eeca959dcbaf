// A resident image for the tests of resident images: it answers every
// request the host writes with request + 1, for as long as it runs.
// Configuration: two words, request then reply (abi::ResidentControl::config).
#include "kernels/kernel.h"
#include "resident/resident.h"

using namespace weft;

namespace {

struct Echo {
    volatile uint32_t* request;
    volatile uint32_t* reply;

    bool poll() {
        const uint32_t want = *request + 1;
        if (*reply == want) return false;
        *reply = want;
        return true;
    }
    void stop() { *reply = 0; }
};

}  // namespace

extern "C" int kernel_main(KernelArgs a) {
    const auto& args = a.as<abi::ResidentArgs>();
    const auto& control = *reinterpret_cast<const abi::ResidentControl*>(args.control);
    if (!control.config) mailbox::panic(abi::kPanicBadArgs, 0);
    auto* words = reinterpret_cast<volatile uint32_t*>(control.config);
    Echo echo{words, words + 1};
    return resident::run(args, echo);
}
