#!/bin/bash
# Write the per-base quilt series, patches/<driver>/<X.Y>/, from the one
# copy of each change in changes/<driver>/ (docs/design.md, "One copy of
# each change").
#
#   gen-series.sh [--out DIR] [DRIVER[/X.Y]...]     (make series)
#   gen-series.sh --deltas [DRIVER[/X.Y]...]
#
# changes/<driver>/ holds:
#   NNNN-<name>.patch         each change once: its DEP-3 header and its
#                             diff against the newest base that takes it;
#   bases/<X.Y>/series        the changes base X.Y takes, in order, as its
#                             series names them (NNNN: the place in that
#                             series; the change is found by <name>);
#   bases/<X.Y>/base.conf     copied as is (REFERENCE=, REQUIRES=: fit.sh);
#   bases/<X.Y>/source        "fixture <id>": where no Linux X.Y base is
#                             imported, generate against tests/fixtures/
#                             kernels/<id>; "hand-kept": not generated;
#   delta/<X.Y>/<name>.patch  what base X.Y needs that the change, as
#                             fitted to it, lacks: a diff of the DEP-3
#                             header (the file "DEP-3") and of the code,
#                             applied exactly (fuzz 0) on the fitted change.
# Each base, newest first, starts from its imported files (build/bases/X.Y,
# $BQLKIT_BASES).  Each change in turn is fitted to it by content, file by
# file: applied (patch -F0), else adapted as scripts/fit.sh adapts
# (scripts/adapt.sh: a 3-way merge, then wiggle) from the change as the
# next newer base that takes it has it, else that 3-way merge with its
# conflicts marked (<<<<<<< base ... >>>>>>> change), which the delta must
# resolve; then the delta.  Each patch is the difference between
# consecutive snapshots under the change's DEP-3 header (with the delta's
# part), refreshed with scripts/quiltrc as `make drift` refreshes.  The
# newest base that takes a change has no code delta: the change applies to
# it, or, where an edit of an earlier change moved its context, is merged
# (3-way) from how the committed series there has it; its canonical patch
# is then refreshed in place (as quilt refreshes a patch).
#
# --out DIR: write DIR/<driver>/<X.Y>/ instead of patches/, and leave the
# canonical patches alone (exit 1 if one needs a refresh): tests/t21.
# --deltas: the other way round: rewrite changes/<driver>/delta/<X.Y>/ from
# the series in patches/ (edited there, with quilt), so that generation
# gives them back.  The canonical patches and base lists stay as they are.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/adapt.sh"

out=$BQLKIT_TOP/patches
mode=gen
while [ $# -gt 0 ]; do
	case $1 in
	--out)
		[ $# -ge 2 ] || die "gen-series.sh: --out needs a directory"
		mkdir -p "$2"
		out=$(readlink -f "$2")
		mode=check
		shift 2
		;;
	--deltas) mode=deltas; shift ;;
	-*) die "gen-series.sh: unknown option $1" ;;
	*) break ;;
	esac
done
only=("$@")
ch=$BQLKIT_TOP/changes
[ -d "$ch" ] || die "no changes/ in $BQLKIT_TOP"
for o in "${only[@]}"; do
	[ -d "$ch/${o%%/*}/bases" ] || die "changes/ has no driver '${o%%/*}' ($(cd "$ch" && echo */ | tr -d /))"
	[[ $o != */* ]] || [ -d "$ch/${o%%/*}/bases/${o#*/}" ] || die "changes/${o%%/*}/bases/ has no base '${o#*/}'"
done
work=$(mktemp -d "${TMPDIR:-/tmp}/bqlkit-gen.XXXXXX")
trap 'rm -rf "$work"' EXIT
q=(quilt --quiltrc "$BQLKIT_TOP/scripts/quiltrc")
stale=0

# entries FILE: the patch names of a series file.
entries() {
	[ ! -f "$1" ] || grep -v '^#' "$1" | grep . || true
}
# name_of PATCH-NAME: the change's name (NNNN- and .patch dropped).
name_of() {
	local n=${1#[0-9][0-9][0-9][0-9]-}
	echo "${n%.patch}"
}
# header PATCH: its DEP-3 header, up to its "---" line.  body PATCH: its diff.
header() {
	awk '/^--- a\// { exit } { print }' "$1"
}
body() {
	awk '/^--- a\// { on = 1 } on' "$1"
}
# canon NAME: the canonical patch of a change of $drv.
canon() {
	local c=("$ch/$drv"/[0-9][0-9][0-9][0-9]-"$1".patch)
	if [ ${#c[@]} -ne 1 ] || [ ! -f "${c[0]}" ]; then
		die "changes/$drv: no single canonical patch NNNN-$1.patch"
	fi
	echo "${c[0]}"
}
# source_of X.Y: the files base X.Y of $drv starts from: the imported base,
# else the fixture its source file names; "hand-kept"; or nothing.
source_of() {
	local s=$ch/$drv/bases/$1/source b kind id
	b=$(base_dir "$1")
	read -r kind id < <(grep -v '^#' "$s" 2>/dev/null | grep . || true) || true
	if [ "${kind:-}" = hand-kept ]; then
		echo hand-kept
	elif [ -f "$b/MANIFEST" ]; then
		echo "$b"
	elif [ "${kind:-}" = fixture ] && [ -d "$BQLKIT_TOP/tests/fixtures/kernels/${id:-}" ]; then
		echo "$BQLKIT_TOP/tests/fixtures/kernels/$id"
	fi
}
# bases: the bases of $drv, newest first.
bases() {
	local b
	for b in "$ch/$drv/bases"/*/; do
		b=${b%/}
		[ ! -d "$b" ] || echo "${b##*/}"
	done | sort -rV
}
# ref_of X.Y NAME: the next newer base of $drv that takes the change.
ref_of() {
	local b e r=''
	for b in $(bases); do
		[ "$b" != "$1" ] || break
		for e in $(entries "$ch/$drv/bases/$b/series"); do
			[ "$(name_of "$e")" != "$2" ] || r=$b
		done
	done
	echo "$r"
}
# snap TREE DIR FILE...: copy the FILEs TREE has into DIR.
snap() {
	local t=$1 d=$2 f
	shift 2
	mkdir -p "$d"
	for f in "$@"; do
		[ -f "$t/$f" ] || continue
		mkdir -p "$d/$(dirname "$f")"
		cp "$t/$f" "$d/$f"
	done
}
# delta_files DELTA: the code files a delta changes (not its "DEP-3").
delta_files() {
	files_of "$1" | grep -vx DEP-3 || true
}
# udiff DIR-A DIR-B FILE: FILE's diff from A to B, as quilt writes it.
udiff() {
	local a=$1/$3 b=$2/$3
	[ -f "$a" ] || a=/dev/null
	[ -f "$b" ] || b=/dev/null
	diff -u -p --label "a/$3" --label "b/$3" "$a" "$b" || true
}
# want X.Y: $drv/X.Y was asked for (everything, when nothing was).
want() {
	local o
	[ ${#only[@]} -gt 0 ] || return 0
	for o in "${only[@]}"; do
		[ "$o" != "$drv" ] && [ "$o" != "$drv/$1" ] || return 0
	done
	return 1
}

# fit_file TREE CANON FILE REF: fit CANON's change of FILE into TREE, by
# content: applied (patch -F0), else adapted from how REF (the next newer
# base that takes it) has it: a 3-way merge, else wiggle (scripts/adapt.sh,
# as scripts/fit.sh); else the 3-way merge with its conflicts marked, for
# the base's delta to resolve.  On the change's own base (no REF) an edit
# of an earlier change may have moved its context: it is merged (3-way)
# from how the committed series had it, and refreshed.  Prints how.
fit_file() {
	local tree=$1 pf=$2 f=$3 ref=$4 one=$work/one.patch before after
	patch_of_file "$pf" "$f" >"$one"
	if patch -d "$tree" -p1 -s -F0 -N --dry-run <"$one" >/dev/null 2>&1; then
		patch -d "$tree" -p1 -s -F0 -N --no-backup-if-mismatch <"$one" >/dev/null
		echo applied
		return 0
	fi
	mkdir -p "$work/adapt"
	if [ -z "$ref" ]; then
		before=$work/$drv/$base/prev/$name.before after=$work/$drv/$base/prev/$name.after
		if [ -f "$after/$f" ] &&
			adapt_change "merge3" "$tree" "$one" "$before" "$after" "" "$work/adapt"; then
			echo "merge3 from patches/$drv/$base"
			return 0
		fi
		die "$drv/$base: ${pf#"$BQLKIT_TOP"/} does not apply to $f of Linux $base, the base it is written against${ADAPT_WHY:+, nor merge with the committed series: $ADAPT_WHY}"
	fi
	before=$work/$drv/$ref/$name.before after=$work/$drv/$ref/$name.after
	if adapt_change "merge3 wiggle" "$tree" "$one" "$before" "$after" "" "$work/adapt"; then
		echo "$ADAPT_HOW"
		return 0
	fi
	if [ ! -f "$before/$f" ] || [ ! -f "$after/$f" ]; then
		die "$drv/$base: $name: $f: $ADAPT_WHY, and $ref has no $f to merge with"
	fi
	diff3 -m -E -L base -L "$ref before" -L change "$tree/$f" "$before/$f" "$after/$f" >"$work/merged" || true
	cp "$work/merged" "$tree/$f"
	echo conflict
}

# committed_snaps SRC: the files of each change of $drv/$base as the
# committed series in patches/ has them, before and after it
# ($w/prev/<name>.before, .after), as far as it applies.
committed_snaps() {
	local t=$w/prev/tree p n fs
	mkdir -p "$t"
	(cd "$1" && tar -c --exclude=MANIFEST .) | tar -x -C "$t"
	for p in $(entries "$BQLKIT_TOP/patches/$drv/$base/series"); do
		n=$(name_of "$p")
		mapfile -t fs < <(files_of "$BQLKIT_TOP/patches/$drv/$base/$p")
		snap "$t" "$w/prev/$n.before" "${fs[@]}"
		patch -d "$t" -p1 -s -F0 --no-backup-if-mismatch <"$BQLKIT_TOP/patches/$drv/$base/$p" >/dev/null 2>&1 || break
		snap "$t" "$w/prev/$n.after" "${fs[@]}"
	done
	rm -rf "$t"
}

# refresh SRC PDIR: quilt push and refresh every patch of PDIR on a copy of
# SRC, as make drift does; fails on fuzz or offsets.
refresh() {
	local t=$work/refresh p out
	rm -rf "$t"
	mkdir -p "$t"
	(cd "$1" && tar -c --exclude=MANIFEST .) | tar -x -C "$t"
	for p in $(entries "$2/series"); do
		out=$(cd "$t" && QUILT_PATCHES=$2 "${q[@]}" push 2>&1) ||
			die "$drv/$base: $p does not apply once generated:"$'\n'"$out"
		! grep -q 'offset\|fuzz' <<<"$out" || die "$drv/$base: $p applies with offsets or fuzz once generated: $out"
		(cd "$t" && QUILT_PATCHES=$2 "${q[@]}" refresh >/dev/null)
	done
}

# gen_base: generate $drv/$base into $work/$drv/$base/patches; with
# --deltas, write its deltas from the series in patches/ instead.
gen_base() {
	local bdir=$ch/$drv/bases/$base w src tree p pf delta files f how hows=() ref d committed
	w=$work/$drv/$base
	src=$(source_of "$base")
	if [ "$src" = hand-kept ]; then
		echo "gen-series: $drv/$base: hand-kept, not generated (changes/$drv/bases/$base/source)"
		return 0
	fi
	[ -f "$bdir/series" ] || die "changes/$drv/bases/$base has no series"
	mkdir -p "$w/patches"
	cp "$bdir/series" "$w/patches/series"
	[ ! -f "$bdir/base.conf" ] || cp "$bdir/base.conf" "$w/base.conf"
	if [ -z "$(entries "$bdir/series")" ]; then
		want "$base" && echo "gen-series: $drv/$base: empty series"
		return 0
	fi
	if [ -z "$src" ]; then
		echo "gen-series: $drv/$base: SKIP: no Linux $base base imported (make import SRC=...): patches/$drv/$base stays as it is"
		rm -rf "$w"
		return 0
	fi
	tree=$w/tree
	mkdir -p "$tree"
	(cd "$src" && tar -c --exclude=MANIFEST .) | tar -x -C "$tree"
	[ "$mode" = deltas ] || committed_snaps "$src"
	if [ "$mode" = deltas ]; then
		committed=$w/committed
		cp -a "$tree" "$committed"
		mkdir -p "$w/delta"
	fi
	for p in $(entries "$bdir/series"); do
		name=$(name_of "$p")
		pf=$(canon "$name")
		delta=$ch/$drv/delta/$base/$name.patch
		[ "$mode" != deltas ] && [ -f "$delta" ] || delta=/dev/null
		ref=$(ref_of "$base" "$name")
		if [ -n "$ref" ] && [ ! -d "$work/$drv/$ref/$name.after" ]; then
			echo "gen-series: $drv/$base: SKIP: its $name is fitted from the $ref base's, which was not generated: patches/$drv/$base stays as it is"
			rm -rf "$w"
			return 0
		fi
		mapfile -t files < <({
			files_of "$pf"
			[ "$mode" != deltas ] || files_of "$BQLKIT_TOP/patches/$drv/$base/$p"
			delta_files "$delta"
		} | awk '!seen[$0]++')
		snap "$tree" "$w/$name.before" "${files[@]}"
		how=
		for f in $(files_of "$pf"); do
			if [ -f "$tree/$f" ]; then
				how+=" $(basename "$f"):$(fit_file "$tree" "$pf" "$f" "$ref")"
			else
				how+=" $(basename "$f"):absent"
			fi
		done
		if [ "$mode" = deltas ]; then
			# The delta: from the change as fitted to the committed patch.
			patch -d "$committed" -p1 -s -F0 --no-backup-if-mismatch <"$BQLKIT_TOP/patches/$drv/$base/$p" >/dev/null ||
				die "$drv/$base: $p does not apply to its base (make drift)"
			header "$pf" >"$w/canon.hdr"
			header "$BQLKIT_TOP/patches/$drv/$base/$p" >"$w/committed.hdr"
			{
				diff -u --label a/DEP-3 --label b/DEP-3 "$w/canon.hdr" "$w/committed.hdr" || true
				for f in "${files[@]}"; do udiff "$tree" "$committed" "$f"; done
			} >"$w/delta.body"
			if [ -s "$w/delta.body" ]; then
				[ -n "$ref" ] || [ -z "$(delta_files "$w/delta.body")" ] ||
					die "$drv/$base: $p differs in its code from changes/$drv/${pf##*/}, which is written against this base: make them one"
				{
					echo "Delta: $name on the $base base"
					cat "$w/delta.body"
				} >"$w/delta/$name.patch"
			fi
			for f in "${files[@]}"; do
				if [ -f "$committed/$f" ]; then cp "$committed/$f" "$tree/$f"; else rm -f "$tree/$f"; fi
			done
		elif [ -n "$(delta_files "$delta")" ]; then
			[ -n "$ref" ] || die "$drv/$base: changes/$drv/${pf##*/} is written against this base: change it, not changes/$drv/delta/$base/$name.patch"
			for f in $(delta_files "$delta"); do patch_of_file "$delta" "$f"; done >"$work/delta.code"
			patch -d "$tree" -p1 -s -F0 -N --no-backup-if-mismatch <"$work/delta.code" >/dev/null ||
				die "$drv/$base: changes/$drv/delta/$base/$name.patch does not apply (fuzz 0) to $name as fitted from $ref"
			how+=" +delta"
		fi
		for f in "${files[@]}"; do
			[ -f "$tree/$f" ] || continue
			! grep -q '^<<<<<<< base$' "$tree/$f" ||
				die "$drv/$base: $name: $f: the 3-way merge from $ref conflicts where changes/$drv/delta/$base/$name.patch does not resolve it (resolve it there, or in patches/$drv/$base with quilt and run gen-series.sh --deltas)"
		done
		snap "$tree" "$w/$name.after" "${files[@]}"
		# The patch: the DEP-3 header (the delta's part applied) and the diff.
		rm -rf "$w/hdr"
		mkdir -p "$w/hdr"
		header "$pf" >"$w/hdr/DEP-3"
		if files_of "$delta" | grep -qx DEP-3; then
			patch_of_file "$delta" DEP-3 | patch -d "$w/hdr" -p1 -s -F0 --no-backup-if-mismatch >/dev/null ||
				die "$drv/$base: the DEP-3 part of changes/$drv/delta/$base/$name.patch does not apply to the header of changes/$drv/${pf##*/}"
		fi
		{
			cat "$w/hdr/DEP-3"
			for f in "${files[@]}"; do udiff "$w/$name.before" "$w/$name.after" "$f"; done
		} >"$w/patches/$p"
		hows+=("${p%%-*}${how:+ (${how# })}")
	done
	want "$base" || return 0
	if [ "$mode" = deltas ]; then
		rm -rf "$ch/$drv/delta/$base"
		if [ -n "$(ls -A "$w/delta")" ]; then
			mkdir -p "$ch/$drv/delta"
			cp -a "$w/delta" "$ch/$drv/delta/$base"
		fi
		rmdir "$ch/$drv/delta" 2>/dev/null || true
		echo "gen-series: $drv/$base: deltas: $(cd "$w/delta" && echo ./* | sed 's|\./||g; s|\*|none|')"
		return 0
	fi
	refresh "$src" "$w/patches"
	echo "gen-series: $drv/$base: $(printf '%s; ' "${hows[@]}" | sed 's/; $//')"
}

# refresh_canon: each canonical patch is its newest base's, refreshed.
refresh_canon() {
	local b p name pf
	for b in $(bases); do
		[ -d "$work/$drv/$b/patches" ] || continue
		for p in $(entries "$work/$drv/$b/patches/series"); do
			name=$(name_of "$p")
			[ -z "$(ref_of "$b" "$name")" ] || continue
			pf=$(canon "$name")
			cmp -s <(body "$pf") <(body "$work/$drv/$b/patches/$p") && continue
			if [ "$mode" = check ]; then
				echo "gen-series: ${pf#"$BQLKIT_TOP"/} is not as the $b base refreshes it (make series refreshes it)"
				stale=1
				continue
			fi
			{ header "$pf"; body "$work/$drv/$b/patches/$p"; } >"$work/canon.new"
			cp "$work/canon.new" "$pf"
			echo "gen-series: refreshed ${pf#"$BQLKIT_TOP"/} against the $b base"
		done
	done
}

# write_out: the generated series of $drv into $out/$drv/<X.Y>/.
write_out() {
	local b w t f
	for b in $(bases); do
		w=$work/$drv/$b
		if [ ! -d "$w/patches" ] || ! want "$b"; then continue; fi
		t=$out/$drv/$b
		mkdir -p "$t"
		for f in "$t"/*; do
			[ -e "$f" ] || continue
			case ${f##*/} in
			series | base.conf) ;;
			*) [ -f "$w/patches/${f##*/}" ] || rm -f "$f" ;;
			esac
		done
		for f in $(entries "$w/patches/series") series; do
			cmp -s "$w/patches/$f" "$t/$f" || cp "$w/patches/$f" "$t/$f"
		done
		if [ -f "$w/base.conf" ]; then
			cmp -s "$w/base.conf" "$t/base.conf" || cp "$w/base.conf" "$t/base.conf"
		else
			rm -f "$t/base.conf"
		fi
	done
}

for d in "$ch"/*/bases; do
	drv=$(basename "$(dirname "$d")")
	if [ ${#only[@]} -gt 0 ]; then
		printf '%s\n' "${only[@]}" | grep -q "^$drv\(/\|$\)" || continue
	fi
	# Every base is generated (older ones are fitted from newer ones);
	# what was asked for is written.
	for base in $(bases); do
		gen_base
	done
	[ "$mode" = deltas ] && continue
	refresh_canon
	write_out
done
exit $stale
