#!/usr/bin/env bash
# iopath against fio on identical jobs, same file, interleaved A B A B.
#
# Prints, per job, fio's and iopath's result in every round and the median of
# the per-round ratios iopath/fio. Ratios measured side by side are what to
# compare on a shared, noisy disk; absolute numbers are not.
#
# Usage: bench/vs-fio.sh [DIR] (default: a directory under target/)
# Environment: ROUNDS (default 3), RUNTIME seconds per run (default 5),
#              SIZE of the test file (default 2G).
set -euo pipefail

ROUNDS=${ROUNDS:-3}
RUNTIME=${RUNTIME:-5}
SIZE=${SIZE:-2G}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=${1:-$ROOT/target/bench-vs-fio}
mkdir -p "$DIR"
FILE="$DIR/vs-fio.dat"
trap 'rm -f "$FILE"' EXIT

if ! command -v fio >/dev/null; then
    echo "installing fio..." >&2
    if [ "$(id -u)" = 0 ]; then
        apt-get install -y fio >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y fio >/dev/null; }
    else
        sudo apt-get install -y fio >/dev/null
    fi
fi
command -v python3 >/dev/null || { echo "python3 is needed to read the JSON results" >&2; exit 1; }

cargo build --release --manifest-path "$ROOT/Cargo.toml" -q
IOPATH="$ROOT/target/release/iopath"

echo "# $(date -u +%FT%TZ) $(uname -r), $(fio --version), iopath $("$IOPATH" --version | cut -d' ' -f2)"
echo "# file $FILE ($SIZE), $ROUNDS rounds x ${RUNTIME}s per run"
fio --name=prep --filename="$FILE" --size="$SIZE" --rw=write --bs=1M --direct=1 \
    --ioengine=psync --refill_buffers --end_fsync=1 --output=/dev/null

# fio_metric JSON-on-stdin KIND -> IOPS (KIND=iops) or MiB/s (KIND=bw)
fio_metric() {
    python3 -c '
import json, sys
j = json.load(sys.stdin)["jobs"][0]["read"]
print(j["iops"] if sys.argv[1] == "iops" else j["bw_bytes"] / 2**20)' "$1"
}
iopath_metric() {
    python3 -c '
import json, sys
s = json.load(sys.stdin)["cases"][0]["summary"]
print(s["iops"] if sys.argv[1] == "iops" else s["bw_bytes_per_s"] / 2**20)' "$1"
}

# job NAME KIND "FIO ARGS" "IOPATH ARGS" [warm]
job() {
    local name=$1 kind=$2 fio_args=$3 iopath_args=$4 warm=${5:-}
    local ratios=() line="$name:"
    for r in $(seq "$ROUNDS"); do
        [ -n "$warm" ] && cat "$FILE" >/dev/null
        # shellcheck disable=SC2086
        f=$(fio --name="$name" --filename="$FILE" --size="$SIZE" --time_based --runtime="$RUNTIME" \
                --output-format=json $fio_args | fio_metric "$kind")
        [ -n "$warm" ] && cat "$FILE" >/dev/null
        # shellcheck disable=SC2086
        i=$("$IOPATH" run --file "$FILE" --time "${RUNTIME}s" --json - --quiet $iopath_args | iopath_metric "$kind")
        ratio=$(python3 -c "print(f'{$i / $f:.3f}')")
        ratios+=("$ratio")
        line="$line  r$r fio=$(printf %.0f "$f") iopath=$(printf %.0f "$i") ratio=$ratio"
    done
    med=$(printf '%s\n' "${ratios[@]}" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}')
    echo "$line"
    printf '%-34s %-5s median iopath/fio = %s\n' "$name" "$kind" "$med"
}

job "randread-4k-qd32-uring-direct" iops \
    "--rw=randread --bs=4k --iodepth=32 --ioengine=io_uring --direct=1 --fixedbufs=1 --registerfiles=1" \
    "--methods uring --patterns randread --bs 4k --qd 32 --cache as-is"
job "read-1m-qd8-uring-direct" bw \
    "--rw=read --bs=1M --iodepth=8 --ioengine=io_uring --direct=1 --fixedbufs=1 --registerfiles=1" \
    "--methods uring --patterns read --bs 1M --qd 8 --cache as-is --io-size 1T"
job "randread-4k-psync-buffered-warm" iops \
    "--rw=randread --bs=4k --iodepth=1 --ioengine=psync --direct=0" \
    "--methods buffered --patterns randread --bs 4k --cache warm" warm
job "null-4k-qd1" iops \
    "--rw=randread --bs=4k --iodepth=1 --ioengine=null" \
    "--methods null --patterns randread --bs 4k --qd 1"
