#!/usr/bin/env bash
# A real program through every path (docs/replay.md, "SQLite"): Debian's
# sqlite3 runs a scripted workload (inserts in transactions, then selects
# through an index) on a database larger than the page cache it is given,
# recorded by `iopath record`, cut to the database's files (`iopath trace
# filter`), and replayed by `iopath run --replay` through every default
# method under the same page-cache limit (`--cache-limit`).
#
# The recording: the database is built first (not recorded), its pages are
# dropped from the page cache (posix_fadvise DONTNEED on the file alone:
# the machine's other caches are left alone), and sqlite3 runs in a memory
# cgroup (v1 `memory.limit_in_bytes`, or v2 `memory.max`) of CACHE, so its
# reads reach the device.
#
# Usage: bench/replay-sqlite.sh [DIR] (default: ext4 on a loop device over
#   /dev/shm, made and removed here)
# Environment: ROWS in the database (default 400000: about 150 MiB), CACHE
#   (default 64M), TXNS transactions of 200 inserts (default 20), SELECTS
#   (default 5000), REPEAT (default 3), IOPATH (default target/release/iopath).
set -euo pipefail

ROWS=${ROWS:-400000}
CACHE=${CACHE:-64M}
TXNS=${TXNS:-20}
SELECTS=${SELECTS:-5000}
REPEAT=${REPEAT:-3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
IOPATH=${IOPATH:-$ROOT/target/release/iopath}
WORK=$ROOT/target/bench-replay-sqlite
for t in sqlite3 bpftrace python3 "$IOPATH"; do
    command -v "$t" >/dev/null || { echo "missing $t (cargo build --release; apt-get install sqlite3 bpftrace)" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "needs root (eBPF recording, a memory cgroup)" >&2; exit 2; }

rm -rf "$WORK"
mkdir -p "$WORK/mnt"
IMG=/dev/shm/iopath-replay-sqlite.img
LOOP=
CG=
if [ -d /sys/fs/cgroup/memory ]; then
    CG=/sys/fs/cgroup/memory/iopath-replay-sqlite-$$
    LIMIT_FILE=memory.limit_in_bytes
else
    CG=/sys/fs/cgroup/iopath-replay-sqlite-$$
    LIMIT_FILE=memory.max
fi
cleanup() {
    if [ -d "$CG" ]; then rmdir "$CG" 2>/dev/null || true; fi
    if mountpoint -q "$WORK/mnt"; then umount "$WORK/mnt"; fi
    if [ -n "$LOOP" ]; then losetup -d "$LOOP"; fi
    rm -f "$IMG"
    rm -rf "$WORK"
}
trap cleanup EXIT
if [ -n "${1:-}" ]; then
    MNT=$1
else
    truncate -s 2G "$IMG"
    LOOP=$(losetup -f --show "$IMG")
    mkfs.ext4 -q "$LOOP"
    mount "$LOOP" "$WORK/mnt"
    MNT=$WORK/mnt
fi
DATA=$MNT/sqlite-demo
mkdir -p "$DATA"
DB=$DATA/demo.db
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

sqlite3 "$DB" <<SQL
PRAGMA page_size=4096;
CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER, v BLOB);
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < $ROWS)
INSERT INTO t(k, v) SELECT abs(random()) % 100000000, randomblob(300) FROM c;
CREATE INDEX t_k ON t(k);
SQL
python3 - "$WORK/work.sql" "$TXNS" "$SELECTS" <<'PY'
import random, sys
random.seed(1)
with open(sys.argv[1], "w") as f:
    f.write("PRAGMA cache_size=-2000;\n")  # sqlite's own cache: 2 MiB
    for _ in range(int(sys.argv[2])):
        f.write("BEGIN;\n")
        for _ in range(200):
            f.write(f"INSERT INTO t(k, v) VALUES ({random.randrange(10**8)}, randomblob(300));\n")
        f.write("COMMIT;\n")
    for _ in range(int(sys.argv[3])):
        f.write(f"SELECT length(v) FROM t WHERE k = {random.randrange(10**8)};\n")
PY
sync "$DB"
python3 -c "import os,sys; fd=os.open(sys.argv[1], os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)" "$DB"
echo "database: $(du -h "$DB" | cut -f1), page cache given: $CACHE"

mkdir "$CG"
case ${CACHE: -1} in K) unit=1024 ;; M) unit=$((1 << 20)) ;; G) unit=$((1 << 30)) ;; *) unit=1 ;; esac
echo $((${CACHE%[KMG]} * unit)) >"$CG/$LIMIT_FILE"
echo "sqlite3's memory cgroup: $CG/$LIMIT_FILE = $(cat "$CG/$LIMIT_FILE")"
"$IOPATH" record -o "$WORK/sqlite.trace" -- \
    sh -c 'echo $$ >"$1/cgroup.procs" && exec sqlite3 -batch "$2" ".read $3" >/dev/null' sh "$CG" "$DB" "$WORK/work.sql"
"$IOPATH" trace filter "$WORK/sqlite.trace" -o "$WORK/db.trace" --path "$DATA"
"$IOPATH" trace show "$WORK/db.trace"
"$IOPATH" run --replay "$WORK/db.trace" --dir "$MNT" --cache-limit "$CACHE" --repeat "$REPEAT"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
