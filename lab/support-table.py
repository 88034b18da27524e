#!/usr/bin/env python3
"""README's support table, generated from what the kit measured.

    support-table.py [--top DIR]              print the table
    support-table.py [--top DIR] --write FILE replace it between the markers
    support-table.py [--top DIR] --check FILE exit 1 (with a diff) when FILE's
                                              table is not what it prints

One row per driver and kernel release X.Y, from two sources:
- results/matrix.json (`make matrix`): the kernels each driver was built
  for, grouped by release, with their flavours or architectures;
- the fit corpus: tests/fixtures/kernels/MANIFEST names its kernels (the
  release from each one's Makefile, or SRCVER for driver files without
  their tree) and tests/expected/fit-corpus.txt holds scripts/fit.sh's
  verdict and series for each kernel and driver, which tests/t44-fit.sh
  asserts against fit.sh on every run.
Skipped matrix cells (driver not enabled, absent in that release) make no
claim and are left out.
"""
import argparse
import glob
import difflib
import json
import os
import re
import sys

START = "<!-- support-table:start -->"
END = "<!-- support-table:end -->"
VERDICTS = {  # fit.sh's verdict: (words in the table, counts as a fit)
    "fits": ("fits", True),
    "adapted": ("adapted", True),
    "nofit": ("**does not fit**", False),
    "half-present": ("**half-present**, refused", False),
    "refused": ("**refused** by the rules", False),
}


def series_key(xy):
    return tuple(int(n) for n in xy.split("."))


def release_xy(version):
    m = re.match(r"(\d+)\.(\d+)", version)
    if not m:
        raise SystemExit(f"support-table.py: error: no X.Y in kernel version {version!r}")
    return f"{m.group(1)}.{m.group(2)}"


def corpus_kernels(top):
    """{id: X.Y} for every kernel the corpus MANIFEST names."""
    corpus = os.path.join(top, "tests/fixtures/kernels")
    srcver = {}
    with open(os.path.join(corpus, "SRCVER")) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                kid, ver = line.split()[:2]
                srcver[kid] = ver
    kernels = {}
    with open(os.path.join(corpus, "MANIFEST")) as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            kid = line.split("\t")[0]
            if kid in kernels:
                continue
            if kid in srcver:
                kernels[kid] = release_xy(srcver[kid])
                continue
            mk = {}
            with open(os.path.join(corpus, kid, "Makefile")) as m:
                for ml in m:
                    mm = re.match(r"(VERSION|PATCHLEVEL)\s*=\s*(\d+)", ml)
                    if mm:
                        mk.setdefault(mm.group(1), mm.group(2))
                    if len(mk) == 2:
                        break
            if len(mk) != 2:
                raise SystemExit(f"support-table.py: error: {kid}: no VERSION/PATCHLEVEL in its Makefile and not in SRCVER")
            kernels[kid] = f"{mk['VERSION']}.{mk['PATCHLEVEL']}"
    return kernels


def fit_verdicts(top):
    """[(id, driver, verdict, series)] from tests/expected/fit-corpus.txt."""
    out = []
    with open(os.path.join(top, "tests/expected/fit-corpus.txt")) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                kid, drv, verdict, series = line.split()[:4]
                if verdict not in VERDICTS:
                    raise SystemExit(f"support-table.py: error: {kid} {drv}: unknown verdict {verdict!r}")
                out.append((kid, drv, verdict, series))
    return out


def edited_files(top, drv):
    """The files some series of DRV changes (their '+++ b/' paths; a mana
    header in either layout), and the files its semantic patches edit."""
    out = set()
    for path in glob.glob(os.path.join(top, "patches", drv, "*", "*.patch")):
        with open(path) as f:
            for line in f:
                if line.startswith("+++ b/"):
                    out.add(line[6:].split()[0])
    for path in glob.glob(os.path.join(top, "patches", drv, "semantic", "*.cocci")):
        with open(path) as f:
            for line in f:
                m = re.match(r"// bqlkit-semantic:.* file=(\S+)", line)
                if m:
                    out.add(m.group(1))
    return out


def lacks(top, kid, files):
    """The files of FILES a corpus kernel does not hold (a header in either
    of mana's layouts counts), by base name."""
    root = os.path.join(top, "tests/fixtures/kernels", kid)
    missing = []
    for f in sorted(files):
        alt = {f}
        if f.startswith("include/net/mana/"):
            alt.add("drivers/net/ethernet/microsoft/mana/" + os.path.basename(f))
        if not any(os.path.exists(os.path.join(root, a)) for a in alt):
            missing.append(os.path.basename(f))
    return missing


def version_key(kid):
    """Corpus kernels in release order: armbian-6.6.20 before armbian-6.6.150."""
    m = re.search(r"(\d+(?:\.\d+)+)$", kid)
    return (tuple(int(n) for n in m.group(1).split(".")) if m else (), kid)


def split_kernel(kernel, arch, env):
    """A matrix kernel name as (release, flavour): 6.1.0-57-cloud-amd64 ->
    (6.1.0-57, cloud-amd64); a prepared tree's 5.15.167 -> (5.15.167 tree, amd64)."""
    m = re.match(r"(\d+\.\d+\.\d+(?:-\d+|\+deb\d+)?)-(.+)$", kernel)
    if m:
        return m.group(1), m.group(2)
    return f"{kernel} {env}", arch


def main():
    ap = argparse.ArgumentParser(description="README's support table from results/matrix.json and the fit corpus")
    ap.add_argument("--top", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--write", metavar="FILE")
    g.add_argument("--check", metavar="FILE")
    args = ap.parse_args()
    top = args.top

    with open(os.path.join(top, "results/matrix.json")) as f:
        matrix = json.load(f)
    kernels = corpus_kernels(top)
    verdicts = fit_verdicts(top)

    # (driver, X.Y) -> {"built": {release: [flavour...]}, "failed": [...], "fit": [...]}
    rows = {}

    def row(drv, xy):
        return rows.setdefault((drv, xy), {"built": {}, "failed": [], "fit": []})

    nkernels = len(matrix["rows"])
    for r in matrix["rows"]:
        for drv, cell in r["cells"].items():
            if cell["status"] == "skip":
                continue
            xy = release_xy(r["kernel"])
            rel, flav = split_kernel(r["kernel"], r["arch"], r["env"])
            series = "" if cell.get("series") in ("-", xy, None) else f", {cell['series']} series"
            if cell["status"] == "ok":
                row(drv, xy)["built"].setdefault(rel, []).append(flav + series)
            else:
                row(drv, xy)["failed"].append(f"{r['kernel']} **{cell['status']}**")
    listed = set()
    nfit = 0
    edited = {}
    for kid, drv, verdict, series in sorted(verdicts, key=lambda v: version_key(v[0])):
        if kid not in kernels:
            raise SystemExit(f"support-table.py: error: {kid} has a fit verdict but is not in the corpus MANIFEST")
        listed.add(kid)
        xy = kernels[kid]
        words, ok = VERDICTS[verdict]
        nfit += ok
        # A corpus kernel of driver files only may lack some the series
        # change: its verdict is on the files it has, and says so.
        gone = [] if os.path.exists(os.path.join(top, "tests/fixtures/kernels", kid, "Makefile")) else \
            lacks(top, kid, edited.setdefault(drv, edited_files(top, drv)))
        row(drv, xy)["fit"].append(f"{kid} {words}" + ("" if series == xy else f" ({series} series)")
                                   + (f" (lacks {', '.join(gone)})" if gone else ""))
    missing = sorted(set(kernels) - listed)
    if missing:
        raise SystemExit(f"support-table.py: error: no fit verdict for corpus kernel(s) {' '.join(missing)} "
                         "in tests/expected/fit-corpus.txt")

    drivers = matrix["drivers"] + sorted({d for d, _ in rows} - set(matrix["drivers"]))
    lines = [
        START,
        "<!-- generated by `make support-table` (lab/support-table.py): edit the sources, not this table -->",
        "",
        f"Built: `make matrix` on {nkernels} kernels, {matrix['failed_cells']} failed cell(s)"
        " ([results/matrix.md](results/matrix.md)).  "
        f"Fitted: `make fit` on the corpus, {nfit} of {len(verdicts)} kernel x driver cells fit"
        " ([docs/fit.md](docs/fit.md)); a series other than the release's is named.",
        "",
        "| driver | Linux | built by `make matrix` | fitted by `make fit` (corpus) |",
        "|---|---|---|---|",
    ]
    for drv in drivers:
        for xy in sorted({x for d, x in rows if d == drv}, key=series_key):
            r = rows[(drv, xy)]
            built = "; ".join(f"{rel}: {', '.join(fl)}" for rel, fl in r["built"].items())
            built = "; ".join(x for x in (built, ", ".join(r["failed"])) if x) or "-"
            fit = "; ".join(r["fit"]) or "-"
            lines.append(f"| {drv} | {xy} | {built} | {fit} |")
    lines.append(END)
    table = "\n".join(lines) + "\n"

    if not args.write and not args.check:
        sys.stdout.write(table)
        return 0
    path = args.write or args.check
    with open(path) as f:
        text = f.read()
    if text.count(START) != 1 or text.count(END) != 1 or text.index(START) > text.index(END):
        raise SystemExit(f"support-table.py: error: {path} needs one {START} line and one {END} line after it")
    head, rest = text.split(START, 1)
    old, tail = rest.split(END, 1)
    old = START + old + END + tail[:1]
    tail = tail[1:] if tail.startswith("\n") else tail
    if args.write:
        with open(path, "w") as f:
            f.write(head + table + tail)
        return 0
    if old != table:
        sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), table.splitlines(True),
                                                   f"{path} (committed)", "lab/support-table.py"))
        print(f"support-table.py: {path}'s support table is not what the generator prints: make support-table",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
