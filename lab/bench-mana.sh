#!/bin/bash
# bench-mana.sh: stock vs kit mana on the emulated MANA VF (make bench DRIVER=mana).
#
# For each kernel, tests/vm/mana-dev.sh boots the guest scenario
# tests/vm/guest/mana-bench.sh BENCH_RUNS times with the kernel's own
# mana.ko and BENCH_RUNS times with the kit's (interleaved: stock,kit then
# kit,stock, ...).  Two emulated VFs are wired together; the device model
# limits the wire from A to B to BENCH_RATE Mbit/s, so the SQ fills as on a
# real NIC.  Per queue count in BENCH_QUEUES: a TCP request/response probe
# and ping from A to B, idle and then beside each load of BENCH_LOADS
# (TCP streams, a UDP flood) from A to B; the wire's throughput, A's BQL
# and the device's doorbell counters beside them.  lab/bench-mana-report.py turns the console
# logs into results/bench-mana-<kernel>.json, results/bench-mana.md and
# results/bench-mana.png.  Not part of the test suite: nothing here passes
# or fails on the numbers (a run whose guest could not measure is kept out
# of the medians and counted as failed).
#
# Environment (make bench DRIVER=mana passes these through):
#   BENCH_KERNELS  kernels: an installed kernel (its headers here; default
#                  build/test-kernels, made by tests/setup.sh) or a row of
#                  lab/matrix.conf built in a chroot (trixie-6.12,
#                  sid-7.2, trixie-bpo-7.3: `make matrix` builds the
#                  module there, the VM boots that suite's kernel)
#   BENCH_RUNS     VM boots per kernel and variant (3)
#   BENCH_RATE     the emulated wire's rate, Mbit/s (20).  The wire must be
#                  the bottleneck (a TCG guest sends TCP at ~400 Mbit/s here,
#                  1400-byte UDP at ~70), and the standing queue the stock
#                  driver builds in the SQ must be long against the TX
#                  completion latency that bounds BQL's limit, as on a real
#                  NIC.  Under TCG that latency is ~10 ms (a guest whose two
#                  vCPUs the load keeps busy): the kit's loaded p50 stays
#                  near 10 ms at 20, 50 and 100 Mbit/s while the stock one
#                  shrinks with the rate (measured on 6.12: TCP p50 stock/kit
#                  6.2x at 20, 1.7x at 100 Mbit/s)
#   BENCH_QUEUES   queue counts measured per boot, comma separated (1,2;
#                  at most BENCH_SMP: mana makes one queue per CPU)
#   BENCH_LOADS    the loads beside the probes, comma separated (tcp,udp):
#                  tcp = BENCH_FLOWS TCP streams, udp = a UDP flood of
#                  1400-byte datagrams from BENCH_FLOWS sockets
#   BENCH_FLOWS    TCP streams / UDP sockets of the load (8)
#   BENCH_SECS     seconds of probes under load per case (8)
#   BENCH_SMP      vCPUs (2)
#   BENCH_MODE     the latency boots' emulation: icount (default: -icount
#                  BENCH_ICOUNT, one TCG thread, guest time = instructions,
#                  the device's wire and completions on that time, tx-sync=1;
#                  the host's load does not reach the numbers) or mttcg
#                  (multi-threaded TCG, guest time = the host's: the older
#                  results)
#   BENCH_TURN_US  icount: during the latency cases the TCG thread moves
#                  to the next vCPU at least every N us of guest time (20,
#                  the insncount plugin's turn_us; 0 = QEMU's own turns)
#   BENCH_GSO_MAX  A's gso_max_size in the latency boots, both variants
#                  (16384; 0: the kernel's, 65536).  DQL's limit settles at
#                  about two of the largest packets (results/bench-mana.md),
#                  and at 20 Mbit/s a 64 KB TSO packet is 26 ms of wire
#   BENCH_MIN_TSO_SEGS  A's net.ipv4.tcp_min_tso_segs in the latency boots,
#                  both variants (12; 0: the kernel's, 2).  TCP sizes its
#                  TSO packets from its pacing rate (tcp_tso_autosize()):
#                  at this wire's 20 Mbit/s a stream's packets depend on
#                  its history, and the stock queue's depth with them (the
#                  bimodal stock p50 of docs/mana.md); 12 makes every one
#                  the largest that BENCH_GSO_MAX=16384 allows (11 MSS), as
#                  a fast NIC's pacing rate does
#   BENCH_TX_RING  A's TX ring in WQEs (ethtool -G maA tx N) in the
#                  latency boots, both variants (1024; 0: the driver's,
#                  256).  The SQ holds a number of WQEs: on this wire
#                  TCP sends most of its packets one MSS per WQE, and with
#                  256 the SQ filled before TCP Small Queues bounded the
#                  stock's streams in some runs and not others, two
#                  regimes of the stock p50 (docs/mana.md, "The stock's
#                  two bounds"); 1024 leaves TCP's budget the one bound
#   BENCH_LATENCY  1: the latency boots above (BENCH_MODE); 0: none
#                  (the report keeps the latency numbers of the last run
#                  that made them)
#   BENCH_COST_COUNT  datagrams per cost flood (50000; 0 = no cost boots).
#                  Per kernel and variant BENCH_RUNS more boots under
#                  -icount BENCH_ICOUNT with the insncount TCG plugin, the
#                  VFs sending from the doorbell write (tx-sync=1: at the
#                  same guest instruction in every run, not in a bottom
#                  half the host schedules): per queue count,
#                  BENCH_COST_REPS identical floods of
#                  BENCH_COST_PAYLOAD-byte datagrams on an unlimited wire;
#                  guest instructions per delivered datagram (both vCPUs,
#                  kernel and user, between the sender's first datagram and
#                  the sink's last) and the device's doorbells per datagram
#                  (the kit's cost per packet, free of host noise)
#   BENCH_COST_REPS     identical cost floods per boot and queue count (2)
#   BENCH_COST_QUEUES   queue counts of the cost floods (1; with 2 the
#                  sink's vCPU also polls one RX queue, and in some floods
#                  that softirq starved the sink: 86 % of the datagrams
#                  lost in the socket, stock and kit alike)
#   BENCH_COST_PAYLOAD  their UDP payload, bytes (64)
#   BENCH_COST_GSO  0: one datagram per send, and so (every interrupt on
#                  vCPU 0, the VFs sending from the doorbell write) a NAPI
#                  poll of B's per frame.  N (2 to 64): each send a UDP GSO
#                  write that A's stack cuts into N datagrams and sends with
#                  xmit_more, bottom halves off: B's poll then runs once
#                  they are all in, and finds N frames (the RX doorbell
#                  batching's case: one RQ doorbell per poll, not per
#                  frame).  BENCH_COST_COUNT stays the datagrams per flood.
#                  (B's napi_defer_hard_irqs cannot batch B's polls: mana
#                  6.x arms its CQ whatever napi_complete_done() returns;
#                  B's interrupts on the sink's vCPU batch hundreds of
#                  frames per poll and lose most of them: RR TCG slices.)
#   BENCH_MANA_BATCHING  1: the kit's opt-in SQ doorbell batching on
#                  (tx_doorbell_batching=1) in every boot of the kit's
#                  module; 0 (default): off, as installed
#   BENCH_ICOUNT   the cost boots' -icount option (shift=2,sleep=off,align=off)
#   BENCH_OUT      output directory (results/)
#   BENCH_REPORT_ONLY=1  only regenerate json/md/png from the logs in BENCH_OUT
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bench-lib.sh"

bench_no_empty
RUNS=${BENCH_RUNS:-3}
RATE=${BENCH_RATE:-20}
QUEUES=${BENCH_QUEUES:-1,2}
LOADS=${BENCH_LOADS:-tcp,udp}
FLOWS=${BENCH_FLOWS:-8}
SECS=${BENCH_SECS:-8}
SMP=${BENCH_SMP:-2}
LATENCY=${BENCH_LATENCY:-1}
COST=${BENCH_COST_COUNT:-50000}
COST_REPS=${BENCH_COST_REPS:-2}
COST_PAYLOAD=${BENCH_COST_PAYLOAD:-64}
COST_QUEUES=${BENCH_COST_QUEUES:-1}
COST_GSO=${BENCH_COST_GSO:-0}
BATCHING=${BENCH_MANA_BATCHING:-0}
ICOUNT=${BENCH_ICOUNT:-shift=2,sleep=off,align=off}
MODE=${BENCH_MODE:-icount}
TURN_US=${BENCH_TURN_US:-20}
GSO_MAX=${BENCH_GSO_MAX:-16384}
MIN_TSO=${BENCH_MIN_TSO_SEGS:-12}
TX_RING=${BENCH_TX_RING:-1024}
OUT=${BENCH_OUT:-$BQLKIT_TOP/results}
bench_out_ok "$OUT"
VM=$BQLKIT_TOP/tests/vm
TEST_KERNELS_FILE=${TEST_KERNELS_FILE:-$BQLKIT_BUILD/test-kernels}

[[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "BENCH_RUNS must be a positive number, not '$RUNS'"
[[ $RATE =~ ^[1-9][0-9]*$ && $RATE -le 100000 ]] || die "BENCH_RATE must be Mbit/s from 1 to 100000, not '$RATE'"
[[ $FLOWS =~ ^[1-9][0-9]*$ && $FLOWS -le 64 ]] || die "BENCH_FLOWS must be a number of TCP streams from 1 to 64, not '$FLOWS'"
[[ $SECS =~ ^[0-9]+$ && $SECS -ge 4 ]] || die "BENCH_SECS must be a number >= 4, not '$SECS'"
[[ $SMP =~ ^[1-9][0-9]*$ && $SMP -le 16 ]] || die "BENCH_SMP must be a number of vCPUs from 1 to 16, not '$SMP'"
[[ $MODE =~ ^(icount|mttcg)$ ]] || die "BENCH_MODE must be icount or mttcg, not '$MODE'"
[[ $TURN_US =~ ^[0-9]+$ && $TURN_US -le 1000000 ]] || die "BENCH_TURN_US must be microseconds from 0 (QEMU's own turns) to 1000000, not '$TURN_US'"
[[ $GSO_MAX =~ ^[0-9]+$ && ($GSO_MAX = 0 || ($GSO_MAX -ge 1500 && $GSO_MAX -le 65536)) ]] || die "BENCH_GSO_MAX must be 0 (the kernel's) or bytes from 1500 to 65536, not '$GSO_MAX'"
[[ $MIN_TSO =~ ^[0-9]+$ && $MIN_TSO -le 64 ]] || die "BENCH_MIN_TSO_SEGS must be 0 (the kernel's) or segments from 1 to 64, not '$MIN_TSO'"
[[ $TX_RING =~ ^[0-9]+$ ]] && ((TX_RING == 0 || (TX_RING >= 128 && TX_RING <= 16384 && (TX_RING & (TX_RING - 1)) == 0))) || die "BENCH_TX_RING must be 0 (the driver's) or a power of two from 128 to 16384 WQEs (mana's ethtool -G range), not '$TX_RING'"
[[ $LATENCY =~ ^[01]$ ]] || die "BENCH_LATENCY must be 1 (latency boots) or 0 (none), not '$LATENCY'"
[[ $COST =~ ^[0-9]+$ && $COST -le 10000000 ]] || die "BENCH_COST_COUNT must be a number of datagrams from 0 (no cost boots) to 10000000, not '$COST'"
[[ $COST_REPS =~ ^[1-9][0-9]*$ && $COST_REPS -le 20 ]] || die "BENCH_COST_REPS must be a number of floods from 1 to 20, not '$COST_REPS'"
[[ $COST_PAYLOAD =~ ^[0-9]+$ && $COST_PAYLOAD -le 1472 ]] || die "BENCH_COST_PAYLOAD must be a UDP payload from 0 to 1472 bytes (one frame), not '$COST_PAYLOAD'"
[[ $ICOUNT =~ ^[a-z0-9=,]+$ ]] || die "BENCH_ICOUNT must be an -icount option such as shift=2,sleep=off,align=off, not '$ICOUNT'"
[[ $COST_GSO =~ ^[0-9]+$ && $COST_GSO -le 64 && $COST_GSO -ne 1 ]] || die "BENCH_COST_GSO must be 0 (one datagram per send) or datagrams per GSO send from 2 to 64, not '$COST_GSO'"
[[ $COST_GSO = 0 || $((COST_GSO * COST_PAYLOAD)) -le 65000 ]] || die "BENCH_COST_GSO=$COST_GSO of BENCH_COST_PAYLOAD=$COST_PAYLOAD bytes: more than a UDP write holds (65000)"
[[ $BATCHING =~ ^[01]$ ]] || die "BENCH_MANA_BATCHING must be 0 (the kit's SQ doorbell batching off, as installed) or 1 (on), not '$BATCHING'"
[[ $COST_QUEUES =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || die "BENCH_COST_QUEUES must be queue counts separated by commas, not '$COST_QUEUES'"
[[ $LATENCY = 1 || $COST -gt 0 ]] || die "BENCH_LATENCY=0 and BENCH_COST_COUNT=0: nothing to bench"
[[ $QUEUES =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || die "BENCH_QUEUES must be queue counts separated by commas, not '$QUEUES'"
[[ $LOADS =~ ^(tcp|udp)(,(tcp|udp))*$ ]] || die "BENCH_LOADS must be tcp, udp or both separated by a comma, not '$LOADS'"
for v in QUEUES COST_QUEUES; do
	for q in ${!v//,/ }; do
		[ "$q" -le "$SMP" ] || die "BENCH_$v: $q queues need BENCH_SMP=$q or more vCPUs (mana makes one queue per CPU)"
	done
done
PARAMS="rate_mbps=$RATE queues=$QUEUES loads=$LOADS flows=$FLOWS secs=$SECS smp=$SMP runs=$RUNS latency=$LATENCY cost_count=$COST cost_reps=$COST_REPS cost_payload=$COST_PAYLOAD cost_queues=$COST_QUEUES cost_gso=$COST_GSO batching=$BATCHING icount=$ICOUNT mode=$MODE gso_max=$GSO_MAX min_tso_segs=$MIN_TSO tx_ring=$TX_RING"
[ "$MODE" != icount ] || PARAMS+=" turn_us=$TURN_US"

start=$SECONDS
if [ -z "${BENCH_KERNELS:-}" ]; then
	if [ -z "${BENCH_REPORT_ONLY:-}" ] && [ ! -s "$TEST_KERNELS_FILE" ]; then
		"$BQLKIT_TOP/tests/setup.sh"
	fi
	[ -s "$TEST_KERNELS_FILE" ] || die "no kernels to bench: give BENCH_KERNELS=<kernel> or run tests/setup.sh"
	BENCH_KERNELS=$(tr '\n' ' ' <"$TEST_KERNELS_FILE")
fi
read -r -a kernels <<<"$BENCH_KERNELS"
[ ${#kernels[@]} -gt 0 ] || die "no kernels to bench (BENCH_KERNELS is empty)"

if [ -z "${BENCH_REPORT_ONLY:-}" ]; then
	for k in "${kernels[@]}"; do bench_check_kernel "$k"; done
fi

mkdir -p "$OUT"
report() {
	python3 "$BQLKIT_TOP/lab/bench-mana-report.py" --out "$OUT" --runs "$RUNS" \
		--wall "${BENCH_WALL:-$((SECONDS - start))}" --command "${BENCH_COMMAND:-make bench DRIVER=mana}" \
		--params "$PARAMS" -- "${kernels[@]}"
}
if [ -n "${BENCH_REPORT_ONLY:-}" ]; then
	BENCH_WALL=-1 # keep the wall time of the run that made the logs
	report
	exit 0
fi

"$BQLKIT_TOP/scripts/install-deps.sh" bench
qdir=$("$BQLKIT_TOP/lab/build-qemu.sh" | tail -n1)
mkdir -p "$BQLKIT_BUILD"
tmpd=$(mktemp -d "$BQLKIT_BUILD/bench-mana.XXXXXX")
trap 'rm -rf "$tmpd"' EXIT

# Per boot: boot and setup, then per case the idle probes, warm-up, load
# and drain, all under TCG on a loaded 2-core host (a bound, not an
# estimate).  One TCG thread runs every vCPU: 8 vCPUs took ~6 s of host
# time per guest second, 2 took ~2.3 s (make bench-scale, 6.12).
nq=$(tr ',' '\n' <<<"$QUEUES" | wc -l)
nl=$(tr ',' '\n' <<<"$LOADS" | wc -l)
tmo=$((300 + nq * (4 + nl * (SECS + 2 + 5)) * 8 * (SMP > 2 ? SMP / 2 : 1)))
append="bqlkit.rate=$RATE bqlkit.queues=$QUEUES bqlkit.loads=$LOADS bqlkit.flows=$FLOWS bqlkit.secs=$SECS bqlkit.batching=$BATCHING bqlkit.gso_max=$GSO_MAX bqlkit.min_tso_segs=$MIN_TSO bqlkit.tx_ring=$TX_RING"
# The latency boots' emulation (BENCH_MODE).  Under -icount the plugin
# sets the vCPU turns and counts the instructions of each loaded case's
# probed window (the guest marks it; bench-mana-<k>-<variant>-<run>.insn
# beside the log: instructions per frame under load, per case).
latargs=()
if [ "$MODE" = icount ]; then
	latargs=(--icount "$ICOUNT" --vf-props tx-sync=1)
	if [ "$TURN_US" -gt 0 ]; then
		latargs+=(--plugin "insncount,out=@INSN@,turn_us=$TURN_US")
		append+=" bqlkit.turns=short"
	else
		latargs+=(--plugin "insncount,out=@INSN@")
	fi
fi
# Cost boots: boot and setup, per queue count and flood a port reset, the
# flood and the device's counters; a bound for a loaded host (one TCG
# thread runs both vCPUs, ~2-6 us of host time per guest datagram here).
ctmo=$((300 + $(tr ',' '\n' <<<"$COST_QUEUES" | wc -l) * COST_REPS * (60 + COST / 500)))
cappend="bqlkit.latency=0 bqlkit.queues=$COST_QUEUES bqlkit.cost=$COST bqlkit.cost_reps=$COST_REPS bqlkit.cost_payload=$COST_PAYLOAD bqlkit.cost_gso=$COST_GSO bqlkit.batching=$BATCHING"

# boot WHAT LOG ARGS...: one VM of kernel $kver (row $k), run $r, variant
# $v (the loop's: the kit's module in mod[] or none), with mana-dev.sh ARGS.
boot() {
	local what=$1 logf=$2 load0
	shift 2
	step "$k: run $r/$RUNS $v$what"
	load0=$(cut -d' ' -f1 /proc/loadavg)
	if ! "$VM/mana-dev.sh" --kver "$kver" ${suite:+--suite "$suite"} "${mod[@]}" --scenario mana-bench \
		--qemu "$qdir" --smp "$SMP" --log "$logf" --quiet "$@" >"$tmpd/run.out" 2>&1; then
		note "$k $v run $r$what failed: $(tail -1 "$tmpd/run.out") (kept out of the medians)"
		failed=$((failed + 1))
	fi
	bench_host_load "$logf" "$load0"
}

failed=0
for k in "${kernels[@]}"; do
	row=$(bench_chroot_row "$k")
	suite=''
	if [ -n "$row" ]; then
		read -r suite _ <<<"$row"
		step "$k: building the kit's mana.ko in the $suite chroot (make matrix)"
		# Its logs outlive this script's temporary directory.
		blog=$BQLKIT_BUILD/bench-mana-build-$k.log
		: >"$blog"
		cb=$(bench_chroot_build "$k" mana "$tmpd/matrix" "$blog") || exit 1
		read -r kver built <<<"$cb"
	else
		kver=$k
		step "$k: building the kit's mana.ko"
		blog=$BQLKIT_BUILD/bench-mana-build-$k.log
		BQLKIT_DRIVERS=mana kit_build "$k" mana >"$blog" 2>&1 ||
			{ tail -5 "$blog" >&2; die "$k: the build of the kit's mana failed (log: $blog)"; }
		built=$BQLKIT_BUILD/$k/mana.ko
	fi
	# Our own copy: build/ is shared, another build must not change it mid-run.
	ko=$tmpd/mana-$kver.ko
	cp "$built" "$ko"
	{
		echo "kernel=$kver"
		echo "row=${row:+$k}"
		echo "suite=$suite"
		echo "git=$(git -C "$BQLKIT_TOP" describe --always --dirty 2>/dev/null || echo NA)"
		for f in version srcversion bqlkit vermagic; do echo "$f=$(modinfo -F "$f" "$ko" | head -1)"; done
		echo "sha256=$(sha256sum "$ko" | cut -d' ' -f1)"
	} >"$tmpd/info.log"
	if [ "$LATENCY" = 1 ]; then
		cp "$tmpd/info.log" "$OUT/bench-mana-$k-info.log"
		rm -f "$OUT/bench-mana-$k-"{stock,kit}-*.{log,insn}
	fi
	if [ "$COST" -gt 0 ]; then
		cp "$tmpd/info.log" "$OUT/bench-mana-$k-cost-info.log"
		rm -f "$OUT/bench-mana-$k-cost-"{stock,kit}-*.{log,insn}
	fi
	for r in $(seq 1 "$RUNS"); do
		for v in $(bench_order "$r"); do
			mod=()
			[ "$v" = stock ] || mod=(--module "$ko")
			[ "$LATENCY" = 0 ] || boot '' "$OUT/bench-mana-$k-$v-$r.log" --append "$append" --timeout "$tmo" \
				"${latargs[@]//@INSN@/$OUT/bench-mana-$k-$v-$r.insn}"
			[ "$COST" = 0 ] || boot ' (cost, icount)' "$OUT/bench-mana-$k-cost-$v-$r.log" --append "$cappend" \
				--timeout "$ctmo" --icount "$ICOUNT" --vf-props tx-sync=1 \
				--plugin "insncount,out=$OUT/bench-mana-$k-cost-$v-$r.insn"
		done
	done
done
step "writing the report"
report
note "bench (mana): $(((SECONDS - start) / 60))m$(((SECONDS - start) % 60))s, $failed failed run(s); see $OUT/bench-mana.md"
