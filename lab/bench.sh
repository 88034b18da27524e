#!/bin/bash
# bench.sh: stock vs kit veth benchmark under QEMU TCG (make bench).
#
# For each kernel the same VM (tests/vm/guest/bench.sh) is booted BENCH_RUNS
# times with the kernel's stock veth.ko and BENCH_RUNS times with the kit's
# (interleaved: stock,kit then kit,stock, ...).  One boot = one run of a
# plan of UDP floods, each on a fresh veth pair: first the cost floods (a
# fixed number of datagrams, unslowed receiver; the insncount TCG plugin
# counts the guest's instructions between the sender's first datagram and
# the sink's last), then the idle latency and the slowed-receiver floods
# (BENCH_SLOW ingress filters; tsprobe's kernel-timestamped one-way delays
# and ping's RTTs).  The kit's boot sets ethtool -C tx-usecs before each
# flood; the stock boot runs the same floods without that step (so its
# floods of one kind are identical: their spread is the noise floor).  The
# order of the tx-usecs settings is reversed on even runs.  QEMU is the
# kit's (lab/build-qemu.sh: Debian's source with TCG plugins) and, by
# default, counts instructions for time (-icount): the host's load does not
# reach the numbers.  lab/bench-report.py turns the console logs and
# the plugin's counts into results/bench-<kver>.json, results/bench.md and
# results/bench.png.  Not part of the test suite: nothing here passes or
# fails on the numbers.
#
# Environment (make bench passes these through):
#   BENCH_KERNELS   kernels to bench: an installed kernel (its headers here;
#                   default build/test-kernels, made by tests/setup.sh) or
#                   a row of lab/matrix.conf built in a chroot
#                   (trixie-6.12, sid-7.2, trixie-bpo-7.3: `make matrix`
#                   builds veth.ko there, the VM boots that suite's kernel)
#   BENCH_RUNS      VM boots per kernel and variant (4); medians are over runs
#   BENCH_MODE      icount (default: -icount BENCH_ICOUNT, one TCG thread,
#                   guest time = instructions; 6.1 boots with two vCPUs since
#                   lab/qemu/patches/0003) or mttcg (multi-threaded TCG,
#                   guest time = the host's; the older benches)
#   BENCH_ICOUNT    the -icount option (shift=2,sleep=off,align=off: 4 ns per
#                   instruction, idle time skipped)
#   BENCH_TURN_US   icount: during the idle probes and the timed floods the
#                   one TCG thread moves to the next vCPU at least every N us
#                   of guest time (20; the insncount plugin's turn_us, set at
#                   the guest's short-turns marker; 0 = QEMU's own turns
#                   throughout, where a busy vCPU runs ~1 ms until a guest
#                   timer ends its turn).  The cost floods always run with
#                   QEMU's own turns: short ones make a vCPU that spins on a
#                   lock the other holds spin through its turn
#   BENCH_COST_COUNT     datagrams per cost flood (100000)
#   BENCH_COST_PAYLOADS  payloads of the cost floods (64; none = skip)
#   BENCH_COST_TX_USECS  the kit's tx-usecs settings for them (def,100; def =
#                        the module's default)
#   BENCH_SPLIT     1: also the split cost floods (vethB's NAPI in a kthread on
#                   vCPU 1: sender's and receiver's paths counted apart); 0: not
#   BENCH_SLOW      receiver slowdown: number of ingress u32 filters (100)
#   BENCH_PAYLOADS  slowed floods at the kit's main tx-usecs: UDP payload
#                   sizes, comma separated (64,1472)
#   BENCH_SECS      seconds per slowed flood (4)
#   BENCH_SOCKETS   sender sockets (4)
#   BENCH_QUEUES    tx and rx queues of each end of the veth pair
#                   (numtxqueues/numrxqueues; unset: veth's default, one
#                   per possible CPU, 2 here): the sockets' flows spread
#                   over them by hash, each queue with its own DQL and
#                   ring.  BENCH_QDISC=mq needs 2 or more
#   BENCH_TX_USECS  the kit's tx-usecs settings for the slowed floods (def,100,500;
#                   ethtool -C on vethA: BQL completion coalescing, 0 = complete
#                   per packet); BENCH_PAYLOADS run at def if listed, else at
#                   the first setting
#   BENCH_SWEEP_PAYLOADS  payloads slowed at every BENCH_TX_USECS setting (64)
#   BENCH_UNSLOWED_PAYLOADS  payloads of timed unslowed floods (none; 64 = as
#                   the older benches, sink pps with ping beside)
#   BENCH_UNSLOWED_TX_USECS  the kit's tx-usecs settings for them (def,100)
#   BENCH_UNSLOWED_SECS      seconds per unslowed flood (4)
#   BENCH_PROFILE   1: the plugin also writes a per-address profile of every
#                   cost flood (bench-<kver>-<variant>-<run>.prof; kernel
#                   booted with nokaslr; the guest prints its kallsyms into
#                   the console log, and lab/insncount.py profile reads
#                   both; insncount.py annotate puts a function's counts
#                   beside its disassembly)
#   BENCH_QDISC     vethA's qdisc: root (fq_codel as root qdisc, the default)
#                   or mq (mq with fq_codel per tx queue: one-txqueue
#                   qdiscs, which dequeue nothing while BQL stops the txq;
#                   docs/design.md)
#   BENCH_LIMIT_MAX N: the kit boot caps DQL's limit on vethA's tx queues
#                   at N packets (byte_queue_limits/limit_max, before every
#                   flood; needs that sysfs directory, which veth has only
#                   before 6.9); unset: DQL's own limit
#   BENCH_PIN_HARNESS 1: the guest's bench shell and everything it starts
#                   (sink, probes, samplers) run on vCPU 0 beside the
#                   sender, so vCPU 1 is left to vethB's NAPI thread and
#                   the kernel's own threads; 0 (default): the guest's
#                   scheduler places them (on 7.x it put them beside the
#                   NAPI thread often enough to make the kit's p99)
#   BENCH_TRACE_MS  N: N ms of kernel events (qdisc, xmit, NAPI, softirq,
#                   scheduler; tracefs) 1 s into every timed flood, printed
#                   into the console log (lab/trace-report.py); 0: none (0)
#   BENCH_OUT       output directory (results/)
#   BENCH_REPORT_ONLY=1  only regenerate json/md/png from the logs in BENCH_OUT
set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
. "$(dirname "$0")/bench-lib.sh"

bench_no_empty
RUNS=${BENCH_RUNS:-4}
MODE=${BENCH_MODE:-icount}
ICOUNT=${BENCH_ICOUNT:-shift=2,sleep=off,align=off}
TURN_US=${BENCH_TURN_US:-20}
COST_COUNT=${BENCH_COST_COUNT:-100000}
COST_PAYLOADS=${BENCH_COST_PAYLOADS:-64}
COST_TX_USECS=${BENCH_COST_TX_USECS:-def,100}
SPLIT=${BENCH_SPLIT:-1}
SLOW=${BENCH_SLOW:-100}
PAYLOADS=${BENCH_PAYLOADS:-64,1472}
SECS=${BENCH_SECS:-4}
SOCKETS=${BENCH_SOCKETS:-4}
QUEUES=${BENCH_QUEUES:-}
TX_USECS=${BENCH_TX_USECS:-def,100,500}
SWEEP_PAYLOADS=${BENCH_SWEEP_PAYLOADS:-64}
UN_PAYLOADS=${BENCH_UNSLOWED_PAYLOADS:-none}
UN_TX_USECS=${BENCH_UNSLOWED_TX_USECS:-def,100}
UN_SECS=${BENCH_UNSLOWED_SECS:-4}
PROFILE=${BENCH_PROFILE:-0}
OUT=${BENCH_OUT:-$BQLKIT_TOP/results}
bench_out_ok "$OUT"
VM=$BQLKIT_TOP/tests/vm
VM_BUILD=${BQLKIT_VM_BUILD:-$BQLKIT_CACHE/vm}
TEST_KERNELS_FILE=${TEST_KERNELS_FILE:-$BQLKIT_BUILD/test-kernels}
[ "$SWEEP_PAYLOADS" != none ] || SWEEP_PAYLOADS=''
[ "$UN_PAYLOADS" != none ] || UN_PAYLOADS=''
[ "$COST_PAYLOADS" != none ] || COST_PAYLOADS=''
case $MODE in
icount | mttcg) ;;
*) die "BENCH_MODE must be icount or mttcg, not '$MODE'" ;;
esac
[[ $ICOUNT =~ ^[a-z0-9=,]+$ ]] || die "BENCH_ICOUNT must be an -icount option such as shift=2,sleep=off,align=off, not '$ICOUNT'"
[[ $TURN_US =~ ^[0-9]+$ && $TURN_US -le 1000000 ]] || die "BENCH_TURN_US must be microseconds (0..1000000; 0 = QEMU's own turns), not '$TURN_US'"
[[ $COST_COUNT =~ ^[1-9][0-9]*$ ]] || die "BENCH_COST_COUNT must be a positive number, not '$COST_COUNT'"
[[ $SPLIT =~ ^[01]$ ]] || die "BENCH_SPLIT must be 0 or 1, not '$SPLIT'"
[[ $PROFILE =~ ^[01]$ ]] || die "BENCH_PROFILE must be 0 or 1, not '$PROFILE'"
TRACE_MS=${BENCH_TRACE_MS:-0}
QDISC=${BENCH_QDISC:-root}
[[ $QDISC =~ ^(root|mq)$ ]] || die "BENCH_QDISC must be root (fq_codel as vethA's root qdisc) or mq (mq with fq_codel per tx queue), not '$QDISC'"
LIMIT_MAX=${BENCH_LIMIT_MAX:-}
[ -z "$LIMIT_MAX" ] || [[ $LIMIT_MAX =~ ^[0-9]+$ && $LIMIT_MAX -le 256 ]] || die "BENCH_LIMIT_MAX must be a number of packets (0..256, veth's ring; unset = DQL's own limit), not '$LIMIT_MAX'"
PIN_HARNESS=${BENCH_PIN_HARNESS:-0}
[[ $PIN_HARNESS =~ ^[01]$ ]] || die "BENCH_PIN_HARNESS must be 0 or 1, not '$PIN_HARNESS'"
[[ $TRACE_MS =~ ^[0-9]+$ && $TRACE_MS -le 2000 ]] || die "BENCH_TRACE_MS must be milliseconds (0..2000; 0 = no trace), not '$TRACE_MS'"

[[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "BENCH_RUNS must be a positive number, not '$RUNS'"
[[ $SLOW =~ ^[0-9]+$ ]] || die "BENCH_SLOW must be a number, not '$SLOW'"
[[ $SECS =~ ^[0-9]+$ && $SECS -ge 4 ]] || die "BENCH_SECS must be a number >= 4, not '$SECS'"
[[ $UN_SECS =~ ^[0-9]+$ && $UN_SECS -ge 4 ]] || die "BENCH_UNSLOWED_SECS must be a number >= 4, not '$UN_SECS'"
[[ $SOCKETS =~ ^[1-9][0-9]*$ && $SOCKETS -le 64 ]] || die "BENCH_SOCKETS must be a number of sender sockets from 1 to 64, not '$SOCKETS'"
[ -z "$QUEUES" ] || [[ $QUEUES =~ ^[1-9][0-9]*$ && $QUEUES -le 64 ]] || die "BENCH_QUEUES must be one number of veth queues from 1 to 64, not '$QUEUES'"
[ "$QUEUES" != 1 ] || [ "$QDISC" != mq ] || die "BENCH_QDISC=mq needs 2 or more queues (mq refuses a one-queue device): give BENCH_QUEUES=2 or more, or BENCH_QDISC=root"
for v in TX_USECS:BENCH_TX_USECS UN_TX_USECS:BENCH_UNSLOWED_TX_USECS COST_TX_USECS:BENCH_COST_TX_USECS; do
	name=${v%%:*} env=${v#*:}
	val=${!name}
	[[ $val =~ ^(def|[0-9]+)(,(def|[0-9]+))*$ ]] || die "$env must be microseconds (or def, the module's default) separated by commas, not '$val'"
	for t in ${val//,/ }; do
		[ "$t" = def ] || [ "$t" -le 1000000 ] || die "$env: $t us is above veth's maximum (1000000)"
	done
done
for v in PAYLOADS:BENCH_PAYLOADS SWEEP_PAYLOADS:BENCH_SWEEP_PAYLOADS UN_PAYLOADS:BENCH_UNSLOWED_PAYLOADS COST_PAYLOADS:BENCH_COST_PAYLOADS; do
	name=${v%%:*} env=${v#*:}
	val=${!name}
	[ -n "$val" ] || [ "$env" != BENCH_PAYLOADS ] || die "BENCH_PAYLOADS must not be empty"
	[ -z "$val" ] || [[ $val =~ ^[0-9]+(,[0-9]+)*$ ]] || die "$env must be sizes separated by commas, not '$val'"
	for p in ${val//,/ }; do
		if [ "$p" -lt 18 ] || [ "$p" -gt 1472 ]; then
			die "$env: $p is not within 18..1472 (one unfragmented packet)"
		fi
	done
done
# The setting BENCH_PAYLOADS run at (the module's default if it is listed).
MAIN_TX_USECS=${TX_USECS%%,*}
[[ ,$TX_USECS, != *,def,* ]] || MAIN_TX_USECS=def

# plan RUN: the guest's flood plan (KIND:TXUS:PAYLOAD:SECS,...), tx-usecs
# order reversed on even runs so that drift within a boot hits all alike.
# The guest's plan says "-" for the module's default.
plan() {
	local rev=$(($1 % 2 == 0)) items=() p t ts
	order() { if [ "$rev" = 1 ]; then tr ',' '\n' <<<"$1" | tac | paste -sd' '; else echo "${1//,/ }"; fi; }
	if [ -n "$COST_PAYLOADS" ]; then
		for p in ${COST_PAYLOADS//,/ }; do
			for t in $(order "$COST_TX_USECS"); do
				items+=("c:$t:$p:$COST_COUNT")
				[ "$SPLIT" = 0 ] || items+=("t:$t:$p:$COST_COUNT")
			done
		done
	fi
	if [ -n "$UN_PAYLOADS" ]; then
		for p in ${UN_PAYLOADS//,/ }; do
			for t in $(order "$UN_TX_USECS"); do items+=("u:$t:$p:$UN_SECS"); done
		done
	fi
	for p in $(tr ',' '\n' <<<"$PAYLOADS${SWEEP_PAYLOADS:+,$SWEEP_PAYLOADS}" | sort -n -u); do
		if [[ ,$SWEEP_PAYLOADS, == *,$p,* ]]; then ts=$(order "$TX_USECS"); else ts=$MAIN_TX_USECS; fi
		for t in $ts; do items+=("s:$t:$p:$SECS"); done
	done
	(IFS=,; echo "${items[*]//:def:/:-:}")
}
p_mode="mode=$MODE"
[ "$MODE" != icount ] || p_mode+=" icount=$ICOUNT turn_us=$TURN_US"
PARAMS="$p_mode qdisc=$QDISC cost_count=$COST_COUNT cost_payloads=${COST_PAYLOADS:-none} cost_tx_usecs=$COST_TX_USECS split=$SPLIT slow=$SLOW payloads=$PAYLOADS secs=$SECS sockets=$SOCKETS queues=${QUEUES:-default} runs=$RUNS tx_usecs=$TX_USECS main_tx_usecs=$MAIN_TX_USECS sweep_payloads=${SWEEP_PAYLOADS:-none} unslowed_payloads=${UN_PAYLOADS:-none} unslowed_tx_usecs=$UN_TX_USECS unslowed_secs=$UN_SECS"

start=$SECONDS
"$BQLKIT_TOP/scripts/install-deps.sh" bench
if [ -z "${BENCH_KERNELS:-}" ]; then
	[ -s "$TEST_KERNELS_FILE" ] || "$BQLKIT_TOP/tests/setup.sh"
	BENCH_KERNELS=$(tr '\n' ' ' <"$TEST_KERNELS_FILE")
fi
read -r -a kernels <<<"$BENCH_KERNELS"
[ ${#kernels[@]} -gt 0 ] || die "no kernels to bench (BENCH_KERNELS is empty)"
if [ -z "${BENCH_REPORT_ONLY:-}" ]; then
	for k in "${kernels[@]}"; do bench_check_kernel "$k"; done
fi
mkdir -p "$OUT" "$BQLKIT_BUILD"

report() {
	python3 "$BQLKIT_TOP/lab/bench-report.py" --out "$OUT" --runs "$RUNS" \
		--wall "${BENCH_WALL:-$((SECONDS - start))}" --command "${BENCH_COMMAND:-make bench}" \
		--params "$PARAMS" "${kernels[@]}"
}
if [ -n "${BENCH_REPORT_ONLY:-}" ]; then
	BENCH_WALL=-1 # keep the wall time of the run that made the logs
	report
	exit 0
fi

# Per boot (a bound, not an estimate): boot and idle probes, then per cost
# flood ~1 s per 2000 datagrams, per timed flood 60 s per second of it
# (TCG on a loaded 2-core host, icount or not), plus setup and counters.
nflood=$(plan 1 | tr ',' '\n' | wc -l)
floodsecs=$(plan 1 | tr ',' '\n' | awk -F: '$1 != "c" && $1 != "t" { s += $4 } END { print s + 0 }')
costpkts=$(plan 1 | tr ',' '\n' | awk -F: '$1 == "c" || $1 == "t" { s += $4 } END { print s + 0 }')
tmo=$((600 + costpkts / 2000 + floodsecs * 60 + nflood * 40))
append="bqlkit.slow=$SLOW bqlkit.sockets=$SOCKETS bqlkit.payloads=$PAYLOADS bqlkit.secs=$SECS bqlkit.main_tx_usecs=${MAIN_TX_USECS/def/-}"
[ "$PROFILE" = 0 ] || append+=" nokaslr bqlkit.profile=1"
[ "$TRACE_MS" = 0 ] || append+=" bqlkit.trace_ms=$TRACE_MS"
[ "$QDISC" = root ] || append+=" bqlkit.qdisc=$QDISC"
[ -z "$QUEUES" ] || append+=" bqlkit.queues=$QUEUES"
[ -z "$LIMIT_MAX" ] || append+=" bqlkit.limit_max=$LIMIT_MAX"
[ "$PIN_HARNESS" = 0 ] || append+=" bqlkit.pin_harness=1"
# The kit's QEMU, with the insncount plugin.
qdir=$("$BQLKIT_TOP/lab/build-qemu.sh")
[ -f "$qdir/plugins/libinsncount.so" ] || die "$qdir has no plugins/libinsncount.so (lab/build-qemu.sh builds lab/qemu/plugins/insncount.c)"
vmopts=(--qemu "$qdir")
[ "$MODE" != icount ] || vmopts+=(--icount "$ICOUNT")
mkdir -p "$VM_BUILD"
tmpd=$(mktemp -d "$VM_BUILD/bench.XXXXXX")
trap 'rm -rf "$tmpd"' EXIT

failed=0
for k in "${kernels[@]}"; do
	# k names the results; kver is the kernel the VM boots, suite the
	# Debian suite it comes from (none: this system's APT), kdir its headers.
	row=$(bench_chroot_row "$k")
	suite=''
	blog=$BQLKIT_BUILD/bench-build-$k.log
	if [ -n "$row" ]; then
		read -r suite env <<<"$row"
		step "$k: building the kit's veth.ko in the $suite chroot (make matrix)"
		: >"$blog"
		cb=$(bench_chroot_build "$k" veth "$tmpd/matrix" "$blog") || exit 1
		read -r kver built <<<"$cb"
		kdir=$BQLKIT_CACHE/chroots/${env#chroot:}-amd64/usr/src/linux-headers-$kver
	else
		kver=$k
		step "$k: building the kit's veth.ko"
		# build/ is shared: a concurrent build of the same kernel can make
		# this one fail; try again before giving up.
		for try in 1 2 3; do
			BQLKIT_DRIVERS=veth "$BQLKIT_TOP/scripts/build.sh" "$k" >"$blog" 2>&1 && break
			[ "$try" -lt 3 ] ||
				{ tail -5 "$blog" >&2; die "$k: scripts/build.sh failed (log: $blog; headers installed? tests/setup.sh installs the test kernels)"; }
			note "$k: scripts/build.sh failed (try $try/3): $(tail -1 "$blog"); again in 20 s"
			sleep 20
		done
		built=$BQLKIT_BUILD/$k/veth.ko
		kdir=$(kdir_for "$k")
	fi
	# Our own copy: build/ is shared, another build must not change it mid-run.
	ko=$tmpd/veth-$k.ko
	cp "$built" "$ko"
	series=$(series_of "$(kernel_version "$kdir")")
	{
		echo "git=$(git -C "$BQLKIT_TOP" describe --always --dirty 2>/dev/null || echo NA)"
		for f in version srcversion bqlkit vermagic; do echo "$f=$(modinfo -F "$f" "$ko" | head -1)"; done
		echo "sha256=$(sha256sum "$ko" | cut -d' ' -f1)"
		echo "series=$(grep -v '^#' "$BQLKIT_TOP/patches/veth/$series/series" 2>/dev/null | tr '\n' ' ')"
		# Kernel facts that change the results but are no kit API.
		[ ! -x "$BQLKIT_TOP/lab/kernel-facts.sh" ] ||
			"$BQLKIT_TOP/lab/kernel-facts.sh" "$kdir" 2>/dev/null | sed 's/^/kernel_/'
	} >"$tmpd/kit.info"
	"$VM/get-kernel.sh" ${suite:+--suite "$suite"} "$kver" >/dev/null
	"$VM/mkinitramfs.sh" --kver "$kver" --scenario bench --out "$tmpd/stock.cpio.gz" 2>"$tmpd/mk.log" ||
		{ cat "$tmpd/mk.log" >&2; die "$k: mkinitramfs (stock) failed"; }
	"$VM/mkinitramfs.sh" --kver "$kver" --scenario bench --out "$tmpd/kit.cpio.gz" --veth "$ko" 2>"$tmpd/mk.log" ||
		{ cat "$tmpd/mk.log" >&2; die "$k: mkinitramfs (kit) failed"; }
	rm -f "$OUT/bench-$k-"*.log "$OUT/bench-$k-"*.insn "$OUT/bench-$k-"*.prof
	cp "$tmpd/kit.info" "$OUT/bench-$k-info.log"
	for r in $(seq 1 "$RUNS"); do
		for v in $(bench_order "$r"); do
			logf=$OUT/bench-$k-$v-$r.log
			step "$k: run $r/$RUNS $v"
			load0=$(cut -d' ' -f1 /proc/loadavg)
			plug="insncount,out=${logf%.log}.insn"
			[ "$MODE" != icount ] || [ "$TURN_US" = 0 ] || plug+=",turn_us=$TURN_US"
			[ "$PROFILE" = 0 ] || plug+=",prof=${logf%.log}.prof"
			if ! "$VM/run-vm.sh" --kver "$kver" --initrd "$tmpd/$v.cpio.gz" --log "$logf" "${vmopts[@]}" --plugin "$plug" \
				--append "$append bqlkit.plan=$(plan "$r")" --timeout "$tmo" --quiet 2>"$tmpd/run.err"; then
				note "$k $v run $r failed: $(tail -1 "$tmpd/run.err") (kept out of the medians)"
				failed=$((failed + 1))
			elif gfail=$(grep -a -m1 '^BQLKIT-RESULT [^ ]* FAIL' "$logf"); then
				# The VM ran, the guest's plan did not (all of it).
				note "$k $v run $r failed in the guest: ${gfail#BQLKIT-RESULT } (log: $logf)"
				failed=$((failed + 1))
			fi
			bench_host_load "$logf" "$load0"
		done
	done
done
step "writing the report"
report
note "bench: $(((SECONDS - start) / 60))m$(((SECONDS - start) % 60))s, $failed failed run(s); see $OUT/bench.md"
[ "$failed" -eq 0 ] || die "$failed bench run(s) failed (said above; $OUT/bench.md holds the others)"
