#!/bin/bash
# weft-fabric-model refuses what it cannot model, naming the problem, with
# exit status 1 and nothing on stdout; and a good command still answers.
set -u
BUILD=$1
MODEL=$BUILD/bin/weft-fabric-model
export WEFT_SOURCE_DIR=${WEFT_SOURCE_DIR:-$2}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
passed=0
failed=0
tally() {  # tally STATUS "WHAT PASSED" "WHAT FAILED": a check passes on STATUS 0
    if [ "$1" -eq 0 ]; then
        passed=$((passed + 1))
        echo "ok   $2"
    else
        failed=$((failed + 1))
        echo "FAIL $3"
    fi
}
refuses() {  # refuses "WORDS IT MUST SAY" ARGS...
    local says=$1
    shift
    timeout 60 "$MODEL" "$@" >"$TMP/out" 2>"$TMP/err"  # a refusal, never a hang
    local rc=$?
    [ $rc -eq 1 ] && grep -qF -- "$says" "$TMP/err" && [ ! -s "$TMP/out" ]
    tally $? "$* -> $says" "$*: exit $rc, stderr: $(cat "$TMP/err"), stdout: $(head -c 200 "$TMP/out")"
}
refuses "'8by8' is not a mesh shape" cluster --shape 8by8
refuses "between 1 and 2 cables join neighbouring meshes of 2x2" cluster --meshes 4 --shape 2x2 --cables 3
refuses "unknown op 'gathr'" run gathr --cluster ring8
# A grid past what the routers' tables address, before its chips are mapped
# (25,600,000 chips: it failed only once the host had no memory for them).
refuses "100000 meshes: a chip's L1 table holds meshes 0-1023" run all_gather --meshes 100000 --shape 16x16
refuses "a 2D fabric's routing table holds 256 chips, not 289 (17x17)" run all_gather --meshes 4 --shape 17x17
refuses "all_gather has no algorithm 'nope'; its algorithms: ring, ring_bidir" run all_gather --algo nope --cluster ring8
refuses "shift has no algorithms" run shift --algo ring --cluster ring8
refuses "--cable-gbps must be a rate from 0.001 to 10000 GB/s, not 0" run all_gather --cluster ring8 --cable-gbps 0
refuses "--noc-gbps must be a rate from 0.001 to 10000 GB/s, not nan" run all_gather --noc-gbps nan
refuses "--cable-gbps must be a rate from 0.001 to 10000 GB/s, not 0.000000" run all_gather --cable-gbps 1e-300
refuses "--cable-latency-ns must be at most 1 s" run all_gather --cable-latency-ns 18446744073709551615
refuses "unknown --topology 'bogus' (auto, line, ring, mesh or torus)" run all_gather --topology bogus
refuses "a torus fabric needs a cluster of one torus (its wrap cables), not a mesh" run all_gather --cluster mesh3x3 --topology torus
refuses "'4x4x4' is not a mesh shape" run shift --meshes 4 --shape 4x4x4
refuses "'4294967297x1' is not a mesh shape" tables --meshes 1 --shape 4294967297x1
refuses "--bytes of 4G does not fit a packet" latency --from 0 --to 4 --bytes 4G
refuses "a packet carries at most 16384 bytes here" stream --bytes 100000
refuses "a stream of 0 bytes sends nothing" stream --size 0
refuses "all_gather of 1073741824 bytes does not fit a chip's DRAM" run all_gather --size 1G
refuses "--cables 100: between 1 and 2 cables" tables --meshes 4 --shape 2x2 --cables 100
refuses "is a directory, not a packet log" replay "$TMP"
# A ring sends a dead cable's packets back the other way round; a second
# dead cable cuts it in two, and a line is cut by one: each named.
refuses "chip 6 port 1: the ring is cut in two: chips 3, 4, 5, 6 cannot reach the others" \
    random --cluster ring8 --fail 2 --seed 1 --writes 500
refuses "chip 1 port 1: the line is cut: chips 0, 1 cannot reach chips 2, 3" random --cluster line4 --fail 1 --seed 1
refuses "--fail 5: the cluster has 4 cables" random --cluster mesh2x2 --fail 5
refuses "broadcast has no algorithm 'all_reduce/ring'" state --op broadcast --algo all_reduce/ring
refuses "a fabric packet_bytes must be a multiple of 64, at most 1 MiB" run all_gather --packet-bytes 4294967232
refuses "cluster file 'nowhere' not found" latency --cluster nowhere
refuses "at most 1024 random writes at a time" random --cluster ring8 --writes 100000
refuses "at least one byte per chip (8)" run all_gather --cluster ring8 --size 4
refuses "chip 9 is not in the cluster (chips 0-7)" latency --cluster ring8 --from 9 --to 1
refuses "chip 2 to itself does not cross the fabric" latency --cluster ring8 --from 2 --to 2
refuses "chip 0 to itself does not cross the fabric" stream --cluster ring8 --from 0 --to 0 --size 4K
refuses "a grid of meshes needs at least one chip" run shift --meshes 0 --shape 2x2
refuses "chip 16 is not in the cluster (chips 0-15)" latency --meshes 4 --shape 2x2 --from 16 --to 0
refuses "chip 0 has no cable at port W in mesh3x3" run all_gather --cluster mesh3x3 --fail 0.W
refuses "'4294967296.E' is not a cable end of this cluster" run all_gather --cluster ring8 --fail 4294967296.E
misused() {  # misused "WORDS IT MUST SAY" ARGS...: a usage error, exit 2
    local says=$1
    shift
    timeout 60 "$MODEL" "$@" >"$TMP/out" 2>"$TMP/err"
    local rc=$?
    [ $rc -eq 2 ] && grep -qF -- "$says" "$TMP/err"
    tally $? "$* -> $says" "$*: exit $rc, stderr: $(cat "$TMP/err")"
}
misused "--every-ns requires --occupancy" run all_gather --every-ns 100
misused "--at-ns requires --op" state --at-ns 100
misused "--nonsense" run all_gather --nonsense
refuses "--distance is shift's: all_gather takes none" run all_gather --distance 3
refuses "--routes-of: the cluster has chips 0-7, not 99" picture --out "$TMP/pictures" --routes-of 99
# A hand-edited packet log that writes where no chip has memory, or more than a packet holds.
hop='{"chip": 0, "port": 1, "to_chip": 1, "src": [0, 0], "dst": [0, 1], "seq": 0, "command": 1, "send_type": 1,
      "vc": 0, "hops": 1, "inc": 0, "sem_address": 0, "ticks": 0'
log() { echo "{\"schema\": \"weft-packet-log/1\", \"about\": {\"cluster\": \"ring8\"}, \"hops\": [$hop, $1}], \"lost\": []}"; }
log '"bytes": 64, "dst_address": 0' >"$TMP/nowhere.json"
log '"bytes": 100000, "dst_address": 2415919104' >"$TMP/huge.json"
echo '{"schema": "weft-packet-log/1", "hops": [{"chip": 0}], "lost": []}' >"$TMP/nodst.json"
refuses "nodst.json: hop 0 of the packet log is incomplete" replay --cluster ring8 "$TMP/nodst.json"
refuses "packet 0 of the log writes to chip 1 where it has no memory" replay "$TMP/nowhere.json"
refuses "packet 0 of the log carries 100000 bytes" replay "$TMP/huge.json"
# A cable out from the start: the fabric is planned without it, 1D and 2D,
# on one plane or two (each deadlocked or refused when moved onto at time 0).
for args in "--cluster ring8 --fail 5.E" "--cluster mesh2x2-rv32 --fail 0.E" "--cluster 4mesh3x3 --fail 5.W"; do
    "$MODEL" run all_gather --size 64K $args 2>"$TMP/err" | grep -q "all_gather on" &&
        grep -q "is out: the fabric is planned without it" "$TMP/err"
    tally $? "run all_gather $args runs round the cable" "run all_gather $args: $(cat "$TMP/err")"
done
# Disruptors under an op: a cable pulled at a virtual time is rerouted
# live, and plugged back in its routers take it again; the op's every
# element is still checked.
"$MODEL" run all_gather --algo all_gather/ring --cluster torus4x4 --size 1M --pull 5.E@3000 --plug 5.E@9000 \
    >"$TMP/out" 2>"$TMP/err"
grep -q "pulled 5.E at 3000 ns: rerouted live: new tables for mesh 0" "$TMP/out" &&
    grep -q "plugged 5.E at 9000 ns back in: its routers leave their detours for it" "$TMP/out" &&
    grep -q "check: every element matches" "$TMP/out"
tally $? "--pull and --plug under an all-gather on torus4x4: rerouted live, taken again, every element right" \
    "--pull 5.E@3000 on torus4x4: $(cat "$TMP/out" "$TMP/err")"
# Mesh 0's one cable to mesh 1, pulled: the detours go round by meshes 2
# and 3. Then a move the control plane will not make: chip 22's cable east,
# then chip 26's (their detours together could close a cycle).
"$MODEL" run all_reduce --algo all_reduce/ring --cluster 4mesh3x3 --size 1M --pull 5.E@3000 >"$TMP/out" 2>"$TMP/err"
grep -q "pulled 5.E at 3000 ns: rerouted live: new L1 exits between meshes" "$TMP/out" &&
    grep -q "check: every element matches" "$TMP/out"
tally $? "--pull 5.E under an all-reduce on 4mesh3x3: rerouted live between meshes, every element right" \
    "--pull 5.E@3000 on 4mesh3x3: $(cat "$TMP/out" "$TMP/err")"
refuses "chip 26 port 1: moving the running fabric's traffic onto tables without it could deadlock" \
    run all_reduce --algo all_reduce/ring --cluster 4mesh3x3 --size 1M --pull 22.E@3000 --pull 26.E@200000
refuses "--pull 5.E: give CHIP.PORT@NS" run all_gather --pull 5.E
refuses "'99.E' is not a cable end of this cluster" run all_gather --plug 99.E@10
"$MODEL" run shift --meshes 4 --shape 2x2 --size 64 | grep -q "shift on 16 chips, 64 bytes"
tally $? "a grid made in memory (--meshes) runs" "run shift --meshes 4 --shape 2x2"
# The grid made in memory is the one its cluster file describes: the same run, event for event.
"$MODEL" cluster --meshes 4 --shape 4x4 >"$TMP/grid.yaml"
[ "$("$MODEL" run all_gather --meshes 4 --shape 4x4 --size 64K)" = \
    "$("$MODEL" run all_gather --cluster "$TMP/grid.yaml" --size 64K)" ]
tally $? "--meshes runs as the cluster file of the same grid" "--meshes 4 --shape 4x4 differs from its cluster file"
# --algo as the help lists it (op/algorithm) or bare.
"$MODEL" run all_reduce --algo all_reduce/swing --cluster ring8 --size 4K | grep -q "all_reduce/swing on 8 chips"
tally $? "--algo all_reduce/swing runs" "run all_reduce --algo all_reduce/swing"
"$MODEL" latency --cluster ring8 --from 0 --to 4 | grep -q "4 hops"
tally $? "a good command answers" "latency 0 -> 4 on ring8"
# Between meshes a hop count is the cables crossed, not the first mesh's leg.
corner=$("$MODEL" latency --meshes 4 --shape 4x4 --from 0 --to 63)
grep -q "chip 0 -> chip 63, 14 hops" <<<"$corner"
tally $? "corner to corner of 4 meshes of 4x4 is 14 hops" "latency 0 -> 63 on 4 meshes of 4x4: $corner"
"$MODEL" run gather --cluster ring8 --size 64K | grep -q "gather/direct on 8 chips"
tally $? "gather runs from its plan" "run gather on ring8"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
