#!/bin/bash
# Every shell script git tracks (a new one once it is git-added) passes the
# lint of shellcheck -x at severity warning and above (info and style
# findings are not gated): one PASS or FAIL per file, a FAIL naming each
# finding FILE:LINE:COL.  A finding is fixed, or its line carries a
# directive with its reason, "# shellcheck disable=SCxxxx # why"; a
# directive without one fails too.  A planted script proves the check runs,
# gates warnings and not style, and names the line.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# shell_scripts DIR: the files git tracks in DIR that are shell, relative to
# it: *.sh, a sh/bash/dash/busybox sh shebang (.ci/run, tests/vm/guest/init,
# the package's maintainer scripts) or a "# shellcheck shell=" directive in
# the first lines (files only sourced: rules/*.rules).  Not the kernel
# sources under tests/fixtures/kernels/: Linux's, copied as they are.
shell_scripts() {
	git -C "$1" ls-files -z | grep -zv '^tests/fixtures/kernels/' |
		(cd "$1" && xargs -0 -r awk '
			FNR == 1 && (FILENAME ~ /\.sh$/ || /^#! *(\/usr\/bin\/env +|\/bin\/busybox +)?(\/usr)?(\/bin\/)?(ba|da)?sh([ \t]|$)/) { print FILENAME; nextfile }
			/^# shellcheck shell=/ { print FILENAME; nextfile }
			FNR > 5 { nextfile }')
}

# lint DIR FILE...: shellcheck's findings on FILEs (relative to DIR, as
# sourced files are found), "FILE:LINE:COL: severity: message [SCxxxx]", and
# each bare directive, "FILE:LINE: a disable directive without its reason".
lint() {
	local dir=$1 rc=0
	shift
	(cd "$dir" && shellcheck -x -S warning -f gcc "$@") || rc=$?
	# 0: nothing found, 1: findings; else shellcheck itself failed.
	[ "$rc" -le 1 ] || { echo "shellcheck failed (exit $rc)"; return 1; }
	(cd "$dir" && grep -nE '^[[:space:]]*# shellcheck disable=' "$@" /dev/null) |
		grep -vE '# shellcheck disable=[A-Z0-9,]+[[:space:]]+#[[:space:]]*[^[:space:]]' |
		sed -E 's/^([^:]*:[0-9]+):.*/\1: a disable directive without its reason/' || true
}

# per_file NAME FINDINGS FILE...: PASS NAME-FILE for each FILE without a
# finding, else FAIL with its findings.
per_file() {
	local name=$1 findings=$2 f mine
	shift 2
	for f in "$@"; do
		mine=$(awk -v f="$f:" 'index($0, f) == 1' <<<"$findings")
		if [ -z "$mine" ]; then
			pass "$name-$f"
		else
			fail "$name-$f" "$(paste -sd';' <<<"$mine" | sed 's/;/; /g')"
		fi
	done
}

if ! command -v shellcheck >/dev/null; then
	fail shellcheck "no shellcheck (scripts/install-deps.sh test installs it)"
	exit 0
fi

# The planted script: a warning (SC2045), a style finding (SC2086: not
# gated), a justified directive and a bare one.
mkdir -p "$tmp/top/sub"
# (The directives are written as two strings: this file's own lines must
# not read as directives.)
printf '%s\n' '#!/bin/bash' 'for f in $(ls); do echo "$f"; done' 'echo $1' \
	"# shellcheck"" disable=SC2034 # read by a sourcing script" 'kept=1' \
	"# shellcheck"" disable=SC2034" 'bare=1' >"$tmp/top/sub/bad.sh"
printf '#!/bin/sh\necho ok\n' >"$tmp/top/run"
printf '#!/bin/busybox sh\necho ok\n' >"$tmp/top/init"
printf '# shellcheck shell=bash\nrule() { :; }\n' >"$tmp/top/x.rules"
printf '#!/usr/bin/env python3\nprint("no")\n' >"$tmp/top/tool"
printf 'not shell\n' >"$tmp/top/notes.txt"
git -C "$tmp/top" init -q && git -C "$tmp/top" add -A
check shellcheck-finds-the-shell-files test "$(shell_scripts "$tmp/top" | sort | paste -sd' ')" = "init run sub/bad.sh x.rules"
out=$(lint "$tmp/top" sub/bad.sh)
has shellcheck-names-a-warning '^sub/bad.sh:2:[0-9]*: .*\[SC2045\]' "$out"
lacks shellcheck-style-not-gated 'SC2086' "$out"
lacks shellcheck-justified-directive-kept 'sub/bad.sh:4:' "$out"
has shellcheck-bare-directive-named '^sub/bad.sh:6: a disable directive without its reason' "$out"
has shellcheck-per-file-fail "^FAIL t-sub/bad.sh: sub/bad.sh:2:" "$(per_file t "$out" sub/bad.sh)"

# The tree.
mapfile -t files < <(shell_scripts "$BQLKIT_TOP")
check shellcheck-tree-scripts-found test "${#files[@]}" -ge 100
for f in .ci/run tests/vm/guest/init rules/veth.rules debian/bqlkit-dkms.postinst tests/lib.sh; do
	check "shellcheck-covers-$f" grep -qxF -- "$f" <(printf '%s\n' "${files[@]}")
done
if out=$(lint "$BQLKIT_TOP" "${files[@]}"); then
	per_file shellcheck "$out" "${files[@]}"
else
	fail shellcheck "$(tail -1 <<<"$out")"
fi
