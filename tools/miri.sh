#!/usr/bin/env bash
# The pure modules of iopath-io under Miri (undefined behaviour, aliasing,
# leaks): the buffer pool and its slot books (buf.rs), data generation
# (data.rs), the --verify header and checksum (verify.rs), NUMA masks and
# lists (numa.rs), ucache's CLOCK, shard split and node maps, and uffd's
# write-back runs. Tests in these modules that make system calls Miri cannot
# emulate are #[cfg_attr(miri, ignore)] (the count is printed); everything
# else in the crate does I/O and is not run. docs/testing.md has the result.
#
# Needs a nightly toolchain with Miri:
#   rustup toolchain install nightly --component miri
# Usage: tools/miri.sh [extra test-binary args, e.g. --nocapture]
set -euo pipefail
cd "$(dirname "$0")/.."

if ! RUSTUP_AUTO_INSTALL=0 cargo +nightly miri --version >/dev/null 2>&1; then
    echo "tools/miri.sh: Miri is not installed (cargo +nightly miri --version fails); install it with: rustup toolchain install nightly --component miri" >&2
    exit 2
fi

# Test-name filters (libtest: a test runs when its path contains one).
FILTERS=(
    buf::tests::
    data::tests::
    verify::tests::
    numa::tests::
    engines::ucache::tests::clock_
    engines::ucache::tests::pages_map_to_shards
    engines::ucache::tests::geometry_is_described_and_checked
    engines::ucache::tests::sizes_read_plainly
    engines::ucache::tests::write_modes_follow_the_sync_policy
    engines::ucache::tests::node_lists_merge_in_order
    engines::uffd::tests::runs_join_neighbours
    engines::uffd::tests::ioctl_numbers_match_the_kernel_headers
    engines::uffd::tests::reasons_name_the_cause_and_the_fix
)

# Miri's default aliasing model (Stacked Borrows); MIRIFLAGS=-Zmiri-tree-borrows
# checks under Tree Borrows instead.
export MIRIFLAGS="${MIRIFLAGS-}"
echo "== cargo +nightly miri test -p iopath-io --lib (MIRIFLAGS=$MIRIFLAGS)"
start=$(date +%s)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
cargo +nightly miri test -p iopath-io --lib -- "${FILTERS[@]}" "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
echo "== Miri: exit $rc in $(( $(date +%s) - start )) s"
# Every filter must have matched a test that ran: a renamed test must not
# drop out of the set unnoticed.
for f in "${FILTERS[@]}"; do
    if ! grep -q "^test .*${f}.* \.\.\. ok$" "$log"; then
        echo "tools/miri.sh: no test matching '$f' ran and passed under Miri" >&2
        rc=1
    fi
done
exit "$rc"
