// One emulated chip: its guest RAM (a memfd, never a file on disk, so nothing
// is left behind whatever happens to the processes) and its QEMU process.
#pragma once
#include <sys/types.h>

#include <string>

#include "bridge/qemu_config.h"
#include "devices/device_chip.h"
#include "driver/board.h"

namespace weft {

class ChipProcess final : public DeviceChip {
public:
    ChipProcess(uint32_t id, const BoardInfo& board, const std::string& run_dir);
    ~ChipProcess();
    ChipProcess(const ChipProcess&) = delete;
    ChipProcess& operator=(const ChipProcess&) = delete;

    // Starts the chip's QEMU: `qemu` with the arguments of `config` for this chip.
    void spawn(const std::string& qemu, const QemuConfig& config, const std::string& boot_firmware);
    // Called with the status waitpid returned for our pid.
    void mark_exited(int status);
    // SIGTERM, then SIGKILL after grace_ms; reaps the process.
    void terminate(int grace_ms);

    uint32_t id() const { return id_; }
    pid_t pid() const { return pid_; }
    bool alive() const override { return pid_ > 0 && !exited_; }
    int exit_status() const { return exit_status_; }
    int memfd() const { return memfd_; }
    const ChipMemory& memory() const override { return mem_; }
    abi::ChipControlBlock& control() const override { return mem_.control(board_.control_block.base); }
    // Resets the machine through QEMU's QMP socket (RAM is kept: the host
    // owns what is in it). Throws weft::Error if QEMU does not answer.
    void reset();
    std::string qmp_path() const;
    std::string console_path() const;

    // The chip's UART (see firmware/hal/wake.h): the bridge's end of it.
    // Wakes the cores sleeping on the chip's doorbell: those of `cores` (bit
    // c: core c), recorded in the control block's abi::DoorbellMask, then
    // the byte that makes the chip look.
    void ring_doorbell(uint32_t cores);
    // -1 once QEMU closed its end.
    int uart_fd() const { return uart_fd_; }
    // Reads what the chip wrote to its UART: console text goes to the console
    // file, NUL bytes are the cores' wake-ups of the bridge. Never blocks.
    void drain_uart();
    std::string qemu_log_path() const;
    std::string describe_exit() const;

private:
    uint32_t id_;
    const BoardInfo& board_;
    std::string run_dir_;
    int memfd_ = -1;
    int uart_fd_ = -1;     // bridge end of the UART's socket pair
    int console_fd_ = -1;  // the console file
    ChipMemory mem_;
    pid_t pid_ = -1;
    bool exited_ = false;
    int exit_status_ = 0;
};

}  // namespace weft
