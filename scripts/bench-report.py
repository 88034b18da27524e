#!/usr/bin/env python3
"""bench-report.py: turn `make bench` console logs into results.

    bench-report.py --out DIR [--runs N] [--wall SECS] [--command STR] KVER...

Reads DIR/bench-<kver>-<stock|kit>-<run>.log (written by scripts/bench.sh),
writes DIR/bench-<kver>.json (raw samples per run, medians over runs, the
ratios and the targets), DIR/bench.md (the table) and DIR/bench.png (RTT
CDFs, gnuplot).  Only the standard library is used.

Scenarios: one per flood of the plan (tests/vm/guest/bench.sh), by id
  slow<N>-<P>B-txus<T>  receiver slowed by N ingress filters, payload P,
                        the kit at ethtool -C tx-usecs T (stock: the same
                        flood, no ethtool step)
  unslowed-<P>B-txus<T> no ingress filters (sink pps)
plus, for the old tools, the key "<P>" = the slowed scenario of payload P
at the main tx-usecs (the kit's default, 100, when it was run).

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
Ratios: p50_ratio = stock p50 / kit p50, p99_ratio = stock p99 / kit p99,
pps_ratio = kit sink pps / stock sink pps (all from the medians).
"""
import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

VARIANTS = ("stock", "kit")
TARGETS = {
    "p50_ratio": 20.0,      # stock p50 / kit p50 >= 20
    "p99_ratio": 10.0,      # stock p99 / kit p99 >= 10
    "p50_vs_idle": 3.0,     # kit loaded p50 / kit idle p50 <= 3
    "pps_ratio": 0.99,      # kit sink pps / stock sink pps >= 0.99
}
# Which targets apply to which kind of scenario: the unslowed receiver is
# about throughput only.
KIND_TARGETS = {"slowed": ("p50_ratio", "p99_ratio", "p50_vs_idle", "pps_ratio"),
                "unslowed": ("pps_ratio",)}
SID = re.compile(r"^(?:slow(\d+)|unslowed)-(\d+)B-txus(\d+|def)$")


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
                "id": i, "kind": "unslowed" if m.group(1) is None else "slowed",
                "slow": int(m.group(1) or 0), "payload": int(m.group(2)),
                "tx_usecs_set": m.group(3), "bql": [], "qdisc": []}
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
            elif kind == "boot":
                run["kernel"] = a.get("kernel")
            elif kind == "rtts":
                rtts.setdefault(label, []).extend(float(x) for x in a.get("ms", "").split(",") if x)
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
            elif kind in ("link", "udp", "ethtool") and sid(label) and "." in label:
                d = sc(label)
                part = label.split(".", 1)[1]
                d.setdefault(kind, {})[part] = {k: num(v) for k, v in a.items() if k != "label"}
    run["idle"]["rtt_ms"] = rtts.get("idle", [])
    run["idle"]["ping_tx"], run["idle"]["ping_rx"] = pings.get("idle", (0, 0))
    for i, d in run["scenarios"].items():
        lab = i if i in rtts or i in pings else "p%d" % d["payload"]  # old logs: pNN
        d["rtt_ms"] = rtts.get(lab, [])
        d["ping_tx"], d["ping_rx"] = pings.get(lab, (0, 0))
        if "tx_usecs" not in d and run.get("tx_usecs"):
            d["tx_usecs"] = run["tx_usecs"]
    return run


def delta(d, kind, key):
    try:
        return d[kind]["post"][key] - d[kind]["pre"][key]
    except (KeyError, TypeError):
        return None


def run_metrics(run, sid):
    """Per-run numbers of one scenario."""
    d = run["scenarios"].get(sid)
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
        # upstream 815980fe6dbb in this kernel's fq_codel (scripts/kernel-facts.sh)
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

    def met(x, t, ge=True):
        return None if x is None else (x >= t if ge else x <= t)

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
            pooled = [x for r in runs[v] if r["complete"] for x in r["scenarios"].get(sid, {}).get("rtt_ms", [])]
            per[v] = {"runs": len(ms), "median": medians, "per_run": ms,
                      "tx_usecs_read_back": sorted({str(r["scenarios"][sid].get("tx_usecs", "NA"))
                                                    for r in runs[v] if sid in r["scenarios"]}),
                      "pooled_rtt_ms": {"p50": pct(pooled, 50), "p99": pct(pooled, 99)}}
        s_, k_ = per["stock"]["median"], per["kit"]["median"]
        sc = {"id": sid, "kind": proto["kind"], "slow": proto["slow"], "payload": proto["payload"],
              "tx_usecs": proto["tx_usecs_set"], "secs": proto.get("secs") or params.get("secs"),
              "stock": per["stock"], "kit": per["kit"],
              "p50_ratio": ratio(s_.get("rtt_p50_ms"), k_.get("rtt_p50_ms")),
              "p99_ratio": ratio(s_.get("rtt_p99_ms"), k_.get("rtt_p99_ms")),
              "pps_ratio": ratio(k_.get("sink_pps"), s_.get("sink_pps")),
              "kit_p50_vs_idle": ratio(k_.get("rtt_p50_ms"), k_.get("idle_p50_ms")),
              "kit_bql_limit_end": k_.get("bql_limit_end"),
              "kit_bql_limit_end_per_run": [m["bql_limit_end"] for m in per["kit"]["per_run"]]}
        kit_pps = [m["sink_pps"] for m in per["kit"]["per_run"]]
        stock_pps = [m["sink_pps"] for m in per["stock"]["per_run"]]
        sc["kit_sink_pps_below_stock_in_every_run"] = bool(kit_pps and stock_pps and max(kit_pps) < min(stock_pps))
        allt = {
            "p50_ratio": met(sc["p50_ratio"], TARGETS["p50_ratio"]),
            "p99_ratio": met(sc["p99_ratio"], TARGETS["p99_ratio"]),
            "p50_vs_idle": met(sc["kit_p50_vs_idle"], TARGETS["p50_vs_idle"], ge=False),
            "pps_ratio": met(sc["pps_ratio"], TARGETS["pps_ratio"]),
        }
        sc["targets_met"] = {t: allt[t] for t in KIND_TARGETS[sc["kind"]]}
        result["scenarios"][sid] = sc
        pay, tx = str(sc["payload"]), sc["tx_usecs"]
        if sc["kind"] == "slowed":
            result["dql_limit_end_by_tx_usecs"].setdefault(pay, {})[tx] = sc["kit_bql_limit_end"]
        else:
            result["unslowed_pps_ratio_by_tx_usecs"].setdefault(pay, {})[tx] = sc["pps_ratio"]
            result["unslowed_dql_limit_end_by_tx_usecs"].setdefault(pay, {})[tx] = sc["kit_bql_limit_end"]
    # Noise floor: the stock boot runs the same flood once per kit setting;
    # how far apart are those identical floods within one boot?
    rep = {}
    for kind in ("unslowed", "slowed"):
        for pay in sorted({sc["payload"] for sc in result["scenarios"].values() if sc["kind"] == kind}):
            same = [i for i, sc in result["scenarios"].items() if sc["kind"] == kind and sc["payload"] == pay]
            if len(same) < 2:
                continue
            pps, p50 = [], []
            for run in runs["stock"]:
                ms = [run_metrics(run, i) for i in same] if run["complete"] else []
                ms = [m for m in ms if m]
                if len(ms) < 2:
                    continue
                xs = [m["sink_pps"] for m in ms if m["sink_pps"]]
                if len(xs) > 1:
                    pps.append(100.0 * (max(xs) - min(xs)) / statistics.mean(xs))
                ys = [m["rtt_p50_ms"] for m in ms if m["rtt_p50_ms"]]
                if len(ys) > 1:
                    p50.append(max(ys) / min(ys))
            rep[f"{kind}-{pay}B"] = {"floods_per_boot": len(same),
                                     "sink_pps_spread_pct_median": med(pps), "sink_pps_spread_pct_per_run": pps,
                                     "rtt_p50_max_over_min_median": med(p50), "rtt_p50_max_over_min_per_run": p50}
    result["stock_identical_floods_spread"] = rep
    # The keys of the old layout: "<payload>" = slowed at the main tx-usecs.
    legacy = {}
    for sid, sc in result["scenarios"].items():
        if sc["kind"] == "slowed" and sc["tx_usecs"] == main:
            legacy[str(sc["payload"])] = dict(sc, alias_of=sid)
    result["scenarios"] = dict(sorted(legacy.items(), key=lambda x: int(x[0])), **result["scenarios"])
    with open(os.path.join(out, f"bench-{kver}.json"), "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    return result


def sid_key(sid):
    """Unslowed first, then by payload and tx-usecs."""
    m = SID.match(sid)
    tx = m.group(3)
    return (m.group(1) is not None, int(m.group(1) or 0), int(m.group(2)), -1 if tx == "def" else int(tx))


def cases(r, kind=None):
    """The scenarios of a result by id (not the legacy per-payload aliases)."""
    return [(i, sc) for i, sc in r["scenarios"].items() if "alias_of" not in sc and (kind is None or sc["kind"] == kind)]


def txs(sc):
    return "module default" if sc["tx_usecs"] == "def" else f"{sc['tx_usecs']} µs"


def yn(b):
    return "–" if b is None else ("met" if b else "**not met**")


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
    L.append(f"Scenario: veth pair between two netns, fq_codel on the sender, TSO off on the sender, GRO on at the "
             f"receiver; one VM boot per run runs a plan of {p.get('sockets')}-socket UDP floods, each on a fresh pair "
             f"while `ping -i {p.get('ping_interval')}` samples the RTT: first with an unslowed receiver "
             f"(no ingress filters; {bp.get('unslowed_secs', '?')} s per flood), then the idle RTT ({p.get('idle')} pings) "
             f"and the floods against a receiver slowed by {p.get('slow')} non-matching ingress u32 filters "
             f"({bp.get('secs', p.get('secs'))} s per flood). The kit's boot sets `ethtool -C vethA tx-usecs N` "
             f"before each flood (BQL completion coalescing; 0 = per packet; the module's default is 100); the stock "
             f"boot runs the same floods without that step and each kit flood is compared with the stock flood at "
             f"the same place of the plan. The order of the tx-usecs settings is reversed on even runs.")
    loads = [x for r in results for v in VARIANTS for run in r["raw"][v]
             for x in (run.get("host", {}).get("loadavg_before"), run.get("host", {}).get("loadavg_after")) if x is not None]
    if loads:
        L.append(f"Host load average (1 min) around the runs: {min(loads):.1f}–{max(loads):.1f} on "
                 f"{results[0]['raw']['stock'][0].get('host', {}).get('cpus', '?')} CPUs.")
    L.append("QEMU TCG (2 vCPUs, emulated, on a shared 2-core host): absolute numbers are not hardware numbers; "
             "compare the stock/kit ratios of the same run. Every value is the median over runs "
             "(one run = one VM boot); RTT percentiles are over every ping reply of a flood.")
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
    L.append("## Slowed receiver: RTT and the DQL limit per tx-usecs")
    L.append("")
    L.append("| kernel | payload | kit tx-usecs | stock p50 / p99 ms | kit p50 / p99 ms | p50 stock/kit (target ≥ 20×) | p99 stock/kit (≥ 10×) | kit loaded p50 / idle (≤ 3×) | sink pps kit/stock (≥ 0.99) | kit DQL limit at flood end (median; per run) |")
    L.append("|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        for i, sc in cases(r, "slowed"):
            t = sc["targets_met"]
            s_, k_ = sc["stock"]["median"], sc["kit"]["median"]
            lim = sc["kit_bql_limit_end_per_run"]
            L.append(f"| {r['kernel']} | {sc['payload']} B | {txs(sc)} | {fmt(s_.get('rtt_p50_ms'))} / {fmt(s_.get('rtt_p99_ms'))} | "
                     f"{fmt(k_.get('rtt_p50_ms'))} / {fmt(k_.get('rtt_p99_ms'))} | "
                     f"{fmt(sc['p50_ratio'], 1)}× {yn(t['p50_ratio'])} | {fmt(sc['p99_ratio'], 1)}× {yn(t['p99_ratio'])} | "
                     f"{fmt(sc['kit_p50_vs_idle'], 2)}× {yn(t['p50_vs_idle'])} | {fmt(sc['pps_ratio'], 3)} {yn(t['pps_ratio'])} | "
                     f"{flim(sc['kit_bql_limit_end'])} ({', '.join(flim(x) for x in lim) or '–'}) |")
    un = [(r, i, sc) for r in results for i, sc in cases(r, "unslowed")]
    if un:
        L.append("")
        L.append("## Unslowed receiver: sink pps")
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
        L.append("## Noise floor: identical stock floods in one boot")
        L.append("")
        L.append("The stock boot runs the same flood once per kit tx-usecs setting, so these floods differ only by "
                 "their place in the plan and by the host. Spread per boot, median over boots (per boot in brackets):")
        L.append("")
        L.append("| kernel | floods | identical floods per boot | stock sink pps (max − min) / mean | stock loaded p50 max / min |")
        L.append("|---|---|---|---|---|")
        for kver, k, v in spread:
            L.append(f"| {kver} | {k} | {v['floods_per_boot']} | {fmt(v['sink_pps_spread_pct_median'], 1)} % "
                     f"({', '.join(fmt(x, 1) + ' %' for x in v['sink_pps_spread_pct_per_run'])}) | "
                     f"{fmt(v['rtt_p50_max_over_min_median'], 1)}× ({', '.join(fmt(x, 1) + '×' for x in v['rtt_p50_max_over_min_per_run'])}) |")
    L.append("")
    L.append("## Medians")
    L.append("")
    L.append("| kernel | scenario | module | idle p50 ms | loaded p50 / p90 / p99 / max ms | ping loss | sender pps | sink pps | veth drops | rcvbuf err | qdisc backlog max / drops / requeues | BQL limit max / at end / inflight max / mean |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        for i, sc in cases(r):
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
    L.append("## Sink pps per run")
    L.append("")
    L.append("| kernel | scenario | stock runs | kit runs | kit below stock in every run |")
    L.append("|---|---|---|---|---|")
    for r in results:
        for i, sc in cases(r):
            L.append(f"| {r['kernel']} | {i} | {', '.join(kpps(m['sink_pps']) for m in sc['stock']['per_run'])} | "
                     f"{', '.join(kpps(m['sink_pps']) for m in sc['kit']['per_run'])} | "
                     f"{'yes' if sc['kit_sink_pps_below_stock_in_every_run'] else 'no'} |")
    L.append("")
    L.append("Definitions: scenario ids slow<N>-<P>B-txus<T> (receiver slowed by N ingress filters, payload P, the kit at "
             "tx-usecs T) and unslowed-<P>B-txus<T>; in `bench-<kernel>.json` the key \"<P>\" is also kept for the "
             "slowed scenario at the main tx-usecs. Sink pps = datagrams read by the sink / the sender's seconds; veth drops = vethA "
             "tx_dropped + vethB rx_dropped (`ip -s link`) over the flood; rcvbuf err = UDP RcvbufErrors in "
             "the receiver's netns (the sink socket overflowed, not veth); qdisc backlog = largest of three "
             "samples under load; BQL values from `bqlwatch` reading every 2 ms in three windows up to just before "
             "the flood ends (inflight mean over all reads; limit at end = the last window's last read); "
             "lost pings are not in the RTT percentiles (see ping loss). Raw samples: `results/bench-<kernel>.json`.")
    L.append("")
    return "\n".join(L)


def plot(out, results):
    gp = shutil.which("gnuplot")
    if not gp:
        print("bench-report: gnuplot not found; no plot (apt-get install gnuplot-nox)", file=sys.stderr)
        return False
    tmp = tempfile.mkdtemp(prefix="bench-plot.")
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

    for r in results:
        slowed = cases(r, "slowed")
        for pay in sorted({sc["payload"] for _, sc in slowed}):
            mine = [(i, sc) for i, sc in slowed if sc["payload"] == pay]
            done = {v: [run for run in r["raw"][v] if run["complete"]] for v in VARIANTS}
            curves = []
            # Stock: every slowed flood of this payload pooled (the same flood, no ethtool step).
            fn = cdf(f"{r['kernel']}-{pay}-stock", [x for run in done["stock"] for i, _ in mine
                                                    for x in run["scenarios"].get(i, {}).get("rtt_ms", [])])
            if fn:
                curves.append(f"'{fn}' using 1:2 with steps lw 2.5 lc rgb '#d62728' title 'stock, loaded'")
            # The same colour for a tx-usecs setting in every panel; the main one blue.
            alltx = sorted({sc["tx_usecs"] for _, sc in slowed}, key=lambda t: (t != r.get("main_tx_usecs"), t != "def", int(t) if t.isdigit() else 0))
            for i, sc in mine:
                n = alltx.index(sc["tx_usecs"])
                fn = cdf(f"{r['kernel']}-{i}-kit", [x for run in done["kit"] for x in run["scenarios"].get(i, {}).get("rtt_ms", [])])
                if fn:
                    lim = sc["kit_bql_limit_end"]
                    t = "default" if sc["tx_usecs"] == "def" else sc["tx_usecs"] + " us"
                    curves.append(f"'{fn}' using 1:2 with steps lw 2 lc rgb '{kit_colors[n % len(kit_colors)]}' "
                                  f"title 'kit, tx-usecs {t} (DQL limit {flim(lim)})'")
            for v, col in (("stock", "#ff9896"), ("kit", "#aec7e8")):
                fn = cdf(f"{r['kernel']}-{pay}-{v}-idle", [x for run in done[v] for x in run["idle"]["rtt_ms"]])
                if fn:
                    curves.append(f"'{fn}' using 1:2 with steps lw 1.5 dt 2 lc rgb '{col}' title '{v}, idle'")
            main = next((sc for _, sc in mine if sc["tx_usecs"] == r.get("main_tx_usecs")), mine[0][1])
            un = [sc for _, sc in cases(r, "unslowed") if sc["payload"] == pay]
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
         f"set multiplot layout {rows},{cols} title 'veth + fq\\_codel, receiver slowed, UDP flood: ping RTT CDF, stock vs kit per tx-usecs (QEMU TCG, shared 2-core host; runs pooled)'",
         "set logscale x", "set xrange [0.05:1000]", "set yrange [0:1]", "set grid xtics ytics mxtics",
         "set xlabel 'RTT (ms, log scale)'", "set ylabel 'fraction of replies'", "set key bottom right font ',9'"]
    for _, ttl, curves in panels:
        # Double quotes: "\\n" is a line break, "\\\\_" a literal _ in enhanced text.
        esc = ttl.replace("_", "\\\\_").replace("|", "\\n")
        g.append(f'set title "{esc}"')
        g.append("plot " + ", ".join(curves) if curves else "plot NaN notitle")
    g.append("unset multiplot")
    script = os.path.join(tmp, "bench.gp")
    with open(script, "w") as f:
        f.write("\n".join(g) + "\n")
    rc = subprocess.call([gp, script])
    shutil.rmtree(tmp, ignore_errors=True)
    return rc == 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--runs", type=int, default=0)
    ap.add_argument("--wall", type=int, default=-1)
    ap.add_argument("--command", default="make bench")
    ap.add_argument("--params", default="")
    ap.add_argument("kernels", nargs="+")
    a = ap.parse_args()
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
