// How the bridge starts a chip's QEMU (host/bridge/qemu_config.h): the shipped
// qemu/qemu-virt.args gives the arguments the bridge always passed, and a
// missing or malformed file is refused naming the file (and line).
#include <stdlib.h>

#include <map>
#include <string>
#include <vector>

#include "bridge/qemu_config.h"
#include "common/error.h"

// cmocka last: its fail() macro would clash with the C++ headers.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

using namespace weft;

namespace {

std::string shipped() { return std::string(getenv("WEFT_SOURCE_DIR")) + "/qemu/qemu-virt.args"; }

std::map<std::string, std::string> chip_values(const std::string& accel = "") {
    return {{"RAM_MB", "512"},           {"RAM_FD", "200"},  {"HARTS", "8"},
            {"BOOT_ELF", "/b/boot.elf"}, {"UART_FD", "201"}, {"QMP_SOCKET", "/run/chip0.qmp"},
            {"QEMU_ACCEL", accel}};
}

// What weft-bridge's C++ put on QEMU's command line before the file existed.
std::vector<std::string> args_before(const std::string& accel) {
    return {"-nodefaults",
            "-display",
            "none",
            "-monitor",
            "none",
            "-machine",
            "virt,memory-backend=ram",
            "-object",
            "memory-backend-file,id=ram,size=512M,mem-path=/proc/self/fd/200,share=on",
            "-m",
            "512M",
            "-smp",
            "8",
            "-accel",
            accel,
            "-bios",
            "none",
            "-kernel",
            "/b/boot.elf",
            "-chardev",
            "socket,id=uart,fd=201",
            "-serial",
            "chardev:uart",
            "-qmp",
            "unix:/run/chip0.qmp,server=on,wait=off"};
}

void expect_args(const std::vector<std::string>& got, const std::vector<std::string>& want) {
    std::string g, w;
    for (const auto& a : got) g += a + " ";
    for (const auto& a : want) w += a + " ";
    if (g != w) fail_msg("got:  %s\nwant: %s", g.c_str(), w.c_str());
}

std::string error_of(const std::string& text) {
    try {
        QemuConfig::parse(text, "q.args");
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

void expect_in(const std::string& text, const char* part) {
    if (text.find(part) == std::string::npos) fail_msg("expected '%s' in: '%s'", part, text.c_str());
}

// Every placeholder the bridge needs, on lines 1-4; a test appends its bad line 5.
const char* kComplete = "-m ${RAM_MB}M\n"
                        "-object ram,fd=${RAM_FD}\n"
                        "-smp ${HARTS}\n"
                        "-kernel ${BOOT_ELF},uart=${UART_FD},qmp=${QMP_SOCKET}\n";

void test_shipped_file_gives_the_same_arguments(void**) {
    const QemuConfig c = QemuConfig::load(shipped());
    expect_args(c.args(chip_values()), args_before("tcg,thread=single"));
    expect_args(c.args(chip_values("kvm")), args_before("kvm"));  // WEFT_QEMU_ACCEL=kvm
}

void test_missing_file_is_named(void**) {
    bool threw = false;
    try {
        QemuConfig::load("/nonexistent/qemu/chip.args");
    } catch (const Error& e) {
        threw = true;
        expect_in(e.what(), "cannot open QEMU configuration '/nonexistent/qemu/chip.args'");
    }
    assert_true(threw);
}

void test_malformed_lines_are_refused_with_their_line(void**) {
    const std::string base = kComplete;
    expect_in(error_of(base + "smp 8\n"), "q.args:5: 'smp' is not a QEMU option");
    expect_in(error_of(base + "-accel tcg thread=single\n"), "q.args:5: one option and at most one value per line");
    expect_in(error_of(base + "-accel ${QEMU_ACCEL\n"), "q.args:5: '${QEMU_ACCEL' has no closing '}'");
    const std::string e = error_of(base + "-cpu ${CPU}\n");
    expect_in(e, "q.args:5: unknown placeholder ${CPU}");
    expect_in(e, "RAM_MB, RAM_FD, HARTS, BOOT_ELF, UART_FD, QMP_SOCKET, QEMU_ACCEL");
    expect_in(error_of(base + "-accel ${}\n"), "q.args:5: unknown placeholder ${}");
    assert_string_equal(error_of(base + "# a comment\n\n-accel ${QEMU_ACCEL:-tcg}\n").c_str(), "");
}

// A file that leaves out what the bridge's end of the chip needs would start
// a QEMU that never comes up: refused at once, naming what is missing.
void test_required_placeholders(void**) {
    const std::string e = error_of("-m ${RAM_MB}M\n-smp ${HARTS}\n-kernel ${BOOT_ELF}\n-qmp ${QMP_SOCKET}\n"
                                   "-chardev fd=${UART_FD}\n");
    expect_in(e, "q.args: never uses ${RAM_FD}");
    expect_in(error_of(""), "q.args: no QEMU options in it");
}

void test_placeholder_without_value_or_default(void**) {
    const QemuConfig c = QemuConfig::parse(std::string(kComplete) + "-accel ${QEMU_ACCEL}\n", "q.args");
    bool threw = false;
    try {
        c.args(chip_values());
    } catch (const Error& e) {
        threw = true;
        expect_in(e.what(), "q.args:5: ${QEMU_ACCEL} has no value and no default");
    }
    assert_true(threw);
}

}  // namespace

int main() {
    if (!getenv("WEFT_SOURCE_DIR")) {
        fprintf(stderr, "WEFT_SOURCE_DIR must be set\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shipped_file_gives_the_same_arguments),
        cmocka_unit_test(test_missing_file_is_named),
        cmocka_unit_test(test_malformed_lines_are_refused_with_their_line),
        cmocka_unit_test(test_required_placeholders),
        cmocka_unit_test(test_placeholder_without_value_or_default),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
