#!/bin/bash
# cmake --install into a temporary prefix, then, with weft's source and build
# trees out of reach (hidden under an empty directory in a mount namespace of
# our own), use the install as a user would: the installed weft starts a
# cluster by name from its own clusters and firmware; an outside CMake project
# finds the package, runs a checked all-reduce, builds a kernel of its own that
# the installed weft launches, and runs a firmware unit test on the host
# board; pkg-config's flags build a program as the README shows.
set -u
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
TMP=$(mktemp -d)
PREFIX=$TMP/prefix
export WEFT_RUN_DIR=$TMP/run
unset WEFT_BUILD_DIR WEFT_SOURCE_DIR
trap '"$PREFIX/bin/weft" down >/dev/null 2>&1; [ -n "${KEEP:-}" ] || rm -rf "$TMP"' EXIT
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
check "the tools, library, headers, package files and man pages are installed" test -x "$PREFIX/bin/weft" -a \
    -x "$PREFIX/bin/weft-bridge" -a -f "$PREFIX/lib/libweft_ccl.a" -a -f "$PREFIX/include/weft/host/weft.h" -a \
    -f "$PREFIX/include/weft/abi/kernel_args.h" -a -f "$PREFIX/include/weft/firmware/kernels/kernel.h" -a \
    -f "$PREFIX/lib/cmake/weft/weftConfig.cmake" -a -f "$PREFIX/lib/cmake/weft/weftTargets.cmake" -a \
    -f "$PREFIX/lib/pkgconfig/weft.pc" -a -f "$PREFIX/share/man/man1/weft-launch.1" -a \
    -f "$PREFIX/share/bash-completion/completions/weft" -a -f "$PREFIX/share/weft/clusters/pair.yaml" -a \
    -f "$PREFIX/share/weft/firmware/qemu-virt/sdk/kernel.ld" -a -f "$PREFIX/share/doc/weft/CHANGELOG.md"
check "a board of an installed chip finds the chip's one firmware" test -L "$PREFIX/share/weft/firmware/qemu-virt-2plane" -a \
    -f "$PREFIX/share/weft/firmware/qemu-virt-2plane/sdk/kernel.ld"
check "only public headers: no bridge or CLI header" test ! -e "$PREFIX/include/weft/host/bridge" -a \
    ! -e "$PREFIX/include/weft/host/cli"
check "the tools are stripped" bash -c "! readelf -S '$PREFIX/bin/weft' | grep -q debug_info"
size_mb=$(du -sm "$PREFIX" | cut -f1)
check "the install is small ($size_mb MB)" test "$size_mb" -lt 40
check "no installed tool or library names the source tree" bash -c \
    "! grep -rlF '$SRC' '$PREFIX/bin' '$PREFIX/lib' '$PREFIX/share/weft/clusters' '$PREFIX/share/weft/qemu'"
cp -r "$SRC/tests/install" "$TMP/outside-src"
mkdir -p "$TMP/outside-src/example/host"
cp "$SRC/examples/exchange.h" "$TMP/outside-src/example/"
cp "$SRC/examples/host/exchange_host.cpp" "$TMP/outside-src/example/host/"

# The rest as a user with only the install: weft's trees are not there.
cat >"$TMP/as_user.sh" <<SCRIPT
set -u
mkdir -p "$TMP/empty"
mount --bind "$TMP/empty" "$SRC" || exit 99
[ -d "$BUILD/bin" ] && mount --bind "$TMP/empty" "$BUILD"
cd "$TMP"
echo "=== trees hidden: \$(ls "$SRC" | wc -l) entries in $SRC"
"$PREFIX/bin/weft" up pair >"$TMP/up" 2>&1
"$PREFIX/bin/weft" status --json >"$TMP/status" 2>&1
"$PREFIX/bin/weft" down >/dev/null 2>&1
cmake -S "$TMP/outside-src" -B "$TMP/outside" -DCMAKE_PREFIX_PATH="$PREFIX" >"$TMP/cfg.log" 2>&1 &&
    cmake --build "$TMP/outside" >"$TMP/build.log" 2>&1
echo \$? >"$TMP/built"
"$TMP/outside/outside" >"$TMP/allreduce" 2>&1
"$TMP/outside/exchange_host" pair >"$TMP/exchange" 2>&1
echo \$? >"$TMP/exchange.rc"
"$TMP/outside/outside_firmware_test" >"$TMP/fwtest" 2>&1
echo \$? >"$TMP/fwtest.rc"
"$TMP/outside/outside" model >"$TMP/model" 2>&1
"$PREFIX/bin/weft" up pair >/dev/null 2>&1
"$PREFIX/bin/weft" launch "$TMP/outside/outside_kernel.elf" --core 4 --args n=10 pad=0 scratch=0x81800000 >"$TMP/launch" 2>&1
"$PREFIX/bin/weft" down >/dev/null 2>&1
cat >"$TMP/app.cpp" <<'APP'
#include <weft/host/weft.h>
#include <cstdio>
int main() { std::printf("app: firmware in %s\n", weft::paths::firmware_dir("qemu-virt").c_str()); }
APP
g++ "$TMP/app.cpp" -o "$TMP/app" \$(PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig pkg-config --cflags --libs weft) >"$TMP/app.log" 2>&1 &&
    "$TMP/app" >"$TMP/app.out" 2>&1
echo \$? >"$TMP/app.rc"
PYTHONPATH="$PREFIX/lib/python3/dist-packages" /usr/bin/python3 -c "
import numpy as np, weft
with weft.Cluster.start('pair') as c:
    print('python: all_reduce', c.all_reduce([np.full(8, 2, np.float32)] * c.chips)[0].tolist())
" >"$TMP/python" 2>&1
SCRIPT
unshare --mount --map-root-user bash "$TMP/as_user.sh" >"$TMP/as_user.log" 2>&1
check "the source and build trees were out of reach" has "$TMP/as_user.log" "=== trees hidden: 0 entries"
check "the installed weft starts a cluster by name from the install's clusters" has "$TMP/up" "cluster 'pair' up"
check "... its boards are the install's" has "$TMP/status" "$PREFIX/share/weft/boards/qemu-virt/board.dtb"
check "an outside project builds with find_package(weft): a program, a kernel, a firmware test" \
    test "$(cat "$TMP/built")" = 0
check "examples/host/exchange_host, built unchanged against the install, runs on its pair" \
    test "$(cat "$TMP/exchange.rc")" = 0
check "... the program runs a checked all-reduce on its own buffers, out of place and in place, with the installed firmware" \
    has "$TMP/allreduce" ": 0 wrong; in place: 0 wrong; send buffer intact; firmware from $PREFIX/share/weft/firmware/qemu-virt"
check "... its firmware test passes on the host board" test "$(cat "$TMP/fwtest.rc")" = 0
check "... its program runs a checked all-reduce on the installed host-model machine (weft::model)" \
    has "$TMP/model" "model all-reduce over the fabric on 8 chips: 0 wrong of"
check "... the installed weft launches its kernel, which returns 1+...+10" has "$TMP/launch" "returned 55"
check "g++ app.cpp \$(pkg-config --cflags --libs weft) builds a program that finds the install without weft::init()" \
    has "$TMP/app.out" "app: firmware in $PREFIX/share/weft/firmware/qemu-virt"
check "import weft, from the install's Python package, runs an all-reduce on its own pair" \
    has "$TMP/python" "python: all_reduce \[4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0\]"
[ "$failed" -eq 0 ] || { cat "$TMP/as_user.log" "$TMP/python"; tail -20 "$TMP/build.log" "$TMP/app.log" "$TMP/launch" "$TMP/allreduce" "$TMP/model" 2>/dev/null; }
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
