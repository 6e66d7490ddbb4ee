#!/usr/bin/env bash
# bench/bounded-inputs.sh: time and peak memory of `compare` and `report` on
# synthetic results of growing case counts (linear: the time per case stays
# flat), and of a 6,000-case job file of `null` cases (refused at the
# default IOPATH_MAX_CASES; raised, interrupted with SIGINT after SIGINT_AFTER
# seconds). docs/testing.md ("Bounded inputs") has the results.
#
#   IOPATH=target/release/iopath DIR=target/bounded-inputs COUNTS="5000 10000 20000 40000" bench/bounded-inputs.sh
#
# Each result is one real `null` case (a 10 ms repetition) repeated with a
# different block size per case: every case its own job, full figures
# (about 4.8 KB of JSON a case). Needs python3 and GNU time (/usr/bin/time).
set -u

IOPATH=${IOPATH:-target/release/iopath}
DIR=${DIR:-target/bounded-inputs}
COUNTS=${COUNTS:-5000 10000 20000 40000}
SIGINT_AFTER=${SIGINT_AFTER:-20}
mkdir -p "$DIR"

peak() { # command...: "elapsed_s max_rss_kb exit"
    /usr/bin/time -f "%e %M %x" -o "$DIR/time.txt" "$@" >/dev/null 2>"$DIR/stderr.txt"
    cat "$DIR/time.txt" | tail -1
}

"$IOPATH" run --methods null --patterns read --size 1M --time 10ms --repeat 3 --quiet \
    --dir "$DIR" --json "$DIR/one.json" >/dev/null || exit 1
echo "# $(date -u +%FT%TZ) $(uname -r), $(nproc) CPUs; $IOPATH ($("$IOPATH" --version))"
echo "# cases  bytes  compare_s compare_rss_kb  report_s report_rss_kb"
for n in $COUNTS; do
    python3 - "$DIR/one.json" "$DIR/r$n.json" "$n" <<'PY'
import json, sys, copy
v = json.load(open(sys.argv[1])); c = v["cases"][0]; n = int(sys.argv[3])
cases = []
for i in range(n):
    x = copy.deepcopy(c); x["block_size"] = 4096 * (i + 1); cases.append(x)
v["cases"] = cases; v["verdicts"] = []
json.dump(v, open(sys.argv[2], "w"))
PY
    bytes=$(stat -c %s "$DIR/r$n.json")
    read -r cs cm _ < <(IOPATH_MAX_RESULT=1G peak "$IOPATH" compare "$DIR/r$n.json" "$DIR/r$n.json")
    read -r rs rm _ < <(IOPATH_MAX_RESULT=1G peak "$IOPATH" report "$DIR/r$n.json")
    echo "$n $bytes $cs $cm $rs $rm"
    rm -f "$DIR/r$n.json"
done

python3 -c "
print('[run]\nsize = \"1M\"')
for _ in range(6000): print('[[case]]\nmethod = \"null\"\npattern = \"read\"')" > "$DIR/6000.toml"
echo "# 6000-case job, default bound: elapsed_s max_rss_kb exit"
peak "$IOPATH" run "$DIR/6000.toml" --dir "$DIR" --time 10ms
echo "# 6000-case job, IOPATH_MAX_CASES=6000, SIGINT after ${SIGINT_AFTER}s: elapsed_s max_rss_kb exit"
IOPATH_MAX_CASES=6000 peak timeout --preserve-status -s INT "$SIGINT_AFTER" "$IOPATH" run "$DIR/6000.toml" --dir "$DIR" --time 10ms --json "$DIR/6000.json"
grep -c . "$DIR/stderr.txt" >/dev/null && tail -1 "$DIR/stderr.txt"
rm -rf "$DIR"
