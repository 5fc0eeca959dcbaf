#!/bin/bash
# The weft command line without a cluster: generated help, misplaced options
# and out-of-range numbers refused with exit code 2, naming the argument and
# its range. Nothing here may start a cluster: WEFT_QEMU is /bin/false, so a
# refusal that regressed into a start fails fast instead of booting QEMU.
set -u
BUILD=$1
SRC=$2
WEFT=$BUILD/bin/weft
export WEFT_BUILD_DIR=$BUILD
export WEFT_QEMU=/bin/false
export WEFT_RUN_DIR=/tmp/weft-cli-usage-$$
TMP=$(mktemp -d)
trap 'rm -rf "$TMP" "$WEFT_RUN_DIR" "$WEFT_RUN_DIR"-tmp*' EXIT
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
has() { grep -qF -- "$2" "$1"; }
lacks() { ! grep -qF -- "$2" "$1"; }
weft() {  # weft ARGS...: output in $TMP/out, exit code in $rc
    timeout 20 "$WEFT" "$@" >"$TMP/out" 2>&1
    rc=$?
}
# refused NAME TEXT ARGS...: exit code 2, TEXT in the message
refused() {
    local name=$1 text=$2
    shift 2
    weft "$@"
    check "$name: exit code 2" test "$rc" -eq 2
    check "$name: says '$text'" has "$TMP/out" "$text"
}

commands="up down status linktest link fault reset run bench routes help"

weft --help
check "weft --help exits 0" test "$rc" -eq 0
check "weft --help shows the usage" has "$TMP/out" "Usage: weft [OPTIONS] [COMMAND]"
for c in $commands; do check "weft --help lists $c" grep -qE "^  $c +[a-z]" "$TMP/out"; done
check "weft --help documents the exit codes" has "$TMP/out" "Exit codes:"
check "weft --help: 2 is a usage error" grep -qE "^  2  usage" "$TMP/out"
check "weft --help points at weft help env" has "$TMP/out" "'weft help env'"
cp "$TMP/out" "$TMP/main-help"
weft help
check "weft help is weft --help" cmp -s "$TMP/out" "$TMP/main-help"
weft
check "weft alone prints the help" cmp -s "$TMP/out" "$TMP/main-help"

for c in $commands; do
    weft "$c" --help
    check "weft $c --help exits 0" test "$rc" -eq 0
    check "weft $c --help shows its usage" has "$TMP/out" "Usage: weft $c [OPTIONS]"
    cp "$TMP/out" "$TMP/help-$c"
    weft help "$c"
    check "weft help $c is weft $c --help" cmp -s "$TMP/out" "$TMP/help-$c"
done
weft run --help
check "weft run --help names the op" has "$TMP/out" "Usage: weft run [OPTIONS] OP"
for o in --size --dtype --redop --algo --root --shape --dim --cluster --run-dir; do
    check "weft run --help has $o" has "$TMP/out" "  $o "
done
check "weft run --help gives --size's range" has "$TMP/out" "(1 to 1024G)"
check "weft run --help lists the algorithms" has "$TMP/out" "all_reduce: ring, full_mesh, reduce_root, tree, naive_ring"
check "weft run --help has no bench options" lacks "$TMP/out" "--minbytes"
weft fault 0 1 shape --help
check "a fault action's usage has the link" has "$TMP/out" "Usage: weft fault CHIP [PORT] shape [OPTIONS] GB_PER_S [LATENCY_US]"

weft help env
check "weft help env exits 0" test "$rc" -eq 0
cp "$TMP/out" "$TMP/env"
# Every knob the sources read through the registry is listed.
for k in $(grep -rhoE 'knob\("WEFT_[A-Z_]+"\)' "$SRC/host" "$SRC/bench" "$SRC/tests" | grep -oE 'WEFT_[A-Z_]+' | sort -u); do
    check "weft help env lists $k" grep -qE "^  $k\$" "$TMP/env"
done
# ... and so is every one the sources read past it, with getenv.
for k in $(grep -rhoE 'getenv\("WEFT_[A-Z_]+"\)' "$SRC/host" "$SRC/bench" | grep -oE 'WEFT_[A-Z_]+' | sort -u); do
    check "weft help env lists $k, which the sources read" grep -qE "^  $k\$" "$TMP/env"
done
check "weft help env lists WEFT_GDB with its default" has "$TMP/env" "a program (a path, or a name on PATH); default gdb-multiarch"
check "weft help env gives WEFT_CCL_SLOT_SIZE's range and default" \
    has "$TMP/env" "a multiple of 16 from 16 to 4294967280; default 131072; tuning file key ccl_slot_size"
check "weft help env lists the paths" has "$TMP/env" "a path; default /tmp/weft-UID"

refused "unknown command" "weft: unknown command 'frobnicate'" frobnicate
refused "unknown help topic" "TOPIC: must be up, down" help frobnicate
refused "weft up --dtype bf16" "weft up: does not take --dtype" up --dtype bf16
check "weft up --dtype bf16 shows up's usage" has "$TMP/out" "Usage: weft up [OPTIONS] CLUSTER"
refused "weft run --send that is no address" "--send: must be an address (0x81900000 or decimal), not '0xzz'" \
    run all_reduce --send 0xzz
refused "weft run --in-place with two addresses" "--in-place: --send and --recv differ" \
    run all_reduce --in-place --send 0x81900000 --recv 0x81a00000
refused "weft status --size 4" "weft status: does not take --size" status --size 4
refused "weft run takes no bench option" "weft run: does not take --no-check" run all_reduce --no-check
refused "weft linktest --dtype" "weft linktest: does not take --dtype" linktest --dtype f32
refused "a missing argument" "CLUSTER is required" up
refused "an extra argument" "not expected: extra" up pair extra

# Numbers: each refused where it is parsed, naming the argument and its range.
size_range="must be a size from 1 to 1024G"
refused "bench -e -1" "--maxbytes: $size_range" bench all_gather -e -1
refused "bench -e 2^63" "--maxbytes: $size_range" bench all_gather -e 9223372036854775808
refused "bench -e 0" "--maxbytes: $size_range" bench all_gather -e 0
refused "bench -b above -e" "-b/--minbytes 4096 is more than -e/--maxbytes 1024" bench all_gather -b 4K -e 1K
refused "bench -f 1" "--stepfactor: must be a whole number from 2 to 4294967295" bench all_gather -f 1
refused "bench -n -1" "--iters: must be a whole number from 0 to 4294967295" bench all_gather -n -1
refused "run --size 0" "--size: $size_range" run all_reduce --size 0
refused "run --size -4K" "--size: $size_range" run all_reduce --size -4K
refused "run --size 17179869184G" "--size: $size_range" run all_reduce --size 17179869184G
refused "run --shape overflowing" "--shape: must be four whole numbers a,b,c,d of at least 1, at most 2^40 elements" \
    run all_gather --shape 65536,65536,65536,65536
refused "run --shape of three" "--shape: must be four whole numbers" run all_gather --shape 1,2,3
refused "run --root 2^32 + 7" "--root: must be a whole number from 0 to 4294967295, not '4294967303'" \
    run broadcast --root 4294967303
refused "run --dim 4" "--dim: must be a whole number from 0 to 3" run all_gather --dim 4
refused "run --algo the op lacks" "--algo: all_reduce has no algorithm 'ring_bidir'" run all_reduce --algo ring_bidir
refused "run --transport sideways" "--transport: 'sideways' is not edm, fabric or auto" run all_reduce --transport sideways
refused "run --size not a whole element" "--size 3: not a whole number of f32 elements (4 bytes each)" \
    run all_gather --size 3
refused "run --send 0" "--send: address 0 is in no chip's DRAM (leave the option out: weft places it)" \
    run all_reduce --send 0x0
refused "run --shape of another op" "--shape: a tensor's shape applies to all_gather only" \
    run all_reduce --shape 1,1,32,32
refused "run --dim without --shape" "--dim: the dimension an all_gather's --shape is gathered along" \
    run all_gather --size 4K --dim 2
refused "a launch's --timeout in two groups" "kernel 2 (after ':' number 1): --timeout is the whole launch's: give it once" \
    launch wait_sem --core 5 --timeout 5 : fault --core 6 --timeout 6
refused "run --layout without --shape" "--layout: give the tensor's --shape a,b,c,d" run sendrecv --layout row
refused "run sendrecv in place" "--in-place: sendrecv cannot run in place" run sendrecv --in-place
refused "run --layout blob" "--layout: must be row or tile, not 'blob'" run all_gather --shape 1,1,32,32 --layout blob
refused "run --layout with --size" "--layout: --shape is the tensor's size: leave out --size" \
    run all_gather --shape 1,1,32,32 --layout tile --size 4K
refused "run --layout all_gather with --algo" "--layout: the tensor all_gather has one algorithm: leave out --algo" \
    run all_gather --shape 1,1,32,32 --layout tile --algo ring
refused "fabric --interval nan" "--interval: must be a number from 0.05 to 60, not 'nan'" fabric --interval nan
weft run all_gather --record /nonexistent/r.json
check "run --record to a folder that does not exist fails before the op" test "$rc" -eq 1
check "... naming the path" has "$TMP/out" "--record /nonexistent/r.json: cannot write it (No such file or directory)"
refused "run --record over the EDM" "--record logs what the fabric's routers send: use --transport fabric, not edm" \
    run all_gather --transport edm --record /tmp/never.json
refused "run the fabric's multicast over the EDM" \
    "--algo: all_gather's multicast algorithm runs on the fabric: add --transport fabric" run all_gather --algo multicast
refused "run an unknown op" "OP: unknown op 'allreduce' (ops: all_gather" run allreduce
weft --version
check "weft --version exits 0" test "$rc" -eq 0
check "weft --version names the version" grep -qE "^weft [0-9]+\.[0-9]+\.[0-9]+" "$TMP/out"
refused "weft --version with a command" "--version prints weft's version and takes no other words" --version extra
weft help fault shape
check "weft help fault shape is fault's help" has "$TMP/out" "Usage: weft fault"
refused "weft help of a word the command lacks" "weft fault has no 'bogus': see weft help fault" help fault bogus
WEFT_CLAIM_WAIT_MS=abc "$WEFT" status >"$TMP/out" 2>&1
check "a bad variable any command reads is usage, whatever the command" test $? -eq 2
check "... named first" test "$(head -1 "$TMP/out")" = "weft: WEFT_CLAIM_WAIT_MS=abc must be a whole number from 0 to 86400000"
WEFT_DEBUG=info WEFT_DEBUG_FILE=/nonexistent/weft.log "$WEFT" status >"$TMP/out" 2>&1
check "a WEFT_DEBUG_FILE that cannot be opened: exit code 2" test $? -eq 2
check "... named first" test "$(head -1 "$TMP/out")" = \
    "weft: WEFT_DEBUG_FILE=/nonexistent/weft.log: cannot open it for writing"
weft down --run-dir "$TMP/nothing-up"
check "weft down with nothing up is not an error" test "$rc" -eq 0
check "weft down with nothing up says so" has "$TMP/out" "nothing to stop"
refused "routes --chip past the cluster" "--chip: ring8 has no chip 99 (chips 0-7)" routes ring8 --chip 99
weft routes mesh3x3
check "weft routes mesh3x3 prints the seed's table" has "$TMP/out" "| 8 | WWNN | WNN | NN | WWN | WN | N | WW | W | - |"
check "weft routes mesh3x3 says the graph is acyclic" has "$TMP/out" "channel dependency graph: acyclic"
weft routes torus4x4 --json
check "weft routes --json is JSON with the verdict" has "$TMP/out" '"acyclic": true'
refused "run an unknown type" "--dtype: unknown data type 'f64'" run all_reduce --dtype f64
refused "reset 2^32 + 3" "CHIP: must be a whole number from 0 to 4294967295, not '4294967299'" reset 4294967299
refused "link 2^32" "CHIP: must be a whole number from 0 to 4294967295, not '4294967296'" link 4294967296 1 down
refused "link x" "CHIP: must be a whole number from 0 to 4294967295, not 'x'" link x 1 down
refused "link port 2^32 + 1" "PORT: must be a whole number from 0 to 4294967295" link 0 4294967297 down
refused "link sideways" "STATE: must be up or down, not 'sideways'" link 0 1 sideways
refused "fault drop 1.5" "RATE: must be a number from 0 to 1, not '1.5'" fault 0 1 drop 1.5
refused "fault shape fast" "GB_PER_S: must be a number from 0 to 10000, not 'fast'" fault 0 1 shape fast
refused "fault flap -1" "PERIOD_MS: must be a whole number from 0 to 4294967295" fault 0 1 flap -1 5
refused "fault mode lossy" "MODE: must be ttlink or compliance, not 'lossy'" fault 0 1 mode lossy
refused "fault with no action" "weft fault:" fault 0 1
refused "run all_gather --root 3" "--root: all_gather has no root" run all_gather --root 3
refused "run broadcast --redop max" "--redop: broadcast does not reduce" run broadcast --redop max
# weft launch A ... : B ...: each kernel's group checked before any cluster is reached.
refused "launch with an empty group after ':'" "kernel 2 (after ':' number 1): a ':' must be followed by a kernel" \
    launch reloc_probe --core 4 :
refused "launch with a group missing --core" "kernel 2 (after ':' number 1): --core is required" \
    launch reloc_probe --core 4 : reloc_probe --chip 1
refused "launch with a bad --chip in a group" "kernel 3 (after ':' number 2): --chip: must be a whole number" \
    launch reloc_probe --core 4 : reloc_probe --core 5 : reloc_probe --core 6 --chip x
refused "launch of two kernels on one core" "chip 1 core 4 is given two kernels" \
    launch reloc_probe --chip 1 --core 4 : reloc_probe --core 4 --chip 1
refused "':' on another command" "':' starts the next kernel of 'weft launch'" status : status
weft help launch
check "weft help launch shows the several-kernel form" has "$TMP/out" ": exchange --chip 1 --core 3 --args"
refused "linktest --size 6" "--size: must be a multiple of 4 bytes from 4 to 1024G" linktest --size 6
refused "linktest --packet 0" "--packet: must be a size from 1 to 4294967295" linktest --packet 0

# A bridge setting is refused before anything starts.
WEFT_BRIDGE_SPIN=x weft up pair
check "a bad WEFT_BRIDGE_SPIN: exit code 2" test "$rc" -eq 2
check "a bad WEFT_BRIDGE_SPIN is named with its range" \
    has "$TMP/out" "WEFT_BRIDGE_SPIN=x must be a whole number from 0 to 4294967295"
check "no run dir was made for it" test ! -e "$WEFT_RUN_DIR"
WEFT_BRIDGE_NAP_US=-5 weft linktest
check "a bad bridge knob before a temporary cluster: exit code 2" test "$rc" -eq 2
check "... named with its range" has "$TMP/out" "WEFT_BRIDGE_NAP_US=-5 must be a whole number from 0 to 1000000"

# Fabric settings the board can never hold are refused at up, by name.
printf 'name: bigfab\nboard: qemu-virt\nmeshes:\n  - id: 0\n    shape: [8, 1]\n    topology: ring\nfabric:\n  slots: 64\n  packet_bytes: 1048512\n' >"$TMP/bigfab.yaml"
weft up "$TMP/bigfab.yaml"
check "fabric settings that cannot fit are refused at up" test "$rc" -eq 1
check "... naming them at FILE:LINE" has "$TMP/out" "bigfab.yaml:8: the fabric's slots 64, packet_bytes 1048512 and lanes 4 do not fit board qemu-virt"
check "... before a run dir was made" test ! -e "$WEFT_RUN_DIR"

# Completion and man pages come from the command line's own definition.
$WEFT completion >"$TMP/weft.bash" 2>&1
check "weft completion is a bash script" bash -n "$TMP/weft.bash"
check "... that completes commands" bash -c "source '$TMP/weft.bash'; COMP_WORDS=(weft lau); COMP_CWORD=1; _weft; [ \"\${COMPREPLY[*]}\" = launch ]"
check "... and cluster names after up" bash -c "source '$TMP/weft.bash'; COMP_WORDS=(weft up tor); COMP_CWORD=2; _weft; [ \"\${COMPREPLY[*]}\" = torus4x4 ]"
offered() {  # offered WORD...: what the completion offers for the last word ('' for none typed yet)
    bash -c 'source "$0"; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _weft; echo "${COMPREPLY[*]}"' \
        "$TMP/weft.bash" weft "$@"
}
check "... the op's algorithms after --algo" test "$(offered run all_reduce --size 4K --algo '')" = \
    "auto ring full_mesh reduce_root tree naive_ring recursive_doubling halving_doubling swing 2d hierarchical"
check "... another op's, the fabric's among them" test "$(offered run all_gather --algo r)" = \
    "ring ring_bidir ring_halfway"
check "... and the fabric's multicast" test "$(offered run all_gather --algo m)" = "multicast"
check "... and a sweep's all" test "$(offered bench all_reduce --algo a)" = "auto all"
check "... the types after --dtype" test "$(offered run all_reduce --dtype '')" = "f32 bf16 f16 i32"
check "... and after bench's -d" test "$(offered bench all_reduce -d b)" = "bf16"
check "... the transports after --transport" test "$(offered bench all_gather --transport '')" = "edm fabric auto"
check "... kernels after launch" test "$(offered launch exch)" = "exchange"
check "... and after a launch's ':'" test "$(offered launch fault --core 4 : reloc)" = "reloc_probe"
check "... help topics: commands" test "$(offered help lau)" = "launch"
check "... and env" test "$(offered help e)" = "env"
check "... and the options of a group, as fabric's commands" test "$(offered fabric --pa)" = "--pause"
"$SRC/scripts/gen-man" "$WEFT" "$TMP/man" >/dev/null 2>&1
check "a man page per command" test "$(ls "$TMP/man" | wc -l)" -eq "$(($($WEFT --help | sed -n '/^Commands:/,/^$/p' | awk 'NR > 1 && NF' | wc -l) + 1))"
check "... made from its help by help2man" has "$TMP/man/weft-launch.1" "generated by help2man"
MANWIDTH=120 man -l "$TMP/man/weft-launch.1" >"$TMP/weft-launch.txt" 2>/dev/null
check "... which reads as the help: its options" grep -qE "^ +--timeout X" "$TMP/weft-launch.txt"
check "... its name and summary" grep -qE "^ +weft-launch - run kernels on cores" "$TMP/weft-launch.txt"
check "... and its usage" grep -qE "^ +weft launch \[OPTIONS\] KERNEL" "$TMP/weft-launch.txt"
SOURCE_DATE_EPOCH=86400 "$SRC/scripts/gen-man" "$WEFT" "$TMP/man-again" >/dev/null 2>&1
check "the man pages' date is SOURCE_DATE_EPOCH's" grep -q '^\.TH WEFT-LAUNCH "1" "January 1970"' "$TMP/man-again/weft-launch.1"
SOURCE_DATE_EPOCH=86400 "$SRC/scripts/gen-man" "$WEFT" "$TMP/man" >/dev/null 2>&1
check "... so two builds make the same pages" diff -r "$TMP/man" "$TMP/man-again"
check "make help lists the targets" bash -c "make -s -C '$SRC' help BUILD='$BUILD' 2>/dev/null | grep -c 'make bench' >/dev/null"
# --json errors are JSON too (no cluster is up here).
$WEFT routes no-such-cluster --json >"$TMP/out" 2>/dev/null
check "a --json command's usage error is JSON on stdout" python3 -c "import json; e = json.load(open('$TMP/out')); assert e['exit_code'] == 2 and 'no-such-cluster' in e['error'], e"
# The CLI page's WEFT_* list is the registry's.
cp "$SRC/docs/cli.md" "$TMP/cli.md"
"$SRC/scripts/update-readme-env" "$WEFT" "$TMP/cli.md"
check "docs/cli.md lists every WEFT_* variable as weft help env does (scripts/update-readme-env)" cmp -s "$SRC/docs/cli.md" "$TMP/cli.md"
# Every page the README points to exists.
for page in $(grep -o '](docs/[a-z/-]*\.md)\|](examples/README.md)\|](CHANGELOG.md)' "$SRC/README.md" | sed 's/^](//; s/)$//'); do
    check "the README's link to $page leads somewhere" test -f "$SRC/$page"
done
# The firmware is built once per chip: boards that carry one chip must lay it
# out alike, else the header tool names both (and builds nothing).
cp "$BUILD/boards/qemu-virt/board.dtb" "$TMP/edited.dtb"
fdtput -t x "$TMP/edited.dtb" /chip code-size 8000
"$BUILD/bin/weft-board-header" "$TMP/layout.h" "$BUILD/boards/qemu-virt-2plane/board.dtb" "$TMP/edited.dtb" \
    >"$TMP/out" 2>&1
check "boards of one chip laid out differently are refused by the header tool" test $? -eq 1
check "... naming both boards" has "$TMP/out" \
    "board 'qemu-virt' ($TMP/edited.dtb) lays out chip 'qemu-virt' unlike board 'qemu-virt-2plane' lays out chip 'qemu-virt'"
check "... and writing no header" test ! -e "$TMP/layout.h"
"$BUILD/bin/weft-board-header" "$TMP/layout.h" "$BUILD/boards/qemu-virt/board.dtb" \
    "$BUILD/boards/qemu-virt-2plane/board.dtb" >"$TMP/out" 2>&1
check "boards of one chip laid out alike make one header, naming the chip" has "$TMP/layout.h" '#define WEFT_CHIP_NAME "qemu-virt"'
printf 'const char* chip = "board " WEFT_BOARD_NAME;\n' >"$TMP/old.c"
riscv64-unknown-elf-gcc -include "$TMP/layout.h" -c "$TMP/old.c" -o "$TMP/old.o" >"$TMP/out" 2>&1
check "a kernel that names WEFT_BOARD_NAME still builds (deprecated, the chip's name)" test $? -eq 0
check "... warned to use WEFT_CHIP_NAME" has "$TMP/out" "WEFT_BOARD_NAME is deprecated: firmware is built per chip; use WEFT_CHIP_NAME"

# A row or column taken out of a mesh (the spec's downshifted mesh): the
# control plane's tables for the chips left, or why there are none.
"$WEFT" routes mesh3x3 --remove-column 2 >"$TMP/out" 2>&1
check "weft routes --remove-column: the chips left get tables" test $? -eq 0
check "... routed round the column, its chips marked x" has "$TMP/out" "| 1 | W | - | x | WS | S | x | WSS | SS | x |"
check "... the control plane's decision named" has "$TMP/out" "column 2 of mesh 0 taken out (chips 2, 5, 8): new tables"
check "... and their verdict" has "$TMP/out" "channel dependency graph: acyclic"
weft routes mesh3x3 --remove-column 0 --remove-column 1 --remove-column 2
check "taking out every chip of a mesh is refused" test "$rc" -eq 2
check "... saying so" has "$TMP/out" "--remove-column: taking them out would leave mesh 0 no chip"
weft routes mesh3x3 --remove-row 1 --remove-row 1
check "a row taken out twice is refused" has "$TMP/out" "--remove-row: those chips of mesh 0 are out already"
"$WEFT" routes torus4x4 --remove-row 1 >"$TMP/out" 2>&1
check "on a torus the rows round the removed one go the other way" has "$TMP/out" "| 0 | - | E | EE | W | x | x | x | x | NN |"
"$WEFT" routes mesh3x3 --remove-row 1 >"$TMP/out" 2>&1
check "a mesh the removal cuts in two fails (exit 1)" test $? -eq 1
check "... naming the chips on each side" has "$TMP/out" "CUT OFF: mesh 0 is cut: chips 0, 1, 2 cannot reach chips 6, 7, 8"
"$WEFT" routes 4mesh3x3 --remove-column 0:2 >"$TMP/out" 2>&1
check "removing a column of exit nodes gives mesh 0 new L1 exits" has "$TMP/out" "| 0 | 0 | - | 6 | 6 | 6 |"
check "... and none to its removed chips" has "$TMP/out" "| 0 | 2 | - | x | x | x |"
"$WEFT" routes 4mesh3x3 --remove-row 5 >"$TMP/out" 2>&1
check "a row without its mesh in a cluster of several is a usage error" test $? -eq 2
check "... asking for MESH:Y" has "$TMP/out" "--remove-row '5': 4mesh3x3 has 4 meshes: name one, MESH:Y"
"$WEFT" routes 4mesh3x3 --remove-row 0:7 >"$TMP/out" 2>&1
check "a row past the mesh is a usage error naming its rows" has "$TMP/out" "--remove-row: mesh 0 has no row 7 (rows 0-2)"

# The bench programs (built by make, not by make sanitize's unit-tests):
# weft run --model: the op on the host model, no cluster started (WEFT_QEMU
# is /bin/false), checked; what it cannot do refused by name.
weft run all_reduce --model --cluster mesh3x3 --transport fabric --size 64K
check "run --model: checked on the host model" test "$rc" -eq 0
check "run --model: says where it ran" has "$TMP/out" "all_reduce on the host model of mesh3x3 (9 chips, no QEMU)"
check "run --model: every element right" has "$TMP/out" "check: 147456 elements match the host reference"
refused "run --model --layout" "--model runs one op on the host model: leave out --layout" \
    run all_reduce --model --layout row --shape 1,1,32,32
refused "run --model --root out of range" "--root: the cluster has chips 0 to 1, not 5" \
    run broadcast --model --cluster pair --root 5

# --help says what each runs and exits 0; an argument it lacks is refused
# with exit code 2 before any bench starts.
for b in "$BUILD"/bin/weft-bench-*; do
    [ -x "$b" ] || continue
    name=$(basename "$b")
    timeout 20 "$b" --help >"$TMP/out" 2>&1
    check "$name --help exits 0" test $? -eq 0
    check "$name --help shows its usage" has "$TMP/out" "usage: $name"
    timeout 20 "$b" --no-such-option >"$TMP/out" 2>&1
    check "$name --no-such-option: exit code 2" test $? -eq 2
    check "$name --no-such-option: names it" has "$TMP/out" "no argument '--no-such-option'"
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
