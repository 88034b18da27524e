#!/bin/busybox sh
# shellcheck shell=dash source-path=SCRIPTDIR
# mana latency under load on two emulated MANA VFs wired together
# (lab/bench-mana.sh boots it once per run and variant, through
# tests/vm/mana-dev.sh --scenario mana-bench).  The wire from A to B is
# limited to bqlkit.rate Mbit/s by the device model (TX completions come at
# line rate, as on a real NIC), so the SQ fills: with the stock mana the
# standing queue sits in the SQ, with the kit's BQL it sits in fq_codel.
# Per queue count Q in bqlkit.queues (e.g. 1,2; ethtool -L combined Q on
# both ports), with the wire limited:
#   idle    a TCP request/response probe (tcpload rr-client A -> B, 1-byte
#           requests, one in flight) and ping -i 0.05, bqlkit.idle_secs s
#   loaded  per load in bqlkit.loads: tcp = bqlkit.flows TCP streams A -> B
#           (tcpload send/sink, every byte checked), udp = a UDP flood from
#           bqlkit.flows sockets (1400-byte datagrams, udpflood); after
#           bqlkit.warmup s the same probes for bqlkit.secs s, A's BQL
#           sampled on every TX queue (bqlwatch), the device's counters
#           and A's qdisc before and after
# Cost floods (bqlkit.cost=COUNT, lab/bench-mana.sh boots them under
# -icount with the insncount TCG plugin; bqlkit.latency=0 skips the cases
# above): per queue count, bqlkit.cost_reps identical floods of COUNT
# bqlkit.cost_payload-byte datagrams A -> B on an unlimited wire (sender
# on vCPU 0 with every mana interrupt, sink on vCPU 1); udpflood executes
# the plugin's markers, so the instructions counted are the flood's own,
# and the device's doorbell counters of both ports are read around it.
# Nothing passes or fails on the numbers; the checks only say that the
# run measured what it should.  Data lines (L = q<Q>-idle | q<Q>-<load>):
#   BQLKIT benchcase label=L queues=Q rate_mbps=R load=none|tcp|udp flows=F secs=S
#   BQLKIT rr label=L n=N p50_us=N p90_us=N p99_us=N max_us=N
#   BQLKIT pingq label=L n=N p50_us=N p99_us=N sent=N
#   BQLKIT bulk label=L mbps=M sink_bytes=N bad=N    (mbps: A's wire, from
#                                                    the device's tx_bytes)
#   BQLKIT bqlpeak label=L max_inflight=N max_limit=N
#   BQLKIT db label=L tx_wqes=N sq_doorbells=N rx_frames=N rq_doorbells=N wire_waits=N
#   BQLKIT mark label=L.begin|L.end seq=N ...        (around the probed window)
#   BQLKIT qdisc label=L.pre|L.post backlog_pkts=N drops=N requeues=N
#   BQLKIT textpatches label=L|q<Q>-setup n=N   kernel text patches (x86)
# and per cost flood (C = cost-q<Q>-<payload>B[-gso<G>][-rN]):
#   BQLKIT costirqs cpu=0 moved=N of=N             (per queue count)
#   BQLKIT costcase label=C queues=Q payload=P count=N
#   BQLKIT mark label=C.begin|C.end seq=N ...      (lib.sh vm_marked)
#   BQLKIT costdb label=C a_sq=N a_rq=N a_cq=N a_eq=N b_sq=N b_rq=N b_cq=N
#          b_eq=N b_cq_arms=N tx_wqes=N rx_frames=N (device counters' deltas;
#          b_cq_arms: B's CQ doorbells with the arm bit, one per NAPI poll
#          that completed)
#   BQLKIT costflood label=C gso=G sent=N send_pps=N pkts=N nobufs=N
#          (G > 0: sent and send_pps count sends of G datagrams each)
. /bqlkit/lib.sh
# shellcheck source=mana-lib.sh
. /bqlkit/mana-lib.sh

RATE=$(knob rate 20)
QUEUES=$(knob queues 1,2 | tr ',' ' ')
LOADS=$(knob loads tcp,udp | tr ',' ' ')
FLOWS=$(knob flows 8)
SECS=$(knob secs 8)
LATENCY=$(knob latency 1)
COST=$(knob cost 0)
COST_REPS=$(knob cost_reps 2)
COST_PAYLOAD=$(knob cost_payload 64)
COST_GSO=$(knob cost_gso 0)
IDLE_SECS=$(knob idle_secs 4)
WARMUP=$(knob warmup 2)
RR_PORT=5100
KIT=0
mana_is_kit && KIT=1
# The kit's SQ doorbell batching per bqlkit.batching (mana-lib.sh; the
# stock module has no such parameter).
if [ "$BATCH" = 1 ] && [ "$KIT" = 1 ]; then
	check batching_on "tx_doorbell_batching=1" batching_set
fi

GSO_MAX=$(knob gso_max 0)
MIN_TSO=$(knob min_tso_segs 0)
TX_RING=$(knob tx_ring 0)
emit "mana module version=$(cat /sys/module/mana/version 2>/dev/null || echo none) kit=$KIT srcversion=$(cat /sys/module/mana/srcversion 2>/dev/null)"
emit "benchparams rate_mbps=$RATE queues=$(echo "$QUEUES" | tr ' ' ',') loads=$(echo "$LOADS" | tr ' ' ',') flows=$FLOWS secs=$SECS idle_secs=$IDLE_SECS warmup=$WARMUP latency=$LATENCY cost=$COST cost_reps=$COST_REPS cost_payload=$COST_PAYLOAD cost_gso=$COST_GSO batching=$BATCH gso_max=$GSO_MAX min_tso_segs=$MIN_TSO tx_ring=$TX_RING cpus=$(grep -c ^processor /proc/cpuinfo)"
check probe_two_ports "two emulated VFs probed into two mana netdevs" [ "$(mana_ifaces | wc -l)" -eq 2 ]
if ! mana_setup; then
	result setup FAIL "could not move/address the mana ports"
	exit 1
fi
# bqlkit.gso_max=N: A's largest GSO/TSO packet (ip link gso_max_size),
# both variants alike; 0 = the kernel's (65536).
if [ "$GSO_MAX" != 0 ]; then
	check gso_max "A's gso_max_size set to $GSO_MAX" in_ns A ip link set dev maA gso_max_size "$GSO_MAX"
fi
# bqlkit.min_tso_segs=N: A's smallest TSO packet in MSS (per netns); TCP
# otherwise sizes them from its pacing rate, i.e. from its history.
if [ "$MIN_TSO" != 0 ]; then
	in_ns A sh -c "echo $MIN_TSO >/proc/sys/net/ipv4/tcp_min_tso_segs" || true
	check min_tso_segs "A's tcp_min_tso_segs set to $MIN_TSO" [ "$(in_ns A cat /proc/sys/net/ipv4/tcp_min_tso_segs)" = "$MIN_TSO" ]
fi
# bqlkit.tx_ring=N: A's TX ring in WQEs (ethtool -G), both variants; 0 =
# the driver's.  Read back (mana rounds up to a power of two; bench-mana.sh
# gives one).
if [ "$TX_RING" != 0 ]; then
	in_ns A ethtool -G maA tx "$TX_RING" 2>"$BQLKIT_RUN/ring.err" || true
	check tx_ring "A's TX ring set to $TX_RING WQEs ($(cat "$BQLKIT_RUN/ring.err"))" \
		[ "$(in_ns A ethtool -g maA | awk '/^Current hardware settings/ { c = 1 } c && $1 == "TX:" { print $2; exit }')" = "$TX_RING" ]
	ping_wait 20 || true
fi

# Kernel text patched under load (lib.sh poke_probe): counted per case.
# bqlkit.poke_stacks=1 also records each patch's stack in the trace
# buffer, which ftrace_dump_on_oops (kernel command line) prints if the
# guest dies.
PROBE=
if poke_probe; then
	PROBE=1
	if [ "$(knob poke_stacks 0)" = 1 ]; then
		for _e in "$POKE_T"/events/bqlkit/*/trigger; do echo stacktrace >"$_e"; done
	fi
fi
# patches LABEL: the text patches since the last call.
PATCHES=$( [ -z "$PROBE" ] || pokes)
patches() {
	[ -n "$PROBE" ] || return 0
	_p=$(pokes)
	emit "textpatches label=$1 n=$((_p - PATCHES))"
	PATCHES=$_p
}

# One request/response server for the whole boot (it serves the clients
# one after the other).
/usr/sbin/ip netns exec B /usr/bin/tcpload rr-server "$RR_PORT" 3600 >"$BQLKIT_RUN/rr-server.out" 2>&1 &

# pingq LABEL FILE: RTT percentiles (microseconds) of iputils ping's
# per-reply lines in FILE.
pingq() {
	_sent=$(sed -n 's/^\([0-9]*\) packets transmitted.*/\1/p' "$2")
	sed -n 's/.* time=\([0-9.]*\) ms.*/\1/p' "$2" | awk '{ printf "%d\n", $1 * 1000 }' | sort -n |
		awk -v l="$1" -v s="${_sent:-0}" '{ v[NR] = $1 }
		END {
			if (NR == 0) { printf "pingq label=%s n=0 p50_us=NA p99_us=NA sent=%s\n", l, s; exit }
			i99 = int(NR * 0.99) + 1
			if (i99 > NR) i99 = NR
			printf "pingq label=%s n=%d p50_us=%d p99_us=%d sent=%s\n", l, NR, v[int(NR * 0.5) + 1], v[i99], s
		}' | while read -r _l; do emit "$_l"; done
}

# probes LABEL SECS: ping in the background, the RR probe in the
# foreground, both for SECS seconds from A to B.
probes() {
	/usr/sbin/ip netns exec A /usr/bin/ping -c $(($2 * 20)) -i 0.05 -W 2 -w $(($2 + 3)) "$ADDR_B" >"$BQLKIT_RUN/ping.$1" 2>&1 &
	_ping=$!
	_rr=$(in_ns A tcpload rr-client "$ADDR_B" "$RR_PORT" "$2")
	wait "$_ping"
	emit "rr label=$1 ${_rr#TCPLOAD rr }"
	pingq "$1" "$BQLKIT_RUN/ping.$1"
}

# qdiscb LABEL: A's root qdisc counters (mq sums its children's).
qdiscb() { in_ns A tc -s qdisc show dev maA | qdisc_stats_emit "$1"; }

# load_start KIND SECS: bulk load A -> B in the background: KIND tcp =
# FLOWS TCP streams (tcpload, contents verified by the sinks), udp = a
# UDP flood from FLOWS sockets (1400-byte datagrams; a sink in B reads
# them).  load_wait: wait for it (not in a subshell: it waits for this
# shell's children); writes the sinks' bytes and bad to $BQLKIT_RUN/sunk.
load_start() {
	LOAD_PIDS=
	rm -f "$BQLKIT_RUN"/lsink.* "$BQLKIT_RUN"/lsend.*
	if [ "$1" = udp ]; then
		/usr/sbin/ip netns exec B /usr/bin/udpflood sink "$FLOOD_PORT" $(($2 + 40)) 2000 >"$BQLKIT_RUN/lsink.1" 2>&1 &
		LOAD_PIDS=$!
		sleep 0.3
		/usr/sbin/ip netns exec A /usr/bin/udpflood send "$ADDR_B" "$FLOOD_PORT" "$2" 1400 "$FLOWS" >"$BQLKIT_RUN/lsend.1" 2>&1 &
		LOAD_PIDS="$LOAD_PIDS $!"
		return
	fi
	_i=1
	while [ "$_i" -le "$FLOWS" ]; do
		/usr/sbin/ip netns exec B /usr/bin/tcpload sink $((5000 + _i)) $(($2 + 40)) >"$BQLKIT_RUN/lsink.$_i" 2>&1 &
		LOAD_PIDS="$LOAD_PIDS $!"
		_i=$((_i + 1))
	done
	sleep 0.3
	_i=1
	while [ "$_i" -le "$FLOWS" ]; do
		/usr/sbin/ip netns exec A /usr/bin/tcpload send "$ADDR_B" $((5000 + _i)) "$2" >"$BQLKIT_RUN/lsend.$_i" 2>&1 &
		LOAD_PIDS="$LOAD_PIDS $!"
		_i=$((_i + 1))
	done
}

load_wait() {
	# shellcheck disable=SC2086 # a list of pids
	wait $LOAD_PIDS
	cat "$BQLKIT_RUN"/lsink.* | awk '
		$1 == "TCPLOAD" || $1 == "UDPFLOOD" {
			for (i = 3; i <= NF; i++) { split($i, kv, "="); if (kv[1] == "bytes") b += kv[2]; if (kv[1] == "bad") bad += kv[2] } }
		END { printf "sink_bytes=%d bad=%d\n", b, bad }' >"$BQLKIT_RUN/sunk"
}

# cost_flood L: COST datagrams of COST_PAYLOAD bytes from 4 sockets A -> B
# on the unlimited wire; udpflood (UDPFLOOD_VMMARK=1) executes the begin
# marker before its first datagram and the sink the end marker after its
# last (it stops after COST, or 1 s without one).  Nothing else runs.
# cost_udp N MARK: N datagrams A -> B, the sink on vCPU 1 and the sender
# on vCPU 0; MARK 1: udpflood executes the plugin's markers.  Their
# summaries in csink.out and csend.out.  bqlkit.cost_gso=G: N/G sends of
# G datagrams each (UDP GSO; csend.out's sent= counts the sends).
cost_udp() {
	_sends=$1 _n=$1 _pay=$COST_PAYLOAD _gso=
	if [ "$COST_GSO" -gt 0 ]; then
		_sends=$(($1 / COST_GSO))
		[ "$_sends" -gt 0 ] || _sends=1
		_n=$((_sends * COST_GSO)) _pay=$((COST_PAYLOAD * COST_GSO)) _gso=$COST_PAYLOAD
	fi
	UDPFLOOD_VMMARK=$2 taskset -c 1 /usr/sbin/ip netns exec B /usr/bin/udpflood sink "$FLOOD_PORT" 3600 1000 "$_n" >"$BQLKIT_RUN/csink.out" 2>&1 &
	_sink=$!
	sleep 0.3
	# shellcheck disable=SC2086 # _gso: no word, or the segment size
	UDPFLOOD_VMMARK=$2 taskset -c 0 /usr/sbin/ip netns exec A /usr/bin/udpflood send "$ADDR_B" "$FLOOD_PORT" 3600 "$_pay" 4 "$_sends" $_gso >"$BQLKIT_RUN/csend.out" 2>&1
	wait "$_sink"
}

cost_flood() {
	mdump "$1-0" A maA
	mdump "$1-0" B maB
	cost_udp "$COST" 1
	vm_marked "$1.begin" begin
	# The sink marks its end only if it read something.
	grep -q '^UDPFLOOD sink pkts=0 ' "$BQLKIT_RUN/csink.out" || vm_marked "$1.end" end
	mdump "$1-1" A maA
	mdump "$1-1" B maB
	_db=
	for _c in sq rq cq eq; do
		_db="$_db a_$_c=$(mdelta "$1-0" "$1-1" maA "${_c}_doorbells") b_$_c=$(mdelta "$1-0" "$1-1" maB "${_c}_doorbells")"
	done
	emit "costdb label=$1$_db b_cq_arms=$(mdelta "$1-0" "$1-1" maB cq_arms) tx_wqes=$(mdelta "$1-0" "$1-1" maA tx_wqes) rx_frames=$(mdelta "$1-0" "$1-1" maB rx_frames)"
	emit "costflood label=$1 gso=$COST_GSO $(sed -n 's/^UDPFLOOD send sent=\([0-9]*\) nobufs=\([0-9]*\) .* pps=\([0-9]*\).*/sent=\1 nobufs=\2 send_pps=\3/p' "$BQLKIT_RUN/csend.out") $(sed -n 's/^UDPFLOOD sink pkts=\([0-9]*\) .*/pkts=\1/p' "$BQLKIT_RUN/csink.out")"
	check "$1-delivered" "the cost flood reached B's sink" grep -q '^UDPFLOOD sink pkts=[1-9]' "$BQLKIT_RUN/csink.out"
}

# set_queues Q: ethtool -L combined Q on both ports, then wait until the
# wire answers (the port reset may still be settling).  1 if -L failed.
set_queues() {
	for _n in A:maA B:maB; do
		if ! in_ns "${_n%%:*}" ethtool -L "${_n#*:}" combined "$1" 2>"$BQLKIT_RUN/ethtool.err"; then
			result "q$1-channels" FAIL "ethtool -L combined $1: $(cat "$BQLKIT_RUN/ethtool.err")"
			return 1
		fi
	done
	ping_wait 20 || true
}

# cost_irqs: every mana interrupt to vCPU 0, where the sender runs, as
# veth's softirq NAPI runs the receive path on the sender's CPU: the
# sender then cannot outrun B's receive path, whose backlog would
# otherwise be dropped at the sink's socket (6.1 lost 40 % of a flood
# with B's NAPI on the sink's vCPU).  Unmanaged vectors (mana allocates
# its MSI-X vectors without PCI_IRQ_AFFINITY): writable here.
cost_irqs() {
	_n=0
	for _i in $(awk '/mana/ { sub(":", "", $1); print $1 }' /proc/interrupts); do
		echo 1 >"/proc/irq/$_i/smp_affinity" 2>/dev/null && _n=$((_n + 1))
	done
	emit "costirqs cpu=0 moved=$_n of=$(grep -c mana /proc/interrupts)"
}

if [ "$COST" -gt 0 ]; then
	for q in $QUEUES; do
		set_queues "$q" || continue
		cost_irqs
		mctl A maA set rate_mbps 0
		# Warm-up, not measured: the first flood after the port reset
		# lost ~1 % of its datagrams, the later ones none.
		cost_udp $((COST / 10 + 1)) 0
		emit "costwarm queues=$q $(cat "$BQLKIT_RUN/csink.out")"
		_r=1
		while [ "$_r" -le "$COST_REPS" ]; do
			C=cost-q$q-${COST_PAYLOAD}B
			[ "$COST_GSO" -eq 0 ] || C=$C-gso$COST_GSO
			[ "$_r" -eq 1 ] || C=$C-r$_r
			emit "costcase label=$C queues=$q payload=$COST_PAYLOAD count=$COST"
			cost_flood "$C"
			_r=$((_r + 1))
		done
	done
fi
[ "$LATENCY" = 1 ] || QUEUES=

# Latency boots under -icount (lab/bench-mana.sh BENCH_MODE=icount): the
# one TCG thread moves between the vCPUs every bqlkit.turn_us of guest
# time (the insncount plugin's short turns), not every ~1 ms a busy vCPU
# keeps it, which a probe would otherwise wait out.
if [ -n "$QUEUES" ] && [ "$(knob turns qemu)" = short ]; then
	vm_mark turns.short short-turns
fi
for q in $QUEUES; do
	set_queues "$q" || continue
	mctl A maA set rate_mbps "$RATE"
	emit "benchcase label=q$q-idle queues=$q rate_mbps=$RATE load=none flows=0 secs=$IDLE_SECS"
	patches "q$q-setup"
	probes "q$q-idle" "$IDLE_SECS"
	patches "q$q-idle"
	for load in $LOADS; do
		L=q$q-$load
		emit "benchcase label=$L queues=$q rate_mbps=$RATE load=$load flows=$FLOWS secs=$SECS"
		load_start "$load" $((WARMUP + SECS + 1))
		sleep "$WARMUP"
		t0=$(uptime_s)
		mdump "$L-0" A maA
		mdump "$L-0" B maB
		qdiscb "$L.pre"
		# The insncount plugin's totals at both ends of the probed window
		# (lab/bench-mana.sh keeps them beside the log under -icount):
		# guest instructions per frame under this load.
		vm_mark "$L.begin" || true
		bql_peak A maA "$SECS" >"$BQLKIT_RUN/peak.$L" &
		peak=$!
		probes "$L" "$SECS"
		wait "$peak"
		vm_mark "$L.end" || true
		mdump "$L-1" A maA
		mdump "$L-1" B maB
		t1=$(uptime_s)
		qdiscb "$L.post"
		load_wait
		# Each stream's TCP_INFO as it ended (tcpload): cwnd, and where
		# its time went (receive window, send buffer).
		grep -h '^TCPLOAD tcpinfo ' "$BQLKIT_RUN"/lsend.* "$BQLKIT_RUN"/lsink.* 2>/dev/null |
			while read -r _t _i _rest; do emit "tcpinfo label=$L $_rest"; done
		patches "$L"
		wire=$(awk -v b="$(mdelta "$L-0" "$L-1" maA tx_bytes)" -v t0="$t0" -v t1="$t1" 'BEGIN { printf "%.1f", (t1 > t0 ? b * 8 / (t1 - t0) / 1e6 : 0) }')
		emit "bulk label=$L mbps=$wire $(cat "$BQLKIT_RUN/sunk")"
		read -r pk_in pk_lim <"$BQLKIT_RUN/peak.$L" || { pk_in=0 pk_lim=0; }
		emit "bqlpeak label=$L max_inflight=$pk_in max_limit=$pk_lim"
		# Per txq of A: mean/largest BQL inflight bytes (bqlwatch), and
		# per SQ the WQEs/bytes the model sent in the window (its wire
		# takes one WQE from each non-empty SQ in turn).
		emit "bqlq label=$L $(awk '/^BQLWATCH/ { q = FILENAME; sub(/.*bqlw\./, "", q)
			for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
			printf "tx%s=%d/%d ", q, v["reads"] ? v["sum_inflight"] / v["reads"] : 0, v["max_inflight"] }' "$BQLKIT_RUN"/bqlw.* 2>/dev/null)"
		emit "sqs label=$L $(awk 'FNR == 1 { f++ }
			/^sq[0-9]/ { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[f, $1, kv[1]] = kv[2] }; q[$1] = 1 }
			END { for (s in q) { w = v[2, s, "entries"] - v[1, s, "entries"]
				if (w > 0) printf "%s=%d/%d ", s, w, v[2, s, "bytes"] - v[1, s, "bytes"] } }' "$BQLKIT_RUN/mana.$L-0.maA" "$BQLKIT_RUN/mana.$L-1.maA")"
		emit "db label=$L tx_wqes=$(mdelta "$L-0" "$L-1" maA tx_wqes) sq_doorbells=$(mdelta "$L-0" "$L-1" maA sq_doorbells) rx_frames=$(mdelta "$L-0" "$L-1" maB rx_frames) rq_doorbells=$(mdelta "$L-0" "$L-1" maB rq_doorbells) wire_waits=$(mdelta "$L-0" "$L-1" maA tx_wire_waits)"
		check "$L-measured" "probes answered under load and the load moved data" \
			sh -c "grep -q 'rr label=$L n=[1-9]' $BQLKIT_RUN/lines && grep -q 'bulk label=$L mbps=[0-9.]* sink_bytes=[1-9][0-9]* bad=0' $BQLKIT_RUN/lines"
		if [ "$KIT" = 1 ]; then
			check "$L-bql-limits" "the kit's BQL limited A's SQs (max limit $pk_lim)" [ "$pk_lim" -gt 0 ]
		else
			check "$L-no-bql" "the stock mana charges no BQL (max limit $pk_lim)" [ "$pk_lim" -eq 0 ]
		fi
		check "$L-inflight-zero" "A's BQL inflight back to 0 after the load" [ "$(bql_settle A maA 5)" -eq 0 ]
	done
	mctl A maA set rate_mbps 0
done
check dmesg_clean "no WARN/BUG/Oops/transmit queue timeout in dmesg" dmesg_check
