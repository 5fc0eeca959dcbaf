#!/bin/bash
# A healthy but busy host is slow, never failed: every chip of the 32-chip
# galaxy, its bridge and the op squeezed onto one host core beside busy
# loops that take most of it; the all-reduce must finish right, and the
# cluster must still be up (no firmware or host timeout fired).
set -u
BUILD=$1
export WEFT_BUILD_DIR=$BUILD
WEFT=$BUILD/bin/weft
export WEFT_RUN_DIR=/tmp/weft-loadtest-$$
OUT=$(mktemp)
hogs=()
cleanup() {
    for p in "${hogs[@]}"; do kill "$p" 2>/dev/null; done
    $WEFT down >/dev/null 2>&1
    rm -rf "$OUT" "$WEFT_RUN_DIR"
}
trap cleanup EXIT
core=$(taskset -pc $$ | sed 's/.*: *//; s/[,-].*//')  # the first core we may use
taskset -c "$core" "$WEFT" up galaxy || exit 1
for _ in 1 2 3; do
    taskset -c "$core" bash -c 'while :; do :; done' &
    hogs+=($!)
done
start=$(date +%s)
taskset -c "$core" "$WEFT" run all_reduce --size 32K >"$OUT" 2>&1
rc=$?
echo "all_reduce on a loaded core took $(($(date +%s) - start)) s (exit $rc)"
grep -v '^ \|^chip' "$OUT" | head -5
grep -q "elements match the host reference" "$OUT" || { echo "FAIL: the op was not right"; exit 1; }
[ $rc -eq 0 ] || { echo "FAIL: exit $rc"; exit 1; }
$WEFT status >/dev/null || { echo "FAIL: the cluster is gone"; exit 1; }
echo "ok   a galaxy all-reduce on one loaded core is right"
