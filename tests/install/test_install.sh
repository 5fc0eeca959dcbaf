#!/bin/bash
# cmake --install into a temporary prefix, then, with the build tree out of
# reach (no WEFT_BUILD_DIR, a copy of nothing): the installed weft starts a
# cluster from its own firmware, an outside CMake project finds the package
# and runs a checked all-reduce, and pkg-config gives the flags to build it.
set -u
BUILD=$1
SRC=$2
TMP=$(mktemp -d)
PREFIX=$TMP/prefix
export WEFT_RUN_DIR=$TMP/run
unset WEFT_BUILD_DIR WEFT_SOURCE_DIR
trap '"$PREFIX/bin/weft" down >/dev/null 2>&1; rm -rf "$TMP"' EXIT
passed=0
failed=0
check() {
    local name=$1
    shift
    if "$@"; then passed=$((passed + 1)); echo "ok   $name"; else failed=$((failed + 1)); echo "FAIL $name"; fi
}
has() { grep -q -- "$2" "$1"; }

cmake --install "$BUILD" --prefix "$PREFIX" >"$TMP/install.log" 2>&1
check "cmake --install succeeds" test $? -eq 0
check "the library, headers, package files and man pages are installed" test -f "$PREFIX/lib/libweft.a" -a \
    -f "$PREFIX/include/weft/host/weft.h" -a -f "$PREFIX/include/weft/abi/kernel_args.h" -a \
    -f "$PREFIX/lib/cmake/weft/weftConfig.cmake" -a -f "$PREFIX/lib/pkgconfig/weft.pc" -a \
    -f "$PREFIX/share/man/man1/weft-launch.1" -a -f "$PREFIX/share/bash-completion/completions/weft"
"$PREFIX/bin/weft" up pair >"$TMP/out" 2>&1
check "the installed weft starts a cluster from the install's firmware" has "$TMP/out" "cluster 'pair' up"
"$PREFIX/bin/weft" status --json >"$TMP/status" 2>&1
check "... its boards are the install's" has "$TMP/status" "$PREFIX/lib/weft/boards/qemu-virt/board.dtb"
"$PREFIX/bin/weft" down >/dev/null 2>&1

cmake -S "$SRC/tests/install" -B "$TMP/outside" -DCMAKE_PREFIX_PATH="$PREFIX" >"$TMP/cfg.log" 2>&1 &&
    cmake --build "$TMP/outside" >"$TMP/build.log" 2>&1
check "an outside project builds with find_package(weft)" test $? -eq 0
"$TMP/outside/outside" >"$TMP/out" 2>&1
check "... and runs a checked all-reduce on its own buffers, out of place and in place, with the installed firmware" \
    has "$TMP/out" ": 0 wrong; in place: 0 wrong; send buffer intact; firmware from $PREFIX/lib/weft/firmware/qemu-virt"
PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig pkg-config --cflags --libs weft >"$TMP/flags" 2>&1
check "pkg-config knows weft" has "$TMP/flags" "-lweft"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
