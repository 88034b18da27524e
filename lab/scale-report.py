#!/usr/bin/env python3
"""scale-report.py: OUT/bench-scale/scaling.{json,md,png} from the
per-point reports lab/bench-scale.sh left beside them (make bench-scale).

veth: OUT/bench-scale/veth/q<Q>-f<F>/bench-mq-<kernel>.json (lab/bench-report.py):
  cost = kit/stock instructions per packet of the 64-byte cost flood
  (unslowed receiver, F sockets over Q queues), latency = the 64-byte
  slowed-receiver flood's tsprobe one-way delay p50/p99, stock/kit.
mana: OUT/bench-scale/mana/f<F>/bench-mana-<kernel>.json
  (lab/bench-mana-report.py), case q<Q>-tcp: cost = kit/stock guest
  instructions per received frame over the probed window under F TCP
  streams, latency = the TCP request/response probe's p50/p99, stock/kit.
Every ratio has its noise floor beside it: the spread of the stock runs,
(max - min) / median, of the metric behind it (null with one run).
Only the standard library is used (gnuplot, when installed, draws the plot).
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
import plotlib  # noqa: E402  (lab/plotlib.py)
from benchstats import spread  # noqa: E402  (lab/benchstats.py)


def load(path):
    with open(path) as f:
        return json.load(f)


def veth_points(base, kernel):
    pts = []
    for d in glob.glob(os.path.join(base, "veth", "q*-f*")):
        m = re.search(r"/q(\d+)-f(\d+)$", d)
        js = [p for p in glob.glob(os.path.join(d, f"bench*-{kernel}.json")) if "bench-mana" not in p]
        if not m or not js:
            continue
        r = load(js[0])
        sc = r.get("scenarios", {})
        head = (r.get("headline") or {}).get("scenarios", {})
        cost, slow = sc.get(head.get("cost_ratio") or ""), sc.get(head.get("p50_ratio") or "")
        nf = r.get("noise_floor") or {}
        p = {"driver": "veth", "queues": int(m.group(1)), "flows": int(m.group(2)),
             "cost_ratio": r.get("cost_ratio"), "cost_noise": nf.get("cost_ratio"),
             "p50_ratio": r.get("p50_ratio"), "p50_noise": nf.get("p50_ratio"),
             "p99_ratio": r.get("p99_ratio"), "p99_noise": nf.get("p99_ratio"),
             "runs": r.get("runs_complete")}
        if cost:
            for v in ("stock", "kit"):
                p[f"{v}_insn_per_pkt"] = cost[v]["median"].get("insn_per_pkt")
            if p["cost_noise"] is None:
                p["cost_noise"] = spread([m.get("insn_per_pkt") for m in cost["stock"]["per_run"]])
            p["cost_ratio_low"] = low_ratio([m.get("insn_per_pkt") for m in cost["kit"]["per_run"]],
                                            [m.get("insn_per_pkt") for m in cost["stock"]["per_run"]])
        if slow:
            probe = slow.get("latency_probe")
            key = "owd" if probe == "tsprobe" else "rtt"
            for v in ("stock", "kit"):
                p[f"{v}_p50_ms"] = slow[v]["median"].get(f"{key}_p50_ms")
                p[f"{v}_p99_ms"] = slow[v]["median"].get(f"{key}_p99_ms")
            p["kit_bql_limit_end"] = slow.get("kit_bql_limit_end")
            # The stock runs' spread (bench-report's noise floor needs the
            # same flood at two places of the plan; a point has one).
            for q in ("p50", "p99"):
                if p[f"{q}_noise"] is None:
                    p[f"{q}_noise"] = spread([m.get(f"{key}_{q}_ms") for m in slow["stock"]["per_run"]])
        pts.append(p)
    return pts


def mana_points(base, kernel):
    pts = []
    for d in glob.glob(os.path.join(base, "mana", "f*")):
        m = re.search(r"/f(\d+)$", d)
        j = os.path.join(d, f"bench-mana-{kernel}.json")
        if not m or not os.path.exists(j):
            continue
        r = load(j)
        for lb, c in r.get("cases", {}).items():
            q = re.match(r"q(\d+)-tcp$", lb)
            if not q:
                continue
            nf = c.get("noise_floor") or {}
            p = {"driver": "mana", "queues": int(q.group(1)), "flows": int(m.group(1)),
                 "cost_ratio": c.get("cost_ratio"), "cost_noise": nf.get("cost_ratio"),
                 "p50_ratio": c.get("p50_ratio"), "p50_noise": nf.get("p50_ratio"),
                 "p99_ratio": c.get("p99_ratio"), "p99_noise": nf.get("p99_ratio"),
                 "pps_ratio": c.get("pps_ratio"), "runs": r.get("runs_complete")}
            for v in ("stock", "kit"):
                med = c.get(v, {}).get("median", {})
                p[f"{v}_insn_per_pkt"] = med.get("insn_per_frame")
                p[f"{v}_p50_ms"] = med["rr_p50_us"] / 1000 if med.get("rr_p50_us") else None
                p[f"{v}_p99_ms"] = med["rr_p99_us"] / 1000 if med.get("rr_p99_us") else None
            p["kit_bql_max_limit"] = c.get("kit", {}).get("median", {}).get("bql_max_limit")
            p["cost_ratio_low"] = low_ratio(c.get("kit", {}).get("values", {}).get("insn_per_frame", []),
                                            c.get("stock", {}).get("values", {}).get("insn_per_frame", []))
            pts.append(p)
    return pts


def low_ratio(kit, stock):
    """kit/stock of each variant's lowest run: what a background task of
    the guest adds to a run (instructions only add) is left out."""
    kit, stock = [x for x in kit if x], [x for x in stock if x]
    return min(kit) / min(stock) if kit and stock else None


def fmt(x, nd=2):
    return "NA" if x is None else f"{x:.{nd}f}"


def pct(x):
    return "NA" if x is None else f"{100 * x:.1f} %"


def markdown(r):
    L = ["# How the kit's cost and latency gain grow with queues and flows",
         "",
         f"Generated {r['generated']} by `{r['command']}` on {r['kernel']}; per point the medians of each "
         "variant's boots (stock = the kernel's module, kit = the kit's), under `-icount` (guest time = "
         "instructions: the host's load does not reach the numbers).  noise = the spread of the stock runs, "
         "(max - min) / median, of the metric behind the ratio.  lowest runs = kit/stock of each variant's "
         "run with the fewest instructions: a guest task that ran beside one run only adds to it (veth's "
         "outliers were all on the receiver's vCPU).  How each point is made: `lab/bench-scale.sh`; "
         "what it shows: docs/design.md, \"How the cost grows\".",
         ""]
    for drv, what, unit in (("veth", "64-byte UDP flood from F sockets over Q queues (mq, fq_codel per queue); "
                             "cost: instructions per packet, unslowed receiver; latency: tsprobe one-way delay beside "
                             "the same flood into a slowed receiver", "insn/pkt"),
                            ("mana", "F TCP streams over Q queues (one vCPU per queue) on the 20 Mbit/s emulated wire; "
                             "cost: all guest instructions of the probed window per frame received; latency: TCP "
                             "request/response probe", "insn/frame")):
        pts = sorted((p for p in r["points"] if p["driver"] == drv), key=lambda p: (p["queues"], p["flows"]))
        if not pts:
            continue
        L += [f"## {drv}", "", what + ".", "",
              f"| queues | flows | {unit} stock / kit | cost kit/stock (noise) | lowest runs | p50 ms stock / kit | "
              "p50 stock/kit (noise) | p99 ms stock / kit | p99 stock/kit (noise) |",
              "|---:|---:|---|---|---|---|---|---|---|"]
        for p in pts:
            L.append(f"| {p['queues']} | {p['flows']} | {fmt(p.get('stock_insn_per_pkt'), 0)} / "
                     f"{fmt(p.get('kit_insn_per_pkt'), 0)} | {fmt(p['cost_ratio'], 4)} ({pct(p['cost_noise'])}) | "
                     f"{fmt(p.get('cost_ratio_low'), 4)} | "
                     f"{fmt(p.get('stock_p50_ms'))} / {fmt(p.get('kit_p50_ms'))} | {fmt(p['p50_ratio'], 1)}x "
                     f"({pct(p['p50_noise'])}) | {fmt(p.get('stock_p99_ms'))} / {fmt(p.get('kit_p99_ms'))} | "
                     f"{fmt(p['p99_ratio'], 1)}x ({pct(p['p99_noise'])}) |")
        L.append("")
    return "\n".join(L)


def plot(out, r):
    gp, tmp = plotlib.start("scale-report")
    if not gp:
        return False
    panels = []
    for drv in ("veth", "mana"):
        pts = [p for p in r["points"] if p["driver"] == drv]
        for q in sorted({p["queues"] for p in pts}):
            dat = os.path.join(tmp, f"{drv}-q{q}.dat")
            with open(dat, "w") as f:
                for p in sorted((p for p in pts if p["queues"] == q), key=lambda p: p["flows"]):
                    low = p.get("cost_ratio_low")
                    f.write(f"{p['flows']} {low if low is not None else 'NaN'} "
                            f"{p['p50_ratio'] if p['p50_ratio'] is not None else 'NaN'}\n")
            panels.append((drv, q, dat))
    if not panels:
        shutil.rmtree(tmp, ignore_errors=True)
        return False
    g = ["set terminal pngcairo size 1200,800 font 'DejaVu Sans,10'",
         f"set output '{os.path.join(out, 'scaling.png')}'",
         "set multiplot layout 2,2 title 'kit vs stock over queues and flows (" + r["kernel"] + ", -icount)'",
         "set logscale x 2", "set xlabel 'flows'", "set grid", "set key top left"]
    for col, ylab, title in ((2, "instructions per packet, kit / stock (lowest runs)", "cost"),
                             (3, "p50 under load, stock / kit", "latency gain")):
        for drv in ("veth", "mana"):
            mine = [(q, d) for dv, q, d in panels if dv == drv]
            if not mine:
                g += ["set multiplot next"]
                continue
            g += [f"set title '{drv}: {title}'", f"set ylabel '{ylab}'",
                  "set logscale y" if col == 3 else "unset logscale y",
                  "plot " + ", ".join(f"'{d}' using 1:{col} with linespoints title '{q} queue{'s' if q > 1 else ''}'"
                                      for q, d in mine)]
    g.append("unset multiplot")
    return plotlib.finish("scale-report", gp, tmp, g)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--command", default="make bench-scale")
    a = ap.parse_args()
    base = os.path.join(a.out, "bench-scale")
    pts = veth_points(base, a.kernel) + mana_points(base, a.kernel)
    if not pts:
        sys.exit(f"scale-report: no point reports under {base} for {a.kernel}: run make bench-scale first")
    r = {"kernel": a.kernel, "generated": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
         "command": a.command, "points": sorted(pts, key=lambda p: (p["driver"], p["queues"], p["flows"]))}
    with open(os.path.join(base, "scaling.json"), "w") as f:
        json.dump(r, f, indent=1)
        f.write("\n")
    with open(os.path.join(base, "scaling.md"), "w") as f:
        f.write(markdown(r) + "\n")
    plot(base, r)
    print(f"scale-report: {len(pts)} points -> {os.path.join(base, 'scaling.md')}")


if __name__ == "__main__":
    main()
