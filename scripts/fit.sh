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
#   - does not fit: the hunk, its function and why; a file it edits that
#     SRC lacks is absent, with what the change does there.
# The candidate with the fewest changes that do not fit, then the fewest
# adapted, then the nearest release is chosen, and its result must then
# satisfy every rule of the changes it carries and the driver's required
# BQL invariants (else it is refused: what would be wrong, and the fix).
# Where nothing fits, the closest is the one that got furthest, and what
# files SRC lacks would unlock is said (tried with the reference's copies).
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
# A release older than the driver (driver.conf SINCE=): these files are a
# vendor's backport or not that tree's.  Said plainly; the fit goes by
# their content as for any other source.
since=$(sed -n 's/^SINCE=//p' "$BQLKIT_TOP/drivers/$drv/driver.conf" 2>/dev/null)
note=
[ -z "$since" ] || version_ge "$kv" "$since" ||
	note="Linux $kv has no $drv (it came upstream in $since): these $drv files are a backport or not from that tree; fitted by their content alone (make fit KDIR=<that kernel's tree> proves they build there)"
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

# hunks PATCH [DIR...]: "FILE N WHERE" for every hunk (N counts per file,
# as patch(1) does).  WHERE is the function (struct, initialised variable)
# the hunk's first change is in, "after F" where that comes after F's end,
# "top of FILE" before any.  The hunk's header names the last line above it
# that starts a line with a letter, cut at 40 characters: a label ("out:")
# or a cut name ("mana_features_c") is resolved in the file itself, the
# first of DIR/FILE there is.
hunks() {
	local pf=$1
	shift
	awk -v dirs="$(printf '%s\n' "$@")" '
		# defname L: what a line at column 0 begins the definition of, or "".
		function defname(l,   w, n) {
			if (l !~ /^[A-Za-z_]/ || l ~ /^[A-Za-z_][A-Za-z0-9_]*:/ || l ~ /;[ \t]*$/) return ""
			if (l !~ /=/ && match(l, /(struct|union|enum)[ \t]+[A-Za-z0-9_]+[ \t]*\{/)) {
				l = substr(l, RSTART, RLENGTH); sub(/[ \t]*\{$/, "", l); gsub(/[ \t]+/, " ", l); return l
			}
			if (l ~ /=/ && l !~ /\(/) { sub(/[ \t]*(\[[^]]*\])*[ \t]*=.*/, "", l); n = split(l, w, /[^A-Za-z0-9_]+/); return w[n] }
			if (l !~ /\(/) return ""
			sub(/\(.*/, "", l); n = split(l, w, /[^A-Za-z0-9_]+/)
			return w[n] ~ /^(if|for|while|switch|return|sizeof)$/ ? "" : w[n]
		}
		# load F: the lines of F in the first directory that has it (nl[F] lines).
		function load(f,   i, d, line, k) {
			if (f in nl) return
			nl[f] = 0
			for (i = 1; i <= nd; i++) {
				if (dir[i] == "") continue
				k = 0
				while ((getline line < (dir[i] "/" f)) > 0) fl[f, ++k] = line
				close(dir[i] "/" f)
				if (k > 0) { nl[f] = k; return }
			}
		}
		# complete F PREFIX: the first name F defines that starts with PREFIX.
		function complete(f, p,   i, d) {
			load(f)
			for (i = 1; i <= nl[f]; i++) { d = defname(fl[f, i]); if (d != "" && index(d, p) == 1) return d }
			return p "..."
		}
		# labelled F LABEL: the function of F with LABEL whose body after it
		# holds the hunk'"'"'s leading old lines (ctx[1..nc]), else the first with it.
		function labelled(f, lab,   i, j, cur, d, first, ok) {
			load(f); cur = ""; first = ""
			for (i = 1; i <= nl[f]; i++) {
				d = defname(fl[f, i]); if (d != "" && fl[f, i] ~ /\(/) cur = d
				if (index(fl[f, i], lab ":") != 1 || cur == "") continue
				if (first == "") first = cur
				for (j = i + 1; j <= nl[f] && fl[f, j] !~ /^[A-Za-z_}]/; j++) {
					ok = 1
					for (k = 1; k <= nc && ok; k++) if (fl[f, j + k - 1] != ctx[k]) ok = 0
					if (ok && nc > 0) return cur
				}
			}
			return first != "" ? first : "label " lab ":"
		}
		function emit(   w) {
			if (!inhunk) return
			if (hdr ~ /^[A-Za-z_][A-Za-z0-9_]*:/) { sub(/:.*/, "", hdr); fn = labelled(file, hdr) }
			w = fn == "" ? "top of " base : (after ? "after " fn : fn)
			print file, n, w
			inhunk = 0
		}
		BEGIN { nd = split(dirs, dir, "\n") }
		/^\+\+\+ b\// { emit(); file = substr($2, 3); base = file; sub(/.*\//, "", base); n = 0; next }
		/^--- / && !inhunk { next }
		/^@@ / {
			emit()
			n++; inhunk = 1; changed = 0; after = 0; nc = 0
			hdr = $0; sub(/^@@[^@]*@@ ?/, "", hdr)
			fn = defname(hdr)
			if (fn == "" && hdr !~ /^[A-Za-z_][A-Za-z0-9_]*:/ && hdr != "") {
				if (length(hdr) >= 40) { k = split(hdr, w, /[^A-Za-z0-9_]+/); fn = complete(file, w[k]) } else fn = hdr
			}
			next
		}
		inhunk && !changed && /^ / {
			t = substr($0, 2); ctx[++nc] = t
			d = defname(t); if (d != "") { fn = d; after = 0; hdr = "" } else if (t ~ /^}/) after = 1
			next
		}
		inhunk && !changed && /^[-+]/ {
			changed = 1
			if (/^-/) { d = defname(substr($0, 2)); if (d != "") { fn = d; after = 0; hdr = "" } }
			next
		}
		/^(diff|index) / { emit() }
		END { emit() }' "$pf"
}

# where_hunks PATCH FAILED DIR...: for each "FILE N" line of FAILED, one
# line "hunk N (WHERE)", "hunk N of FILE (WHERE)" where PATCH changes
# several files (hunks PATCH DIR...).
where_hunks() {
	local pf=$1 failed=$2 multi=
	shift 2
	[ "$(files_of "$pf" | wc -l)" -le 1 ] || multi=1
	hunks "$pf" "$@" | awk -v failed="$failed" -v multi="$multi" '
		BEGIN { n = split(failed, l, "\n"); for (i = 1; i <= n; i++) if (l[i] != "") want[l[i]] = i }
		{ k = $1 " " $2; if (!(k in want)) next
			w = $0; sub(/^[^ ]* [^ ]* /, "", w); f = $1; sub(/.*\//, "", f)
			out[want[k]] = "hunk " $2 (multi ? " of " f : "") " (" w ")" }
		END { for (i = 1; i <= n; i++) if (i in out) print out[i] }'
}

# facts0 SRC FACTS: the facts of a source as imported: "already present"
# is decided on them (read once, when a candidate needs them).
facts0() {
	[ ! -f "$2.done" ] || return 0
	[ ! -f "$2.err" ] || return 1
	rules_facts "$drv" "$1" "$2" 2>"$2.err" || return 1
	: >"$2.done"
}
holds() { rules_eval "$drv" "$1" "$2" >/dev/null 2>&1; }

# record_change DIR PATCHFILE: DIR.changes/<its name>, the change's diff as
# it got into DIR (from $work/pre), in quilt's format.
record_change() {
	local f
	for f in $(files_of "$2") ${3:-}; do
		[ -f "$work/pre/$f" ] || : >"$work/pre.empty"
		diff -u -p --label "a/$f" --label "b/$f" "$( [ -f "$work/pre/$f" ] && echo "$work/pre/$f" || echo "$work/pre.empty")" "$1/$f" || true
	done >"$1.changes/$(basename "$2")"
}

# changes SERIES: "REQ PATH" for what base.conf REQUIRES (PATH under
# patches/DRIVER/), then "OWN SERIES/PATCH" for the series file's patches.
changes() {
	series_changes "$drv" "$1"
}

# absent_detail DIR PATCH F...: "absent: F, which this change edits (WHERE)"
# for each F (of PATCH's files, not in DIR), and where the source has a file
# of that name elsewhere (mana's headers beside its .c files, before 6.2),
# that it is there.
absent_detail() {
	local dir=$1 pf=$2 f w o
	shift 2
	for f in "$@"; do
		w=$(where_hunks "$pf" "$(hunks "$pf" | awk -v f="$f" '$1 == f { print $1, $2 }')" "$dir.ref" "$(ref_dir_of_patch "$pf")" |
			sed 's/^hunk [0-9]*\( of [^ ]*\)\? (\(.*\))$/\2/' | awk '!seen[$0]++' | paste -sd, - | sed 's/,/, /g')
		o=$(cd "$dir" && find . -name "$(basename "$f")" -type f -printf '%P\n' | head -1)
		[ -z "$o" ] || o="; this source's $(basename "$f") is $o (another layout)"
		printf 'absent: %s, which this change edits (%s)%s; ' "$f" "$w" "$o"
	done
}

# ref_dir_of_patch PATCH: the reference files of the series PATCH is in (for
# naming where its hunks are), or nothing.
ref_dir_of_patch() {
	local s
	s=$(basename "$(dirname "$1")")
	[ ! -f "$pd/$s/series" ] || ref_of "$s"
}

# Header layouts (drivers/<driver>/driver.conf HEADERS_MOVED=NEW:OLD, e.g.
# mana's headers moved from drivers/net/ethernet/microsoft/mana/ to
# include/net/mana/ in 6.2, fd325cd648f1; vendors' 5.15 trees have either):
# a change is kept once, with the paths of the series it is in, and is
# fitted to the layout the source has.
moved=$(sed -n 's/^HEADERS_MOVED=//p' "$BQLKIT_TOP/drivers/$drv/driver.conf" 2>/dev/null)
# other_layout F DIR: F's path in the other layout, where DIR lacks F and has
# it there; else nothing.
other_layout() {
	local f=$1 d=$2 new=${moved%%:*} old=${moved#*:} o=
	[ -n "$moved" ] && [ ! -f "$d/$f" ] || return 0
	case $f in
	"$new"/*.h) o=$old/${f#"$new"/} ;;
	"$old"/*.h) o=$new/${f#"$old"/} ;;
	esac
	[ -z "$o" ] || [ ! -f "$d/$o" ] || echo "$o"
}
# layout_patch PATCH DIR SERIES: PATCH with its header paths in DIR's layout
# (a copy under $work/layout/SERIES/, so that its series can still be told
# from its directory), or PATCH itself.
layout_patch() {
	local pf=$1 d=$2 f o sedx=()
	for f in $(files_of "$pf"); do
		o=$(other_layout "$f" "$d")
		[ -z "$o" ] || sedx+=(-e "s|^--- a/$f\$|--- a/$o|" -e "s|^+++ b/$f\$|+++ b/$o|")
	done
	if [ ${#sedx[@]} -eq 0 ]; then
		echo "$pf"
		return 0
	fi
	mkdir -p "$work/layout/$3"
	sed "${sedx[@]}" "$pf" >"$work/layout/$3/$(basename "$pf")"
	echo "$work/layout/$3/$(basename "$pf")"
}
# layout_ref REF DIR: move REF's headers into DIR's layout.
layout_ref() {
	local f o
	[ -n "$moved" ] || return 0
	while read -r f; do
		o=$(other_layout "$f" "$2")
		[ -z "$o" ] || { mkdir -p "$1/$(dirname "$o")"; mv "$1/$f" "$1/$o"; }
	done < <(cd "$1" && find . -name '*.h' -type f -printf '%P\n')
}

# Semantic patches (patches/DRIVER/semantic/<change>.cocci, docs/fit.md):
# the part of a change in one file, by what it does rather than by its
# context, for files vendors' copies of differ in.  Its header names the
# file and function: "// bqlkit-semantic: file=F function=FN".  It stands
# for the change's hunks of F in a series whose patch edits F, or whose
# base.conf names it (SEMANTIC=<change>: a series whose reference lacks F).
# sem_of NAME SERIES: the semantic patch that applies, or nothing.
sem_of() {
	local n=${1##*/} c f
	n=${n#[0-9][0-9][0-9][0-9]-}
	c=$pd/semantic/$n.cocci
	[ -f "$c" ] || return 0
	f=$(sem_field "$c" file)
	if grep -q "^SEMANTIC=.*\b$n\b" "$pd/$2/base.conf" 2>/dev/null || files_of "$pd/${1%/*}/$(basename "$1").patch" 2>/dev/null | grep -qx "$f"; then
		echo "$c"
	fi
}
sem_field() {
	sed -n "s|^// bqlkit-semantic:.* $2=\\([^ ]*\\).*|\\1|p" "$1" | head -1
}
# without_file PATCH F OUT: PATCH without its hunks of F.
without_file() {
	local f
	for f in $(files_of "$1"); do
		[ "$f" = "$2" ] || patch_of_file "$1" "$f"
	done >"$3"
}

# try SERIES DIR [SRC]: apply the candidate to a copy of SRC (default: the
# source fitted) in DIR; outcomes in DIR.fit.
try() {
	local s=$1 dir=$2 tsrc=${3:-$src} f0=$work/facts0 ref p pf kind name claims held missing r f failed detail why how before after noref absent sem semf semfn
	[ "$tsrc" = "$src" ] || f0=$work/facts0-$(basename "$dir")
	rm -rf "$dir" "$dir.ref"
	mkdir -p "$dir"
	cp -a "$tsrc/." "$dir/"
	ref=$(ref_of "$s")
	if [ -n "$ref" ]; then
		mkdir -p "$dir.ref"
		cp -a "$ref/." "$dir.ref/"
		layout_ref "$dir.ref" "$dir"
	fi
	: >"$dir.fit"
	echo "series $s" >>"$dir.fit"
	rm -rf "$dir.changes"
	mkdir -p "$dir.changes"
	while read -r kind p; do
		# (In the source's header layout.)
		pf=$(layout_patch "$pd/$p" "$dir" "$s")
		# (A required change is named by its path, e.g. 6.6/0001-...; the
		# series' own by the patch's name.)
		name=${p%.patch}
		[ "$kind" = REQ ] || name=${name#*/}
		# Its semantic patch, if it has one here: the file it edits.
		sem=$(sem_of "${p%.patch}" "$s") semf='' semfn=''
		[ -z "$sem" ] || { semf=$(sem_field "$sem" file); semfn=$(sem_field "$sem" function); }
		# What the change does to this source, as it got in (for make
		# export): the files before it.
		rm -rf "$work/pre"
		mkdir -p "$work/pre"
		for f in $(files_of "$pf") $semf; do
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
			if ! facts0 "$tsrc" "$f0"; then
				[ -n "$exact_own" ] || die "$drv: cannot read what $src establishes (spatch): $(tail -1 "$f0.err")"
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
				if holds "$f0" "$r"; then held+=("$r"); else missing+=("$r"); fi
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
		# A file it changes is not in this source: not a conflict, a file
		# to supply (what for: the hunks it would take).
		absent=()
		for f in $(files_of "$pf"); do [ -f "$dir/$f" ] || absent+=("$f"); done
		if [ -n "$semf" ] && [ ! -f "$dir/$semf" ] && ! files_of "$pf" | grep -qx "$semf"; then
			echo "patch $name nofit absent: $semf, which this change edits ($semfn(), by the semantic patch ${sem#"$BQLKIT_TOP"/})" >>"$dir.fit"
			break
		fi
		if [ ${#absent[@]} -gt 0 ]; then
			echo "patch $name nofit $(absent_detail "$dir" "$pf" "${absent[@]}" | sed 's/; $//')" >>"$dir.fit"
			break
		fi
		# The semantic patch's file first (whatever its context), then
		# the rest of the change as any change.
		if [ -n "$semf" ]; then
			rm -f "$work/sem.out"
			if ! HOME=${HOME:-/root} spatch --very-quiet --no-includes --sp-file "$sem" "$dir/$semf" -o "$work/sem.out" >/dev/null 2>"$work/sem.err" ||
				[ ! -s "$work/sem.out" ] || cmp -s "$work/sem.out" "$dir/$semf"; then
				echo "patch $name nofit the semantic patch ${sem#"$BQLKIT_TOP"/} changes nothing in $semf (it changes the call of mana_start_xmit() in $semfn(); $(tail -1 "$work/sem.err" 2>/dev/null || true))" >>"$dir.fit"
				break
			fi
			cp "$work/sem.out" "$dir/$semf"
			mkdir -p "$work/sem/$s"
			without_file "$pf" "$semf" "$work/sem/$s/$(basename "$pf")"
			pf=$work/sem/$s/$(basename "$pf")
			echo "semantic $name $semf ${sem#"$BQLKIT_TOP"/}" >>"$dir.fit"
		fi
		if [[ " $mechs " == *" exact "* ]] &&
			patch -d "$dir" -p1 -s -F0 -N --dry-run <"$pf" >/dev/null 2>&1; then
			patch -d "$dir" -p1 -s -F0 -N --no-backup-if-mismatch <"$pf" >/dev/null
			echo "patch $name applied" >>"$dir.fit"
			record_change "$dir" "$pf" "$semf"
			continue
		fi
		# Which hunks do not apply as they are.
		detail=$(patch -d "$dir" -p1 -F0 -N --dry-run <"$pf" 2>&1) || true
		failed=$(awk '/^checking file / { f = $3 } /^Hunk #[0-9]+ FAILED/ { sub(/#/, "", $2); print f, $2 }' <<<"$detail")
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
		# (Where the hunks are: in the files the change was written
		# against, else in this source's.)
		if [ -n "$how" ]; then
			echo "patch $name adapted $how $(where_hunks "$pf" "$failed" "$dir.ref.prev" "$dir.ref" "$work/pre" | paste -sd, - | sed 's/,/, /g')" >>"$dir.fit"
			record_change "$dir" "$pf" "$semf"
			continue
		fi
		[ -n "$why" ] || why="no adapting mechanism (FIT_MECHS=$mechs)"
		echo "patch $name nofit $(where_hunks "$pf" "$failed" "$dir.ref.prev" "$dir.ref" "$work/pre" | sed 's/$/ does not apply; /' | tr -d '\n')$why" >>"$dir.fit"
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
# progress FIT: "GOT PUT RULES" of a candidate's outcomes: how many of its
# changes got in (applied, adapted, already present), how many of those it
# put in (applied, adapted), and how many rules those establish.
progress() {
	local got=0 put=0 nr=0 name outcome
	while read -r _ name outcome _; do
		got=$((got + 1))
		[ "$outcome" != present ] || continue
		put=$((put + 1))
		nr=$((nr + $(claims_of "$drv" "$name.patch" | wc -l)))
	done < <(grep '^patch [^ ]* \(applied\|adapted\|present\)' "$1")
	echo "$got $put $nr"
}

# result_bad DIR FIT FACTS: "RULE CHANGE" for each rule of a change in FIT
# that does not hold on DIR, "RULE required" for each required one; 1 when
# spatch cannot read DIR (its error in FACTS.err).
result_bad() {
	local name r
	rules_facts "$drv" "$1" "$3" 2>"$3.err" || return 1
	while read -r _ name _; do
		for r in $(claims_of "$drv" "$name.patch"); do
			holds "$3" "$r" || echo "$r $name"
		done
	done < <(grep '^patch ' "$2")
	for r in $(rules_required "$drv"); do
		holds "$3" "$r" || echo "$r required"
	done
}

# refusal SERIES BAD: why the candidate's result is refused, for people:
# per rule of BAD (result_bad's lines), what would be wrong and what would
# fix it (rules/DRIVER.rules).
refusal() {
	local s=$1 r of text='' why
	for r in $(awk '!seen[$1]++ { print $1 }' <<<"$2"); do
		of=$(awk -v r="$r" '$1 == r && $2 != "required" { print $2 }' <<<"$2" | paste -sd, - | sed 's/,/, /g')
		why=$(rules_broken "$drv" "$r")
		[ -n "$why" ] || why="it would not hold: $(rules_statement "$drv" "$r")"
		if [ -n "$of" ]; then of="of $of"; else of="a BQL invariant every result must hold"; fi
		text+="${text:+; and }$r ($of): $why"
	done
	echo "series $s: its result breaks $text"
}

ranked=()
for s in "${cands[@]}"; do
	grep -qv '^#' "$pd/$s/series" 2>/dev/null || { ranked+=("0 0 0 0 0 $(distance "$s") $s"); mkdir -p "$work/c-$s" "$work/c-$s.changes"; cp -a "$src/." "$work/c-$s/"; echo "series $s" >"$work/c-$s.fit"; continue; }
	try "$s" "$work/c-$s"
	nofit=$(grep -c '^patch [^ ]* \(nofit\|half-present\)' "$work/c-$s.fit" || true)
	total=$(changes "$s" | wc -l)
	done_=$(grep -c '^patch ' "$work/c-$s.fit" || true)
	nofit=$((nofit + total - done_))
	adapted=$(grep -c '^patch [^ ]* adapted' "$work/c-$s.fit" || true)
	present=$(grep -c '^patch [^ ]* present' "$work/c-$s.fit" || true)
	read -r _ put nrules < <(progress "$work/c-$s.fit")
	# Candidates that fit: the fewest adapted, then the nearest release.
	# Those that do not: the one that got furthest is the closest (the
	# most rules established by the changes it put in, then the most
	# changes put in, then the nearest release).  (A change already
	# present does not count: it is there for every series alike, and an
	# upstream fix in every later source, 151e887d8ff9, would otherwise
	# favour whichever series carries it.)
	if [ "$nofit" -eq 0 ]; then put=0 nrules=0; else adapted=0 present=0; fi
	ranked+=("$nofit $adapted $present $put $nrules $(distance "$s") $s")
done
mapfile -t ranked < <(printf '%s\n' "${ranked[@]}" | awk '{ print ($1 > 0), $0 }' |
	sort -k1,1n -k3,3n -k6,6nr -k5,5nr -k7,7g | cut -d' ' -f2-)

# Verify candidates in rank order; the first whose result holds wins.
chosen=
unchecked=
refused=()
for line in "${ranked[@]}"; do
	read -r nofit _ _ _ _ _ s <<<"$line"
	[ "$nofit" -eq 0 ] || break
	if ! bad=$(result_bad "$work/c-$s" "$work/c-$s.fit" "$work/facts-$s"); then
		cat "$work/facts-$s.err" >&2
		[ -n "$exact_own" ] || die "$drv: spatch failed on the result"
		unchecked="the rules were not checked: $(tail -1 "$work/facts-$s.err")"
		chosen=$s
		break
	fi
	if [ -z "$bad" ]; then
		chosen=$s
		break
	fi
	refused+=("$(refusal "$s" "$bad")")
done

# Nothing fits: what would files the source lacks unlock?  Each candidate
# that stopped at a file absent here is tried again on the source with its
# series' reference copies of every file its changes edit that the source
# lacks (a hint: this source's own copies may differ).  Per set of files,
# the two closest such candidates at most (each try costs seconds), and of
# them the one that gets furthest: fits, else refused, else the most
# changes in, if more than without them.
hints=()
if [ -z "$chosen" ]; then
	declare -A hint_score=() hint_text=() hint_tries=()
	for line in "${ranked[@]}"; do
		s=${line##* }
		grep -q '^patch [^ ]* nofit absent: ' "$work/c-$s.fit" 2>/dev/null || continue
		ref=$(ref_of "$s")
		[ -n "$ref" ] || continue
		# (The files its changes and their semantic patches edit, in
		# this source's header layout.)
		mapfile -t lack < <(changes "$s" | while read -r _ p; do
			files_of "$pd/$p"
			c=$(sem_of "${p%.patch}" "$s")
			[ -z "$c" ] || sem_field "$c" file
		done | awk '!seen[$0]++' |
			while read -r f; do [ -f "$src/$f" ] || [ -n "$(other_layout "$f" "$src")" ] || echo "$f"; done)
		[ ${#lack[@]} -gt 0 ] || continue
		key="${lack[*]}"
		[ "${hint_score[$key]:-0}" -lt 3000 ] && [ "${hint_tries[$key]:-0}" -lt 2 ] || continue
		hint_tries[$key]=$((${hint_tries[$key]:-0} + 1))
		h=$work/h-$s
		rm -rf "$h.src"
		cp -a "$src" "$h.src"
		# (A file the reference lacks, as 5.15-xdp's lacks the mana_bpf.c
		# its semantic patch edits: the nearest other series' copy.)
		from=$(ref_name "$s")
		for f in "${lack[@]}"; do
			c=$ref/$f
			if [ ! -f "$c" ]; then
				c=
				for o in "${ranked[@]}"; do
					o=$(ref_of "${o##* }")
					[ -z "$o" ] || [ ! -f "$o/$f" ] || { c=$o/$f from=${o##*/}; break; }
				done
				[ -n "$c" ] || continue 2
			fi
			mkdir -p "$h.src/$(dirname "$f")"
			cp "$c" "$h.src/$f"
		done
		try "$s" "$h" "$h.src"
		read -r got _ < <(progress "$h.fit")
		total=$(changes "$s" | wc -l)
		files=$(printf '%s\n' "${lack[@]}" | sed '$!s/$/,/' | paste -sd' ' - | sed 's/,\([^,]*\)$/ and\1/')
		with="with $from's cop$([ ${#lack[@]} -eq 1 ] && echo y || echo ies)"
		if [ "$got" -eq "$total" ] && bad=$(result_bad "$h" "$h.fit" "$h.facts"); then
			if [ -z "$bad" ]; then
				score=3000 text="series $s would fit given $files (absent here): $with it does, every rule holding; supply this source's own and run make fit again"
			else
				score=2000 text="given $files (absent here), series $s gets every change in ($with), but $(refusal "$s" "$bad" | sed 's/^series [^ ]*: //')"
			fi
		else
			read -r got0 _ < <(progress "$work/c-$s.fit")
			[ "$got" -gt "$got0" ] || continue
			score=$((1000 + got)) text="given $files (absent here), series $s gets $got of its $total changes in ($with), then $(grep -m1 '^patch [^ ]* \(nofit\|half-present\)' "$h.fit" | cut -d' ' -f2) does not fit"
		fi
		if [ "$score" -gt "${hint_score[$key]:-0}" ]; then
			hint_score[$key]=$score
			hint_text[$key]=$text
		fi
	done
	while IFS= read -r key; do
		[ -z "$key" ] || hints+=("${hint_text[$key]}")
	done < <(printf '%s\n' "${!hint_score[@]}" | sort)
fi

rm -rf "$out" "$out.fit" "$out.changes"
mkdir -p "$(dirname "$out")"
{
	printf 'kernel %s\nsource %s\ndriver %s\n' "$kv" "$src" "$drv"
	printf 'candidates %s\n' "$(printf '%s; ' "${ranked[@]}" | sed 's/; $//')"
	[ -z "$note" ] || echo "note $note"
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
	echo "progress $(progress "$work/c-$best.fit") $(changes "$best" | wc -l)" >>"$out.fit"
	if grep -q '^patch [^ ]* half-present' "$out.fit"; then
		echo "verdict half-present" >>"$out.fit"
	elif [ ${#refused[@]} -gt 0 ]; then
		echo "verdict refused ${refused[0]}" >>"$out.fit"
	else
		echo "verdict nofit" >>"$out.fit"
	fi
fi
# Candidates tried and refused before the chosen one (or after the first,
# which the verdict names).
for r in "${refused[@]}"; do echo "refused $r" >>"$out.fit"; done
for r in "${hints[@]}"; do echo "hint $r" >>"$out.fit"; done
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
