#!/bin/sh
# Benchmark scenario (lab/bench.sh boots it once per run and variant):
# veth pair A -> B, fq_codel on vethA, TSO off on vethA, GRO on at vethB.
# A plan of UDP floods (bqlkit.plan): first the unslowed-receiver floods (no
# ingress filters), then the idle RTT and the slowed-receiver floods (N
# non-matching ingress u32 filters on vethB, so a standing queue forms).
# Every flood gets a fresh pair (fresh DQL, fq_codel, counters) and, on the
# kit's module, ethtool -C vethA tx-usecs T (the stock boot runs the same
# floods without that step).  During each flood ping -i 0.02 samples the RTT
# (every reply's time is printed), BQL is watched at a fixed rate in three
# windows up to just before the flood ends, and qdisc / link / UDP counters
# are taken before and after.  Pass/fail is not judged here; only data
# lines are printed (L = scenario id, e.g. slow500-64B-txus100 or
# unslowed-64B-txus0):
#   BQLKIT plan floods=... main_tx_usecs=T    the plan of this boot
#   BQLKIT case label=L kind=slowed|unslowed slow=N payload=P secs=S tx_usecs_set=T tx_usecs=READBACK
#   BQLKIT rtts label=L seq=K ms=T,T,...       per-reply RTTs (chunks of 40)
#   BQLKIT ping label=L tx=N rx=N              ping's own summary
#   BQLKIT link label=L.pre|L.post ...         ip -s link counters of vethA/vethB
#   BQLKIT udp label=L.pre|L.post ...          UDP MIB of netns B (sink side)
#   BQLKIT ethtool label=L.pre|L.post ...      ethtool -S of vethA/vethB
#   BQLKIT qdisc / bql / flood lines and UDPFLOOD send/sink lines (lib.sh)
#   BQLKIT mark label=L.begin|L.end seq=N ...  the insncount plugin's markers
#                                            around a cost flood (lib.sh vm_mark)
#   BQLKIT tsprobe label=L kind=owd|qdisc|ring seq=K us=...   kernel-timestamped
#                                            one-way delays (tsprobe), per probe
#   BQLKIT sched label=L ...                 run delay (schedstat) of ping,
#                                            ksoftirqd/N and vethB's NAPI
#                                            thread over the flood
# Cost floods (KIND c, unslowed receiver): COUNT datagrams, no ping or BQL
# sampler beside them (their work is time-proportional), vm_mark before the
# sender starts and after the sink has read the last datagram; the host
# divides the instructions between the two markers by the datagrams the
# sink read (lab/bench-report.py).
# Knobs (kernel cmdline): bqlkit.plan=KIND:TXUS:PAYLOAD:SECS|COUNT,... (KIND
#   u|s|c: unslowed, slowed, cost (COUNT datagrams); TXUS - = the module's
#   default) bqlkit.main_tx_usecs=T (recorded only) bqlkit.probe_ms=N
#   each tsprobe flow's interval (20; 0 = no tsprobe) bqlkit.probe_flows=N
#   tsprobe flows (4) bqlkit.profile=1 (at the end, the kernel's and the
#   modules' text symbols for the plugin's profiles, /proc/kallsyms lines
#   of type t/T/w/W, gzip'ed and base64'ed between "BQLKIT kallsyms begin"
#   and "BQLKIT kallsyms end": Debian ships no real System.map)
#   bqlkit.qdisc=root|mq vethA's qdisc (lib.sh pair_qdisc; root)
#   bqlkit.queues=N the pair's tx and rx queues (lab/bench.sh BENCH_QUEUES;
#   unset: veth's default, one per possible CPU)
#   bqlkit.trace_ms=N (lab/bench.sh BENCH_TRACE_MS; 0)
#   bqlkit.limit_max=N the kit boot caps DQL's limit on vethA's tx queues
#   at N before every flood (lab/bench.sh BENCH_LIMIT_MAX; unset: none)
#   bqlkit.pin_harness=1 this script and all it starts run on vCPU 0
#   (lab/bench.sh BENCH_PIN_HARNESS; 0: the scheduler places them)
#   bqlkit.slow=N (500) bqlkit.sockets=N (4) bqlkit.idle=N idle pings (100)
#   bqlkit.watch_us=N BQL read interval (2000); without a plan:
#   bqlkit.payloads=64,1472 bqlkit.secs=S (10) bqlkit.tx_usecs=N, i.e. every
#   payload slowed at tx-usecs N (unset = the module's default)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "${BQLKIT_GUEST:-/bqlkit}/lib.sh"

# sh bench.sh --sampler SECS WATCH_US OUT (run inside netns A by flood()):
# wait for the flood's start ($BQLKIT_RUN/flood.t0, uptime), then from 1 s
# into it read BQL (bqlwatch) in three windows sharing the time up to 0.5 s
# before the sender stops, each followed by the qdisc's counters; the raw
# outputs go to OUT.  Started before the flood so that it needs no netns
# switch under load.
if [ "${1:-}" = --sampler ]; then
	while [ ! -s "$BQLKIT_RUN/flood.t0" ]; do sleep 0.05; done
	_t0=$(cat "$BQLKIT_RUN/flood.t0")
	sleep "$(awk -v t="$_t0" -v now="$(uptime_s)" 'BEGIN { d = t + 1 - now; printf "%.2f", d > 0 ? d : 0 }')"
	for i in 1 2 3; do
		_win=$(awk -v t0="$_t0" -v s="$2" -v i="$i" -v now="$(uptime_s)" \
			'BEGIN { w = (t0 + s - 0.5 - now) / (4 - i); printf "%.2f", w < 0.2 ? 0.2 : w }')
		echo "w$i $(bqlwatch vethA 0 "$_win" "$3")" >>"$4"
		tc -s qdisc show dev vethA | sed "s/^/w$i /" >>"$4"
	done
	exit 0
fi

SLOW=$(knob slow 500)
PAYLOADS=$(knob payloads 64,1472 | tr ',' ' ')
SECS=$(knob secs 10)
SOCKETS=$(knob sockets 4)
IDLE=$(knob idle 100)
WATCH_US=$(knob watch_us 2000)
TX_USECS=$(knob tx_usecs '')
PROBE_MS=$(knob probe_ms 20)
PROBE_FLOWS=$(knob probe_flows 4)
SLOW_NAPI=$(knob slow_napi threaded-cpu1)
PROBE_CPU=$(knob probe_cpu '')
TRACE_MS=$(knob trace_ms 0)
# vethA's qdisc (lib.sh pair_qdisc): root fq_codel or mq with fq_codel
PAIR_QDISC=$(knob qdisc root)
# the pair's tx and rx queues on each end (lib.sh setup_pair; unset:
# veth's default, one per possible CPU)
PAIR_QUEUES=$(knob queues '')
LIMIT_MAX=$(knob limit_max '')
PIN_HARNESS=$(knob pin_harness 0)
# The sink's receive buffer may grow to 8 MB (udpflood asks for 4 MB; the
# kernel doubles it): a cost flood's sink then drops nothing however far
# behind it falls, so every datagram sent is one delivered.
RMEM_MAX=$(knob rmem_max 4194304)
echo "$RMEM_MAX" >/proc/sys/net/core/rmem_max
PING_IVAL=0.02
PROBE_PORT=9100
# ksoftirqd/N: softirq work deferred to them waits for a CPU like a task
KSOFTIRQD=$(grep -l '^ksoftirqd/' /proc/[0-9]*/comm 2>/dev/null | sed 's,^/proc/\([0-9]*\)/comm$,\1,')

emit "bench qdisc=$PAIR_QDISC queues=${PAIR_QUEUES:-default} limit_max=${LIMIT_MAX:--} pin_harness=$PIN_HARNESS slow=$SLOW payloads=$(echo "$PAYLOADS" | tr ' ' ',') secs=$SECS sockets=$SOCKETS idle=$IDLE watch_us=$WATCH_US ping_interval=$PING_IVAL probe_ms=$PROBE_MS probe_flows=$PROBE_FLOWS slow_napi=$SLOW_NAPI rmem_max=$RMEM_MAX clocksource=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo NA)"
_info=/lib/modules/bqlkit/veth.info
emit "module name=veth origin=$(sed -n 's/^origin=//p' $_info) version=$(sed -n 's/^version=//p' $_info) srcversion_loaded=$(cat /sys/module/veth/srcversion 2>/dev/null || echo NA) loaded=$(grep -qx 'veth ok' "$BQLKIT_RUN/modules.status" && echo yes || echo no)"

# rtt_samples LABEL FILE [FROM TO OFFSET]: every reply's time= of iputils
# ping output, in chunks, plus ping's transmitted/received summary.  With
# FROM TO (uptime seconds) and OFFSET (real_minus_boot) the output must be
# ping -D's: only the echoes sent within [FROM, TO] count, and tx/rx are
# theirs (tx from the first to the last icmp_seq replied to in the window).
rtt_samples() {
	if [ -n "${3:-}" ]; then
		_win=$BQLKIT_RUN/ping.window
		awk -v from="$3" -v to="$4" -v off="$5" '
			/^\[[0-9.]*\].* icmp_seq=.* time=/ {
				t = substr($1, 2, length($1) - 2) - off
				s = $0; sub(/.* icmp_seq=/, "", s); sub(/ .*/, "", s)
				r = $0; sub(/.* time=/, "", r); sub(/ .*/, "", r)
				if (t - r / 1000 < from || t - r / 1000 > to || seen[s]++) next
				print "window time=" r " ms"
				if (lo == "" || s + 0 < lo) lo = s + 0
				if (s + 0 > hi) hi = s + 0
				n++
			}
			END { printf "%d packets transmitted, %d received\n", n ? hi - lo + 1 : 0, n }' "$2" >"$_win"
		set -- "$1" "$_win"
	fi
	sed -n 's/.* time=\([0-9.]*\) ms.*/\1/p' "$2" | awk -v l="$1" '
		{ v[n++] = $1 }
		END {
			for (i = 0; i < n; i += 40) {
				s = ""
				for (j = i; j < n && j < i + 40; j++) s = s (j > i ? "," : "") v[j]
				printf "rtts label=%s seq=%d ms=%s\n", l, i / 40, s
			}
		}' | while read -r _l; do emit "$_l"; done
	_tx=$(sed -n 's/^\([0-9]*\) packets transmitted.*/\1/p' "$2")
	_rx=$(sed -n 's/.* \([0-9]*\) received.*/\1/p' "$2")
	emit "ping label=$1 tx=${_tx:-0} rx=${_rx:-0}"
}

# tsprobe_start SECS: kernel-timestamped probes A -> B for SECS seconds
# (tsprobe; no user-space scheduling delay in its numbers), in background.
tsprobe_start() {
	TSPROBE=
	[ "$PROBE_MS" -gt 0 ] || return 0
	${PROBE_CPU:+taskset -c "$PROBE_CPU"} tsprobe A B "$ADDR_B" "$PROBE_PORT" "$1" "$PROBE_MS" "$PROBE_FLOWS" >"$BQLKIT_RUN/tsprobe.out" 2>&1 &
	TSPROBE=$!
}

# tsprobe_samples LABEL [FROM TO]: wait for tsprobe and emit the per-probe
# delays (µs) of the probes sent within [FROM, TO] (uptime seconds; all
# without), in chunks of 40, and how many of those were sent and arrived:
#   BQLKIT tsprobe label=L kind=owd|qdisc|ring seq=K us=V,...
#   BQLKIT tsprobe label=L kind=summary sent=N rx=N from=FROM to=TO
tsprobe_samples() {
	[ -n "$TSPROBE" ] || return 0
	wait "$TSPROBE"
	awk -v l="$1" -v from="${2:-0}" -v to="${3:-1e12}" '
		$1 == "TSPROBE" && $2 == "p" && $4 != "-" && $4 >= from && $4 <= to {
			sent++
			if ($5 == "-" || $6 == "-") next
			q[n] = $5; r[n] = $6; n++
		}
		function out(kind, i, j, s) {
			for (i = 0; i < n; i += 40) {
				s = ""
				for (j = i; j < n && j < i + 40; j++)
					s = s (j > i ? "," : "") (kind == "owd" ? q[j] + r[j] : kind == "qdisc" ? q[j] : r[j])
				printf "tsprobe label=%s kind=%s seq=%d us=%s\n", l, kind, i / 40, s
			}
		}
		END {
			out("owd"); out("qdisc"); out("ring")
			printf "tsprobe label=%s kind=summary sent=%d rx=%d from=%s to=%s\n", l, sent, n, from, to
		}' "$BQLKIT_RUN/tsprobe.out" | while read -r _l; do emit "$_l"; done
}

# real_minus_boot: CLOCK_REALTIME - /proc/uptime's clock, in seconds.
real_minus_boot() {
	tsprobe clock | sed -n 's/^TSPROBE clock real_minus_boot_ns=\([0-9]*\)$/\1/p' |
		awk '{ printf "%.6f", $1 / 1e9 }'
}

# sched_wait PID...: the summed run delay (ns waiting on a runqueue) and
# timeslices of the tasks, from /proc/PID/schedstat.
sched_wait() {
	for _p in "$@"; do cat "/proc/$_p/schedstat" 2>/dev/null; done |
		awk '{ w += $2; n += $3 } END { printf "%d %d", w, n }'
}

# softirqs LABEL: per vCPU N, the NET_TX and NET_RX softirqs raised so far
# (/proc/softirqs), one line; the report takes LABEL.post - LABEL.pre as
# it does link_stats' (/proc/stat's ticks are no measure here: under
# -icount a busy vCPU's 2.5 s window counted 8-16 of them).
softirqs() {
	emit "softirqs label=$1 $(awk '$1 == "NET_TX:" || $1 == "NET_RX:" { k = tolower(substr($1, 1, 6)); for (i = 2; i <= NF; i++) printf "%s%s%d=%d", (n++ ? " " : ""), k, i - 2, $i }' /proc/softirqs)"
}

# link_stats LABEL: ip -s link counters of the sender's and receiver's ends
# (one awk for both: every process costs under TCG).
link_stats() {
	_up=$(uptime_s)
	{ ip -n A -s -s link show dev vethA; echo --B--; ip -n B -s -s link show dev vethB; } 2>/dev/null | awk -v l="$1" -v up="$_up" '
		BEGIN { p = "A_" }
		/^--B--$/ { p = "B_"; s = ""; next }
		/^ *RX:/ { s = "rx" } /^ *TX:/ { s = "tx" }
		/^ *[0-9]/ && s != "" {
			o = o sprintf(" %s%s_bytes=%s %s%s_packets=%s %s%s_errors=%s %s%s_dropped=%s", p, s, $1, p, s, $2, p, s, $3, p, s, $4)
			s = ""
		}
		END { print "link label=" l o " uptime=" up }' | while read -r _l; do emit "$_l"; done
}

# udp_stats LABEL: the UDP MIB of netns B (receive buffer errors = sink too slow).
udp_stats() {
	in_ns B cat /proc/net/snmp | awk -v l="$1" '
		$1 == "Udp:" && !h { for (i = 2; i <= NF; i++) k[i] = $i; h = 1; next }
		$1 == "Udp:" && h { s = ""; for (i = 2; i <= NF; i++) s = s " " k[i] "=" $i; print "udp label=" l s }' |
		while read -r _l; do emit "$_l"; done
}

# ethtool_stats LABEL: veth's own per-queue counters (drops, xdp, BQL).
ethtool_stats() {
	{ in_ns A ethtool -S vethA; echo --B--; in_ns B ethtool -S vethB; } 2>/dev/null | awk -F': *' -v l="$1" '
		BEGIN { p = "A_" }
		/^--B--$/ { p = "B_"; next }
		/statistics:/ { next }
		{ gsub(/^ */, "", $1); o = o p $1 "=" $2 " " }
		END { print "ethtool label=" l " " o }' | while read -r _l; do emit "$_l"; done
}

# new_pair SLOW: a fresh pair (fresh DQL state, fq_codel and counters) for
# every flood: the DQL limit does not come down within a flood once another
# setting raised it, so a reused pair would report the previous setting's
# limit.  The SLOW ingress filters are lib.sh's slow_receiver's, in one tc
# batch (with the clsact qdisc) written once by awk.
SLOW_BATCH=$BQLKIT_RUN/bench-slow.batch
# new_pair SLOW NAPI: NAPI softirq (veth's default: the receive path runs
# in the softirq of the sending CPU) or threaded-cpuN (vethB's NAPI in a
# kthread on CPU N, so the receive path runs beside the sender, not after it).
new_pair() {
	ip -n A link del vethA 2>/dev/null
	setup_pair 0 >/dev/null || { result bench_setup FAIL "setup_pair"; exit 1; }
	if [ "$1" -gt 0 ]; then
		[ -s "$SLOW_BATCH" ] || awk -v n="$1" 'BEGIN {
			print "qdisc add dev vethB clsact"
			for (i = 1; i <= n; i++)
				printf "filter add dev vethB ingress prio %d protocol ip u32 match ip dst 192.0.2.%d/32 action drop\n", i, i % 250 + 1
		}' >"$SLOW_BATCH"
		if ! tc -n B -batch "$SLOW_BATCH"; then
			result bench_setup FAIL "slow filters $1"
			exit 1
		fi
	fi
	case $2 in
	threaded-cpu*) napi_thread "${2#threaded-cpu}" || emit "napi threaded=failed" ;;
	threaded) in_ns B sh -c 'echo 1 >/sys/class/net/vethB/threaded' || emit "napi threaded=failed" ;;
	esac
	in_ns A ping -c 2 -i 0.1 -W 1 "$ADDR_B" >/dev/null 2>&1 # ARP
}

# set_tx_usecs T: ethtool -C vethA tx-usecs T on the kit's module (the stock
# boot skips the step; T "-" leaves the module's default); TXUS_NOW = what
# ethtool -c reads back (NA where veth has no coalescing).
set_tx_usecs() {
	if [ "$ORIGIN" != stock ] && [ "$1" != - ]; then
		in_ns A ethtool -C vethA tx-usecs "$1" >/dev/null 2>&1 ||
			emit "coalesce set_tx_usecs=$1 failed"
	fi
	TXUS_NOW=$(in_ns A ethtool -c vethA 2>/dev/null | sed -n 's/^tx-usecs: *//p')
	TXUS_NOW=${TXUS_NOW:-NA}
}

# set_limit_max: cap DQL's limit on vethA's tx queues at $LIMIT_MAX (the kit's
# boot only; the stock module charges nothing).  veth shows byte_queue_limits
# in sysfs only before 6.9: without it the boot fails, as no flood would show
# what was asked for.
set_limit_max() {
	[ -n "$LIMIT_MAX" ] && [ "$ORIGIN" != stock ] || return 0
	for _q in $(tx_queues); do
		_f=/sys/class/net/vethA/queues/tx-$_q/byte_queue_limits/limit_max
		if ! in_ns A sh -c "echo $LIMIT_MAX >$_f" 2>/dev/null; then
			result bench_setup FAIL "limit_max: cannot write $_f (veth has no byte_queue_limits in sysfs on 6.9+)"
			exit 1
		fi
	done
}

# trace_arm / trace_window / trace_dump LABEL: TRACE_MS ms of the kernel's
# qdisc, xmit, NAPI, softirq and scheduler events (tracefs, both CPUs,
# clock mono).  The events are enabled before the flood (under load that
# took seconds) with tracing off; the window only turns tracing on and off.
# trace_dump prints them gzip'ed and base64'ed between "BQLKIT trace begin
# label=L" and "BQLKIT trace end" (lab/trace-report.py reads them).
TR=/sys/kernel/tracing
trace_arm() {
	[ -d "$TR/events" ] || mount -t tracefs tracefs "$TR" 2>/dev/null || return 0
	echo 0 >"$TR/tracing_on"
	echo mono >"$TR/trace_clock"
	echo 4096 >"$TR/buffer_size_kb"
	: >"$TR/trace"
	for _e in net/net_dev_queue net/net_dev_start_xmit net/net_dev_xmit \
		net/netif_receive_skb qdisc/qdisc_dequeue napi/napi_poll \
		irq/softirq_entry irq/softirq_exit sched/sched_switch sched/sched_wakeup; do
		echo 1 >"$TR/events/$_e/enable" 2>/dev/null || emit "trace no_event=$_e"
	done
	[ -d "$TR/events/bqlkit/wake" ] ||
		echo 'p:bqlkit/wake __netif_schedule' >>"$TR/kprobe_events" 2>/dev/null || emit "trace no_kprobe=__netif_schedule"
	[ ! -d "$TR/events/bqlkit/wake" ] || echo 1 >"$TR/events/bqlkit/wake/enable"
}
trace_window() {
	echo 1 >"$TR/tracing_on"
	sleep "$(awk -v m="$TRACE_MS" 'BEGIN { printf "%.3f", m / 1000 }')"
	echo 0 >"$TR/tracing_on"
}
trace_dump() {
	echo 0 >"$TR/events/enable"
	emit "trace begin label=$1"
	gzip -1 <"$TR/trace" | base64
	emit "trace end"
	: >"$TR/trace"
}

# flood ID PAYLOAD SECS: one flood on the current pair with the RTT, BQL,
# qdisc and counter samples around it.  ping, tsprobe and the BQL/qdisc
# sampler start before the flood: under load, entering a netns with ip netns
# exec or tc -n (a new mount namespace, sysfs remounted) took up to 4 s
# (icount mode, NAPI thread busy), which moved the samples out of the
# loaded window.  Their samples are cut to the window [flood start + 1 s,
# flood end - 0.5 s] by their own timestamps.
flood() {
	L=$1
	link_stats "$L.pre"
	udp_stats "$L.pre"
	ethtool_stats "$L.pre"
	rm -f "$BQLKIT_RUN/flood.t0" "$BQLKIT_RUN/sampler.out"
	_off=$(real_minus_boot)
	# One echo per PING_IVAL from now to past the window; stopped after it.
	${PROBE_CPU:+taskset -c "$PROBE_CPU"} /usr/sbin/ip netns exec A /usr/bin/ping -D -c $((($3 + 3) * 50)) -i "$PING_IVAL" -W 1 "$ADDR_B" >"$BQLKIT_RUN/ping.$L" 2>&1 &
	PING=$!
	tsprobe_start $(($3 + 1))
	in_ns A sh /bqlkit/scenario.sh --sampler "$3" "$WATCH_US" "$BQLKIT_RUN/sampler.out" &
	_sampler=$!
	[ "$TRACE_MS" = 0 ] || trace_arm
	sleep 0.5
	flood_start "$L" "$3" "$2" "$SOCKETS"
	_t0=$(uptime_s)
	echo "$_t0" >"$BQLKIT_RUN/flood.t0"
	_from=$(awk -v t="$_t0" 'BEGIN { printf "%.2f", t + 1 }')
	_to=$(awk -v t="$_t0" -v s="$3" 'BEGIN { printf "%.2f", t + s - 0.5 }')
	sleep 1 # let the standing queue form
	# The window's instructions and vCPU turns (insncount; one TCG thread)
	vm_mark "$L.begin"
	# shellcheck disable=SC2086 # a list of pids
	_k0=$(sched_wait $KSOFTIRQD)
	_p0=$(sched_wait "$PING")
	_napi=$(grep -l '^napi/vethB' /proc/[0-9]*/comm 2>/dev/null | sed 's,^/proc/\([0-9]*\)/comm$,\1,')
	# shellcheck disable=SC2086 # a list of pids
	_n0=$(sched_wait $_napi)
	# How often each vCPU raised NET_TX (a qdisc run: a txq woken or
	# rescheduled) and NET_RX over the window.
	softirqs "$L.pre"
	[ "$TRACE_MS" = 0 ] || trace_window
	sleep "$(awk -v to="$_to" -v now="$(uptime_s)" 'BEGIN { d = to - now; printf "%.2f", d > 0 ? d : 0 }')"
	# shellcheck disable=SC2086 # a list of pids
	_k1=$(sched_wait $KSOFTIRQD)
	_p1=$(sched_wait "$PING")
	# shellcheck disable=SC2086 # a list of pids
	_n1=$(sched_wait $_napi)
	softirqs "$L.post"
	vm_mark "$L.end"
	emit "sched label=$L from=$_from to=$_to ping_wait_ns=$((${_p1% *} - ${_p0% *})) ping_slices=$((${_p1#* } - ${_p0#* })) ksoftirqd_wait_ns=$((${_k1% *} - ${_k0% *})) ksoftirqd_slices=$((${_k1#* } - ${_k0#* })) napi_wait_ns=$((${_n1% *} - ${_n0% *})) napi_slices=$((${_n1#* } - ${_n0#* })) napi_threads=$(echo "$_napi" | wc -w)"
	wait "$_sampler"
	for i in 1 2 3; do
		bql_watch_emit "$L.w$i" "$(sed -n "s/^w$i BQLWATCH/BQLWATCH/p" "$BQLKIT_RUN/sampler.out")"
		sed -n "s/^w$i //p" "$BQLKIT_RUN/sampler.out" | grep -v '^BQLWATCH' | qdisc_stats_emit "$L.w$i"
	done
	flood_wait
	kill -INT "$PING" 2>/dev/null
	wait "$PING"
	[ "$TRACE_MS" = 0 ] || trace_dump "$L"
	link_stats "$L.post"
	udp_stats "$L.post"
	ethtool_stats "$L.post"
	qdisc_stats "$L.post"
	rtt_samples "$L" "$BQLKIT_RUN/ping.$L" "$_from" "$_to" "$_off"
	tsprobe_samples "$L" "$_from" "$_to"
}

# cost_flood ID PAYLOAD COUNT: COUNT datagrams on the current pair; the
# insncount plugin's markers (udpflood, UDPFLOOD_VMMARK=1) cut the
# instructions from the sender's first datagram to the sink's last (it stops
# after COUNT, or 1 s without one).  Nothing else runs meanwhile: no ping,
# no BQL sampler.
cost_flood() {
	L=$1
	link_stats "$L.pre"
	udp_stats "$L.pre"
	ethtool_stats "$L.pre"
	qdisc_stats "$L.pre"
	UDPFLOOD_VMMARK=1 taskset -c 1 /usr/sbin/ip netns exec B /usr/bin/udpflood sink "$FLOOD_PORT" 3600 1000 "$3" >"$BQLKIT_RUN/sink.out" 2>&1 &
	_sink=$!
	sleep 0.3
	emit "flood label=$L start count=$3 payload=$2 sockets=$SOCKETS uptime=$(uptime_s)"
	UDPFLOOD_VMMARK=1 taskset -c 0 /usr/sbin/ip netns exec A /usr/bin/udpflood send "$ADDR_B" "$FLOOD_PORT" 3600 "$2" "$SOCKETS" "$3" >"$BQLKIT_RUN/send.out" 2>&1
	wait "$_sink"
	vm_marked "$L.begin" begin
	# The sink marks its end only if it read something.
	grep -q '^UDPFLOOD sink pkts=0 ' "$BQLKIT_RUN/sink.out" || vm_marked "$L.end" end
	emit "flood label=$L end uptime=$(uptime_s)"
	link_stats "$L.post"
	udp_stats "$L.post"
	ethtool_stats "$L.post"
	qdisc_stats "$L.post"
	cat "$BQLKIT_RUN/send.out" "$BQLKIT_RUN/sink.out"
}

# The flood plan: bqlkit.plan=KIND:TXUS:PAYLOAD:SECS,... (lab/bench.sh
# writes it; KIND u = unslowed receiver, s = slowed by SLOW filters; TXUS -
# = the module's default).  Without it: every payload slowed at
# bqlkit.tx_usecs (the scenario before the plan existed).
PLAN=$(knob plan '')
# Before the plan: the floods' tasks (lib.sh flood_start, tsprobe, ping,
# the samplers) inherit it; the sender is pinned to vCPU 0 anyway.
[ "$PIN_HARNESS" = 0 ] || taskset -p -c 0 $$ >/dev/null ||
	result bench_setup FAIL "pin_harness: taskset -p -c 0 $$ failed"
if [ -z "$PLAN" ]; then
	for PAY in $PAYLOADS; do PLAN="$PLAN${PLAN:+,}s:${TX_USECS:--}:$PAY:$SECS"; done
fi
ORIGIN=$(sed -n 's/^origin=//p' $_info)
emit "plan floods=$PLAN main_tx_usecs=$(knob main_tx_usecs "${TX_USECS:--}")"

# Cost floods first (veth's softirq NAPI, then the split ones), then the
# unslowed floods (no ingress filters), then the idle RTT and the slowed
# floods.
TURNS=qemu-turns
for KIND in c t u s; do
	# The emulator's vCPU turns (insncount's turn_us, lab/bench.sh
	# BENCH_TURN_US): short for the idle probes and the timed floods,
	# QEMU's own for the cost floods.
	case $KIND in c | t) _turns=qemu-turns ;; *) _turns=short-turns ;; esac
	if [ "$_turns" != "$TURNS" ] && echo ",$PLAN" | grep -q ",$KIND:"; then
		vm_mark "turns.${_turns%-turns}" "$_turns"
		TURNS=$_turns
	fi
	for item in $(echo "$PLAN" | tr ',' ' '); do
		# shellcheck disable=SC2046 # the item's fields, split into "$@" on purpose
		set -- $(echo "$item" | tr ':' ' ')
		[ "$1" = "$KIND" ] || continue
		T=$2 PAY=$3 S=$4
		_tx=$T
		[ "$T" != - ] || _tx=def
		FLOOD_SEND_CPU= # lib.sh's flood_start: the sender's CPU
		if [ "$KIND" = c ]; then
			new_pair 0 softirq
			ID=cost-${PAY}B-txus$_tx K=cost N=0
		elif [ "$KIND" = t ]; then
			new_pair 0 threaded-cpu1
			ID=split-${PAY}B-txus$_tx K=split N=0
		elif [ "$KIND" = u ]; then
			new_pair 0 softirq
			ID=unslowed-${PAY}B-txus$_tx K=unslowed N=0
		else
			new_pair "$SLOW" "$SLOW_NAPI"
			FLOOD_SEND_CPU=0
			ID=slow$SLOW-${PAY}B-txus$_tx K=slowed N=$SLOW
			if [ ! -s "$BQLKIT_RUN/ping.idle" ]; then
				# Idle RTT: on the slowed pair before its first flood.
				bql_sample idle
				tsprobe_start $((IDLE / 50 + 1))
				in_ns A ping -c "$IDLE" -i "$PING_IVAL" -W 1 -w $((IDLE / 20 + 5)) "$ADDR_B" >"$BQLKIT_RUN/ping.idle" 2>&1
				rtt_samples idle "$BQLKIT_RUN/ping.idle"
				tsprobe_samples idle
			fi
		fi
		# The same flood again in this boot: ID-rN (N = 2, 3, ...)
		_n=$(grep -c "^$ID\(-r[0-9]*\)\?\$" "$BQLKIT_RUN/ids" 2>/dev/null)
		echo "$ID" >>"$BQLKIT_RUN/ids"
		[ "${_n:-0}" -eq 0 ] || ID=$ID-r$((_n + 1))
		set_tx_usecs "$T"
		set_limit_max
		if [ "$KIND" = c ] || [ "$KIND" = t ]; then
			emit "case label=$ID kind=$K slow=$N payload=$PAY count=$S tx_usecs_set=$T tx_usecs=$TXUS_NOW uptime=$(uptime_s)"
			cost_flood "$ID" "$PAY" "$S"
			continue
		fi
		emit "case label=$ID kind=$K slow=$N payload=$PAY secs=$S tx_usecs_set=$T tx_usecs=$TXUS_NOW uptime=$(uptime_s)"
		flood "$ID" "$PAY" "$S"
	done
done

if [ "$(knob profile 0)" = 1 ]; then
	echo 0 >/proc/sys/kernel/kptr_restrict
	emit "kallsyms begin"
	grep ' [tTwW] ' /proc/kallsyms | gzip -1 | base64
	emit "kallsyms end"
fi
if dmesg_check; then result bench_dmesg_clean PASS "no WARNING/BUG/Oops"; else result bench_dmesg_clean FAIL "kernel complained"; fi
result bench_done PASS "plan=$PLAN"
