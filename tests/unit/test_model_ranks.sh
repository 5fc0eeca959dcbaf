#!/bin/bash
# The fabric model as MPI ranks: the same op on 1 and 3 ranks (mpirun
# here, one host) gives the same virtual time and the same events, since its
# events' order depends on the fabric alone and the ranks trade the packets
# that cross between their chips. Skipped (exit 77) without mpirun.
set -u
BUILD=$1
MODEL=$BUILD/bin/weft-fabric-model
export WEFT_SOURCE_DIR=${WEFT_SOURCE_DIR:-$2}
command -v mpirun >/dev/null || { echo "skip: no mpirun (make deps installs openmpi-bin)"; exit 77; }
# CI runs as root; Open MPI refuses that unless told; two cores run four ranks.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# One host: the shared-memory transport; probing for UCX costs 0.2 s a launch.
export OMPI_MCA_pml=${OMPI_MCA_pml:-ob1}
# The splits beside one rank: three by default (uneven on torus4x4 and
# ring8); WEFT_MODEL_RANKS="2 4" tries others.
RANKS=${WEFT_MODEL_RANKS:-3}
failed=0
run() {  # run RANKS ARGS...: the result lines of rank 0 (one rank: a plain process, as outside a launcher)
    local ranks=$1
    shift
    if [ "$ranks" = 1 ]; then
        timeout 120 "$MODEL" "$@" 2>/dev/null
    else
        timeout 120 mpirun -np "$ranks" "$MODEL" "$@" 2>/dev/null
    fi
}
# Cables failing too: before the traffic (one of them pulled under it), and
# two under random writes (the control plane reroutes live, on a mesh the
# second move by detours that walk the first's; between meshes one inside a
# mesh, then one between meshes, which moves every chip's exits; every rank
# checks its own chips). The collectives' own plans: every rank checks every
# chip's output.
for args in "run all_gather --cluster torus4x4 --size 1M" "run all_reduce --cluster 4mesh3x3 --size 1M" \
            "latency --cluster ring8 --from 3 --to 4" \
            "run all_gather --cluster torus4x4 --size 1M --fail 5.E --pull 9.S@3000" \
            "random --cluster torus4x4 --writes 300 --fail 2 --seed 5" \
            "random --cluster mesh3x3 --writes 300 --fail 2 --seed 5" \
            "random --cluster 4mesh3x3 --writes 300 --fail 2 --seed 3" \
            "run reduce_scatter --algo reduce_scatter/ring --cluster 4mesh3x3 --size 64K" \
            "run broadcast --algo broadcast/multicast --size 64K" "stream --cluster mesh3x3 --size 64K" \
            "state --op all_gather --cluster torus4x4 --size 64K --at-ns 5000"; do
    one=$(run 1 $args)
    if [ -z "$one" ]; then
        echo "FAIL $args: one rank printed nothing"
        failed=1
        continue
    fi
    for ranks in $RANKS; do
        got=$(run "$ranks" $args)
        if [ "$got" = "$one" ]; then
            echo "ok   $args: $ranks ranks as one ($(echo "$one" | head -1 | cut -c1-60)...)"
        else
            echo "FAIL $args: $ranks ranks printed"
            echo "$got"
            echo "     one rank printed"
            echo "$one"
            failed=1
        fi
    done
done
# A trace: every rank records the hops landing on its chips; the file holds
# every packet, the same ones as one rank's (ids aside: their order may differ).
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
for ranks in 1 $RANKS; do
    run "$ranks" trace shift --distance 5 --size 256K --cluster 4mesh3x3 --out "$TMP/$ranks.json" >/dev/null
done
if python3 - "$TMP" "$RANKS" <<'PY'
import json, sys
def packets(n):
    j = json.load(open(f"{sys.argv[1]}/{n}.json"))
    return sorted(json.dumps({k: v for k, v in p.items() if k != "id"}, sort_keys=True) for p in j["packets"])
one = packets(1)
sys.exit(0 if one and all(packets(n) == one for n in sys.argv[2].split()) else 1)
PY
then
    echo "ok   trace: $RANKS ranks record the packets one rank does, hop for hop"
else
    echo "FAIL trace: ranks record other packets than one rank"
    failed=1
fi
# A deadlock on purpose (ring8 without its dateline): every rank's routers
# in the report, the picture's cycle and the occupancy heat map, as on one rank.
for ranks in 1 $RANKS; do
    timeout 120 mpirun -np "$ranks" "$MODEL" run shift --distance 3 --cluster ring8 --size 1M --no-dateline \
        --slots 2 --picture "$TMP/stuck$ranks.svg" --occupancy "$TMP/stuck$ranks.png" 2>&1 |
        grep "slots held\|cycle of waits" >"$TMP/stuck$ranks.txt"
done
same_as_one() {  # same_as_one RANKS: its report, picture and heat map are one rank's
    cmp -s "$TMP/stuck1.txt" "$TMP/stuck$1.txt" && cmp -s "$TMP/stuck1.dot" "$TMP/stuck$1.dot" &&
        cmp -s "$TMP/stuck1.png" "$TMP/stuck$1.png"
}
all_same_as_one() {
    local ranks
    for ranks in $RANKS; do same_as_one "$ranks" || return 1; done
}
if grep -q "cycle of waits: chip 1 port 3 vc0 -> chip 2" "$TMP/stuck1.txt" && grep -q 'color="red"' "$TMP/stuck1.dot" &&
    all_same_as_one; then
    echo "ok   a deadlock: $RANKS ranks report, draw and heat-map it as one rank"
else
    echo "FAIL a deadlock: ranks report or draw it otherwise than one rank"
    failed=1
fi
exit $failed
