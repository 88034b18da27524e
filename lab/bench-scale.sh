#!/bin/bash
# bench-scale.sh: how the kit's cost and latency gain change with queues and
# flows (make bench-scale).  The benches themselves are make bench's
# (lab/bench.sh for veth, lab/bench-mana.sh for mana), run once per point
# with a short plan; lab/scale-report.py puts the points side by side in
# results/bench-scale/scaling.{json,md,png}.  Not part of the test suite.
#
#   veth: per queue count Q and flow count F, one make bench with
#         BENCH_QUEUES=Q (the pair's tx/rx queues), BENCH_SOCKETS=F (the
#         flood's sender sockets, so F flows hashed over the Q queues),
#         BENCH_QDISC=mq (fq_codel per tx queue, as a multi-queue NIC
#         has; fq_codel as root with one queue, which mq refuses): the
#         64-byte cost flood (instructions per packet under
#         -icount) and the 64-byte slowed-receiver flood (tsprobe p50/p99
#         beside it), at the module's default tx-usecs only
#   mana: per flow count F, one make bench DRIVER=mana with
#         BENCH_QUEUES=SCALE_QUEUES (every queue count in each boot;
#         BENCH_SMP = the largest, mana makes one queue per CPU),
#         BENCH_FLOWS=F TCP streams, BENCH_LOADS=tcp under -icount: the
#         RR probe's p50/p99 and the guest's instructions per received
#         frame over the probed window
#
# Environment (make bench-scale passes these through):
#   DRIVER         veth, mana or both (both)
#   SCALE_QUEUES   queue counts (1,2,4,8)
#   SCALE_FLOWS    flow counts (1,4,16,64)
#   BENCH_KERNELS  one kernel or chroot row (trixie-6.12)
#   BENCH_RUNS     boots per point and variant (2: a noise floor per point)
#   BENCH_OUT      output directory (results/); the points' own reports
#                  go to BENCH_OUT/bench-scale/<driver>/<point>/
#   SCALE_REPORT_ONLY=1  only redo BENCH_OUT/bench-scale/scaling.* from those
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bench-lib.sh"
bench_no_empty BENCH_ SCALE_

DRIVERS=${DRIVER:-both}
QUEUES=${SCALE_QUEUES:-1,2,4,8}
FLOWS=${SCALE_FLOWS:-1,4,16,64}
KERNEL=${BENCH_KERNELS:-trixie-6.12}
RUNS=${BENCH_RUNS:-2}
OUT=${BENCH_OUT:-$BQLKIT_TOP/results}
bench_out_ok "$OUT"
[ "$DRIVERS" != both ] || DRIVERS=veth,mana
[[ $DRIVERS =~ ^(veth|mana)(,(veth|mana))?$ ]] || die "DRIVER must be veth, mana or both, not '$DRIVERS'"
[[ $QUEUES =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || die "SCALE_QUEUES must be queue counts separated by commas, not '$QUEUES'"
[[ $FLOWS =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || die "SCALE_FLOWS must be flow counts separated by commas, not '$FLOWS'"
for q in ${QUEUES//,/ }; do [ "$q" -le 16 ] || die "SCALE_QUEUES: $q is above 16 (the emulated MANA VF's queues, and vCPUs for mana)"; done
for f in ${FLOWS//,/ }; do [ "$f" -le 64 ] || die "SCALE_FLOWS: $f is above 64 (udpflood's sockets, mana's TCP streams)"; done
[[ $KERNEL =~ ^[^[:space:]]+$ ]] || die "BENCH_KERNELS: make bench-scale takes one kernel, not '$KERNEL'"
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "BENCH_RUNS must be a positive number, not '$RUNS'"
maxq=$(tr ',' '\n' <<<"$QUEUES" | sort -n | tail -1)
base=$OUT/bench-scale

report() {
	python3 "$BQLKIT_TOP/lab/scale-report.py" --out "$OUT" --kernel "$KERNEL" \
		--command "${BENCH_COMMAND:-make bench-scale}"
}
if [ -n "${SCALE_REPORT_ONLY:-}" ]; then
	report
	exit 0
fi

start=$SECONDS
export BENCH_KERNELS=$KERNEL BENCH_RUNS=$RUNS
for d in ${DRIVERS//,/ }; do
	if [ "$d" = veth ]; then
		for q in ${QUEUES//,/ }; do
			for f in ${FLOWS//,/ }; do
				step "bench-scale veth: $q queue(s), $f flow(s)"
				mkdir -p "$base/veth/q$q-f$f"
				# mq refuses a one-queue device: fq_codel as its root there.
				qdisc=mq
				[ "$q" -gt 1 ] || qdisc=root
				BENCH_OUT=$base/veth/q$q-f$f BENCH_QUEUES=$q BENCH_SOCKETS=$f BENCH_QDISC=$qdisc \
					BENCH_COST_COUNT=${SCALE_COST_COUNT:-20000} BENCH_COST_PAYLOADS=64 BENCH_COST_TX_USECS=def \
					BENCH_SPLIT=0 BENCH_PAYLOADS=64 BENCH_TX_USECS=def BENCH_SWEEP_PAYLOADS=none \
					BENCH_COMMAND="make bench-scale (veth q$q f$f)" "$BQLKIT_TOP/lab/bench.sh"
			done
		done
	else
		for f in ${FLOWS//,/ }; do
			step "bench-scale mana: queues $QUEUES, $f flow(s)"
			mkdir -p "$base/mana/f$f"
			BENCH_OUT=$base/mana/f$f BENCH_QUEUES=$QUEUES BENCH_SMP=$((maxq < 2 ? 2 : maxq)) BENCH_FLOWS=$f \
				BENCH_LOADS=tcp BENCH_COST_COUNT=0 BENCH_SECS=${SCALE_SECS:-4} BENCH_MODE=icount \
				BENCH_COMMAND="make bench-scale (mana f$f)" "$BQLKIT_TOP/lab/bench-mana.sh"
		done
	fi
done
report
note "bench-scale: $(((SECONDS - start) / 60)) min; see $base/scaling.md"
