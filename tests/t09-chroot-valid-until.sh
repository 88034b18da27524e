#!/bin/bash
# The chroots' apt and Valid-Until (lab/chroot-lib.sh chroot_cached): a
# source line gets check-valid-until=no where this machine's apt takes
# Release files past their Valid-Until (a mirror that lags the archive:
# sid's InRelease expired a month before a fresh machine's first run, and
# mmdebstrap's apt, which reads only its own configuration, refused it),
# or where the suite is in BQLKIT_FROZEN_SUITES; nowhere else.  Played
# with an mmdebstrap in PATH that records its arguments, and APT_CONFIG
# files that read no apt.conf.d.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$BQLKIT_TOP/lab/chroot-lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin"
cat >"$tmp/bin/mmdebstrap" <<'EOS'
#!/bin/bash
printf '%s\n' "$@" >"$FAKE_ARGS"
exit 1
EOS
chmod +x "$tmp/bin/mmdebstrap"

# lines CHECK FROZEN: the source lines chroot_cached gave mmdebstrap with
# the host's Acquire::Check-Valid-Until CHECK (true, false, or unset) and
# BQLKIT_FROZEN_SUITES=FROZEN.
lines() {
	local conf=$tmp/apt-$1.conf
	echo 'Dir::Etc::Parts "/nonexistent";' >"$conf"
	[ "$1" = unset ] || echo "Acquire::Check-Valid-Until \"$1\";" >>"$conf"
	rm -f "$tmp/args"
	(
		export PATH="$tmp/bin:$PATH" APT_CONFIG=$conf FAKE_ARGS=$tmp/args BQLKIT_FROZEN_SUITES=$2
		chroot_cached "$tmp/c.tar" "$tmp/c.key" k sid -- "deb http://deb.debian.org/debian sid main"
	) >/dev/null 2>&1 || true
	grep '^deb ' "$tmp/args" 2>/dev/null || echo "(mmdebstrap not run)"
}

# same NAME GOT WANT
same() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "mmdebstrap got '$2', not '$3'"; fi; }
off="deb [check-valid-until=no] http://deb.debian.org/debian sid main"
on="deb http://deb.debian.org/debian sid main"
same chroot-valid-until-host-off "$(lines false '')" "$off"
same chroot-valid-until-host-on "$(lines true '')" "$on"
same chroot-valid-until-host-default "$(lines unset '')" "$on"
same chroot-valid-until-frozen-suite "$(lines true sid)" "$off"
same chroot-valid-until-other-frozen "$(lines true bookworm)" "$on"
