#!/usr/bin/env bash
# Harness cost: iopath's CPU per I/O against fio's, on a steady device.
#
# The device is a loop device with direct I/O over a file in /dev/shm, so
# every read is a copy out of memory done by the loop driver's kernel
# worker: no shared disk, no device noise, and the CPU that each tool burns
# per request is its own submission, completion and bookkeeping. The job is
# the same for both: io_uring, 4 KiB random reads at queue depth 32, O_DIRECT
# (fio with fixedbufs and registerfiles, hipri and sqthread_poll off).
#
# Every round runs fio once and each iopath binary once, back to back; odd
# rounds in the order fio, bin1, bin2, ..., even rounds in the reverse order,
# so every pair of tools meets in both orders. Per round the script prints
# each tool's IOPS and CPU ns per I/O and the ratio iopath/fio of CPU per
# I/O, with the CPUs that everything else kept busy during each run
# ("others": other tenants' work plus the loop's kworker); at the end, per
# binary, the median of the per-round ratios with their min and max, the
# same for IOPS, and, with several binaries, each one's CPU per I/O over the
# first's in the same rounds (after/before).
#
# "At equal IOPS": CPU per I/O falls as IOPS rise (more completions per
# io_uring_enter), and when the machine is shared the loop device's speed
# swings with the CPU its kworker gets, so the two tools of a round often
# run at different IOPS. The summary therefore also gives the ratio over
# the rounds whose IOPS were within 10% of each other, and a ratio adjusted
# to equal IOPS: a fit of log(ns/IO) = tool + k log(IOPS) with one slope for
# both tools, with a 95% bootstrap interval over rounds (docs/performance.md,
# "Harness cost").
#
# CPU per I/O:
#   fio:    (usr_cpu + sys_cpu) / 100 x job_runtime / read.total_ios. fio's
#           usr_cpu and sys_cpu are getrusage(RUSAGE_SELF) of the job process
#           (fio forks one per job; io_uring's io-wq threads belong to it)
#           from just before the I/O loop to the job's end, in percent of
#           job_runtime (stat.c: usr_time * 100 / total_run_time).
#   iopath: cases[0].summary.cpu.ns_per_io = (workers' CPU over the timed
#           interval + io_uring kernel threads of the process) / ios
#           (crates/iopath/src/result.rs, Cpu).
#   Neither counts the loop driver's kworker, which does the copies.
#
# Usage: sudo bench/harness-cpu.sh [DIR]   (DIR keeps the JSON and the TSV;
#        default target/bench-harness-cpu)
# Environment:
#   ROUNDS     rounds (default 5)
#   RUNTIME    seconds per run (default 3)
#   SIZE       size of the file in /dev/shm in MiB (default 1024)
#   NICE       niceness both tools run at (default 0; -10 keeps other
#              tenants' compilers from preempting them, not the loop's kworker)
#   IOPATH_BINS "label=/path label2=/path2" (default
#              "iopath=target/release/iopath", which is built first)
# About 2 x RUNTIME + 1 s per round with one binary; the defaults take about
# a minute plus the setup.
set -euo pipefail

ROUNDS=${ROUNDS:-5}
RUNTIME=${RUNTIME:-3}
SIZE=${SIZE:-1024}
NICE=${NICE:-0}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=${1:-$ROOT/target/bench-harness-cpu}
RESULTS="$DIR/harness-cpu.tsv"

if [ "$(id -u)" != 0 ]; then
    echo "harness-cpu.sh needs root (losetup); run it with sudo" >&2
    exit 1
fi
if ! command -v fio >/dev/null; then
    echo "installing fio..." >&2
    apt-get install -y fio >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y fio >/dev/null; }
fi
command -v python3 >/dev/null || { echo "python3 is needed to read the JSON results" >&2; exit 1; }

if [ -z "${IOPATH_BINS:-}" ]; then
    cargo build --release --manifest-path "$ROOT/Cargo.toml" -q
    IOPATH_BINS="iopath=$ROOT/target/release/iopath"
fi
LABELS=(); BINS=()
for lb in $IOPATH_BINS; do
    label=${lb%%=*} bin=${lb#*=}
    if [ "$label" = "$lb" ] || [ -z "$label" ] || [ "$label" = fio ]; then
        echo "IOPATH_BINS: '$lb' is not label=/path (and 'fio' is taken)" >&2; exit 1
    fi
    [ -x "$bin" ] || { echo "IOPATH_BINS: $bin ($label) is not an executable" >&2; exit 1; }
    LABELS+=("$label"); BINS+=("$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")")
done

mkdir -p "$DIR"
FILE=$(mktemp /dev/shm/iopath-harness-cpu.XXXXXX)
LOOP=""
cleanup() {
    # Also a loop attached by an interrupted losetup, before LOOP was set.
    local l
    if [ -n "$LOOP" ]; then losetup -d "$LOOP" || echo "warning: could not detach $LOOP" >&2; fi
    for l in $(losetup -j "$FILE" -O NAME -n 2>/dev/null); do
        losetup -d "$l" || echo "warning: could not detach $l" >&2
    done
    rm -f "$FILE"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Random data, written out in full: no sparse holes, nothing compressible.
dd if=/dev/urandom of="$FILE" bs=1M count="$SIZE" status=none
LOOP=$(losetup --find --show --direct-io=on "$FILE")
dio=$(cat "/sys/block/$(basename "$LOOP")/loop/dio" 2>/dev/null || echo "?")
if [ "$dio" != 1 ]; then
    echo "$LOOP has direct I/O off (loop/dio=$dio): the device would be the page cache; giving up" >&2
    exit 1
fi

echo "# $(date -u +%FT%TZ) $(uname -r), $(nproc) CPUs, $(fio --version), load $(cut -d' ' -f1-3 /proc/loadavg)"
for i in "${!LABELS[@]}"; do
    echo "# ${LABELS[$i]}: ${BINS[$i]} ($("${BINS[$i]}" --version), sha256 $(sha256sum "${BINS[$i]}" | cut -c1-12))"
done
echo "# $LOOP: direct-io loop over $FILE (${SIZE} MiB of random data in /dev/shm)"
echo "# io_uring 4 KiB randread QD32 O_DIRECT, $ROUNDS rounds x ${RUNTIME}s per run at nice $NICE; odd rounds fio first, even rounds fio last"

fio_run() {
    nice -n "$NICE" fio --name=harness-cpu --filename="$LOOP" --rw=randread --bs=4k --iodepth=32 \
        --ioengine=io_uring --direct=1 --fixedbufs=1 --registerfiles=1 --hipri=0 \
        --sqthread_poll=0 --time_based --runtime="$RUNTIME" --norandommap \
        --output-format=json >"$1"
}
# --repeat 1: one timed repetition, as fio's one job; --cache as-is: nothing
# to drop or warm on an O_DIRECT read of a loop device. Its table goes to a
# file next to the JSON (it notes that the loop's backing file is in memory:
# expected here).
iopath_run() {
    nice -n "$NICE" "$1" run --file "$LOOP" --methods uring --patterns randread --bs 4k --qd 32 \
        --time "${RUNTIME}s" --repeat 1 --cache as-is --json "$2" --quiet >"${2%.json}.txt"
}
# metrics TOOL JSON -> "IOPS CPU_NS_PER_IO UTILIZATION(CPUs)"
metrics() {
    python3 - "$1" "$2" <<'EOF'
import json, sys
tool, path = sys.argv[1], sys.argv[2]
d = json.load(open(path))
if tool == "fio":
    j = d["jobs"][0]
    ios, runtime_s = j["read"]["total_ios"], j["job_runtime"] / 1000
    util = (j["usr_cpu"] + j["sys_cpu"]) / 100
    print(j["read"]["iops"], util * runtime_s * 1e9 / ios, util)
else:
    s = d["cases"][0]["summary"]
    print(s["iops"], s["cpu"]["ns_per_io"], s["cpu"]["utilization"])
EOF
}

# busy_others STAT0 STAT1 UTIL -> CPUs kept busy during the run by everything
# but the tool (UTIL CPUs): other tenants' work, and the loop driver's
# kworker doing the copies. From /proc/stat's first line (busy = all but
# idle and iowait) read just before and after the run, so the tool's
# start-up and exit are in the span: a small error.
busy_others() {
    python3 - "$1" "$2" "$3" <<'EOF'
import sys
a = [int(x) for x in sys.argv[1].split()[1:]]
b = [int(x) for x in sys.argv[2].split()[1:]]
d = [y - x for x, y in zip(a, b)]
total = sum(d[:8])
idle = d[3] + d[4]
ncpu = len([l for l in open("/proc/stat") if l.startswith("cpu") and l[3].isdigit()])
busy_cpus = (total - idle) / total * ncpu if total else 0.0
print(f"{max(busy_cpus - float(sys.argv[3]), 0.0):.2f}")
EOF
}

printf 'round\ttool\tpos\tiops\tcpu_ns_per_io\tutil\tothers\tload1\n' >"$RESULTS"
TOOLS=(fio "${LABELS[@]}")
for r in $(seq "$ROUNDS"); do
    order=("${TOOLS[@]}")
    if [ $((r % 2)) = 0 ]; then
        order=(); for ((k = ${#TOOLS[@]} - 1; k >= 0; k--)); do order+=("${TOOLS[$k]}"); done
    fi
    pos=0
    for tool in "${order[@]}"; do
        pos=$((pos + 1))
        json="$DIR/r$r-$tool.json"
        load=$(cut -d' ' -f1 /proc/loadavg)
        stat0=$(head -1 /proc/stat)
        if [ "$tool" = fio ]; then
            fio_run "$json"
        else
            for i in "${!LABELS[@]}"; do [ "${LABELS[$i]}" = "$tool" ] && bin=${BINS[$i]}; done
            iopath_run "$bin" "$json"
        fi
        stat1=$(head -1 /proc/stat)
        read -r iops ns util <<<"$(metrics "$tool" "$json")"
        others=$(busy_others "$stat0" "$stat1" "$util")
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$tool" "$pos" "$iops" "$ns" "$util" "$others" "$load" >>"$RESULTS"
    done
    python3 - "$RESULTS" "$r" "${order[*]}" <<'EOF'
import csv, sys
rows = [x for x in csv.DictReader(open(sys.argv[1]), delimiter="\t") if x["round"] == sys.argv[2]]
by = {x["tool"]: x for x in rows}
f = by["fio"]
fi, fn = float(f["iops"]), float(f["cpu_ns_per_io"])
parts = [f"fio {fi:>7.0f} IOPS {fn:>5.0f} ns/IO (others {float(f['others']):.2f} CPUs)"]
for t in sys.argv[3].split():
    if t == "fio":
        continue
    x = by[t]
    i, n = float(x["iops"]), float(x["cpu_ns_per_io"])
    flag = "  IOPS differ >10%" if abs(i / fi - 1) > 0.10 else ""
    parts.append(f"{t} {i:>7.0f} IOPS {n:>5.0f} ns/IO (others {float(x['others']):.2f})  cpu ratio {n / fn:.3f}  iops ratio {i / fi:.3f}{flag}")
print(f"r{sys.argv[2]:<2} order {sys.argv[3].replace(' ', ','):<20} " + " | ".join(parts))
EOF
done

echo
python3 - "$RESULTS" "${LABELS[*]}" <<'EOF'
import csv, math, random, statistics as st, sys

def adjusted(pairs):
    """CPU per I/O ratio tool/fio at equal IOPS: log(ns/IO) = tool offset +
    k log(IOPS), one slope k for both tools, fitted within each tool.
    pairs: per round (fio IOPS, fio ns/IO, tool IOPS, tool ns/IO)."""
    fx, fy, tx, ty = ([math.log(p[i]) for p in pairs] for i in range(4))
    mfx, mfy, mtx, mty = map(st.fmean, (fx, fy, tx, ty))
    sxy = sum((a - mfx) * (b - mfy) for a, b in zip(fx, fy)) + sum((a - mtx) * (b - mty) for a, b in zip(tx, ty))
    sxx = sum((a - mfx) ** 2 for a in fx) + sum((a - mtx) ** 2 for a in tx)
    k = sxy / sxx if sxx else 0.0
    return math.exp((mty - mfy) - k * (mtx - mfx)), k

rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
rounds = sorted({int(x["round"]) for x in rows})
get = {(int(x["round"]), x["tool"]): x for x in rows}
f_iops = [float(get[r, "fio"]["iops"]) for r in rounds]
f_ns = [float(get[r, "fio"]["cpu_ns_per_io"]) for r in rounds]
f_util = [float(get[r, "fio"]["util"]) for r in rounds]
print(f"{'tool':<10} {'IOPS med':>9} {'ns/IO med':>9} {'CPUs med':>8}   {'cpu ratio iopath/fio: med':>25} {'min':>6} {'max':>6}   {'iops ratio: med':>15} {'min':>6} {'max':>6}  n")
print(f"{'fio':<10} {st.median(f_iops):>9.0f} {st.median(f_ns):>9.0f} {st.median(f_util):>8.2f}")
for t in sys.argv[2].split():
    iops = [float(get[r, t]["iops"]) for r in rounds]
    ns = [float(get[r, t]["cpu_ns_per_io"]) for r in rounds]
    util = [float(get[r, t]["util"]) for r in rounds]
    cr = [n / fn for n, fn in zip(ns, f_ns)]
    ir = [i / fi for i, fi in zip(iops, f_iops)]
    print(f"{t:<10} {st.median(iops):>9.0f} {st.median(ns):>9.0f} {st.median(util):>8.2f}   "
          f"{st.median(cr):>25.3f} {min(cr):>6.3f} {max(cr):>6.3f}   {st.median(ir):>15.3f} {min(ir):>6.3f} {max(ir):>6.3f}  {len(rounds)}")
    if len(rounds) >= 3:
        pairs = [(fi, fn, i, n) for fi, fn, i, n in zip(f_iops, f_ns, iops, ns)]
        adj, k = adjusted(pairs)
        rng = random.Random(1)
        boot = sorted(adjusted([rng.choice(pairs) for _ in pairs])[0] for _ in range(2000))
        print(f"  {t}: cpu ratio adjusted to equal IOPS (log-log fit, slope {k:.2f}): {adj:.3f}, "
              f"95% bootstrap over rounds {boot[49]:.3f}-{boot[1949]:.3f}")
    eq = [c for c, i in zip(cr, ir) if abs(i - 1) <= 0.10]
    if len(eq) < len(rounds):
        print(f"  {t}: IOPS within 10% of fio's in {len(eq)} of {len(rounds)} rounds", end="")
        if eq:
            print(f"; cpu ratio over those: median {st.median(eq):.3f} (min {min(eq):.3f}, max {max(eq):.3f})")
        else:
            print(": no round at equal IOPS")
labels = sys.argv[2].split()
if len(labels) > 1:
    base = labels[0]
    for t in labels[1:]:
        pr = [float(get[r, t]["cpu_ns_per_io"]) / float(get[r, base]["cpu_ns_per_io"]) for r in rounds]
        print(f"{t}/{base} CPU per I/O, same rounds: median {st.median(pr):.3f} (min {min(pr):.3f}, max {max(pr):.3f})")
EOF
echo "# per-round results: $RESULTS (JSON of every run next to it)"
