#!/bin/bash
# lab/insncount.py on a profile it can check by hand: a function built
# here, a guest console log whose kallsyms place it (as a BENCH_PROFILE=1
# boot prints them) and a profile with counts at two of its instructions
# and one outside it.  profile sums per function; annotate puts the counts
# beside the disassembly, per packet, and names a function it cannot find.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ic=$BQLKIT_TOP/lab/insncount.py

cat >"$tmp/m.c" <<'EOF'
int probe_fn(int a, int b)
{
	if (a > b)
		return a - b;
	return a * b + 3;
}

int other_fn(int a)
{
	return a + 1;
}
EOF
gcc -O2 -c -o "$tmp/m.o" "$tmp/m.c"
# probe_fn's second instruction: its offset in the object.
off2=$(objdump -d --no-show-raw-insn "$tmp/m.o" |
	awk '/<probe_fn>:/ { on = 1; next } on && /^ *[0-9a-f]+:/ { n++; if (n == 2) { sub(":", "", $1); print $1; exit } }')
base=ffffffffc0001000
other=ffffffffc0001100
addr2=$(printf '%x' $((0x$base + 0x$off2)))
{
	echo "BQLKIT mark label=cost.begin seq=1 cmd=begin"
	echo "BQLKIT mark label=cost.end seq=2 cmd=end"
	echo "BQLKIT kallsyms begin"
	printf '%s t probe_fn\t[m]\n%s t other_fn\t[m]\n' "$base" "$other" | gzip | base64
	echo "BQLKIT kallsyms end"
} >"$tmp/console.log"
{
	echo "# profile seq=2 begin=1 vcpus=2"
	echo "$base 4000 1000 3000"
	echo "$addr2 600 600 0"
	echo "$other 200 0 200"
} >"$tmp/prof"

out=$(python3 "$ic" profile "$tmp/prof" 2 "$tmp/console.log" 2>&1)
has insncount-profile-per-function '^ *4600 .* 1600 3000 probe_fn' "$out"
has insncount-profile-other-function '^ *200 .* 0 200 other_fn' "$out"

out=$(python3 "$ic" annotate "$tmp/prof" 2 "$tmp/console.log" "$tmp/m.o" probe_fn --per 100 2>&1)
has insncount-annotate-first-block '^ *40.00 *0 ' "$out"
has insncount-annotate-second-block "^ *6.00 *${off2#0} " "$out"
has insncount-annotate-total '^ *46.00 total' "$out"
lacks insncount-annotate-only-its-own '^ *2.00 ' "$out"

bad insncount-annotate-unknown-function "no text symbols named probe in the guest's kallsyms" \
	python3 "$ic" annotate "$tmp/prof" 2 "$tmp/console.log" "$tmp/m.o" probe

# make bench (veth), the slowed flood's window: instructions per packet the
# sink read (62.5M over 500 pps x 2.5 s), the NAPI thread's slices, the
# NET_TX softirqs of both vCPUs (3 + 150), guest busy (62.5M x 4 ns / 2.5 s).
has veth-report-window-work '^50000.0 17 153 0.1$' "$(python3 - "$BQLKIT_TOP/lab/bench-report.py" <<'PY'
import importlib.util, sys
spec = importlib.util.spec_from_file_location("bench_report", sys.argv[1])
br = importlib.util.module_from_spec(spec)
spec.loader.exec_module(br)
d = {"kind": "slowed", "rtt_ms": [1.0, 2.0], "send": {"sent": 4000, "pps": 1000}, "sink": {"pkts": 2000},
     "bql": [], "qdisc": [], "ping_tx": 2, "ping_rx": 2,
     "sched": {"from": 10.0, "to": 12.5, "napi_threads": 1, "napi_wait_ns": 0, "napi_slices": 17},
     "softirqs": {"pre": {"net_tx0": 7, "net_tx1": 50, "net_rx0": 0, "net_rx1": 1},
                  "post": {"net_tx0": 10, "net_tx1": 200, "net_rx0": 0, "net_rx1": 5}},
     "insn": {"total": 62500000, "vcpu_switches": 1000}}
m = br.run_metrics({"scenarios": {"s": d}, "idle": {"rtt_ms": [0.1]}}, "s")
print(m.get("window_insn_per_pkt"), m.get("napi_slices"), m.get("net_tx_raised"),
      m["window_insns"] * 4 / 1e9 / m["window_secs"] if m.get("window_insns") else None)
PY
)"

# make bench DRIVER=mana's latency boots under -icount: the guest marks
# each loaded case's probed window, and the report divides the plugin's
# instructions in it by the frames B received (the db line's rx_frames):
# stock 5000 and 5100 insn/frame, kit 5200 and 5200 -> kit/stock 5200/5050,
# noise (5100 - 5000) / 5050.  Without the plugin's counts no cost at all.
# make bench-scale's report puts that case in its queues x flows table,
# with the ratio of the lowest runs (5200 / 5000) beside it.
mana_log() { # VARIANT RUN DELTA
	local d=$tmp/mana/bench-scale/mana/f8
	mkdir -p "$d"
	{
		echo "BQLKIT benchcase label=q1-idle queues=1 rate_mbps=20 load=none flows=0 secs=4"
		echo "BQLKIT rr label=q1-idle n=100 p50_us=200 p90_us=210 p99_us=300 max_us=400"
		echo "BQLKIT benchcase label=q1-tcp queues=1 rate_mbps=20 load=tcp flows=8 secs=4"
		echo "BQLKIT mark label=q1-tcp.begin seq=1 cmd=mark uptime=20.00"
		echo "BQLKIT rr label=q1-tcp n=100 p50_us=$([ "$1" = stock ] && echo 100000 || echo 4000) p90_us=1 p99_us=$([ "$1" = stock ] && echo 120000 || echo 8000) max_us=1"
		echo "BQLKIT mark label=q1-tcp.end seq=2 cmd=mark uptime=24.00"
		echo "BQLKIT bulk label=q1-tcp mbps=18.8 sink_bytes=1000 bad=0"
		echo "BQLKIT db label=q1-tcp tx_wqes=100 sq_doorbells=100 rx_frames=1000 rq_doorbells=1000 wire_waits=0"
		echo "BQLKIT bqlq label=q1-tcp tx0=15000/30000 tx1=5000/9000 "
		echo "BQLKIT sqs label=q1-tcp sq1=90/270000 sq2=10/100 "
		echo "BQLKIT tcpinfo label=q1-tcp side=send port=5001 cwnd=30 unacked=24 retrans=3"
		echo "BQLKIT tcpinfo label=q1-tcp side=send port=5002 cwnd=30 unacked=20 retrans=1"
		echo "BQLKIT tcpinfo label=q1-tcp side=sink port=5001 cwnd=10 unacked=7 retrans=9"
		echo "BQLKIT-END"
	} >"$d/bench-mana-k-$1-$2.log"
	printf 'insncount mark seq=1 cmd=0 vcpu=0 switches=1 k0=1000 u0=0 k1=0 u1=0\n' >"$d/bench-mana-k-$1-$2.insn"
	printf 'insncount mark seq=2 cmd=0 vcpu=0 switches=2 k0=%d u0=0 k1=0 u1=0\n' $((1000 + $3)) >>"$d/bench-mana-k-$1-$2.insn"
}
mana_log stock 1 5000000
mana_log stock 2 5100000
mana_log kit 1 5200000
mana_log kit 2 5200000
mr=$BQLKIT_TOP/lab/bench-mana-report.py
ratio_of() { python3 -c 'import json, sys; c = json.load(open(sys.argv[1]))["cases"]["q1-tcp"]
print(c["cost_ratio"], c["noise_floor"]["cost_ratio"], c["stock"]["median"].get("insn_per_frame"))' "$1"; }
python3 "$mr" --out "$tmp/mana/bench-scale/mana/f8" --runs 2 --wall 1 -- k >/dev/null 2>&1
has mana-report-loaded-insn-per-frame '^1.0297029702970297 0.019801980198019802 5050.0$' "$(ratio_of "$tmp/mana/bench-scale/mana/f8/bench-mana-k.json")"
# What the probe waits behind: bytes per WQE over every SQ (270100 / 100),
# busy SQs (1 % or more of the bytes: sq2's 100 is not), the txqs' mean
# BQL inflight summed, the senders' unacknowledged segments and
# retransmits (the sink's line is not a sender's).
has mana-report-what-the-probe-waits '^2701.0 1.0 20000.0 44.0 4.0$' "$(python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))["cases"]["q1-tcp"]["stock"]["median"]
print(m.get("wqe_bytes"), m.get("busy_sqs"), m.get("bql_inflight_mean_sum"), m.get("tcp_unacked_segs_sum"), m.get("tcp_retrans_sum"))' "$tmp/mana/bench-scale/mana/f8/bench-mana-k.json")"
out=$(python3 "$BQLKIT_TOP/lab/scale-report.py" --out "$tmp/mana" --kernel k 2>&1)
has scale-report-mana-row '^| 1 | 8 | 5050 / 5200 | 1.0297 (2.0 %) | 1.0400 | 100.00 / 4.00 | 25.0x (0.0 %) | 120.00 / 8.00 | 15.0x (0.0 %) |$' \
	"$(cat "$tmp/mana/bench-scale/scaling.md" 2>/dev/null || echo "$out")"
rm -f "$tmp"/mana/bench-scale/mana/f8/*.insn "$tmp"/mana/bench-scale/mana/f8/*.json
python3 "$mr" --out "$tmp/mana/bench-scale/mana/f8" --runs 2 --wall 1 -- k >/dev/null 2>&1
has mana-report-no-counts-no-cost '^None None None$' "$(ratio_of "$tmp/mana/bench-scale/mana/f8/bench-mana-k.json")"
