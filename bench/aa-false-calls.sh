#!/usr/bin/env bash
# A/A false-call rate of the verdict: identical arms must be called a tie.
#
# Runs `iopath run --methods M,M` (two arms of the same method in one job:
# M and M#2) N times for each configuration, with the default (adaptive)
# repetition settings, and counts the runs whose verdict does not hold both
# arms as fastest while making a call (a false call; "no call yet", too few
# rounds to tell, is not one). Configurations are interleaved
# (a b c a b c ...) so that slow drift of a shared disk hits all alike.
#
#   (a) direct,direct
#   (b) uring,uring
#   (c) buffered,buffered --cache warm
#
# Per run it prints: verdict fastest, ratio of the slower arm to the fastest
# (ranking[1].fastest_ratio) and its 95% interval, rounds measured
# (cases[0].repetition_control.measured), stopped_by, wall time, and the
# verdict's first line and its "→" pick line. Then a summary per
# configuration: false calls / runs, median and range of the ratio, median
# rounds, median run time, and how many pick lines named one arm instead of
# "equally good" or "too close to call" (a speed call, or a CPU-per-I/O or memory call between the
# tied arms).
#
# Usage: bench/aa-false-calls.sh [DIR]   (default: target/aa; must be on the
#        real disk, not tmpfs)
# Environment: BIN the iopath binary (default target/release/iopath)
#              EXTRA more `iopath run` arguments, e.g. "--budget 5s --concurrency 1"
#                    (the default run compares 1 and 32 in flight within 52 s)
# Environment: N runs per configuration (default 20)
#              SCHEDULE (default: unset = iopath's default, interleaved);
#                       e.g. SCHEDULE=sequential for the old behaviour
#              CONFIGS  which configurations, e.g. "a" or "abc" (default abc)
#              OUT      directory for per-run JSON and the TSV
#                       (default DIR/results-<timestamp>)
set -euo pipefail

N=${N:-20}
CONFIGS=${CONFIGS:-abc}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=${1:-$ROOT/target/aa}
mkdir -p "$DIR"
OUT=${OUT:-$DIR/results-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUT"
BIN=${BIN:-$ROOT/target/release/iopath}
[ -x "$BIN" ] || cargo build --release --manifest-path "$ROOT/Cargo.toml" -q
command -v python3 >/dev/null || { echo "python3 is needed to read the JSON results" >&2; exit 1; }

fstype=$(stat -f -c %T "$DIR")
case "$fstype" in tmpfs|ramfs) echo "DIR $DIR is on $fstype: use the real disk" >&2; exit 1;; esac

SCHED_ARGS=()
[ -n "${SCHEDULE:-}" ] && SCHED_ARGS=(--schedule "$SCHEDULE")

config_args() {
    case "$1" in
        a) echo "--methods direct,direct" ;;
        b) echo "--methods uring,uring" ;;
        c) echo "--methods buffered,buffered --cache warm" ;;
    esac
}

TSV=$OUT/runs.tsv
printf 'cfg\trun\trc\twall_s\tfastest\tfalse_call\tratio\tci_lo\tci_hi\trounds\tstopped_by\tpaired\tpick_tie\tverdict\tpick_line\n' >"$TSV"
echo "# $(date -u +%FT%TZ) N=$N CONFIGS=$CONFIGS SCHEDULE=${SCHEDULE:-default} DIR=$DIR ($fstype) OUT=$OUT"
echo "# load: $(cat /proc/loadavg)"

for ((i = 1; i <= N; i++)); do
    for ((k = 0; k < ${#CONFIGS}; k++)); do
        c=${CONFIGS:k:1}
        json=$OUT/$c-$i.json
        log=$OUT/$c-$i.log
        # shellcheck disable=SC2046
        cmd=("$BIN" run --dir "$DIR" $(config_args "$c") --patterns randread --bs 4k --size 256M
             "${SCHED_ARGS[@]}" ${EXTRA:-} --json "$json" --quiet)
        t0=$(date +%s.%N)
        rc=0
        "${cmd[@]}" >"$log" 2>&1 || rc=$?
        t1=$(date +%s.%N)
        wall=$(python3 -c "print(f'{$t1-$t0:.2f}')")
        if [ "$rc" != 0 ] || [ ! -s "$json" ]; then
            echo "!! $c run $i failed rc=$rc: ${cmd[*]}" >&2
            tail -20 "$log" >&2
        fi
        if python3 -c "import sys; sys.exit(0 if float('$wall') > 60 else 1)"; then
            echo "!! $c run $i took ${wall}s (> 60 s): ${cmd[*]}" >&2
        fi
        python3 - "$json" "$c" "$i" "$rc" "$wall" >>"$TSV" <<'EOF'
import json, sys
path, cfg, run, rc, wall = sys.argv[1:]
row = [cfg, run, rc, wall]
try:
    d = json.load(open(path))
    v = d["verdicts"][0]
    fastest = v["fastest"]
    r1 = v["ranking"][1]
    lo, hi = r1.get("fastest_ratio_ci95") or [None, None]
    rc_ = d["cases"][0]["repetition_control"]
    text = v.get("text") or [""]
    pick = next((t for t in text if t.startswith("\u2192")), "")
    # "equally good" only: "→ use X: tied for fastest, and the least CPU per
    # I/O ..." names one arm (a CPU call between identical arms) though it
    # contains "tie".
    # "→ no call yet" names no arm either: too few rounds to tell.
    pick_tie = "equally good" in pick or "too close to call" in pick or "no call yet" in pick
    # A false call claims a difference: one arm alone in `fastest` of a
    # verdict that makes a call (`called` false: "no call yet", schema 3).
    false_call = len(fastest) < 2 and v.get("called", True)
    row += [",".join(fastest), str(int(false_call)), f"{r1['fastest_ratio']:.4f}",
            f"{lo:.4f}" if lo is not None else "", f"{hi:.4f}" if hi is not None else "",
            str(rc_["measured"]), str(rc_["stopped_by"]), str(v.get("paired")),
            str(int(pick_tie)), text[0], pick]
except Exception as e:  # a missing or broken JSON is a result too
    row += ["", "", "", "", "", "", "", "", "", f"ERROR {type(e).__name__}: {e}", ""]
print("\t".join(x.replace("\t", " ").replace("\n", " ") for x in row))
EOF
        tail -1 "$TSV" | awk -F'\t' '{printf "%s #%-2s rc=%s %6ss fastest=%-18s false=%s ratio=%s [%s,%s] rounds=%s stop=%s paired=%s pick_tie=%s | %s | %s\n",$1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15}'
    done
done

echo
echo "# summary ($(date -u +%FT%TZ), load: $(cat /proc/loadavg))"
python3 - "$TSV" <<'EOF'
import csv, statistics as st, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
names = {"a": "direct,direct", "b": "uring,uring", "c": "buffered,buffered --cache warm"}
print("| config | false calls / runs | ratio median | ratio range | median rounds | median run time (s) | pick not a tie | errors |")
print("|---|---|---|---|---|---|---|---|")
for c in sorted({r["cfg"] for r in rows}):
    rs = [r for r in rows if r["cfg"] == c]
    ok = [r for r in rs if r["ratio"]]
    fc = sum(r["false_call"] == "1" for r in ok)
    ratios = [float(r["ratio"]) for r in ok]
    rounds = [int(r["rounds"]) for r in ok]
    walls = [float(r["wall_s"]) for r in rs]
    nontie = sum(r["pick_tie"] == "0" for r in ok)
    err = len(rs) - len(ok) + sum(r["rc"] != "0" for r in ok)
    stops = {}
    for r in ok:
        stops[r["stopped_by"]] = stops.get(r["stopped_by"], 0) + 1
    print(f"| {names[c]} | {fc} / {len(ok)} | {st.median(ratios):.3f} | {min(ratios):.3f}-{max(ratios):.3f} "
          f"| {st.median(rounds):g} | {st.median(walls):.1f} | {nontie} | {err} |  stopped_by: {stops}")
for r in rows:
    if r["false_call"] == "1":
        print(f"FALSE CALL {names[r['cfg']]} run {r['run']}: fastest={r['fastest']} ratio={r['ratio']} "
              f"ci95=[{r['ci_lo']},{r['ci_hi']}] rounds={r['rounds']} stopped_by={r['stopped_by']} | {r['verdict']}")
EOF
echo "# per-run TSV and JSON: $OUT"
