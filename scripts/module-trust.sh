#!/bin/sh
# Would kernel KVER load the kit's modules as DKMS signs them?  The kit
# installs for a kernel only where the answer is yes: a module the kernel
# refuses ("Key was rejected by service") must never be what modprobe or the
# initramfs picks instead of the working in-tree driver (on an Azure VM,
# mana is the only NIC).
#
#   module-trust.sh KVER
#
# Exit 0: the kernel loads them.  Exit 1: it would refuse them; one line on
# stdout says why and how to make the kernel trust DKMS's key.
#
# The kernel enforces module signatures when Secure Boot is on (Debian's
# and Ubuntu's kernels then lock down), when it was built with
# CONFIG_MODULE_SIG_FORCE=y, and (the running kernel) when booted with
# module.sig_enforce=1 or under lockdown.  Enforcing, it loads a module
# DKMS signed only when DKMS's key is enrolled in MOK and Secure Boot is on
# (shim hands the MOK keys to the kernel); with Secure Boot off no kernel
# trusts that key, unless the user built it into their kernel and says so
# with BQLKIT_KEY_TRUSTED=1.
#
# POSIX sh, so that the VM tests run this very file in their guests
# (tests/vm/guest/sigenforce.sh).  secure-boot.sh sources its functions
# (with BQLKIT_TRUST_LIB=1).  Test hooks: BQLKIT_SB_STATE=enabled|disabled,
# BQLKIT_SIG_ENFORCE=1, BQLKIT_MOK_ENROLLED=yes|no stand in for mokutil and
# /sys.

# The certificate DKMS signs with (/etc/dkms/framework.conf may name another).
trust_cert() {
	_c=/var/lib/dkms/mok.pub
	for _f in /etc/dkms/framework.conf /etc/dkms/framework.conf.d/*.conf; do
		[ -f "$_f" ] || continue
		_v=$(sed -n 's/^[[:space:]]*mok_certificate=["'\'']\{0,1\}\([^"'\'']*\).*/\1/p' "$_f" | tail -n 1)
		[ -z "$_v" ] || _c=$_v
	done
	echo "$_c"
}

sb_state() {
	if [ -n "${BQLKIT_SB_STATE:-}" ]; then
		echo "$BQLKIT_SB_STATE"
	elif command -v mokutil >/dev/null 2>&1 && _o=$(mokutil --sb-state 2>&1); then
		case $_o in *"SecureBoot enabled"*) echo enabled ;; *) echo disabled ;; esac
	else
		# No mokutil, or no EFI variables (BIOS boot, container, chroot).
		_v=$(od -An -tu1 -j4 -N1 /sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c 2>/dev/null | tr -d ' ') || _v=
		if [ "$_v" = 1 ]; then echo enabled; else echo disabled; fi
	fi
}

# enrolled: DKMS's key is in MOK.
enrolled() {
	if [ -n "${BQLKIT_MOK_ENROLLED:-}" ]; then
		[ "$BQLKIT_MOK_ENROLLED" = yes ]
	else
		command -v mokutil >/dev/null 2>&1 && mokutil --test-key "$(trust_cert)" 2>&1 | grep -q 'already enrolled'
	fi
}

# enforced_why KVER: why KVER only loads signed modules (nothing: it does not).
enforced_why() {
	if [ "${BQLKIT_SIG_ENFORCE:-}" = 1 ]; then
		echo "signatures enforced (BQLKIT_SIG_ENFORCE=1)"
	elif [ "$(sb_state)" = enabled ]; then
		echo "Secure Boot is on"
	elif [ "$1" = "$(uname -r)" ] && [ "$(cat /sys/module/module/parameters/sig_enforce 2>/dev/null)" = Y ]; then
		echo "it runs with module.sig_enforce=1"
	elif [ "$1" = "$(uname -r)" ] && grep -q '\[\(integrity\|confidentiality\)\]' /sys/kernel/security/lockdown 2>/dev/null; then
		echo "it runs locked down ($(cat /sys/kernel/security/lockdown))"
	elif grep -qx 'CONFIG_MODULE_SIG_FORCE=y' "/boot/config-$1" 2>/dev/null; then
		echo "it was built with CONFIG_MODULE_SIG_FORCE=y"
	fi
}

# trust_refusal KVER: nothing when KVER loads DKMS-signed modules, else
# the line that says why not and what to do.
trust_refusal() {
	_why=$(enforced_why "$1")
	[ -n "$_why" ] || return 0
	[ "${BQLKIT_KEY_TRUSTED:-}" != 1 ] || return 0
	_cert=$(trust_cert)
	if [ "$(sb_state)" = enabled ]; then
		enrolled && return 0
		echo "kernel $1 would refuse the kit's modules ($_why and DKMS's key $_cert is not enrolled), so the in-tree drivers stay in use: enroll the key with 'mokutil --import $_cert' (choose a one-time password), reboot, choose 'Enroll MOK' in the blue MOK manager, enter the password, reboot, then run 'make install' again (or 'dkms autoinstall')"
	else
		echo "kernel $1 would refuse the kit's modules ($_why, and with Secure Boot off it trusts no key DKMS made), so the in-tree drivers stay in use: boot without signature enforcement, or with Secure Boot on and DKMS's key $_cert enrolled ('mokutil --import $_cert', reboot, 'Enroll MOK'), or build that key into your kernel and set BQLKIT_KEY_TRUSTED=1; then run 'make install' again"
	fi
}

if [ -z "${BQLKIT_TRUST_LIB:-}" ]; then
	[ $# -eq 1 ] || { echo "usage: module-trust.sh KVER" >&2; exit 2; }
	case $1 in
	[0-9]*.[0-9]*) ;;
	*) echo "bqlkit: error: module-trust.sh: '$1' is not a kernel release" >&2; exit 2 ;;
	esac
	case $1 in */* | *..*) echo "bqlkit: error: module-trust.sh: '$1' is not a kernel release" >&2; exit 2 ;; esac
	_line=$(trust_refusal "$1")
	[ -z "$_line" ] || { echo "$_line"; exit 1; }
	exit 0
fi
