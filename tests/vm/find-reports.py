#!/usr/bin/env python3
"""Find the kernel's sanitizer, lockdep and WARN/BUG reports in VM console logs.

    find-reports.py [--match REGEX] LOG...

Prints one line per report, tab-separated:
    KIND  OWNER  LOG  FIRST-LINE
KIND: kasan, kcsan, lockdep (lockdep and the atomic-sleep/RCU checks it
enables; the first lines of these three are guest/debug-reports.ere), warn
(WARN/BUG/Oops of any other kind).  OWNER: "kit" when the report's text names a function or module of a driver the kit replaces
(veth, mana: "[veth]", "(veth)", "veth_", "mana_", "gdma_"), else "other".  A report
runs from its first line to the next report or to its end (a "=====" or
end-trace line; the end of a lockdep report's stack dump), at most 120
lines.  --match: only the reports one of whose lines matches REGEX (a
plant's match: line, tests/t79).  The serial console shows them only without "quiet" hiding
KERN_WARNING (tests/vm/run-vm.sh sets loglevel=5 for debug kernels).
"""
import os
import re
import sys

# First lines (the console prefixes "[   12.345678] "): the sanitizer and
# lockdep ones from guest/debug-reports.ere, which the guest's dmesg_check
# also reads; then any other WARN/BUG/Oops (crash-reports.ere, which
# tests/lib.sh's vm_crash also reads).
def load_starts():
    starts = []
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                           "guest", "debug-reports.ere")) as f:
        for ere in f.read().splitlines():
            if not ere:
                continue
            kind = "kasan" if "KASAN" in ere else "kcsan" if "KCSAN" in ere else "lockdep"
            starts.append((kind, re.compile(ere)))
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                           "crash-reports.ere")) as f:
        starts.append(("warn", re.compile(f.read().strip())))
    return starts


STARTS = load_starts()
# Lines that end a report (inclusive).
ENDS = re.compile(r"---\[ end trace|^=+$|^-+$")
# A kit module's stack frame ("veth_xmit+0x1/0x2 [veth]"), function name,
# or driver name as the watchdog prints it ("vethA (veth): transmit queue").
KIT = re.compile(r"\[(veth|mana)\]|\((veth|mana)\)|\b(veth|mana|gdma)_[a-z0-9_]+")
TS = re.compile(r"^\[ *[0-9]+\.[0-9]+\] ")
MAX_LINES = 120


def kind_of(line):
    for kind, pat in STARTS:
        if pat.search(line):
            return kind
    return None


def reports(path):
    cur = None
    with open(path, errors="replace") as f:
        for raw in f:
            line = TS.sub("", raw.rstrip("\n"))
            kind = kind_of(line)
            if kind:
                if cur:
                    yield cur
                cur = {"kind": kind, "first": line, "lines": [line]}
                continue
            if cur is None:
                continue
            cur["lines"].append(line)
            # KASAN and KCSAN reports close with a "=====" rule, a WARN with
            # its end-trace line; a lockdep report has no closing line: it
            # ends with the stack dump ("</TASK>" on x86).
            if ((ENDS.search(line) and len(cur["lines"]) > 3)
                    or (cur["kind"] == "lockdep" and line.strip() == "</TASK>")
                    or len(cur["lines"]) >= MAX_LINES):
                yield cur
                cur = None
    if cur:
        yield cur


def main(argv):
    args = argv[1:]
    match = None
    if args[:1] == ["--match"] and len(args) > 1:
        match = re.compile(args[1])
        args = args[2:]
    if not args or args[0].startswith("--"):
        sys.exit("usage: find-reports.py [--match REGEX] LOG...")
    for path in args:
        for r in reports(path):
            if match and not any(match.search(l) for l in r["lines"]):
                continue
            owner = "kit" if any(KIT.search(l) for l in r["lines"]) else "other"
            print(f"{r['kind']}\t{owner}\t{path}\t{r['first']}")


if __name__ == "__main__":
    main(sys.argv)
