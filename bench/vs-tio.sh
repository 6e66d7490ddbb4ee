#!/usr/bin/env bash
# iopath against the software floor: fio's t/io_uring, beside fio itself,
# interleaved, on a loop device over /dev/shm.
#
# t/io_uring is the io_uring peak tool of fio's source tree: a tight loop
# with nothing but submission and completion. On a loop device with direct
# I/O over a file in /dev/shm no disk is involved (the loop driver's kworker
# copies each block out of memory), so what each tool spends per request is
# its own submission, completion and bookkeeping: the floor is t/io_uring's.
#
# Per depth D (QDS) every round runs, back to back, in an order that is
# reversed every other round:
#   tio-s1    t/io_uring -dD -s1 -c1: one request per submit (as iopath's uring)
#   tio-sB    t/io_uring -dD -sB -cB, B = max(1, D/4): batches (as uring-batch)
#   fio       fio io_uring, fixedbufs, registerfiles (per-request submission)
#   uring     iopath --methods uring --noatime
#   batch     iopath --methods uring-batch --noatime
#   uring-at  iopath --methods uring, a plain open (reads update the
#             device node's access time: what --noatime saves)
# What makes the jobs the same (docs/methodology.md, rule 9):
#   buffers and file registered   t/io_uring -B1 -F1 (its defaults), fio
#                                 fixedbufs=1 registerfiles=1, iopath always
#   ring descriptor registered    t/io_uring -X1, iopath always, fio no
#   no polling                    t/io_uring -p0, fio hipri=0
#                                 sqthread_poll=0, iopath uring
#   O_NOATIME                     t/io_uring always, fio on a block device
#                                 always (no option), iopath --noatime
#   a clock read per request      t/io_uring -t TIO_LAT (default 1; its
#                                 clock is rdtsc), iopath always (two
#                                 clock_gettime per request), fio always
#   not pinned                    t/io_uring -P0 (its default), fio and
#                                 iopath without cpus_allowed / --cpus
# Per round and depth the script prints each arm's IOPS and CPU ns per I/O;
# at the end the medians, and the per-round ratios iopath/t/io_uring at
# the same batching and iopath/fio (median, min, max).
#
# CPU per I/O:
#   t/io_uring: user+sys of its process (getrusage of the child: setup
#               included, a few ms of 3 s) / (mean of its per-second IOPS
#               lines x its wall time).
#   fio:        (usr_cpu + sys_cpu) / 100 x job_runtime / read.total_ios.
#   iopath:     cases[0].summary.cpu.ns_per_io (the worker's CPU over the
#               timed interval + io_uring kernel threads) / ios.
#   None counts the loop driver's kworker, which does the copies.
#
# Build t/io_uring from fio's own source tree (https://github.com/axboe/fio):
#   ./configure && make t/io_uring
# then: sudo TIO=/path/to/fio/t/io_uring bench/vs-tio.sh [DIR]
# Without TIO (or if it is not executable) the script says so and exits 0.
# Environment: TIO, QDS (default "32"), ROUNDS (default 5), RUNTIME seconds
#   per run (default 3), SIZE MiB of the file in /dev/shm (default 1024),
#   TIO_LAT (default 1), IOPATH (default target/release/iopath, built first).
# About 6 x RUNTIME + 3 s per round and depth: the defaults take 2 minutes.
set -euo pipefail

ROUNDS=${ROUNDS:-5}
RUNTIME=${RUNTIME:-3}
SIZE=${SIZE:-1024}
QDS=${QDS:-32}
TIO_LAT=${TIO_LAT:-1}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=${1:-$ROOT/target/bench-vs-tio}
RESULTS="$DIR/vs-tio.tsv"

if [ -z "${TIO:-}" ] || [ ! -x "${TIO:-}" ]; then
    echo "vs-tio.sh: skipped: set TIO to fio's t/io_uring binary (TIO='${TIO:-}' is not an executable)." >&2
    echo "  build it in a checkout of https://github.com/axboe/fio: ./configure && make t/io_uring" >&2
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "vs-tio.sh needs root (losetup); run it with sudo" >&2
    exit 1
fi
if ! command -v fio >/dev/null; then
    echo "installing fio..." >&2
    apt-get install -y fio >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y fio >/dev/null; }
fi
command -v python3 >/dev/null || { echo "python3 is needed to read the results" >&2; exit 1; }
if [ -z "${IOPATH:-}" ]; then
    cargo build --release --manifest-path "$ROOT/Cargo.toml" -q
    IOPATH="$ROOT/target/release/iopath"
fi

mkdir -p "$DIR"
FILE=$(mktemp /dev/shm/iopath-vs-tio.XXXXXX)
LOOP=""
cleanup() {
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

dd if=/dev/urandom of="$FILE" bs=1M count="$SIZE" status=none
LOOP=$(losetup --find --show --direct-io=on "$FILE")
dio=$(cat "/sys/block/$(basename "$LOOP")/loop/dio" 2>/dev/null || echo "?")
if [ "$dio" != 1 ]; then
    echo "$LOOP has direct I/O off (loop/dio=$dio): the device would be the page cache; giving up" >&2
    exit 1
fi

echo "# $(date -u +%FT%TZ) $(uname -r), $(nproc) CPUs, $(fio --version), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# t/io_uring: $TIO (sha256 $(sha256sum "$TIO" | cut -c1-12)), -t$TIO_LAT -X1 -p0 -B1 -F1"
echo "# iopath: $IOPATH ($("$IOPATH" --version), sha256 $(sha256sum "$IOPATH" | cut -c1-12)), --noatime except uring-at"
echo "# $LOOP: direct-io loop over $FILE (${SIZE} MiB of random data in /dev/shm)"
echo "# 4 KiB randread O_DIRECT, depths $QDS, $ROUNDS rounds x ${RUNTIME}s per run, order reversed every other round"

# tio D S -> "IOPS NS_PER_IO"
tio() {
    python3 - "$TIO" "-d$1" "-s$2" "-c$2" -p0 -B1 -F1 -X1 "-t$TIO_LAT" "-r$RUNTIME" "$LOOP" <<'EOF'
import re, resource, subprocess, sys, time
t0 = time.monotonic()
out = subprocess.run(sys.argv[1:], capture_output=True, text=True).stdout
wall = time.monotonic() - t0
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
rates = []
for v in re.findall(r"^IOPS=([0-9.]+)([KM]?),", out, re.M):
    rates.append(float(v[0]) * {"": 1, "K": 1e3, "M": 1e6}[v[1]])
if not rates:
    sys.exit("t/io_uring printed no IOPS line:\n" + out)
iops = sum(rates) / len(rates)
print(iops, (ru.ru_utime + ru.ru_stime) * 1e9 / (iops * wall))
EOF
}
fio_run() {
    fio --name=vs-tio --filename="$LOOP" --rw=randread --bs=4k --iodepth="$1" --ioengine=io_uring \
        --direct=1 --fixedbufs=1 --registerfiles=1 --hipri=0 --sqthread_poll=0 --norandommap \
        --time_based --runtime="$RUNTIME" --output-format=json | python3 -c '
import json, sys
j = json.load(sys.stdin)["jobs"][0]
print(j["read"]["iops"], (j["usr_cpu"] + j["sys_cpu"]) / 100 * j["job_runtime"] * 1e6 / j["read"]["total_ios"])'
}
# iopath_run D METHOD [FLAGS...]
iopath_run() {
    "$IOPATH" run --file "$LOOP" --methods "$2" --patterns randread --bs 4k --qd "$1" \
        --time "${RUNTIME}s" --repeat 1 --cache as-is --json - --quiet "${@:3}" | python3 -c '
import json, sys
s = json.load(sys.stdin)["cases"][0]["summary"]
print(s["iops"], s["cpu"]["ns_per_io"])'
}

ARMS=(tio-s1 tio-sB fio uring batch uring-at)
printf 'round\tqd\tarm\tiops\tns_per_io\n' >"$RESULTS"
for r in $(seq "$ROUNDS"); do
    for qd in $QDS; do
        b=$((qd / 4)); [ "$b" -ge 1 ] || b=1
        order=("${ARMS[@]}")
        if [ $((r % 2)) = 0 ]; then order=(uring-at batch uring fio tio-sB tio-s1); fi
        line="r$r QD$qd"
        for arm in "${order[@]}"; do
            case $arm in
                tio-s1) m=$(tio "$qd" 1) ;;
                tio-sB) m=$(tio "$qd" "$b") ;;
                fio) m=$(fio_run "$qd") ;;
                uring) m=$(iopath_run "$qd" uring --noatime) ;;
                batch) m=$(iopath_run "$qd" uring-batch --noatime) ;;
                uring-at) m=$(iopath_run "$qd" uring) ;;
            esac
            read -r iops ns <<<"$m"
            printf '%s\t%s\t%s\t%s\t%s\n' "$r" "$qd" "$arm" "$iops" "$ns" >>"$RESULTS"
            line+=$(printf '  %s %.0fk %.0fns' "$arm" "$(python3 -c "print($iops/1000)")" "$ns")
        done
        echo "$line"
    done
done

echo
python3 - "$RESULTS" <<'EOF'
import csv, math, random, statistics as st, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
val = {(r["round"], r["qd"], r["arm"]): (float(r["iops"]), float(r["ns_per_io"])) for r in rows}
rounds = sorted({r["round"] for r in rows}, key=int)
def spread(xs):
    return f"{st.median(xs):.3f} ({min(xs):.3f}-{max(xs):.3f})"
ARMS = ["tio-s1", "tio-sB", "fio", "uring", "batch", "uring-at"]
# CPU per I/O falls as IOPS rise (more completions per wait), and on a
# shared machine the loop device's speed swings from run to run: fit
# log(ns/IO) = arm + k log(IOPS), one slope k for all arms, and compare
# the arms' intercepts (ratios at equal IOPS), with a bootstrap over rounds.
def adjusted(qd, rounds):
    pts = {a: [(math.log(val[(r, qd, a)][0]), math.log(val[(r, qd, a)][1])) for r in rounds] for a in ARMS}
    mean = {a: (st.fmean(x for x, _ in p), st.fmean(y for _, y in p)) for a, p in pts.items()}
    sxx = sum((x - mean[a][0]) ** 2 for a, p in pts.items() for x, _ in p)
    sxy = sum((x - mean[a][0]) * (y - mean[a][1]) for a, p in pts.items() for x, y in p)
    k = sxy / sxx if sxx > 0 else 0.0
    return {a: mean[a][1] - k * mean[a][0] for a in ARMS}, k
for qd in sorted({r["qd"] for r in rows}, key=int):
    print(f"QD{qd}: medians over {len(rounds)} rounds")
    print(f"  {'arm':<8} {'IOPS':>9} {'ns/IO':>7}")
    for arm in ARMS:
        xs = [val[(r, qd, arm)] for r in rounds]
        print(f"  {arm:<8} {st.median(x[0] for x in xs):>9.0f} {st.median(x[1] for x in xs):>7.0f}")
    fit = adjusted(qd, rounds)
    boot = []
    rng = random.Random(1)
    for _ in range(1000):
        pick = [rng.choice(rounds) for _ in rounds]
        boot.append(adjusted(qd, pick))
    print(f"  CPU per I/O slope over IOPS (log-log, all arms): {fit[1]:.2f}")
    print(f"  {'ratio':<14} {'CPU per I/O, per round':>26} {'at equal IOPS (95% CI)':>24} {'IOPS, per round':>22}")
    for a, b in [("uring", "tio-s1"), ("batch", "tio-sB"), ("uring", "fio"), ("batch", "fio"), ("batch", "uring"), ("uring-at", "uring")]:
        cpu = [val[(r, qd, a)][1] / val[(r, qd, b)][1] for r in rounds]
        iops = [val[(r, qd, a)][0] / val[(r, qd, b)][0] for r in rounds]
        adj = math.exp(fit[0][a] - fit[0][b])
        bs = sorted(math.exp(f[0][a] - f[0][b]) for f in boot if f)
        ci = f"{bs[25]:.3f}-{bs[974]:.3f}"
        print(f"  {a + '/' + b:<14} {spread(cpu):>26} {adj:>8.3f} ({ci}) {spread(iops):>22}")
EOF
echo "# per-round results: $RESULTS"
