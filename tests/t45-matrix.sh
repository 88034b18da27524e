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
	"$BQLKIT_TOP/lab/matrix.sh" '^bookworm-(6\.1|6\.12)(-arm64)?$|^bookworm-6\.1-armmp$' >"$tmp/out" 2>&1 || rc=$?
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
	timeout 15 "$BQLKIT_TOP/lab/matrix.sh" '^trixie-6\.12$' >"$tmp/held.out" 2>&1 || rc=$?
exec {hold}>&-
check matrix-chroot-waits test "$rc" -eq 124
has matrix-chroot-says-waiting "waiting for the other runs that use the trixie chroot" "$(cat "$tmp/held.out")"
check matrix-chroot-left-alone test -e "$fake/trixie-amd64/.ready" -a -e "$fake/trixie-amd64.tar"

# A chroot being made when the run is interrupted (Ctrl-C: SIGINT to its
# process group): nothing half made stays, so nothing incomplete is taken
# for a chroot later.  mmdebstrap is a stand-in that writes part of the
# tarball and works on; both callers of the one chroot maker
# (lab/chroot-lib.sh): make matrix's, the suite's.
mkdir -p "$tmp/stub"
cat >"$tmp/stub/mmdebstrap" <<'EOS'
#!/bin/bash
for a; do case $a in *.tmp) echo partial >"$a" ;; esac; done
: >"$STUB_STARTED"
sleep 60
EOS
chmod +x "$tmp/stub/mmdebstrap"
# interrupt NAME CMD...: CMD in a process group of its own, SIGINT to the
# group once the stand-in mmdebstrap runs; NAME-exit-130.  (perl restores
# SIGINT's default: a job of a script inherits it ignored.)
interrupt() {
	local name=$1 pid rc=0 _
	shift
	rm -f "$tmp/started"
	# shellcheck disable=SC2016 # perl's $SIG
	STUB_STARTED=$tmp/started PATH=$tmp/stub:$PATH \
		setsid perl -e '$SIG{INT} = "DEFAULT"; exec @ARGV or die' "$@" >"$tmp/$name.out" 2>&1 &
	pid=$!
	for _ in $(seq 600); do [ -e "$tmp/started" ] && break; sleep 0.1; done
	kill -INT -- "-$pid" 2>/dev/null || true
	wait "$pid" || rc=$?
	check "$name-exit-130" test "$rc" -eq 130
}
c=$tmp/cache-int/chroots
interrupt sigint-matrix-chroot env BQLKIT_CACHE="$tmp/cache-int" MATRIX_RESULTS="$tmp/int" BQLKIT_BUILD="$tmp/build-int" \
	"$BQLKIT_TOP/lab/matrix.sh" '^trixie-6\.12$'
lacks sigint-matrix-chroot-nothing-half-made . "$(cd "$c" && ls -d trixie-amd64.tar trixie-amd64.tar.tmp trixie-amd64.tar.packages trixie-amd64 2>/dev/null)"
# The suite's chroot (tests/chroot.sh), its 5.10 headers taken from this
# machine's cache when there.
cd2=$tmp/chroot-int
mkdir -p "$cd2"
[ ! -d "$BQLKIT_CACHE/chroot/debs-5.10" ] || cp -a "$BQLKIT_CACHE/chroot/debs-5.10" "$cd2/"
# shellcheck disable=SC2016 # the inner bash's $1
interrupt sigint-suite-chroot env BQLKIT_CHROOT_DIR="$cd2" \
	bash -c '. "$1/tests/lib.sh" && . "$1/tests/chroot.sh" && chroot_tarball' _ "$BQLKIT_TOP"
lacks sigint-suite-chroot-nothing-half-made . "$(cd "$cd2" && ls -d bookworm-kit.tar* bookworm-kit.packages debs-5.10.tmp 2>/dev/null)"
