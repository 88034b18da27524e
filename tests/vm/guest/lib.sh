# shellcheck shell=sh
# Guest-side helpers for bqlkit VM scenarios (busybox ash).  Sourced by
# /init and by every scenario.  Output contract (one line each):
#   BQLKIT <kind> key=value ...          informational / benchmark data
#   BQLKIT-RESULT <name> PASS|FAIL|SKIP <detail>
# Topology: netns A (sender, vethA 10.0.0.1/24, fq_codel root)
#       <-> netns B (receiver, vethB 10.0.0.2/24, GRO on, optional slowdown).

# Debian's busybox ash runs its own applets whatever PATH says: force the
# real binaries copied from the host.
ip() { /usr/sbin/ip "$@"; }
tc() { /usr/sbin/tc "$@"; }
ethtool() { /usr/sbin/ethtool "$@"; }
ping() { /usr/bin/ping "$@"; }

BQLKIT_RUN=/run/bqlkit
mkdir -p "$BQLKIT_RUN"
ADDR_A=10.0.0.1
ADDR_B=10.0.0.2
FLOOD_PORT=9000
# XDP programs guest/init loaded and holds in the XDP dispatcher, pinned.
XDP_PINS=/run/bpf

# emit KIND key=value...: print a data line and keep it for later queries.
emit() {
	echo "BQLKIT $*"
	echo "BQLKIT $*" >>"$BQLKIT_RUN/lines"
}

# result NAME PASS|FAIL|SKIP DETAIL...
result() {
	_n=$1 _s=$2
	shift 2
	echo "BQLKIT-RESULT $_n $_s $*"
}

# check NAME DETAIL CMD...: PASS if CMD succeeds, else FAIL.
check() {
	_cn=$1 _cd=$2
	shift 2
	if "$@"; then result "$_cn" PASS "$_cd"; else result "$_cn" FAIL "$_cd"; fi
}

# emulator_check: the emulator keeps the flags that CMPXCHG8B/16B leave
# alone (tests/vm/cx16flags.c; Debian's QEMU 7.2 does not, and a guest dies
# of it under load: lab/qemu/patches/0001-*).  Run by init before every
# scenario; amd64 guests only (the tool is x86-64 code).
emulator_check() {
	[ -x /usr/bin/cx16flags ] || return 0
	_out=$(cx16flags | tr '\n' ' ')
	check emulator_cx16_flags "$_out" [ "$_out" = "CX16FLAGS ok " ]
}

# knob NAME DEFAULT: value of bqlkit.NAME=... on the kernel command line.
knob() {
	_v=$(tr ' ' '\n' </proc/cmdline | sed -n "s/^bqlkit\.$1=//p" | tail -n1)
	echo "${_v:-$2}"
}

uptime_s() { cut -d' ' -f1 /proc/uptime; }

# in_ns NS CMD...: run CMD inside netns NS (with NS's view of /sys).
in_ns() {
	_ns=$1
	shift
	ip netns exec "$_ns" "$@"
}

# xdp_attach NS DEV NAME: attach the XDP program /bqlkit/NAME.o to DEV in
# NS: the copy guest/init holds when there is one (attaching it rewrites no
# kernel text), else a fresh load (bqlkit.hold=0).
xdp_attach() {
	if [ -e "$XDP_PINS/$3" ]; then
		ip -n "$1" link set dev "$2" xdp pinned "$XDP_PINS/$3"
	else
		ip -n "$1" link set dev "$2" xdp obj "/bqlkit/$3.o" sec xdp
	fi
}

# Kernel text patches, counted (x86).  poke_probe puts a kprobe on each of
# the functions that every patch goes through (static branches, static
# calls, the XDP dispatcher: text_poke_bp and text_poke_finish, renamed
# smp_text_poke_single and smp_text_poke_batch_finish in 6.16) that this
# kernel has, and fails when it has none (not x86, no CONFIG_KPROBE_EVENTS);
# pokes prints their hits so far.
POKE_T=/sys/kernel/tracing
poke_probe() {
	mount -t tracefs nodev "$POKE_T" 2>/dev/null
	[ -d "$POKE_T/events/bqlkit" ] && return 0
	for _pf in text_poke_bp text_poke_finish smp_text_poke_single smp_text_poke_batch_finish; do
		echo "p:bqlkit/poke_$_pf $_pf" >>"$POKE_T/kprobe_events" 2>/dev/null &&
			echo 1 >"$POKE_T/events/bqlkit/poke_$_pf/enable" 2>/dev/null
	done
	[ -d "$POKE_T/events/bqlkit" ]
}
pokes() { awk '$1 ~ /^poke_/ { n += $2 } END { print n + 0 }' "$POKE_T/kprobe_profile"; }

ensure_netns() {
	[ -e "/run/netns/$1" ] || ip netns add "$1" || return 1
	ip -n "$1" link set lo up
}

# slow_receiver N: N non-matching ingress u32 filters on vethB make the
# receiver's NAPI poll slow enough for a standing queue to build up.
slow_receiver() {
	_t0=$(uptime_s)
	tc -n B qdisc add dev vethB clsact || return 1
	_i=1
	: >"$BQLKIT_RUN/slow.batch"
	while [ "$_i" -le "$1" ]; do
		echo "filter add dev vethB ingress prio $_i protocol ip u32 match ip dst 192.0.2.$((_i % 250 + 1))/32 action drop"
		_i=$((_i + 1))
	done >"$BQLKIT_RUN/slow.batch"
	tc -n B -batch "$BQLKIT_RUN/slow.batch" || return 1
	emit "slow filters=$1 secs=$(echo "$(uptime_s) $_t0" | awk '{printf "%.2f", $1 - $2}')"
}

# tx_queues: the numbers of vethA's tx queues in use (0 1 ...).
tx_queues() { in_ns A ls /sys/class/net/vethA/queues | sed -n 's/^tx-//p'; }

# pair_qdisc: vethA's qdisc per $PAIR_QDISC: fq_codel as root (root, the
# default) or under mq (mq), where it dequeues nothing while BQL holds the
# txq stopped (docs/design.md, "veth: the qdisc in front of BQL").
pair_qdisc() {
	case ${PAIR_QDISC:-root} in
	root) tc -n A qdisc replace dev vethA root fq_codel ;;
	mq)
		tc -n A qdisc replace dev vethA root handle 1: mq || return 1
		for _q in $(tx_queues); do
			tc -n A qdisc replace dev vethA parent "1:$((_q + 1))" fq_codel || return 1
		done
		;;
	*) echo "pair_qdisc: PAIR_QDISC=$PAIR_QDISC is neither root nor mq" >&2; return 1 ;;
	esac
}

# setup_pair [SLOW]: (re)create the veth pair between netns A and B, with
# $PAIR_QUEUES tx and rx queues on each end if set (default: veth's, 1),
# BQL completion coalescing at $PAIR_TX_USECS on vethA if set (the kit's
# module only; default: the module's, 0), and quiet from the start
# (quiet_pair before the links come up) if $PAIR_QUIET is 1, and vethA's
# qdisc per $PAIR_QDISC (pair_qdisc).
setup_pair() {
	_qopt=${PAIR_QUEUES:+numtxqueues $PAIR_QUEUES numrxqueues $PAIR_QUEUES}
	# shellcheck disable=SC2086 # $_qopt is a word list
	ensure_netns A && ensure_netns B &&
		ip link add vethA $_qopt netns A type veth peer name vethB $_qopt netns B &&
		ip -n A addr add "$ADDR_A/24" dev vethA &&
		ip -n B addr add "$ADDR_B/24" dev vethB &&
		{ [ "${PAIR_QUIET:-0}" != 1 ] || quiet_pair; } &&
		ip -n A link set vethA up &&
		ip -n B link set vethB up &&
		pair_qdisc &&
		in_ns A ethtool -K vethA tso off &&
		in_ns B ethtool -K vethB gro on || return 1
	if [ -n "${PAIR_TX_USECS:-}" ]; then
		in_ns A ethtool -C vethA tx-usecs "$PAIR_TX_USECS" || return 1
	fi
	if [ "${1:-0}" -gt 0 ]; then slow_receiver "$1" || return 1; fi
	emit "pair up txqueues=$(in_ns A ls /sys/class/net/vethA/queues | grep -c '^tx-') slow=${1:-0}"
}

delete_pair() { ip -n A link del vethA; }

# napi_thread CPU: vethB's NAPI in its own kthread (threaded NAPI, 5.12+)
# pinned to CPU, so that the receive path runs beside the sender instead
# of in the sender's softirq right after each send: only then can a
# standing queue form in front of a slow receiver, and the kit charges BQL
# only behind one.  1 if either step failed.
napi_thread() {
	in_ns B sh -c 'echo 1 >/sys/class/net/vethB/threaded' 2>/dev/null || return 1
	grep -l '^napi/vethB' /proc/[0-9]*/comm | sed 's,^/proc/\([0-9]*\)/comm$,\1,' | {
		_ok=1
		while read -r _p; do taskset -p -c "$1" "$_p" >/dev/null || _ok=0; done
		[ "$_ok" = 1 ]
	}
}

# quiet_pair: the pair carries only the scenario's own packets: IPv6 off on
# both ends (no DAD, MLD reports or router solicitations) and permanent
# neighbour entries (no ARP probes).  Those are sent from timers, so one
# of them may be queued behind a ping that is still in vethB's ring; and
# at link-up IPv6 sends several back to back, the later ones queued behind
# the first: setup_pair runs this before the links come up ($PAIR_QUIET).
quiet_pair() {
	_mac_a=$(in_ns A cat /sys/class/net/vethA/address) &&
		_mac_b=$(in_ns B cat /sys/class/net/vethB/address) &&
		in_ns A sh -c 'echo 1 >/proc/sys/net/ipv6/conf/vethA/disable_ipv6' &&
		in_ns B sh -c 'echo 1 >/proc/sys/net/ipv6/conf/vethB/disable_ipv6' &&
		ip -n A neigh replace "$ADDR_B" lladdr "$_mac_b" dev vethA nud permanent &&
		ip -n B neigh replace "$ADDR_A" lladdr "$_mac_a" dev vethB nud permanent
}

# tx_packets: packets vethA has sent.
tx_packets() { in_ns A cat /sys/class/net/vethA/statistics/tx_packets; }

# split_flood: vethB's NAPI threaded on CPU 1 (napi_thread) and the flood's
# sender on CPU 0 (FLOOD_SEND_CPU), so that a standing queue forms in front
# of a slow receiver: in the sender's softirq the receive path paces the
# sender, and the kit charges BQL only behind a queue.  1, the sender
# unpinned, where threaded NAPI is missing (before 5.12).
split_flood() {
	FLOOD_SEND_CPU=
	napi_thread 1 || return 1
	FLOOD_SEND_CPU=0
}

# napi_defer USECS: where vethB's NAPI can have no thread of its own (before
# 5.12), hold it off USECS after every poll that did work
# (napi_defer_hard_irqs 1 and gro_flush_timeout, 5.7+): such a poll leaves
# the ring's notification masked and a timer polls again, so that the flood
# queues in the ring meanwhile, as behind a receiver busy on another CPU.
# 1 if either setting is missing.
napi_defer() {
	in_ns B sh -c "echo 1 >/sys/class/net/vethB/napi_defer_hard_irqs &&
		echo $(($1 * 1000)) >/sys/class/net/vethB/gro_flush_timeout" 2>/dev/null
}

# bql_attr NS IF ATTR VALUE: one byte_queue_limits attribute (limit_min,
# limit_max: DQL's defaults 0 and 1879048192 on 64-bit) of every tx queue
# of IF; fails where the kernel shows no BQL sysfs for IF (6.9+ hides it
# for veth, an lltx device) or a write failed.
bql_attr() {
	in_ns "$1" sh -c 'for d in /sys/class/net/'"$2"'/queues/tx-*/byte_queue_limits; do
		[ -w "$d/'"$3"'" ] && echo '"$4"' >"$d/'"$3"'" || exit 1
	done' 2>/dev/null
}

# veth_limit_min N: every vethA txq's BQL limit_min (in packets: the kit
# charges one unit per packet); fails as bql_attr does.
veth_limit_min() { bql_attr A vethA limit_min "$1"; }

# veth_deep_ring: make vethA's BQL hold a deep ring (a teardown then finds
# charged entries to complete: smoke.sh's napi_del phase says why):
# limit_min 200, else (6.9+ hides BQL sysfs for veth) completions coalesced
# at tx-usecs 20000, so that DQL finds the queue starved and raises its
# limit.  Prints which; 1 when neither could be set.  veth_deep_ring_off
# undoes it.
veth_deep_ring() {
	if veth_limit_min 200; then
		echo "limit_min 200"
	elif in_ns A ethtool -C vethA tx-usecs 20000; then
		echo "limit_min not settable; tx-usecs 20000"
	else
		echo "limit_min not settable, tx-usecs not set"
		return 1
	fi
}
veth_deep_ring_off() { veth_limit_min 0 || in_ns A ethtool -C vethA tx-usecs 0; }

# ping_ok: the sender can reach the receiver (queue not stuck).
ping_ok() { in_ns A ping -c 3 -W 1 "$ADDR_B" >/dev/null 2>&1; }

# ping_wait N: ping_ok, up to N tries (a port just reset may still be
# settling); fails when none got through.
ping_wait() {
	_pw=0
	while ! ping_ok; do
		_pw=$((_pw + 1))
		[ "$_pw" -lt "$1" ] || return 1
	done
}

# bql_sample LABEL: one line per tx queue of vethA.  Source is the BQL sysfs
# directory if present, else the kit's ethtool -S counters, else none.
bql_sample() {
	_label=$1
	_stats=$(in_ns A ethtool -S vethA 2>/dev/null)
	for _q in $(in_ns A ls /sys/class/net/vethA/queues | grep '^tx-'); do
		_n=${_q#tx-}
		_d=/sys/class/net/vethA/queues/$_q/byte_queue_limits
		if _v=$(in_ns A sh -c "[ -d $_d ] && cat $_d/inflight $_d/limit" 2>/dev/null); then
			# shellcheck disable=SC2086 # two numbers, split into "$@" on purpose
			set -- $_v
			_inf=$1 _lim=$2 _src=sysfs
		else
			_inf=$(echo "$_stats" | sed -n "s/^ *tx_queue_${_n}_bql_inflight: *//p")
			_lim=$(echo "$_stats" | sed -n "s/^ *tx_queue_${_n}_bql_limit: *//p")
			_src=ethtool
			if [ -z "$_inf" ] || [ -z "$_lim" ]; then
				_inf=NA _lim=NA _src=none
			fi
		fi
		emit "bql label=$_label queue=$_q inflight=$_inf limit=$_lim source=$_src"
	done
}

# bql_watch LABEL SECS [INTERVAL_US [QUEUE]]: sample vethA's tx-QUEUE (0)
# BQL inflight/limit as fast as the kernel answers (or every INTERVAL_US;
# empty: as fast) for SECS seconds (bqlwatch) and emit one bql line with
# the largest values seen, the number of reads, how many saw inflight > 0,
# the sum of inflight over all reads and the last limit.  A single read
# rarely finds the ring non-empty: the peer's NAPI drains it within one poll.
bql_watch() {
	bql_watch_emit "$1" "$(in_ns A bqlwatch vethA "${4:-0}" "$2" ${3:+"$3"})" "${4:-0}"
}

# bql_watch_charged LABEL SECS [QUEUE]: bql_watch LABEL in 1 s windows
# until one sees inflight > 0 on tx-QUEUE (0), for at most SECS windows; a
# flood can take a while to build the standing queue the kit charges behind.
bql_watch_charged() {
	_bwc=0
	while [ $_bwc -lt "$2" ]; do
		bql_watch "$1" 1 '' "${3:-0}"
		[ "$(bql_max "$1" inflight)" = 0 ] || return 0
		_bwc=$((_bwc + 1))
	done
	return 1
}

# bql_watch_emit LABEL BQLWATCH_OUTPUT [QUEUE]: bql_watch's line from
# bqlwatch's (of tx-QUEUE, 0).
bql_watch_emit() {
	_w=$2
	_src=$(echo "$_w" | sed -n 's/.*source=\([a-z]*\).*/\1/p')
	if [ "$_src" = sysfs ] || [ "$_src" = ethtool ]; then
		emit "bql label=$1 queue=tx-${3:-0} inflight=$(echo "$_w" | sed -n 's/.*max_inflight=\([0-9]*\).*/\1/p') limit=$(echo "$_w" | sed -n 's/.*max_limit=\([0-9]*\).*/\1/p') source=$_src $(echo "$_w" | grep -o 'reads=[0-9]* nonzero=[0-9]*') $(echo "$_w" | grep -o 'sum_inflight=[0-9]* last_limit=[0-9]*')"
	else
		emit "bql label=$1 queue=tx-${3:-0} inflight=NA limit=NA source=none"
	fi
}

# bql_values LABEL_REGEX FIELD: FIELD values of the matching bql samples.
bql_values() {
	awk -v re="^label=($1)\$" -v f="$2=" '
		$1 == "BQLKIT" && $2 == "bql" && $3 ~ re {
			for (i = 4; i <= NF; i++)
				if (index($i, f) == 1) print substr($i, length(f) + 1)
		}' "$BQLKIT_RUN/lines"
}

# bql_has_source LABEL_REGEX: true unless the samples have no BQL data.
bql_has_source() { ! bql_values "$1" source | grep -qx none; }

bql_max() { bql_values "$1" "$2" | awk 'BEGIN { m = 0 } $1 > m { m = $1 } END { print m }'; }

# qdisc_stats LABEL: root qdisc counters of vethA.
qdisc_stats() { tc -n A -s qdisc show dev vethA | qdisc_stats_emit "$1"; }

# qdisc_stats_emit LABEL: qdisc_stats' line from tc -s qdisc output on stdin.
qdisc_stats_emit() {
	awk -v l="$1" '
		/^qdisc/ { n++ }
		n == 1 && /dropped/ {
			for (i = 1; i <= NF; i++) {
				gsub(/[(),]/, "", $i)
				if ($i == "dropped") d = $(i + 1)
				if ($i == "requeues") r = $(i + 1)
			}
		}
		n == 1 && /backlog/ { b = $3 }
		END {
			gsub(/[^0-9]/, "", b); gsub(/[^0-9]/, "", d); gsub(/[^0-9]/, "", r)
			printf "qdisc label=%s backlog_pkts=%s drops=%s requeues=%s\n", l, b, d, r
		}' | while read -r _l; do emit "$_l"; done
}

# rtt_report LABEL FILE: summarize iputils ping output kept in FILE.
rtt_report() {
	_loss=$(sed -n 's/.* \([0-9.]*\)% packet loss.*/\1/p' "$2")
	_rtt=$(sed -n 's|^rtt [^=]*= \([0-9.]*\)/\([0-9.]*\)/\([0-9.]*\)/.*|min=\1 avg=\2 max=\3|p' "$2")
	emit "rtt label=$1 ${_rtt:-min=NA avg=NA max=NA} loss=${_loss:-100}%"
}

# rtt_measure LABEL COUNT: ping at 20 Hz and report.
rtt_measure() {
	in_ns A ping -q -c "$2" -i 0.05 -W 1 -w $(($2 / 20 + 3)) "$ADDR_B" >"$BQLKIT_RUN/ping.$1" 2>&1
	rtt_report "$1" "$BQLKIT_RUN/ping.$1"
}

# flood_start LABEL SECS PAYLOAD NSOCKETS: sink in B, sender in A (background;
# on CPU $FLOOD_SEND_CPU if set).
flood_start() {
	FLOOD_LABEL=$1
	# Background simple commands (not functions) so that $! is the
	# udpflood process itself (ip netns exec execs it) and kill reaches it.
	/usr/sbin/ip netns exec B /usr/bin/udpflood sink "$FLOOD_PORT" $(($2 + 30)) >"$BQLKIT_RUN/sink.out" 2>&1 &
	FLOOD_SINK=$!
	sleep 0.3
	${FLOOD_SEND_CPU:+taskset -c "$FLOOD_SEND_CPU"} /usr/sbin/ip netns exec A /usr/bin/udpflood send "$ADDR_B" "$FLOOD_PORT" "$2" "$3" "$4" >"$BQLKIT_RUN/send.out" 2>&1 &
	FLOOD_SEND=$!
	emit "flood label=$1 start secs=$2 payload=$3 sockets=$4 uptime=$(uptime_s)"
}

# flood_wait: let the sender finish, stop the sink, print UDPFLOOD lines.
flood_wait() {
	wait "$FLOOD_SEND"
	kill "$FLOOD_SINK" 2>/dev/null
	wait "$FLOOD_SINK"
	emit "flood label=$FLOOD_LABEL end uptime=$(uptime_s)"
	cat "$BQLKIT_RUN/send.out" "$BQLKIT_RUN/sink.out"
}

# flood_stop: end the flood now.
flood_stop() {
	kill "$FLOOD_SEND" 2>/dev/null
	flood_wait
}

# dmesg_check: fail (and show the lines) if the kernel complained.  On a
# debug kernel (bqlkit.debug= on the command line) it leaves KASAN, KCSAN
# and lockdep reports (the first lines in debug-reports.ere) to the host,
# which tells the kit's from the kernel's own (tests/t79).
dmesg_check() {
	_complaint='WARNING:|BUG:|transmit queue|refcount|ptr_ring|Oops|general protection'
	if grep -q 'bqlkit\.debug=' /proc/cmdline; then
		_bad=$(dmesg | grep -v -E -f /bqlkit/debug-reports.ere | grep -E "$_complaint")
	else
		_bad=$(dmesg | grep -E "$_complaint")
	fi
	# DMESG_EXPECTED: lines a scenario provoked on purpose (an ERE).
	[ -z "${DMESG_EXPECTED:-}" ] || _bad=$(echo "$_bad" | grep -v -E "$DMESG_EXPECTED")
	[ -z "$_bad" ] && return 0
	echo "$_bad" | head -n 40 | sed 's/^/BQLKIT dmesg /'
	return 1
}

# module_status NAME: ok|fail, how /init's insmod of NAME went.
module_status() { sed -n "s/^$1 //p" "$BQLKIT_RUN/modules.status"; }

# kit_module_loaded NAME: results NAME_insmod (the kit's NAME.ko went in)
# and NAME_is_kit (the loaded NAME reports the kit's version).
kit_module_loaded() {
	_m=$1
	check "${_m}_insmod" "the kit's $_m.ko inserted" [ "$(module_status "$_m")" = ok ]
	_ver=$(cat "/sys/module/$_m/version" 2>/dev/null)
	emit "module name=$_m version=${_ver:-none} srcversion=$(cat "/sys/module/$_m/srcversion" 2>/dev/null)"
	case $_ver in
	*-bqlkit) result "${_m}_is_kit" PASS "version=$_ver" ;;
	*) result "${_m}_is_kit" FAIL "version=${_ver:-none}: not the kit's module" ;;
	esac
}

# vm_mark LABEL [mark|begin|end|short-turns|qemu-turns]: execute the
# marker of the insncount TCG plugin (lab/qemu/plugins/insncount.c; vmmark) and
# emit
#   BQLKIT mark label=LABEL seq=N cmd=CMD
# N numbers the markers from 1 as the plugin does (the plugin's output line
# "insncount mark seq=N ..." has the instruction counts at this point);
# begin/end also start/write the plugin's profile.  Without the plugin the
# marker is a no-op and the line is still printed.  Serial callers only:
# the count lives in $BQLKIT_RUN/mark.seq.
vm_mark() {
	/usr/bin/vmmark "${2:-mark}" || return 1
	vm_marked "$1" "${2:-mark}"
}

# vm_marked LABEL CMD: number a marker another program executed (udpflood
# with UDPFLOOD_VMMARK=1: "begin" before its first datagram, "end" after
# the sink's last) and emit its mark line, as vm_mark does for its own.
vm_marked() {
	_ms=$(($(cat "$BQLKIT_RUN/mark.seq" 2>/dev/null || echo 0) + 1))
	echo "$_ms" >"$BQLKIT_RUN/mark.seq"
	emit "mark label=$1 seq=$_ms cmd=$2 uptime=$(uptime_s)"
}

# wait_inflight_zero LABEL: poll every tx queue's BQL inflight until all are
# 0 (6 tries, ~3 s: less than the kit's 5 s TX watchdog, so that its repair
# cannot pass this check); sets INFLIGHT to the last maximum.
wait_inflight_zero() {
	for _t in 1 2 3 4 5 6; do
		bql_sample "$1-$_t"
		INFLIGHT=$(bql_max "$1-$_t" inflight)
		bql_has_source "$1-$_t" || INFLIGHT=nosource
		[ "$INFLIGHT" = 0 ] && return 0
		sleep 0.5
	done
	return 1
}

# wait_backlog_zero LABEL [TRIES]: the root qdisc of vethA drains (TRIES
# looks 0.5 s apart, default 6: ~3 s, before the kit's 5 s TX watchdog
# could restart a queue); a stopped tx queue keeps packets in it.  Sets
# BACKLOG to the last value.
wait_backlog_zero() {
	_t=1
	while [ "$_t" -le "${2:-6}" ]; do
		qdisc_stats "$1-$_t"
		BACKLOG=$(awk -v l="label=$1-$_t" '$2 == "qdisc" && $3 == l { sub("backlog_pkts=", "", $4); print $4 }' "$BQLKIT_RUN/lines" | tail -n1)
		[ "$BACKLOG" = 0 ] && return 0
		sleep 0.5
		_t=$((_t + 1))
	done
	return 1
}

# tx_timeouts: TX watchdog timeouts over vethA's tx queues.
tx_timeouts() {
	in_ns A sh -c 'cat /sys/class/net/vethA/queues/tx-*/tx_timeout' | awk '{ n += $1 } END { print n + 0 }'
}

# Signature enforcement (guest/sigenforce.sh: veth; guest/mana-sigenforce.sh:
# mana).  bqlkit.enforce says whether the host booted the kernel with
# module.sig_enforce=1.
# sig_state DRIVER: check that the kernel enforces signatures as asked.
sig_state() {
	SIG_ENFORCE=$(knob enforce 0)
	_sig=$(cat /sys/module/module/parameters/sig_enforce 2>/dev/null || echo none)
	emit "sigenforce asked=$SIG_ENFORCE sig_enforce=$_sig kernel=$(uname -r) driver=$1"
	if [ "$SIG_ENFORCE" = 1 ]; then
		check sig_enforce_on "the kernel enforces signatures (sig_enforce=$_sig)" [ "$_sig" = Y ]
	else
		check sig_enforce_off "the kernel does not enforce signatures (sig_enforce=$_sig)" [ "$_sig" = N ]
	fi
}
# sig_premise MODULE KO: with the in-tree MODULE unloaded, insert KO (the
# kit's MODULE signed with a key the kernel does not trust, as DKMS signs it
# before its key is enrolled) and check what the kernel did; then the
# in-tree MODULE goes back in.
sig_premise() {
	rmmod "$1"
	if _out=$(insmod "$2" 2>&1); then _loaded=1; else _loaded=0; fi
	emit "sigenforce insmod_signed loaded=$_loaded out=$(echo "$_out" | tr '\n' ' ')"
	[ "$_loaded" = 0 ] || rmmod "$1"
	insmod "/lib/modules/bqlkit/$1.ko"
	if [ "$SIG_ENFORCE" = 1 ]; then
		check kernel_refuses_untrusted "the kernel refused the kit's $1 signed with an untrusted key ($_out)" [ "$_loaded" = 0 ]
	else
		check kernel_loads_untrusted "the kernel loaded the kit's $1 signed with an untrusted key" [ "$_loaded" = 1 ]
	fi
}
# sig_decision: the kit's decision on this kernel (/bqlkit/module-trust.sh,
# scripts/module-trust.sh as install.sh and dkms.conf run it).
sig_decision() {
	_line=$(sh /bqlkit/module-trust.sh "$(uname -r)")
	_rc=$?
	emit "sigenforce module_trust rc=$_rc line=$_line"
	if [ "$SIG_ENFORCE" = 1 ]; then
		# shellcheck disable=SC2016 # the inner sh's $1 and $2
		check kit_refuses "the kit's decision: do not install (exit $_rc: $_line)" \
			sh -c '[ "$1" -eq 1 ] && echo "$2" | grep -q "module.sig_enforce=1"' _ "$_rc" "$_line"
	else
		check kit_installs "the kit's decision: install (exit $_rc)" [ "$_rc" -eq 0 ]
	fi
}
