#!/bin/bash
# Check the kit's kernel code with each imported base's own checkpatch.pl:
# every patch of every series (its diff, not its DEP-3 header) and compat/.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

rc=0
for dir in "$BQLKIT_TOP"/patches/*/*/; do
	series=$(basename "$dir")
	if [ -f "$dir/series" ]; then
		patches=$(grep -v '^#' "$dir/series" || true)
	elif ! compgen -G "$dir*.patch" >/dev/null; then
		# patches/<driver>/semantic/: Coccinelle, not C.
		continue
	else
		# patches/<driver>/required/: changes a series requires
		# (base.conf REQUIRES=), checked with the first requiring
		# series' base.
		patches=$(cd "$dir" && ls -- *.patch)
		series=$(grep -l "^REQUIRES=.*$series/" "$dir"/../*/base.conf | head -1)
		series=$(basename "$(dirname "$series")")
	fi
	cp=$(base_dir "$series")/scripts/checkpatch.pl
	# (A series named for what it is for, e.g. mana's 5.15-xdp: its
	# release's base.)
	[ -f "$cp" ] || cp=$(base_dir "${series%%-*}")/scripts/checkpatch.pl
	[ -f "$cp" ] || { echo "checkpatch: $dir: SKIP (no imported Linux $series base)"; continue; }
	for p in $patches; do
		if out=$(sed -n '/^--- a\//,$p' "$dir/$p" |
			perl "$cp" --no-tree --no-signoff --ignore COMMIT_MESSAGE -q - 2>&1); then
			echo "checkpatch: ${dir#"$BQLKIT_TOP"/}$p: clean"
		else
			echo "checkpatch: ${dir#"$BQLKIT_TOP"/}$p:"
			echo "$out" | sed 's/^/    /'
			rc=1
		fi
	done
	last=$cp
done
[ -n "${last:-}" ] || die "no imported base has scripts/checkpatch.pl: make import SRC=..."
if out=$(perl "$last" --no-tree -q -f "$BQLKIT_TOP"/compat/*.[ch] "$BQLKIT_TOP"/compat/probes/*.c 2>&1); then
	echo "checkpatch: compat/: clean"
else
	echo "$out" | sed 's/^/    /'
	rc=1
fi
exit $rc
