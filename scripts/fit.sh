#!/bin/bash
# Fit one driver's changes to a kernel source, by content.
#
#   fit.sh DRIVER SRC OUT
#
# SRC: the driver's files at their kernel paths (an imported base, a corpus
# fixture, a kernel tree).  OUT: created with SRC's files changed;
# OUT.changes/<patch> holds each change's diff as it got in (make export);
# OUT.fit records the outcome (one "patch NAME OUTCOME DETAIL" line per change, the
# "series" chosen, the "verdict"); the same summary goes to stdout.
#
# Every series of the driver (patches/DRIVER/*/) is a candidate.  Its
# changes are those its base.conf REQUIRES (changes the series builds on that
# its own base already has, named by their path under patches/DRIVER/: a
# source that lacks them gets them first), then its series file.  For each
# change, in order:
#   - already present: every rule the change establishes (patches/DRIVER/
#     claims, rules/DRIVER.rules) holds on SRC: skipped;
#   - half-present: some hold, some not: an error naming what is missing;
#   - applied: the patch applies with fuzz 0 (as quilt does);
#   - adapted: a 3-way merge (diff3 -m) of the series' reference files
#     before and after the change into SRC's file succeeds without
#     conflict, else wiggle merges the hunks word by word without one (the
#     hunks whose context moved are named);
#   - does not fit: the hunk, its function and why.
# The candidate with the fewest changes that do not fit, then the fewest
# adapted, then the nearest release is chosen, and its result must then
# satisfy every rule of the changes it carries and the driver's required
# BQL invariants (else it is refused).
# Environment: BQLKIT_SRCVER=X.Y.Z (SRC's release, where SRC has no top
# Makefile; make fit SRCVER=),
# FIT_SERIES=<X.Y> (only that candidate), FIT_MECHS (default
# "exact merge3 wiggle"; "exact" alone = the old fuzz-0 quilt behaviour;
# measured alternatives, in the order given: gitmerge (git merge-file),
# fuzz (patch -F2); see docs/fit.md for the measurements that chose them).
# Exit: 0 fits, 3 does not fit (nothing fits), 1 error (half-present, a
# result whose rules do not hold).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rules.sh"
. "$(dirname "$0")/adapt.sh"

[ $# -eq 3 ] || die "usage: fit.sh DRIVER SRC OUT"
drv=$1 src=$(readlink -f "$2") out=$3
mechs=${FIT_MECHS:-exact merge3 wiggle}
pd=$BQLKIT_TOP/patches/$drv
[ -d "$pd" ] || die "the kit has no driver '$drv'"
kv=$(source_version "$src") || exit 1
work=$(mktemp -d "${TMPDIR:-/tmp}/bqlkit-fit.XXXXXX")
trap 'rm -rf "$work"' EXIT

# ref_of SERIES: the directory holding the files the series was written
# against: base.conf REFERENCE=<id> of the fit corpus (tests/fixtures/
# kernels/, shipped in the DKMS tree).  Only those, so that a verdict does
# not depend on which sources a machine happens to have imported.
ref_of() {
	local r
	r=$(sed -n 's/^REFERENCE=//p' "$pd/$1/base.conf" 2>/dev/null)
	[ -z "$r" ] || [ ! -d "$BQLKIT_TOP/tests/fixtures/kernels/$r" ] || echo "$BQLKIT_TOP/tests/fixtures/kernels/$r"
}
ref_name() {
	sed -n 's/^REFERENCE=//p' "$pd/$1/base.conf" 2>/dev/null
}

# hunks PATCH: "FILE N FUNCTION" for every hunk (N counts per file, as patch(1) does).
hunks() {
	awk '/^\+\+\+ b\// { f = substr($2, 3); n = 0; next }
		/^@@ / { n++; fn = $0; sub(/^@@[^@]*@@ ?/, "", fn); sub(/\(.*/, "", fn)
			k = split(fn, w, /[^A-Za-z0-9_]+/); fn = w[k]; if (fn == "") { fn = f; sub(/.*\//, "", fn) } print f, n, fn }' "$1"
}

# facts of the source as imported: "already present" is decided on them
# (read once, when a candidate needs them).
facts0() {
	[ ! -f "$work/facts0.done" ] || return 0
	[ ! -f "$work/facts0.err" ] || return 1
	rules_facts "$drv" "$src" "$work/facts0" 2>"$work/facts0.err" || return 1
	: >"$work/facts0.done"
}
holds() { rules_eval "$drv" "$1" "$2" >/dev/null 2>&1; }

# record_change DIR PATCHFILE: DIR.changes/<its name>, the change's diff as
# it got into DIR (from $work/pre), in quilt's format.
record_change() {
	local f
	for f in $(files_of "$2"); do
		[ -f "$work/pre/$f" ] || : >"$work/pre.empty"
		diff -u -p --label "a/$f" --label "b/$f" "$( [ -f "$work/pre/$f" ] && echo "$work/pre/$f" || echo "$work/pre.empty")" "$1/$f" || true
	done >"$1.changes/$(basename "$2")"
}

# changes SERIES: "REQ PATH" for what base.conf REQUIRES (PATH under
# patches/DRIVER/), then "OWN SERIES/PATCH" for the series file's patches.
changes() {
	series_changes "$drv" "$1"
}

# try SERIES DIR: apply the candidate to a copy of SRC in DIR; outcomes in DIR.fit.
try() {
	local s=$1 dir=$2 ref p pf kind name claims held missing r f failed detail fn why how before after noref
	rm -rf "$dir" "$dir.ref"
	mkdir -p "$dir"
	cp -a "$src/." "$dir/"
	ref=$(ref_of "$s")
	if [ -n "$ref" ]; then
		mkdir -p "$dir.ref"
		cp -a "$ref/." "$dir.ref/"
	fi
	: >"$dir.fit"
	echo "series $s" >>"$dir.fit"
	rm -rf "$dir.changes"
	mkdir -p "$dir.changes"
	while read -r kind p; do
		pf=$pd/$p
		# (A required change is named by its path, e.g. 6.6/0001-...; the
		# series' own by the patch's name.)
		name=${p%.patch}
		[ "$kind" = REQ ] || name=${name#*/}
		# What the change does to this source, as it got in (for make
		# export): the files before it.
		rm -rf "$work/pre"
		mkdir -p "$work/pre"
		for f in $(files_of "$pf"); do
			[ ! -f "$dir/$f" ] || { mkdir -p "$work/pre/$(dirname "$f")"; cp "$dir/$f" "$work/pre/$f"; }
		done
		# The reference moves on with every change (it is what the next
		# change was written against); it has the required ones already.
		if [ "$kind" = OWN ] && [ -n "$ref" ] &&
			! patch -d "$dir.ref" -p1 -s -F0 -N --no-backup-if-mismatch <"$pf" >/dev/null 2>&1; then
			ref=
			rm -rf "$dir.ref" "$dir.ref.prev"
		fi
		# (The release's own series applying exactly: nothing of it is in
		# the source already, or its hunks would not apply.  What it
		# requires is looked for in any case.)
		if [ -z "$exact_own" ] || [ "$kind" = REQ ]; then
			if ! facts0; then
				[ -n "$exact_own" ] || die "$drv: cannot read what $src establishes (spatch): $(tail -1 "$work/facts0.err")"
				# Where spatch cannot run (Debian 11's coccinelle) the
				# release's own series, applying exactly, stands for
				# what it requires: its hunks' context is the required
				# change's result (the result's rules go unchecked too).
				echo "patch $name present unchecked" >>"$dir.fit"
				continue
			fi
			mapfile -t claims < <(claims_of "$drv" "$pf")
			held=() missing=()
			for r in "${claims[@]}"; do
				if holds "$work/facts0" "$r"; then held+=("$r"); else missing+=("$r"); fi
			done
			if [ ${#claims[@]} -gt 0 ] && [ ${#missing[@]} -eq 0 ]; then
				echo "patch $name present ${claims[*]}" >>"$dir.fit"
				continue
			fi
			if [ ${#held[@]} -gt 0 ]; then
				echo "patch $name half-present holds: ${held[*]}; missing: ${missing[*]}" >>"$dir.fit"
				continue
			fi
		fi
		if [[ " $mechs " == *" exact "* ]] &&
			patch -d "$dir" -p1 -s -F0 -N --dry-run <"$pf" >/dev/null 2>&1; then
			patch -d "$dir" -p1 -s -F0 -N --no-backup-if-mismatch <"$pf" >/dev/null
			echo "patch $name applied" >>"$dir.fit"
			record_change "$dir" "$pf"
			continue
		fi
		# Which hunks do not apply as they are.
		detail=$(patch -d "$dir" -p1 -F0 -N --dry-run <"$pf" 2>&1) || true
		failed=$(awk '/^checking file / { f = $3 } /^Hunk #[0-9]+ FAILED/ { sub(/#/, "", $2); print f, $2 }
			/No file to patch|can.t find file/ { print "MISSING" }' <<<"$detail")
		# Adapt it (scripts/adapt.sh): a 3-way merge needs the reference
		# before this change, which is the reference with it undone.
		how='' why='' before='' after='' noref=''
		rm -rf "$dir.ref.prev"
		if [ "$kind" = REQ ]; then
			noref="no 3-way merge for a required change (its reference is another series')"
		elif [ -z "$ref" ]; then
			noref="no reference files for series $s, so no 3-way merge"
		elif [[ " $mechs " == *" merge3 "* || " $mechs " == *" gitmerge "* ]]; then
			cp -a "$dir.ref" "$dir.ref.prev"
			patch -d "$dir.ref.prev" -p1 -s -R -F0 --no-backup-if-mismatch <"$pf" >/dev/null
			before=$dir.ref.prev after=$dir.ref
		fi
		if adapt_change "$mechs" "$dir" "$pf" "$before" "$after" "$noref" "$work"; then
			how=$ADAPT_HOW
		else
			why=$ADAPT_WHY
		fi
		if [ -n "$how" ]; then
			echo "patch $name adapted $how $(while read -r f n; do
				[ "$f" = MISSING ] && continue
				fn=$(hunks "$pf" | awk -v f="$f" -v n="$n" '$1 == f && $2 == n { print $3 }')
				printf 'hunk %s (%s) ' "$n" "$fn"
			done <<<"$failed")" >>"$dir.fit"
			record_change "$dir" "$pf"
			continue
		fi
		[ -n "$why" ] || why="no adapting mechanism (FIT_MECHS=$mechs)"
		echo "patch $name nofit $(while read -r f n; do
			if [ "$f" = MISSING ]; then printf 'a file it changes is not in this source; '; continue; fi
			fn=$(hunks "$pf" | awk -v f="$f" -v n="$n" '$1 == f && $2 == n { print $3 }')
			printf 'hunk %s (%s) does not apply; ' "$n" "$fn"
		done <<<"$failed")$why" >>"$dir.fit"
		# Later changes of this candidate build on this one: stop here.
		break
	done < <(changes "$s")
}

# series_distance S: how far release S is from the kernel's (for ties).
distance() {
	awk -v a="$(series_of "$kv")" -v b="$1" 'BEGIN { split(a, x, "."); split(b, y, ".");
		d = (x[1] * 100 + x[2]) - (y[1] * 100 + y[2]); if (d < 0) d = -d * 1.01; print d }'
}

# The series made for this kernel's release, every change applying
# exactly (fuzz 0, as quilt did): that is the kit's backport as written
# and tested, and the only candidate.  Its result is still checked by the
# rules where spatch can read them; where it cannot (an older coccinelle,
# e.g. Debian 11's 1.1.0: "Fatal error: exception Not_found"), the build
# goes on and the record says the rules were not checked.  Anything else
# (another sublevel's or a vendor's changes next to the kit's) is decided
# by content below, where the rules are required.
exact_own=
own=$(series_of "$kv")
if [ -z "${FIT_SERIES:-}" ] && [[ " $mechs " == *" exact "* ]] && [ -f "$pd/$own/series" ]; then
	rm -rf "$work/exact"
	mkdir -p "$work/exact"
	cp -a "$src/." "$work/exact/"
	exact_own=1
	while read -r p; do
		patch -d "$work/exact" -p1 -s -F0 -N --no-backup-if-mismatch <"$pd/$own/$p" >/dev/null 2>&1 || { exact_own=; break; }
	done < <(grep -v '^#' "$pd/$own/series" | grep . || true)
	rm -rf "$work/exact"
fi

cands=()
if [ -n "$exact_own" ]; then
	cands=("$own")
elif [ -n "${FIT_SERIES:-}" ]; then
	[ -f "$pd/$FIT_SERIES/series" ] || die "$drv has no series $FIT_SERIES"
	cands=("$FIT_SERIES")
else
	for s in "$pd"/*/series; do cands+=("$(basename "$(dirname "$s")")"); done
fi
ranked=()
for s in "${cands[@]}"; do
	grep -qv '^#' "$pd/$s/series" 2>/dev/null || { ranked+=("0 0 0 $(distance "$s") $s"); mkdir -p "$work/c-$s" "$work/c-$s.changes"; cp -a "$src/." "$work/c-$s/"; echo "series $s" >"$work/c-$s.fit"; continue; }
	try "$s" "$work/c-$s"
	nofit=$(grep -c '^patch [^ ]* \(nofit\|half-present\)' "$work/c-$s.fit" || true)
	total=$(changes "$s" | wc -l)
	done_=$(grep -c '^patch ' "$work/c-$s.fit" || true)
	nofit=$((nofit + total - done_))
	adapted=$(grep -c '^patch [^ ]* adapted' "$work/c-$s.fit" || true)
	present=$(grep -c '^patch [^ ]* present' "$work/c-$s.fit" || true)
	# Candidates that do not fit: the one that got furthest is the closest.
	[ "$nofit" -eq 0 ] || { adapted=0 present=0; }
	ranked+=("$nofit $adapted $present $(distance "$s") $s")
done
mapfile -t ranked < <(printf '%s\n' "${ranked[@]}" | awk '{ print ($1 > 0), $0 }' | sort -k1,1n -k3,3n -k5,5g | cut -d' ' -f2-)

# Verify candidates in rank order; the first whose result holds wins.
chosen=
unchecked=
refused=()
for line in "${ranked[@]}"; do
	read -r nofit _ _ _ s <<<"$line"
	[ "$nofit" -eq 0 ] || break
	if ! rules_facts "$drv" "$work/c-$s" "$work/facts-$s" 2>"$work/spatch.err"; then
		cat "$work/spatch.err" >&2
		[ -n "$exact_own" ] || die "$drv: spatch failed on the result"
		unchecked="the rules were not checked: $(tail -1 "$work/spatch.err")"
		chosen=$s
		break
	fi
	bad=()
	while read -r _ name _; do
		for r in $(claims_of "$drv" "$name.patch"); do
			holds "$work/facts-$s" "$r" || bad+=("$name: $r")
		done
	done < <(grep '^patch ' "$work/c-$s.fit")
	for r in $(rules_required "$drv"); do
		holds "$work/facts-$s" "$r" || bad+=("required: $r")
	done
	if [ ${#bad[@]} -eq 0 ]; then
		chosen=$s
		break
	fi
	refused+=("series $s: the result does not hold ${bad[*]}")
done

rm -rf "$out" "$out.fit" "$out.changes"
mkdir -p "$(dirname "$out")"
{
	printf 'kernel %s\nsource %s\ndriver %s\n' "$kv" "$src" "$drv"
	printf 'candidates %s\n' "$(printf '%s; ' "${ranked[@]}" | sed 's/; $//')"
} >"$out.fit"
if [ -n "$chosen" ]; then
	cp -a "$work/c-$chosen" "$out"
	rm -rf "$out.changes"
	cp -a "$work/c-$chosen.changes" "$out.changes"
	cat "$work/c-$chosen.fit" >>"$out.fit"
	ref=$(ref_of "$chosen")
	[ -z "$ref" ] || echo "reference $(ref_name "$chosen")" >>"$out.fit"
	[ -z "$unchecked" ] || echo "unchecked $unchecked" >>"$out.fit"
	if grep -q '^patch [^ ]* adapted' "$out.fit"; then v=adapted; else v=fits; fi
	echo "verdict $v" >>"$out.fit"
else
	# Report the best candidate's outcomes; a change found half present
	# by any candidate is what the user must hear about.
	best=${ranked[0]##* }
	for line in "${ranked[@]}"; do
		if grep -q '^patch [^ ]* half-present' "$work/c-${line##* }.fit" 2>/dev/null; then
			best=${line##* }
			break
		fi
	done
	[ -z "$best" ] || cat "$work/c-$best.fit" >>"$out.fit"
	if grep -q '^patch [^ ]* half-present' "$out.fit"; then
		echo "verdict half-present" >>"$out.fit"
	elif [ ${#refused[@]} -gt 0 ]; then
		echo "verdict refused ${refused[0]}" >>"$out.fit"
	else
		echo "verdict nofit" >>"$out.fit"
	fi
fi
for r in "${refused[@]}"; do echo "refused $r" >>"$out.fit"; done
# FIT_KEEP=DIR: keep every candidate's outcomes (lab/measure-fit.sh).
if [ -n "${FIT_KEEP:-}" ]; then
	mkdir -p "$FIT_KEEP"
	for s in "${cands[@]}"; do
		[ ! -f "$work/c-$s.fit" ] || cp "$work/c-$s.fit" "$FIT_KEEP/$s.fit"
		[ ! -d "$work/c-$s" ] || { rm -rf "${FIT_KEEP:?}/$s"; cp -a "$work/c-$s" "$FIT_KEEP/$s"; }
	done
fi
bash "$BQLKIT_TOP/scripts/fit-report.sh" "$out.fit"
case $(sed -n 's/^verdict \([^ ]*\).*/\1/p' "$out.fit") in
fits | adapted) exit 0 ;;
half-present | refused) exit 1 ;;
*) exit 3 ;;
esac
