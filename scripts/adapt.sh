# shellcheck shell=bash disable=SC2034 # ADAPT_HOW and ADAPT_WHY are for the caller
# Putting one change into a source whose context moved: the adapting
# mechanisms of scripts/fit.sh (docs/fit.md "Per change"), which
# scripts/gen-series.sh uses too, to carry a canonical change to each base.
# Sourced.

# files_of PATCH: the files PATCH changes.
files_of() {
	sed -n 's/^+++ b\///p' "$1"
}

# adapt_change MECHS DIR PATCH REF_BEFORE REF_AFTER NOREF WORK: put the
# change PATCH makes into DIR's files with the first mechanism of MECHS
# that takes it without a conflict ("exact", patch -F0, is the caller's:
# it is tried first and names the hunks that do not apply; it is skipped
# here):
#   merge3, gitmerge: a 3-way merge (diff3 -m; git merge-file) into each of
#     DIR's files of the reference files before and after the change
#     (directories REF_BEFORE and REF_AFTER; both empty: there are none,
#     and NOREF says why);
#   fuzz: patch -F2 (measured, not a default: it can apply a hunk in the
#     wrong place);
#   wiggle: wiggle's word-wise merge of the hunks, per file.
# WORK: a scratch directory.  0: DIR holds the result, ADAPT_HOW names the
# mechanism.  1: DIR is unchanged, ADAPT_WHY says why each mechanism failed.
adapt_change() {
	local mechs=$1 dir=$2 pf=$3 before=$4 after=$5 noref=$6 work=$7 m f cf
	ADAPT_HOW='' ADAPT_WHY=''
	for m in $mechs; do
		case $m in
		exact) ;;
		merge3 | gitmerge)
			if [ -z "$before" ]; then
				ADAPT_WHY="${ADAPT_WHY:+$ADAPT_WHY; }$noref"
				continue
			fi
			cf=
			for f in $(files_of "$pf"); do
				if [ ! -f "$dir/$f" ]; then cf="$f (not in this source)"; break; fi
				if [ "$m" = merge3 ]; then
					diff3 -m "$dir/$f" "$before/$f" "$after/$f" >"$work/merged" 2>/dev/null || cf=$f
				else
					git merge-file -p "$dir/$f" "$before/$f" "$after/$f" >"$work/merged" 2>/dev/null || cf=$f
				fi
				if [ -n "$cf" ]; then
					cf="$f:$(grep -n '^<<<<<<<' "$work/merged" | head -1 | cut -d: -f1)"
					break
				fi
				cp "$work/merged" "$work/merged.$(echo "$f" | tr / _)"
			done
			if [ -z "$cf" ]; then
				adapt_take_merged "$dir" "$pf" "$work"
				ADAPT_HOW=$m
				return 0
			fi
			ADAPT_WHY="${ADAPT_WHY:+$ADAPT_WHY; }3-way merge conflict at $cf"
			;;
		fuzz)
			if patch -d "$dir" -p1 -s -F2 -N --dry-run <"$pf" >/dev/null 2>&1; then
				patch -d "$dir" -p1 -s -F2 -N --no-backup-if-mismatch <"$pf" >/dev/null
				ADAPT_HOW=fuzz
				return 0
			fi
			ADAPT_WHY="${ADAPT_WHY:+$ADAPT_WHY; }fuzz 2 does not apply it"
			;;
		wiggle)
			if ! command -v wiggle >/dev/null; then
				ADAPT_WHY="${ADAPT_WHY:+$ADAPT_WHY; }wiggle is not installed (apt-get install wiggle)"
				continue
			fi
			cf=
			for f in $(files_of "$pf"); do
				[ -f "$dir/$f" ] || { cf=$f; break; }
				patch_of_file "$pf" "$f" >"$work/one.patch"
				# (-r keeps the original as wig.c.porig and will not
				# overwrite an earlier one: a second candidate's
				# wiggle would fail.)
				rm -f "$work/wig.c" "$work/wig.c.porig"
				cp "$dir/$f" "$work/wig.c"
				wiggle -r "$work/wig.c" "$work/one.patch" >/dev/null 2>&1 || { cf=$f; break; }
				cp "$work/wig.c" "$work/merged.$(echo "$f" | tr / _)"
			done
			if [ -z "$cf" ]; then
				adapt_take_merged "$dir" "$pf" "$work"
				ADAPT_HOW=wiggle
				return 0
			fi
			ADAPT_WHY="${ADAPT_WHY:+$ADAPT_WHY; }wiggle conflict in $cf"
			;;
		esac
	done
	return 1
}

# adapt_take_merged DIR PATCH WORK: the merged files of PATCH (WORK/merged.*) into DIR.
adapt_take_merged() {
	local f
	for f in $(files_of "$2"); do
		cp "$3/merged.$(echo "$f" | tr / _)" "$1/$f"
	done
}

# patch_of_file PATCH FILE: the part of PATCH that changes FILE.
patch_of_file() {
	awk -v f="$2" '/^--- / { on = 0 } /^--- a\// { on = (substr($2, 3) == f) } on' "$1"
}
