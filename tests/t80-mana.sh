#!/bin/bash
# mana (Azure NIC): BQL backport and RX doorbell batching, per Debian kernel,
# without the hardware:
#  - RX doorbell batching (da4e8648079e, f5e39b57124f): the series carries it
#    exactly when the imported base lacks it (Debian 6.1 and 6.12 have it);
#  - the kit's mana.ko builds warning-free, carries BQL, and exports the
#    in-tree symbols with the kernel's CRCs (scripts/check-abi.sh, which
#    also must name the symbol of a broken CRC);
#  - sparse (C=2) prints nothing new against the unpatched base;
#  - a Coccinelle audit (rules/mana.cocci): every BQL charge has
#    a completion and a reset after NAPI is disabled, XDP sends are not
#    charged nor completed, the RX poll rings the RQ doorbell once after its
#    CQE loop, the SQ doorbell follows the charge's result (the opt-in
#    batching); the audit must catch five mutations of the patched code;
#  - DEP-3 headers;
#  - (unless BQLKIT_QUICK) a QEMU VM loads the kit's mana.ko, then the
#    kernel's own mana_ib.ko where the kernel has one; dmesg stays clean.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mf=drivers/net/ethernet/microsoft/mana
cocci=$BQLKIT_TOP/rules/mana.cocci

# rx_batched TREE: da4e8648079e: RX WQEs are posted without a doorbell and
# the RX poll rings it once, when it read completions.
rx_batched() {
	sed -n '/^static void mana_post_pkt_rxq/,/^}/p' "$1/$mf/mana_en.c" | grep -q 'mana_gd_post_work_request(rxq->gdma_rq' &&
		sed -n '/^static void mana_poll_rx_cq/,/^}/p' "$1/$mf/mana_en.c" |
		grep -A3 'if (comp_read > 0)' | grep -q 'mana_gd_wq_ring_doorbell(gc, rxq->gdma_rq)'
}
# series_has_rx_batching PDIR: the series carries da4e8648079e (by
# upstream's subject: the kit's own SQ doorbell batching is another patch).
series_has_rx_batching() {
	grep -v '^#' "$1/series" | grep -qi 'RX-queue-doorbell'
}
series_lacks_rx_batching() { ! series_has_rx_batching "$1"; }
# rq_wqe_cnt_zero TREE: f5e39b57124f: 0 as the WQE count of WQ doorbells.
rq_wqe_cnt_zero() {
	sed -n '/^void mana_gd_wq_ring_doorbell/,/^}/p' "$1/$mf/gdma_main.c" | grep -q 'GDMA_WQE_BU_SIZE, 0);'
}

# has_xdp BASE: mana in the (unpatched) base sends XDP_TX/XDP_REDIRECT
# frames on its SQs (mana_xdp_tx(), 5.17+).  Taken from the base, so that a
# series cannot opt out of the XDP rules by dropping mana_xdp_tx().
has_xdp() {
	grep -qw mana_xdp_tx "$1/$mf/"*.c
}

# audit FACTS [XDP]: the audit's verdict on spatch's facts; prints what is
# wrong.  XDP=no (a base without XDP in mana): nothing to exclude, so every
# charge must be unconditional and every completed SKB counted.
audit() {
	local f=$1 xdp=${2:-yes} n bad=() w
	n=$(grep -c '^FACT sent ' "$f" || true)
	[ "$n" -ge 1 ] || bad+=("no netdev_tx_sent_queue")
	if [ "$xdp" = yes ]; then
		[ "$(grep -c '^FACT sent_guarded ' "$f" || true)" -eq "$n" ] || bad+=("a netdev_tx_sent_queue is not under if (!<xdp parameter>)")
	else
		! grep -q '^FACT sent_conditional ' "$f" || bad+=("a netdev_tx_sent_queue is conditional on a base without XDP")
	fi
	[ "$(grep -c '^FACT sent_before_db ' "$f" || true)" -eq "$n" ] || bad+=("a charge is not before the TX doorbell")
	grep -q '^FACT completed ' "$f" || bad+=("no netdev_tx_completed_queue")
	if [ "$xdp" = yes ]; then
		grep -q '^FACT completed_skip .*xdp' "$f" || bad+=("completed bytes not skipped for XDP")
	else
		! grep -q '^FACT completed_skip ' "$f" || bad+=("completed bytes skipped on a base without XDP")
	fi
	grep -q '^FACT completed_order ' "$f" || bad+=("completion not before smp_mb()/stopped check")
	grep -q '^FACT reset ' "$f" || bad+=("no netdev_tx_reset_queue after napi_disable")
	! grep -q '^FACT reset_conditional ' "$f" || bad+=("netdev_tx_reset_queue is conditional")
	if [ "$xdp" = yes ]; then
		w=$(sed -n 's/^FACT xdp_caller //p' "$f" | head -1)
		{ [ -n "$w" ] && grep -qx "FACT xdp_tx_calls $w" "$f"; } || bad+=("mana_xdp_tx does not send through the uncharged (xdp=true) path")
		grep -q '^FACT stack_caller ' "$f" || bad+=("no charged (xdp=false) caller")
	else
		! grep -q '^FACT xdp_caller ' "$f" || bad+=("an uncharged (xdp=true) send path on a base without XDP")
	fi
	grep -q '^FACT rx_ring_once .*:comp_read$' "$f" || bad+=("RX poll does not ring once after its CQE loop under comp_read > 0")
	[ "$(grep -c '^FACT rx_ring_call ' "$f" || true)" -eq 1 ] || bad+=("RX poll rings the doorbell $(grep -c '^FACT rx_ring_call ' "$f" || true) times")
	! grep -q '^FACT rx_ring_in_loop ' "$f" || bad+=("RX doorbell inside the CQE loop")
	! grep -q '^FACT rx_post_rings ' "$f" || bad+=("mana_post_pkt_rxq rings the doorbell")
	grep -q '^FACT rq_wqe_cnt_zero ' "$f" || bad+=("RQ doorbell WQE count is not 0")
	grep -q '^FACT sent_batched ' "$f" || bad+=("the SQ doorbell does not follow the charge's result (opt-in batching)")
	[ ${#bad[@]} -eq 0 ] || { printf '%s; ' "${bad[@]}"; return 1; }
}
# spatch_facts DIR OUT
spatch_facts() {
	spatch --very-quiet --sp-file "$cocci" --dir "$1" >"$2" 2>"$2.err"
}

have_spatch=yes
command -v spatch >/dev/null || have_spatch=
# cocci_audit NAME TREE: the audit of TREE's mana sources, copied to
# $tmp/cc (where the mutations start from); sets xdp (yes/no) from $base.
cocci_audit() {
	rm -rf "$tmp/cc"
	mkdir -p "$tmp/cc"
	cp "$2/$mf/"*.c "$tmp/cc/"
	xdp=no
	! has_xdp "$base" || xdp=yes
	if spatch_facts "$tmp/cc" "$tmp/facts" && why=$(audit "$tmp/facts" "$xdp"); then
		pass "$1"
	else
		fail "$1" "${why:-spatch failed: $(tail -1 "$tmp/facts.err")}"
	fi
}

have_sparse=yes
command -v sparse >/dev/null || have_sparse=

for k in $(test_kernels); do
	kdir=$(kdir_for "$k")
	series=$(series_of "$(kernel_version "$kdir")")
	base=$(base_dir "$series")
	pdir=$BQLKIT_TOP/patches/mana/$series
	t=mana-$series
	if [ ! -f "$pdir/series" ]; then
		fail "$t-series" "no patches/mana/$series/series"
		continue
	fi
	pass "$t-series"

	# RX doorbell batching: the series carries it only where the base lacks it.
	if rx_batched "$base"; then
		check "$t-base-has-rx-doorbell-batching" series_lacks_rx_batching "$pdir"
	else
		check "$t-series-carries-rx-doorbell-batching" series_has_rx_batching "$pdir"
	fi
	if rq_wqe_cnt_zero "$base"; then
		check "$t-base-has-rq-wqe-cnt-zero" bash -c "! grep -qi 'wqe.cnt\|wqe_cnt' '$pdir/series'"
	else
		check "$t-series-carries-rq-wqe-cnt-zero" grep -qi 'wqe.cnt\|wqe_cnt' "$pdir/series"
	fi

	for p in $(grep -v '^#' "$pdir/series"); do
		check "$t-dep3-${p%%-*}" bash -c "f='$pdir/$p'; grep -q '^Description: ' \"\$f\" && grep -q '^Origin: ' \"\$f\" && grep -q 'Differences from upstream' \"\$f\" && grep -q '^Last-Update: ' \"\$f\""
	done

	# Reuse t40's build of this run when nothing it depends on is newer.
	ko=$BQLKIT_BUILD/$k/mana.ko
	if [ -f "$ko" ] && [ -d "$BQLKIT_BUILD/$k/mana-src" ] && [ -z "$(find "$pdir" "$BQLKIT_TOP/drivers/mana" \
		"$BQLKIT_TOP/compat" "$BQLKIT_TOP/scripts/build.sh" "$BQLKIT_TOP/scripts/check-abi.sh" \
		"$base/MANIFEST" -newer "$ko" -print -quit)" ]; then
		pass "$t-build"
	elif ! out=$("$BQLKIT_TOP/scripts/build.sh" "$k" mana 2>&1); then
		fail "$t-build" "$(tail -1 <<<"$out")"
		continue
	else
		pass "$t-build"
	fi
	mdir=$BQLKIT_BUILD/$k/mana
	check "$t-build-no-warnings" bash -c "! grep -q 'warning:' '$BQLKIT_BUILD/$k/mana-build.log'"
	check "$t-imports-dql_completed" bash -c "nm -u '$ko' | grep -qw dql_completed"
	check "$t-vermagic" bash -c "modinfo -F vermagic '$ko' | grep -q '^$k '"
	check "$t-version" test "$(modinfo -F version "$ko")" = "$(cat "$BQLKIT_TOP/VERSION")-bqlkit"
	check "$t-info" bash -c "modinfo -F bqlkit '$ko' | grep -q 'series=$series'"
	check "$t-patched-has-rx-doorbell-batching" rx_batched "$BQLKIT_BUILD/$k/mana-src"
	check "$t-patched-has-rq-wqe-cnt-zero" rq_wqe_cnt_zero "$BQLKIT_BUILD/$k/mana-src"

	# ABI: every in-tree export with the kernel's CRC; a changed CRC is named.
	check "$t-abi" "$BQLKIT_TOP/scripts/check-abi.sh" "$k" mana
	mkdir -p "$tmp/kd-$series"
	sym=$(awk -F'\t' -v m="$mf/mana" '$3 == m { print $2; exit }' "$kdir/Module.symvers")
	awk -F'\t' -v OFS='\t' -v s="$sym" '$2 == s { $1 = "0x00000bad" } 1' "$kdir/Module.symvers" >"$tmp/kd-$series/Module.symvers"
	expect_error "$t-abi-names-broken-symbol" "$sym has CRC .* but 0x00000bad" \
		env KDIR="$tmp/kd-$series" "$BQLKIT_TOP/scripts/check-abi.sh" "$k" mana
	awk -F'\t' -v OFS='\t' -v s="$sym" '$2 == s { $2 = "bqlkit_missing_sym" } 1' "$kdir/Module.symvers" >"$tmp/kd-$series/Module.symvers"
	expect_error "$t-abi-names-missing-symbol" "does not export bqlkit_missing_sym" \
		env KDIR="$tmp/kd-$series" "$BQLKIT_TOP/scripts/check-abi.sh" "$k" mana

	# sparse: nothing new compared with the unpatched base.
	if [ -n "$have_sparse" ]; then
		# sp DIR: sparse's complaints, file:message (line numbers move).
		sp() {
			make -C "$kdir" M="$1" BQLKIT_COMPAT="$BQLKIT_TOP/compat" BQLKIT_CONFIG="$BQLKIT_BUILD/$k/compat" \
				C=2 -j"$(nproc)" modules >"$tmp/sp.log" 2>&1 || true
			grep -q 'CHECK .*mana_en\.c' "$tmp/sp.log" || echo "sparse did not run: $(tail -1 "$tmp/sp.log")"
			grep -E '^/.*: (warning|error):' "$tmp/sp.log" | sed -E 's,^.*/,,; s/:[0-9]+:[0-9]+:/:/' | LC_ALL=C sort || true
		}
		# The patched build directory is up to date: sparse only.  The
		# unpatched base's result is cached per base, kernel and glue.
		sp "$mdir" >"$tmp/sparse-new.txt"
		key=$(cat "$base/MANIFEST" "$BQLKIT_TOP/drivers/mana/Kbuild" "$BQLKIT_TOP/compat/bqlkit_compat.h" \
			"$BQLKIT_BUILD/$k/compat/bqlkit_config.h" | sha256sum | cut -c1-16)
		cache=$BQLKIT_BUILD/$k/mana-sparse-base.$key
		if [ ! -f "$cache" ]; then
			rm -rf "$tmp/sp-old"
			cp -a "$mdir" "$tmp/sp-old"
			cp "$base/$mf/"*.c "$tmp/sp-old/"
			[ ! -d "$base/include/net/mana" ] || cp "$base/include/net/mana/"*.h "$tmp/sp-old/include/net/mana/"
			rm -f "$BQLKIT_BUILD/$k/mana-sparse-base."*
			sp "$tmp/sp-old" >"$cache.tmp" && mv "$cache.tmp" "$cache"
		fi
		cp "$cache" "$tmp/sparse-old.txt"
		new=$(comm -13 "$tmp/sparse-old.txt" "$tmp/sparse-new.txt")
		if [ -z "$new" ]; then
			pass "$t-sparse-nothing-new"
			echo "$t: sparse: $(wc -l <"$tmp/sparse-new.txt") warning(s) patched, $(wc -l <"$tmp/sparse-old.txt") unpatched" >&2
		else
			fail "$t-sparse-nothing-new" "$(head -1 <<<"$new")"
		fi
	else
		skip "$t-sparse-nothing-new" "sparse not installed (apt-get install sparse)"
	fi

	# Coccinelle audit of the patched sources, and of five mutations of them.
	if [ -n "$have_spatch" ]; then
		cocci_audit "$t-cocci-audit" "$BQLKIT_BUILD/$k/mana-src"
		mutate() { # NAME EXPECTED-COMPLAINT SED-SCRIPT FILE
			rm -rf "$tmp/mut"
			cp -a "$tmp/cc" "$tmp/mut"
			sed -i "$3" "$tmp/mut/$4"
			if cmp -s "$tmp/cc/$4" "$tmp/mut/$4"; then
				fail "$t-cocci-catches-$1" "the mutation did not change $4"
			elif spatch_facts "$tmp/mut" "$tmp/mfacts" && ! why=$(audit "$tmp/mfacts" "$xdp") && grep -q "$2" <<<"$why"; then
				pass "$t-cocci-catches-$1"
			else
				fail "$t-cocci-catches-$1" "audit said: ${why:-nothing}"
			fi
		}
		if [ "$xdp" = yes ]; then
			mutate xdp-charged "not under if" '/^\tif (!xdp)$/d' mana_en.c
			mutate xdp-sent-as-stack "uncharged (xdp=true) path" 's/__mana_start_xmit(skb, ndev, true)/__mana_start_xmit(skb, ndev, false)/' mana_en.c
		else
			mutate charge-conditional "conditional on a base without XDP" '/^\tnetdev_tx_sent_queue(net_txq, len);$/s/^\t/\tif (len)\n\t\t/' mana_en.c
			mutate completion-skipped "skipped on a base without XDP" '/^\t\tbql_bytes += skb->len;$/s/^\t\t/\t\tif (!skb_is_gso(skb))\n\t\t\t/' mana_en.c
		fi
		mutate no-reset "no netdev_tx_reset_queue" '/netdev_tx_reset_queue(/d' mana_en.c
		mutate batch-ring-always "does not follow the charge" 's/^\tif (ring)$/\tif (true)/' mana_en.c
		mutate rx-unbatched "mana_post_pkt_rxq rings" 's/err = mana_gd_post_work_request(rxq->gdma_rq,/err = mana_gd_post_and_ring(rxq->gdma_rq,/' mana_en.c
	else
		skip "$t-cocci-audit" "coccinelle not installed (apt-get install coccinelle)"
	fi

	# VM: the kit's mana.ko, then the kernel's own mana_ib.ko.
	if [ -n "${BQLKIT_QUICK:-}" ]; then
		skip "vm-$t" "BQLKIT_QUICK=1 (VM tests not run)"
		continue
	fi
	vm_mana "$t" "$k" "$ko" || continue
	intree=("${VM_MANA_INTREE[@]}")
	[ ${#intree[@]} -gt 0 ] || continue

	# Control: the same module with the compat header forced into every
	# file (which changes genksyms CRCs) must fail check-abi.sh and, in the
	# VM, make mana_ib refuse to load.  Shows both checks can fail.
	ctl=$tmp/bad/$k
	rm -rf "$tmp/bad"
	mkdir -p "$ctl"
	cp -a "$mdir" "$ctl/mana"
	(cd "$ctl/mana" && rm -f -- *.o *.ko .*.cmd *.mod *.mod.c Module.symvers modules.order &&
		echo 'ccflags-y += -include bqlkit_compat.h' >>Kbuild)
	if ! make -C "$kdir" M="$ctl/mana" BQLKIT_COMPAT="$BQLKIT_TOP/compat" BQLKIT_CONFIG="$BQLKIT_BUILD/$k/compat" \
		-j"$(nproc)" modules >"$tmp/bad.log" 2>&1; then
		fail "vm-$t-abi-control-build" "$(tail -1 "$tmp/bad.log")"
		continue
	fi
	expect_error "$t-abi-control-check-abi" "ABI break" env BQLKIT_BUILD="$tmp/bad" "$BQLKIT_TOP/scripts/check-abi.sh" "$k" mana
	blog=$BQLKIT_BUILD/test-logs/vm-mana-abi-control-$k.log
	"$BQLKIT_TOP/tests/vm/mkinitramfs.sh" --kver "$k" --scenario mana --out "$tmp/bad.cpio.gz" \
		--module "$ctl/mana/mana.ko" "${intree[@]}" 2>/dev/null &&
		"$BQLKIT_TOP/tests/vm/run-vm.sh" --kver "$k" --initrd "$tmp/bad.cpio.gz" --log "$blog" --timeout 180 --quiet 2>/dev/null || true
	check "vm-$t-abi-control-mana_ib-refused" bash -c "grep -q 'BQLKIT-RESULT mana_ib_insmod FAIL' '$blog' && grep -q 'mana_ib: disagrees about version of symbol' '$blog'"
done

# Bases the suite has no kernel for (e.g. Debian 7.x, imported with
# scripts/fetch-source.sh): the series applies (make drift does the
# fuzz check) and the applied tree passes the same audit.  Not built.
tested=" $(for k in $(test_kernels); do series_of "$(kernel_version "$(kdir_for "$k")")"; done | tr '\n' ' ') "
for pdir in "$BQLKIT_TOP"/patches/mana/*/; do
	[ -f "$pdir/series" ] || continue
	series=$(basename "$pdir")
	case $tested in *" $series "*) continue ;; esac
	base=$(base_dir "$series")
	t=mana-$series
	if [ ! -f "$base/MANIFEST" ]; then
		skip "$t-applied-audit" "no imported Linux $series base (5.15, 6.6: no Debian source, not in CI; make import SRC=<tree>)"
		continue
	fi
	if ! out=$(apply_series "$base" "$pdir" "$tmp/ap"); then
		fail "$t-applies" "$(tail -1 <<<"$out")"
		continue
	fi
	pass "$t-applies"
	if rx_batched "$base"; then
		check "$t-base-has-rx-doorbell-batching" series_lacks_rx_batching "$pdir"
	else
		check "$t-series-carries-rx-doorbell-batching" series_has_rx_batching "$pdir"
		check "$t-applied-has-rx-doorbell-batching" rx_batched "$tmp/ap"
	fi
	rq_wqe_cnt_zero "$base" || check "$t-applied-has-rq-wqe-cnt-zero" rq_wqe_cnt_zero "$tmp/ap"
	if [ -n "$have_spatch" ]; then
		cocci_audit "$t-applied-audit" "$tmp/ap"
	fi
done
