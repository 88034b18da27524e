# shellcheck shell=bash
# What a driver's source establishes: facts (Coccinelle rules/<driver>.cocci
# plus a call graph and function definitions read from the text) and the
# rules of rules/<driver>.rules evaluated on them.  Source it (after lib.sh).
#
#   rules_facts DRIVER TREE OUT     facts of TREE's driver files into OUT
#   rules_eval DRIVER FACTS RULE    0 when RULE holds
#   rules_statement DRIVER RULE     the rule's statement, for people
#   rules_broken DRIVER RULE        what would be wrong where it does not
#                                   hold, and what would fix it, for people
#   rules_required DRIVER           the rules every result must satisfy
#   claims_of DRIVER PATCH          the rules a patch establishes
#                                   (patches/<driver>/claims), or nothing

# The driver's C files in a tree (import paths of drivers/<driver>/import.list).
rules_sources() {
	local tree=$1 drv=$2 p
	while read -r p; do
		case $p in *.c) (cd "$tree" && compgen -G "$p" || true) ;; esac
	done < <(grep -v '^[[:space:]]*\(#\|$\)' "$BQLKIT_TOP/drivers/$drv/import.list" | tr '|' '\n')
}

rules_facts() {
	local drv=$1 tree=$2 out=$3 files=() f key cache
	mapfile -t files < <(rules_sources "$tree" "$drv")
	[ ${#files[@]} -gt 0 ] || { : >"$out"; return 0; }
	# spatch sees the files as one group (calls across files).
	mkdir -p "$out.d"
	for f in "${files[@]}"; do cp "$tree/$f" "$out.d/"; done
	: >"$out.cocci"
	if [ -f "$BQLKIT_TOP/rules/$drv.cocci" ]; then
		command -v spatch >/dev/null || { echo "coccinelle is not installed (apt-get install coccinelle): cannot check what the $drv changes establish" >&2; return 1; }
		# spatch's findings for the same files, rules and spatch are
		# kept in BQLKIT_CACHE (a build, the fit of its result, the
		# next build or clone of the same source ask again; spatch
		# takes 1-4 s).  Where it is not writable (a user's make
		# build), nothing is kept.
		key=$({
			cat "$BQLKIT_TOP/rules/$drv.cocci"
			stat -L -c '%n %s %Y' "$(command -v spatch)"
			for f in "${files[@]}"; do echo "== $(basename "$f")"; cat "$tree/$f"; done
		} | sha256sum | cut -c1-40)
		cache=$BQLKIT_CACHE/spatch-facts
		if [ -f "$cache/$key" ]; then
			cp "$cache/$key" "$out.cocci"
		else
			# spatch needs HOME ("Fatal error: exception Not_found"
			# without it), which a DKMS build started from a hook may
			# not have.
			HOME=${HOME:-/root} spatch --very-quiet --no-includes --sp-file "$BQLKIT_TOP/rules/$drv.cocci" --dir "$out.d" >"$out.cocci" 2>"$out.err" ||
				{ echo "spatch failed on $drv: $(tail -1 "$out.err")" >&2; return 1; }
			if mkdir -p "$cache" 2>/dev/null && cp "$out.cocci" "$cache/$key.$$" 2>/dev/null; then
				mv -f "$cache/$key.$$" "$cache/$key"
			fi
		fi
	fi
	{
		sort -u "$out.cocci"
		# Function definitions and their calls: "FACT defines F", "FACT call F G".
		awk '
			/^[A-Za-z_].*[A-Za-z0-9_]+\(/ && !/;[[:space:]]*$/ && !/^(static|extern)?[[:space:]]*(const[[:space:]]+)?struct[^(]*=/ {
				l = $0; sub(/\(.*/, "", l); n = split(l, w, /[^A-Za-z0-9_]+/); fn = w[n]
				if (fn != "" && fn !~ /^(if|for|while|switch|return|sizeof|MODULE_[A-Z_]*|EXPORT_SYMBOL.*|module_.*)$/) { cur = fn; print "FACT defines " fn }
			}
			cur != "" {
				s = $0
				while (match(s, /[A-Za-z_][A-Za-z0-9_]*[[:space:]]*\(/)) {
					c = substr(s, RSTART, RLENGTH); sub(/[[:space:]]*\($/, "", c)
					if (c != cur && c !~ /^(if|for|while|switch|return|sizeof)$/) print "FACT call " cur " " c
					s = substr(s, RSTART + RLENGTH)
				}
			}
			/^}/ { cur = "" }' "${files[@]/#/$tree/}" | sort -u
		grep -l 'BQLKIT_FAULT_INJECTION' "${files[@]/#/$tree/}" >/dev/null 2>&1 && echo "FACT fault_hook BQLKIT_FAULT_INJECTION"
		true
	} >"$out"
	rm -rf "$out.d" "$out.cocci" "$out.err"
}

# Predicates for rules/<driver>.rules, on $RULES_FACTS (named so as not to
# clash with the test helpers has/lacks of tests/lib.sh).
fact() { # FACT [ERE on the detail]: is there such a fact
	grep -qE "^FACT $1${2:+ .*$2}( |$)" "$RULES_FACTS"
}
nfacts() { # FACT: how many
	grep -c "^FACT $1 " "$RULES_FACTS" || true
}
all_are() { # FACT1 FACT2: every FACT1 detail is also a FACT2 detail (and there is one)
	local a b
	a=$(sed -n "s/^FACT $1 //p" "$RULES_FACTS" | sort -u)
	b=$(sed -n "s/^FACT $2 //p" "$RULES_FACTS" | sort -u)
	[ -n "$a" ] && [ -z "$(comm -23 <(echo "$a") <(echo "$b"))" ]
}
reach() { # ROOT: the functions ROOT reaches through calls in these files
	awk -v r="$1" '$1 == "FACT" && $2 == "call" { e[$3] = e[$3] " " $4 }
		END { q[r] = 1; todo[++n] = r
			while (n > 0) { f = todo[n--]; print f; k = split(e[f], c, " ")
				for (i = 1; i <= k; i++) if (!(c[i] in q)) { q[c[i]] = 1; todo[++n] = c[i] } } }' "$RULES_FACTS"
}
reaches() { # ROOT FACT: some FACT (detail FUNCTION[:line]) is in a function ROOT reaches
	local fns
	fns=$(sed -n "s/^FACT $2 \([^: ]*\).*/\1/p" "$RULES_FACTS" | sort -u)
	[ -n "$fns" ] && [ -n "$(comm -12 <(reach "$1" | sort -u) <(echo "$fns"))" ]
}
only_from() { # ROOT FACT: every FACT's function is reached from ROOT
	local fns
	fns=$(sed -n "s/^FACT $2 \([^: ]*\).*/\1/p" "$RULES_FACTS" | sort -u)
	[ -n "$fns" ] && [ -z "$(comm -23 <(echo "$fns") <(reach "$1" | sort -u))" ]
}

# rules/<driver>.rules declares: rule NAME "STATEMENT" 'PREDICATE', next to
# it broken NAME "WHAT WOULD BE WRONG" "WHAT WOULD FIX IT" (where it does
# not hold), and require NAME...; loaded on demand.
declare -A RULE_STMT RULE_PRED RULE_WRONG RULE_FIX
declare -A RULES_REQUIRED
rules_load() {
	local drv=$1
	[ -z "${RULES_LOADED_DRV:-}" ] || [ "$RULES_LOADED_DRV" != "$drv" ] || return 0
	RULE_STMT=() RULE_PRED=() RULE_WRONG=() RULE_FIX=()
	rule() { RULE_STMT[$1]=$2; RULE_PRED[$1]=$3; }
	broken() { RULE_WRONG[$1]=$2; RULE_FIX[$1]=$3; }
	require() { RULES_REQUIRED[$drv]="$*"; }
	RULES_REQUIRED[$drv]=
	# A driver without rules (mvneta: empty series, audited by its AUDIT=
	# script) has nothing to check here.
	if [ -f "$BQLKIT_TOP/rules/$drv.rules" ]; then
		# shellcheck disable=SC1090 # the driver's rules file, named at run time
		. "$BQLKIT_TOP/rules/$drv.rules"
	fi
	RULES_LOADED_DRV=$drv
}
rules_eval() {
	local drv=$1
	rules_load "$drv"
	[ -n "${RULE_PRED[$3]:-}" ] || die "rules/$drv.rules has no rule '$3'"
	RULES_FACTS=$2 eval "${RULE_PRED[$3]}"
}
rules_statement() {
	rules_load "$1"
	echo "${RULE_STMT[$2]:-?}"
}
# rules_broken DRIVER RULE: "WHAT WOULD BE WRONG; fix: WHAT WOULD FIX IT",
# or nothing where the rules file does not say.
rules_broken() {
	rules_load "$1"
	[ -z "${RULE_WRONG[$2]:-}" ] || echo "${RULE_WRONG[$2]}; fix: ${RULE_FIX[$2]}"
}
rules_required() {
	rules_load "$1"
	echo "${RULES_REQUIRED[$1]}"
}
rules_all() {
	rules_load "$1"
	printf '%s\n' "${!RULE_STMT[@]}" | sort
}
# claims_of DRIVER PATCHFILE: its rules, from patches/<driver>/claims, keyed
# by the patch's name without its number (one line for every series' copy).
claims_of() {
	local slug
	slug=$(basename "$2" .patch)
	slug=${slug#[0-9][0-9][0-9][0-9]-}
	[ -f "$BQLKIT_TOP/patches/$1/claims" ] || return 0
	awk -v s="$slug" '$1 == s { for (i = 2; i <= NF; i++) print $i }' "$BQLKIT_TOP/patches/$1/claims"
}
# rules_sources_any TREE DRIVER: the driver's files present in TREE (any kind).
rules_sources_any() {
	local p
	while read -r p; do
		(cd "$1" && compgen -G "$p" || true)
	done < <(grep -v '^[[:space:]]*\(#\|$\)' "$BQLKIT_TOP/drivers/$2/import.list" | tr '|' '\n')
}
