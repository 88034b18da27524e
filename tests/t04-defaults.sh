#!/bin/bash
# One place for each default: BQLKIT_CACHE's and the driver list live in
# scripts/lib.sh.  The Makefile sets neither (make help shows lib.sh's),
# tests/vm/common.sh takes lib.sh's BQLKIT_CACHE, and dkms.conf (parsed by
# DKMS on its own) lists the drivers the way lib.sh does: the directories
# under drivers/ with a driver.conf, by its ORDER=.  Each copy is compared
# with lib.sh's value, so a copy that drifts fails here.  (CI's workflow
# sets BQLKIT_CACHE for its jobs: a setting the scripts take as it is, not
# a default.)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$BQLKIT_TOP"

# lib_value VAR: scripts/lib.sh's default of VAR (not set in the environment).
# shellcheck disable=SC2016 # the inner shell's ${!1}
lib_value() { env -u "$1" bash -c '. scripts/lib.sh && echo "${!1}"' _ "$1"; }
# make_sees VAR: VAR in the environment of a recipe of the Makefile's.
# shellcheck disable=SC2016 # the recipe's $VAR
make_sees() { env -u "$1" make -s --no-print-directory -f Makefile --eval 't04-env: ; @echo "$${'"$1"':-(unset)}"' t04-env; }

# same NAME WHAT VALUE WANT: PASS when VALUE (WHAT's) is WANT.
same() { if [ "$3" = "$4" ]; then pass "$1"; else fail "$1" "$2: '$3', expected '$4'"; fi; }

# --- BQLKIT_CACHE --------------------------------------------------------
cache=$(lib_value BQLKIT_CACHE)
check cache-default-set test -n "$cache"
# Every file that defaults it, but lib.sh, takes lib.sh's.
defaults=$(grep -rnE --exclude-dir=.git --exclude-dir=build --exclude-dir=fixtures \
	--include='*.sh' --include='*.py' --include=Makefile --include=dkms.conf --include=run \
	'BQLKIT_CACHE *(:-|:=|\?=|=\$\{)' . | grep -v '^\./scripts/lib\.sh:' || true)
lacks cache-default-once 'BQLKIT_CACHE' "$(grep -v 'scripts/lib\.sh' <<<"$defaults" || true)"
has cache-default-vm-takes-libs '^\./tests/vm/common\.sh:.*scripts/lib\.sh' "$defaults"
# shellcheck disable=SC2016 # the inner shell's $BQLKIT_CACHE
same cache-default-vm-agrees tests/vm/common.sh "$(env -u BQLKIT_CACHE bash -c '. tests/vm/common.sh && echo "$BQLKIT_CACHE"')" "$cache"
same cache-default-not-in-make "the Makefile's recipes" "$(make_sees BQLKIT_CACHE)" "(unset)"
has cache-default-make-help-shows-libs " BQLKIT_CACHE=$cache (" "$(env -u BQLKIT_CACHE make -s help)"

# --- the drivers ----------------------------------------------------------
drivers=$(lib_value BQLKIT_DRIVERS)
dirs=$(for c in drivers/*/driver.conf; do c=${c%/driver.conf}; echo "${c#drivers/}"; done | sort | xargs)
same drivers-default-is-every-driver "scripts/lib.sh's, sorted" "$(tr ' ' '\n' <<<"$drivers" | sort | xargs)" "$dirs"
same drivers-default-each-once "scripts/lib.sh's" "$(wc -w <<<"$drivers")" "$(wc -w <<<"$dirs")"
# (a driver.conf without ORDER= would be left out of both lists)
same drivers-each-has-order "driver.conf without ORDER=" "$(grep -L '^ORDER=[0-9][0-9]*$' drivers/*/driver.conf | xargs)" ""
same drivers-default-not-in-make "the Makefile's recipes" "$(make_sees BQLKIT_DRIVERS)" "(unset)"
has drivers-default-make-help-shows-libs "  DRIVERS=$drivers  BQLKIT_CACHE=" "$(env -u BQLKIT_DRIVERS -u DRIVERS make -s help)"
# shellcheck disable=SC2016 # the inner shell's $1 and BUILT_MODULE_NAME
mods=$(cd "$tmp" && env -u kernelver -u kernel_source_dir bash -c \
	'. "$1" >/dev/null 2>&1; echo "${BUILT_MODULE_NAME[*]}"' _ "$BQLKIT_TOP/dkms.conf")
same drivers-dkms-conf-agrees "dkms.conf's modules" "$mods" "$drivers"
