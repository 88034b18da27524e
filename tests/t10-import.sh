#!/bin/bash
# Import: tarball (done by setup), unpacked tree and git tree give the same
# files; the manifest is right; bad sources fail with one clear error.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for series in $(test_kernels | while read -r k; do series_of "$(kernel_version "$(kdir_for "$k")")"; done); do
	b=$(base_dir "$series")
	v=$(manifest_get "$b" version)
	check "import-$series-manifest-version" test "$(series_of "$v")" = "$series"
	check "import-$series-manifest-package" grep -q "^package=linux-source-$series " "$b/MANIFEST"
	check "import-$series-manifest-sha256" bash -c "cd '$b' && grep '^[0-9a-f]\{64\}  ' MANIFEST | sha256sum --quiet -c -"
	check "import-$series-source-sha256" test "$(manifest_get "$b" source_sha256)" = \
		"$(sha256sum "/usr/src/linux-source-$series.tar.xz" | cut -d' ' -f1)"
done

# The same files from an unpacked tree and from a git tree.
b=$(base_dir 6.1)
mkdir -p "$tmp/tree"
(cd "$b" && tar -c --exclude=MANIFEST .) | tar -x -C "$tmp/tree"
files() { grep '^[0-9a-f]\{64\}  ' "$1/MANIFEST"; }
BQLKIT_BASES=$tmp/bases-tree "$BQLKIT_TOP/scripts/import-source.sh" "$tmp/tree" >/dev/null 2>&1
check import-from-tree diff <(files "$b") <(files "$tmp/bases-tree/6.1")
git -C "$tmp/tree" init -q && git -C "$tmp/tree" add -A &&
	git -C "$tmp/tree" -c user.name=t -c user.email=t@t commit -qm base
rm "$tmp/tree/drivers/net/veth.c" # the git import must read the commit, not the work tree
BQLKIT_BASES=$tmp/bases-git "$BQLKIT_TOP/scripts/import-source.sh" "$tmp/tree" >/dev/null 2>&1
check import-from-git diff <(files "$b") <(files "$tmp/bases-git/6.1")
check import-from-git-kind grep -q '^source_kind=git' "$tmp/bases-git/6.1/MANIFEST"

# Bad sources: one clear line, non-zero exit, the existing base untouched.
before=$(files "$b")
expect_error import-missing-source "does not exist" \
	env BQLKIT_BASES="$(dirname "$b")" "$BQLKIT_TOP/scripts/import-source.sh" /nonexistent/linux.tar.xz
head -c 4000000 /usr/src/linux-source-6.1.tar.xz >"$tmp/truncated.tar.xz"
expect_error import-truncated-tarball "cannot read" \
	env BQLKIT_BASES="$(dirname "$b")" "$BQLKIT_TOP/scripts/import-source.sh" "$tmp/truncated.tar.xz"
mkdir -p "$tmp/notkernel"
echo hello >"$tmp/notkernel/README"
expect_error import-not-a-kernel "not a kernel source" \
	env BQLKIT_BASES="$(dirname "$b")" "$BQLKIT_TOP/scripts/import-source.sh" "$tmp/notkernel"
check import-bad-input-leaves-base test "$before" = "$(files "$b")"

# A driver absent from a release (mana before 5.13) leaves the base
# without it; a driver with only some of its files is a broken tree.
rm -rf "$tmp/nomana"
mkdir -p "$tmp/nomana"
(cd "$b" && tar -c --exclude=MANIFEST --exclude='drivers/net/ethernet/microsoft' --exclude='include/net/mana' .) |
	tar -x -C "$tmp/nomana"
out=$(BQLKIT_BASES=$tmp/bases-nomana "$BQLKIT_TOP/scripts/import-source.sh" "$tmp/nomana" 2>&1) || true
has import-absent-driver-noted "mana is not in Linux" "$out"
check import-absent-driver-manifest bash -c "grep -qx 'absent=mana' '$tmp/bases-nomana/6.1/MANIFEST' &&
	grep -qx 'drivers=veth mvneta' '$tmp/bases-nomana/6.1/MANIFEST'"
rm "$tmp/nomana/drivers/net/ethernet/marvell/mvneta_bm.h"
expect_error import-partial-driver "lacks mvneta:drivers/net/ethernet/marvell/mvneta_bm.h" \
	env BQLKIT_BASES="$tmp/bases-nomana" "$BQLKIT_TOP/scripts/import-source.sh" "$tmp/nomana"
