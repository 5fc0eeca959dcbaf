// The main loop of a resident image (weft/abi/resident.h): poll the image's
// state machine until the host asks it to stop, sleeping on the doorbell
// whenever a poll finds nothing to do, never spinning. The image is any
// object with
//   bool poll();   // did something: call again at once
//   void stop();   // the host asked: wind down (drain, tell peers) and return
// which is how a fabric router is written, so the same object also runs in
// CMocka and in a host model of many chips. An image whose host side decodes
// its waits for the hang report (host/driver/wait_decoders.h) also has
//   uint32_t wait_kind() const;     // its abi::WaitKind
//   uint64_t wait_address() const;  // what the decoder reads
// and may have
//   uint32_t wait_value() const;    // abi::kWaitOthersOnly while it awaits none of its own commands
// and sleeps posted as that wait; otherwise as a wait on the stop word.
#pragma once
#include <stdint.h>

#include "hal/mailbox.h"
#include "hal/wake.h"
#include "rt/address.h"
#include "weft/abi/resident.h"

namespace weft::resident {

// A ring should never be missed; the alarm only bounds the damage if one is.
inline constexpr uint32_t kFallbackWakeUs = 100'000;

template <typename Image>
void post_wait(const abi::ResidentControl& control, const Image& image) {
    if constexpr (requires { image.wait_value(); })
        mailbox::set_wait(image.wait_kind(), image.wait_address(), image.wait_value());
    else if constexpr (requires { image.wait_kind(); })
        mailbox::set_wait(image.wait_kind(), image.wait_address(), 0);
    else
        mailbox::set_wait(abi::kWaitWord, address_of(&control.stop), 1);
}

template <typename Image>
int run(const abi::ResidentArgs& args, Image& image) {
    auto& control = *pointer_to<abi::ResidentControl>(args.control);
    control.state = abi::kResidentRunning;
    while (!control.stop) {
        if (image.poll()) {
            control.polls = control.polls + 1;
            continue;
        }
        // Armed before the last look: a ring between the look and the sleep
        // leaves the doorbell pending and the sleep returns at once.
        post_wait(control, image);
        wake::arm();
        const bool idle = !control.stop && !image.poll();
        mailbox::honour_stop();  // stopped by force: the image had no say
        if (idle) wake::sleep(kFallbackWakeUs);
        wake::disarm();
        mailbox::clear_wait();
        if (!idle) control.polls = control.polls + 1;
    }
    image.stop();
    control.state = abi::kResidentStopped;
    return 0;
}

}  // namespace weft::resident
