#!/usr/bin/env python3
"""The rows of lab/matrix.conf that CI can run, as a GitHub Actions job
matrix.

usage: matrix-rows.py [MATRIX_CONF] [ID_REGEX]

Prints one line of JSON, {"include": [{"id", "suite", "arch", "meta",
"env"}, ...]}, one entry per row in the file's order, for
`strategy.matrix: ${{ fromJSON(...) }}` (.github/workflows/ci.yml): a row
added to matrix.conf is a job.  Rows with ENV tree are left out: they need
a kernel tree of the user's (MATRIX_TREES), which CI has not, and would
only end "not in CI".
"""
import json
import os
import re
import sys

conf = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "matrix.conf")
pattern = re.compile(sys.argv[2] if len(sys.argv) > 2 else ".")
rows, ids = [], []
with open(conf) as f:
    for n, line in enumerate(f, 1):
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        if len(words) != 5:
            sys.exit(f"{conf}:{n}: expected ID SUITE ARCH META ENV, got {line.strip()!r}")
        kid, suite, arch, meta, env = words
        ids.append(kid)
        if pattern.search(kid) and env != "tree":
            rows.append({"id": kid, "suite": suite, "arch": arch, "meta": meta, "env": env})
dup = sorted({i for i in ids if ids.count(i) > 1})
if dup:
    sys.exit(f"{conf}: duplicate row ids: {' '.join(dup)}")
print(json.dumps({"include": rows}, separators=(",", ":")))
