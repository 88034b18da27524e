#!/usr/bin/env python3
"""Where a probe waits: the tracefs windows a bench guest printed.

usage: trace-report.py CONSOLE_LOG [--len N] [--events]

A bench boot with BENCH_TRACE_MS=N prints, for every timed flood, N ms of
kernel events (tests/vm/guest/bench.sh trace_window) between
"BQLKIT trace begin label=L" and "BQLKIT trace end", gzip'ed and base64'ed.
For every probe datagram (tsprobe's: skb->len N at vethA's net_dev_queue,
46 by default: 4 bytes of sequence) this prints, per flood, the medians
and quartiles of:

  qdisc_us  enqueue (net_dev_queue) to vethA's net_dev_start_xmit
  ring_us   start_xmit to vethB's netif_receive_skb
  ahead     vethA transmissions between the probe's enqueue and its own
  wakes     __netif_schedule calls meanwhile (kprobe bqlkit/wake)
  deq_null  qdisc_dequeue events that returned no packet meanwhile
  polls     vethB napi_poll events meanwhile, and their summed work

--events also prints the events between one median probe's enqueue and
its receive, so that the sequence can be read.
"""

import base64
import gzip
import os
import re
import statistics
import sys

EV = re.compile(r'^\s*(?P<task>.+?)-(?P<pid>\d+)\s+\[(?P<cpu>\d+)\]\s+\S+\s+'
                r'(?P<ts>\d+\.\d+):\s+(?P<name>[\w/]+):\s?(?P<rest>.*)$')


def windows(path):
    """(label, [trace text lines]) per window in the console log."""
    out, label, b64 = [], None, None
    with open(path, errors='replace') as f:
        for line in f:
            line = line.rstrip('\r\n')
            m = re.search(r'BQLKIT trace begin label=(\S+)', line)
            if m:
                label, b64 = m.group(1), []
                continue
            if label is not None and 'BQLKIT trace end' in line:
                text = gzip.decompress(base64.b64decode(''.join(b64)))
                out.append((label, text.decode(errors='replace').splitlines()))
                label = None
                continue
            if label is not None and re.fullmatch(r'[A-Za-z0-9+/=]+', line):
                b64.append(line)
    return out


def field(rest, key):
    m = re.search(r'(?:^|\s)' + key + r'=(\S+)', rest)
    return m.group(1) if m else None


def parse(lines):
    evs = []
    for ln in lines:
        m = EV.match(ln)
        if m:
            evs.append((float(m.group('ts')) * 1e6, int(m.group('cpu')),
                        m.group('name'), m.group('rest'), m.group('task')))
    return evs


def quart(v):
    if not v:
        return 'NA'
    v = sorted(v)
    q = statistics.quantiles(v, n=4, method='inclusive') if len(v) > 1 else [v[0]] * 3
    q = [x + 0.0 for x in q]
    return f'{q[1]:.0f} [{q[0]:.0f}..{q[2]:.0f}]'


def report(label, evs, plen, show):
    # skb addresses are reused: match each enqueue to the next events.
    pend, sent, probes = {}, {}, []
    for i, (_ts, _cpu, name, rest, _t) in enumerate(evs):
        skb, dev = field(rest, 'skbaddr'), field(rest, 'dev')
        if name == 'net_dev_queue' and dev == 'vethA':
            pend.pop(skb, None)
            if field(rest, 'len') == str(plen):
                pend[skb] = [i, None, None]
        elif name == 'net_dev_start_xmit' and dev == 'vethA' and skb in pend:
            p = pend.pop(skb)
            p[1] = i
            sent[skb] = p
            probes.append(p)
        elif name == 'netif_receive_skb' and dev == 'vethB' and skb in sent:
            sent.pop(skb)[2] = i
    rows = []
    for i, j, k in probes:
        skb = field(evs[i][3], 'skbaddr')
        seg = evs[i + 1:j]
        polls = [re.search(r'work (\d+)', e[3]) for e in seg
                 if e[2] == 'napi_poll' and 'vethB' in e[3]]
        work = sum(int(m.group(1)) for m in polls if m)
        rows.append({
            'skb': skb, 'i': i, 'j': j, 'k': k,
            'qdisc_us': evs[j][0] - evs[i][0],
            'ring_us': evs[k][0] - evs[j][0] if k is not None else None,
            'ahead': sum(1 for e in seg if e[2] == 'net_dev_start_xmit'
                         and field(e[3], 'dev') == 'vethA'),
            'wakes': sum(1 for e in seg if e[2] == 'wake'),
            'deq_null': sum(1 for e in seg if e[2] == 'qdisc_dequeue'
                            and field(e[3], 'packets') == '0'),
            'polls': len(polls), 'work': work,
        })
    span = (evs[-1][0] - evs[0][0]) / 1000 if evs else 0
    print(f'{label}: {len(evs)} events in {span:.1f} ms, {len(rows)} probes '
          f'(len {plen}) enqueued and sent')
    for key in ('qdisc_us', 'ring_us', 'ahead', 'wakes', 'deq_null', 'polls', 'work'):
        print(f'  {key:9s} median [q1..q3] {quart([r[key] for r in rows if r[key] is not None])}')
    if show and rows:
        rows.sort(key=lambda r: r['qdisc_us'])
        r = rows[len(rows) // 2]
        end = r['k'] if r['k'] is not None else r['j']
        t0 = evs[r['i']][0]
        print(f'  events of the median probe (skb {r["skb"]}):')
        for ts, cpu, name, rest, task in evs[r['i']:end + 1]:
            print(f'  {ts - t0:9.1f} cpu{cpu} {task[:16]:16s} {name} {rest[:110]}')


def main():
    args = sys.argv[1:]
    if not args or args[0] in ('-h', '--help'):
        sys.exit(__doc__)
    plen, show, path = 46, False, None
    while args:
        a = args.pop(0)
        if a == '--len':
            plen = int(args.pop(0))
        elif a == '--events':
            show = True
        else:
            path = a
    if not path or not os.path.isfile(path):
        sys.exit(f'bqlkit: error: no console log {path or "given"}: '
                 'trace-report.py CONSOLE_LOG (a bench log, e.g. results/bench-K-kit-1.log)')
    ws = windows(path)
    if not ws:
        sys.exit(f'bqlkit: error: no "BQLKIT trace" window in {path}: '
                 'bench with BENCH_TRACE_MS=N (make bench BENCH_TRACE_MS=200)')
    for label, lines in ws:
        report(label, parse(lines), plen, show)


if __name__ == '__main__':
    main()
