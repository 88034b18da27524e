# shellcheck shell=bash
# Helpers of the benches (lab/bench.sh, lab/bench-mana.sh): the
# laboratory's, apart from scripts/lib.sh, which the product (import, fit,
# build, DKMS) loads.  Source it after lib.sh.

# bench_no_empty [PREFIX...]: die when a variable whose name starts with
# PREFIX (BENCH_ when none is given) is set but empty (make bench
# BENCH_RUNS=, or the same in the environment of bench.sh): a knob given
# empty is a mistake, not "its default".
bench_no_empty() {
	local p v empty=()
	for p in "${@:-BENCH_}"; do
		for v in $(compgen -e "$p"); do
			[ -n "${!v}" ] || empty+=("$v")
		done
	done
	[ ${#empty[@]} -eq 0 ] || die "${empty[*]} given empty: give a value or leave it out for its default (make help)"
}

# bench_out_ok DIR: die when DIR (BENCH_OUT) holds a comma: the insncount
# plugin's out= file sits in it, and QEMU splits -plugin options at commas.
bench_out_ok() {
	[[ $1 != *,* ]] || die "BENCH_OUT '$1' holds a comma, which QEMU's -plugin option cannot carry: give a directory without one"
}

# bench_order RUN: the variants' boot order in run RUN of make bench
# (stock,kit then kit,stock, ...: drift on a shared host hits both alike).
bench_order() { if [ $(($1 % 2)) -eq 1 ]; then echo "stock kit"; else echo "kit stock"; fi; }

# bench_chroot_row K: "SUITE ENV" when K names an amd64 chroot row of
# lab/matrix.conf (trixie-6.12, sid-7.2, trixie-bpo-7.3), else nothing.
bench_chroot_row() {
	awk -v id="$1" '$1 == id && $5 ~ /^chroot:/ && $3 == "amd64" { print $2, $5 }' "$BQLKIT_TOP/lab/matrix.conf"
}

# bench_check_kernel K: die unless make bench can build for and boot K: a
# kernel with headers here (kdir_for: installed, or made by make
# vm-kernel), or a chroot row (bench_chroot_row).
bench_check_kernel() {
	[ -n "$(bench_chroot_row "$1")" ] || [ -d "$(kdir_for "$1")" ] ||
		die "BENCH_KERNELS: $1 is neither an installed kernel with headers (/lib/modules/$1/build; tests/setup.sh installs the test kernels; or one make vm-kernel built) nor an amd64 chroot row of lab/matrix.conf (trixie-6.12, sid-7.2, trixie-bpo-7.3)"
}

# bench_chroot_build ROW DRIVER DIR LOG: build the kit's DRIVER for chroot
# row ROW in its cached chroot (lab/matrix.sh, outputs under DIR, its
# log appended to LOG) and print "KVER MODULE": the Debian kernel release
# and the module, in the chroot's tree.  Dies when it built none.
bench_chroot_build() {
	local row=$1 drv=$2 dir=$3 log=$4 kver status env bases
	env=$(bench_chroot_row "$row" | cut -d' ' -f2)
	# The bases of this build tree, imported there when missing.
	bases=${BQLKIT_BASES:-$BQLKIT_BUILD/bases}
	MATRIX_RESULTS=$dir BQLKIT_BUILD=$dir/build BQLKIT_DRIVERS=$drv BQLKIT_BASES=$bases \
		"$BQLKIT_TOP/lab/matrix.sh" "^$row\$" >>"$log" 2>&1 ||
		{ tail -5 "$log" >&2; die "$row: make matrix failed (log: $log)"; }
	read -r kver status <<<"$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["rows"][0]
print(r["kernel"], r["cells"][sys.argv[2]]["status"])' "$dir/matrix.json" "$drv")"
	cat "$dir/build/matrix/cells/$row.$drv.log" >>"$log" 2>/dev/null || true
	[ "$status" = ok ] || die "$row: the matrix built no $drv.ko ($status; log: $log)"
	echo "$kver $BQLKIT_CACHE/chroots/${env#chroot:}-amd64/bqlkit/out/$row/$kver/$drv.ko"
}

# bench_host_load LOG LOAD_BEFORE: append the host's 1-min load average
# around a bench boot to its console log (TCG numbers depend on it).
bench_host_load() {
	echo "BQLKIT host loadavg_before=$2 loadavg_after=$(cut -d' ' -f1 /proc/loadavg) cpus=$(nproc)" >>"$1"
}
