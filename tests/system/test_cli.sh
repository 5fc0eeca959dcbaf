#!/bin/bash
# The weft CLI as a user drives it, and clean shutdown however the cluster ends:
# `weft down`, Ctrl-C on a foreground bridge, and a killed bridge.
set -u
BUILD=$1
SRC=$2
export WEFT_BUILD_DIR=$BUILD
WEFT=$BUILD/bin/weft
export WEFT_RUN_DIR=/tmp/weft-clitest-$$
TMP=$(mktemp -d)
passed=0
failed=0
trap '$WEFT down >/dev/null 2>&1; pkill -f "$WEFT_RUN_DIR" 2>/dev/null; rm -rf "$TMP" "$WEFT_RUN_DIR"' EXIT

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
no_chip_processes() { ! pgrep -f "$WEFT_RUN_DIR" >/dev/null; }
wait_for() {  # wait_for SECONDS CONDITION...
    local n=$(($1 * 10))
    shift
    for _ in $(seq "$n"); do
        "$@" && return 0
        sleep 0.1
    done
    return 1
}

$WEFT status --json >"$TMP/out" 2>/dev/null
check "a --json command's error is JSON on stdout" python3 -c "
import json
e = json.load(open('$TMP/out'))
assert e['exit_code'] == 1 and 'no cluster is up' in e['error'], e
"
$WEFT status >"$TMP/out" 2>&1
check "status without a cluster fails" test $? -ne 0
check "status without a cluster says what to do" has "$TMP/out" "no cluster is up in $WEFT_RUN_DIR (start one with 'weft up"

WEFT_QEMU_ACCEL=bogus $WEFT up pair >"$TMP/out" 2>&1
check "a QEMU that will not start fails weft up" test $? -eq 1
check "... with QEMU's own reason" has "$TMP/out" "QEMU exited with status 1 during boot: .*invalid accelerator bogus"
$WEFT status >"$TMP/out" 2>&1
check "... and leaves no cluster up" has "$TMP/out" "no cluster is up"

cat >"$TMP/twice.yaml" <<'YAML'
name: twice
board: qemu-virt
meshes:
  - id: 0
    shape: [2, 1]
    topology: line
links:
  - [0.E, 1.N]
YAML
$WEFT up "$TMP/twice.yaml" >"$TMP/out" 2>&1
check "port linked twice is refused" test $? -ne 0
check "refusal names the line" has "$TMP/out" "twice.yaml:8:"
check "no chip was started for a bad file" no_chip_processes

cat >"$TMP/shaped.yaml" <<'YAML'
name: shaped
board: qemu-virt
meshes:
  - id: 0
    shape: [2, 1]
    topology: line
link:
  bandwidth_gbps: 0.05
  latency_us: 5
YAML
$WEFT up "$TMP/shaped.yaml" >"$TMP/out" 2>&1
check "a cluster with shaped links comes up" has "$TMP/out" "cluster 'shaped' up"
$WEFT status >"$TMP/out" 2>&1
check "status shows the link's shaping" has "$TMP/out" "shaped 0.05 GB/s + 5 us"
$WEFT linktest --size 2M >"$TMP/out" 2>&1
check "linktest over a shaped link moves every byte intact" has "$TMP/out" "every byte intact"
# An upper bound only: a loaded host may be slower than the wire, never faster.
check "no transfer beats the link's shaped rate" awk '/^  chip [0-9]+\.[A-Z]+ +chip/ { n++; if ($NF > 0.0525) bad = 1 } END { exit bad || n != 2 }' "$TMP/out"
$WEFT fault 0 1 shape fast >"$TMP/out" 2>&1
check "a shaping that is not a number is refused by name" has "$TMP/out" "weft fault shape: GB_PER_S: must be a number from 0 to 10000, not 'fast'"
$WEFT fault 0 1 shape 1e300 >"$TMP/out" 2>&1
check "a rate past any link's is a usage error" test $? -eq 2
$WEFT fault 0 1 shape 1e-300 >"$TMP/out" 2>&1
check "a crawl that would hold a frame for ever is refused" has "$TMP/out" "GB/s, not 1e-300"
$WEFT fault 0 1 shape 0 0 >"$TMP/out" 2>&1
check "weft fault shape 0 0 lifts the shaping" has "$TMP/out" ", unshaped, mode ttlink"
$WEFT fault 0 1 shape 0.05 5 >/dev/null 2>&1
$WEFT fault 0 1 shape 0 >"$TMP/out" 2>&1
check "weft fault shape 0 alone lifts the latency too" has "$TMP/out" ", unshaped, mode ttlink"
$WEFT down >/dev/null 2>&1
check "no chip left after the shaped cluster" no_chip_processes

cat >"$TMP/lossy.yaml" <<'YAML'
name: lossy
board: qemu-virt
meshes:
  - id: 0
    shape: [2, 1]
    topology: line
link:
  drop_rate: 0.02
  flap_period_ms: 1000
  flap_down_ms: 1
  mode: turbo
YAML
$WEFT up "$TMP/lossy.yaml" >"$TMP/out" 2>&1
check "a bad link mode in the cluster file is refused" has "$TMP/out" "lossy.yaml:11: unknown link mode 'turbo' (known modes: ttlink, compliance)"
check "no chip was started for a bad link mode" no_chip_processes

$WEFT up no-such-cluster >"$TMP/out" 2>&1
check "unknown cluster name is refused" has "$TMP/out" "cluster file 'no-such-cluster' not found"
check "the refusal lists the names there are" has "$TMP/out" "4mesh3x3, galaxy, line4,"
$WEFT up --help >"$TMP/out" 2>&1
check "up's help lists every cluster in clusters/" has "$TMP/out" "systems-torus2x2x2x2, torus4x4"

$WEFT frobnicate >"$TMP/out" 2>&1
check "unknown command is refused" has "$TMP/out" "unknown command 'frobnicate'"

$WEFT up pair >"$TMP/out" 2>&1
check "weft up pair" has "$TMP/out" "cluster 'pair' up: 2 chips"
$WEFT up pair >"$TMP/out" 2>&1
check "a second cluster in the same run dir is refused" has "$TMP/out" "already up"
$WEFT status >"$TMP/out" 2>&1
check "status lists both chips" has "$TMP/out" "chip 1  pid"
check "status lists the link" has "$TMP/out" "chip 0.E"
$WEFT linktest --size 64K >"$TMP/out" 2>&1
check "linktest moves every byte intact" has "$TMP/out" "every byte intact"
$WEFT status >"$TMP/out" 2>&1
check "link counters count the traffic" has "$TMP/out" " 65540 "
$WEFT fault 0 1 drop 0.01 >"$TMP/out" 2>&1
check "weft fault sets a drop rate" has "$TMP/out" "drop 0.01, ber 0"
$WEFT status >"$TMP/out" 2>&1
check "status shows the link's drop rate" grep -q "chip 0.E .* ttlink *drop 0.01$" "$TMP/out"
$WEFT fault 0 1 drop 1.5 >"$TMP/out" 2>&1
check "a drop rate above 1 is refused" test $? -ne 0
check "the refusal names the value" has "$TMP/out" "weft fault drop: RATE: must be a number from 0 to 1, not '1.5'"
$WEFT fault 0 1 mode lossy >"$TMP/out" 2>&1
check "an unknown link mode is refused by name" has "$TMP/out" "weft fault mode: MODE: must be ttlink or compliance, not 'lossy'"
$WEFT fault 0 1 mode compliance >/dev/null 2>&1
check "status shows compliance mode once the link switched" wait_for 5 sh -c "$WEFT status | grep -q 'chip 0.E .* compliance  *drop 0.01\$'"
$WEFT fault 0 1 mode ttlink >/dev/null 2>&1
$WEFT fault 0 1 clear >"$TMP/out" 2>&1
check "weft fault clear removes the faults" has "$TMP/out" "drop 0, ber 0, flap 0/0 ms"
$WEFT run all_reduce --size 100K --dtype bf16 --redop max >"$TMP/out" 2>&1
check "weft run all_reduce passes its check" has "$TMP/out" "elements match the host reference"
check "weft run names the algorithm auto chose" has "$TMP/out" "(auto)"
$WEFT status --json >"$TMP/out" 2>&1
grep -o '"doorbell_rings": *[0-9]*' "$TMP/out" | tr -dc '0-9\n' >"$TMP/rings"
check "the bridge counts the doorbells it rang for the op on every chip" \
    awk '{ n++; if ($1 == 0) bad = 1 } END { exit bad || n != 2 }' "$TMP/rings"
check "status --json holds the cores' letters and the recent events, as the text does" python3 -c "
import json
s = json.load(open('$TMP/out'))
assert all(len(c['cores']) == 8 and set(c['cores']) <= set('-RrDF') for c in s['chips']), s['chips']
assert 'events' in s['events'] and s['events']['log'], s['events']
"
$WEFT run broadcast --root 2 >"$TMP/out" 2>&1
check "a root past the chips is a usage error" test $? -eq 2
check "... that names the chips" has "$TMP/out" "--root: the cluster has chips 0 to 1, not 2"
$WEFT run allreduce >"$TMP/out" 2>&1
check "an unknown op is refused by name" has "$TMP/out" "unknown op 'allreduce' (ops: all_gather"
$WEFT run all_gather --size 6 >"$TMP/out" 2>&1
check "a size of no whole elements is refused" has "$TMP/out" "--size 6: not a whole number of f32 elements"
# Ids beyond 32 bits were truncated on their way to the bridge: 2^32 pulled chip 0's cable.
$WEFT link 4294967296 1 down >"$TMP/out" 2>&1
check "a chip id beyond 32 bits is refused as usage" test $? -eq 2
$WEFT status >"$TMP/out" 2>&1
check "... and chip 0's cable stays in" grep -q "chip 0.E .* up " "$TMP/out"
WEFT_CCL_SLOT_SIZE=1000 $WEFT run all_reduce --size 4K >"$TMP/out" 2>&1
check "a bad CCL knob is refused as usage" test $? -eq 2
check "... naming the knob and its range" has "$TMP/out" "WEFT_CCL_SLOT_SIZE=1000 must be a multiple of 16 from 16 to 4294967280"
$WEFT link 0.E down >"$TMP/out" 2>&1
check "a port by name as status shows it (0.E)" has "$TMP/out" "link chip 0.E <-> chip 1.W is down"
$WEFT fault 1 W drop 0 >"$TMP/out" 2>&1
check "... or as CHIP NAME" has "$TMP/out" "link chip 0.E <-> chip 1.W"
$WEFT fault 0.N5 clear >"$TMP/out" 2>&1
check "a port the board lacks is refused, naming its ports" has "$TMP/out" "board qemu-virt has no port 'N5' (its ports: N (0), E (1), S (2), W (3))"
$WEFT run all_reduce --size 4K >"$TMP/out" 2>&1
check "an op over a dead link is refused by name, not hung" has "$TMP/out" \
    "the cluster is cut: chip 0 cannot reach chip 1 (no path of working links joins them)"
$WEFT link 0 1 up >/dev/null 2>&1
$WEFT fabric --interval 0.1 >"$TMP/out" 2>&1
check "weft fabric says when no router runs" has "$TMP/out" "no fabric router is running"
$WEFT fabric --pause >"$TMP/out" 2>&1
check "... and a command with no router to take it fails" test $? -ne 0
check "... saying there is none" has "$TMP/out" "weft fabric --pause: no fabric router is running to tell"
$WEFT bench all_gather -b 1K -e 4K -f 2 --algo all --csv "$TMP/ag.csv" --png "$TMP/ag.png" >"$TMP/out" 2>&1
check "weft bench prints the nccl-tests columns" has "$TMP/out" "algbw     busbw   #wrong"
$WEFT bench all_reduce -b 1 -e 8 --csv "$TMP/small.csv" >"$TMP/small" 2>&1
check "bench leaves out sizes below an element, and runs the rest" test "$(grep -vc '^#' "$TMP/small.csv")" -eq 3
check "... saying how many" has "$TMP/small" "2 of the sizes left out (the first: size 1 is not a whole number"
$WEFT bench all_reduce --all-algos --algo ring >"$TMP/both" 2>&1
check "bench refuses --all-algos beside --algo (it ran every algorithm)" has "$TMP/both" "--algo excludes --all-algos"
$WEFT bench all_reduce --no-check -c 1 >"$TMP/both" 2>&1
check "bench refuses --no-check beside -c 1" has "$TMP/both" "--check excludes --no-check"
$WEFT bench all_reduce -b 1 -e 2 >"$TMP/small" 2>&1
check "bench with no size that fits is a usage error" test $? -eq 2
for out in --json-out --csv; do
    $WEFT bench all_gather -b 1K $out /dev/full >"$TMP/full" 2>&1
    check "bench $out to a full disk fails" test $? -eq 1
    check "... saying it cannot write" has "$TMP/full" "cannot write /dev/full: No space left on device"
done
check "weft bench prints the average bus bandwidth" has "$TMP/out" "# Avg bus bandwidth"
check "weft bench writes CSV rows for every algorithm and size" test "$(grep -vc '^#' "$TMP/ag.csv")" -eq $((1 + 3 * 4))
check "... after the run's metadata" has "$TMP/ag.csv" "^# cluster: pair"
$WEFT bench all_reduce -d float -o max -b 1K -e 3K -i 1K -w 2 -n 2 -c 1 --json-out "$TMP/ar.json" >"$TMP/out" 2>&1
check "weft bench takes nccl-tests' options, listed in its header" has "$TMP/out" "minBytes 1024 maxBytes 3072 step: 1024(bytes) warmup iters: 2 iters: 2 validation: 1"
check "... -d float is f32 and -o max the reduction" grep -q "^ *2048 *512 *f32 *max" "$TMP/out"
check "bench JSON carries its metadata" python3 -c "
import json, sys
d = json.load(open('$TMP/ar.json'))
assert d['cluster'] == 'pair' and d['board'] == 'qemu-virt' and d['dtype'] == 'f32' and d['redop'] == 'max'
assert d['warmup'] == 2 and d['iters'] == 2 and d['date'] and d['weft_version']
assert [r['bytes'] for r in d['rows']] == [1024, 2048, 3072]
assert all(r['time_min_us'] <= r['time_us'] <= r['time_max_us'] for r in d['rows'])
assert all(r['in_place']['wrong'] == 0 and r['in_place']['time_us'] > 0 for r in d['rows'])
"
check "... and in-place columns beside the out-of-place ones" has "$TMP/out" "out-of-place -.* in-place -"
check "weft bench draws a PNG" test "$(head -c 4 "$TMP/ag.png" | tail -c 3)" = "PNG"
$WEFT bench all_reduce -b 1K -o max --no-check --png "$TMP/nc.png" --json-out "$TMP/nc.json" >"$TMP/out" 2>&1
check "weft bench --no-check prints #wrong N/A, as nccl-tests does" grep -q "^ *1024 .* max .* N/A .* N/A " "$TMP/out"
check "... and no '0 OK' for the check it did not do" has "$TMP/out" "# Out of bounds values : N/A"
check "... nor a wrong count in its JSON" python3 -c "
import json
d = json.load(open('$TMP/nc.json'))
assert d['checked'] is False and d['iters'] == 0, d
assert all(r['wrong'] is None and r['in_place']['wrong'] is None for r in d['rows']), d['rows']
"
algo=$(python3 -c "import json; print(json.load(open('$TMP/nc.json'))['rows'][0]['algo'])")
check "the chart's legend names the algorithm auto picked ($algo)" has "$TMP/out" "# chart: $TMP/nc.png (.*; lines: auto: $algo)"
check "... and its title the reduction" has "$TMP/out" "(all_reduce on pair (2 chips), f32 max, "
$WEFT run all_gather --size 64K --in-place --send 0x81a00004 >"$TMP/out" 2>&1
check "weft run --in-place runs on the given buffer" has "$TMP/out" "input at 0x81a00004, output at 0x81a00004 (in place)"
check "... and checks it" has "$TMP/out" "elements match the host reference"
$WEFT run all_gather --shape 1,2,50,32 --dim 3 --dtype bf16 --layout tile --out-memory block --shard-grid 2x1 \
    >"$TMP/out" 2>&1
check "weft run all_gather --layout tile gathers tiles into block shards" \
    has "$TMP/out" "6400 elements on each of 2 chips match the parts concatenated"
check "... and says what it gathered into what" has "$TMP/out" "tensor \[1,2,50,64\] tiles block-sharded"
$WEFT run all_gather --shape 1,2,50,32 --dim 3 --layout tile --out-memory block --transport edm >"$TMP/out" 2>&1
check "weft run all_gather --layout --transport edm gathers through the flat all-gather" \
    has "$TMP/out" "through the flat all-gather over the EDM"
check "... and checks it" has "$TMP/out" "6400 elements on each of 2 chips match the parts concatenated"
$WEFT run sendrecv --shape 1,1,8,40 --dtype bf16 --layout row --memory height --out-memory interleaved \
    >"$TMP/out" 2>&1
check "weft run sendrecv --layout row shifts height shards into the banks" \
    has "$TMP/out" "on each of 2 chips match what the previous chip sent"
$WEFT run sendrecv --shape 1,1,64,64 --layout tile --out-memory width --transport edm >"$TMP/out" 2>&1
check "weft run sendrecv --layout --transport edm goes through the flat sendrecv" \
    has "$TMP/out" "through the flat sendrecv over the EDM"
check "... and checks it" has "$TMP/out" "4096 elements on each of 2 chips match what the previous chip sent"
$WEFT run sendrecv --shape 1,1,8,64 --layout row --out-memory width >"$TMP/out" 2>&1
check "a tensor sendrecv that would split rows is refused" \
    has "$TMP/out" "a page of the sent tensor does not fit inside one page of the received one"
$WEFT run all_reduce --shape 1,2,40,70 --layout tile --memory width --transport edm --redop max >"$TMP/out" 2>&1
check "weft run all_reduce --layout tile reduces width-sharded tiles over the EDM" \
    has "$TMP/out" "check: 5600 elements on each of 2 chips match the host reference"
check "... and says what it reduced" has "$TMP/out" "all_reduce (max) of tensor \[1,2,40,70\] tiles width-sharded"
$WEFT run all_reduce --shape 1,1,8,64 --layout row --memory width >"$TMP/out" 2>&1
check "a tensor all_reduce of rows cut by width shards reduces them shard by shard" \
    has "$TMP/out" "check: 512 elements on each of 2 chips match the host reference"
$WEFT run reduce_scatter --shape 1,1,64,32 --dim 2 --layout tile --out-memory width >"$TMP/out" 2>&1
check "weft run reduce_scatter --layout tile leaves each chip its part, width-sharded" \
    has "$TMP/out" "check: 1024 elements on each of 2 chips match the host reference"
check "... and says what it cut into what" has "$TMP/out" "of tensor \[1,1,64,32\] tiles interleaved along dimension 2 into tensor \[1,1,32,32\] tiles width-sharded"
$WEFT run reduce_scatter --shape 1,1,64,32 --dim 3 --layout tile >"$TMP/out" 2>&1
check "a tensor reduce_scatter that would split tiles is refused" has "$TMP/out" "must be a multiple of 32"
$WEFT run all_reduce --shape 1,1,32,32 --layout tile --mesh-axis rows >"$TMP/out" 2>&1
check "a tensor all_reduce along a mesh axis off a mesh is refused" has "$TMP/out" "a mesh axis needs a cluster of one 2D mesh"
$WEFT run broadcast --shape 1,1,64,32 --layout tile >"$TMP/out" 2>&1
check "weft run refuses a tensor op not built yet by name" has "$TMP/out" "broadcast on tensor layouts is not built yet"
$WEFT run all_gather --shape 1,1,32,40 --dim 3 --layout tile >"$TMP/out" 2>&1
check "a tensor all_gather that would split tiles is refused" has "$TMP/out" "must be a multiple of 32"
$WEFT run all_gather --shape 1,1,32,32 --memory width >"$TMP/out" 2>&1
check "a tensor memory without --layout is refused" has "$TMP/out" "give --layout row or tile"
$WEFT run all_reduce --size 64K --send 0x81900000 --recv 0x81900010 >"$TMP/out" 2>&1
check "weft run refuses overlapping buffers by name" has "$TMP/out" "recv buffer \[0x81900010, 0x81910010) overlaps the send buffer"
$WEFT run all_gather --size 64K --algo ring --trace "$TMP/trace.json" >"$TMP/out" 2>&1
check "weft run --trace writes a timeline" has "$TMP/out" "trace: [0-9]* events in"
check "the trace is Chrome trace JSON with a track per core and the kernels' runs" python3 -c "
import json
events = json.load(open('$TMP/trace.json'))['traceEvents']
tracks = {(e['pid'], e['tid']) for e in events if e['ph'] == 'M' and e['name'] == 'thread_name'}
assert tracks == {(c, k) for c in range(2) for k in range(8)}, tracks
spans = [e for e in events if e['ph'] == 'X']
assert any(e['args'].get('kernel') == 'ccl_worker' for e in spans), 'no ccl_worker span'
assert all(e['dur'] > 0 and e['ts'] >= 0 and (e['pid'], e['tid']) in tracks for e in spans)
assert any(e['ph'] == 'C' for e in events), 'no doorbell counter'
assert any(e['ph'] == 'C' and e['name'] == 'Ethernet TX port E' for e in events), 'no Ethernet port counter'
"
check "every track's slices nest (none begins inside another and ends after it), as Perfetto expects" python3 -c "
import json
from collections import defaultdict
tracks = defaultdict(list)
for e in json.load(open('$TMP/trace.json'))['traceEvents']:
    if e['ph'] == 'X':  # in whole ns, as Perfetto reads them
        begin = round(e['ts'] * 1000)
        tracks[(e['pid'], e['tid'])].append((begin, begin + round(e['dur'] * 1000), e['name']))
for track, slices in tracks.items():
    open_slices = []
    for begin, end, name in sorted(slices, key=lambda s: (s[0], -s[1])):
        while open_slices and open_slices[-1][1] <= begin:
            open_slices.pop()
        assert not open_slices or end <= open_slices[-1][1], (track, name, begin, end, open_slices[-1])
        open_slices.append((begin, end, name))
"
$WEFT run all_gather --size 64K --record "$TMP/rec.json" >"$TMP/out" 2>&1
check "weft run --record writes the routers' packet log" has "$TMP/out" "record: [0-9]* cable crossings in"
$WEFT replay "$TMP/rec.json" >"$TMP/out" 2>&1
check "weft replay sends a log's packets again over the same cables" has "$TMP/out" "every packet crossed the same cables"
echo 'not json' >"$TMP/bad-log.json"
$WEFT replay "$TMP/bad-log.json" >"$TMP/out" 2>&1
check "weft replay of a file that is not JSON fails" test $? -eq 1
check "... naming the file" has "$TMP/out" "bad-log.json is not JSON"
WEFT_DEBUG=info $WEFT run all_reduce --size 4K >"$TMP/out" 2>"$TMP/err"
check "WEFT_DEBUG=info logs each op, as NCCL_DEBUG does" grep -q "weft INFO \[ccl\] all_reduce of 4096 bytes (f32 sum): algorithm" "$TMP/err"
WEFT_DEBUG=trace WEFT_DEBUG_FILE="$TMP/log.%p" $WEFT run all_gather --size 4K >/dev/null 2>&1
check "WEFT_DEBUG=trace logs every launch, to WEFT_DEBUG_FILE" sh -c "grep -q 'weft TRACE \[launch\] chip 1 core [0-9]*: kernel' '$TMP'/log.*"
WEFT_DEBUG=loud $WEFT status >"$TMP/out" 2>&1
check "a bad WEFT_DEBUG is refused as usage" test $? -eq 2
check "... naming the values it takes" has "$TMP/out" "WEFT_DEBUG=loud must be warn, info or trace"
# Any kernel from the command line: its return code, fault or hang report.
$WEFT launch reloc_probe --chip 1 --core 7 >"$TMP/out" 2>&1
check "weft launch prints the kernel's return code" has "$TMP/out" "kernel 'reloc_probe' on chip 1 core 7 returned 1321"
# Several kernels at once: the getting-started page's exchange example as it is written
# there, both ends of the cable in one launch (one at a time would wait for
# the other's claim), twice: the second run waits for its own peer too.
sed -n '/^build\/bin\/weft launch exchange /,/[^\\]$/p' "$SRC/docs/getting-started.md" | sed "s|^build/bin/weft |\"\$WEFT\" |" >"$TMP/exchange.sh"
check "docs/getting-started.md has the exchange example" test "$(wc -l <"$TMP/exchange.sh")" -ge 2
for run in first second; do
    WEFT=$WEFT bash "$TMP/exchange.sh" >"$TMP/out" 2>&1
    check "weft launch runs the getting-started exchange on both chips at once ($run run)" test $? -eq 0
    check "... and prints each kernel's result" \
        test "$(grep -c "^kernel 'exchange' on chip [01] core [13] returned 0 " "$TMP/out")" -eq 2
done
$WEFT launch wait_sem --core 5 --args sem=0x9ff00000 value=0xffffffff pad=0 : fault --chip 1 --core 6 --args 0 \
    >"$TMP/out" 2>&1
check "a launch of several with a fault in it fails" test $? -eq 1
check "... naming the fault" has "$TMP/out" "chip 1 core 6 (worker) kernel 'fault' FAULT"
check "... and where each kernel ended" has "$TMP/out" "kernel 'fault' on chip 1 core 6: FAULT (above)"
check "... the one still running stopped" has "$TMP/out" "kernel 'wait_sem' on chip 0 core 5: stopped, still running"
$WEFT console 0 --core 5 >"$TMP/out" 2>&1
check "... its console says the host stopped it, not a fault" has "$TMP/out" "chip 0 core 5 kernel stopped by the host"
$WEFT status >"$TMP/out" 2>&1
check "... and weft status shows it as S" grep -q "chip 0 .*cores \[.....S..\]" "$TMP/out"
$WEFT launch wait_sem --chip 1 --core 5 --args sem=0x9ff00000 value=0xffffffff pad=0 --timeout 60 >"$TMP/out" 2>&1 &
sleep 1
$WEFT reset 1 >/dev/null 2>&1
wait $!
check "a kernel whose chip was reset under it fails" test $? -eq 1
check "... saying so, not a return code" has "$TMP/out" "chip 1 core 5's kernel 'wait_sem' did not end: the chip was reset under it"
$WEFT launch fault --chip 1 --core 6 --args 0 >"$TMP/out" 2>&1
check "weft launch of a faulting kernel fails" test $? -eq 1
check "... and the fault names the function and line" has "$TMP/out" "(fault+0x[0-9a-f]*) at tests/firmware/kernels/fault.cpp:13"
$WEFT launch fault --chip 1 --core 6 >"$TMP/out" 2>&1
check "... a panic's caller named by its function, not its qualifier" \
    has "$TMP/out" "called from 0x[0-9a-f]* in weft::KernelArgs::as at firmware/kernels/kernel.h"
$WEFT launch wait_sem --core 5 --args u64:0x9ff00000 0xffffffff 0 --timeout 1 >"$TMP/out" 2>&1
check "weft launch of a kernel that hangs prints the hang report" has "$TMP/out" "waiting on semaphore 0x9ff00000 to reach 4294967295"
$WEFT launch "$BUILD/firmware/qemu-virt32/test-kernels/reloc_probe.elf" --core 7 >"$TMP/out" 2>&1
check "weft launch refuses an RV32 kernel on an RV64 chip, by name" has "$TMP/out" "is RV32 code, but chip 0's cores are RV64"
$WEFT launch wait_sem --core 5 --args sem=0x9ff00000 value=0xffffffff pad=0 --timeout 1 >"$TMP/out" 2>&1
check "weft launch takes a kernel's arguments by name" has "$TMP/out" "waiting on semaphore 0x9ff00000 to reach 4294967295"
$WEFT launch wait_sem --core 5 --args sem=0x9ff00000 valu=1 pad=0 >"$TMP/out" 2>&1
check "... refuses a name the kernel lacks, listing its arguments" \
    has "$TMP/out" "has no argument 'valu' (its arguments: sem:u64 value:u32 pad:u32)"
$WEFT launch wait_sem --core 5 --args sem=0x9ff00000 >"$TMP/out" 2>&1
check "... and a missing one" has "$TMP/out" "missing: value (its arguments"
$WEFT launch wait_sem --core 5 --args 1 2 3 4 5 6 >"$TMP/out" 2>&1
check "words in order are counted against the kernel's fields (6 faulted on the chip)" \
    has "$TMP/out" "kernel 'wait_sem' takes 4 words (sem:u64 value:u32 pad:u32), not 6"
$WEFT launch reloc_probe --core 4 --args x=1 >"$TMP/out" 2>&1
check "a kernel that names no arguments says so" has "$TMP/out" "does not name its arguments (WEFT_KERNEL_ARG_NAMES)"
$WEFT launch no_such_kernel --core 4 >"$TMP/out" 2>&1
check "an unknown kernel is refused as usage" test $? -eq 2
check "... listing the kernels there are" has "$TMP/out" "has no kernel 'no_such_kernel' (built: "
$WEFT launch reloc_probe --core 4 --args 4294967296 >"$TMP/out" 2>&1
check "an argument word beyond 32 bits is refused" has "$TMP/out" "'4294967296' must be a 32-bit number"
# Consoles: every line tagged with its core.
$WEFT console 0 >"$TMP/out" 2>&1
check "weft console shows the chip's boot line" has "$TMP/out" "^\[core 0\] weft boot: chip 0 ready"
$WEFT console 1 --core 6 >"$TMP/out" 2>&1
check "weft console --core keeps that core's lines" has "$TMP/out" "^\[core 6\] weft: chip 1 core 6 FAULT"
check "... and no other core's" test "$(grep -vc '^\[core 6\]' "$TMP/out")" -eq 0
$WEFT console 9 >"$TMP/out" 2>&1
check "a chip the cluster lacks is refused" has "$TMP/out" "the cluster has chips 0 to 1, not 9"
$WEFT console 0 --core 12 >"$TMP/out" 2>&1
check "a core the board lacks is refused" has "$TMP/out" "board qemu-virt has cores 0 to 7, not 12"
# GDB on a live chip: symbols of the kernel core 7 holds, at its L1 address.
$WEFT gdb 1 --script >"$TMP/out" 2>&1
check "weft gdb loads the symbols of each core's kernel at its L1" has "$TMP/out" "add-symbol-file .*reloc_probe.elf -o 0x81400000"
grep -v "^weft gdb:" "$TMP/out" >"$TMP/own.gdb"
timeout 60 gdb-multiarch -q -batch -x "$TMP/own.gdb" -ex "info threads" -ex detach >"$TMP/out" 2>&1
check "... a script a GDB of one's own attaches with" grep -q "^\* 1 .*Thread 1\.1" "$TMP/out"
$WEFT gdb 1 --core 7 --ex "info threads" --ex "info symbol \$pc" >"$TMP/out" 2>&1
check "weft gdb attaches to the chip, core 7 as thread 8" grep -q "^\* 8 .*Thread 1\.8" "$TMP/out"
check "... and names where the core is" has "$TMP/out" "in section .text"
$WEFT linktest --size 64K >"$TMP/out" 2>&1
check "the chip runs on after GDB detached" has "$TMP/out" "every byte intact"
$WEFT gdb 9 --script >"$TMP/out" 2>&1
check "weft gdb on a chip the cluster lacks is refused as usage" test $? -eq 2
check "... naming the chips there are" has "$TMP/out" "the cluster has chips 0 to 1"
$WEFT gdb 1 --core 99 --script >"$TMP/out" 2>&1
check "weft gdb on a core the board lacks is refused, naming its cores" has "$TMP/out" "board qemu-virt has cores 0 to 7"
$WEFT launch reloc_probe --core 99 >"$TMP/out" 2>&1
check "weft launch on a core the board lacks fails by name, not hung" has "$TMP/out" "has no core 99"
$WEFT bench all_reduce -b 1K -c 2 >"$TMP/out" 2>&1
check "weft bench -c takes 0 or 1 only" test $? -eq 2
$WEFT run all_reduce --mesh 3 >"$TMP/out" 2>&1
check "weft run --mesh of a mesh the cluster lacks is usage" test $? -eq 2
check "... naming the meshes there are" has "$TMP/out" "this cluster's meshes are 0 (or all)"
$WEFT run all_reduce --mesh 0 --record "$TMP/mesh.json" >"$TMP/out" 2>&1
check "weft run --mesh with --record is usage, not a silently dropped log" test $? -eq 2
$WEFT down >"$TMP/out" 2>&1
check "weft down" has "$TMP/out" "cluster down"
check "no QEMU left after weft down" no_chip_processes
check "no socket left after weft down" test ! -e "$WEFT_RUN_DIR/control.sock"

# Two 2x2 meshes cabled at one exit: each mesh its own op, all at once, over
# its own fabric.
cat >"$TMP/two-meshes.yaml" <<'YAML'
name: two-meshes
board: qemu-virt
meshes:
  - id: 0
    shape: [2, 2]
    topology: mesh
  - id: 1
    shape: [2, 2]
    topology: mesh
links:
  - [1.E, 4.W]
YAML
$WEFT run all_reduce --cluster "$TMP/two-meshes.yaml" --mesh all --transport fabric --size 16K >"$TMP/out" 2>&1
check "weft run --mesh all runs an op on each mesh at once" has "$TMP/out" "all_reduce on 2 meshes at once"
check "... each over its own fabric, right" test "$(grep -c 'over the fabric, .* elements match the host reference' "$TMP/out")" -eq 2
# A cable pulled under an op from the command line: the fabric goes round it
# and the op is right; the cable stays pulled until weft link plugs it back.
$WEFT up "$TMP/two-meshes.yaml" >/dev/null 2>&1
$WEFT run all_reduce --transport fabric --size 1M --pull 0.E@20 >"$TMP/out" 2>&1
check "weft run --pull pulls the cable under the op" has "$TMP/out" "pulled 0.E 20 ms into the op"
check "... and the op is right" has "$TMP/out" "elements match the host reference"
$WEFT status >"$TMP/status" 2>&1
check "... the cable stays pulled" grep -q "chip 0.E .* down" "$TMP/status"
$WEFT link 0.E up >/dev/null 2>&1
$WEFT down >/dev/null 2>&1
$WEFT run all_reduce --pull 0.E >"$TMP/out" 2>&1
check "--pull without a time is a usage error" test $? -eq 2
check "... naming the form" has "$TMP/out" "give CHIP.PORT@MS"
$WEFT run all_reduce --pull 0.E@5 --mesh all >"$TMP/out" 2>&1
check "--pull with --mesh is refused" has "$TMP/out" "--pull pulls a cable under one op over the whole cluster"

# Ctrl-C on a bridge in the foreground.
"$BUILD/bin/weft-bridge" --cluster "$SRC/clusters/pair.yaml" --run-dir "$WEFT_RUN_DIR" 2>"$TMP/fg.log" &
bridge=$!
check "foreground bridge comes up" wait_for 30 test -S "$WEFT_RUN_DIR/control.sock"
kill -INT $bridge
wait $bridge
check "Ctrl-C stops the bridge cleanly" test $? -eq 0
check "no QEMU left after Ctrl-C" no_chip_processes
check "no socket left after Ctrl-C" test ! -e "$WEFT_RUN_DIR/control.sock"

# A bridge killed outright takes its chips with it, and the run dir is reusable.
$WEFT up pair >/dev/null 2>&1
bridge=$($WEFT status --json | sed -n 's/.*"bridge_pid": \([0-9]*\).*/\1/p')
check "bridge pid is reported" test -n "$bridge"
kill -KILL "$bridge"
check "chips die with a killed bridge" wait_for 10 no_chip_processes
sed -i 's/mode: turbo/mode: compliance/' "$TMP/lossy.yaml"
$WEFT up "$TMP/lossy.yaml" >"$TMP/out" 2>&1
check "run dir is reusable after a crash" has "$TMP/out" "cluster 'lossy' up"
$WEFT status >"$TMP/out" 2>&1
check "the cluster file's faults, flap and mode are on the link from the start" grep -q "chip 0.E .* compliance  *drop 0.02 flap 1000/1ms$" "$TMP/out"
$WEFT down >/dev/null 2>&1
check "no QEMU left at the end" no_chip_processes

# flash-and-run: one chip, its console on the terminal, an external timeout.
"$SRC/scripts/flash-and-run" --timeout 3 </dev/null >"$TMP/out" 2>&1
rc=$?
check "flash-and-run shows the chip console" has "$TMP/out" "weft boot: chip 0 ready (qemu-virt, 8 cores)"
check "flash-and-run ends at its timeout" test $rc -eq 124
"$SRC/scripts/flash-and-run" /nonexistent.elf >"$TMP/out" 2>&1
check "flash-and-run names a missing image" has "$TMP/out" "no image '/nonexistent.elf'"
"$SRC/scripts/flash-and-run" "$BUILD/firmware/qemu-virt/kernels/ping_pong.elf" >"$TMP/out" 2>&1
check "flash-and-run refuses a kernel ELF, saying what to use" has "$TMP/out" "is a kernel (entry 0"

$WEFT routes 4mesh3x3 >"$TMP/out" 2>&1
check "routes of several meshes pass" test $? -eq 0
check "routes print the L1 tables" has "$TMP/out" "mesh graph: acyclic"
check "routes check the whole fabric" has "$TMP/out" "whole fabric (every pair walked through the routers' decisions, both VC classes): acyclic"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
