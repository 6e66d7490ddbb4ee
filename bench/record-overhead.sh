#!/usr/bin/env bash
# How much `iopath record` slows a program: fio run bare and under
# `iopath record`, interleaved A B A B (odd rounds bare first, even rounds
# recorded first), two jobs: psync 4 KiB random reads with direct=1, and a
# buffered 1 MiB sequential writer (end_fsync). The result per job is the
# median of the per-round ratios recorded/bare of fio's own IOPS (reads) or
# bandwidth (writes), with min and max, plus the trace's events and bytes
# per event. docs/replay.md has a run.
#
# Usage: bench/record-overhead.sh [DIR] (default: a directory under target/)
# Environment: ROUNDS (default 5), RUNTIME seconds per fio run (default 5),
#              SIZE of the test file (default 512M), BACKEND (ebpf|strace,
#              default ebpf), IOPATH (default target/release/iopath).
# Needs root for eBPF, fio, bpftrace. bpftrace's start (compiling the
# program, ~10-60 s on a busy machine) is outside fio's timed run.
set -euo pipefail

ROUNDS=${ROUNDS:-5}
RUNTIME=${RUNTIME:-5}
SIZE=${SIZE:-512M}
BACKEND=${BACKEND:-ebpf}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
IOPATH=${IOPATH:-$ROOT/target/release/iopath}
DIR=${1:-$ROOT/target/bench-record-overhead}
mkdir -p "$DIR"
FILE="$DIR/overhead.dat"
RESULTS="$DIR/overhead.tsv"
trap 'rm -f "$FILE" "$DIR"/*.trace "$DIR"/*.json "$DIR"/seq.dat' EXIT

for t in fio "$IOPATH"; do
    command -v "$t" >/dev/null || { echo "missing $t (cargo build --release; apt-get install fio)" >&2; exit 2; }
done

fio --name=prep --filename="$FILE" --size="$SIZE" --rw=write --bs=1M --output=/dev/null
randread=(--name=randread --filename="$FILE" --size="$SIZE" --rw=randread --bs=4k
          --direct=1 --ioengine=psync --runtime="$RUNTIME" --time_based)
seqwrite=(--name=seqwrite --filename="$DIR/seq.dat" --size="$SIZE" --rw=write --bs=1M
          --ioengine=psync --end_fsync=1 --runtime="$RUNTIME" --time_based)

# One fio run, bare or recorded: its IOPS (reads) or bandwidth in KiB/s.
run() { # job mode round
    local job=$1 mode=$2 out="$DIR/$1-$2-$3.json" args
    if [ "$job" = randread ]; then args=("${randread[@]}"); else args=("${seqwrite[@]}"); fi
    if [ "$mode" = bare ]; then
        fio "${args[@]}" --output-format=json --output="$out"
    else
        "$IOPATH" record --backend "$BACKEND" -o "$DIR/$job-$3.trace" -- \
            fio "${args[@]}" --output-format=json --output="$out" 2>"$DIR/record.err"
        local events bytes
        events=$("$IOPATH" trace show "$DIR/$job-$3.trace" | awk '/events over/ {for (i=1;i<=NF;i++) if ($i=="events") print $(i-1)}')
        bytes=$(stat -c %s "$DIR/$job-$3.trace")
        echo -e "$job\ttrace\t$3\t$events\t$bytes" >>"$RESULTS"
        rm -f "$DIR/$job-$3.trace"
    fi
    python3 -c "import json,sys; j=json.load(open('$out'))['jobs'][0]; print(j['read']['iops'] if '$job'=='randread' else j['write']['bw'])"
}

: >"$RESULTS"
for r in $(seq 1 "$ROUNDS"); do
    for job in randread seqwrite; do
        if [ $((r % 2)) = 1 ]; then order="bare recorded"; else order="recorded bare"; fi
        for mode in $order; do
            v=$(run "$job" "$mode" "$r")
            echo -e "$job\t$mode\t$r\t$v" >>"$RESULTS"
            echo "round $r $job $mode: $v" >&2
        done
    done
done

python3 - "$RESULTS" <<'PY'
import sys, statistics
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
for job in ("randread", "seqwrite"):
    v = {(m, r): float(x) for j, m, r, x, *rest in rows if j == job and m in ("bare", "recorded")}
    ratios = [v[("recorded", r)] / v[("bare", r)] for (m, r) in v if m == "bare" and ("recorded", r) in v]
    tr = [(int(e), int(b)) for j, m, r, e, b in (x for x in rows if len(x) == 5) if j == job and e]
    unit = "IOPS" if job == "randread" else "KiB/s"
    bare = statistics.median(x for (m, r), x in v.items() if m == "bare")
    print(f"{job}: recorded/bare {unit} median {statistics.median(ratios):.3f} "
          f"(min {min(ratios):.3f}, max {max(ratios):.3f}, {len(ratios)} rounds); bare median {bare:.0f} {unit}")
    if tr:
        ev = statistics.median(e for e, b in tr)
        per = statistics.median(b / e for e, b in tr if e)
        print(f"  trace: median {ev:.0f} events, {per:.1f} bytes per event (header included)")
PY
