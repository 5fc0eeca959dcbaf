#!/bin/bash
# scripts/flash-and-run as a firmware engineer drives it, on one chip (no
# cluster): an image built for another board refused by name before it boots,
# GDB stopping at the image's entry (a real symbol, not inlined away), a run
# that GDB killed reported as killed, and the help.
set -u
BUILD=$1
SRC=$2
export WEFT_BUILD_DIR=$BUILD
FLASH=$SRC/scripts/flash-and-run
IMAGE=$BUILD/firmware/qemu-virt/images/hello_image.elf
IMAGE32=$BUILD/firmware/qemu-virt32/images/hello_image.elf
TMP=$(mktemp -d)
flash=
trap '[ -n "$flash" ] && kill "$flash" 2>/dev/null; rm -rf "$TMP"' EXIT
passed=0
failed=0

check() {  # check NAME CONDITION...
    local name=$1
    shift
    if "$@"; then
        passed=$((passed + 1))
        echo "ok   $name"
    else
        failed=$((failed + 1))
        echo "FAIL $name"
    fi
}
has() { grep -q -- "$2" "$1"; }
lacks() { ! grep -q -- "$2" "$1"; }

"$FLASH" --help >"$TMP/out" 2>&1
check "--help exits 0" test $? -eq 0
check "--help starts with the usage" test "$(head -1 "$TMP/out")" = \
    "flash-and-run IMAGE.elf [--board NAME] [--timeout SECONDS] [--smp N] [--gdb [PORT]]"
check "... and is the header comment only, no code" test "$(tail -1 "$TMP/out")" = \
    "--gdb: the chip starts halted with a gdbstub on PORT (default 1234)."

"$FLASH" "$IMAGE32" --timeout 5 </dev/null >"$TMP/out" 2>&1
check "an RV32 image on the RV64 board is refused" test $? -eq 2
check "... by name, with the chip it is for and its board" \
    has "$TMP/out" "was built for chip qemu-virt32, not board qemu-virt's chip qemu-virt: boot it with --board qemu-virt32"
check "... before it boots" lacks "$TMP/out" "hello_image: chip"
"$FLASH" "$IMAGE" --board qemu-virt32 --timeout 5 </dev/null >"$TMP/out" 2>&1
check "an image of a chip with two boards names both" has "$TMP/out" "boot it with --board qemu-virt[-a-z0-9]* or --board qemu-virt"
"$FLASH" "$IMAGE32" --board qemu-virt32 --timeout 30 </dev/null >"$TMP/out" 2>&1
check "on its own board it runs and passes" test $? -eq 0
check "... showing its console" has "$TMP/out" "hello_image: chip qemu-virt32"

check "the image's entry weft_image_main is a function of its own (not inlined by LTO)" \
    sh -c "riscv64-unknown-elf-nm '$IMAGE' | grep -qE ' [Tt] weft_image_main\$'"
port=$((20000 + $$ % 20000))
"$FLASH" "$IMAGE" --gdb "$port" --timeout 60 </dev/null >"$TMP/run" 2>&1 &
flash=$!
for _ in $(seq 100); do
    ss -ltn 2>/dev/null | grep -q "127.0.0.1:$port " && break
    sleep 0.1
done
gdb-multiarch -q -batch -ex "target remote 127.0.0.1:$port" -ex "break weft_image_main" -ex continue -ex kill \
    "$IMAGE" >"$TMP/gdb" 2>&1
check "GDB stops at 'break weft_image_main'" grep -q "Breakpoint 1, .*weft_image_main" "$TMP/gdb"
wait "$flash"
rc=$?
flash=
check "a run killed from GDB does not pass: exit code 137" test "$rc" -eq 137
check "... and says it was killed" has "$TMP/run" "killed from GDB before the image finished"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
