#!/bin/bash
# Does a patched module directory add sparse warnings to the unpatched one?
#
#   check-sparse.sh KDIR PATCHED UNPATCHED COMPAT_CONFIG_DIR [MAKE_VAR=...]
#
# Both are Kbuild directories staged the same way (scripts/build.sh); each
# is checked with sparse (C=2).  Warnings are compared as file:message (line
# numbers move).  Prints the counts; exit 1 naming the first new warning.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ $# -ge 4 ] || die "usage: check-sparse.sh KDIR PATCHED UNPATCHED COMPAT_CONFIG_DIR [MAKE_VAR=...]"
kdir=$1 new=$2 old=$3 cfg=$4
shift 4
command -v sparse >/dev/null || die "sparse is not installed (apt-get install sparse): an adapted result cannot be checked"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sp() { # DIR MAKE_VAR... -> sorted file:message lines
	local d=$1
	shift
	rm -rf "$tmp/d"
	cp -a "$d" "$tmp/d"
	(cd "$tmp/d" && rm -f -- *.o *.ko .*.cmd *.mod *.mod.c Module.symvers modules.order)
	# (MAKEFLAGS cleared: under an outer "make -s" kbuild would print no
	# CHECK line, and sparse's run could not be told from no run.)
	MAKEFLAGS='' make -C "$kdir" M="$tmp/d" BQLKIT_COMPAT="$BQLKIT_TOP/compat" BQLKIT_CONFIG="$cfg" \
		KBUILD_MODPOST_WARN=1 C=2 "$@" -j"$(nproc)" modules >"$tmp/sp.log" 2>&1 || true
	grep -q '^ *CHECK ' "$tmp/sp.log" || die "sparse did not run on $d: $(tail -1 "$tmp/sp.log")"
	grep -E '^/.*: (warning|error):' "$tmp/sp.log" | sed -E 's,^.*/,,; s/:[0-9]+:[0-9]+:/:/' | LC_ALL=C sort || true
}
sp "$new" "$@" >"$tmp/new"
sp "$old" "$@" >"$tmp/old"
added=$(comm -13 "$tmp/old" "$tmp/new")
if [ -n "$added" ]; then
	echo "sparse: $(wc -l <<<"$added") new warning(s), first: $(head -1 <<<"$added")"
	exit 1
fi
echo "sparse: nothing new ($(wc -l <"$tmp/new") warning(s) patched, $(wc -l <"$tmp/old") unpatched)"
