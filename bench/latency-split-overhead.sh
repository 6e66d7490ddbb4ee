#!/usr/bin/env bash
# The latency split's overhead: interleaved pairs of runs with and without
# --latency-split (order alternating: A B, B A, ...) on a loop device over a
# file in /dev/shm (`losetup --direct-io=on`, ext4), for `direct` 4k random
# reads at QD1 and `uring` at QD32 (one thread). Per case: the IOPS ratio
# and the CPU per I/O ratio (with / without) of each pair, then their
# median and range.
#
# Usage: bench/latency-split-overhead.sh   (as root; BIN, PAIRS (default 7))
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$ROOT/target/release/iopath}
PAIRS=${PAIRS:-7}
WORK=$(mktemp -d /tmp/iopath-split-overhead.XXXXXX)
IMG=$(mktemp /dev/shm/iopath-split-overhead.XXXXXX)
MNT=$WORK/mnt
LOOP=
cleanup() {
    mountpoint -q "$MNT" && umount "$MNT"
    [ -n "$LOOP" ] && losetup -d "$LOOP"
    rm -rf "$WORK" "$IMG"
}
trap cleanup EXIT
truncate -s 160M "$IMG"
LOOP=$(losetup -f --show --direct-io=on "$IMG")
mkfs.ext4 -q -F "$LOOP"
mkdir -p "$MNT"
mount "$LOOP" "$MNT"

one() { # method qd split(0|1) -> "iops ns_per_io"
    local extra=()
    [ "$3" = 1 ] && extra=(--latency-split)
    "$BIN" run --dir "$MNT" --methods "$1" --patterns randread --bs 4k --qd "$2" --size 64M \
        --cache cold --time 1s --repeat 3 --quiet --json "$WORK/o.json" "${extra[@]}" >/dev/null
    python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["cases"][0]["summary"]; print(s["iops"], s["cpu"]["ns_per_io"])' "$WORK/o.json"
}

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for case in "direct 1" "uring 32"; do
    set -- $case
    : >"$WORK/ratios"
    for i in $(seq 1 "$PAIRS"); do
        if [ $((i % 2)) = 1 ]; then a=$(one "$1" "$2" 1); b=$(one "$1" "$2" 0)
        else b=$(one "$1" "$2" 0); a=$(one "$1" "$2" 1); fi
        echo "$a $b" | awk '{printf "%.3f %.3f\n", $1/$3, $2/$4}' >>"$WORK/ratios"
    done
    python3 - "$1 QD$2" "$WORK/ratios" <<'PY'
import statistics, sys
rows = [tuple(map(float, l.split())) for l in open(sys.argv[2])]
for i, name in [(0, "IOPS with/without"), (1, "CPU per I/O with/without")]:
    v = sorted(r[i] for r in rows)
    print(f"{sys.argv[1]}: {name}: median {statistics.median(v):.2f}, range {v[0]:.2f}-{v[-1]:.2f} ({len(v)} pairs): {' '.join(f'{x:.2f}' for x in v)}")
PY
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
