#!/usr/bin/env bash
# Does `iopath run --replay` reproduce what the recorded program did? Three
# fio jobs are recorded with `iopath record`, their traces cut to the data
# file (`iopath trace filter`: fio's own start, its libraries, is left out),
# and replayed through the method that matches each job:
#   randread  psync 4 KiB random reads, direct=1          -> --methods direct
#   seqwrite  buffered 1 MiB sequential writes, end_fsync  -> --methods buffered
#   uring     io_uring 4 KiB random reads, iodepth 16,
#             direct=1                                     -> --methods uring
# (the replay keeps the depth the program had: the trace's own).
#
# Op counts: fio's own (the recorded run's total_ios), the trace's
# (`iopath trace show` of the cut trace) and each replay's must be equal.
# Speed: fio bare and the replay, interleaved (fio, replay, replay, fio, ...:
# odd rounds fio first, even rounds replay first), one replay repetition per
# round; the table gives the median of the per-round ratios replay/fio of
# IOPS (reads) or bandwidth (the writer: bytes over the time to the end of
# its fsync, fio's and the replay's alike), with min and max. docs/replay.md
# has a run.
#
# The same cache state on both sides, dropped outside the timing: a replay
# repetition starts with its files' pages written back and dropped
# (`--cache cold`, the default, before the timed span); fio's `invalidate`
# (on by default) drops its file's pages when it opens the file, inside
# its timed run (30-60 ms for the writer's 512 MiB here, 3-20% of its run).
# So fio runs with `--invalidate=0` after the script drops its file's pages
# (fsync, then POSIX_FADV_DONTNEED), as iopath does.
#
# The io_uring job registers its buffers (fixedbufs), as iopath's uring
# engine does (bench/vs-fio.sh too): the per-request work is then closer, and
# the comparison is of the replay more than of the engines. It does not
# register its file (registerfiles): the recorder cannot yet tell which
# file a registered-file request reads (docs/replay.md, "Backends").
#
# Usage: bench/replay-fidelity.sh [shm|disk]
#   shm  (default): ext4 on a loop device over a file in /dev/shm (steady)
#   disk: a directory on the file system under target/ (the shared disk: noisy)
# Environment: ROUNDS (default 5), RUNTIME seconds per fio run (default 4),
#   REC_RUNTIME seconds of the recorded runs (default 3 x RUNTIME),
#   SIZE of each data file (default 512M), IOPATH (default target/release/iopath),
#   TRACES a directory of an earlier run's recordings (its $job.data.trace,
#   $job.show and $job-recorded.json, which every run leaves in
#   target/replay-fidelity-WHERE/): replay those instead of recording, on a
#   machine without bpftrace (the quiet machine of docs/replay.md).
# Needs root (eBPF recording, the loop device), fio, bpftrace (unless TRACES),
# python3.
set -euo pipefail

WHERE=${1:-shm}
ROUNDS=${ROUNDS:-5}
RUNTIME=${RUNTIME:-4}
REC_RUNTIME=${REC_RUNTIME:-$((RUNTIME * 3))}
SIZE=${SIZE:-512M}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
IOPATH=${IOPATH:-$ROOT/target/release/iopath}
WORK=$ROOT/target/bench-replay-fidelity-$WHERE
TRACES=${TRACES:-}
[ -n "$TRACES" ] && TRACES=$(cd "$TRACES" && pwd)
for t in fio $([ -z "$TRACES" ] && echo bpftrace) python3 "$IOPATH"; do
    command -v "$t" >/dev/null || { echo "missing $t (cargo build --release; apt-get install fio bpftrace)" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "needs root (eBPF recording, a loop device)" >&2; exit 2; }

rm -rf "$WORK"
mkdir -p "$WORK/mnt"
IMG=/dev/shm/iopath-replay-fidelity.img
LOOP=
cleanup() {
    if [ -d "$WORK/out" ]; then
        mkdir -p "$ROOT/target/replay-fidelity-$WHERE"
        cp "$WORK"/out/*.tsv "$WORK"/out/*.show "$WORK"/out/*.data.trace "$WORK"/out/*-recorded.json "$WORK"/out/load "$ROOT/target/replay-fidelity-$WHERE/" 2>/dev/null || true
    fi
    if mountpoint -q "$WORK/mnt"; then umount "$WORK/mnt"; fi
    if [ -n "$LOOP" ]; then losetup -d "$LOOP"; fi
    rm -f "$IMG"
    rm -rf "$WORK"
}
trap cleanup EXIT
case "$WHERE" in
shm)
    truncate -s 3G "$IMG"
    LOOP=$(losetup -f --show "$IMG")
    mkfs.ext4 -q "$LOOP"
    mount "$LOOP" "$WORK/mnt"
    ;;
disk) ;;
*) echo "give shm or disk" >&2; exit 2 ;;
esac
MNT=$WORK/mnt
OUT=$WORK/out
mkdir -p "$OUT"
RESULTS=$OUT/results.tsv
: >"$RESULTS"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$OUT/load"

fio --name=prep --filename="$MNT/read.dat" --size="$SIZE" --rw=write --bs=1M --output=/dev/null
# Without recording, the writer's file is laid out as its recorded run left it.
[ -n "$TRACES" ] && fio --name=prep --filename="$MNT/write.dat" --size="$SIZE" --rw=write --bs=1M --output=/dev/null
common=(--size="$SIZE" --output-format=json --invalidate=0)
# A file's pages written back and dropped, as iopath's --cache cold does.
drop_cache() { # file
    python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.fsync(fd)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)' "$1"
}
data_file() { case $1 in seqwrite) echo "$MNT/write.dat" ;; *) echo "$MNT/read.dat" ;; esac; }
job_args() { # job -> fio arguments; method; the figure compared
    case $1 in
    randread) echo "--name=randread --filename=$MNT/read.dat --rw=randread --bs=4k --direct=1 --ioengine=psync --runtime=$RUNTIME --time_based" ;;
    seqwrite) echo "--name=seqwrite --filename=$MNT/write.dat --rw=write --bs=1M --ioengine=psync --end_fsync=1" ;;
    uring) echo "--name=uring --filename=$MNT/read.dat --rw=randread --bs=4k --direct=1 --ioengine=io_uring --iodepth=16 --fixedbufs=1 --runtime=$RUNTIME --time_based" ;;
    esac
}
method() { case $1 in randread) echo direct ;; seqwrite) echo buffered ;; uring) echo uring ;; esac; }

# fio's figure from its JSON: IOPS for the readers; for the writer, bytes
# over the job's whole run (to the end of its fsync).
fio_figure() { # json job
    python3 - "$1" "$2" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
if sys.argv[2] == "seqwrite":
    print(j["write"]["io_bytes"] / (j["job_runtime"] / 1000), j["write"]["total_ios"])
else:
    print(j["read"]["iops"], j["read"]["total_ios"])
PY
}
# The replay's figure from iopath's JSON: the repetition's IOPS or bytes
# over its duration, its reads and writes, the depth it ran at.
replay_figure() { # json job
    python3 - "$1" "$2" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
c = j["cases"][0]
if not c["repetitions"]:
    sys.exit(f"the replay did not run: {c.get('skip') or c.get('error')}")
r = c["repetitions"][-1]
fig = r["io_bytes"] / (r["duration_ns"] / 1e9) if sys.argv[2] == "seqwrite" else r["iops"]
print(fig, r["ios"], "depth", c["queue_depth"])
PY
}

for job in randread seqwrite uring; do
    read -r -a args <<<"$(job_args $job)"
    # Recorded for REC_RUNTIME: fio runs slower under the recorder, and a
    # replay about as long as a bare fio run is measured as steadily.
    if [ -n "$TRACES" ]; then
        cp "$TRACES/$job.data.trace" "$TRACES/$job.show" "$TRACES/$job-recorded.json" "$OUT/"
    else
        "$IOPATH" record -o "$OUT/$job.trace" -- fio "${args[@]/--runtime=$RUNTIME/--runtime=$REC_RUNTIME}" "${common[@]}" \
            --output="$OUT/$job-recorded.json" 2>"$OUT/$job-record.err"
        "$IOPATH" trace filter "$OUT/$job.trace" -o "$OUT/$job.data.trace" --path "$MNT"
        "$IOPATH" trace show "$OUT/$job.data.trace" >"$OUT/$job.show"
    fi
    read -r _ fio_ops _ <<<"$(fio_figure "$OUT/$job-recorded.json" $job)"
    trace_ops=$(awk '$1 ~ /^(pread|pwrite|write|read|uring_read|uring_write)$/ {n += $2} END {print n+0}' "$OUT/$job.show")
    trace_syncs=$(awk '$1 ~ /^(fsync|fdatasync)$/ {n += $2} END {print n+0}' "$OUT/$job.show")
    echo -e "$job\tcounts\t$fio_ops\t$trace_ops\t$trace_syncs" >>"$RESULTS"
    for r in $(seq 1 "$ROUNDS"); do
        if [ $((r % 2)) = 1 ]; then order="fio replay"; else order="replay fio"; fi
        for mode in $order; do
            if [ "$mode" = fio ]; then
                drop_cache "$(data_file $job)"
                v=$(fio_figure <(fio "${args[@]}" "${common[@]}") $job)
            else
                "$IOPATH" run --replay "$OUT/$job.data.trace" --dir "$MNT" --methods "$(method $job)" \
                    --repeat 1 --quiet --json "$OUT/$job-replay-$r.json" >/dev/null 2>"$OUT/$job-replay.err" ||
                    { cat "$OUT/$job-replay.err" >&2; exit 1; }
                v=$(replay_figure "$OUT/$job-replay-$r.json" $job)
            fi
            echo -e "$job\t$mode\t$r\t${v// /$'\t'}" >>"$RESULTS"
            echo "round $r $job $mode: $v" >&2
        done
    done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/load"

python3 - "$RESULTS" "$WHERE" <<'PY'
import sys, statistics
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
where = {"shm": "ext4 on a loop device over /dev/shm", "disk": "the shared disk (target/)"}[sys.argv[2]]
print(f"\n{where}")
print("| job | method, depth | ops: fio / trace / replay | fio (median) | replay (median) | replay / fio: median (min-max) |")
print("|---|---|---|---|---|---|")
for job, meth in (("randread", "direct"), ("seqwrite", "buffered"), ("uring", "uring")):
    counts = next(r for r in rows if r[0] == job and r[1] == "counts")
    fio = {r[2]: float(r[3]) for r in rows if r[0] == job and r[1] == "fio"}
    rep = {r[2]: (float(r[3]), r[4], r[6]) for r in rows if r[0] == job and r[1] == "replay"}
    ratios = [rep[k][0] / fio[k] for k in fio if k in rep]
    ops = sorted({v[1] for v in rep.values()})
    depth = sorted({v[2] for v in rep.values()})
    unit = "MB/s" if job == "seqwrite" else "IOPS"
    scale = 1e6 if job == "seqwrite" else 1
    syncs = f" + {counts[4]} sync" if counts[4] != "0" else ""
    print(f"| {job} | {meth}, QD{'/'.join(depth)} | {counts[2]} / {counts[3]}{syncs} / {'/'.join(ops)} "
          f"| {statistics.median(fio.values())/scale:.0f} {unit} | {statistics.median(v[0] for v in rep.values())/scale:.0f} {unit} "
          f"| {statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f}), {len(ratios)} rounds |")
PY
