#!/usr/bin/env python3
"""bench-mana-report.py: results/bench-mana-<kernel>.json, bench-mana.md and
bench-mana.png from the console logs of lab/bench-mana.sh
(tests/vm/guest/mana-bench.sh's data lines).

Per kernel and case (queue count x load): medians over the complete runs of
each variant (stock = the kernel's mana.ko, kit = the kit's) of the request/
response probe's and ping's p50/p99 under load and idle, the wire's
throughput, A's largest BQL limit, and SQ/RQ doorbells per WQE/frame.  The
ratios keep veth's field names: p50_ratio and p99_ratio = stock/kit loaded
RR latency, pps_ratio = kit/stock wire throughput under the load (bytes per
second: the load's packet sizes are the same in both).  noise_floor = the
spread of the stock runs, (max - min) / median, of the metric behind each
ratio.  The headline case is q1-tcp (one queue, TCP streams: the shape of
upstream's 1-queue, 8-flow TCP_RR measurement).  Latency boots under
-icount also carry the plugin's counts (bench-mana-<kernel>-<variant>-
<run>.insn): per loaded case insn_per_frame (all guest instructions of the
probed window per frame B received in it) and the case's cost_ratio, kit/
stock, with its noise floor.

Cost (the cost boots, bench-mana-<kernel>-cost-<variant>-<run>.log with the
insncount plugin's .insn beside it): per cost flood, guest instructions
(both vCPUs, kernel and user) between the sender's first datagram and the
sink's last, per delivered datagram, and the device's doorbells per
delivered datagram (SQ, RQ, CQ and EQ doorbells of both ports).  cost_ratio
= kit / stock median instructions per datagram of the headline cost case
(one queue), noise_floor.cost_ratio = the spread of its stock floods (every
run and repetition).  A kernel this run did not measure keeps the part
(latency or cost) its last report had.  Only the standard library is used
(gnuplot, when installed, draws the plot).
"""
import argparse
import glob
import json
import os
import re
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import insncount  # noqa: E402  (lab/insncount.py)
import plotlib  # noqa: E402  (lab/plotlib.py)
from benchstats import med, spread, ratio  # noqa: E402  (lab/benchstats.py)

VARIANTS = ("stock", "kit")
HEADLINE = "q1-tcp"
KV = re.compile(r"(\w+)=(\S*)")


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def parse_log(path):
    run = {"log": os.path.basename(path), "complete": False, "failed_checks": [], "cases": {}, "module": {}}
    with open(path, errors="replace") as f:
        for raw in f:
            line = raw.replace("\r", "").rstrip("\n")
            m = re.search(r"BQLKIT-RESULT (\S+) FAIL", line)
            if m:
                run["failed_checks"].append(m.group(1))
            if line.startswith("BQLKIT-END"):
                run["complete"] = True
            if not line.startswith("BQLKIT "):
                continue
            parts = line.split(" ", 2)
            if len(parts) < 3:
                continue
            kind, kv = parts[1], dict(KV.findall(parts[2]))
            if kind == "mana" and parts[2].startswith("module "):
                run["module"] = kv
            elif kind == "benchparams":
                run["params"] = kv
            elif kind == "host":
                run["host"] = kv
            elif kind == "tcpinfo" and "label" in kv:
                # One line per TCP stream of the load (tcpload, as it ended).
                if kv.get("side") == "send":
                    run["cases"].setdefault(kv.pop("label"), {}).setdefault("tcpinfo", []).append(
                        {k: num(v) for k, v in kv.items() if num(v) is not None})
            elif kind in ("bqlq", "sqs") and "label" in kv:
                # Per txq / per SQ: "A/B" pairs (bqlq: mean/largest BQL
                # inflight bytes; sqs: WQEs/bytes the model sent).
                label = kv.pop("label")
                run["cases"].setdefault(label, {})[kind] = {
                    k: [num(x) for x in v.split("/")] for k, v in kv.items() if re.fullmatch(r"\d+/\d+", v)}
            elif "label" in kv and kind in ("benchcase", "rr", "pingq", "bulk", "bqlpeak", "db", "qdisc", "qdiscb",
                                             "costcase", "costdb", "costflood"):
                label = kv.pop("label")
                when = ""
                # qdiscb: the name in logs before the scenario used lib.sh's qdisc_stats_emit.
                kind = "qdiscb" if kind == "qdisc" else kind
                if kind == "qdiscb":
                    label, _, when = label.rpartition(".")
                c = run["cases"].setdefault(label, {})
                c[kind + ("_" + when if when else "")] = {k: (num(v) if num(v) is not None else v) for k, v in kv.items()}
    run["ok"] = run["complete"] and not run["failed_checks"]
    return run


def metrics(c):
    """The numbers of one case of one run."""
    rr, pq, bulk, bql, db = (c.get(k, {}) for k in ("rr", "pingq", "bulk", "bqlpeak", "db"))
    m = {
        "rr_p50_us": rr.get("p50_us"), "rr_p99_us": rr.get("p99_us"), "rr_n": rr.get("n"),
        "ping_p50_us": pq.get("p50_us"), "ping_p99_us": pq.get("p99_us"),
        "wire_mbps": bulk.get("mbps"), "sink_bytes": bulk.get("sink_bytes"),
        "bql_max_limit": bql.get("max_limit"), "bql_max_inflight": bql.get("max_inflight"),
        "qdisc_backlog_pkts": c.get("qdiscb_post", {}).get("backlog_pkts"),
    }
    if db.get("tx_wqes"):
        m["sq_doorbells_per_wqe"] = db["sq_doorbells"] / db["tx_wqes"]
    if db.get("rx_frames"):
        m["rq_doorbells_per_frame"] = db["rq_doorbells"] / db["rx_frames"]
        # -icount latency boots: the guest's instructions (both vCPUs, all
        # of them: stack, probes, samplers) over the probed window, per
        # frame B received (the device's counters, read just outside the
        # window: a few frames more than it saw, in both variants alike).
        ins = c.get("insn")
        if ins:
            m["insn_per_frame"] = ins["total"] / db["rx_frames"]
            m["kernel_insn_per_frame"] = ins["kernel_total"] / db["rx_frames"]
    # Where the probe waits (logs since 2026-12-07): the model's wire takes
    # one WQE from each non-empty SQ in turn, so a probe waits for the WQEs
    # ahead of it in its SQ, each a round of every busy SQ's WQE.
    sqs = c.get("sqs") or {}
    wqes, sbytes = sum(w for w, _ in sqs.values()), sum(b for _, b in sqs.values())
    if wqes:
        m["wqe_bytes"] = sbytes / wqes
        m["busy_sqs"] = sum(1 for _, b in sqs.values() if b >= 0.01 * sbytes)
    if c.get("bqlq"):
        m["bql_inflight_mean_sum"] = sum(mean for mean, _ in c["bqlq"].values())
    flows = c.get("tcpinfo") or []
    if flows:
        m["tcp_unacked_segs_sum"] = sum(f.get("unacked", 0) for f in flows)
        m["tcp_retrans_sum"] = sum(f.get("retrans", 0) for f in flows)
    return {k: v for k, v in m.items() if isinstance(v, (int, float))}


def read_info(path):
    """The key=value lines lab/bench-mana.sh wrote about a module."""
    info = {}
    if os.path.exists(path):
        for line in open(path):
            if "=" in line:
                a, _, b = line.rstrip("\n").partition("=")
                info[a] = b
    return info


def runs_summary(raw, ok, info):
    """Which boots of each variant counted, which failed and why."""
    return {
        "runs_complete": {v: len(ok[v]) for v in VARIANTS},
        "runs_failed": {v: [{"log": x["log"], "complete": x["complete"], "failed_checks": x["failed_checks"]}
                            for x in raw[v] if not x["ok"]] for v in VARIANTS},
        "kit_module": info,
        "guest_params": next((x.get("params") for v in VARIANTS for x in ok[v] if x.get("params")), {}),
    }


def parse_insn_log(path):
    """A boot's log, each case the guest marked with its instructions (the
    insncount plugin's .insn beside it: cost floods, and the loaded cases of
    -icount latency boots)."""
    run = parse_log(path)
    insn = re.sub(r"\.log$", ".insn", path)
    if os.path.exists(insn):
        with open(path, errors="replace") as f, open(insn, errors="replace") as g:
            iv = insncount.intervals(f.readlines(), g.readlines())
        for lb, c in run["cases"].items():
            if lb in iv:
                c["insn"] = iv[lb].as_dict()
    return run


DOORBELLS = ("sq", "rq", "cq", "eq")


def cost_metrics(c):
    """The numbers of one cost flood: per delivered datagram."""
    cf, db, ins = c.get("costflood", {}), c.get("costdb", {}), c.get("insn")
    n = cf.get("pkts")
    if not n or not ins:
        return {}
    cpu = [k + u for k, u in zip(ins["kernel"], ins["user"])]
    m = {"insn_per_pkt": ins["total"] / n, "kernel_per_pkt": ins["kernel_total"] / n,
         "user_per_pkt": ins["user_total"] / n,
         # vCPU 0 runs the sender, vCPU 1 the sink (interrupts: where the
         # queue's MSI-X vector points).
         "vcpu0_per_pkt": cpu[0] / n if cpu else None,
         "vcpu1_per_pkt": cpu[1] / n if len(cpu) > 1 else None,
         # sent: datagrams (a GSO send, gso > 0, is gso of them).
         "delivered": n, "sent": cf["sent"] * (cf.get("gso") or 1) if cf.get("sent") else None,
         "send_pps": cf.get("send_pps")}
    if all(isinstance(db.get(f"{p}_{d}"), (int, float)) for p in "ab" for d in DOORBELLS):
        for d in DOORBELLS:
            m[f"{d}_doorbells_per_pkt"] = (db[f"a_{d}"] + db[f"b_{d}"]) / n
        m["doorbells_per_pkt"] = sum(m[f"{d}_doorbells_per_pkt"] for d in DOORBELLS)
    if db.get("tx_wqes"):
        m["sq_doorbells_per_wqe"] = db["a_sq"] / db["tx_wqes"]
    # B's RX: RQ doorbells per received frame (once per frame, or once per
    # NAPI poll with the RX doorbell batching), and frames per completed
    # poll (one CQ arm each).
    if db.get("rx_frames") and isinstance(db.get("b_rq"), (int, float)):
        m["rq_doorbells_per_frame"] = db["b_rq"] / db["rx_frames"]
        if db.get("b_cq_arms"):
            m["frames_per_poll"] = db["rx_frames"] / db["b_cq_arms"]
    return {k: v for k, v in m.items() if isinstance(v, (int, float))}


def cost_report(out, k, params, command, wall):
    """The cost part of kernel K's report, or None without cost logs."""
    logs = {v: sorted(glob.glob(os.path.join(out, f"bench-mana-{k}-cost-{v}-*.log")),
                      key=lambda s: int(re.search(r"-(\d+)\.log$", s).group(1))) for v in VARIANTS}
    if not any(logs.values()):
        return None
    raw = {v: [parse_insn_log(f) for f in logs[v]] for v in VARIANTS}
    ok = {v: [r for r in raw[v] if r["ok"]] for v in VARIANTS}
    info = read_info(os.path.join(out, f"bench-mana-{k}-cost-info.log"))
    # Identical floods of one boot (L, L-r2, ...) pool with the other runs'.
    base = lambda lb: re.sub(r"-r\d+$", "", lb)  # noqa: E731
    cases = {}
    for v in VARIANTS:
        for r in ok[v]:
            for lb, c in r["cases"].items():
                if "costcase" not in c:
                    continue
                e = cases.setdefault(base(lb), {"label": base(lb), "queues": c["costcase"].get("queues"),
                                                "payload": c["costcase"].get("payload"),
                                                "count": c["costcase"].get("count")})
                e.setdefault(v, []).append(cost_metrics(c))
    for lb, e in cases.items():
        for v in VARIANTS:
            per = [m for m in e.pop(v, []) if m]
            keys = sorted({k2 for m in per for k2 in m})
            e[v] = {"floods": len(per), "median": {k2: med([m.get(k2) for m in per]) for k2 in keys},
                    "values": {k2: [m.get(k2) for m in per] for k2 in keys}}
        sm, km = e["stock"]["median"], e["kit"]["median"]
        e["cost_ratio"] = ratio(km.get("insn_per_pkt"), sm.get("insn_per_pkt"))
        e["doorbells_ratio"] = ratio(km.get("doorbells_per_pkt"), sm.get("doorbells_per_pkt"))
        e["noise_floor"] = {"cost_ratio": spread(e["stock"]["values"].get("insn_per_pkt", [])),
                            "doorbells_ratio": spread(e["stock"]["values"].get("doorbells_per_pkt", []))}
    head = min(cases.values(), key=lambda e: (e.get("queues") or 0, e["label"])) if cases else {}
    return {
        "generated": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "command": command, "wall_seconds": wall, "bench_params": params,
        **runs_summary(raw, ok, info),
        "headline_case": head.get("label"),
        "cases": cases,
        "host": [x.get("host", {}) for v in VARIANTS for x in raw[v]],
    }


def kernel_report(out, k, runs_requested, params, command, wall):
    info = read_info(os.path.join(out, f"bench-mana-{k}-info.log"))
    raw = {v: [parse_insn_log(f) for f in sorted(glob.glob(os.path.join(out, f"bench-mana-{k}-{v}-*.log")),
                                            key=lambda s: int(re.search(r"-(\d+)\.log$", s).group(1)))]
           for v in VARIANTS}
    ok = {v: [r for r in raw[v] if r["ok"]] for v in VARIANTS}
    prev = {}
    jpath = os.path.join(out, f"bench-mana-{k}.json")
    if os.path.exists(jpath):
        with open(jpath) as f:
            prev = json.load(f)
    cost = cost_report(out, k, params, command, wall)
    if wall < 0 and cost and prev.get("cost"):
        # Only the report redone (BENCH_REPORT_ONLY): keep what the run recorded.
        for key in ("generated", "command", "wall_seconds", "bench_params"):
            cost[key] = prev["cost"].get(key, cost[key])
    cost = cost or prev.get("cost")
    if not any(raw.values()) and prev:
        # No latency boots this time (BENCH_LATENCY=0): the last report's.
        r = {key: val for key, val in prev.items() if key not in ("cost", "cost_ratio", "doorbells_per_pkt")}
        if isinstance(r.get("noise_floor"), dict):
            r["noise_floor"] = {key: val for key, val in r["noise_floor"].items() if key != "cost_ratio"}
        return finish(jpath, r, cost)
    if wall >= 0:
        prev = {}
    # Only the report redone (BENCH_REPORT_ONLY): keep what the run recorded.
    wall, command = prev.get("wall_seconds", wall), prev.get("command", command)
    labels = []
    for v in VARIANTS:
        for r in ok[v]:
            labels += [lb for lb in r["cases"] if lb not in labels]
    cases = {}
    for lb in labels:
        c = {"label": lb}
        first = next((r["cases"][lb]["benchcase"] for v in VARIANTS for r in ok[v]
                      if "benchcase" in r["cases"].get(lb, {})), {})
        c.update({k2: first.get(k2) for k2 in ("queues", "rate_mbps", "load", "flows", "secs")})
        for v in VARIANTS:
            per = [metrics(r["cases"][lb]) for r in ok[v] if lb in r["cases"]]
            keys = sorted({k2 for m in per for k2 in m})
            c[v] = {"runs": len(per), "median": {k2: med([m.get(k2) for m in per]) for k2 in keys},
                    "values": {k2: [m.get(k2) for m in per] for k2 in keys}}
        sm, km = c["stock"]["median"], c["kit"]["median"]
        sv = c["stock"]["values"]
        if c.get("load") != "none":
            c["p50_ratio"] = ratio(sm.get("rr_p50_us"), km.get("rr_p50_us"))
            c["p99_ratio"] = ratio(sm.get("rr_p99_us"), km.get("rr_p99_us"))
            c["ping_p50_ratio"] = ratio(sm.get("ping_p50_us"), km.get("ping_p50_us"))
            c["pps_ratio"] = ratio(km.get("wire_mbps"), sm.get("wire_mbps"))
            # Instructions per frame under this load, kit/stock (-icount only).
            c["cost_ratio"] = ratio(km.get("insn_per_frame"), sm.get("insn_per_frame"))
            c["noise_floor"] = {"p50_ratio": spread(sv.get("rr_p50_us", [])),
                                "p99_ratio": spread(sv.get("rr_p99_us", [])),
                                "pps_ratio": spread(sv.get("wire_mbps", [])),
                                "cost_ratio": spread(sv.get("insn_per_frame", []))}
        cases[lb] = c
    head = cases.get(HEADLINE) or next((c for c in cases.values() if c.get("load") not in (None, "none")), {})
    idle = cases.get(f"q{int(head['queues'])}-idle", {}) if head.get("queues") else {}
    r = {
        "kernel": k, "driver": "mana",
        "generated": prev.get("generated") or time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "command": command, "wall_seconds": wall, "bench_params": params,
        "runs_requested": runs_requested,
        **runs_summary(raw, ok, info),
        "headline_case": head.get("label"),
        "p50_ratio": head.get("p50_ratio"), "p99_ratio": head.get("p99_ratio"), "pps_ratio": head.get("pps_ratio"),
        "noise_floor": head.get("noise_floor"),
        "kit_p50_vs_idle": ratio(head.get("kit", {}).get("median", {}).get("rr_p50_us"),
                                 idle.get("kit", {}).get("median", {}).get("rr_p50_us")),
        "kit_bql_max_limit": head.get("kit", {}).get("median", {}).get("bql_max_limit"),
        "sq_doorbells_per_wqe": {v: head.get(v, {}).get("median", {}).get("sq_doorbells_per_wqe") for v in VARIANTS},
        "rq_doorbells_per_frame": {v: head.get(v, {}).get("median", {}).get("rq_doorbells_per_frame") for v in VARIANTS},
        "cases": cases,
        "host": [x.get("host", {}) for v in VARIANTS for x in raw[v]],
    }
    return finish(jpath, r, cost)


def finish(jpath, r, cost):
    """Add the cost part (top level: cost_ratio, noise_floor.cost_ratio,
    doorbells_per_pkt of its headline case) and write the json."""
    # Every bench json (veth's too) carries the four ratios and a noise floor
    # for each at top level: null where this run measured no such thing.
    hc = cost["cases"].get(cost.get("headline_case") or "", {}) if cost else {}
    r["cost_ratio"] = hc.get("cost_ratio")
    nf = {key: None for key in ("cost_ratio", "p50_ratio", "p99_ratio", "pps_ratio")}
    nf.update(r.get("noise_floor") or {})
    nf["cost_ratio"] = (hc.get("noise_floor") or {}).get("cost_ratio")
    r["noise_floor"] = nf
    for key in ("p50_ratio", "p99_ratio", "pps_ratio"):
        r.setdefault(key, None)
    if cost:
        r["doorbells_per_pkt"] = {v: hc.get(v, {}).get("median", {}).get("doorbells_per_pkt") for v in VARIANTS}
        r["cost"] = cost
    with open(jpath, "w") as f:
        json.dump(r, f, indent=1, sort_keys=False)
        f.write("\n")
    return r


def fmt(x, nd=1, unit=""):
    if x is None:
        return "NA"
    return f"{x:.{nd}f}{unit}"


def pct(x):
    return "NA" if x is None else f"{100 * x:.0f} %"


def ms(us):
    return "NA" if us is None else f"{us / 1000:.2f}"


def per_run(c):
    """The kit's runs of a case: p50 (ms) and the BQL limit DQL reached."""
    kv = c.get("kit", {}).get("values", {})
    return ", ".join(f"{ms(p)} ({fmt(lim, 0)})" for p, lim in zip(kv.get("rr_p50_us", []), kv.get("bql_max_limit", [])))


def markdown(results, params, command, wall):
    L = ["# bqlkit mana benchmark: stock vs kit on the emulated MANA VF", ""]
    w = f"{wall // 60} min {wall % 60} s" if wall >= 0 else "as recorded"
    loads = sorted({f"{x['host'][0].get('loadavg_before', 'NA')}" for x in results if x["host"]})
    L.append(f"Produced by `{command}` on {results[0]['generated'] if results else 'NA'} (wall time {w}); "
             f"parameters: `{params}`.")
    L.append("")
    L.append("Two emulated MANA VFs (the kit's QEMU device model, `lab/qemu/hw/net/mana.c`) on one QEMU hub: "
             "netns A sends to netns B over a wire the model limits to the given rate (TX completions at line "
             "rate), so the SQ fills as on a real NIC.  Per boot and queue count (`ethtool -L combined Q`): a "
             "TCP request/response probe (`tcpload rr-client`, 1-byte requests, one in flight) and `ping -i "
             "0.05` from A to B, idle and then beside a bulk load from A to B (tcp: TCP streams, every byte "
             "checked; udp: a UDP flood of 1400-byte datagrams from several sockets), after 2 s of warm-up.  "
             "fq_codel under mq on both ports.  Stock = the kernel's own mana.ko (no BQL); kit = the kit's.  "
             "Medians over runs; noise floor = spread (max - min) / median of the stock runs of that metric.  "
             + ("QEMU under `-icount` (one TCG thread, guest time from the instruction count, the vCPUs "
                "taking turns every `turn_us` of guest time; the device's wire and completions on that "
                "time, `tx-sync=1`): the host's load does not reach the numbers."
                if "mode=icount" in params else
                "QEMU multi-threaded TCG: guest time is the host's, shared with whatever else the host runs."))
    ring = re.search(r"tx_ring=(\d+)", params)
    ring = int(ring.group(1)) if ring else 0
    L[-1] += (f"  A's TX ring holds {ring} WQEs in both variants (`BENCH_TX_RING`): with the driver's 256 the "
              "stock's SQ filled with TCP's one-MSS WQEs before TCP Small Queues bounded its streams in some runs "
              "and not in others, two regimes of the stock p50 (docs/mana.md, \"The stock's two bounds\")."
              if ring else "  A's TX ring is the driver's (256 WQEs).")
    gso = re.search(r"gso_max=(\d+)", params)
    gso = int(gso.group(1)) if gso else 0
    L.append("")
    L.append("What it shows: where the standing queue sits.  The stock driver keeps it in the SQ, where the "
             "probe waits behind it; with BQL it moves to fq_codel, which serves the probe's flow first.  "
             "What it cannot show: hardware timing.  DQL settles at a limit of about two of the largest "
             "packets in flight (it raises the limit whenever a completion finds that everything queued at "
             "the previous completion has gone, i.e. the SQ may have run dry), and the kit's loaded latency "
             "is that limit drained at the wire's rate.  On Azure two 64 KB TSO packets are microseconds of "
             "wire; on this 20 Mbit/s wire they are 52 ms, as long as the stock's whole TSQ-bounded queue: "
             "measured on 6.12 under -icount, one run each, the kit's limit was 127490 bytes at A's "
             "gso_max_size 65536 (RR p50 stock/kit 1.4x), 27842 at 16384 (16.5x), 11914 at 8192 (5.4x: "
             "the stock's queue shrinks too, two packets per TCP flow).  "
             + (f"These runs hold A's gso_max_size at {gso} bytes (`BENCH_GSO_MAX`), stock and kit alike, so "
                "that the largest packet is a few ms of wire. " if gso else
                "These runs keep the kernel's gso_max_size (65536). ")
             + "The ratios depend on the wire rate and packet sizes and say nothing about 100 Gbit/s hardware: "
             "upstream's measurement on Azure was TCP_RR p50 2554 -> 418 us (1 queue, 8 flows).")
    L.append("")
    L.append("## Headline: one queue, TCP streams (q1-tcp)")
    L.append("")
    L.append("| kernel | runs stock+kit | RR p50 stock / kit (ms) | p50 stock/kit | RR p99 stock / kit (ms) | p99 stock/kit | "
             "kit p50 / idle | wire Mbit/s kit/stock | kit BQL limit (bytes) | kit per run: p50 ms (BQL limit) | SQ doorbells/WQE stock, kit |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        c = r["cases"].get(r["headline_case"] or "", {})
        sm, km = c.get("stock", {}).get("median", {}), c.get("kit", {}).get("median", {})
        nf = c.get("noise_floor") or {}
        L.append(f"| {r['kernel']} | {r['runs_complete']['stock']}+{r['runs_complete']['kit']} | "
                 f"{ms(sm.get('rr_p50_us'))} / {ms(km.get('rr_p50_us'))} | {fmt(c.get('p50_ratio'))}x (noise {pct(nf.get('p50_ratio'))}) | "
                 f"{ms(sm.get('rr_p99_us'))} / {ms(km.get('rr_p99_us'))} | {fmt(c.get('p99_ratio'))}x (noise {pct(nf.get('p99_ratio'))}) | "
                 f"{fmt(r.get('kit_p50_vs_idle'))}x | {fmt(c.get('pps_ratio'), 3)} (noise {pct(nf.get('pps_ratio'))}) | "
                 f"{fmt(km.get('bql_max_limit'), 0)} | {per_run(c)} | "
                 f"{fmt(sm.get('sq_doorbells_per_wqe'), 3)}, {fmt(km.get('sq_doorbells_per_wqe'), 3)} |")
    L.append("")
    L.append("The kit's loaded latency is about the BQL limit drained at the wire's rate (fq_codel serves the "
             "probe's flow first), so a run whose DQL limit climbed waits longer (per-run column: the largest "
             "limit seen).  DQL raises its limit when a completion finds the SQ may have run dry while the queue "
             "was stopped, and lowers it only after a second of slack.  "
             + ("Under -icount the climb follows the largest packet (above), not the host's scheduling."
                if "mode=icount" in params else
                "TCP Small Queues refill the SQ only from TX completions, which under multi-threaded TCG wait "
                "for a busy vCPU, so with TCP streams some runs climb and some do not.")
             + "  A UDP flood (no TSQ) keeps the SQ fed: compare the udp cases below.")
    L.append("")
    L.extend(cost_markdown(results))
    L.append("## Every case")
    L.append("")
    L.append("| kernel | case | Q | load | RR p50 ms stock / kit | RR p99 ms stock / kit | ping p50 ms stock / kit | "
             "p50 ratio | p99 ratio | wire Mbit/s stock / kit | BQL limit kit | qdisc backlog stock / kit | RQ db/frame stock, kit |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        for lb, c in r["cases"].items():
            sm, km = c["stock"]["median"], c["kit"]["median"]
            nf = c.get("noise_floor") or {}
            L.append(f"| {r['kernel']} | {lb} | {fmt(c.get('queues'), 0)} | {c.get('load')} | "
                     f"{ms(sm.get('rr_p50_us'))} / {ms(km.get('rr_p50_us'))} | {ms(sm.get('rr_p99_us'))} / {ms(km.get('rr_p99_us'))} | "
                     f"{ms(sm.get('ping_p50_us'))} / {ms(km.get('ping_p50_us'))} | "
                     f"{fmt(c.get('p50_ratio'))}x ({pct(nf.get('p50_ratio'))}) | {fmt(c.get('p99_ratio'))}x ({pct(nf.get('p99_ratio'))}) | "
                     f"{fmt(sm.get('wire_mbps'))} / {fmt(km.get('wire_mbps'))} | {fmt(km.get('bql_max_limit'), 0)} | "
                     f"{fmt(sm.get('qdisc_backlog_pkts'), 0)} / {fmt(km.get('qdisc_backlog_pkts'), 0)} | "
                     f"{fmt(sm.get('rq_doorbells_per_frame'), 3)}, {fmt(km.get('rq_doorbells_per_frame'), 3)} |")
    L.append("")
    waits = [(r, lb, c) for r in results for lb, c in r["cases"].items()
             if c["stock"]["median"].get("wqe_bytes") or c["kit"]["median"].get("wqe_bytes")]
    if waits:
        L.append("### What the probe waits behind")
        L.append("")
        L.append("The model's wire takes one WQE from each non-empty SQ in turn: a probe waits for the WQEs ahead "
                 "of it in its own SQ, each a round of every busy SQ's WQE.  Bytes per WQE and busy SQs (those "
                 "that sent 1 % or more of the window's bytes) from the model's per-SQ counters over the probed "
                 "window; the stock's TCP in flight = the streams' unacknowledged segments as they ended "
                 "(TCP_INFO); the kit's BQL inflight = the sum over A's txqs of each one's mean (bqlwatch).  Medians "
                 "over runs.")
        L.append("")
        L.append("| kernel | case | busy SQs stock, kit | bytes per WQE stock / kit | stock TCP in flight (segments) | "
                 "kit BQL inflight (bytes) | TCP retransmits stock / kit |")
        L.append("|---|---|---|---|---|---|---|")
        for r, lb, c in waits:
            sm, km = c["stock"]["median"], c["kit"]["median"]
            L.append(f"| {r['kernel']} | {lb} | {fmt(sm.get('busy_sqs'), 0)}, {fmt(km.get('busy_sqs'), 0)} | "
                     f"{fmt(sm.get('wqe_bytes'), 0)} / {fmt(km.get('wqe_bytes'), 0)} | {fmt(sm.get('tcp_unacked_segs_sum'), 0)} | "
                     f"{fmt(km.get('bql_inflight_mean_sum'), 0)} | "
                     f"{fmt(sm.get('tcp_retrans_sum'), 0)} / {fmt(km.get('tcp_retrans_sum'), 0)} |")
        L.append("")
    bad = [(r["kernel"], v, x) for r in results for v in VARIANTS for x in r["runs_failed"][v]]
    bad += [(r["kernel"], v + " (cost)", x) for r in results if r.get("cost")
            for v in VARIANTS for x in r["cost"]["runs_failed"][v]]
    if bad:
        L.append("## Runs kept out of the medians")
        L.append("")
        for k, v, x in bad:
            why = "incomplete (no BQLKIT-END: crash, hang or timeout)" if not x["complete"] else \
                "failed checks: " + ", ".join(x["failed_checks"])
            L.append(f"- {k} {v} `{x['log']}`: {why}")
        L.append("")
    L.append(f"Host load average (1 min) before the runs: {', '.join(loads) or 'NA'}.  Raw numbers per run: "
             "`results/bench-mana-<kernel>.json` (`cases.*.stock|kit.values`).")
    L.append("")
    return "\n".join(L)


def cost_markdown(results):
    """The cost section: instructions and doorbells per datagram."""
    rows = [r for r in results if r.get("cost")]
    if not rows:
        return []
    L = ["## Cost per datagram: guest instructions and doorbells (noise-free)", ""]
    gen = sorted({f"`{r['cost']['command']}` on {r['cost']['generated']} (`{r['cost']['bench_params']}`)" for r in rows})
    L.append("Produced by " + "; ".join(gen) + ".  Separate boots under `-icount` (one TCG thread, guest time "
             "from the instruction count) with the kit's insncount TCG plugin (`lab/qemu/plugins/insncount.c`): per "
             "queue count, identical floods of a fixed number of small UDP datagrams from 4 sockets A -> B on an "
             "unlimited wire (sender on vCPU 0, sink on vCPU 1).  insn/pkt = guest instructions of both vCPUs, "
             "kernel and user, from the sender's first datagram to the sink's last, per delivered datagram; "
             "doorbells/pkt = the device's SQ + RQ + CQ + EQ doorbells of both ports per delivered datagram "
             "(SQ: A's TX ring; RQ: B's RX refill; CQ/EQ: re-arming after a NAPI poll).  Medians over every "
             "flood (runs x repetitions); noise floor = spread (max - min) / median of the stock floods.  The "
             "count is the emulated device's, not hardware's: an MMIO doorbell costs one guest instruction "
             "here, a PCIe write on a real NIC.")
    L.append("")
    L.append("| kernel | case | floods stock+kit | insn/pkt stock / kit | kit/stock | kernel insn/pkt stock / kit | "
             "vCPU 0 / vCPU 1 insn/pkt, kit | doorbells/pkt stock / kit | kit SQ, RQ, CQ, EQ doorbells/pkt | "
             "B's RQ doorbells/frame stock / kit (frames per poll stock / kit) | delivered/sent kit |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        for lb, c in sorted(r["cost"]["cases"].items(), key=lambda x: (x[1].get("queues") or 0, x[0])):
            sm, km = c["stock"]["median"], c["kit"]["median"]
            nf = c.get("noise_floor") or {}
            sent = km.get("sent")
            L.append(f"| {r['kernel']} | {lb} | {c['stock']['floods']}+{c['kit']['floods']} | "
                     f"{fmt(sm.get('insn_per_pkt'), 0)} / {fmt(km.get('insn_per_pkt'), 0)} | "
                     f"{fmt(c.get('cost_ratio'), 4)} (noise {fmt(None if nf.get('cost_ratio') is None else 100 * nf['cost_ratio'], 2)} %) | "
                     f"{fmt(sm.get('kernel_per_pkt'), 0)} / {fmt(km.get('kernel_per_pkt'), 0)} | "
                     f"{fmt(km.get('vcpu0_per_pkt'), 0)} / {fmt(km.get('vcpu1_per_pkt'), 0)} | "
                     f"{fmt(sm.get('doorbells_per_pkt'), 3)} / {fmt(km.get('doorbells_per_pkt'), 3)} "
                     f"(noise {pct(nf.get('doorbells_ratio'))}) | "
                     + ", ".join(fmt(km.get(f"{d}_doorbells_per_pkt"), 3) for d in DOORBELLS) + " | "
                     f"{fmt(sm.get('rq_doorbells_per_frame'), 3)} / {fmt(km.get('rq_doorbells_per_frame'), 3)} "
                     f"({fmt(sm.get('frames_per_poll'), 1)} / {fmt(km.get('frames_per_poll'), 1)}) | "
                     f"{fmt(ratio(km.get('delivered'), sent), 3)} |")
    L.append("")
    return L


def plot(out, results):
    gp, tmp = plotlib.start("bench-mana-report")
    if not gp:
        return False
    dat = os.path.join(tmp, "p50.dat")
    rows = []
    for r in results:
        for lb, c in r["cases"].items():
            if c.get("load") in (None, "none"):
                continue
            s, k = c["stock"]["median"].get("rr_p50_us"), c["kit"]["median"].get("rr_p50_us")
            if s and k:
                rows.append((f"{r['kernel'].split('+')[0].replace('-amd64', '')} {lb}", s / 1000, k / 1000))
    if not rows:
        shutil.rmtree(tmp, ignore_errors=True)
        return False
    with open(dat, "w") as f:
        for name, s, k in rows:
            f.write(f'"{name}" {s} {k}\n')
    g = [f"set terminal pngcairo size {max(800, 90 * len(rows))},480 font 'DejaVu Sans,10'",
         f"set output '{os.path.join(out, 'bench-mana.png')}'",
         "set title 'mana on the emulated VF, wire rate-limited: TCP request/response p50 under load (medians of runs)'",
         "set style data histograms", "set style histogram clustered gap 1", "set style fill solid 0.8 border -1",
         "set logscale y", "set ylabel 'p50 (ms, log scale)'", "set xtics rotate by -30 font ',9' noenhanced",
         "set grid ytics", "set key top right",
         f"plot '{dat}' using 2:xtic(1) title 'stock mana' lc rgb '#d62728', '' using 3 title 'kit mana (BQL)' lc rgb '#1f77b4'"]
    return plotlib.finish("bench-mana-report", gp, tmp, g)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--runs", type=int, required=True)
    ap.add_argument("--wall", type=int, default=-1)
    ap.add_argument("--command", default="make bench DRIVER=mana")
    ap.add_argument("--params", default="")
    ap.add_argument("kernels", nargs="+")
    a = ap.parse_args()
    results = []
    for k in a.kernels:
        if not glob.glob(os.path.join(a.out, f"bench-mana-{k}-*-*.log")):
            jpath = os.path.join(a.out, f"bench-mana-{k}.json")
            if not os.path.exists(jpath):
                print(f"bench-mana-report: no logs for {k} in {a.out}", file=sys.stderr)
                continue
            with open(jpath) as f:
                results.append(json.load(f))  # not run this time: as recorded
            continue
        results.append(kernel_report(a.out, k, a.runs, a.params, a.command, a.wall))
    if not results:
        sys.exit("bench-mana-report: no runs to report")
    with open(os.path.join(a.out, "bench-mana.md"), "w") as f:
        f.write(markdown(results, a.params, results[0]["command"], results[0]["wall_seconds"]))
    plot(a.out, results)
    for r in results:
        nf = r.get("noise_floor") or {}
        print(f"{r['kernel']}: {r['headline_case']}: p50 stock/kit {fmt(r['p50_ratio'])}x (noise {pct(nf.get('p50_ratio'))}), "
              f"p99 {fmt(r['p99_ratio'])}x (noise {pct(nf.get('p99_ratio'))}), wire kit/stock {fmt(r['pps_ratio'], 3)}; "
              f"runs {r['runs_complete']['stock']}+{r['runs_complete']['kit']}"
              + (f"; cost {r['cost']['headline_case']}: insn/pkt kit/stock {fmt(r.get('cost_ratio'), 4)} "
                 f"(noise {pct((r.get('noise_floor') or {}).get('cost_ratio'))}), doorbells/pkt stock, kit "
                 f"{fmt(r['doorbells_per_pkt']['stock'], 3)}, {fmt(r['doorbells_per_pkt']['kit'], 3)}"
                 if r.get("cost") else ""))


if __name__ == "__main__":
    main()
