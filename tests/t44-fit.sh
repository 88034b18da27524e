#!/bin/bash
# Fit by content (scripts/fit.sh, make fit) on the corpus of real kernels'
# driver files (tests/fixtures/kernels, MANIFEST):
#  - the corpus is what its MANIFEST says (sha256 of every file);
#  - each outcome on a fixture: applied, adapted (3-way merge), already
#    present (a source that has a change: skipped, named by its rule),
#    does not fit (hunk and function named), half-present (an error naming
#    the missing rule);
#  - the rules (rules/*.cocci, *.rules) catch mutations of a patched veth
#    and mana (the veth audit; the mana one is also run by t80);
#  - every patch of every series states what it establishes;
#  - make fit over the whole corpus gives the verdicts of
#    tests/expected/fit-corpus.txt;
#  - an adapted result builds against a prepared tree of its release where
#    one is under $BQLKIT_CACHE/trees (not in CI) and passes sparse/ABI.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$BQLKIT_TOP/scripts/rules.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
corpus=$BQLKIT_TOP/tests/fixtures/kernels
command -v spatch >/dev/null || { skip fit "coccinelle not installed (apt-get install coccinelle)"; exit 0; }

check corpus-manifest bash -c "cd '$corpus' && awk -F'\t' '{ print \$3 \"  \" \$1 \"/\" \$2 }' MANIFEST | sha256sum --quiet -c -"
check corpus-manifest-complete test "$(cd "$corpus" && find . -mindepth 2 -type f | wc -l)" -eq "$(wc -l <"$corpus/MANIFEST")"
# A kernel without a top Makefile has its release in SRCVER, and only such.
for d in "$corpus"/*/; do
	id=$(basename "$d")
	v=$(corpus_srcver "$id")
	if [ -f "$d/Makefile" ]; then
		check "corpus-version-$id" test -z "$v"
	else
		check "corpus-version-$id" bash -c '[[ $1 =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]' _ "$v"
	fi
done

# Every patch states what it establishes, and its rules exist.
for p in "$BQLKIT_TOP"/patches/*/*/*.patch; do
	drv=$(basename "$(dirname "$(dirname "$p")")")
	n=${p#"$BQLKIT_TOP"/patches/}
	mapfile -t rs < <(claims_of "$drv" "$p")
	if [ ${#rs[@]} -eq 0 ]; then
		fail "claims-$n" "patches/$drv/claims has no line for $(basename "$p" .patch | sed 's/^[0-9]*-//')"
		continue
	fi
	ok=1
	for r in "${rs[@]}"; do
		[ -n "$(rules_statement "$drv" "$r" | grep -v '^?$')" ] || { ok=; fail "claims-$n" "rule $r is not in rules/$drv.rules"; }
	done
	[ -z "$ok" ] || pass "claims-$n"
done

# Every rule says what would be wrong where it does not hold, and what
# would fix it (make fit prints it when it refuses a result).
for drv in veth mana; do
	for r in $(rules_all "$drv"); do
		check "rules-$drv-broken-$r" test -n "$(rules_broken "$drv" "$r")"
	done
done

# fitv NAME DRIVER SRC EXPECTED-VERDICT [ENV...]: the verdict, and sets $fitout.
fitv() {
	local name=$1 drv=$2 src=$3 want=$4 rc=0
	shift 4
	fitout=$(env "$@" bash "$BQLKIT_TOP/scripts/fit.sh" "$drv" "$src" "$tmp/o-$name" 2>&1) || rc=$?
	local v
	v=$(sed -n 's/^verdict \([^ ]*\).*/\1/p' "$tmp/o-$name.fit" 2>/dev/null || true)
	if [ "$v" = "$want" ]; then pass "fit-$name"; else fail "fit-$name" "verdict '$v' (exit $rc), expected '$want': $(tail -1 <<<"$fitout")"; fi
}

# applied: a kit base, every change exactly.
fitv applied veth "$corpus/debian-6.12.117" fits
has fit-applied-series "reference series 6.12" "$fitout"
check fit-applied-all bash -c "[ \$(grep -c '^patch [^ ]* applied$' '$tmp/o-applied.fit') -eq $(grep -vc '^#' "$BQLKIT_TOP/patches/veth/6.12/series") ]"
# What a series requires (base.conf REQUIRES=) and its base has: skipped.
has fit-required-present "6.6/0001-veth-apply-qdisc-backpressure-on-full-ptr_ring *already present: backpressure" "$fitout"
# ... and where a source lacks it, put in first: 6.12.15 predates the
# backpressure 6.12.y took in 6.12.61, so the 6.6 series' backport of it goes
# in, then the 6.12 series (its test hook's veth_poll hunk merged, 3-way).
fitv required-applied veth "$corpus/armbian-6.12.15" adapted
has fit-required-applied-first "6.6/0001-veth-apply-qdisc-backpressure-on-full-ptr_ring *applied" "$fitout"
has fit-required-then-series "reference series 6.12" "$fitout"
# Where spatch cannot run (Debian 11's coccinelle: "exception Not_found"),
# the release's own series still fits, what it requires taken as present
# (its hunks' context is that change's result), and it says so; anything
# decided by content stops with the reason.
mkdir -p "$tmp/nospatch"
printf '#!/bin/sh\necho "Fatal error: exception Not_found" >&2\nexit 2\n' >"$tmp/nospatch/spatch"
chmod +x "$tmp/nospatch/spatch"
fitv nospatch-own veth "$corpus/debian-6.12.117" fits PATH="$tmp/nospatch:$PATH"
has fit-nospatch-required-unchecked "already present, not checked (spatch cannot run here)" "$fitout"
has fit-nospatch-rules-unchecked "the rules were not checked: spatch failed" "$fitout"
out=$(PATH="$tmp/nospatch:$PATH" bash "$BQLKIT_TOP/scripts/fit.sh" veth "$corpus/armbian-6.12.15" "$tmp/o-nospatch-other" 2>&1) && rc=0 || rc=$?
check fit-nospatch-by-content-fails test "$rc" -eq 1
has fit-nospatch-by-content-says-why "cannot read what .* establishes (spatch): spatch failed on veth: Fatal error" "$out"
# The result builds against the 6.12 test kernel's headers, and sparse runs
# under an outer make -s (it printed no CHECK line there, and every adapted
# result was refused as "sparse did not run").
if [ -d "/lib/modules/$(test_kernels | sed -n 2p)/build" ]; then
	mkdir -p "$tmp/v61215/drivers/net"
	cp "$corpus/armbian-6.12.15/Makefile" "$tmp/v61215/"
	cp "$corpus/armbian-6.12.15/drivers/net/veth.c" "$tmp/v61215/drivers/net/"
	out=$(BQLKIT_BUILD=$tmp/b61215 make -s -C "$BQLKIT_TOP" fit SRC="$tmp/v61215" KDIR="/lib/modules/$(test_kernels | sed -n 2p)/build" 2>&1) && rc=0 || rc=$?
	check fit-required-builds test "$rc" -eq 0
	has fit-required-built "build: compiled, ABI kept" "$out"
	has fit-required-sparse-ran "adapted result: sparse: nothing new" "$out"
else
	skip fit-required-builds "no headers of $(test_kernels | sed -n 2p)"
fi

# adapted: 7.0's mana takes the 6.18 series by a 3-way merge (mana.h moved).
fitv adapted mana "$corpus/upstream-7.0.0" adapted
has fit-adapted-says-how "adapted: 3-way merge with the reference files (hunk 1 of mana.h (after struct mana_port_context))" "$fitout"
has fit-adapted-series "reference series 6.18" "$fitout"
check fit-adapted-rules-hold grep -q '^verdict adapted' "$tmp/o-adapted.fit"
# Without the 3-way merge (the old fuzz-0 behaviour) it does not fit.
fitv adapted-needs-merge mana "$corpus/upstream-7.0.0" nofit FIT_MECHS=exact FIT_SERIES=6.18

# Ubuntu's linux-azure 5.15 (driver files only, SRCVER=): stable's RX
# doorbell batching is already there (Microsoft's backport), the 5.15
# series' BQL applies -- and would charge XDP frames, which Ubuntu took
# (mana_rx_skb calls mana_xdp_tx; mana_bpf.c, where it is defined, is not
# in the corpus): refused, not "fits".
fitv ubuntu-azure mana "$corpus/ubuntu-azure-5.15.0" refused BQLKIT_SRCVER=5.15.0
has fit-ubuntu-azure-rx-batching-present "0001-net-mana-Batch-ringing-RX-queue-doorbell-on-receiving-packets already present: rx-doorbell-once-per-poll" "$fitout"
has fit-ubuntu-azure-wqe-count-present "0002-net-mana-Use-the-correct-WQE-count-for-ringing-RQ-doorbell already present: rq-doorbell-wqe-count-0" "$fitout"
has fit-ubuntu-azure-xdp-charged-refused "verdict: mana DOES NOT FIT: series 5.15: its result breaks xdp-not-charged (of 0003-net-mana-add-BQL-support): XDP frames .* would be charged to BQL" "$fitout"
# The refusal says in words what would be wrong and what would fix it
# (rules/mana.rules "broken"), not rule names alone.
has fit-refused-says-fix "xdp-not-charged (of 0003-net-mana-add-BQL-support): .*; fix: a series that sends XDP frames uncharged" "$fitout"
lacks fit-refused-not-names-only "required: xdp-not-charged" "$fitout"
# Which files would unlock more: the XDP-aware series need mana_bpf.c,
# which the fixture lacks; 5.15-xdp (5.15 with mana's XDP backport) would
# fit with it.
has fit-ubuntu-azure-names-file "with files this source lacks: series 5.15-xdp would fit given drivers/net/ethernet/microsoft/mana/mana_bpf.c (absent here)" "$fitout"

# 5.15-xdp, both header layouts: the fixture with a vendor's mana_bpf.c
# (UEK7's, tests/fixtures/semantic/mana_bpf: a 5.15 API copy) fits, XDP
# uncharged, mana_bpf.c edited by the semantic patch; with the headers
# beside the .c files (as UEK7, Ubuntu's generic 5.15 and Azure Linux 2.0
# keep them) the same series fits, its mana.h hunk in that file.  (Both
# sources are the fixture changed here, not corpus kernels.)
sem=$BQLKIT_TOP/tests/fixtures/semantic/mana_bpf
mkdir -p "$tmp/x515i"
cp -a "$corpus/ubuntu-azure-5.15.0/." "$tmp/x515i/"
cp "$sem/oracle-uek7.c" "$tmp/x515i/drivers/net/ethernet/microsoft/mana/mana_bpf.c"
fitv xdp515-include mana "$tmp/x515i" fits BQLKIT_SRCVER=5.15.0
has fit-xdp515-include-series "reference series 5.15-xdp, written against ubuntu-azure-5.15.0" "$fitout"
has fit-xdp515-include-semantic "0001-net-mana-add-BQL-support .*its mana_bpf.c part by the semantic patch patches/mana/semantic/net-mana-add-BQL-support.cocci" "$fitout"
has fit-xdp515-include-tried-515 "tried series 5.15, not chosen: its result breaks xdp-not-charged" "$fitout"
check fit-xdp515-include-exports-bpf grep -q '^+	rc = mana_xdp_start_xmit(skb, ndev);$' "$tmp/o-xdp515-include.changes/0001-net-mana-add-BQL-support.patch"
mkdir -p "$tmp/x515d"
cp -a "$tmp/x515i/." "$tmp/x515d/"
mv "$tmp/x515d"/include/net/mana/*.h "$tmp/x515d/drivers/net/ethernet/microsoft/mana/"
rm -r "$tmp/x515d/include"
fitv xdp515-drivers mana "$tmp/x515d" fits BQLKIT_SRCVER=5.15.0
has fit-xdp515-drivers-series "reference series 5.15-xdp" "$fitout"
check fit-xdp515-drivers-header grep -q '^+++ b/drivers/net/ethernet/microsoft/mana/mana.h$' "$tmp/o-xdp515-drivers.changes/0001-net-mana-add-BQL-support.patch"
check fit-xdp515-drivers-decl grep -q '^netdev_tx_t mana_xdp_start_xmit(struct sk_buff \*skb, struct net_device \*ndev);$' "$tmp/o-xdp515-drivers/drivers/net/ethernet/microsoft/mana/mana.h"
check fit-xdp515-drivers-no-include test ! -e "$tmp/o-xdp515-drivers/include"
# Oracle UEK7's own mana_en.c and mana.h (corpus uek7-5.15.0-mana: the two
# files the index holds at one commit, headers beside the .c files), its
# mana_bpf.c (tests/fixtures/semantic) and stable-5.15.167's other files:
# mana_start_xmit() returns int there (before upstream 0c9ef08a4d0f), on
# which the BQL change's first hunk and its mana.h hunk conflicted; the
# required change goes in first and the series fits.
mkdir -p "$tmp/uek7/drivers/net/ethernet/microsoft"
cp -a "$corpus/stable-5.15.167/drivers/net/ethernet/microsoft/mana" "$tmp/uek7/drivers/net/ethernet/microsoft/"
cp -a "$corpus/uek7-5.15.0-mana/." "$tmp/uek7/"
cp "$sem/oracle-uek7.c" "$tmp/uek7/drivers/net/ethernet/microsoft/mana/mana_bpf.c"
check fit-uek7-int-before grep -q '^int mana_start_xmit(struct sk_buff \*skb, struct net_device \*ndev)$' "$tmp/uek7/drivers/net/ethernet/microsoft/mana/mana_en.c"
fitv uek7-mana mana "$tmp/uek7" adapted BQLKIT_SRCVER=5.15.0
has fit-uek7-series "reference series 5.15-xdp" "$fitout"
has fit-uek7-return-type-applied "required/0001-net-mana-Fix-return-type-of-mana_start_xmit  applied" "$fitout"
check fit-uek7-netdev-tx-after grep -q '^static netdev_tx_t __mana_start_xmit(struct sk_buff \*skb,$' "$tmp/o-uek7-mana/drivers/net/ethernet/microsoft/mana/mana_en.c"
# Vanilla 6.1.y stable has int there too: the required change goes in and
# the BQL change after it; the opt-in SQ doorbell batching (0002) still
# conflicts with that mana_start_xmit()'s declarations (refused, named).
fitv vanilla-61-mana mana "$corpus/armbian-6.1.166" nofit
has fit-vanilla-61-return-type-applied "required/0001-net-mana-Fix-return-type-of-mana_start_xmit  applied" "$fitout"
has fit-vanilla-61-bql-in "0001-net-mana-add-BQL-support  *adapted" "$fitout"
has fit-vanilla-61-batching-named "0002-net-mana-ring-the-SQ-doorbell-once-per-xmit_more-batch does not fit" "$fitout"
# Context the series' hunk does not know (a vendor's line before the call):
# the hunk no longer applies (-F0), the semantic patch still does its part.
sed -i 's/^\trc = mana_start_xmit(skb, ndev);$/\t\/\* vendor: sent on the SQ \*\/\n&/' "$tmp/x515i/drivers/net/ethernet/microsoft/mana/mana_bpf.c"
awk '/^--- / { on = 0 } /^--- a\// { on = (substr($2, 3) == "drivers/net/ethernet/microsoft/mana/mana_bpf.c") } on' \
	"$BQLKIT_TOP/patches/mana/6.1/0001-net-mana-add-BQL-support.patch" >"$tmp/bpf-hunk.patch"
check semantic-context-hunk-present grep -q '^+	rc = mana_xdp_start_xmit(skb, ndev);$' "$tmp/bpf-hunk.patch"
check semantic-context-hunk-fails bash -c '! patch -d "$1" -p1 -s -F0 -N --dry-run <"$2" >/dev/null 2>&1' _ "$tmp/x515i" "$tmp/bpf-hunk.patch"
fitv semantic-context mana "$tmp/x515i" fits BQLKIT_SRCVER=5.15.0
check semantic-context-edited grep -q '^	rc = mana_xdp_start_xmit(skb, ndev);$' "$tmp/o-semantic-context/drivers/net/ethernet/microsoft/mana/mana_bpf.c"
# A mana_bpf.c whose mana_xdp_tx() does not call mana_start_xmit(): the
# semantic patch changes nothing, which does not fit (not a silent pass).
sed -i 's/^\trc = mana_start_xmit(skb, ndev);$/\trc = mana_vendor_xmit(skb, ndev);/' "$tmp/x515i/drivers/net/ethernet/microsoft/mana/mana_bpf.c"
fitv semantic-nomatch mana "$tmp/x515i" nofit BQLKIT_SRCVER=5.15.0 FIT_SERIES=5.15-xdp
has semantic-nomatch-says "changes nothing in drivers/net/ethernet/microsoft/mana/mana_bpf.c" "$(cat "$tmp/o-semantic-nomatch.fit")"
# The semantic patch on every mana_bpf.c the kit holds (corpus and
# tests/fixtures/semantic/), and results/semantic-mana_bpf.md is its table.
check semantic-proved bash "$BQLKIT_TOP/lab/prove-semantic.sh" --table "$tmp/semantic.md"
check semantic-table-current diff -q "$tmp/semantic.md" "$BQLKIT_TOP/results/semantic-mana_bpf.md"

# already present: Debian 6.1 with the kit's backpressure already in it
# (as a vendor that took the upstream change would have): 0001 skipped.
mkdir -p "$tmp/bp61"
cp -a "$corpus/debian-6.1.192/." "$tmp/bp61/"
patch -d "$tmp/bp61" -p1 -s -F0 <"$BQLKIT_TOP/patches/veth/6.1/0001-veth-apply-qdisc-backpressure-on-full-ptr_ring.patch"
fitv present veth "$tmp/bp61" fits FIT_SERIES=6.1
has fit-present-names-rule "0001-veth-apply-qdisc-backpressure-on-full-ptr_ring .*already present: backpressure (" "$fitout"
has fit-present-then-applied "0002-veth-implement-byte-queue-limits .*applied" "$fitout"
# A real one: 6.8 has mana's RX doorbell batching (5.15's 0001, 0002) ...
fitv present-real mana "$corpus/upstream-6.8.0" refused FIT_SERIES=5.15
has fit-present-real-rule "0001-net-mana-Batch-ringing-RX-queue-doorbell-on-receiving-packets .*already present: rx-doorbell-once-per-poll" "$fitout"
# ... and 5.15's BQL patch applies there but does not keep XDP uncharged: refused.
has fit-refused-names-rule "DOES NOT FIT: series 5.15: its result breaks xdp-not-charged" "$fitout"

# does not fit: 6.17's mana with the series of the nearest release, 6.18,
# and no wiggle (the hunk and function are named: 6.18 moved
# mana_features_check() and mana.h's port context).  The function is the
# one the hunk's change is in, not diff's cut header ("mana_features_c")
# nor a label above it ("out:", the end of the function before).
fitv nofit mana "$corpus/upstream-6.17.0" nofit FIT_SERIES=6.18 "FIT_MECHS=exact merge3"
has fit-nofit-names-hunk "does not fit: hunk 1 of mana_en.c (mana_start_xmit) does not apply; hunk 4 of mana_en.c (after mana_features_check) does not apply" "$fitout"
lacks fit-nofit-hunk-not-cut "mana_features_c)" "$fitout"
has fit-nofit-says-why "3-way merge conflict at drivers/net/ethernet/microsoft/mana/mana_en.c:[0-9]" "$fitout"

# wiggle adapts 6.18's series to 6.17 there, into the very files 6.1's
# series gives by applying exactly (what fit chooses for 6.17: corpus below).
fitv wiggle mana "$corpus/upstream-6.17.0" adapted FIT_SERIES=6.18
has fit-wiggle-says-how "adapted: wiggle merged the hunks word by word (hunk 1 of mana_en.c (mana_start_xmit), hunk 4 of mana_en.c (after mana_features_check), hunk 1 of mana.h (after struct mana_port_context))" "$fitout"
fitv wiggle-same-as-exact mana "$corpus/upstream-6.17.0" fits FIT_SERIES=6.1
# (But for where mana_detach() calls mana_tx_flush_all(): after
# netif_tx_disable() in the 6.1 series, first in its port_st_save block in
# the 6.18 series, each where its kernels agree; the same order of calls.
# And but for gdma_main.c: the 6.1 series' EQ teardown fix is already in
# 6.17, its test hook is not, and the 6.18 series carries neither.)
check fit-wiggle-same-result diff -r -x gdma_main.c -I '^	if (apc->port_st_save)$' -I '^		mana_tx_flush_all(apc);$' "$tmp/o-wiggle" "$tmp/o-wiggle-same-as-exact"
# (6.1's mana.h hunk lands at an offset there: patch(1) would leave a
# mana.h.orig in the result without --no-backup-if-mismatch.)
check fit-no-backup-files test -z "$(find "$tmp/o-wiggle-same-as-exact" "$tmp/o-wiggle" -name '*.orig' -o -name '*.porig' -o -name '*.rej')"

# half-present: 6.17.0 has veth's backpressure (dc82a33297fc) without the
# fix that wakes the txq in veth_poll (5442a9da6978).
fitv half-present veth "$corpus/upstream-6.17.0" half-present
has fit-half-present-names-missing "missing: backpressure-poll-wake (\"the peer's txq is woken in veth_poll()" "$fitout"

# Refusals a vendor can act on, on partial and vendor-like sources made
# from the corpus.  A file a change edits that the source lacks is absent,
# with what the change does there, not a merge conflict; and what
# supplying it would do (tried with the series' reference copy).
mkdir -p "$tmp/nogdma"
cp -a "$corpus/stable-5.15.167/." "$tmp/nogdma/"
rm "$tmp/nogdma/drivers/net/ethernet/microsoft/mana/gdma_main.c"
fitv absent mana "$tmp/nogdma" nofit
has fit-absent-named "0002-net-mana-Use-the-correct-WQE-count-for-ringing-RQ-doorbell *does not fit: absent: drivers/net/ethernet/microsoft/mana/gdma_main.c, which this change edits (mana_gd_wq_ring_doorbell)" "$fitout"
lacks fit-absent-not-a-conflict "not in this source\|conflict in drivers/net/ethernet/microsoft/mana/gdma_main.c" "$fitout"
has fit-absent-would-fit "series 5.15 would fit given drivers/net/ethernet/microsoft/mana/gdma_main.c (absent here)" "$fitout"
# 6.8's mana without mana_bpf.c and include/net/mana/mana.h: 5.15's series
# is refused (it would charge XDP frames); the XDP-aware ones need both.
mkdir -p "$tmp/nobpf"
cp -a "$corpus/upstream-6.8.0/." "$tmp/nobpf/"
rm "$tmp/nobpf/drivers/net/ethernet/microsoft/mana/mana_bpf.c" "$tmp/nobpf/include/net/mana/mana.h"
fitv unlock mana "$tmp/nobpf" refused
has fit-unlock-names-files "series 6.12 would fit given drivers/net/ethernet/microsoft/mana/mana_bpf.c and include/net/mana/mana.h (absent here)" "$fitout"
# The closest series is the one that got furthest, not the nearest
# release: a veth labelled 5.14 (as CentOS Stream 9's) with 6.8's code and
# a vendor's edit where BQL goes: 5.15's series (the nearest) stops at the
# backpressure change, 6.6's gets it in.
mkdir -p "$tmp/c9/drivers/net"
sed 's/^VERSION = .*/VERSION = 5/; s/^PATCHLEVEL = .*/PATCHLEVEL = 14/; s/^SUBLEVEL = .*/SUBLEVEL = 0/' "$corpus/upstream-6.8.0/Makefile" >"$tmp/c9/Makefile"
sed 's/^\tdone = veth_xdp_rcv(rq, budget, &bq, &stats);/\tdone = veth_xdp_rcv(rq, budget, \&bq, \&stats, peer_txq);/' \
	"$corpus/upstream-6.8.0/drivers/net/veth.c" >"$tmp/c9/drivers/net/veth.c"
fitv closest veth "$tmp/c9" nofit
has fit-closest-furthest "closest series 6.6 (1 of its 5 changes got in" "$fitout"
check fit-closest-recorded grep -qx 'series 6.6' "$tmp/o-closest.fit"
# A candidate refused before the chosen one reads as tried, not as the
# outcome: 6.8's mana in a tree labelled 5.15 (XDP on 5.15, as Azure
# Linux's): 5.15's series tried, not chosen; 6.1's fits.
mkdir -p "$tmp/xdp515"
cp -a "$corpus/upstream-6.8.0/." "$tmp/xdp515/"
sed -i 's/^VERSION = .*/VERSION = 5/; s/^PATCHLEVEL = .*/PATCHLEVEL = 15/; s/^SUBLEVEL = .*/SUBLEVEL = 0/' "$tmp/xdp515/Makefile"
fitv tried mana "$tmp/xdp515" fits
has fit-tried-not-chosen "^  tried series 5.15, not chosen: its result breaks xdp-not-charged" "$fitout"
lacks fit-tried-not-refused "^  refused:" "$fitout"
# A release older than the driver (a Makefile saying 5.3.18; mana came in
# 5.13) is said, not passed over.
mkdir -p "$tmp/k53"
cp -a "$corpus/stable-5.15.167/." "$tmp/k53/"
sed -i 's/^PATCHLEVEL = .*/PATCHLEVEL = 3/; s/^SUBLEVEL = .*/SUBLEVEL = 18/' "$tmp/k53/Makefile"
fitv older mana "$tmp/k53" fits
has fit-older-release-said "note: Linux 5.3.18 has no mana (it came upstream in 5.13): these mana files are a backport or not from that tree" "$fitout"

# make import of a partial clone (git clone --filter=blob:none, often with
# a sparse checkout) whose remote cannot be reached, or is gone: git has
# the tree but not every file's object.  With the files the kit imports all
# here it imports them, quietly (not git's "error: invalid object" of other
# files, nor a failure fetching them); with one of them missing it fails,
# naming the fix (not "mvneta is not in Linux").
# (The clone fetches the blobs of the top Makefile and veth.c only.)
g=$tmp/partial
mkdir -p "$g/up"
cp -a "$corpus/stable-5.15.167/." "$g/up/"
if git -C "$g/up" init -q && git -C "$g/up" add -A &&
	git -C "$g/up" -c user.name=t -c user.email=t@t commit -qm kernel &&
	git -C "$g/up" config uploadpack.allowFilter true &&
	git clone -q --no-checkout --filter=blob:none "file://$g/up" "$g/clone" &&
	git -C "$g/clone" cat-file -p HEAD:Makefile >/dev/null &&
	git -C "$g/clone" cat-file -p HEAD:drivers/net/veth.c >/dev/null; then
	for how in unreachable gone; do
		if [ $how = unreachable ]; then git -C "$g/clone" remote set-url origin "$g/gone"; else git -C "$g/clone" remote remove origin; fi
		out=$(BQLKIT_DRIVERS=veth BQLKIT_BASES=$tmp/pbases "$BQLKIT_TOP/scripts/import-source.sh" "$g/clone" 2>&1) && rc=0 || rc=$?
		check "import-partial-$how-imports" test "$rc" -eq 0
		has "import-partial-$how-says-what" "imported base 5.15: Linux 5.15.167, 2 files" "$out"
		lacks "import-partial-$how-quiet" "error\|fatal" "$out"
	done
	out=$(BQLKIT_BASES=$tmp/pbases "$BQLKIT_TOP/scripts/import-source.sh" "$g/clone" 2>&1) && rc=0 || rc=$?
	check import-partial-missing-fails test "$rc" -ne 0
	has import-partial-missing-says-fix "lacks the git objects of [0-9]* file(s) the kit imports .*: give a full clone, a kernel tree or a tarball" "$out"
	lacks import-partial-missing-not-absent "is not in Linux" "$out"
else
	fail import-partial "could not make a partial clone of a corpus kernel with git $(git --version)"
fi

# The rules catch mutations of a patched source (the veth audit; for mana,
# the opt-in SQ doorbell batching): 6.18.35 with the 6.18 series, every
# rule holds; then each mutation must break the rule it names.
# patched DRIVER: $tmp/p-DRIVER, and its rules checked.
patched() {
	mkdir -p "$tmp/p-$1"
	cp -a "$corpus/stable-6.18.35/." "$tmp/p-$1/"
	for p in $(grep -v '^#' "$BQLKIT_TOP/patches/$1/6.18/series"); do
		patch -d "$tmp/p-$1" -p1 -s -F0 <"$BQLKIT_TOP/patches/$1/6.18/$p"
	done
	rules_facts "$1" "$tmp/p-$1" "$tmp/facts-$1"
	for r in $(rules_all "$1"); do
		# A kit-only test hook's rule, where the series has no hook
		# (mana's EQ doorbell hook goes only with the EQ teardown fix,
		# 5.15 to 6.6): nothing establishes it here.
		if grep -Eq "^bqlkit-[A-Za-z0-9-]*test-hook[A-Za-z0-9-]* (.* )?$r( |$)" "$BQLKIT_TOP/patches/$1/claims" &&
			! grep -q 'test-hook' "$BQLKIT_TOP/patches/$1/6.18/series"; then
			skip "rules-$1-patched-$r" "the 6.18 series carries no test hook that establishes it"
			continue
		fi
		check "rules-$1-patched-$r" rules_eval "$1" "$tmp/facts-$1" "$r"
	done
}
# mutate DRIVER FILE NAME RULE SED-SCRIPT: RULE must fail on the mutated FILE.
mutate() {
	rm -rf "$tmp/mut"
	cp -a "$tmp/p-$1" "$tmp/mut"
	sed -i "$5" "$tmp/mut/$2"
	if cmp -s "$tmp/p-$1/$2" "$tmp/mut/$2"; then
		fail "rules-$1-catch-$3" "the mutation did not change $(basename "$2")"
	else
		rules_facts "$1" "$tmp/mut" "$tmp/mfacts"
		if rules_eval "$1" "$tmp/mfacts" "$4"; then fail "rules-$1-catch-$3" "$4 still holds"; else pass "rules-$1-catch-$3"; fi
	fi
}
patched veth
v=drivers/net/veth.c
mutate veth $v charge-after-produce bql-charge '/^\t\tnetdev_tx_sent_queue(txq, VETH_BQL_UNIT);$/d; s/^\t__ptr_ring_produce(ring, veth_skb_to_ptr(skb, do_bql));/&\n\tif (do_bql)\n\t\tnetdev_tx_sent_queue(txq, VETH_BQL_UNIT);/'
mutate veth $v charge-outside-lock bql-charge 's/^\tspin_lock(&ring->producer_lock);$/\tspin_lock(\&ring->producer_lock);\n\tspin_unlock(\&ring->producer_lock);/'
mutate veth $v no-teardown-completion bql-teardown '/^static void veth_napi_del_range/,/^}/{/netdev_tx_completed_queue(/,/);/d}'
mutate veth $v no-poll-wake backpressure-poll-wake '/^static int veth_poll(/,/^}/{/netif_tx_wake_queue(peer_txq);/d}'
mutate veth $v xdp-charged xdp-not-charged '/^static int veth_xdp_xmit(/,/^}/s/^\trcu_read_lock();$/\trcu_read_lock();\n\tveth_bad(NULL);/; s/^static int veth_xdp_xmit(struct net_device \*dev, int n,$/static void veth_bad(struct netdev_queue *q)\n{\n\tnetdev_tx_sent_queue(q, 1);\n}\n\n&/'
mutate veth $v no-watchdog tx-watchdog '/dev->watchdog_timeo = /d'
# 6.18's own index (rq->xdp_rxq.queue_index, 0 without XDP), and a fixed one.
mutate veth $v poll-txq-xdp-rxq bql-poll-txq 's/^\tint queue_idx = rq - priv->rq;$/\tint queue_idx = rq->xdp_rxq.queue_index;/'
mutate veth $v poll-txq-zero bql-poll-txq '/^static int veth_poll(/,/^}/s/netdev_get_tx_queue(peer_dev, queue_idx)/netdev_get_tx_queue(peer_dev, 0)/'
# 5.15.85's order: the redirect flush after the poll completed.
mutate veth $v flush-after-complete xdp-flush-before-complete '/^static int veth_poll(/,/^}/s/^\tif (done < budget && napi_complete_done(napi, done)) {$/&\n\t\txdp_do_flush();/'
patched mana
m=drivers/net/ethernet/microsoft/mana/mana_en.c
mutate mana $m batch-drop-no-ring tx-doorbell-batching '/^\tmana_tx_flush(apc, txq_idx);$/d'
mutate mana $m batch-ring-always tx-doorbell-batching 's/^\tif (ring)$/\tif (true)/'
mutate mana $m batch-busy-no-ring tx-doorbell-batching '/^\tif (err == NETDEV_TX_BUSY)$/,+1d'
mutate mana $m batch-teardown-no-ring tx-doorbell-batching '/^\t\tmana_tx_flush_all(apc);$/d'

# make fit over the whole corpus: each verdict as expected (two at a time).
cell() { # ID DRIVER -> "ID DRIVER VERDICT SERIES"
	BQLKIT_SRCVER=$(corpus_srcver "$1") bash "$BQLKIT_TOP/scripts/fit.sh" "$2" "$corpus/$1" "$tmp/c-$1-$2" >/dev/null 2>&1 || true
	echo "$1 $2 $(sed -n 's/^verdict \([^ ]*\).*/\1/p' "$tmp/c-$1-$2.fit" 2>/dev/null) $(sed -n 's/^series //p' "$tmp/c-$1-$2.fit" 2>/dev/null)"
}
export -f cell corpus_srcver
export corpus tmp BQLKIT_TOP
grep -v '^#' "$BQLKIT_TOP/tests/expected/fit-corpus.txt" | awk '{ print $1, $2 }' |
	xargs -P 2 -n 2 bash -c 'cell "$0" "$1"' >"$tmp/corpus.got"
while read -r id drv want series; do
	case $id in '#'* | '') continue ;; esac
	got=$(awk -v i="$id" -v d="$drv" '$1 == i && $2 == d { print $3, $4 }' "$tmp/corpus.got")
	if [ "$got" = "$want $series" ]; then
		pass "corpus-$id-$drv"
	else
		fail "corpus-$id-$drv" "got '$got', expected '$want $series'"
	fi
done <"$BQLKIT_TOP/tests/expected/fit-corpus.txt"
# Every kernel of the corpus has its verdicts there.
for d in "$corpus"/*/; do
	id=$(basename "$d")
	check "corpus-listed-$id" grep -q "^$id " "$BQLKIT_TOP/tests/expected/fit-corpus.txt"
done
n=$(grep -vc '^#' "$BQLKIT_TOP/tests/expected/fit-corpus.txt")
fits=$(grep -v '^#' "$BQLKIT_TOP/tests/expected/fit-corpus.txt" | grep -c ' \(fits\|adapted\) ')
echo "fit corpus: $fits of $n kernel x driver cells fit" >&2

# make fit prints the summary per driver (fixture input).
out=$(make -s -C "$BQLKIT_TOP" fit SRC="$corpus/upstream-7.0.0" 2>&1) && rc=0 || rc=$?
check make-fit-exit-0 test "$rc" -eq 0
has make-fit-verdict-veth "  veth: fits (fits) with series 6.18" "$out"
has make-fit-verdict-mana "  mana: fits (adapted) with series 6.18" "$out"
has make-fit-mvneta-audited "audit: mvneta: bql-sent: present" "$out"
has make-fit-build-not-checked "build: not checked (give KDIR=" "$out"
out=$(make -s -C "$BQLKIT_TOP" fit SRC="$corpus/upstream-6.17.0" 2>&1) && rc=0 || rc=$?
check make-fit-nofit-fails test "$rc" -ne 0
has make-fit-nofit-verdict "  veth: does not fit (half-present)" "$out"

# Driver files without their tree (no top Makefile): the release comes from
# SRCVER=, and only from there; a wrong one is refused before any fit.  An
# unrelated SRCVER in the environment is not read (make build, install).
mkdir -p "$tmp/nomk/drivers/net"
cp "$corpus/debian-6.12.117/drivers/net/veth.c" "$tmp/nomk/drivers/net/"
out=$(make -s -C "$BQLKIT_TOP" fit SRC="$tmp/nomk" 2>&1) && rc=0 || rc=$?
check make-fit-nomakefile-fails test "$rc" -ne 0
has make-fit-nomakefile-says-srcver "has no top-level Makefile with VERSION/PATCHLEVEL/SUBLEVEL: give the kernel tree, or SRCVER=X.Y.Z" "$out"
out=$(make -s -C "$BQLKIT_TOP" fit SRC="$tmp/nomk" SRCVER=6.12.117 2>&1) && rc=0 || rc=$?
check make-fit-srcver-exit-0 test "$rc" -eq 0
has make-fit-srcver-verdict "  veth: fits (fits) with series 6.12" "$out"
has make-fit-srcver-release "bqlkit fit: Linux 6.12.117 from" "$out"
out=$(make -s -C "$BQLKIT_TOP" fit SRC="$tmp/nomk" SRCVER=6.12 2>&1) && rc=0 || rc=$?
has make-fit-srcver-malformed "SRCVER=6.12 is not a kernel version X.Y.Z" "$out"
out=$(make -s -C "$BQLKIT_TOP" fit SRC="$corpus/debian-6.12.117" SRCVER=6.12.1 2>&1) && rc=0 || rc=$?
has make-fit-srcver-contradicts "SRCVER=6.12.1, but the Makefile of .* says 6.12.117" "$out"
out=$(make -s -C "$BQLKIT_TOP" fit SRC="$tmp/nomk" SRCVER=6.12.117 KDIR=/nonexistent 2>&1) && rc=0 || rc=$?
has make-fit-srcver-no-build "KDIR= builds a driver from a whole source" "$out"
out=$(SRCVER=1.2.3 bash "$BQLKIT_TOP/scripts/fit.sh" veth "$corpus/debian-6.12.117" "$tmp/o-envsrcver" 2>&1) && rc=0 || rc=$?
check fit-env-srcver-ignored test "$rc" -eq 0

# An adapted result builds against a prepared tree of its release (7.0 on
# 6.18's tree is not the same release: only a same-release tree counts).
n=0
while read -r label kdir; do
	kv=$(kernel_version "$kdir")
	[ -z "$(cross_for "$kdir")" ] || continue
	for c in "$corpus"/*; do
		[ "$(kernel_version "$c" 2>/dev/null)" = "$kv" ] || continue
		n=$((n + 1))
		out=$(make -s -C "$BQLKIT_TOP" fit SRC="$kdir" 2>&1) && rc=0 || rc=$?
		check "make-fit-tree-$label" test "$rc" -eq 0
		has "make-fit-tree-$label-built" "build: compiled, ABI kept" "$out"
	done
done < <(test_trees)
[ "$n" -gt 0 ] || skip make-fit-tree "not in CI: no prepared tree of a corpus release under \$BQLKIT_CACHE/trees (scripts/prepare-tree.sh)"
