#!/bin/bash
# Print a fit record (OUT.fit of scripts/fit.sh) for people: per change
# applied / adapted (how, which hunks) / already present (which rule) /
# does not fit (hunk, function, why), and the driver's verdict.
#
#   fit-report.sh FIT...        (--short: one line per driver, for modinfo)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rules.sh"
# --modinfo: every change's outcome on one line (the module's bqlkit_fit).
short=''
modinfo=''
case ${1:-} in
--short) short=1; shift ;;
--modinfo) modinfo=1; shift ;;
esac
for f in "$@"; do
	drv=$(sed -n 's/^driver //p' "$f")
	kv=$(sed -n 's/^kernel //p' "$f")
	s=$(sed -n 's/^series //p' "$f")
	v=$(sed -n 's/^verdict //p' "$f")
	if [ -n "$modinfo" ]; then
		grep '^patch ' "$f" | while read -r _ name outcome rest; do
			rest=$(tr -d '"\\' <<<"$rest" | sed 's/ *$//; s/hunk /h/g')
			case $outcome in
			adapted) printf '%s=adapted(%s); ' "${name%%-*}" "$rest" ;;
			present) printf '%s=present(%s); ' "${name%%-*}" "$rest" ;;
			*) printf '%s=%s; ' "${name%%-*}" "$outcome" ;;
			esac
		done | sed 's/; $//'
		echo
		continue
	fi
	if [ -n "$short" ]; then
		# fit=series:6.12,applied:2,adapted:1,present:1
		printf 'series:%s' "$s"
		for o in applied adapted present; do
			printf ',%s:%s' "$o" "$(grep -c "^patch [^ ]* $o" "$f" || true)"
		done
		echo
		continue
	fi
	echo "bqlkit fit: $drv on Linux $kv ($(sed -n 's/^source //p' "$f"))"
	case $v in
	fits | adapted) echo "  reference series $s$(sed -n 's/^reference \(.*\)/, written against \1/p' "$f")" ;;
	*) echo "  closest series $s ($(sed -n 's/^progress \([0-9]*\) [0-9]* [0-9]* \([0-9]*\)/\1 of its \2 changes got in; /p' "$f")outcomes below)" ;;
	esac
	while read -r _ name outcome rest; do
		case $outcome in
		applied) msg="applied" ;;
		adapted)
			case $rest in
			merge3* | gitmerge*) msg="adapted: 3-way merge with the reference files (${rest#* }) — the context of these hunks moved; the change is the same" ;;
			wiggle*) msg="adapted: wiggle merged the hunks word by word (${rest#* }) — their context moved; re-proved by the rules" ;;
			*) msg="adapted: ${rest%% *} (${rest#* })" ;;
			esac
			;;
		present)
			if [ "$rest" = unchecked ]; then
				msg="already present, not checked (spatch cannot run here): the series of this release applies exactly, on the context this change leaves"
			else
				msg="already present: $(for r in $rest; do printf '%s ("%s") ' "$r" "$(rules_statement "$drv" "$r")"; done)"
			fi
			;;
		half-present)
			msg="ERROR half-present: ${rest%%; missing:*}; missing: $(for r in ${rest#*missing: }; do printf '%s ("%s") ' "$r" "$(rules_statement "$drv" "$r")"; done)"
			;;
		nofit) msg="does not fit: $rest" ;;
		*) msg="$outcome $rest" ;;
		esac
		printf '  %-58s %s\n' "$name" "$msg"
	done < <(grep '^patch ' "$f")
	grep '^semantic ' "$f" | while read -r _ name file cocci; do
		printf '  %-58s %s\n' "$name" "its ${file##*/} part by the semantic patch $cocci (whatever that file's context)"
	done || true
	# (Candidates refused before the chosen one, or after the one the
	# verdict names, were tried: only the verdict is the outcome.)
	grep '^refused ' "$f" | if [ "${v%% *}" = refused ]; then sed 1d; else cat; fi |
		sed 's/^refused series \([^ :]*\): /  tried series \1, not chosen: /' || true
	grep '^note ' "$f" | sed 's/^note /  note: /' || true
	grep '^hint ' "$f" | sed 's/^hint /  with files this source lacks: /' || true
	grep '^unchecked ' "$f" | sed 's/^unchecked /  note: the series of this release applied exactly; /' || true
	case $v in
	fits)
		if grep -q '^unchecked ' "$f"; then
			echo "  verdict: $drv FITS (the series made for Linux $s, every change applied exactly; its rules could not be checked here, see the note)"
		else
			echo "  verdict: $drv FITS (every change applied or already present; its rules hold on the result)"
		fi
		;;
	adapted) echo "  verdict: $drv FITS, ADAPTED (the rules of every change and the BQL invariants hold on the result; a build also re-proves it compiles, adds no sparse warning and keeps the ABI)" ;;
	half-present) echo "  verdict: $drv DOES NOT FIT: a change is only half present in this source (above): finish or revert it in the source, or ask the kit's maintainers" ;;
	refused*) echo "  verdict: $drv DOES NOT FIT: ${v#refused }" ;;
	*) echo "  verdict: $drv DOES NOT FIT (no series of the kit fits this source: above, the closest one)" ;;
	esac
done
