#!/bin/bash
# Build + install an added bqlkit/VERSION with DKMS for every kernel whose
# headers are installed (the bqlkit-dkms package's postinst runs this), then
# regenerate the initramfs where it holds a kit driver and check signing.
#
#   dkms-all-kernels.sh VERSION
#
# One line per kernel: installed, already installed, skipped (no base for
# its series: DKMS exit 77) or failed (with its log).  Exit 1 when a kernel
# failed or a module is unsigned on a kernel that enforces signatures.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

ver=$1
# The admin's (or autopkgtest's) switch for every DKMS package's postinst.
if [ -f /etc/dkms/no-autoinstall ]; then
	note "not building: autoinstall is off (/etc/dkms/no-autoinstall); 'dkms install bqlkit/$ver -k KVER' builds for a kernel"
	exit 0
fi
log=/var/log/bqlkit-dkms.log
: >"$log"
kernels=()
for b in /lib/modules/*/build/Makefile; do
	[ -f "$b" ] || continue
	k=${b#/lib/modules/}
	kernels+=("${k%/build/Makefile}")
done
n=${#kernels[@]} i=0 rc=0 done_k=()
for k in "${kernels[@]}"; do
	i=$((i + 1))
	if dkms status "bqlkit/$ver" -k "$k" 2>/dev/null | grep -q ': installed'; then
		note "($i/$n) bqlkit/$ver is already installed for $k"
		done_k+=("$k")
		continue
	fi
	step "($i/$n) dkms build + install bqlkit/$ver for $k"
	r=0
	dkms install "bqlkit/$ver" -k "$k" >"$log.$k" 2>&1 || r=$?
	# The kit's own error line is in DKMS's make.log, not in its output.
	[ $r -eq 0 ] || cat "/var/lib/dkms/bqlkit/$ver/build/make.log" >>"$log.$k" 2>/dev/null || true
	cat "$log.$k" >>"$log"
	case $r in
	0) done_k+=("$k") && rm -f "$log.$k" ;;
	77) grep -m1 '^bqlkit: skipping' "$log.$k" >&2 || note "skipping kernel $k: DKMS says the kit does not build for it"
		rm -f "$log.$k" ;;
	*) grep -m1 '^bqlkit: error:' "$log.$k" >&2 || tail -3 "$log.$k" >&2
		dkms remove "bqlkit/$ver" -k "$k" >/dev/null 2>&1 || true
		note "dkms install bqlkit/$ver for $k failed (log: $log.$k); the in-tree modules stay in use there"
		rc=1 ;;
	esac
done
[ ${#done_k[@]} -gt 0 ] || exit $rc
"$BQLKIT_TOP/scripts/initramfs.sh" "${done_k[@]}" || true
"$BQLKIT_TOP/scripts/secure-boot.sh" "${done_k[@]}" || rc=1
for k in "${done_k[@]}"; do
	echo "bqlkit: installed for $k: veth -> $(modinfo -k "$k" -n veth 2>/dev/null || echo '?')"
done
exit $rc
