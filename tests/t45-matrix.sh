#!/bin/bash
# A small build matrix, so CI catches a breakage: the native bookworm
# kernels (6.1, 6.12) on amd64 and arm64 (cross), and 6.1 on armhf (cross:
# the armhf compiler and a modpost built for the target), every driver.  The full
# matrix (chroots for trixie, sid, bullseye; cloud and rt flavours; armhf) is
# `make matrix`, on demand.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

rc=0
# The imported bases, read before BQLKIT_BUILD is redirected below (bash
# expands prefix assignments left to right, each seeing the previous ones).
bases=$(dirname "$(base_dir x)")
MATRIX_RESULTS=$tmp BQLKIT_BUILD=$tmp/build BQLKIT_BASES=$bases \
	"$BQLKIT_TOP/scripts/matrix.sh" '^bookworm-(6\.1|6\.12)(-arm64)?$|^bookworm-6\.1-armmp$' >"$tmp/out" 2>&1 || rc=$?
if [ ! -f "$tmp/matrix.json" ]; then
	fail matrix-small-ran "no results/matrix.json (exit $rc): $(tail -1 "$tmp/out")"
	exit 0
fi
check matrix-small-md test -s "$tmp/matrix.md"
python3 - "$tmp/matrix.json" <<'EOF2'
import json, sys
doc = json.load(open(sys.argv[1]))
for r in doc["rows"]:
    for d, c in r["cells"].items():
        name = f"matrix-{r['id']}-{d}"
        if c["status"] == "ok":
            print(f"PASS {name}")
        elif c["status"] == "skip":
            print(f"SKIP {name}: {c['detail']}")
        else:
            print(f"FAIL {name}: {c['detail']}")
EOF2
check matrix-small-exit-status test "$rc" -eq 0

# Chroots shared by runs at once (make bench beside make check): a run that
# must replace a chroot waits while another run holds it, and deletes
# nothing meanwhile.  A stand-in cache: a trixie chroot made with another
# package list (so the run must replace it), held shared by this test.
fake=$tmp/cache/chroots
mkdir -p "$fake/trixie-amd64"
touch "$fake/trixie-amd64/.ready" "$fake/trixie-amd64.tar"
echo 'another list' >"$fake/trixie-amd64.tar.packages"
exec {hold}>>"$fake/trixie-amd64.lock"
flock -s "$hold"
rc=0
BQLKIT_CACHE=$tmp/cache MATRIX_RESULTS=$tmp/held BQLKIT_BUILD=$tmp/build-held \
	timeout 15 "$BQLKIT_TOP/scripts/matrix.sh" '^trixie-6\.12$' >"$tmp/held.out" 2>&1 || rc=$?
exec {hold}>&-
check matrix-chroot-waits test "$rc" -eq 124
has matrix-chroot-says-waiting "waiting for the other runs that use the trixie chroot" "$(cat "$tmp/held.out")"
check matrix-chroot-left-alone test -e "$fake/trixie-amd64/.ready" -a -e "$fake/trixie-amd64.tar"
