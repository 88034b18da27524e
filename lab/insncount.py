#!/usr/bin/env python3
"""insncount.py: read the insncount TCG plugin's output (lab/qemu/plugins/insncount.c)
together with the guest's console log, and give the instructions the guest
executed between two of its markers.

    insncount.py intervals CONSOLE_LOG PLUGIN_OUT
        one line per interval: LABEL, instructions per vCPU (kernel/user) and
        the total.  An interval is a pair of markers labelled L.begin and
        L.end (tests/vm/guest/lib.sh: vm_mark L.begin; ...; vm_mark L.end).
    insncount.py profile PROF_FILE SEQ SYMBOLS [MODULE_SYMS] [--top N]
        the profile written at marker SEQ, summed per function.  SYMBOLS:
        the console log of a bench boot with BENCH_PROFILE=1 (the guest
        prints its kallsyms there: kernel and modules), or a System.map for
        the kernel (boot with nokaslr; Debian's is a stub) and MODULE_SYMS
        for modules (lines "ADDR t NAME [module]" as /proc/kallsyms prints
        them).
    insncount.py annotate PROF_FILE SEQ CONSOLE_LOG OBJECT FUNCTION [--per N]
        FUNCTION's disassembly (objdump -d of OBJECT: the .ko or vmlinux the
        guest ran, e.g. the kit's build/KVER/veth.ko or the stock module
        from the kernel package) with the instructions the profile at
        marker SEQ counted, divided by N (the flood's packet count, for
        instructions per packet).  The plugin counts per translated block:
        a block's count stands at its first instruction.  CONSOLE_LOG gives
        FUNCTION's address (kallsyms of a BENCH_PROFILE=1 boot).

The interface, for other scenarios (the mana bench too):
  guest: lib.sh's vm_mark LABEL [mark|begin|end] prints
         "BQLKIT mark label=LABEL seq=N cmd=..." and executes the marker;
  host:  run-vm.sh --qemu DIR --plugin insncount,out=FILE[,prof=FILE];
  here:  intervals(console_lines, plugin_lines) -> {L: Interval}.
Markers pair with the plugin's lines by seq (both count from 1); a label
whose seq the plugin did not report (no plugin, or a lost line) is left out.
"""
import base64
import bisect
import gzip
import re
import subprocess
import sys

MARK = re.compile(r"BQLKIT mark label=(\S+) seq=(\d+)")
B64 = re.compile(r"^[A-Za-z0-9+/=]+$")
PLUG = re.compile(r"^insncount mark seq=(\d+) cmd=(\d+) vcpu=(\d+)(?: switches=(\d+))?((?: [ku]\d+=\d+)+)")


class Interval:
    """Instructions between L.begin and L.end, per vCPU."""

    def __init__(self, begin, end):
        n = max(len(begin["k"]), len(end["k"]))
        self.kernel = [end["k"].get(i, 0) - begin["k"].get(i, 0) for i in range(n)]
        self.user = [end["u"].get(i, 0) - begin["u"].get(i, 0) for i in range(n)]
        # vCPU turns (one TCG thread: -icount); None from older plugins
        self.switches = (end["switches"] - begin["switches"]
                         if begin.get("switches") is not None and end.get("switches") is not None else None)

    @property
    def total(self):
        return sum(self.kernel) + sum(self.user)

    def as_dict(self):
        return {"kernel": self.kernel, "user": self.user, "total": self.total,
                "kernel_total": sum(self.kernel), "user_total": sum(self.user),
                "vcpu_switches": self.switches}


def plugin_marks(lines):
    """seq -> {"cmd", "vcpu", "k": {vcpu: n}, "u": {vcpu: n}} from the plugin's output."""
    out = {}
    for line in lines:
        m = PLUG.match(line.strip())
        if not m:
            continue
        d = {"cmd": int(m.group(2)), "vcpu": int(m.group(3)), "k": {}, "u": {},
             "switches": int(m.group(4)) if m.group(4) else None}
        for f in m.group(5).split():
            key, val = f.split("=")
            d[key[0]][int(key[1:])] = int(val)
        out[int(m.group(1))] = d
    return out


def guest_marks(lines):
    """label -> seq from the guest's console lines (the last one wins)."""
    out = {}
    for line in lines:
        m = MARK.search(line)
        if m:
            out[m.group(1)] = int(m.group(2))
    return out


def intervals(console_lines, plugin_lines):
    """{L: Interval} for every L.begin/L.end pair the plugin reported."""
    plug = plugin_marks(plugin_lines)
    marks = guest_marks(console_lines)
    out = {}
    for label, seq in marks.items():
        if not label.endswith(".begin"):
            continue
        base = label[:-len(".begin")]
        end = marks.get(base + ".end")
        if end is None or seq not in plug or end not in plug:
            continue
        out[base] = Interval(plug[seq], plug[end])
    return out


def console_kallsyms(lines):
    """The kallsyms lines a bench guest printed (gzip + base64 between
    "BQLKIT kallsyms begin" and "BQLKIT kallsyms end"), or None."""
    out, on = [], None
    for line in lines:
        if "BQLKIT kallsyms begin" in line:
            on = []
        elif "BQLKIT kallsyms end" in line and on is not None:
            out = gzip.decompress(base64.b64decode("".join(on))).decode(errors="replace")
            return out.splitlines()
        elif on is not None and B64.match(line.strip()):
            on.append(line.strip())  # (a kernel message between is left out)
    return None


def read_symbols(system_map, module_syms=None):
    """Sorted (addr, name) of text symbols."""
    syms = []
    for path in (system_map, module_syms):
        if not path:
            continue
        with open(path, errors="replace") as f:
            lines = f.readlines()
            ks = console_kallsyms(lines)
            if ks is None and any(l.startswith("BQLKIT ") for l in lines[:200]):
                sys.exit(f"bqlkit: error: insncount: {path} is a console log without kallsyms "
                         "(make bench BENCH_PROFILE=1 prints them)")
            for line in (ks if ks is not None else lines):
                w = line.split()
                if len(w) >= 3 and w[1] in "tTwW":
                    name = w[2] + (" " + w[3] if len(w) > 3 else "")
                    syms.append((int(w[0], 16), name))
    syms.sort()
    return syms


def profile_lines(prof_lines, seq):
    """(address, [total, cpu0, cpu1, ...]) per line of the profile written
    at marker seq."""
    on = False
    for line in prof_lines:
        if line.startswith("# profile"):
            on = f" seq={seq} " in line + " "
            continue
        if on:
            w = line.split()
            yield int(w[0], 16), [int(x) for x in w[1:]]


def profile(prof_lines, seq, syms):
    """{function: [total, cpu0, cpu1, ...]} of the profile written at marker seq."""
    addrs = [a for a, _ in syms]
    out = {}
    for addr, counts in profile_lines(prof_lines, seq):
        i = bisect.bisect_right(addrs, addr) - 1
        name = syms[i][1] if i >= 0 and addr >> 63 else ("[user]" if not addr >> 63 else "[unknown]")
        acc = out.setdefault(name, [0] * len(counts))
        for j, c in enumerate(counts):
            acc[j] += c
    return out


def annotate(prof_lines, seq, syms, obj, func, per=1.0):
    """Lines: FUNCTION's disassembly with the profile's counts / per."""
    starts = [i for i, (_, n) in enumerate(syms) if n.split()[0] == func]
    if len(starts) != 1:
        sys.exit(f"bqlkit: error: insncount: {len(starts) or 'no'} text symbols named {func} in the guest's kallsyms"
                 + (" (name the function as /proc/kallsyms does, e.g. veth_xdp_rcv.constprop.0)"
                    if not starts else ""))
    i = starts[0]
    lo, hi = syms[i][0], syms[i + 1][0] if i + 1 < len(syms) else syms[i][0] + 65536
    counts = {}
    for addr, n in profile_lines(prof_lines, seq):
        if lo <= addr < hi:
            counts[addr - lo] = counts.get(addr - lo, 0) + n[0]
    dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-r", obj],
                         capture_output=True, text=True, check=True).stdout
    m = re.search(r"^[0-9a-f]+ <%s>:\n(.*?)(?:\n\n|\Z)" % re.escape(func), dis, re.S | re.M)
    if not m:
        sys.exit(f"bqlkit: error: insncount: {obj} has no function {func}")
    out, base, total = [], None, 0
    for line in m.group(1).splitlines():
        ins = re.match(r"\s*([0-9a-f]+):\s*(.*)", line)
        if not ins:
            out.append(f"{'':>10}        {line.strip()}")
            continue
        off = int(ins.group(1), 16)
        base = off if base is None else base
        c = counts.pop(off - base, 0)
        total += c
        out.append(f"{c / per:>10.2f} {off - base:>6x} {ins.group(2)}")
    if counts:
        out.append(f"(counts at offsets not in {obj}'s {func}: {sorted(counts)[:8]}: another build?)")
    out.append(f"{total / per:>10.2f} total")
    return out


def main(argv):
    if len(argv) >= 7 and argv[1] == "annotate":
        per = 1.0
        if "--per" in argv:
            per = float(argv[argv.index("--per") + 1])
            argv = argv[:argv.index("--per")]
        with open(argv[2]) as f:
            lines = annotate(f.readlines(), int(argv[3]), read_symbols(argv[4]), argv[5], argv[6], per)
        print("\n".join(lines))
        return 0
    if len(argv) == 4 and argv[1] == "intervals":
        with open(argv[2], errors="replace") as c, open(argv[3]) as p:
            iv = intervals(c.readlines(), p.readlines())
        for label, i in iv.items():
            per = " ".join(f"k{n}={k} u{n}={u}" for n, (k, u) in enumerate(zip(i.kernel, i.user)))
            print(f"{label} {per} total={i.total}")
        return 0
    if len(argv) >= 5 and argv[1] == "profile":
        top = 40
        if "--top" in argv:
            top = int(argv[argv.index("--top") + 1])
            argv = argv[:argv.index("--top")]
        syms = read_symbols(argv[4], argv[5] if len(argv) > 5 else None)
        with open(argv[2]) as f:
            prof = profile(f.readlines(), int(argv[3]), syms)
        total = sum(v[0] for v in prof.values()) or 1
        for name, v in sorted(prof.items(), key=lambda x: -x[1][0])[:top]:
            print(f"{v[0]:>14} {100.0 * v[0] / total:6.2f}% {' '.join(str(x) for x in v[1:])} {name}")
        print(f"{total:>14} total")
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
