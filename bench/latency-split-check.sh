#!/usr/bin/env bash
# Issue 29, item 1: do the latency split's parts add up to the measured
# mean, and does the traced block time agree with /sys/block?
#
# On two targets: a loop device over a file in /dev/shm (`losetup
# --direct-io=on`, ext4), and a directory on the disk under / (DISKDIR,
# default /var/tmp), it runs with --latency-split (root, bpftrace):
#   direct   randread 4k QD1
#   buffered randread 4k QD1 and read (sequential) 4k QD1, cold
#   uring    randread 4k QD32 (one thread at depth 32)
# and prints per case: the mean latency, what the parts say of the mean I/O
# (`mean_ns()`: the parts weighed by the calls, cached and unmatched calls
# whole, each call's way in and out (`entry`, measured after each
# repetition by calls that move nothing), for io_uring the ring's requests
# in the same buckets, without `entry`: iopath's stamps hold it; without
# calls, queue + device per request times requests per I/O; and the wait
# for a CPU outside the calls, `runnable`, per I/O, but for a ring split,
# whose parts hold it), their ratio, the ring's waits (SQ, CQ), the device
# part, the traced block time per read (`block_ns`, every read on the
# disk: between block_io_start and block_io_done on Linux 6.5+, else from
# the bio queued to block_rq_complete; `block_timing` says which) and the
# /sys/block average over the same repetitions (`disk_stat_ns`), and the
# ratios. docs/methodology.md 6c holds the table measured here.
#
# Usage: bench/latency-split-check.sh   (as root; BIN, DISKDIR, TIME, REPEAT,
#        CPUS: a CPU list to pin the case's workers to, `--cpus CPUS`, e.g.
#        CPUS=1 (CPU 1) on a 2-CPU machine, where a loop device's worker
#        otherwise shares the case's CPU; KEEP: a directory to keep each
#        run's JSON in, a folder a run, each repetition's split beside the
#        summary's)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$ROOT/target/release/iopath}
DISKDIR=${DISKDIR:-/var/tmp}
TIME=${TIME:-1s}
REPEAT=${REPEAT:-3}
WORK=$(mktemp -d /tmp/iopath-split-check.XXXXXX)
IMG=$(mktemp /dev/shm/iopath-split-check.XXXXXX)
MNT=$WORK/mnt
DDIR=$(mktemp -d "$DISKDIR/iopath-split-check.XXXXXX")
LOOP=
cleanup() {
    # (A busy mount let go lazily: a failure here must not stop the rest.)
    if mountpoint -q "$MNT"; then umount "$MNT" || umount -l "$MNT" || true; fi
    [ -n "$LOOP" ] && losetup -d "$LOOP"
    if [ -n "${KEEP:-}" ]; then
        # One folder a run, so that runs into the same KEEP stay apart.
        local keep
        keep="$KEEP/$(date -u +%Y%m%dT%H%M%SZ)-$$"
        mkdir -p "$keep" && cp "$WORK"/*.json "$keep"/ 2>/dev/null || true
    fi
    rm -rf "$WORK" "$DDIR" "$IMG"
}
trap cleanup EXIT

truncate -s 320M "$IMG"
LOOP=$(losetup -f --show --direct-io=on "$IMG")
mkfs.ext4 -q -F "$LOOP"
mkdir -p "$MNT"
mount "$LOOP" "$MNT"

run() { # target-name dir out-name args...
    local name=$1 dir=$2 out=$3
    shift 3
    "$BIN" run --dir "$dir" --size 128M --cache cold --time "$TIME" --repeat "$REPEAT" \
        --latency-split --quiet --json "$WORK/$name-$out.json" ${CPUS:+--cpus "$CPUS"} "$@" >/dev/null
}

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for t in shm disk; do
    dir=$MNT
    [ $t = disk ] && dir=$DDIR
    run $t "$dir" qd1 --methods direct,buffered --patterns randread,read --bs 4k --qd 1
    run $t "$dir" qd32 --methods uring --patterns randread --bs 4k --qd 32
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$WORK"/*.json <<'EOF'
import json, sys
print("| target | case | mean | parts | parts/mean | entry | runnable | ring: SQ, CQ | device | block (traced) | /sys/block | block/sys | device/sys | calls: request, cached, unmatched | requests (own, others) |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
us = lambda v: "-" if v is None else f"{v/1000:.1f} us"
ratio = lambda a, b: "-" if a is None or not b else f"{a/b:.2f}"
for path in sys.argv[1:]:
    target = path.rsplit("/", 1)[1].split("-")[0]
    v = json.load(open(path))
    for c in v["cases"]:
        s = (c.get("summary") or {})
        x = s.get("latency_split")
        if not x:
            continue
        mean = s["lat_ns"]["mean"]
        calls = x.get("calls", 0) + x.get("calls_without_request", 0) + x.get("calls_unmatched", 0)
        part = lambda k: x.get(k) or 0.0
        four = part("submission_ns") + part("queue_ns") + x["device_ns"] + part("completion_ns")
        if calls:
            parts = (x["calls"] * four + x.get("calls_without_request", 0) * part("cached_ns")
                     + x.get("calls_unmatched", 0) * part("unmatched_ns")) / calls
        else:
            parts = four * (x["requests"] / x["ios"] if x.get("ios") else 1.0)
        ring = x.get("ring")
        entry = x.get("entry_ns") if calls and not ring else None
        parts += entry or 0.0
        runnable = x["runnable_total_ns"] / x["ios"] if x.get("runnable_total_ns") is not None and x.get("ios") and not ring else None
        waits = f'{us(ring["sq_ns"])}, {us(ring["cq_ns"])}' if ring else "-"
        parts += runnable or 0.0
        case = f'{c["method"]} {c["pattern"]} QD{c["queue_depth"]}T{c["threads"]}'
        print(f'| {target} | {case} | {us(mean)} | {us(parts)} | {ratio(parts, mean)} | {us(entry)} | {us(runnable)} | {waits} | '
              f'{us(x["device_ns"])} | {us(x.get("block_ns"))} | {us(x.get("disk_stat_ns"))} | '
              f'{ratio(x.get("block_ns"), x.get("disk_stat_ns"))} | {ratio(x["device_ns"], x.get("disk_stat_ns"))} | '
              f'{x.get("calls", 0)}, {x.get("calls_without_request", 0)}, {x.get("calls_unmatched", 0)} | '
              f'{x["requests"]}, {x.get("other_requests", 0)} |')
EOF
