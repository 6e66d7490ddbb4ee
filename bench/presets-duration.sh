#!/bin/bash
# Every built-in preset at its defaults, one at a time (the disk and the
# CPUs are shared): wall time, exit status and load average of each, the
# estimate iopath printed (NAME.err), the table (NAME.txt) and the JSON.
# docs/presets.md ("How long each preset takes") has the figures.
#
# Usage: bench/presets-duration.sh OUT_DIR [PRESET...]
# The test files go to OUT_DIR too (a directory on the disk to measure).
set -u
OUT=${1:?usage: bench/presets-duration.sh OUT_DIR [PRESET...]}
shift
BIN=${IOPATH:-target/release/iopath}
mkdir -p "$OUT"
presets="${*:-niobench daxbench glommio-scan glommio-random crystal crystal-nvme numa hmmap cache-pollution dontcache}"
for p in $presets; do
  start=$(date +%s.%N)
  "$BIN" run --preset "$p" --dir "$OUT" --json "$OUT/$p.json" >"$OUT/$p.txt" 2>"$OUT/$p.err"
  rc=$?
  end=$(date +%s.%N)
  printf '%s rc=%s wall=%.1f s load=%s\n' "$p" "$rc" "$(echo "$end - $start" | bc)" \
    "$(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/times.txt"
done
