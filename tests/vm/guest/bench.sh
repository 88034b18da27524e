#!/bin/sh
# Benchmark scenario (scripts/bench.sh boots it once per run and variant):
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
# Knobs (kernel cmdline): bqlkit.plan=KIND:TXUS:PAYLOAD:SECS,... (KIND u|s,
#   TXUS - = the module's default) bqlkit.main_tx_usecs=T (recorded only)
#   bqlkit.slow=N (500) bqlkit.sockets=N (4) bqlkit.idle=N idle pings (100)
#   bqlkit.watch_us=N BQL read interval (2000); without a plan:
#   bqlkit.payloads=64,1472 bqlkit.secs=S (10) bqlkit.tx_usecs=N, i.e. every
#   payload slowed at tx-usecs N (unset = the module's default)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "${BQLKIT_GUEST:-/bqlkit}/lib.sh"

SLOW=$(knob slow 500)
PAYLOADS=$(knob payloads 64,1472 | tr ',' ' ')
SECS=$(knob secs 10)
SOCKETS=$(knob sockets 4)
IDLE=$(knob idle 100)
WATCH_US=$(knob watch_us 2000)
TX_USECS=$(knob tx_usecs '')
PING_IVAL=0.02

emit "bench slow=$SLOW payloads=$(echo "$PAYLOADS" | tr ' ' ',') secs=$SECS sockets=$SOCKETS idle=$IDLE watch_us=$WATCH_US ping_interval=$PING_IVAL"
_info=/lib/modules/bqlkit/veth.info
emit "module name=veth origin=$(sed -n 's/^origin=//p' $_info) version=$(sed -n 's/^version=//p' $_info) srcversion_loaded=$(cat /sys/module/veth/srcversion 2>/dev/null || echo NA) loaded=$(grep -qx 'veth ok' "$BQLKIT_RUN/modules.status" && echo yes || echo no)"

# rtt_samples LABEL FILE: every reply's time= of iputils ping output, in
# chunks, plus ping's transmitted/received summary.
rtt_samples() {
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

# flood ID PAYLOAD SECS: one flood on the current pair with the RTT, BQL,
# qdisc and counter samples around it.
flood() {
	L=$1
	link_stats "$L.pre"
	udp_stats "$L.pre"
	ethtool_stats "$L.pre"
	_t0=$(uptime_s)
	flood_start "$L" "$3" "$2" "$SOCKETS"
	sleep 1 # let the standing queue form
	NPING=$((($3 - 2) * 50))
	/usr/sbin/ip netns exec A /usr/bin/ping -c "$NPING" -i "$PING_IVAL" -W 1 -w $(($3 - 1)) "$ADDR_B" >"$BQLKIT_RUN/ping.$L" 2>&1 &
	PING=$!
	# BQL and qdisc samples across the loaded window, at a fixed read rate
	# (no busy loop: the watcher must cost the same with and without BQL);
	# three windows sharing the time left, the last one ending ~0.5 s before
	# the sender stops: its last read's limit is the limit the kit converged on.
	for i in 1 2 3; do
		_win=$(awk -v t0="$_t0" -v s="$3" -v i="$i" -v now="$(uptime_s)" \
			'BEGIN { w = (t0 + s - 0.5 - now) / (4 - i); printf "%.2f", w < 0.2 ? 0.2 : w }')
		bql_watch "$L.w$i" "$_win" "$WATCH_US"
		qdisc_stats "$L.w$i"
	done
	wait "$PING"
	flood_wait
	link_stats "$L.post"
	udp_stats "$L.post"
	ethtool_stats "$L.post"
	qdisc_stats "$L.post"
	rtt_samples "$L" "$BQLKIT_RUN/ping.$L"
}

# The flood plan: bqlkit.plan=KIND:TXUS:PAYLOAD:SECS,... (scripts/bench.sh
# writes it; KIND u = unslowed receiver, s = slowed by SLOW filters; TXUS -
# = the module's default).  Without it: every payload slowed at
# bqlkit.tx_usecs (the scenario before the plan existed).
PLAN=$(knob plan '')
if [ -z "$PLAN" ]; then
	for PAY in $PAYLOADS; do PLAN="$PLAN${PLAN:+,}s:${TX_USECS:--}:$PAY:$SECS"; done
fi
ORIGIN=$(sed -n 's/^origin=//p' $_info)
emit "plan floods=$PLAN main_tx_usecs=$(knob main_tx_usecs "${TX_USECS:--}")"

# Unslowed floods first (no ingress filters), then the idle RTT and the
# slowed floods.
for KIND in u s; do
	for item in $(echo "$PLAN" | tr ',' ' '); do
		# shellcheck disable=SC2046
		set -- $(echo "$item" | tr ':' ' ')
		[ "$1" = "$KIND" ] || continue
		T=$2 PAY=$3 S=$4
		_tx=$T
		[ "$T" != - ] || _tx=def
		if [ "$KIND" = u ]; then
			new_pair 0
			ID=unslowed-${PAY}B-txus$_tx K=unslowed N=0
		else
			new_pair "$SLOW"
			ID=slow$SLOW-${PAY}B-txus$_tx K=slowed N=$SLOW
			if [ ! -s "$BQLKIT_RUN/ping.idle" ]; then
				# Idle RTT: on the slowed pair before its first flood.
				bql_sample idle
				in_ns A ping -c "$IDLE" -i "$PING_IVAL" -W 1 -w $((IDLE / 20 + 5)) "$ADDR_B" >"$BQLKIT_RUN/ping.idle" 2>&1
				rtt_samples idle "$BQLKIT_RUN/ping.idle"
			fi
		fi
		set_tx_usecs "$T"
		emit "case label=$ID kind=$K slow=$N payload=$PAY secs=$S tx_usecs_set=$T tx_usecs=$TXUS_NOW uptime=$(uptime_s)"
		flood "$ID" "$PAY" "$S"
	done
done

if dmesg_check; then result bench_dmesg_clean PASS "no WARNING/BUG/Oops"; else result bench_dmesg_clean FAIL "kernel complained"; fi
result bench_done PASS "plan=$PLAN"
