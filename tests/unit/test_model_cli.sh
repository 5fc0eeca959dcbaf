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
refuses() {  # refuses "WORDS IT MUST SAY" ARGS...
    local says=$1
    shift
    "$MODEL" "$@" >"$TMP/out" 2>"$TMP/err"
    local rc=$?
    if [ $rc -eq 1 ] && grep -qF -- "$says" "$TMP/err" && [ ! -s "$TMP/out" ]; then
        passed=$((passed + 1))
        echo "ok   $* -> $says"
    else
        failed=$((failed + 1))
        echo "FAIL $*: exit $rc, stderr: $(cat "$TMP/err"), stdout: $(head -c 200 "$TMP/out")"
    fi
}
refuses "'8by8' is not a mesh shape" cluster --shape 8by8
refuses "between 1 and 2 cables join neighbouring meshes of 2x2" cluster --meshes 4 --shape 2x2 --cables 3
refuses "unknown op 'gathr'" run gathr --cluster ring8
refuses "all_gather has no algorithm 'nope'; its algorithms: ring, ring_bidir" run all_gather --algo nope --cluster ring8
refuses "shift has no algorithms" run shift --algo ring --cluster ring8
refuses "rates must be above 0 GB/s" run all_gather --cluster ring8 --cable-gbps 0
refuses "cluster file 'nowhere' not found" latency --cluster nowhere
refuses "at most 1024 random writes at a time" random --cluster ring8 --writes 100000
refuses "at least one byte per chip (8)" run all_gather --cluster ring8 --size 4
refuses "chip 9 is not in the cluster (chips 0-7)" latency --cluster ring8 --from 9 --to 1
refuses "chip 2 to itself does not cross the fabric" latency --cluster ring8 --from 2 --to 2
refuses "chip 0 to itself does not cross the fabric" stream --cluster ring8 --from 0 --to 0 --size 4K
refuses "a grid of meshes needs at least one chip" run shift --meshes 0 --shape 2x2
refuses "chip 16 is not in the cluster (chips 0-15)" latency --meshes 4 --shape 2x2 --from 16 --to 0
if "$MODEL" run shift --meshes 4 --shape 2x2 --size 64 | grep -q "shift on 16 chips, 64 bytes"; then
    passed=$((passed + 1))
    echo "ok   a grid made in memory (--meshes) runs"
else
    failed=$((failed + 1))
    echo "FAIL run shift --meshes 4 --shape 2x2"
fi
# The grid made in memory is the one its cluster file describes: the same run, event for event.
"$MODEL" cluster --meshes 4 --shape 4x4 >"$TMP/grid.yaml"
if [ "$("$MODEL" run all_gather --meshes 4 --shape 4x4 --size 64K)" = \
    "$("$MODEL" run all_gather --cluster "$TMP/grid.yaml" --size 64K)" ]; then
    passed=$((passed + 1))
    echo "ok   --meshes runs as the cluster file of the same grid"
else
    failed=$((failed + 1))
    echo "FAIL --meshes 4 --shape 4x4 differs from its cluster file"
fi
# --algo as the help lists it (op/algorithm) or bare.
if "$MODEL" run all_reduce --algo all_reduce/swing --cluster ring8 --size 4K | grep -q "all_reduce/swing on 8 chips"; then
    passed=$((passed + 1))
    echo "ok   --algo all_reduce/swing runs"
else
    failed=$((failed + 1))
    echo "FAIL run all_reduce --algo all_reduce/swing"
fi
if "$MODEL" latency --cluster ring8 --from 0 --to 4 | grep -q "4 hops"; then
    passed=$((passed + 1))
    echo "ok   a good command answers"
else
    failed=$((failed + 1))
    echo "FAIL latency 0 -> 4 on ring8"
fi
if "$MODEL" run gather --cluster ring8 --size 64K | grep -q "gather/direct on 8 chips"; then
    passed=$((passed + 1))
    echo "ok   gather runs from its plan"
else
    failed=$((failed + 1))
    echo "FAIL run gather on ring8"
fi
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
