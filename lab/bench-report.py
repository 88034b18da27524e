#!/usr/bin/env python3
"""bench-report.py: turn `make bench` console logs into results.

    bench-report.py --out DIR [--runs N] [--wall SECS] [--command STR] KVER...

Reads DIR/bench-<kver>-<stock|kit>-<run>.log (written by lab/bench.sh),
writes DIR/bench-<kver>.json (medians over runs, the ratios and the
targets: what results/ keeps), DIR/bench-<kver>.raw.json (the samples of
every run, parsed from the logs: like the logs, not committed),
DIR/bench.md (the table) and DIR/bench.png (RTT CDFs, gnuplot).  Only the standard library is used.

Scenarios: one per flood of the plan (tests/vm/guest/bench.sh), by id
  slow<N>-<P>B-txus<T>  receiver slowed by N ingress filters, payload P,
                        the kit at ethtool -C tx-usecs T (stock: the same
                        flood, no ethtool step; T "def" = the module's
                        default)
  cost-<P>B-txus<T>     unslowed, a fixed number of datagrams, veth's
                        softirq NAPI: guest instructions per delivered
                        datagram (the insncount plugin's output,
                        bench-<kver>-<variant>-<run>.insn) and pps
  split-<P>B-txus<T>    the same with vethB's NAPI in a kthread on vCPU 1:
                        vCPU 0 runs the sender's path, vCPU 1 the receiver's
  unslowed-<P>B-txus<T> no ingress filters, timed (sink pps; older plans)
plus, for the old tools, the key "<P>" = the slowed scenario of payload P
at the main tx-usecs.

Definitions (per run, then the median over the runs of a variant):
  rtt p50/p90/p99/max  nearest-rank percentiles of every ping reply's time=
                       while the flood runs (ping -i 0.02); lost pings are
                       not in them, they are counted in ping loss
  idle rtt p50         the same before any flood
  sender pps           UDPFLOOD send pps (datagrams handed to the stack)
  sink pps             datagrams the sink read / the sender's seconds
  rx pps               vethB rx_packets delta / the sender's seconds
  veth drops           vethA tx_dropped + vethB rx_dropped deltas (ip -s link)
  rcvbuf errors        UDP RcvbufErrors delta in the receiver's netns
  qdisc                fq_codel backlog (largest of 3 samples under load),
                       drops and requeues over the flood
  bql                  limit (largest seen), inflight (largest, and the mean
                       of all reads) from bqlwatch reading every 2 ms
  bql limit end        the limit the kit converged on: bqlwatch's last
                       limit of its last window, which ends just before the
                       flood does
  owd p50/p99 (tsprobe) the one-way delay of kernel-timestamped probes
                       (qdisc entry to the receiver's stack), in the loaded
                       window, with its parts qdisc and ring; pooled over
                       the runs of a variant for the percentiles
  insn/pkt             guest instructions between the cost flood's markers
                       (the sender's first datagram, the sink's last) /
                       datagrams the sink read; sender = vCPU 0, receiver =
                       vCPU 1 (split floods)
Ratios: p50_ratio = stock p50 / kit p50, p99_ratio = stock p99 / kit p99
(tsprobe's one-way delay, pooled over runs; ping_* the same from ping),
pps_ratio = kit sink pps / stock sink pps, cost_ratio = kit insn/pkt /
stock insn/pkt (medians over runs).  Noise floor of a metric: the spread
(max - min) / mean of the identical stock floods (the stock boot runs the
flood once per kit tx-usecs setting), as a fraction; for kit_p50_vs_idle,
the spread of the idle probe's p50 over every run, stock and kit.
Service bound (slowed floods): the slowed receiver takes one packet per
service time = 1 / the kit's sink pps; a probe behind DQL's limit (two
packets at the kit's default) and the packet in service waits about three
of them.  kit_p50_service_times = (kit loaded p50 - kit idle p50) /
service time (target <= 3), beside the old kit_p50_vs_idle (<= 3).
"""
import argparse
import json
import math
import os
import re
import statistics
import sys
import time

VARIANTS = ("stock", "kit")
TARGETS = {
    "p50_ratio": 20.0,      # stock p50 / kit p50 >= 20
    "p99_ratio": 10.0,      # stock p99 / kit p99 >= 10
    "p50_vs_idle": 3.0,     # kit loaded p50 / kit idle p50 <= 3 (the old target)
    "p50_service": 3.0,     # (kit loaded p50 - kit idle p50) / service time <= 3
    "pps_ratio": 0.99,      # kit sink pps / stock sink pps >= 0.99
    "cost_ratio": 1.01,     # kit insn/pkt / stock insn/pkt <= 1.01
}
LE_TARGETS = ("p50_vs_idle", "p50_service", "cost_ratio")
# The scenario key each target reads.
TARGET_KEY = {"p50_vs_idle": "kit_p50_vs_idle", "p50_service": "kit_p50_service_times"}
# Which targets apply to which kind of scenario: the unslowed receiver is
# about throughput and cost only.
KIND_TARGETS = {"slowed": ("p50_ratio", "p99_ratio", "p50_vs_idle", "p50_service"),
                "unslowed": ("pps_ratio",),
                "cost": ("cost_ratio", "pps_ratio"),
                "split": ("cost_ratio",)}
SID = re.compile(r"^(?:slow(\d+)|(unslowed|cost|split))-(\d+)B-txus(\d+|def)$")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import insncount  # noqa: E402  (lab/insncount.py)
import plotlib  # noqa: E402  (lab/plotlib.py)


def sid_kind(m):
    """The kind of a SID match."""
    return "slowed" if m.group(1) is not None else m.group(2)


def kv(fields):
    out = {}
    for f in fields:
        if "=" in f:
            k, v = f.split("=", 1)
            out[k] = v
    return out


def num(v):
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return int(f) if f.is_integer() and "." not in str(v) else f


def pct(samples, p):
    """Nearest-rank percentile."""
    if not samples:
        return None
    s = sorted(samples)
    k = max(1, math.ceil(p / 100.0 * len(s)))
    return s[k - 1]


def med(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def parse_log(path):
    """One VM boot: the bench scenario's data lines."""
    run = {"log": os.path.basename(path), "complete": False, "params": {},
           "module": {}, "idle": {"rtt_ms": []}, "scenarios": {}}
    rtts = {}
    pings = {}
    probes = {}  # label -> {"owd"|"qdisc"|"ring": [ms], "summary": {...}}
    marks = []   # the "BQLKIT mark" lines, for insncount.intervals()
    cur = None  # scenario label of the last flood start, for UDPFLOOD lines

    def sid(label):
        """Scenario id of a label (id[.part]); old logs' pNN = slowed, main tx-usecs."""
        base = label.split(".")[0]
        m = re.match(r"^p(\d+)$", base)
        if m:
            return f"slow{run['params'].get('slow', 0)}-{m.group(1)}B-txusdef"
        return base if SID.match(base) else None

    def sc(label):
        i = sid(label)
        if i is None:
            return None
        m = SID.match(i)
        d = run["scenarios"].get(i)
        if d is None:
            d = run["scenarios"][i] = {
                "id": i, "kind": sid_kind(m),
                "slow": int(m.group(1) or 0), "payload": int(m.group(3)),
                "tx_usecs_set": m.group(4), "bql": [], "qdisc": []}
        return d

    with open(path, errors="replace") as f:
        for line in f:
            line = line.strip()
            i = line.find("BQLKIT")
            j = line.find("UDPFLOOD")
            if line.startswith("BQLKIT-END"):
                run["complete"] = True
                continue
            if j >= 0 and cur is not None:
                w = line[j:].split()
                d = sc(cur)
                if d is not None and len(w) > 1:
                    d["send" if w[1] == "send" else "sink"] = {k: num(v) for k, v in kv(w[2:]).items()}
                continue
            if i < 0 or line[i:].startswith("BQLKIT-"):
                continue
            w = line[i:].split()
            if len(w) < 2:
                continue
            kind, a = w[1], kv(w[2:])
            label = a.get("label", "")
            if kind == "bench":
                run["params"] = {k: num(v) if num(v) is not None else v for k, v in a.items()}
            elif kind == "module" and "origin" in a:
                run["module"] = a
            elif kind == "host":
                run["host"] = {k: num(v) for k, v in a.items()}
            elif kind == "coalesce" and "tx_usecs" in a and "label" not in a:
                run["tx_usecs"] = a["tx_usecs"]
            elif kind == "plan":
                run["plan"] = a
            elif kind == "case" and sc(label) is not None:
                d = sc(label)
                d["tx_usecs"] = a.get("tx_usecs")
                d["secs"] = num(a.get("secs"))
                d["count"] = num(a.get("count"))
            elif kind == "boot":
                run["kernel"] = a.get("kernel")
            elif kind == "rtts":
                rtts.setdefault(label, []).extend(float(x) for x in a.get("ms", "").split(",") if x)
            elif kind == "tsprobe":
                t = probes.setdefault(label, {"owd": [], "qdisc": [], "ring": []})
                if a.get("kind") == "summary":
                    t["summary"] = {k: num(v) for k, v in a.items() if k not in ("label", "kind")}
                elif a.get("kind") in t:
                    t[a["kind"]].extend(float(x) / 1000.0 for x in a.get("us", "").split(",") if x)
            elif kind == "mark":
                marks.append(line[i:])
            elif kind == "sched" and sid(label):
                sc(label)["sched"] = {k: num(v) for k, v in a.items() if k != "label"}

            elif kind == "ping":
                pings[label] = (int(a["tx"]), int(a["rx"]))
            elif kind == "flood" and "start" in w:
                cur = label
            elif kind == "bql" and sid(label):
                sc(label)["bql"].append({k: num(v) if num(v) is not None else v for k, v in a.items()})
            elif kind == "qdisc" and sid(label):
                q = {k: num(v) for k, v in a.items() if k != "label"}
                q["label"] = label
                if label.endswith(".post"):
                    sc(label)["qdisc_post"] = q
                else:
                    sc(label)["qdisc"].append(q)
            elif kind in ("link", "udp", "ethtool", "softirqs") and sid(label) and "." in label:
                d = sc(label)
                part = label.split(".", 1)[1]
                d.setdefault(kind, {})[part] = {k: num(v) for k, v in a.items() if k != "label"}
    run["idle"]["rtt_ms"] = rtts.get("idle", [])
    run["idle"]["ping_tx"], run["idle"]["ping_rx"] = pings.get("idle", (0, 0))
    run["idle"]["tsprobe"] = probes.get("idle", {})
    # The insncount plugin's output of this boot (lab/bench.sh).
    insn_file = re.sub(r"\.log$", ".insn", path)
    intervals = {}
    if os.path.exists(insn_file):
        with open(insn_file) as f:
            intervals = insncount.intervals(marks, f.readlines())
    run["insn_file"] = os.path.basename(insn_file) if os.path.exists(insn_file) else None
    for i, d in run["scenarios"].items():
        lab = i if i in rtts or i in pings else "p%d" % d["payload"]  # old logs: pNN
        d["rtt_ms"] = rtts.get(lab, [])
        d["ping_tx"], d["ping_rx"] = pings.get(lab, (0, 0))
        d["tsprobe"] = probes.get(i, {})
        if i in intervals:
            d["insn"] = intervals[i].as_dict()
        if "tx_usecs" not in d and run.get("tx_usecs"):
            d["tx_usecs"] = run["tx_usecs"]
    return run


def delta(d, kind, key):
    try:
        return d[kind]["post"][key] - d[kind]["pre"][key]
    except (KeyError, TypeError):
        return None


def cost_metrics(run, d):
    """Per-run numbers of a cost/split flood: instructions per datagram."""
    send, sink, ins = d.get("send"), d.get("sink"), d.get("insn")
    if not send or not sink or not ins or not sink.get("pkts"):
        return None
    n = sink["pkts"]
    secs = send["sent"] / send["pps"] if send.get("pps") else None
    cpu = [k + u for k, u in zip(ins["kernel"], ins["user"])]
    return {
        "sent": send["sent"], "delivered": n,
        "insn_total": ins["total"],
        "insn_per_pkt": ins["total"] / n,
        "kernel_per_pkt": ins["kernel_total"] / n,
        "user_per_pkt": ins["user_total"] / n,
        # vCPU 0 runs the sender; vCPU 1 the sink (and, in split floods,
        # vethB's NAPI thread: the whole receive path).
        "sender_per_pkt": cpu[0] / n if cpu else None,
        "receiver_per_pkt": cpu[1] / n if len(cpu) > 1 else None,
        "sender_pps": send.get("pps"),
        "sink_pps": n / secs if secs else None,
        # A fresh pair per flood: the counters after it are its own.
        "qdisc_drops": d.get("qdisc_post", {}).get("drops"),
        "qdisc_requeues": d.get("qdisc_post", {}).get("requeues"),
        "veth_drops": sum(x or 0 for x in (delta(d, "link", "A_tx_dropped"), delta(d, "link", "B_rx_dropped"))),
        "rcvbuf_errors": delta(d, "udp", "RcvbufErrors"),
    }


def probe_metrics(t):
    """Percentiles of tsprobe's one-way delays and their parts (ms)."""
    m = {}
    for part in ("owd", "qdisc", "ring"):
        xs = t.get(part, [])
        m[f"{part}_p50_ms"] = pct(xs, 50)
        m[f"{part}_p99_ms"] = pct(xs, 99)
    m["owd_max_ms"] = max(t.get("owd", []), default=None)
    sm = t.get("summary", {})
    m["probes"] = sm.get("rx")
    m["probe_loss_pct"] = 100.0 * (sm["sent"] - sm["rx"]) / sm["sent"] if sm.get("sent") else None
    return m


def run_metrics(run, sid):
    """Per-run numbers of one scenario."""
    d = run["scenarios"].get(sid)
    if d and d["kind"] in ("cost", "split"):
        return cost_metrics(run, d)
    if not d or not d.get("rtt_ms") or "send" not in d or "sink" not in d:
        return None
    r = d["rtt_ms"]
    send, sink = d["send"], d["sink"]
    secs = send["sent"] / send["pps"] if send.get("pps") else None
    bql = [b for b in d["bql"] if b.get("source") not in (None, "none")]
    reads = sum(b.get("reads") or 0 for b in bql)
    m = {
        "idle_p50_ms": pct(run["idle"]["rtt_ms"], 50),
        "rtt_p50_ms": pct(r, 50), "rtt_p90_ms": pct(r, 90),
        "rtt_p99_ms": pct(r, 99), "rtt_max_ms": max(r),
        "ping_loss_pct": 100.0 * (d["ping_tx"] - d["ping_rx"]) / d["ping_tx"] if d["ping_tx"] else None,
        "ping_replies": d["ping_rx"],
        "sender_pps": send.get("pps"),
        "sink_pps": sink["pkts"] / secs if secs else None,
        "rx_pps": (delta(d, "link", "B_rx_packets") or 0) / secs if secs else None,
        "veth_drops": sum(x or 0 for x in (delta(d, "link", "A_tx_dropped"), delta(d, "link", "B_rx_dropped"))),
        "rcvbuf_errors": delta(d, "udp", "RcvbufErrors"),
        "qdisc_backlog_max_pkts": max((q.get("backlog_pkts") or 0 for q in d["qdisc"]), default=None),
        "qdisc_drops": d.get("qdisc_post", {}).get("drops"),
        "qdisc_requeues": d.get("qdisc_post", {}).get("requeues"),
        "bql_source": bql[0]["source"] if bql else "none",
        "bql_limit_max": max((b.get("limit") or 0 for b in bql), default=None) if bql else None,
        "bql_inflight_max": max((b.get("inflight") or 0 for b in bql), default=None) if bql else None,
        "bql_inflight_mean": (sum(b.get("sum_inflight") or 0 for b in bql) / reads) if bql and reads else None,
        "bql_nonzero_pct": (100.0 * sum(b.get("nonzero") or 0 for b in bql) / reads) if bql and reads else None,
        # The limit at the end of the flood: the last window's last read.
        "bql_limit_end": next((b.get("last_limit") for b in reversed(bql) if b.get("last_limit") is not None), None),
    }
    m.update(probe_metrics(d.get("tsprobe", {})))
    idle = probe_metrics(run["idle"].get("tsprobe", {}))
    m["idle_owd_p50_ms"], m["idle_owd_p99_ms"] = idle["owd_p50_ms"], idle["owd_p99_ms"]
    m["idle_p99_ms"] = pct(run["idle"]["rtt_ms"], 99)
    sch = d.get("sched", {})
    m["ping_wait_ms_per_slice"] = (sch["ping_wait_ns"] / 1e6 / sch["ping_slices"]
                                   if sch.get("ping_slices") and sch.get("ping_wait_ns", -1) >= 0 else None)
    m["ksoftirqd_wait_ms"] = sch["ksoftirqd_wait_ns"] / 1e6 if sch.get("ksoftirqd_wait_ns") is not None else None
    # vethB's NAPI thread (threaded NAPI): its run delay stops the completions.
    # A thread that ran the whole window has no new slice and waited 0 ms;
    # logs without napi_threads cannot tell that from no thread at all.
    has_napi = sch.get("napi_threads", sch.get("napi_slices"))
    m["napi_wait_ms"] = sch["napi_wait_ns"] / 1e6 if has_napi and sch.get("napi_wait_ns") is not None else None
    # One TCG thread runs the vCPUs in turns (-icount): a task on one vCPU
    # waits for the other's turn to end; instructions per turn in the window.
    ins = d.get("insn") or {}
    m["vcpu_turn_insns"] = ins["total"] / ins["vcpu_switches"] if ins.get("vcpu_switches") else None
    # The window's work: instructions per packet the sink read (its pps
    # over the flood times the window), how often NAPI's thread was put on
    # a CPU, and how often a qdisc run was raised as a softirq.
    win = (sch["to"] - sch["from"]) if sch.get("to") is not None and sch.get("from") is not None else None
    m["window_secs"], m["window_insns"] = win, ins.get("total")
    m["window_insn_per_pkt"] = (ins["total"] / (m["sink_pps"] * win)
                                if ins.get("total") and m.get("sink_pps") and win else None)
    m["napi_slices"] = sch.get("napi_slices") if has_napi else None
    # NET_TX raised on every vCPU over the window (logs since 2026-12-07).
    tx = [delta(d, "softirqs", k) for k in d.get("softirqs", {}).get("post", {}) if k.startswith("net_tx")]
    m["net_tx_raised"] = sum(tx) if tx and None not in tx else None
    return m


def fmt(v, digits=2):
    if v is None:
        return "–"
    if isinstance(v, float) and not v.is_integer() or isinstance(v, float) and abs(v) < 10:
        if abs(v) >= 100:
            return f"{v:.0f}"
        if abs(v) >= 10:
            return f"{v:.1f}"
        return f"{v:.{digits}f}"
    return f"{int(v)}"


def flim(v):
    """A DQL limit (packets): integral medians without decimals."""
    if v is None:
        return "–"
    return f"{v:.0f}" if float(v).is_integer() else f"{v:.1f}"


def kpps(v):
    return "–" if v is None else f"{v / 1000:.1f}K"


def met(x, t, ge=True):
    """Whether x meets target t (x >= t, or x <= t with ge=False); None
    where there is no x."""
    return None if x is None else (x >= t if ge else x <= t)


def target_met(t, x):
    """Whether x meets target t, in the target's direction (LE_TARGETS: at
    most; the others: at least)."""
    return met(x, TARGETS[t], ge=t not in LE_TARGETS)


def service_headline(head, ls):
    """The headline's service bound (service_bound()): its slowed scenario
    ls's, and whether it meets the target."""
    head["kit_p50_service_times"] = ls.get("kit_p50_service_times") if ls else None
    head["kit_service_ms"] = ls.get("kit_service_ms") if ls else None
    head.setdefault("targets_met", {})["p50_service"] = target_met("p50_service", head["kit_p50_service_times"])


def service_bound(sc):
    """Issue 36 §5's latency target for a slowed scenario (sc: its summary,
    as bench-<kver>.json keeps it): the slowed receiver serves one packet per
    1 / sink pps (the kit's median); the kit's loaded p50 over its idle p50,
    in such service times.  Sets kit_service_ms, kit_p50_service_bound_ms
    (idle p50 + 3 service times) and kit_p50_service_times."""
    probe = sc.get("latency_probe") or "ping"
    pps = sc["kit"]["median"].get("sink_pps")
    idle = sc["kit"].get("pooled_idle", {}).get(probe, {}).get("p50_ms")
    loaded = sc["kit"].get("pooled", {}).get(probe, {}).get("p50_ms")
    svc = 1000.0 / pps if pps else None
    sc["kit_service_ms"] = svc
    sc["kit_p50_service_bound_ms"] = None if svc is None or idle is None else idle + 3 * svc
    sc["kit_p50_service_times"] = (None if svc is None or idle is None or loaded is None
                                   else (loaded - idle) / svc)
    return sc


def kernel_report(out, kver, meta):
    runs = {v: [] for v in VARIANTS}
    pat = re.compile(r"^bench-" + re.escape(kver) + r"-(stock|kit)-(\d+)\.log$")
    for name in sorted(os.listdir(out)):
        m = pat.match(name)
        if m:
            run = parse_log(os.path.join(out, name))
            run["run"] = int(m.group(2))
            runs[m.group(1)].append(run)
    for v in VARIANTS:
        runs[v].sort(key=lambda r: r["run"])
    allruns = runs["stock"] + runs["kit"]
    if not allruns:
        print(f"bench-report: no logs for {kver} in {out}", file=sys.stderr)
        return None
    params = next((r["params"] for r in allruns if r["params"]), {})
    kit_module = {}
    try:
        with open(os.path.join(out, f"bench-{kver}-info.log")) as f:
            kit_module = dict(l.rstrip("\n").split("=", 1) for l in f if "=" in l)
    except OSError:
        pass
    modules = {v: sorted({r["module"].get("srcversion_loaded", "NA") for r in runs[v]}) for v in VARIANTS}
    kit_module["srcversion_loaded_in_runs"] = modules["kit"]
    kit_module["tx_usecs_in_runs"] = sorted({str(d.get("tx_usecs") or r.get("tx_usecs") or "the module's default (not recorded)")
                                             for r in runs["kit"] for d in r["scenarios"].values()}, key=lambda x: (not x.isdigit(), int(x) if x.isdigit() else 0, x))
    ids = sorted({i for r in allruns for i in r["scenarios"]}, key=sid_key)
    # The main tx-usecs of the plan: the legacy per-payload keys point there.
    plans = [r.get("plan", {}) for r in allruns if r.get("plan")]
    main = plans[0].get("main_tx_usecs", "def") if plans else "def"
    main = "def" if main in ("-", "") else main
    facts = {k[len("kernel_"):]: v for k, v in kit_module.items() if k.startswith("kernel_")}
    result = {
        "kernel": kver, "generated": meta["generated"], "command": meta["command"],
        "wall_seconds": meta["wall"], "params": params,
        "bench_params": meta.get("params", ""),
        "runs_requested": meta["runs"],
        "runs_complete": {v: sum(1 for r in runs[v] if r["complete"]) for v in VARIANTS},
        # upstream 815980fe6dbb in this kernel's fq_codel (lab/kernel-facts.sh)
        "fq_codel_stale_state_fix": facts.get("fq_codel_stale_state_fix", "unknown"),
        "kernel_facts": facts,
        "kit_module": kit_module,
        "stock_module_srcversion_in_runs": modules["stock"],
        "main_tx_usecs": main,
        "targets": TARGETS, "targets_by_kind": KIND_TARGETS, "scenarios": {},
        "dql_limit_end_by_tx_usecs": {}, "unslowed_pps_ratio_by_tx_usecs": {},
        "unslowed_dql_limit_end_by_tx_usecs": {},
        "raw": runs,
    }

    def ratio(a, b):
        return a / b if a is not None and b else None

    def spread(xs):
        """(max - min) / mean of identical floods, as a fraction."""
        xs = [x for x in xs if x is not None]
        return (max(xs) - min(xs)) / statistics.mean(xs) if len(xs) > 1 and statistics.mean(xs) else None

    def pooled(v, sid, get):
        return [x for r in runs[v] if r["complete"] for x in get(r["scenarios"].get(sid, {}))]

    probe_of = {"tsprobe": lambda d: d.get("tsprobe", {}).get("owd", []), "ping": lambda d: d.get("rtt_ms", [])}
    for sid in ids:
        per = {}
        proto = next(r["scenarios"][sid] for r in allruns if sid in r["scenarios"])
        for v in VARIANTS:
            ms = [run_metrics(r, sid) for r in runs[v] if r["complete"]]
            ms = [m for m in ms if m]
            keys = ms[0].keys() if ms else []
            medians = {}
            for k in keys:
                vals = [m[k] for m in ms]
                medians[k] = vals[0] if k == "bql_source" else med(vals)
            per[v] = {"runs": len(ms), "median": medians, "per_run": ms,
                      "tx_usecs_read_back": sorted({str(r["scenarios"][sid].get("tx_usecs", "NA"))
                                                    for r in runs[v] if sid in r["scenarios"]})}
            if proto["kind"] in ("slowed", "unslowed"):
                # Percentiles over every sample of every run: p99 from a few
                # hundred samples per run would be the 2nd-5th largest.
                per[v]["pooled"] = {}
                for name, get in probe_of.items():
                    xs = pooled(v, sid, get)
                    per[v]["pooled"][name] = {"n": len(xs), "p50_ms": pct(xs, 50), "p99_ms": pct(xs, 99)}
                for part in ("qdisc", "ring"):
                    xs = pooled(v, sid, lambda d, p=part: d.get("tsprobe", {}).get(p, []))
                    per[v]["pooled"]["tsprobe_" + part] = {"n": len(xs), "p50_ms": pct(xs, 50), "p99_ms": pct(xs, 99)}
                idle = {"tsprobe": [x for r in runs[v] if r["complete"] for x in r["idle"].get("tsprobe", {}).get("owd", [])],
                        "ping": [x for r in runs[v] if r["complete"] for x in r["idle"]["rtt_ms"]]}
                per[v]["pooled_idle"] = {n: {"n": len(xs), "p50_ms": pct(xs, 50), "p99_ms": pct(xs, 99)} for n, xs in idle.items()}
        s_, k_ = per["stock"]["median"], per["kit"]["median"]
        sc = {"id": sid, "kind": proto["kind"], "slow": proto["slow"], "payload": proto["payload"],
              "tx_usecs": proto["tx_usecs_set"], "secs": proto.get("secs") or params.get("secs"),
              "count": proto.get("count"),
              "stock": per["stock"], "kit": per["kit"],
              "pps_ratio": ratio(k_.get("sink_pps"), s_.get("sink_pps"))}
        if proto["kind"] in ("cost", "split"):
            sc["cost_ratio"] = ratio(k_.get("insn_per_pkt"), s_.get("insn_per_pkt"))
            sc["sender_cost_ratio"] = ratio(k_.get("sender_per_pkt"), s_.get("sender_per_pkt"))
            sc["receiver_cost_ratio"] = ratio(k_.get("receiver_per_pkt"), s_.get("receiver_per_pkt"))
        else:
            ps, pk = per["stock"]["pooled"], per["kit"]["pooled"]
            # The kernel-timestamped probe where there is one (no user-space
            # scheduling in it), else ping (logs of older benches).
            probe = "tsprobe" if ps["tsprobe"]["n"] and pk["tsprobe"]["n"] else "ping"
            sc["latency_probe"] = probe
            for name in probe_of:
                sc[f"{name}_p50_ratio"] = ratio(ps[name]["p50_ms"], pk[name]["p50_ms"])
                sc[f"{name}_p99_ratio"] = ratio(ps[name]["p99_ms"], pk[name]["p99_ms"])
                sc[f"{name}_kit_p50_vs_idle"] = ratio(pk[name]["p50_ms"], per["kit"]["pooled_idle"][name]["p50_ms"])
            sc["p50_ratio"] = sc[f"{probe}_p50_ratio"]
            sc["p99_ratio"] = sc[f"{probe}_p99_ratio"]
            sc["kit_p50_vs_idle"] = sc[f"{probe}_kit_p50_vs_idle"]
            # The ratio's denominator has its own noise: the idle pair has
            # no queue (the kit charges nothing there), so the idle probes
            # of every boot, stock and kit, measure the same thing.  The
            # idle one-way delay has modes (~0.025 / ~0.06 / ~0.09 ms here)
            # and its p50 moves between them from boot to boot.
            idle_key = {"tsprobe": "idle_owd_p50_ms", "ping": "idle_p50_ms"}[probe]
            sc["kit_p50_vs_idle_noise"] = spread([m.get(idle_key) for v in VARIANTS
                                                  for m in per[v]["per_run"]])
            service_bound(sc)
            sc["kit_bql_limit_end"] = k_.get("bql_limit_end")
            sc["kit_bql_limit_end_per_run"] = [m["bql_limit_end"] for m in per["kit"]["per_run"]]
        kit_pps = [m["sink_pps"] for m in per["kit"]["per_run"]]
        stock_pps = [m["sink_pps"] for m in per["stock"]["per_run"]]
        sc["kit_sink_pps_below_stock_in_every_run"] = bool(kit_pps and stock_pps and max(kit_pps) < min(stock_pps))
        sc["targets_met"] = {t: target_met(t, sc.get(TARGET_KEY.get(t, t))) for t in KIND_TARGETS[sc["kind"]]}
        result["scenarios"][sid] = sc
        pay, tx = str(sc["payload"]), sc["tx_usecs"]
        if sc["kind"] == "slowed":
            result["dql_limit_end_by_tx_usecs"].setdefault(pay, {})[tx] = sc["kit_bql_limit_end"]
        elif sc["kind"] == "unslowed":
            result["unslowed_pps_ratio_by_tx_usecs"].setdefault(pay, {})[tx] = sc["pps_ratio"]
            result["unslowed_dql_limit_end_by_tx_usecs"].setdefault(pay, {})[tx] = sc["kit_bql_limit_end"]
        else:
            result.setdefault(f"{sc['kind']}_ratio_by_tx_usecs", {}).setdefault(pay, {})[tx] = sc["cost_ratio"]
    # Noise floor: the stock boot runs the same flood once per kit setting,
    # so its floods of one kind and payload are identical but for their
    # place in the plan.  Cost and pps: the spread of every such flood of
    # every stock run; latency: of the pooled percentiles per place.
    rep = {}
    for kind in ("cost", "split", "unslowed", "slowed"):
        for pay in sorted({sc["payload"] for sc in result["scenarios"].values() if sc["kind"] == kind}):
            same = [i for i, sc in result["scenarios"].items() if sc["kind"] == kind and sc["payload"] == pay]
            if len(same) < 2:
                continue
            flood = [m for i in same for m in result["scenarios"][i]["stock"]["per_run"]]
            e = {"identical_floods": len(flood), "places_in_plan": len(same),
                 "pps": spread([m.get("sink_pps") for m in flood])}
            if kind in ("cost", "split"):
                for k in ("insn_per_pkt", "sender_per_pkt", "receiver_per_pkt"):
                    e[k] = spread([m.get(k) for m in flood])
                e["insn_per_pkt_values"] = [m.get("insn_per_pkt") for m in flood]
            else:
                for name in probe_of:
                    for q in ("p50", "p99"):
                        e[f"{name}_{q}"] = spread([result["scenarios"][i]["stock"]["pooled"][name][f"{q}_ms"] for i in same])
            rep[f"{kind}-{pay}B"] = e
    result["stock_identical_floods_spread"] = rep
    # The headline, top level: the kit at its default tx-usecs (scenarios
    # txusdef), 64-byte floods; cost and pps unslowed, latency slowed.
    head = {}

    def pick(kind, pay=64):
        for tx in ("def", main):
            for i, sc in result["scenarios"].items():
                if sc["kind"] == kind and sc["payload"] == pay and sc["tx_usecs"] == tx and "alias_of" not in sc:
                    return i, sc
        return None, None
    ci, cs = pick("cost")
    li, ls = pick("slowed")
    head["scenarios"] = {"cost_ratio": ci, "pps_ratio": ci, "p50_ratio": li, "p99_ratio": li}
    head["cost_ratio"] = cs and cs["cost_ratio"]
    head["pps_ratio"] = cs and cs["pps_ratio"]
    head["p50_ratio"] = ls and ls["p50_ratio"]
    head["p99_ratio"] = ls and ls["p99_ratio"]
    head["kit_p50_vs_idle"] = ls and ls["kit_p50_vs_idle"]
    head["latency_probe"] = ls and ls["latency_probe"]
    nc = rep.get("cost-64B", {})
    nl = rep.get(f"slowed-64B", {})
    probe = head["latency_probe"] or "ping"
    head["noise_floor"] = {"cost_ratio": nc.get("insn_per_pkt"), "pps_ratio": nc.get("pps"),
                           "p50_ratio": nl.get(f"{probe}_p50"), "p99_ratio": nl.get(f"{probe}_p99"),
                           "kit_p50_vs_idle": ls and ls.get("kit_p50_vs_idle_noise")}
    head["targets_met"] = {"cost_ratio": met(head["cost_ratio"], TARGETS["cost_ratio"], ge=False),
                           "pps_ratio": met(head["pps_ratio"], TARGETS["pps_ratio"]),
                           "p50_ratio": met(head["p50_ratio"], TARGETS["p50_ratio"]),
                           "p99_ratio": met(head["p99_ratio"], TARGETS["p99_ratio"]),
                           "p50_vs_idle": met(head["kit_p50_vs_idle"], TARGETS["p50_vs_idle"], ge=False)}
    service_headline(head, ls)
    for k in ("cost_ratio", "pps_ratio", "p50_ratio", "p99_ratio", "kit_p50_vs_idle", "kit_p50_service_times", "noise_floor"):
        result[k] = head[k]
    result["headline"] = head
    # The keys of the old layout: "<payload>" = slowed at the main tx-usecs.
    legacy = {}
    for sid, sc in result["scenarios"].items():
        if sc["kind"] == "slowed" and sc["tx_usecs"] == main:
            legacy[str(sc["payload"])] = dict(sc, alias_of=sid)
    result["scenarios"] = dict(sorted(legacy.items(), key=lambda x: int(x[0])), **result["scenarios"])
    # The samples are as large as the logs they come from (MBs per kernel):
    # they go beside the logs, the summary to results/.
    with open(os.path.join(out, f"bench-{kver}.raw.json"), "w") as f:
        json.dump(result["raw"], f, separators=(",", ":"))
        f.write("\n")
    with open(os.path.join(out, f"bench-{kver}.json"), "w") as f:
        json.dump({k: v for k, v in result.items() if k != "raw"}, f, indent=1)
        f.write("\n")
    return result


def sid_key(sid):
    """Cost, split, unslowed, slowed; then by payload and tx-usecs."""
    m = SID.match(sid)
    tx = m.group(4)
    return (("cost", "split", "unslowed", "slowed").index(sid_kind(m)), int(m.group(1) or 0),
            int(m.group(3)), -1 if tx == "def" else int(tx))


def cases(r, kind=None):
    """The scenarios of a result by id (not the legacy per-payload aliases)."""
    return [(i, sc) for i, sc in r["scenarios"].items() if "alias_of" not in sc and (kind is None or sc["kind"] == kind)]


def txs(sc):
    return "module default" if sc["tx_usecs"] == "def" else f"{sc['tx_usecs']} µs"


def yn(b):
    return "–" if b is None else ("met" if b else "**not met**")


def pctf(x):
    """A noise floor (fraction) as a percentage."""
    return "–" if x is None else f"{100 * x:.1f} %"


def markdown(results, meta):
    first = results[0]
    p = first["params"]
    bp = kv(meta.get("params", "").split()) or kv(first.get("bench_params", "").split())
    L = []
    L.append("# bqlkit veth benchmark: stock vs kit")
    L.append("")
    L.append(f"Produced by `{meta['command']}` on {meta['generated']} "
             f"(wall time {meta['wall'] // 60} min {meta['wall'] % 60} s; "
             f"{', '.join(str(r['runs_complete']['stock']) + '+' + str(r['runs_complete']['kit']) + ' runs (stock+kit) on ' + r['kernel'] for r in results)}).")
    mode = bp.get("mode", "mttcg")
    if mode.startswith("icount"):
        L.append(f"QEMU TCG with `-icount {bp.get('icount', '?')}`: guest time is the guest's instruction count "
                 "(one TCG thread runs both vCPUs in turn), so neither the host's load nor its speed reaches the "
                 "numbers; the runs of a variant differ only by what the guest does differently."
                 + (f" The vCPU turns are QEMU's in the cost floods and at most {bp['turn_us']} µs of guest time "
                    "in the idle probes and the timed floods (BENCH_TURN_US: a wakeup from one vCPU to the other "
                    "waits for the sender's turn to end; QEMU's own turns last ~1 ms there)."
                    if bp.get("turn_us", "0") not in ("", "0") else " The vCPU turns are QEMU's throughout."))
    else:
        L.append("QEMU multi-threaded TCG: guest time is the host's; timings depend on the host's load.")
    qd = ("mq with fq_codel per tx queue on the sender" if p.get("qdisc") == "mq"
          else "fq_codel as the sender's root qdisc")
    L.append(f"Per boot a plan of floods on fresh veth pairs ({qd}, TSO off, GRO on at the receiver; "
             f"{p.get('sockets')} sender sockets; RX timestamping, the ingress hook and the RNG on for the whole boot, and "
             f"the DO_ONCE branches used up before the plan, in both boots, so that no static branch is patched under a "
             f"flood: tests/vm/guest/init): cost floods (a fixed number of 64-byte datagrams, unslowed "
             f"receiver; `cost` with veth's softirq NAPI, `split` with vethB's NAPI in a kthread on vCPU 1 and the "
             f"sender on vCPU 0), then the idle latency and floods against a receiver slowed by {p.get('slow')} "
             f"ingress u32 filters ({bp.get('secs', p.get('secs'))} s each; NAPI {p.get('slow_napi', 'softirq')}, "
             f"sender on vCPU 0). The kit's boot sets `ethtool -C vethA tx-usecs N` before each flood (`def` = the "
             f"module's default); the stock boot runs the same floods without that step, so its floods of one kind "
             f"are identical: their spread is the noise floor printed beside each ratio."
             + (f" The kit's boot also caps DQL's limit on vethA's tx queues at {p['limit_max']} packets before each "
                f"flood (byte_queue_limits/limit_max, BENCH_LIMIT_MAX): this is not the kit's default."
                if p.get("limit_max", "-") != "-" else "")
             + (" In both boots the guest's bench shell and everything it starts (sink, probes, samplers) ran on "
                "vCPU 0 beside the sender (BENCH_PIN_HARNESS=1), leaving vCPU 1 to vethB's NAPI thread."
                if str(p.get("pin_harness", 0)) == "1" else "")
             + f" Latency: `tsprobe` "
             f"({p.get('probe_flows', '?')} UDP flows, one probe each per {p.get('probe_ms', '?')} ms) is timed by "
             f"the kernel (SO_TIMESTAMPING: qdisc entry, driver, receiver's stack), so no task's scheduling enters it; "
             f"`ping -i {p.get('ping_interval')}` beside it. Samples from 1 s into each flood to 0.5 s before its end; "
             f"percentiles over the samples of all runs.")
    loads = [x for r in results for v in VARIANTS for run in r["raw"][v]
             for x in (run.get("host", {}).get("loadavg_before"), run.get("host", {}).get("loadavg_after")) if x is not None]
    if loads:
        L.append(f"Host load average (1 min) around the runs: {min(loads):.1f}–{max(loads):.1f} on "
                 f"{results[0]['raw']['stock'][0].get('host', {}).get('cpus', '?')} CPUs.")
    L.append("")
    L.append("## Kernels")
    L.append("")
    L.append("| kernel | Linux | fq_codel stale-state fix (upstream 815980fe6dbb) | kit module | runs stock+kit | kit tx-usecs read back |")
    L.append("|---|---|---|---|---|---|")
    for r in results:
        km = r.get("kit_module", {})
        L.append(f"| {r['kernel']} | {r['kernel_facts'].get('linux_version', '–')} | {r['fq_codel_stale_state_fix']} | "
                 f"`{km.get('version', '?')}` ({km.get('bqlkit', '?')}; srcversion {km.get('srcversion', '?')}; git {km.get('git', '?')}) | "
                 f"{r['runs_complete']['stock']}+{r['runs_complete']['kit']} | {', '.join(km.get('tx_usecs_in_runs', []))} |")
    L.append("")
    for r in results:
        km = r.get("kit_module", {})
        if km.get("series"):
            L.append(f"Kit series on {r['kernel']}: {km.get('series', '').strip().replace(' ', ', ')}."
                     + (f" Module facts recorded {km['recorded']}." if km.get("recorded") else ""))
    L.append("")
    L.append("## Targets at the kit's defaults (noise floor beside each)")
    L.append("")
    L.append("| kernel | insn/pkt kit/stock (≤ 1.01) | sink pps kit/stock (≥ 0.99) | loaded p50 stock/kit (≥ 20×) | loaded p99 stock/kit (≥ 10×) | kit loaded p50 − idle, service times (≤ 3) | kit loaded p50 / idle (old target, ≤ 3×) | latency from |")
    L.append("|---|---|---|---|---|---|---|---|")
    for r in results:
        h, n, t = r["headline"], r["headline"]["noise_floor"], r["headline"]["targets_met"]
        L.append(f"| {r['kernel']} | {fmt(h['cost_ratio'], 3)} {yn(t['cost_ratio'])} (noise {pctf(n['cost_ratio'])}) | "
                 f"{fmt(h['pps_ratio'], 3)} {yn(t['pps_ratio'])} (noise {pctf(n['pps_ratio'])}) | "
                 f"{fmt(h['p50_ratio'], 1)}× {yn(t['p50_ratio'])} (noise {pctf(n['p50_ratio'])}) | "
                 f"{fmt(h['p99_ratio'], 1)}× {yn(t['p99_ratio'])} (noise {pctf(n['p99_ratio'])}) | "
                 f"{fmt(h.get('kit_p50_service_times'), 2)} {yn(t.get('p50_service'))} (service {fmt(h.get('kit_service_ms'), 3)} ms) | "
                 f"{fmt(h['kit_p50_vs_idle'], 2)}× {yn(t['p50_vs_idle'])} (idle noise {pctf(n.get('kit_p50_vs_idle'))}) | "
                 f"{h['latency_probe'] or '–'} "
                 f"({h['scenarios']['cost_ratio'] or '–'}, {h['scenarios']['p50_ratio'] or '–'}) |")
    costs = [(r, i, sc) for r in results for i, sc in cases(r) if sc["kind"] in ("cost", "split")]
    if costs:
        L.append("")
        L.append("## Cost: guest instructions per delivered datagram (unslowed receiver)")
        L.append("")
        L.append("Counted by the insncount TCG plugin between the sender's first datagram and the sink's last; "
                 "medians over runs. Sender = vCPU 0, receiver = vCPU 1: in `split` floods vCPU 0 runs only the "
                 "sender's path (socket, qdisc, veth_xmit) and vCPU 1 the receiver's (vethB's NAPI thread, stack, "
                 "sink); in `cost` floods (veth's default softirq NAPI) the receive path up to the socket runs on the "
                 "sender's vCPU.")
        L.append("")
        L.append("| kernel | flood | kit tx-usecs | stock insn/pkt (sender + receiver) | kit insn/pkt (sender + receiver) | kit/stock (≤ 1.01) | sender kit/stock | receiver kit/stock | noise floor (identical stock floods) | sink pps kit/stock | kit qdisc requeues / drops |")
        L.append("|---|---|---|---|---|---|---|---|---|---|---|")
        for r, i, sc in costs:
            s_, k_ = sc["stock"]["median"], sc["kit"]["median"]
            nf = r["stock_identical_floods_spread"].get(f"{sc['kind']}-{sc['payload']}B", {})
            L.append(f"| {r['kernel']} | {sc['kind']} {sc['payload']} B × {sc.get('count') or '?'} | {txs(sc)} | "
                     f"{fmt(s_.get('insn_per_pkt'), 0)} ({fmt(s_.get('sender_per_pkt'), 0)} + {fmt(s_.get('receiver_per_pkt'), 0)}) | "
                     f"{fmt(k_.get('insn_per_pkt'), 0)} ({fmt(k_.get('sender_per_pkt'), 0)} + {fmt(k_.get('receiver_per_pkt'), 0)}) | "
                     f"{fmt(sc['cost_ratio'], 4)} {yn(sc['targets_met'].get('cost_ratio'))} | {fmt(sc['sender_cost_ratio'], 4)} | "
                     f"{fmt(sc['receiver_cost_ratio'], 4)} | {pctf(nf.get('insn_per_pkt'))} ({nf.get('identical_floods', 0)} floods) | "
                     f"{fmt(sc['pps_ratio'], 3)} (noise {pctf(nf.get('pps'))}) | {flim(k_.get('qdisc_requeues'))} / {flim(k_.get('qdisc_drops'))} |")
    slowed = [(r, i, sc) for r in results for i, sc in cases(r, "slowed")]
    if slowed:
        L.append("")
        L.append("## Latency under load (slowed receiver)")
        L.append("")
        L.append("One-way delay of the tsprobe flows (qdisc entry to the receiver's stack) and its parts: time in "
                 "the qdisc and in veth's ring (plus waiting for the receiver's NAPI); ping's RTT beside it. "
                 "Percentiles over every sample of every run; noise = spread of the identical stock floods; "
                 "idle noise = spread of the idle one-way (ping: RTT) p50 of every run, stock and kit (the idle "
                 "pair has no queue, so the kit charges nothing there): the noise of loaded / idle's denominator.")
        L.append("")
        L.append("| kernel | payload | kit tx-usecs | stock owd p50 / p99 ms | kit owd p50 / p99 ms | kit qdisc / ring p50 ms | p50 stock/kit (≥ 20×) | p99 stock/kit (≥ 10×) | kit loaded p50 − idle, service times (≤ 3) | kit loaded p50 / idle (old, ≤ 3×) | ping stock / kit p50, p99 ms | ping p50, p99 stock/kit | sink pps kit/stock | kit DQL limit at flood end (median; per run) |")
        L.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for r, i, sc in slowed:
            ps, pk = sc["stock"]["pooled"], sc["kit"]["pooled"]
            nf = r["stock_identical_floods_spread"].get(f"slowed-{sc['payload']}B", {})
            t = sc["targets_met"]
            pr = sc["latency_probe"]
            L.append(f"| {r['kernel']} | {sc['payload']} B | {txs(sc)} | "
                     f"{fmt(ps['tsprobe']['p50_ms'])} / {fmt(ps['tsprobe']['p99_ms'])} | {fmt(pk['tsprobe']['p50_ms'])} / {fmt(pk['tsprobe']['p99_ms'])} | "
                     f"{fmt(pk['tsprobe_qdisc']['p50_ms'])} / {fmt(pk['tsprobe_ring']['p50_ms'])} | "
                     f"{fmt(sc['p50_ratio'], 1)}× {yn(t['p50_ratio'])} (noise {pctf(nf.get(pr + '_p50'))}) | "
                     f"{fmt(sc['p99_ratio'], 1)}× {yn(t['p99_ratio'])} (noise {pctf(nf.get(pr + '_p99'))}) | "
                     f"{fmt(sc.get('kit_p50_service_times'), 2)} {yn(t.get('p50_service'))} (service {fmt(sc.get('kit_service_ms'), 3)} ms) | "
                     f"{fmt(sc['kit_p50_vs_idle'], 2)}× {yn(t['p50_vs_idle'])} (idle noise {pctf(sc.get('kit_p50_vs_idle_noise'))}) | "
                     f"{fmt(ps['ping']['p50_ms'])} / {fmt(pk['ping']['p50_ms'])}, {fmt(ps['ping']['p99_ms'])} / {fmt(pk['ping']['p99_ms'])} | "
                     f"{fmt(sc['ping_p50_ratio'], 1)}× (noise {pctf(nf.get('ping_p50'))}), {fmt(sc['ping_p99_ratio'], 1)}× (noise {pctf(nf.get('ping_p99'))}) | "
                     f"{fmt(sc['pps_ratio'], 3)} | {flim(sc['kit_bql_limit_end'])} ({', '.join(flim(x) for x in sc['kit_bql_limit_end_per_run']) or '–'}) |")
        L.append("")
        L.append("## Where the tail comes from")
        L.append("")
        L.append("The same probes on the idle pair (emulator and probe cost alone), and how long the probing tasks "
                 "waited for a CPU under load (/proc/PID/schedstat): ping's run delay per time slice, and ksoftirqd's "
                 "(softirq work deferred to a thread waits like a task), and vethB's NAPI thread's over the window "
                 "(while it waits, nothing is received or completed). tsprobe's numbers do not contain the first two.  "
                 "The window's work: guest busy = its instructions (both vCPUs, one TCG thread) times the "
                 "instruction's guest time over the window; instructions per packet = over the packets the sink read "
                 "(its pps times the window); NAPI slices = times vethB's NAPI thread was put on a CPU; NET_TX = "
                 "qdisc runs raised as a softirq (a txq woken or rescheduled), both vCPUs.")
        L.append("")
        ic = kv(bp.get("icount", "").split(","))
        shift = int(ic["shift"]) if ic.get("shift", "").isdigit() and mode.startswith("icount") else None
        L.append("| kernel | flood | module | idle owd p50 / p99 ms (n) | idle ping p50 / p99 ms (n) | loaded owd p99 ms: qdisc p99 / ring p99 | ping run delay per slice ms | ksoftirqd run delay ms | NAPI thread run delay ms | vCPU turn (guest µs) | guest busy | insn/pkt | NAPI slices | NET_TX |")
        L.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for r, i, sc in slowed:
            for v in VARIANTS:
                pi, pl, m = sc[v]["pooled_idle"], sc[v]["pooled"], sc[v]["median"]
                L.append(f"| {r['kernel']} | {i} | {v} | {fmt(pi['tsprobe']['p50_ms'])} / {fmt(pi['tsprobe']['p99_ms'])} ({pi['tsprobe']['n']}) | "
                         f"{fmt(pi['ping']['p50_ms'])} / {fmt(pi['ping']['p99_ms'])} ({pi['ping']['n']}) | "
                         f"{fmt(pl['tsprobe']['p99_ms'])}: {fmt(pl['tsprobe_qdisc']['p99_ms'])} / {fmt(pl['tsprobe_ring']['p99_ms'])} | "
                         f"{fmt(m.get('ping_wait_ms_per_slice'))} | {fmt(m.get('ksoftirqd_wait_ms'))} | {fmt(m.get('napi_wait_ms'))} | "
                         f"{fmt(m['vcpu_turn_insns'] * (1 << shift) / 1000.0 if shift is not None and m.get('vcpu_turn_insns') else None)} | "
                         f"{pctf(m['window_insns'] * (1 << shift) / 1e9 / m['window_secs'] if shift is not None and m.get('window_insns') and m.get('window_secs') else None)} | "
                         f"{fmt(m.get('window_insn_per_pkt'), 0)} | {fmt(m.get('napi_slices'), 0)} | {fmt(m.get('net_tx_raised'), 0)} |")
    un = [(r, i, sc) for r in results for i, sc in cases(r, "unslowed")]
    if un:
        L.append("")
        L.append("## Unslowed receiver, timed floods: sink pps")
        L.append("")
        L.append("| kernel | payload | kit tx-usecs | stock sink pps | kit sink pps | kit/stock (target ≥ 0.99) | stock runs | kit runs | kit below stock in every run | kit DQL limit at flood end |")
        L.append("|---|---|---|---|---|---|---|---|---|---|")
        for r, i, sc in un:
            L.append(f"| {r['kernel']} | {sc['payload']} B | {txs(sc)} | {kpps(sc['stock']['median'].get('sink_pps'))} | "
                     f"{kpps(sc['kit']['median'].get('sink_pps'))} | {fmt(sc['pps_ratio'], 3)} {yn(sc['targets_met']['pps_ratio'])} | "
                     f"{', '.join(kpps(m['sink_pps']) for m in sc['stock']['per_run'])} | "
                     f"{', '.join(kpps(m['sink_pps']) for m in sc['kit']['per_run'])} | "
                     f"{'yes' if sc['kit_sink_pps_below_stock_in_every_run'] else 'no'} | {flim(sc['kit_bql_limit_end'])} |")
    spread = [(r["kernel"], k, v) for r in results for k, v in r.get("stock_identical_floods_spread", {}).items()]
    if spread:
        L.append("")
        L.append("## Noise floor: identical stock floods")
        L.append("")
        L.append("The stock boot runs the same flood once per kit tx-usecs setting: these floods differ only by "
                 "their place in the plan and their run. Spread = (max − min) / mean: of every such flood (cost, pps), "
                 "of the pooled percentiles per place in the plan (latency).")
        L.append("")
        L.append("| kernel | floods | identical floods (places × runs) | insn/pkt | sender | receiver | sink pps | owd p50 | owd p99 | ping p50 | ping p99 |")
        L.append("|---|---|---|---|---|---|---|---|---|---|---|")
        for kver, k, v in spread:
            L.append(f"| {kver} | {k} | {v['identical_floods']} ({v['places_in_plan']} places) | {pctf(v.get('insn_per_pkt'))} | "
                     f"{pctf(v.get('sender_per_pkt'))} | {pctf(v.get('receiver_per_pkt'))} | {pctf(v.get('pps'))} | "
                     f"{pctf(v.get('tsprobe_p50'))} | {pctf(v.get('tsprobe_p99'))} | {pctf(v.get('ping_p50'))} | {pctf(v.get('ping_p99'))} |")
    L.append("")
    L.append("## Medians (timed floods)")
    L.append("")
    L.append("| kernel | scenario | module | idle p50 ms | ping loaded p50 / p90 / p99 / max ms | ping loss | sender pps | sink pps | veth drops | rcvbuf err | qdisc backlog max / drops / requeues | BQL limit max / at end / inflight max / mean |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        for i, sc in cases(r):
            if sc["kind"] in ("cost", "split"):
                continue
            for v in VARIANTS:
                m = sc[v]["median"]
                if not m:
                    L.append(f"| {r['kernel']} | {i} | {v} | no complete run |||||||||")
                    continue
                bql = "–" if m.get("bql_source") == "none" or m.get("bql_limit_max") is None else \
                    f"{flim(m['bql_limit_max'])} / {flim(m.get('bql_limit_end'))} / {flim(m['bql_inflight_max'])} / {fmt(m['bql_inflight_mean'], 2)}"
                if m.get("bql_source") != "none" and v == "stock":
                    bql += " (no BQL in stock veth)"
                L.append(f"| {r['kernel']} | {i} | {v} | {fmt(m['idle_p50_ms'])} | "
                         f"{fmt(m['rtt_p50_ms'])} / {fmt(m['rtt_p90_ms'])} / {fmt(m['rtt_p99_ms'])} / {fmt(m['rtt_max_ms'])} | "
                         f"{fmt(m['ping_loss_pct'], 1)} % | {kpps(m['sender_pps'])} | {kpps(m['sink_pps'])} | "
                         f"{flim(m['veth_drops'])} | {flim(m['rcvbuf_errors'])} | "
                         f"{flim(m['qdisc_backlog_max_pkts'])} / {flim(m['qdisc_drops'])} / {flim(m['qdisc_requeues'])} | {bql} |")
    L.append("")
    L.append("Definitions: scenario ids cost-<P>B-txus<T> and split-<P>B-txus<T> (unslowed, fixed count), "
             "slow<N>-<P>B-txus<T> (receiver slowed by N ingress filters) and unslowed-<P>B-txus<T>, the kit at "
             "tx-usecs T (def = the module's default); in `bench-<kernel>.json` the key \"<P>\" is also kept for the "
             "slowed scenario at the main tx-usecs, and the top-level cost_ratio, pps_ratio, p50_ratio, p99_ratio, "
             "kit_p50_vs_idle and noise_floor are the table \"Targets\" above. Sink pps = datagrams read by the sink / "
             "the sender's seconds; veth drops = vethA tx_dropped + vethB rx_dropped (`ip -s link`) over the flood; "
             "rcvbuf err = UDP RcvbufErrors in the receiver's netns; qdisc backlog = largest of three samples under "
             "load; BQL values from `bqlwatch` reading every 2 ms in three windows up to just before the flood ends "
             "(limit at end = the last window's last read); lost pings and probes are not in the percentiles. "
             "Raw samples: `results/bench-<kernel>.raw.json` (written beside the logs, not committed).")
    L.append("")
    return "\n".join(L)


def plot(out, results):
    gp, tmp = plotlib.start("bench-report")
    if not gp:
        return False
    kit_colors = ["#1f77b4", "#2ca02c", "#9467bd", "#17becf", "#8c564b", "#e377c2"]
    panels = []

    def cdf(name, xs):
        xs = sorted(xs)
        if not xs:
            return None
        fn = os.path.join(tmp, name.replace("/", "_") + ".dat")
        with open(fn, "w") as f:
            for i, x in enumerate(xs):
                f.write(f"{max(x, 0.01)} {(i + 1) / len(xs)}\n")
        return fn

    def lat(d):
        """The latency samples of a flood: tsprobe's one-way delays, else ping's RTTs."""
        return d.get("tsprobe", {}).get("owd") or d.get("rtt_ms", [])

    for r in results:
        slowed = cases(r, "slowed")
        for pay in sorted({sc["payload"] for _, sc in slowed}):
            mine = [(i, sc) for i, sc in slowed if sc["payload"] == pay]
            done = {v: [run for run in r["raw"][v] if run["complete"]] for v in VARIANTS}
            curves = []
            # Stock: every slowed flood of this payload pooled (the same flood, no ethtool step).
            fn = cdf(f"{r['kernel']}-{pay}-stock", [x for run in done["stock"] for i, _ in mine
                                                    for x in lat(run["scenarios"].get(i, {}))])
            if fn:
                curves.append(f"'{fn}' using 1:2 with steps lw 2.5 lc rgb '#d62728' title 'stock, loaded'")
            # The same colour for a tx-usecs setting in every panel; the main one blue.
            alltx = sorted({sc["tx_usecs"] for _, sc in slowed}, key=lambda t: (t != r.get("main_tx_usecs"), t != "def", int(t) if t.isdigit() else 0))
            for i, sc in mine:
                n = alltx.index(sc["tx_usecs"])
                fn = cdf(f"{r['kernel']}-{i}-kit", [x for run in done["kit"] for x in lat(run["scenarios"].get(i, {}))])
                if fn:
                    lim = sc["kit_bql_limit_end"]
                    t = "default" if sc["tx_usecs"] == "def" else sc["tx_usecs"] + " us"
                    curves.append(f"'{fn}' using 1:2 with steps lw 2 lc rgb '{kit_colors[n % len(kit_colors)]}' "
                                  f"title 'kit, tx-usecs {t} (DQL limit {flim(lim)})'")
            for v, col in (("stock", "#ff9896"), ("kit", "#aec7e8")):
                fn = cdf(f"{r['kernel']}-{pay}-{v}-idle", [x for run in done[v] for x in lat(run["idle"])])
                if fn:
                    curves.append(f"'{fn}' using 1:2 with steps lw 1.5 dt 2 lc rgb '{col}' title '{v}, idle'")
            main = next((sc for _, sc in mine if sc["tx_usecs"] == r.get("main_tx_usecs")), mine[0][1])
            un = [sc for _, sc in cases(r) if sc["kind"] in ("unslowed", "cost") and sc["payload"] == pay]
            ttl = (f"{r['kernel']}, {pay} B, fq_codel fix {r['fq_codel_stale_state_fix']}: "
                   f"kit p50 {fmt(main['p50_ratio'], 1)}x, p99 {fmt(main['p99_ratio'], 1)}x lower ({txs(main).replace('µs', 'us')})")
            if un:
                ttl += "|unslowed sink pps kit/stock: " + ", ".join(
                    f"{fmt(u['pps_ratio'], 3)} ({txs(u).replace('µs', 'us')})" for u in un)
            panels.append((r["kernel"], ttl, curves))
    cols = max(1, max((sum(1 for k, _, _ in panels if k == r["kernel"]) for r in results), default=1))
    rows = math.ceil(len(panels) / cols)
    g = [f"set terminal pngcairo size {720 * cols},{430 * rows} font 'DejaVu Sans,10'",
         f"set output '{os.path.join(out, 'bench.png')}'",
         f"set multiplot layout {rows},{cols} title 'veth + fq\\_codel, receiver slowed, UDP flood: one-way delay (tsprobe; ping RTT in older runs) CDF, stock vs kit per tx-usecs (QEMU TCG; runs pooled)'",
         "set logscale x", "set xrange [0.005:1000]", "set yrange [0:1]", "set grid xtics ytics mxtics",
         "set xlabel 'delay (ms, log scale)'", "set ylabel 'fraction of replies'", "set key bottom right font ',9'"]
    for _, ttl, curves in panels:
        # Double quotes: "\\n" is a line break, "\\\\_" a literal _ in enhanced text.
        esc = ttl.replace("_", "\\\\_").replace("|", "\\n")
        g.append(f'set title "{esc}"')
        g.append("plot " + ", ".join(curves) if curves else "plot NaN notitle")
    g.append("unset multiplot")
    return plotlib.finish("bench-report", gp, tmp, g)


def annotate(out, kernels):
    """Add the service bound (service_bound()) to summaries written before
    it existed (their logs gone): every slowed scenario and the headline of
    <out>/bench-<k>.json, rewritten in place; a table per kernel on stdout."""
    print("| kernel | summary | slowed flood | kit sink pps | service ms | kit idle / loaded p50 ms "
          "| bound: idle + 3 service ms | loaded − idle, service times (≤ 3) | old: loaded / idle (≤ 3×) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for k in kernels:
        path = os.path.join(out, f"bench-{k}.json")
        with open(path) as f:
            r = json.load(f)
        for sid, sc in r["scenarios"].items():
            if sc.get("kind") != "slowed":
                continue
            service_bound(sc)
            sc.setdefault("targets_met", {})["p50_service"] = target_met("p50_service", sc["kit_p50_service_times"])
            if "alias_of" in sc:
                continue
            probe = sc.get("latency_probe") or "ping"
            print(f"| {k} | {os.path.basename(path)} | {sid} | {fmt(sc['kit']['median'].get('sink_pps'), 0)} | "
                  f"{fmt(sc['kit_service_ms'], 3)} | {fmt(sc['kit']['pooled_idle'][probe]['p50_ms'], 3)} / "
                  f"{fmt(sc['kit']['pooled'][probe]['p50_ms'], 3)} | {fmt(sc['kit_p50_service_bound_ms'], 3)} | "
                  f"{fmt(sc['kit_p50_service_times'], 2)} {yn(sc['targets_met']['p50_service'])} | "
                  f"{fmt(sc.get('kit_p50_vs_idle'), 2)}× {yn(sc['targets_met'].get('p50_vs_idle'))} |")
        head = r.get("headline", {})
        ls = r["scenarios"].get((head.get("scenarios") or {}).get("p50_ratio") or "", {})
        service_headline(head, ls)
        r["kit_p50_service_times"] = head["kit_p50_service_times"]
        with open(path, "w") as f:
            json.dump(r, f, indent=1)
            f.write("\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--runs", type=int, default=0)
    ap.add_argument("--wall", type=int, default=-1)
    ap.add_argument("--command", default="make bench")
    ap.add_argument("--params", default="")
    ap.add_argument("--annotate", action="store_true",
                    help="only add the service bound to existing bench-<k>.json summaries")
    ap.add_argument("kernels", nargs="+")
    a = ap.parse_args()
    if a.annotate:
        annotate(a.out, a.kernels)
        return
    meta = {"generated": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "command": a.command, "wall": a.wall, "runs": a.runs, "params": a.params}
    if a.wall < 0:  # report only: keep what the run that made the logs said
        for k in a.kernels:
            try:
                with open(os.path.join(a.out, f"bench-{k}.json")) as f:
                    old = json.load(f)
                meta.update(generated=old["generated"], wall=old["wall_seconds"],
                            command=old["command"], runs=old["runs_requested"],
                            params=old.get("bench_params") or a.params)
                break
            except (OSError, ValueError, KeyError):
                pass
        if meta["wall"] < 0:
            meta["wall"] = 0
    results = [r for r in (kernel_report(a.out, k, meta) for k in a.kernels) if r]
    if not results:
        sys.exit("bench-report: no results")
    with open(os.path.join(a.out, "bench.md"), "w") as f:
        f.write(markdown(results, meta))
    ok = plot(a.out, results)
    print(f"bench-report: wrote {', '.join('bench-' + r['kernel'] + '.json' for r in results)}, bench.md"
          + (", bench.png" if ok else "") + f" in {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
