# shellcheck shell=bash
# shellcheck disable=SC2034,SC2154 # DKMS sets kernelver etc. and reads what this sets
# The per-kernel part of dkms.conf, sourced by it while DKMS parses it
# (DKMS has no other hook before it decides to build: a PRE_BUILD failure
# is a build failure, which fails a headers package's postinst, while a
# BUILD_EXCLUSIVE mismatch is DKMS's clean skip, exit 77).  It sets:
#   BUILT_MODULE_NAME/LOCATION, DEST_MODULE_LOCATION
#       every driver of the kit (drivers/*/driver.conf, by ORDER=, as
#       scripts/lib.sh's kit_drivers) this kernel enables (its KCONFIG
#       symbol): veth everywhere, mana (Azure; its exported symbols keep
#       the in-tree CRCs, scripts/check-abi.sh, so the in-tree mana_ib
#       keeps loading) on x86 and arm64, mvneta on Armada boards;
#   BUILD_EXCLUSIVE_KERNEL="^$" (matches none: DKMS skips the kernel)
#       for a kernel whose own driver source the kit does not have (the
#       shipped base, or the distro's linux-source tarball of that very
#       kernel: scripts/pick-source.sh; an update that changed veth.c or
#       mana is never undone) or that does not load what DKMS signs (Secure
#       Boot, signature enforcement: scripts/module-trust.sh), saying why
#       in one line; its in-tree drivers stay;
#   AUTOINSTALL="" in a dkms autoinstall for such a kernel (below).
# DKMS's variables it reads: kernelver, kernel_source_dir.  Its own names
# start with _bqlkit (DKMS sources this into its own shell).

_bqlkit_src=$(dirname "${BASH_SOURCE[0]}")/..
_bqlkit_cfg=${kernel_source_dir:-/lib/modules/${kernelver:-none}/build}/include/config/auto.conf
_bqlkit_i=0
for _bqlkit_d in $(cd "$_bqlkit_src/drivers" 2>/dev/null && grep -H '^ORDER=' -- */driver.conf | sort -t= -k2n | cut -d/ -f1); do
	_bqlkit_sym=$(sed -n 's/^KCONFIG=//p' "$_bqlkit_src/drivers/$_bqlkit_d/driver.conf" 2>/dev/null)
	if [ -n "$_bqlkit_sym" ] && [ -f "$_bqlkit_cfg" ] &&
		! grep -q "^$_bqlkit_sym=[ym]" "$_bqlkit_cfg"; then
		continue
	fi
	BUILT_MODULE_NAME[_bqlkit_i]=$_bqlkit_d
	BUILT_MODULE_LOCATION[_bqlkit_i]="out/"
	DEST_MODULE_LOCATION[_bqlkit_i]="/updates/dkms"
	_bqlkit_i=$((_bqlkit_i + 1))
done

# _bqlkit_skip_why KVER [KDIR]: why DKMS must not install the kit for KVER
# (its headers in KDIR), nothing when it may.
_bqlkit_skip_why() {
	local why
	if ! why=$(BQLKIT_BASES="$_bqlkit_src/bases" KDIR="${2:-}" "$_bqlkit_src/scripts/pick-source.sh" "$1" 2>&1); then
		echo "$why"
		return
	fi
	"$_bqlkit_src/scripts/module-trust.sh" "$1" 2>&1 || true
}
_bqlkit_why=$([ -z "${kernelver:-}" ] || _bqlkit_skip_why "$kernelver" "${kernel_source_dir:-}")
if [ -n "$_bqlkit_why" ]; then
	echo "bqlkit: skipping kernel $kernelver: $_bqlkit_why" >&2
	BUILD_EXCLUSIVE_KERNEL="^$"
fi
# dkms < 3.0.11 (bookworm: 3.0.10) counts a BUILD_EXCLUSIVE skip in
# autoinstall as a failure (dkms issue #302, fixed by PR #314), and so fails
# the new kernel's headers package.  Its autoinstall reads dkms.conf with
# the kernels the kit is installed for, not the new one: take the new one
# from dkms's command line and opt out of autoinstall for it (said once per
# dkms run: a mark in /run, root's).
_bqlkit_cmd=" $(tr '\0' ' ' </proc/$$/cmdline 2>/dev/null) "
if [[ $_bqlkit_cmd == *" autoinstall "* ]]; then
	_bqlkit_k=$(sed -n 's/.* \(-k\|--kernelver\)[ =]\([^ ]*\) .*/\2/p' <<<"$_bqlkit_cmd")
	_bqlkit_why=$([ -z "$_bqlkit_k" ] || _bqlkit_skip_why "$_bqlkit_k")
	if [ -n "$_bqlkit_why" ]; then
		AUTOINSTALL=""
		_bqlkit_mark=/run/bqlkit-skipped.$$.$_bqlkit_k
		if [ ! -e "$_bqlkit_mark" ]; then
			echo "bqlkit: skipping kernel $_bqlkit_k: $_bqlkit_why" >&2
			: >"$_bqlkit_mark" 2>/dev/null || true
		fi
	fi
fi
