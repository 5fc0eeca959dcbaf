// Doorbells on QEMU virt. The chip's one UART is the wire between weft-bridge
// and the chip in both directions:
//   bridge -> cores: a byte received raises the UART's RX interrupt on the
//     PLIC, enabled in the M-mode context of every core that listens (one
//     running a kernel, or the idle hart on watch); a core that wants to be
//     woken sets mie.MEIE and WFIs (mstatus.MIE stays clear, so no trap is
//     taken). Which cores the ring is for, up to abi::kMaxCores, sits in the
//     control block (abi::DoorbellMask); the byte only raises the line. The
//     line is shared, so the first core awake takes the byte and wakes the
//     cores rung with a software interrupt (hal/ipi.h): a core the line woke
//     may find it already taken, and sleep on. Since QEMU 7.2's PLIC keeps a
//     source pending until a context claims it, taking the byte is claim,
//     read, complete.
//   cores -> bridge: a NUL byte written to the UART (the bridge filters NULs
//     out of the console text) while the bridge says it sleeps.
#include "hal/wake.h"

#include "clint.h"
#include "devices.h"
#include "hal/ipi.h"
#include "hal/mailbox.h"
#include "hal/timer.h"
#include "rt/csr.h"
#include "uart_16550.h"
#include "weft/board_layout.h"

namespace weft::wake {
namespace {

using namespace qemu_virt;
using namespace qemu_virt::uart16550;

volatile uint32_t* plic_word(uint64_t offset) { return reinterpret_cast<volatile uint32_t*>(WEFT_PLIC + offset); }
// QEMU virt gives each hart two PLIC contexts, M-mode first.
uint64_t m_context(uint64_t hart) { return 2 * hart; }

abi::HartDoorbell& me() { return devices().doorbell[mailbox::core_id()]; }

volatile uint32_t* claim_register() { return plic_word(0x200000 + 0x1000 * m_context(rt::hart_id()) + 4); }

// Takes the doorbell, if it rang, and passes it on to the cores it was for.
// Only when our view of the line says it is up: every access here is an
// emulated device access, and a claim that finds another core got there
// first has nothing to do. Returns whether the ring was (also) for us.
bool drain() {
    if (!(WEFT_CSR_READ(mip) & kMipMeip)) return false;
    const uint32_t irq = *claim_register();
    if (irq == 0) return false;
    // Reading the byte empties the UART (without its FIFO it holds one): a
    // ring that comes after this read raises the line (and the source) again.
    (void)regs()[kRbr];
    *claim_register() = irq;
    // The bridge wrote the mask before the byte we just read.
    __asm__ volatile("fence ir, r" ::: "memory");
    const uint32_t cores = abi::doorbell_take(devices().bells, WEFT_NUM_CORES);
    const uint64_t self = rt::hart_id();
    for (uint32_t c = 0; c < WEFT_NUM_CORES; ++c)
        if (c != self && (cores >> c & 1)) ipi::send(c);
    return cores >> self & 1;
}

}  // namespace

void init_core() {
    if (rt::hart_id() == 0) {
        *plic_word(4 * WEFT_UART_IRQ) = 1;  // priority above the threshold of 0
        regs()[kIer] = kIerRxAvailable;
    }
    *plic_word(0x200000 + 0x1000 * m_context(rt::hart_id())) = 0;  // threshold
    listen(false);
}

void listen(bool on) {
    // QEMU wakes the thread of every core whose PLIC context has the source
    // enabled when the line rises, whether that core's mie takes it or not.
    volatile uint32_t* enable = plic_word(0x2000 + 0x80 * m_context(rt::hart_id()) + 4 * (WEFT_UART_IRQ / 32));
    const uint32_t bit = 1u << (WEFT_UART_IRQ % 32);
    *enable = on ? (*enable | bit) : (*enable & ~bit);
}

void arm() {
    me().seq = abi::doorbell_arm(me().seq);
    // The bridge reads `doorbell` after its device writes; we read the
    // condition after arming: a full fence so one of us sees the other.
    __asm__ volatile("fence rw, rw" ::: "memory");
    if (drain()) {
        // A ring for this sleep's number came before the sleep and is spent
        // here, on the look our caller takes next. The bridge rings a number
        // once, so without a new one the next device write would not ring
        // us at all and we would sleep to the fallback alarm.
        me().seq = abi::doorbell_arm(me().seq);
        __asm__ volatile("fence rw, rw" ::: "memory");
    }
}

void disarm() { me().seq = abi::doorbell_disarm(me().seq); }

void sleep(uint32_t fallback_us) {
    // The alarm is moved only once it has fired: every write of mtimecmp
    // reschedules a timer in QEMU's main loop, which costs a thread switch.
    const uint64_t now = timer::now(), interval = uint64_t(fallback_us) * timer::ticks_per_us();
    if (timer::alarm() <= now || timer::alarm() - now > interval) timer::set_alarm(now + interval);
    WEFT_CSR_SET(mie, kMieMeie | kMieMsie | rt::kMieMtie);
    __asm__ volatile("wfi");
    __asm__ volatile("csrc mie, %0" ::"r"(kMieMeie | kMieMsie));
    if (WEFT_CSR_READ(mip) & kMipMsip) *msip(rt::hart_id()) = 0;
}

void notify_devices() {
    // Dekker with the bridge: it sets `sleeping`, fences, then looks at the
    // rings one last time; we published the ring tail, fence, then look here.
    __asm__ volatile("fence rw, rw" ::: "memory");
    const uint32_t sleeping = devices().bridge.sleeping;
    if (sleeping && sleeping != me().notified) {
        me().notified = sleeping;
        regs()[kThr] = 0;
    }
}

}  // namespace weft::wake
