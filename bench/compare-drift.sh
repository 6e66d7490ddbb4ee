#!/usr/bin/env bash
# bench/compare-drift.sh: how often `iopath compare --fail-above 5` calls
# identical runs different, the run-to-run drift that sets compare's
# default drift allowance, and whether a real slowdown (a blkio throttle) is
# still caught. docs/compare.md ("Measured here") has the results.
#
#   IOPATH=target/release/iopath DIR=target/compare-drift BATCHES=3 bench/compare-drift.sh
#
# Steps, (a) and (b) once per batch (BATCHES, default 3; about 25 s each):
#   (a) 6 back-to-back identical runs r1..r6 (direct and uring, 4 KiB random
#       reads, 64 MiB file, 10 repetitions of 100 ms);
#   (b) the 15 pairwise compares ri rj (one run a side, default drift
#       allowance) with --fail-above 5, counting exit codes; plus one A/A
#       compare with several runs a side (r1 r2 r3 -- r4 r5 r6);
#   (c) the drift of the run medians between identical runs, all batches
#       pooled: pairwise |B/A - 1|, the spread of the log run medians, and
#       the allowance they suggest (exp(1.96 x sqrt(2) x robust sd) - 1);
#   (d) two runs t1, t2 (after the batches) under a cgroup-v1 blkio read-IOPS throttle at 60% of
#       the lowest measured IOPS (direct's), compared with r1 (one run a
#       side) and with r1..r6 (several): compare must exit 1.
# Needs root for (d) (cgroup v1 blkio); (d) is skipped, with the reason, when
# the blkio hierarchy is not there. The test directory must be on a real
# disk, not tmpfs.
set -u

IOPATH=${IOPATH:-target/release/iopath}
DIR=${DIR:-target/compare-drift}
RUNS=6
BATCHES=${BATCHES:-3}
RUN_OPTS=(--methods direct,uring --patterns randread --size 64M --repeat 10 --time 100ms --quiet)

die() { echo "compare-drift: $*" >&2; exit 2; }
[ -x "$IOPATH" ] || die "no iopath binary at $IOPATH: build it (cargo build --release) or set IOPATH=PATH"
mkdir -p "$DIR" || die "cannot create $DIR"
DIR=$(cd "$DIR" && pwd)
case $(stat -f -c %T "$DIR") in
    tmpfs|ramfs) die "$DIR is on tmpfs: give DIR=a directory on a real disk" ;;
esac
command -v python3 >/dev/null || die "python3 is needed for the drift figures"
rm -f "$DIR"/b*r*.json "$DIR"/t*.json

echo "== iopath: $IOPATH ($("$IOPATH" --version 2>/dev/null))"
echo "== directory: $DIR"
declare -A codes=([0]=0 [1]=0 [2]=0 [3]=0)
per_batch=""
aa_runs=""
for b in $(seq 1 "$BATCHES"); do
    echo "== batch $b of $BATCHES"
    echo "== (a) $RUNS identical runs: iopath run ${RUN_OPTS[*]} --dir $DIR --json b${b}rN.json"
    for i in $(seq 1 $RUNS); do
        "$IOPATH" run "${RUN_OPTS[@]}" --dir "$DIR" --json "$DIR/b${b}r$i.json" >/dev/null \
            || die "run $i of batch $b failed"
    done
    echo "== (b) the 15 pairwise compares (one run a side, the default drift allowance) with --fail-above 5"
    ones=0
    for i in $(seq 1 $RUNS); do
        for j in $(seq $((i + 1)) $RUNS); do
            "$IOPATH" compare --fail-above 5 "$DIR/b${b}r$i.json" "$DIR/b${b}r$j.json" >/dev/null 2>"$DIR/err"
            c=$?
            codes[$c]=$(( ${codes[$c]:-0} + 1 ))
            [ "$c" = 1 ] && ones=$((ones + 1))
            [ "$c" = 0 ] || { echo "   r$i vs r$j: exit $c"; sed 's/^/      /' "$DIR/err"; }
        done
    done
    per_batch="$per_batch $ones"
    echo "   batch $b: exit 1 in $ones of 15"
    "$IOPATH" compare --fail-above 5 "$DIR/b${b}r1.json" "$DIR/b${b}r2.json" "$DIR/b${b}r3.json" -- \
        "$DIR/b${b}r4.json" "$DIR/b${b}r5.json" "$DIR/b${b}r6.json" >"$DIR/aa-runs.txt" 2>&1
    c=$?
    aa_runs="$aa_runs $c"
    echo "   r1 r2 r3 -- r4 r5 r6 (between runs): exit $c (goal: never 1; 3 where 5% cannot be ruled out)"
    sed -n '/┌/,/┘/p' "$DIR/aa-runs.txt" | sed 's/^/      /'
done
pair_summary="exit 0: ${codes[0]}, exit 1: ${codes[1]}, exit 3: ${codes[3]}, exit 2: ${codes[2]} (of $((15 * BATCHES)); exit 1 per batch of 15:$per_batch; goal: at most 1 per batch)"

echo "== (c) drift of the run medians between identical runs (all batches)"
python3 - "$DIR" "$RUNS" "$BATCHES" <<'PY'
import json, math, sys, itertools
d, n, batches = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def med(v):
    v = sorted(v); k = len(v)
    return v[k // 2] if k % 2 else (v[k // 2 - 1] + v[k // 2]) / 2
def q(v, p):
    v = sorted(v); pos = p * (len(v) - 1); lo = int(pos)
    return v[lo] + (v[min(lo + 1, len(v) - 1)] - v[lo]) * (pos - lo)
def name(c):
    return c["method"] + (f"#{c['arm']}" if (c.get("arm") or 1) > 1 else "")
pct = lambda x: (math.exp(x) - 1) * 100
all_dev, all_pairs, ss, dof = [], [], 0.0, 0
iops_min = None
first = [json.load(open(f"{d}/b1r{i}.json")) for i in range(1, n + 1)]
for c0 in first[0]["cases"]:
    dev, pairs, iops = [], [], []
    for b in range(1, batches + 1):
        runs = [json.load(open(f"{d}/b{b}r{i}.json")) for i in range(1, n + 1)]
        meds = []
        for r in runs:
            c = next(x for x in r["cases"] if name(x) == name(c0))
            reps = [m for m in c["repetitions"] if not m.get("warmup")]
            meds.append(med([m["bw_bytes_per_s"] for m in reps]))
            if b == 1:
                iops.append(med([m["iops"] for m in reps]))
        logs = [math.log(m) for m in meds]
        mean, centre = sum(logs) / n, med(logs)
        ss += sum((x - mean) ** 2 for x in logs); dof += n - 1
        dev += [abs(x - centre) for x in logs]
        pairs += [abs(x - y) for x, y in itertools.combinations(logs, 2)]
        print(f"   {name(c0):8} batch {b} run medians MiB/s: " + " ".join(f"{x / 2**20:.1f}" for x in meds))
    all_dev += dev; all_pairs += pairs
    m = med(iops)
    iops_min = m if iops_min is None else min(iops_min, m)
    print(f"   {name(c0):8} |B/A - 1| between two identical runs ({len(pairs)} pairs): median {pct(med(pairs)):.1f}%, "
          f"90th percentile {pct(q(pairs, 0.9)):.1f}%, 95th {pct(q(pairs, 0.95)):.1f}%, max {pct(max(pairs)):.1f}%; "
          f"robust sd of log run medians (1.4826 MAD) {1.4826 * med(dev) * 100:.1f}%")
robust = 1.4826 * med(all_dev)
classic = math.sqrt(ss / dof)
print(f"   all methods: |B/A - 1| median {pct(med(all_pairs)):.1f}%, 95th percentile {pct(q(all_pairs, 0.95)):.1f}%")
print(f"   sd of log run medians: robust (1.4826 x MAD, pooled) {robust * 100:.1f}%, classic (pooled, {dof} df) {classic * 100:.1f}%")
print(f"   95% bound of the drift between two runs, exp(1.96 x sqrt(2) x sd) - 1: robust {pct(1.96 * math.sqrt(2) * robust):.1f}%, classic {pct(1.96 * math.sqrt(2) * classic):.1f}%")
print(f"   suggested drift allowance (the robust bound, rounded up): {math.ceil(pct(1.96 * math.sqrt(2) * robust))}%")
open(f"{d}/iops_min", "w").write(f"{iops_min:.0f}\n")
PY

echo "== (d) a real slowdown: the same run under a blkio read-IOPS throttle at 60% of the lowest measured IOPS"
BLKIO=/sys/fs/cgroup/blkio
throttle_summary="skipped"
if [ ! -w "$BLKIO/cgroup.procs" ]; then
    throttle_summary="skipped: no writable cgroup-v1 blkio hierarchy at $BLKIO (needs root and cgroup v1)"
else
    src=$(findmnt -no SOURCE -T "$DIR" | head -1)
    disk=$(lsblk -no PKNAME "$src" 2>/dev/null | head -1)
    [ -n "$disk" ] || disk=$(basename "$src")
    majmin=$(cat "/sys/block/$disk/dev" 2>/dev/null) || die "cannot find the disk under $DIR ($src)"
    iops=$(cat "$DIR/iops_min")
    limit=$(( iops * 60 / 100 ))
    cg="$BLKIO/iopath-compare-drift-$$"
    mkdir "$cg" || die "cannot create the cgroup $cg"
    echo "$majmin $limit" > "$cg/blkio.throttle.read_iops_device" || { rmdir "$cg"; die "cannot set the throttle on $majmin"; }
    echo "   disk $disk ($majmin): read IOPS capped at $limit (60% of $iops)"
    for t in 1 2; do
        ( echo $BASHPID > "$cg/cgroup.procs" && exec "$IOPATH" run "${RUN_OPTS[@]}" --dir "$DIR" --json "$DIR/t$t.json" ) >/dev/null \
            || echo "   throttled run $t failed"
    done
    # Leave the cgroup empty, then remove it.
    rmdir "$cg" || echo "   could not remove $cg"
    "$IOPATH" compare --fail-above 5 "$DIR/b1r1.json" "$DIR/t1.json" >"$DIR/thr1.txt" 2>&1
    one=$?
    "$IOPATH" compare --fail-above 5 "$DIR"/b1r[1-6].json -- "$DIR/t1.json" "$DIR/t2.json" >"$DIR/thr6.txt" 2>&1
    six=$?
    sed -n '/┌/,/┘/p' "$DIR/thr1.txt" | sed 's/^/      /'
    sed -n '/┌/,/┘/p' "$DIR/thr6.txt" | sed 's/^/      /'
    throttle_summary="r1 vs t1 (one run a side, default drift allowance): exit $one; r1..r6 -- t1 t2 (between runs): exit $six (goal: 1 for both)"
fi
echo "   $throttle_summary"

echo
echo "== summary"
echo "identical runs, pairwise compares (one run a side) --fail-above 5: $pair_summary"
echo "identical runs, r1 r2 r3 -- r4 r5 r6 --fail-above 5, per batch: exit$aa_runs (goal: never 1; 3 where 5% cannot be ruled out)"
echo "throttled to 60% IOPS: $throttle_summary"
